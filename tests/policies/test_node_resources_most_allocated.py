"""node-resources-most-allocated: NodeResourcesFit's MostAllocated scoring strategy."""

from __future__ import annotations

from .helpers import GI, Cluster, Harness, node, pod


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
