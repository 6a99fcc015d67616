"""node-resources-most-allocated: NodeResourcesFit's MostAllocated scoring strategy."""

from __future__ import annotations

import random
from typing import Any

import pytest

from .helpers import (
    GI,
    Cluster,
    Harness,
    KubeCase,
    api_pod,
    cap,
    huge_cluster,
    node,
    pod,
    req,
    weights,
)
from .test_node_resources_fit import TWO_CONTAINERS


def scores(the_pod: dict, cluster: Cluster, **amounts: int) -> dict[str, int]:
    return Harness("node-resources-most-allocated", the_pod, cluster,
                   params=weights(**amounts) if amounts else {}).raw_scores("most-allocated")


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
    assert scores(pod(), Cluster([node("a", allocatable=alloc)]), cpu=1, memory=3) == {"a": 16}


def exact_most_allocated(the_pod: dict, cluster: Cluster) -> int:
    """MostAllocated in exact (unbounded) integer arithmetic."""
    n = cluster.node("a")
    total = weights = 0
    for r in ("cpu", "memory"):
        alloc = n["allocatable"].get(r, 0)
        if alloc == 0:
            continue
        used = n["nonZeroRequested"][r] + the_pod["nonZeroRequests"][r]
        total += min(used, alloc) * 100 // alloc
        weights += 1
    return total // weights if weights else 0


def test_exact_and_int64_safe_on_huge_nodes() -> None:
    # up to 2^63-1 (an 8Ei node), where kube-scheduler's requested * 100 wraps around
    rng = random.Random(10)
    for _ in range(400):
        the_pod, cluster = huge_cluster(rng)
        assert scores(the_pod, cluster) == {"a": exact_most_allocated(the_pod, cluster)}


# kube-scheduler's TestMostAllocatedScoringStrategy (most_allocated_test.go) and TestFitScore
# (fit_test.go, MostAllocated), on API objects
MOST_ALLOCATED: list[Any] = [
    ("nothing scheduled, nothing requested", api_pod(),
     [cap("4000", "10000"), cap("4000", "10000")], [], {}, [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS,
     [cap("4000", "10000"), cap("6000", "10000")], [], {}, [62, 50]),
    ("no resources requested, pods scheduled with resources", api_pod(),
     [cap("10000", "20000"), cap("10000", "20000")],
     [(0, req("3000", "0")), (0, req("3000", "0")), (1, req("3000", "0")),
      (1, req("3000", "5000"))], {}, [30, 42]),
    ("resources requested, pods scheduled with resources", TWO_CONTAINERS,
     [cap("10000", "20000"), cap("10000", "20000")],
     [(0, req("3000", "0")), (1, req("3000", "5000"))], {}, [42, 55]),
    ("resources requested equal node capacity",
     api_pod(req("2000", "4000"), req("3000", "5000")),
     [cap("5000", "10000"), cap("10000", "9000")], [], {}, [95, 75]),
    ("nothing scheduled, resources requested, differently sized nodes (weights 1:2)",
     TWO_CONTAINERS, [cap("4000", "10000"), cap("6000", "10000")], [],
     weights(cpu=1, memory=2), [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource", api_pod({}),
     [cap("250m", "1000Mi"), cap("250m", "1000Mi")], [(0, {}), (0, {})], {}, [80, 30]),
    ("test case for ScoringStrategy MostAllocated", api_pod(req("1000", "2000")),
     [cap("4000", "10000"), cap("6000", "10000")],
     [(0, req("2000", "4000")), (1, req("1000", "2000"))], {}, [67, 36]),
    ("test case for ScoringStrategy MostAllocated with sidecar container",
     api_pod(req("1000", "2000")), [cap("4000", "10000"), cap("4000", "10000")],
     [(0, api_pod(req("1000", "2000"), sidecars=[req("1000", "2000")])),
      (1, req("1000", "2000"))], {}, [67, 45]),
]


@pytest.mark.parametrize(("pod", "nodes", "placed", "params", "want"),
                         [pytest.param(*c[1:], id=c[0]) for c in MOST_ALLOCATED])
def test_kube_most_allocated(pod: dict[str, Any], nodes: list[dict[str, str]],
                             placed: list[tuple[int, Any]], params: dict[str, int],
                             want: list[int]) -> None:
    case = KubeCase.numbered("node-resources-most-allocated", pod, nodes, placed)
    assert case.numbered_scores(params) == want
