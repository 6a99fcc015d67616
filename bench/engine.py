"""Engine benchmark: the default policy library scheduling scheduler_perf's workloads in-process.

A program, not a test: ``make bench-engine`` (or ``python bench/engine.py``) builds
scheduler_perf's standard cluster in a ``MemoryBackend`` under a ``SimulatedClock`` — nodes of
4 CPU / 32 Gi / 110 pods (``status.capacity``, as scheduler_perf's node-default.yaml), each
with its ``kubernetes.io/hostname`` label — and schedules pods with the built-in policy
library and configuration (``load_engine([], None)``, profile ``policysched``), one
``Scheduler.schedule_one()`` at a time. It prints, per workload x node count x tier: pods
scheduled, pods/s and the p50 / p99 latency of one scheduling cycle (wall time of
``schedule_one``); then the speed-up of the vectorised tier over the reference tier.

Workloads: scheduler_perf's SchedulingBasic, SchedulingNodeAffinity, TopologySpreading and
SchedulingPodAntiAffinity (``bench/workloads.py`` has their pod templates, node zones and init
pods, and says how each is built). The init pods are created already bound, so every tier,
the reference included, measures against the same cluster without spending time on the
unmeasured phase; the filters and scores read them (resources, and for anti-affinity the
occupied hostnames; the spreading and affinity variables scan every pod). Measured pods are
all created pending up front, as scheduler_perf's createPods does; so the cluster-wide
``pods`` list the variables scan holds them too.

Tiers:

- ``vectorised`` and ``scalar``: ``EngineSettings(evaluation=...)`` (the columnar node
  evaluator, or one closure call per node and rule).
- ``reference``: the scalar engine with every CEL expression of the loaded policies evaluated
  by cel-python (``bench/reference.py``), on the first ``--reference-pods`` pods (default 10)
  of the same cluster (``--reference-nodes``: its node counts, default those of ``--nodes``;
  ``--reference-max-seconds`` caps it, default 300). cel-python cannot run a good part of
  our policies (optional syntax ``.?``, ``cel.bind``, ``lists.range``, two-variable
  comprehensions, ``distinct``/``flatten``/``sum``/``sort``…): those evaluations fall back to
  our closures, and the time of the conversions and of the cross-check against our result is
  subtracted, so the reference figures are a lower bound of an engine running on
  cel-python. The coverage table says how much ran in cel-python: the share of evaluations,
  and the share of our own CEL time those evaluations account for (the rest of the CEL work
  is priced at our speed), plus cel-python's slowdown on what it did run.

The speed-up is the median cycle latency of the reference run over that of a vectorised run
of exactly the same pods on the same cluster (a separate short run with the reference's
node count and pod sample, starting as cold as the reference; the median leaves out the
one-off work of the first cycles, the table shows the means too).

Latencies and pods/s are wall time; ``--clock cpu`` reports process CPU time instead (for the
reference tier, the cycle's CPU time less the excluded share), steadier when other work
shares the machine — the ``cpu %`` column (CPU / wall time of a run) shows how busy it was.

Scale: ``--init-pods N`` gives every run N bound init pods instead of the workload's
count; the default run adds scheduler_perf's largest scale, basic on 5,000 nodes with
150,000 bound pods (``--scale-points``: ``WORKLOAD@NODES:INIT_PODS``, vectorised tier,
for the selected workloads; none when given no value), to show that the cost of a cycle
does not grow with the pods of the cluster. ``peak RSS`` is the process's peak resident
memory during each run (Linux: VmHWM, reset before the run), set-up included.

Garbage collection as ``policysched run`` paces it (``policysched.service.collector``): after
the set-up, every object then alive is frozen (``gc.freeze()``), as the scheduler does after
its initial sync, and full collections run at most once a minute (``--no-gc-freeze``:
CPython's own schedule). Otherwise Python's full collections, which come after the heap grew
by a quarter, each traverse every object of the cluster — 1.6 s of CPU each with 150,000
bound pods (one came within the first 4,000 measured pods, a third of their CPU time): a cost
of the process's memory management that grows with the pods, not of the scheduling cycle.

``--max-seconds`` caps every other run (default 60): a tier that has not finished stops after
the cycle that crosses the cap and reports pods/s over what it did (``measured`` column:
``all``, ``first N`` or ``cap``). Progress goes to stderr. The last lines of the output are
``engine pods/s @<nodes> nodes basic: N`` (vectorised tier, per node count; ``basic
<N> bound pods`` for a run with other than the workload's init pods) and
``engine speedup vs reference: Nx`` (geometric mean over the workload x node-count pairs).

For reuse (e.g. by a bench/all.py, with bench/ on sys.path as for any script there):
``run(...) -> list[RunResult]``, ``format_table(results) -> str`` (markdown) and
``summary_lines(results) -> list[str]``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import math
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reference import Coverage, ReferenceEvaluator  # bench/reference.py (bench/ on sys.path)
from workloads import HOSTNAME, START, WORKLOADS, ZONE, Workload  # bench/workloads.py

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.scheduler import Scheduler
from policysched.model.clock import SimulatedClock
from policysched.model.objects import parse_timestamp
from policysched.service.collector import GarbageCollector

TIERS = ("reference", "scalar", "vectorised")


@dataclass(frozen=True)
class ScalePoint:
    """An extra vectorised run with many bound pods: ``workload`` on ``nodes`` nodes with
    ``init_pods`` init pods (``--scale-points basic@5000:150000``)."""

    workload: str
    nodes: int
    init_pods: int

    @classmethod
    def parse(cls, text: str) -> ScalePoint:
        workload, _, rest = text.partition("@")
        nodes, _, init_pods = rest.partition(":")
        if workload not in WORKLOADS or not nodes.isdigit() or not init_pods.isdigit():
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected WORKLOAD@NODES:INIT_PODS, e.g. basic@5000:150000")
        return cls(workload, int(nodes), int(init_pods))

    def __str__(self) -> str:
        return f"{self.workload}@{self.nodes}:{self.init_pods}"


# scheduler_perf's largest scale: 150,000 pods on 5,000 nodes (the per-pod cost must not
# grow with the pods of the cluster)
SCALE_POINTS = (ScalePoint("basic", 5000, 150000),)


# --------------------------------------------------------------------------- workloads


def cluster(workload: Workload, nodes: int, pods: int, init_pods: int | None = None
            ) -> list[dict[str, Any]]:
    """Nodes, init pods (bound round-robin; ``init_pods``, default the workload's count)
    and ``pods`` measured pods (pending)."""
    objects: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"node-{i}"
        objects.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "creationTimestamp": START,
                         "labels": {HOSTNAME: name, ZONE: workload.zone(i)}},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
        })
    for i in range(workload.init_pods(nodes) if init_pods is None else init_pods):
        objects.append(workload.init_pod(f"init-{i}", workload.init_namespace,
                                         f"node-{i % nodes}"))
    for i in range(pods):
        objects.append(workload.measured_pod(f"pod-{i}", workload.measured_namespace, None))
    return objects


# --------------------------------------------------------------------------- one run


CLOCKS = ("wall", "cpu")


@dataclass
class RunResult:
    """One workload x node count x tier. ``latencies`` are the wall seconds of each
    scheduling cycle, ``cpu_latencies`` its process CPU seconds (the reference tier's with
    the excluded time taken out); ``seconds`` / ``cpu_seconds`` the measured time of the
    loop (cycles and event handling)."""

    workload: str
    nodes: int
    tier: str
    init_pods: int
    pods: int  # measured pods created (pending at the start)
    target: int  # cycles the run was to do at most (pods, or the reference sample)
    attempts: int  # scheduling cycles done
    scheduled: int  # measured pods bound
    seconds: float
    cpu_seconds: float
    wall_seconds: float  # the loop, excluded time included
    cpu_share: float  # process CPU time / wall time of the loop: well under 1 = contention
    setup_seconds: float
    capped: bool  # stopped by --max-seconds
    latencies: list[float] = field(repr=False)
    cpu_latencies: list[float] = field(repr=False)
    placements: list[tuple[str, str]] = field(repr=False)  # (pod, node) in binding order
    coverage: Coverage | None = None
    sample: bool = False  # the vectorised run matched to a reference run
    peak_rss_mib: float = math.nan  # the process's peak RSS during the run (set-up included)

    def cycle_seconds(self, clock: str = "wall") -> list[float]:
        return self.cpu_latencies if clock == "cpu" else self.latencies

    def rate(self, clock: str = "wall") -> float:
        """Measured pods bound per second."""
        seconds = self.cpu_seconds if clock == "cpu" else self.seconds
        return self.scheduled / seconds if seconds > 0 else 0.0

    def p50(self, clock: str = "wall") -> float:
        """Median cycle latency, ms."""
        values = self.cycle_seconds(clock)
        return statistics.median(values) * 1e3 if values else math.nan

    def p99(self, clock: str = "wall") -> float:
        values = sorted(self.cycle_seconds(clock))
        if not values:
            return math.nan
        return values[min(len(values) - 1, math.ceil(len(values) * 0.99) - 1)] * 1e3

    def mean(self, clock: str = "wall") -> float:
        values = self.cycle_seconds(clock)
        return statistics.fmean(values) * 1e3 if values else math.nan

    @property
    def pods_per_second(self) -> float:
        return self.rate()

    @property
    def measured(self) -> str:
        if self.capped:
            return "cap"
        if self.attempts >= self.target and self.target < self.pods:
            return f"first {self.target}"
        return "all"


def reset_peak_rss() -> None:
    """Start measuring the peak RSS afresh (Linux: writing 5 to /proc/self/clear_refs
    resets VmHWM to the current RSS); elsewhere the process-wide peak is reported."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def peak_rss_mib() -> float:
    """The peak RSS since ``reset_peak_rss`` (VmHWM), else since the process started."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_one(workload: Workload, nodes: int, pods: int, tier: str, *,
            cycles: int | None = None, max_seconds: float = 60.0,
            progress_every: int = 500, seed: int = 0, sample: bool = False,
            init_pods: int | None = None, freeze: bool = True) -> RunResult:
    """Schedule ``workload``'s pods on ``nodes`` nodes with ``tier``; at most ``cycles``
    scheduling cycles (default: until the queue is empty) and ``max_seconds``;
    ``init_pods`` bound pods (default: the workload's count); ``freeze``: garbage
    collection paced as ``policysched run`` does (module doc)."""
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r} (one of {', '.join(TIERS)})")
    init = workload.init_pods(nodes) if init_pods is None else init_pods
    pods = workload.measured_pods(nodes, pods) if init_pods is None \
        else max(0, min(pods, nodes - init)) if workload.one_per_node else pods
    target = pods if cycles is None else min(cycles, pods)
    label = (f"{workload.name} @{nodes} nodes {tier}{' (sample)' if sample else ''}"
             f"{f' {init} init pods' if init_pods is not None else ''}")
    gc.collect()
    collector = GarbageCollector()
    if freeze:
        collector.configure()
    reset_peak_rss()
    setup = time.perf_counter()
    engine = load_engine([], None)
    settings = dataclasses.replace(
        engine.settings, seed=seed,
        evaluation="vectorised" if tier == "vectorised" else "scalar")
    reference = ReferenceEvaluator(engine.frameworks).install() if tier == "reference" else None
    try:
        start = float(parse_timestamp(START))
        backend = MemoryBackend(cluster(workload, nodes, pods, init), SimulatedClock(start))
        scheduler = Scheduler(backend, engine.frameworks, settings)
        scheduler.sync()
        if freeze:
            collector.freeze()  # the set-up's objects: out of the collector's sight
        if reference is not None:
            reference.reset_counters()  # coverage of the measured cycles only
        setup_seconds = time.perf_counter() - setup
        _log(f"[engine] {label}: {pods} pods pending, {init} init pods, "
             f"set-up {setup_seconds:.1f} s")
        excluded_start = reference.excluded_seconds if reference else 0.0
        latencies: list[float] = []
        cpu_latencies: list[float] = []
        attempts = 0
        capped = False
        cpu_started = time.process_time()
        started = last_log = time.perf_counter()
        while attempts < target:
            excluded = reference.excluded_seconds if reference else 0.0
            c0, t0 = time.process_time(), time.perf_counter()
            if not scheduler.schedule_one():
                break
            t1, c1 = time.perf_counter(), time.process_time()
            if reference is not None:
                excluded = reference.excluded_seconds - excluded
            latencies.append(t1 - t0 - excluded)
            # the excluded wall time, as a share of the cycle's CPU time
            cpu_latencies.append((c1 - c0) * (1 - excluded / (t1 - t0)) if t1 > t0 else 0.0)
            scheduler.sync()
            if freeze:
                collector.tick()
            attempts += 1
            now = time.perf_counter()
            if now - started >= max_seconds and attempts < target:
                capped = True
                break
            if attempts % progress_every == 0 or now - last_log >= 15:
                last_log = now
                _log(f"[engine] {label}: {attempts}/{target} cycles, {now - started:.1f} s")
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        excluded_total = (reference.excluded_seconds - excluded_start) if reference else 0.0
        coverage = reference.coverage() if reference else None
    finally:
        collector.restore()
        if reference is not None:
            reference.uninstall()
    measured_keys = {f"{workload.measured_namespace}/pod-{i}" for i in range(pods)}
    placements = [(b.pod, b.node) for b in backend.bindings if b.pod in measured_keys]
    result = RunResult(
        workload=workload.name, nodes=nodes, tier=tier, init_pods=init,
        pods=pods, target=target, attempts=attempts, scheduled=len(placements),
        seconds=wall - excluded_total, cpu_seconds=cpu * (1 - excluded_total / wall)
        if wall > 0 else 0.0, wall_seconds=wall, cpu_share=cpu / wall if wall > 0 else 0.0,
        setup_seconds=setup_seconds, capped=capped, latencies=latencies,
        cpu_latencies=cpu_latencies, placements=placements, coverage=coverage, sample=sample,
        peak_rss_mib=peak_rss_mib())
    _log(f"[engine] {label}: {result.scheduled} scheduled in {result.seconds:.1f} s "
         f"({result.pods_per_second:.1f} pods/s, {result.measured}, "
         f"cpu {result.cpu_share:.0%}, peak RSS {result.peak_rss_mib:.0f} MiB)")
    return result


def run(nodes: Sequence[int] = (1000, 5000), pods: int = 10000,
        workloads: Sequence[str] = tuple(WORKLOADS), tiers: Sequence[str] = TIERS, *,
        reference_pods: int = 10, reference_nodes: Sequence[int] | None = None,
        max_seconds: float = 60.0, reference_max_seconds: float = 300.0,
        progress_every: int = 500, seed: int = 0, init_pods: int | None = None,
        scale_points: Sequence[ScalePoint] = SCALE_POINTS, freeze: bool = True
        ) -> list[RunResult]:
    """Every workload x node count x tier; for the reference tier also the matching
    vectorised sample run (``sample=True``) that its speed-up is computed against.
    ``init_pods`` overrides every workload's count of bound init pods; then the
    ``scale_points`` of the selected workloads (vectorised tier, if selected)."""
    results: list[RunResult] = []
    for name in workloads:
        workload = WORKLOADS[name]
        node_counts = list(dict.fromkeys([*nodes, *(reference_nodes or ())]))
        for n in node_counts:
            for tier in tiers:
                if tier == "reference":
                    if n not in (nodes if reference_nodes is None else reference_nodes):
                        continue
                    for t, is_sample in (("reference", False), ("vectorised", True)):
                        results.append(run_one(
                            workload, n, pods, t, cycles=reference_pods,
                            max_seconds=reference_max_seconds if t == "reference"
                            else max_seconds,
                            progress_every=progress_every, seed=seed, sample=is_sample,
                            init_pods=init_pods, freeze=freeze))
                elif n in nodes:
                    results.append(run_one(workload, n, pods, tier, max_seconds=max_seconds,
                                           progress_every=progress_every, seed=seed,
                                           init_pods=init_pods, freeze=freeze))
    if "vectorised" in tiers:
        for point in scale_points:
            if point.workload in workloads:
                results.append(run_one(WORKLOADS[point.workload], point.nodes, pods,
                                       "vectorised", max_seconds=max_seconds,
                                       progress_every=progress_every, seed=seed,
                                       init_pods=point.init_pods, freeze=freeze))
    return results


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Speedup:
    """Reference vs vectorised on the same pods (the reference run's cycles) of the same
    cluster: median and mean cycle latency."""

    workload: str
    nodes: int
    pods: int  # cycles compared
    reference_p50_ms: float
    vectorised_p50_ms: float
    reference_mean_ms: float
    vectorised_mean_ms: float
    same_placements: bool

    @property
    def ratio(self) -> float:
        """The speed-up: median latency, reference / vectorised."""
        return self.reference_p50_ms / self.vectorised_p50_ms \
            if self.vectorised_p50_ms else math.nan

    @property
    def mean_ratio(self) -> float:
        return self.reference_mean_ms / self.vectorised_mean_ms \
            if self.vectorised_mean_ms else math.nan


def speedups(results: Sequence[RunResult], clock: str = "wall") -> list[Speedup]:
    """One per reference run that has its vectorised sample run."""
    out = []
    for ref in results:
        if ref.tier != "reference" or not ref.latencies:
            continue
        match = next((r for r in results if r.sample and r.workload == ref.workload
                      and r.nodes == ref.nodes and r.pods == ref.pods), None)
        if match is None or len(match.latencies) < len(ref.latencies):
            continue
        k = len(ref.latencies)
        vec = match.cycle_seconds(clock)[:k]
        out.append(Speedup(
            ref.workload, ref.nodes, k, ref.p50(clock), statistics.median(vec) * 1e3,
            ref.mean(clock), statistics.fmean(vec) * 1e3,
            ref.placements == match.placements[:len(ref.placements)]))
    return out


def _ms(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def format_table(results: Sequence[RunResult], clock: str = "wall") -> str:
    """Markdown tables: the runs, the speed-ups over the reference, cel-python coverage.
    ``clock``: "wall" (wall time) or "cpu" (process CPU time: steadier on a busy machine)."""
    lines = [
        "| workload | nodes | tier | init pods | pods | scheduled | measured | pods/s "
        "| p50 ms | p99 ms | cpu % | peak RSS MiB |",
        "|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if r.sample:
            continue
        lines.append(
            f"| {r.workload} | {r.nodes} | {r.tier} | {r.init_pods} | {r.pods} "
            f"| {r.scheduled}/{r.attempts} | {r.measured} | {r.rate(clock):.1f} "
            f"| {_ms(r.p50(clock))} | {_ms(r.p99(clock))} | {r.cpu_share:.0%} "
            f"| {r.peak_rss_mib:.0f} |")
    lines.append("")
    lines.append("scheduled: measured pods bound / scheduling cycles run. measured: `all` (the "
                 "queue drained), `first N` (a sample), `cap` (stopped by --max-seconds; "
                 "pods/s over the cycles done). Reference: excluded time (conversions, "
                 "cross-checks) subtracted. cpu %: process CPU time / wall time of the run "
                 "(well under 100%: the machine was busy, wall timings are inflated). "
                 "peak RSS: the process's peak resident memory during the run, set-up "
                 f"included. Times: {clock} time.")
    pairs = speedups(results, clock)
    if pairs:
        lines += [
            "",
            "| workload | nodes | pods | reference p50 ms | vectorised p50 ms | speed-up "
            "| reference mean ms | vectorised mean ms | speed-up (means) | same placements |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for p in pairs:
            lines.append(
                f"| {p.workload} | {p.nodes} | {p.pods} | {_ms(p.reference_p50_ms)} "
                f"| {_ms(p.vectorised_p50_ms)} | {p.ratio:.0f}x | {_ms(p.reference_mean_ms)} "
                f"| {_ms(p.vectorised_mean_ms)} | {p.mean_ratio:.0f}x "
                f"| {'yes' if p.same_placements else 'NO'} |")
        lines += ["", "Speed-up: median cycle latency of the reference tier over that of the "
                  "vectorised tier on the same pods of the same cluster (the mean includes "
                  "one-off work of the first cycles). same placements: both bound the pods "
                  "to the same nodes."]
    covered = [r for r in results if r.coverage is not None]
    if covered:
        lines += [
            "",
            "| workload | nodes | expressions in cel-python | evaluations in cel-python "
            "| share of our CEL time | cel-python / ours | mismatches | excluded s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in covered:
            c = r.coverage
            assert c is not None
            lines.append(
                f"| {r.workload} | {r.nodes} | {c.expressions_in_celpy}/{c.expressions} "
                f"| {c.evaluations_in_celpy}/{c.evaluations} ({c.evaluation_share:.0%}) "
                f"| {c.work_share:.0%} | {c.slowdown:.0f}x | {c.mismatches} "
                f"| {c.excluded_seconds:.1f} |")
        total = _total_coverage([r.coverage for r in covered if r.coverage is not None])
        lines += [
            "",
            f"cel-python coverage: {total.evaluations_in_celpy}/{total.evaluations} "
            f"evaluations ({total.evaluation_share:.0%}), accounting for "
            f"{total.work_share:.0%} of our own CEL time on the same evaluations; the rest "
            "ran as our closures, so the reference figures are a lower bound. "
            "cel-python / ours: cel-python's time over our closures' on the evaluations "
            f"it ran ({total.slowdown:.0f}x over all runs). excluded s: conversions and "
            "cross-checks, subtracted from the reference timings.",
        ]
        reasons: dict[str, int] = {}
        for r in covered:
            assert r.coverage is not None
            for why, count in r.coverage.fallback_reasons.items():
                reasons[why] = max(reasons.get(why, 0), count)
        if reasons:
            lines.append("Fallbacks (expressions, largest count over the runs): " + "; ".join(
                f"{why}: {count}" for why, count in sorted(reasons.items(),
                                                         key=lambda kv: -kv[1])) + ".")
        mismatched: dict[str, int] = {}
        for r in covered:
            assert r.coverage is not None
            for where, count in r.coverage.mismatched.items():
                mismatched[where] = mismatched.get(where, 0) + count
        if mismatched:
            lines.append("cel-python disagreed with us (the engine went on with our value) on: "
                         + "; ".join(f"{where} ({count} evaluations)"
                                     for where, count in sorted(mismatched.items())) + ".")
    return "\n".join(lines)


def _total_coverage(items: Sequence[Coverage]) -> Coverage:
    total = Coverage()
    for c in items:
        total.evaluations += c.evaluations
        total.evaluations_in_celpy += c.evaluations_in_celpy
        total.ours_seconds_covered += c.ours_seconds_covered
        total.ours_seconds_fallback += c.ours_seconds_fallback
        total.celpy_seconds += c.celpy_seconds
        total.mismatches += c.mismatches
    return total


def summary_lines(results: Sequence[RunResult], clock: str = "wall") -> list[str]:
    """``engine pods/s @N nodes basic: X`` (vectorised, per node count) and ``engine speedup
    vs reference: Nx`` (geometric mean of the speed-ups)."""
    default_init = WORKLOADS["basic"].init_pods
    lines = [f"engine pods/s @{r.nodes} nodes basic"
             f"{'' if r.init_pods == default_init(r.nodes) else f' {r.init_pods} bound pods'}"
             f": {r.rate(clock):.1f}"
             for r in results
             if r.workload == "basic" and r.tier == "vectorised" and not r.sample]
    ratios = [s.ratio for s in speedups(results, clock) if s.ratio > 0]
    if ratios:
        lines.append(f"engine speedup vs reference: {statistics.geometric_mean(ratios):.0f}x")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--pods", type=int, default=10000,
                        help="measured pods per run (default 10000)")
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS),
                        choices=list(WORKLOADS))
    parser.add_argument("--tiers", nargs="+", default=list(TIERS), choices=list(TIERS))
    parser.add_argument("--reference-pods", type=int, default=10,
                        help="pods the reference tier schedules (default 10)")
    parser.add_argument("--reference-nodes", type=int, nargs="+", default=None,
                        help="node counts of the reference tier (default: those of --nodes)")
    parser.add_argument("--max-seconds", type=float, default=60.0,
                        help="cap on the time of one run (default 60)")
    parser.add_argument("--reference-max-seconds", type=float, default=300.0,
                        help="cap on the time of one reference run (default 300)")
    parser.add_argument("--progress-every", type=int, default=500,
                        help="a progress line on stderr every N cycles (and every 15 s)")
    parser.add_argument("--clock", choices=CLOCKS, default="wall",
                        help="time the tables report: wall (default) or cpu (process CPU "
                        "time; steadier when other work shares the machine)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init-pods", type=int, default=None,
                        help="bound init pods of every run (default: each workload's count, "
                        "bench/workloads.py)")
    parser.add_argument("--scale-points", type=ScalePoint.parse, nargs="*",
                        default=list(SCALE_POINTS), metavar="WORKLOAD@NODES:INIT_PODS",
                        help="extra vectorised runs with many bound pods, for the selected "
                        "workloads (default: "
                        f"{' '.join(str(p) for p in SCALE_POINTS)}; none without a value)")
    parser.add_argument("--no-gc-freeze", action="store_true",
                        help="CPython's own garbage collection schedule, not policysched "
                        "run's (set-up frozen, full collections once a minute)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results = run(args.nodes, args.pods, args.workloads, args.tiers,
                  reference_pods=args.reference_pods, reference_nodes=args.reference_nodes,
                  max_seconds=args.max_seconds,
                  reference_max_seconds=args.reference_max_seconds,
                  progress_every=args.progress_every, seed=args.seed,
                  init_pods=args.init_pods, scale_points=args.scale_points,
                  freeze=not args.no_gc_freeze)
    print(format_table(results, args.clock))
    print()
    print(f"total time {time.perf_counter() - started:.0f} s; times are {args.clock} time")
    for line in summary_lines(results, args.clock):
        print(line, flush=True)


if __name__ == "__main__":
    main()
