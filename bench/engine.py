"""Engine benchmark: the default policy library scheduling pods on the in-process cluster.

A program, not a test: ``make bench-engine`` (or ``python bench/engine.py``) builds
scheduler_perf's standard cluster — nodes of 4 CPU / 32 Gi / 110 pods over 3 zones, pods
requesting 100m / 500 Mi — schedules the pods with the built-in configuration under the
simulated clock and prints pods/s and per-pod latency percentiles (wall time of each
scheduling cycle).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from policysched.cluster.clock import SimulatedClock
from policysched.cluster.memory import MemoryBackend
from policysched.framework.scheduler import Scheduler
from policysched.inputs import load_engine

START = "2026-11-22T10:00:00Z"


def cluster(nodes: int, pods: int) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for i in range(nodes):
        zone = f"zone-{'abc'[i % 3]}"
        objects.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i}", "creationTimestamp": START,
                         "labels": {"topology.kubernetes.io/zone": zone,
                                    "kubernetes.io/hostname": f"node-{i}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
        })
    for i in range(pods):
        objects.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": "default",
                         "creationTimestamp": START},
            "spec": {"schedulerName": "policysched", "containers": [{
                "name": "c", "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]},
        })
    return objects


def run(nodes: int, pods: int) -> tuple[float, list[float], int]:
    engine = load_engine([], None)
    backend = MemoryBackend(cluster(nodes, pods), SimulatedClock(0))
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    scheduler.sync()
    latencies: list[float] = []
    started = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        if not scheduler.schedule_one():
            break
        latencies.append(time.perf_counter() - t0)
        scheduler.sync()
    elapsed = time.perf_counter() - started
    bound = sum(1 for r in scheduler.records.values() if r.node)
    return elapsed, latencies, bound


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--pods", type=int, default=500,
                        help="pods per run (default 500)")
    args = parser.parse_args()
    print(f"{'nodes':>6} {'pods':>6} {'bound':>6} {'pods/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for nodes in args.nodes:
        elapsed, latencies, bound = run(nodes, args.pods)
        latencies.sort()
        p50 = statistics.median(latencies) * 1e3
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e3
        print(f"{nodes:>6} {args.pods:>6} {bound:>6} {bound / elapsed:>8.1f} "
              f"{p50:>8.2f} {p99:>8.2f}", flush=True)
        print(f"engine pods/s @{nodes} nodes basic: {bound / elapsed:.1f}", flush=True)


if __name__ == "__main__":
    main()
