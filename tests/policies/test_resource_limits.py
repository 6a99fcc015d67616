"""resource-limits: the seed article's ResourceLimits score."""

from __future__ import annotations

from .helpers import GI, Cluster, Harness, node, pod


def scores(limits: dict) -> dict[str, int]:
    nodes = [node("small", allocatable={"cpu": 2000, "memory": 2 * GI, "pods": 110}),
             node("large", allocatable={"cpu": 8000, "memory": 16 * GI, "pods": 110}),
             node("bare", allocatable={"pods": 110})]
    return Harness("resource-limits", pod(limits=limits), Cluster(nodes)).raw_scores()


def test_node_holding_the_limits_scores_1() -> None:
    assert scores({"cpu": 4000, "memory": 8 * GI}) == {"small": 0, "large": 1, "bare": 0}


def test_either_resource_is_enough() -> None:
    assert scores({"cpu": 1000, "memory": 8 * GI}) == {"small": 1, "large": 1, "bare": 0}
    assert scores({"cpu": 16000, "memory": GI}) == {"small": 1, "large": 1, "bare": 0}


def test_no_limits_scores_0() -> None:
    assert scores({}) == {"small": 0, "large": 0, "bare": 0}
