"""Tests of policysched.framework."""

from pathlib import Path
from typing import Any

from policysched.cache.cache import Snapshot
from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.backend import BindError, BindOutcome, BindRequest, run_bind
from policysched.framework.profiles import Engine
from policysched.framework.runtime import CycleState, Framework
from policysched.framework.scheduler import Scheduler
from policysched.framework.status import Status
from policysched.model.clock import SimulatedClock
from policysched.model.objects import PodInfo

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


def filter_in_both_tiers(scheduler: Scheduler, fwk: Framework, pod: PodInfo,
                         snapshot: Snapshot
                         ) -> tuple[CycleState, CycleState, list[Status]] | None:
    """The scalar tier's filter status of ``pod`` on every node of ``snapshot``, each
    asserted equal to the vectorised tier's (``scheduler`` runs it), with the cycle states
    of both (vectorised, scalar); None when preFilter does not pass."""
    state = scheduler.cycle_state(pod, snapshot)
    if not fwk.run_pre_filter(state).status.is_success:
        return None
    _, _, status_of = scheduler.evaluator.filter(fwk, state, snapshot)
    scalar_state = scheduler.cycle_state(pod, snapshot)
    statuses = []
    for row, node in enumerate(snapshot.nodes):
        want = fwk.run_filter(scalar_state, node)
        assert status_of(row) == want, (pod.key, node.name)
        statuses.append(want)
    return state, scalar_state, statuses


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
