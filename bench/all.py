"""Both benchmarks in one run (``make bench``): the engine benchmark (in-process, per tier)
and the end-to-end benchmark (policysched and kube-scheduler side by side on a real local
control plane). Prints the tables, writes them to ``docs/benchmarks.md`` with the date, the
machine and the Kubernetes version, and ends with the summary lines::

    engine pods/s @5000 nodes basic: N
    engine speedup vs reference: Nx
    e2e throughput ratio policysched/kube-scheduler @N nodes: R
    e2e throughput ratio policysched/kube-scheduler pod-anti-affinity @N nodes: R
    e2e throughput ratio policysched/kube-scheduler topology-spread @N nodes: R
    e2e cpu per pod ratio policysched/kube-scheduler[ <workload>] @N nodes: R
    e2e p99 latency ratio policysched/kube-scheduler[ <workload>] @N nodes: R
    e2e peak rss ratio policysched/kube-scheduler[ <workload>] @N nodes: R

The defaults keep a full run within about 25 minutes on 2 cores: engine runs are capped at
``--max-seconds`` each (the table says which were cut), the cel-python reference schedules
``--reference-pods`` pods; end to end, basic schedules ``--e2e-pods`` pods (2,000), the
cluster-wide workloads (pod-anti-affinity, topology-spread) ``--e2e-cluster-wide-pods``
(1,000), each scheduler runs ``--e2e-repeat`` times per workload (1), and a scheduler run is
cut after ``--e2e-timeout`` seconds (60). The section ``bench/churn.py`` wrote (memory over
a long run) is kept as it is.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import churn
import e2e
import engine

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "docs" / "benchmarks.md"
E2E_CLUSTER_WIDE_PODS = 1000
E2E_TIMEOUT = 60.0  # a scheduler run at ≥ 17 pods/s binds 1,000 pods within it
E2E_REPEAT = 1  # runs of each scheduler per workload (make bench-e2e: e2e.DEFAULT_REPEAT)


def machine() -> str:
    """Cores, memory, CPU model and Python of this machine."""
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.1f} GiB memory"
    except OSError:
        pass
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = f" ({line.split(':', 1)[1].strip()})"
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} cores{model}{memory}; {platform.system()} "
            f"{platform.release()}; Python {platform.python_version()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--engine-pods", type=int, default=10000)
    parser.add_argument("--e2e-pods", type=int, default=e2e.DEFAULT_PODS,
                        help=f"end to end: basic's pods (default {e2e.DEFAULT_PODS})")
    parser.add_argument("--e2e-cluster-wide-pods", type=int, default=E2E_CLUSTER_WIDE_PODS,
                        help="end to end: the pods of pod-anti-affinity and topology-spread "
                             f"(default {E2E_CLUSTER_WIDE_PODS})")
    parser.add_argument("--e2e-timeout", type=float, default=E2E_TIMEOUT,
                        help="end to end: cut a scheduler run after this many seconds "
                             f"(default {E2E_TIMEOUT:.0f})")
    parser.add_argument("--e2e-repeat", type=int, default=E2E_REPEAT,
                        help="end to end: runs of each scheduler per workload (default "
                             f"{E2E_REPEAT})")
    parser.add_argument("--max-seconds", type=float, default=30.0,
                        help="cap on one engine run (default 30)")
    parser.add_argument("--reference-pods", type=int, default=5)
    parser.add_argument("--reference-max-seconds", type=float, default=120.0)
    parser.add_argument("--no-write", action="store_true",
                        help=f"do not write {REPORT.relative_to(REPO)}")
    args = parser.parse_args(argv)
    started = time.monotonic()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"policysched benchmarks, {when}; {machine()}", flush=True)

    engine_results = engine.run(
        args.nodes, args.engine_pods, reference_pods=args.reference_pods,
        max_seconds=args.max_seconds, reference_max_seconds=args.reference_max_seconds)
    engine_table = engine.format_table(engine_results)
    print("\n## Engine (in-process)\n\n" + engine_table, flush=True)

    e2e_pods = {name: args.e2e_pods if name == "basic" else args.e2e_cluster_wide_pods
                for name in e2e.DEFAULT_WORKLOADS}
    e2e_results = e2e.run(args.nodes, e2e_pods, timeout=args.e2e_timeout,
                          repeat=args.e2e_repeat)
    e2e_table = e2e.format_table(e2e_results)
    print("\n## End to end (real control plane)\n\n" + e2e_table, flush=True)

    summary = engine.summary_lines(engine_results) + e2e.ratio_lines(e2e_results)
    minutes = (time.monotonic() - started) / 60
    if not args.no_write:
        REPORT.parent.mkdir(exist_ok=True)
        REPORT.write_text("\n".join([
            "# Benchmarks",
            "",
            f"Measured {when} by `make bench` (`bench/all.py`, {minutes:.0f} min) on "
            f"{machine()}.",
            "The Kubernetes version is that of the control plane built by "
            "`deploy/local/cluster.sh` (stated with the end-to-end tables).",
            "This machine is shared: compare the ratios within one run, not absolute "
            "figures across runs.",
            "",
            "## Engine (in-process)",
            "",
            "`bench/engine.py`: scheduler_perf's workloads on the in-process cluster, per "
            "evaluation tier (its module docstring says how each is built).",
            "",
            engine_table,
            "",
            "## End to end (real control plane)",
            "",
            "`bench/e2e.py`: the same pods scheduled by policysched and by kube-scheduler "
            "from the same Kubernetes release, one after the other, on KWOK nodes, for "
            "scheduler_perf's SchedulingBasic, SchedulingPodAntiAffinity and "
            "TopologySpreading workloads (pod templates, node zones and init pods of "
            "`bench/workloads.py`; the init pods are created already bound). To keep "
            f"`make bench` short, basic schedules {args.e2e_pods} pods, the cluster-wide "
            f"workloads {args.e2e_cluster_wide_pods} (anti-affinity: at most one per node "
            "free of init pods), and a scheduler run is cut after "
            f"{args.e2e_timeout:.0f} s, {args.e2e_repeat} run(s) of each scheduler "
            f"(`make bench-e2e`: {e2e.DEFAULT_PODS} pods and {e2e.DEFAULT_TIMEOUT:.0f} s for "
            f"all, {e2e.DEFAULT_REPEAT} runs each). constraints held: the final placement "
            "overcommits no node and breaks "
            "no spread constraint or required anti-affinity.",
            "",
            e2e_table,
            "",
            *([kept] if (kept := churn.existing_section(REPORT)) else []),
            "## Summary",
            "",
            "```",
            *summary,
            "```",
            "",
        ]))
        print(f"\nwrote {REPORT.relative_to(REPO)}", flush=True)
    print(f"total {minutes:.0f} min\n")
    for line in summary:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
