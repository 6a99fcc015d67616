"""Tests of policysched.framework."""

from pathlib import Path
from typing import Any

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.backend import BindError, BindOutcome, BindRequest, run_bind
from policysched.framework.profiles import Engine
from policysched.framework.scheduler import Scheduler
from policysched.model.clock import SimulatedClock

POLICIES_ONLY = str(Path(__file__).parent / "fixtures" / "policies-only.yaml")
"""A configuration whose one profile enables exactly the policies given with it."""

FIT = Path(__file__).resolve().parents[2] / "policies" / "node-resources-fit.yaml"


def engine_with(tmp_path: Path, policies: str) -> Engine:
    """node-resources-fit plus ``policies`` (YAML), in one profile."""
    (tmp_path / "fit.yaml").write_text(FIT.read_text())
    (tmp_path / "test.yaml").write_text(policies)
    return load_engine([str(tmp_path)], POLICIES_ONLY)


def start_at(now: float, engine: Engine, *objects: dict[str, Any]
             ) -> tuple[Scheduler, MemoryBackend]:
    """A scheduler over ``objects`` in the in-memory cluster at ``now``, run until idle."""
    backend = MemoryBackend(list(objects), SimulatedClock(now))
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    run(scheduler)
    return scheduler, backend


def run(scheduler: Scheduler) -> None:
    """Schedule until no pod is ready to try."""
    scheduler.sync()
    while scheduler.schedule_one():
        scheduler.sync()


class DeferredBackend(MemoryBackend):
    """A ``MemoryBackend`` whose binds end when the test says so, in any order."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        super().__init__(objects, SimulatedClock(1_700_000_000))
        self.started: list[BindRequest] = []
        self._done: list[BindOutcome] = []

    def start_bind(self, request: BindRequest) -> None:
        self.started.append(request)

    def drain_bind_outcomes(self) -> list[BindOutcome]:
        done, self._done = self._done, []
        return done

    def finish(self, request: BindRequest, error: str | None = None) -> None:
        self.started.remove(request)
        self._done.append(run_bind(self, request) if error is None
                          else BindOutcome(request, BindError(error), 0.25))
