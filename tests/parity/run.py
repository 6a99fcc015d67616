"""A parity run: scenarios (the hand-written cases, then generated ones until enough
decisions), kube's outcomes (from the cache, the oracle for the misses: one private control
plane for the whole run), our replay of each decision, and the comparisons."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .compare import Comparison
from .control_plane import control_plane, kube_version
from .features import features
from .generator import generate
from .oracle import run_scenarios
from .outcome import Outcome
from .replay import Replay
from .results_cache import ResultsCache
from .scenario import Scenario, load_scenario

CASES = Path(__file__).resolve().parent / "cases"
PROGRESS_EVERY = 5.0  # seconds between progress lines
SAVE_EVERY = 10  # scenarios between writes of the cache during an oracle run

Progress = Callable[[str], None]


def stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def case_scenarios() -> list[Scenario]:
    return [load_scenario(path) for path in sorted(CASES.glob("*.yaml"))]


def scenarios(decisions: int, seed: int, cases_only: bool = False) -> list[Scenario]:
    """The cases, then scenarios of ``seed`` until there are ``decisions`` pending pods
    (at least; only the cases with ``cases_only``)."""
    chosen = case_scenarios()
    if cases_only:
        return chosen
    count = sum(len(s.pending) for s in chosen)
    generated: Iterator[Scenario] = generate(seed, 1_000_000)
    while count < decisions:
        scenario = next(generated)
        chosen.append(scenario)
        count += len(scenario.pending)
    return chosen


@dataclass
class RunResult:
    kube_version: str
    comparisons: list[Comparison] = field(default_factory=list)
    oracle_errors: list[tuple[str, str]] = field(default_factory=list)  # scenario, why
    oracle_runs: int = 0  # scenarios the oracle ran (cache misses)


class _Ticker:
    """Progress lines at most every ``PROGRESS_EVERY`` seconds."""

    def __init__(self, progress: Progress, what: str, total: int) -> None:
        self.progress, self.what, self.total = progress, what, total
        self.started = self.last = time.monotonic()
        self.done = 0

    def step(self, force: bool = False) -> None:
        self.done += 1
        now = time.monotonic()
        if force or now - self.last >= PROGRESS_EVERY or self.done == self.total:
            self.last = now
            self.progress(f"{self.what}: {self.done}/{self.total} scenarios, "
                          f"{now - self.started:.0f} s")


def kube_outcomes(chosen: list[Scenario], cache: ResultsCache, version: str,
                  cluster_dir: Path | None, progress: Progress) -> RunResult:
    """kube's outcomes of the cache misses, run by the oracle and added to ``cache``."""
    result = RunResult(version)
    misses = [s for s in chosen if cache.get(s.key(version)) is None]
    if not misses:
        return result
    progress(f"oracle: {len(misses)} of {len(chosen)} scenarios not in {cache.path.name}: "
             "starting a private control plane with kube-scheduler " + version)
    ticker = _Ticker(progress, "oracle", len(misses))

    def done(scenario: Scenario, outcomes: list[Outcome] | None, error: str) -> None:
        if outcomes is None:
            result.oracle_errors.append((scenario.id, error))
            progress(f"oracle: scenario {scenario.id} failed: {error}")
        else:
            cache.put(scenario.key(version), scenario.id, outcomes)
            result.oracle_runs += 1
            if result.oracle_runs % SAVE_EVERY == 0:
                cache.save()
        ticker.step()

    directory = cluster_dir or Path(tempfile.mkdtemp(prefix="parity-cluster-"))
    try:
        with control_plane(directory) as plane:
            run_scenarios(plane, misses, done)
    finally:
        cache.save()
    if cluster_dir is None and not result.oracle_errors:
        shutil.rmtree(directory, ignore_errors=True)
        directory.with_name(directory.name + "-up.txt").unlink(missing_ok=True)  # its log
    return result


def run(chosen: list[Scenario], *, cache: ResultsCache | None = None,
        cluster_dir: Path | None = None, progress: Progress = stderr,
        replay: Replay | None = None, prune: bool = False) -> RunResult:
    """Compare every decision of ``chosen`` (kube's side from the cache or the oracle;
    ``prune``: the cache keeps only ``chosen``'s entries)."""
    cache = cache if cache is not None else ResultsCache.load()
    version = kube_version()
    result = kube_outcomes(chosen, cache, version, cluster_dir, progress)
    if prune and not result.oracle_errors:
        cache.keep_only({s.key(version) for s in chosen})
        cache.save()
    replay = replay or Replay()
    ticker = _Ticker(progress, "replay", len(chosen))
    for scenario in chosen:
        kube = cache.get(scenario.key(version))
        if kube is not None:
            ours = replay.scenario(scenario, kube)
            for i, (theirs, mine) in enumerate(zip(kube, ours, strict=True)):
                used = features(scenario, scenario.pending[i], theirs, mine)
                result.comparisons.append(Comparison(scenario, i, theirs, mine, used))
        ticker.step()
    return result
