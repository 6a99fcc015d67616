"""Memory over a long run: policysched under continuous pod churn on a real control plane.

A program, not a test: ``make bench-churn`` (or ``python bench/churn.py --minutes 30``).
It starts a private control plane with ``deploy/local/cluster.sh`` (``--nodes`` KWOK nodes,
as ``bench/e2e.py`` does) and ``policysched run`` (built-in configuration and policies),
then for ``--minutes`` creates pods at ``--rate`` per second and deletes each one
``--lifetime`` seconds after its creation (grace period 0), so that about rate times lifetime
pods exist at any time while every pod's life — queued, bound or rejected, deleted — runs
through the scheduler. Of every ten pods, eight are scheduler_perf's default pod (bound),
one asks for more CPU than any node has (unschedulable: a record with its message, the
unschedulable queue, FailedScheduling events) and one names another scheduler (pending,
never ours: the scheduler's "unserved" entry).

Every ``--sample`` seconds it reads policysched's RSS (``VmRSS``) and CPU time. Reported: a
table of RSS per period (about ten periods), the first, last and peak RSS, and whether the
RSS is flat — the median of the run's second half against that of its first half (the first
half includes the warm-up: caches filling, the allocator's arenas growing) and the slope of
the second half. A leak of per-pod state (records kept for deleted pods) shows as a second
half above the first and a steady slope.

It writes its section of ``docs/benchmarks.md`` (``## Memory over a long run``), replacing
the one there, and ends with the summary line
``churn rss policysched second/first half: R (first F MiB, last L MiB, peak P MiB)``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import e2e  # bench/
from workloads import default_pod

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "docs" / "benchmarks.md"
SECTION = "## Memory over a long run"
SUMMARY = "## Summary"  # bench/all.py's last section
NAMESPACE = "churn"

DEFAULT_MINUTES = 30.0
DEFAULT_NODES = 100
DEFAULT_RATE = 5.0  # pods created (and deleted) per second: moderate on a shared machine
DEFAULT_LIFETIME = 60.0  # seconds from a pod's creation to its deletion
DEFAULT_SAMPLE = 10.0  # seconds between RSS samples
PERIODS = 10  # rows of the RSS table
FLAT = 1.05  # second half's median RSS within 5% of the first half's: flat
UNSCHEDULABLE_CPU = "1000"  # more than any KWOK node's allocatable (4 CPU)
OTHER_SCHEDULER = "default-scheduler"  # not running here: its pods stay pending


@dataclass
class Sample:
    seconds: float  # since the churn started
    rss_mib: float
    cpu_seconds: float  # policysched's, since it started
    created: int
    deleted: int


@dataclass
class ChurnResult:
    nodes: int
    rate: float
    lifetime: float
    minutes: float
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    problem: str = ""  # why the run stopped early
    versions: str = ""
    code: str = ""  # which policysched code ran (a digest of its sources)

    @property
    def rss(self) -> list[float]:
        return [s.rss_mib for s in self.samples]

    def halves(self) -> tuple[list[float], list[float]]:
        middle = self.samples[-1].seconds / 2 if self.samples else 0.0
        return ([s.rss_mib for s in self.samples if s.seconds <= middle],
                [s.rss_mib for s in self.samples if s.seconds > middle])

    @property
    def half_ratio(self) -> float | None:
        """Median RSS of the second half / median of the first."""
        first, second = self.halves()
        if not first or not second:
            return None
        return statistics.median(second) / statistics.median(first)

    @property
    def second_half_slope(self) -> float | None:
        """Least-squares slope of the second half's RSS, MiB per hour."""
        middle = self.samples[-1].seconds / 2 if self.samples else 0.0
        points = [(s.seconds, s.rss_mib) for s in self.samples if s.seconds > middle]
        if len(points) < 2:
            return None
        mean_t = statistics.fmean(t for t, _ in points)
        mean_r = statistics.fmean(r for _, r in points)
        spread = sum((t - mean_t) ** 2 for t, _ in points)
        if spread == 0:
            return None
        return sum((t - mean_t) * (r - mean_r) for t, r in points) / spread * 3600

    @property
    def flat(self) -> bool | None:
        ratio = self.half_ratio
        return None if ratio is None else ratio <= FLAT


def pod_body(i: int) -> bytes:
    """The create request of churn pod ``i``: eight in ten schedulable, one unschedulable,
    one for another scheduler."""
    pod = default_pod(f"churn-{i:07d}", NAMESPACE)
    pod["metadata"].pop("creationTimestamp", None)
    pod["spec"]["terminationGracePeriodSeconds"] = 0
    kind = i % 10
    if kind == 8:
        resources = pod["spec"]["containers"][0]["resources"]
        resources["requests"]["cpu"] = resources["limits"]["cpu"] = UNSCHEDULABLE_CPU
    elif kind == 9:
        pod["spec"]["schedulerName"] = OTHER_SCHEDULER
    else:
        pod["spec"]["schedulerName"] = e2e.SCHEDULER_NAMES[e2e.POLICYSCHED]
    return json.dumps(pod).encode()


