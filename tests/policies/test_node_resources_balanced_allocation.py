"""node-resources-balanced-allocation: kube-scheduler's NodeResourcesBalancedAllocation."""

from __future__ import annotations

import random

from .helpers import GI, Cluster, Harness, huge_cluster, node, pod


def harness(requests: dict, cluster: Cluster) -> Harness:
    return Harness("node-resources-balanced-allocation", pod(requests=requests), cluster)


def test_worked_example() -> None:
    running = [pod("r", node_name="a", requests={"cpu": 3000, "memory": GI})]
    h = harness({"cpu": 100, "memory": GI}, Cluster([node("a")], running))
    # fractions 3100/4000 = 0.775 and 2/8 = 0.25; std = |0.775 - 0.25| / 2 = 0.2625
    # score = int((1 - 0.2625) * 100) = 73
    assert h.raw_scores() == {"a": 73}


def test_equal_fractions_score_100_and_fractions_are_capped() -> None:
    running = [pod("r", node_name="full", requests={"cpu": 8000, "memory": GI})]
    h = harness({"cpu": 2000, "memory": 4 * GI},
                Cluster([node("even"), node("full")], running))
    # even: 0.5 / 0.5 -> 100; full: cpu capped at 1, memory 5/8 -> std 0.1875 -> 81
    assert h.raw_scores() == {"even": 100, "full": 81}


def test_kube_float_rounding() -> None:
    # 0.3 / 0.6: (1 - |0.3 - 0.6| / 2) * 100 = 85.00000000000001 -> 85 in Go and here
    h = harness({"cpu": 1200, "memory": 6 * GI}, Cluster([node("a", allocatable={
        "cpu": 4000, "memory": 10 * GI, "pods": 110})]))
    assert h.raw_scores() == {"a": int((1 - abs(1200 / 4000 - 6 / 10) / 2) * 100)}


def test_best_effort_pod_skips_scoring() -> None:
    assert not harness({}, Cluster([node("a")])).pre_score()
    assert not harness({"cpu": 0, "memory": 0}, Cluster([node("a")])).pre_score()
    assert harness({"cpu": 100}, Cluster([node("a")])).pre_score()


def test_single_resource_node_scores_100() -> None:
    h = harness({"cpu": 1000}, Cluster([node("a", allocatable={"cpu": 4000, "pods": 110})]))
    assert h.raw_scores() == {"a": 100}


def test_int64_safe_on_huge_nodes() -> None:
    # up to 2^63-1 (an 8Ei node): requested + request is summed in doubles, never overflows
    rng = random.Random(11)
    for _ in range(400):
        the_pod, cluster = huge_cluster(rng)
        n = cluster.node("a")
        fractions = [min(1.0, (float(n["requested"].get(r, 0)) +
                               float(the_pod["requests"].get(r, 0))) / n["allocatable"][r])
                     for r in ("cpu", "memory") if n["allocatable"].get(r, 0)]
        std = abs(fractions[0] - fractions[1]) / 2 if len(fractions) == 2 else 0.0
        h = Harness("node-resources-balanced-allocation", the_pod, cluster)
        assert h.raw_scores() == {"a": int((1 - std) * 100)}
