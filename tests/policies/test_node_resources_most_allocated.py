"""node-resources-most-allocated: NodeResourcesFit's MostAllocated scoring strategy."""

from __future__ import annotations

import random

from .helpers import GI, MI, Cluster, Harness, huge_cluster, node, pod


def scores(the_pod: dict, cluster: Cluster, **params: int) -> dict[str, int]:
    return Harness("node-resources-most-allocated", the_pod, cluster,
                   params=params).raw_scores("most-allocated")


def test_worked_example() -> None:
    running = [pod("r", node_name="a", requests={"cpu": 1000, "memory": 2 * GI})]
    # cpu (1000 + 500) * 100 / 4000 = 37; memory 3Gi * 100 / 8Gi = 37
    the_pod = pod(requests={"cpu": 500, "memory": GI})
    assert scores(the_pod, Cluster([node("a")], running)) == {"a": 37}


def test_fuller_nodes_score_higher_and_requests_are_capped() -> None:
    running = [pod("r", node_name="full", requests={"cpu": 3500, "memory": 7 * GI})]
    result = scores(pod(requests={"cpu": 1000, "memory": 2 * GI}),
                    Cluster([node("full"), node("empty")], running))
    # full: both over capacity -> capped at 100; empty: 25 and 25
    assert result == {"full": 100, "empty": 25}


def test_non_zero_defaults_and_weights() -> None:
    alloc = {"cpu": 1000, "memory": GI, "pods": 110}
    # cpu 100m * 100 / 1000 = 10; memory 200Mi * 100 / 1Gi = 19; weights 1:3 -> (10 + 57) / 4 = 16
    assert scores(pod(), Cluster([node("a", allocatable=alloc)]), memoryWeight=3) == {"a": 16}


def exact_most_allocated(the_pod: dict, cluster: Cluster) -> int:
    """MostAllocated in exact (unbounded) integer arithmetic."""
    n = cluster.node("a")
    total = weights = 0
    for r, default in (("cpu", 100), ("memory", 200 * MI)):
        alloc = n["allocatable"].get(r, 0)
        if alloc == 0:
            continue
        used = n["requested"].get(r, 0) + the_pod["requests"].get(r, default) + default * sum(
            1 for p in cluster.pods_on("a") if r not in p["requests"])
        total += min(used, alloc) * 100 // alloc
        weights += 1
    return total // weights if weights else 0


def test_exact_and_int64_safe_on_huge_nodes() -> None:
    # up to 2^63-1 (an 8Ei node), where kube-scheduler's requested * 100 wraps around
    rng = random.Random(10)
    for _ in range(400):
        the_pod, cluster = huge_cluster(rng)
        assert scores(the_pod, cluster) == {"a": exact_most_allocated(the_pod, cluster)}