def churn(cluster: e2e.Cluster, scheduler: e2e.RunningScheduler, result: ChurnResult,
          sample_every: float) -> None:
    """Create and delete pods at the set rate for the set minutes, sampling the RSS."""
    api = cluster.api
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    delete = json.dumps({"kind": "DeleteOptions", "apiVersion": "v1",
                         "gracePeriodSeconds": 0}).encode()
    alive: deque[tuple[float, str]] = deque()  # (created at, name), oldest first
    created = deleted = 0
    started = time.monotonic()
    end = started + result.minutes * 60
    next_sample = started
    next_progress = started + e2e.PROGRESS_EVERY * 6
    while True:
        now = time.monotonic()
        if now >= next_sample:
            rss = e2e.proc_status_kib(scheduler.pid, "VmRSS")
            cpu = e2e.proc_cpu_seconds(scheduler.pid)
            if rss is None or cpu is None or not scheduler.alive():
                result.problem = ("policysched exited during the run; its log ends with:\n"
                                  + scheduler.log_tail(10))
                return
            result.samples.append(Sample(now - started, rss / 1024, cpu, created, deleted))
            next_sample += sample_every
        if now >= next_progress:
            s = result.samples[-1]
            e2e.progress(f"churn {s.seconds / 60:.1f} min: {created} created, {deleted} "
                         f"deleted, policysched RSS {s.rss_mib:.0f} MiB, CPU {s.cpu_seconds:.0f} s")
            next_progress += e2e.PROGRESS_EVERY * 6
        if now >= end:
            return
        due = started + created / result.rate
        if now >= due:
            name = f"churn-{created:07d}"
            status, obj = api.call("POST", path, pod_body(created))
            if status not in (201, 409):
                result.errors.append(f"create {name}: HTTP {status}: "
                                     f"{obj.get('message', '') if isinstance(obj, dict) else ''}")
            alive.append((now, name))
            created += 1
        while alive and time.monotonic() - alive[0][0] >= result.lifetime:
            _, name = alive.popleft()
            status, obj = api.call("DELETE", f"{path}/{name}", delete)
            if status not in (200, 202, 404):
                result.errors.append(f"delete {name}: HTTP {status}")
            deleted += 1
        time.sleep(max(0.0, min(started + created / result.rate, next_sample)
                       - time.monotonic()))


def run(nodes: int = DEFAULT_NODES, minutes: float = DEFAULT_MINUTES,
        rate: float = DEFAULT_RATE, lifetime: float = DEFAULT_LIFETIME,
        sample_every: float = DEFAULT_SAMPLE, keep: bool = False) -> ChurnResult:
    """A private cluster, policysched on it, the churn; everything stopped at the end."""
    result = ChurnResult(nodes, rate, lifetime, minutes)
    problem = e2e.memory_problem(nodes)
    if problem:
        result.problem = problem
        return result
    e2e.build_binaries()
    base = Path(tempfile.mkdtemp(prefix="policysched-bench-churn-"))
    cluster_dir = base / f"nodes-{nodes}"
    cluster: e2e.Cluster | None = None
    try:
        cluster = e2e.cluster_up(cluster_dir, nodes)
        env = cluster.env
        result.versions = (f"kube-apiserver {env['KUBE_VERSION']}, etcd {env['ETCD_VERSION']}, "
                           f"kwok {env['KWOK_VERSION']}")
        e2e.ensure_namespace(cluster.api, NAMESPACE)
        scheduler = e2e.start_policysched(cluster, e2e.DEFAULT_QPS, e2e.DEFAULT_BURST)
        result.code = scheduler.code
        try:
            churn(cluster, scheduler, result, sample_every)
        finally:
            scheduler.stop()
    except e2e.BenchError as e:
        result.problem = str(e)
    finally:
        if cluster is not None or (cluster_dir / "cluster.env").exists():
            e2e.cluster_down(cluster_dir)
        if keep:
            e2e.progress(f"cluster directory (logs) kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return result


# ------------------------------------------------------------------------------ report


def format_report(result: ChurnResult) -> str:
    """The RSS table by period, first / last / peak, the verdict, the set-up."""
    out = [f"`bench/churn.py --minutes {result.minutes:g}`: policysched on {result.nodes} KWOK "
           f"nodes ({result.versions or 'no cluster'}); pods created at {result.rate:g}/s and "
           f"each deleted {result.lifetime:g} s after its creation (about "
           f"{result.rate * result.lifetime:.0f} at a time; of ten, eight bound, one "
           "unschedulable, one for another scheduler); policysched's RSS (VmRSS) sampled every "
           f"{result.samples[1].seconds - result.samples[0].seconds:.0f} s; code: "
           f"{result.code}."
           if len(result.samples) > 1 else "`bench/churn.py`: no samples.", ""]
    if result.problem:
        out += [f"Stopped early: {result.problem}", ""]
    if not result.samples:
        return "\n".join(out)
    last = result.samples[-1]
    period = max(last.seconds / PERIODS, 1.0)
    out += ["| minutes | pods created / deleted | RSS at the end (MiB) | RSS min - max (MiB) "
            "| policysched CPU (s) |", "|---|---|---|---|---|"]
    start = 0.0
    while start < last.seconds or start == 0.0:
        rows = [s for s in result.samples if start <= s.seconds < start + period
                or (s is last and start + period >= last.seconds)]
        if rows:
            out.append(f"| {start / 60:.1f}-{(start + period) / 60:.1f} | {rows[-1].created} / "
                       f"{rows[-1].deleted} | {rows[-1].rss_mib:.1f} "
                       f"| {min(r.rss_mib for r in rows):.1f} - "
                       f"{max(r.rss_mib for r in rows):.1f} | {rows[-1].cpu_seconds:.0f} |")
        start += period
        if start >= last.seconds:
            break
    rss = result.rss
    first, second = result.halves()
    ratio, slope = result.half_ratio, result.second_half_slope
    verdict = ("-" if result.flat is None else
               "flat" if result.flat else f"NOT flat (second half above {FLAT:.2f}x the first)")
    out += ["", f"RSS first {rss[0]:.1f} MiB, last {rss[-1]:.1f} MiB, peak {max(rss):.1f} MiB; "
            f"median of the first half {statistics.median(first) if first else 0:.1f} MiB, "
            f"of the second half {statistics.median(second) if second else 0:.1f} MiB "
            f"(second/first {e2e._num(ratio, 3)}); slope of the second half "
            f"{e2e._num(slope, 1)} MiB/hour: **{verdict}**. {last.created} pods created, "
            f"{last.deleted} deleted in {last.seconds / 60:.1f} min."]
    if result.errors:
        out.append(f"{len(result.errors)} requests failed (first: {result.errors[0]}).")
    return "\n".join(out) + "\n"


def summary_line(result: ChurnResult) -> str:
    rss = result.rss
    if not rss:
        return "churn rss policysched second/first half: n/a"
    return (f"churn rss policysched second/first half: {e2e._num(result.half_ratio, 3)} "
            f"(first {rss[0]:.0f} MiB, last {rss[-1]:.0f} MiB, peak {max(rss):.0f} MiB)")


def replace_section(text: str, body: str) -> str:
    """``text`` (docs/benchmarks.md) with its ``SECTION`` replaced by ``body`` (when there
    is none: added before the summary, as ``bench/all.py`` places it, or at the end); the
    section runs to the next ``## `` heading."""
    section = f"{SECTION}\n\n{body.rstrip()}\n"
    start = text.find(SECTION + "\n")
    if start < 0:
        summary = text.find("\n" + SUMMARY + "\n")
        if summary >= 0:
            return text[:summary].rstrip() + "\n\n" + section + "\n" + text[summary + 1:]
        return text.rstrip() + "\n\n" + section
    end = text.find("\n## ", start + len(SECTION))
    return text[:start] + section + (text[end:] if end >= 0 else "")


def existing_section(path: Path = REPORT) -> str:
    """The ``SECTION`` of ``path`` with its heading ("" if none): ``bench/all.py`` keeps it
    when it rewrites the file."""
    try:
        text = path.read_text()
    except OSError:
        return ""
    start = text.find(SECTION + "\n")
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(SECTION))
    return text[start:end if end >= 0 else len(text)].rstrip() + "\n"


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES,
                        help=f"how long the churn runs (default {DEFAULT_MINUTES:g})")
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES,
                        help=f"KWOK nodes (default {DEFAULT_NODES})")
    parser.add_argument("--rate", type=float, default=DEFAULT_RATE,
                        help=f"pods created (and deleted) per second (default {DEFAULT_RATE:g})")
    parser.add_argument("--lifetime", type=float, default=DEFAULT_LIFETIME,
                        help="seconds from a pod's creation to its deletion (default "
                             f"{DEFAULT_LIFETIME:g})")
    parser.add_argument("--sample", type=float, default=DEFAULT_SAMPLE,
                        help=f"seconds between RSS samples (default {DEFAULT_SAMPLE:g})")
    parser.add_argument("--no-write", action="store_true",
                        help=f"do not write {REPORT.relative_to(REPO)}")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary cluster directory (logs)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = e2e.machine()
    print(f"policysched churn benchmark, {when}: {args.minutes:g} min, {args.nodes} nodes, "
          f"{args.rate:g} pods/s, lifetime {args.lifetime:g} s; {machine}", flush=True)
    try:
        result = run(args.nodes, args.minutes, args.rate, args.lifetime, args.sample,
                     keep=args.keep)
    except KeyboardInterrupt:
        e2e.progress("interrupted (cluster stopped)")
        return 130
    except e2e.BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    report = format_report(result)
    print("\n" + report)
    if not args.no_write and result.samples:
        body = f"Measured {when} by `make bench-churn` on {machine}.\n\n{report}"
        text = REPORT.read_text() if REPORT.exists() else "# Benchmarks\n"
        REPORT.write_text(replace_section(text, body))
        print(f"wrote {REPORT.relative_to(REPO)} ({SECTION[3:]})", flush=True)
    print(summary_line(result))
    return 0 if not result.problem and result.flat else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
