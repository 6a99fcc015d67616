"""node-resources-balanced-allocation: kube-scheduler's NodeResourcesBalancedAllocation."""

from __future__ import annotations

import random
from typing import Any

import pytest

from .helpers import GI, Cluster, Harness, KubeCase, api_node, api_pod, huge_cluster, node, pod, req


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


# kube-scheduler's TestNodeResourcesBalancedAllocation (balanced_allocation_test.go), on API
# objects: makeNode(name, milliCPU, memory) has no pod capacity, which scores ignore
CPU_AND_MEMORY = (req("1000m", "2000"), req("2000m", "3000"))
CPU_ONLY = (req("1000m", "0"), req("2000m", "0"))


def kube_node(name: str, milli_cpu: int, memory: int) -> dict[str, Any]:
    return api_node(name, cpu=f"{milli_cpu}m", memory=str(memory))


@pytest.mark.parametrize(("pod", "nodes", "placed", "want"), [
    pytest.param(api_pod(), [("node1", 4000, 10000), ("node2", 4000, 10000)], [], None,
                 id="nothing scheduled, nothing requested, skip in PreScore"),
    pytest.param(api_pod(*CPU_AND_MEMORY), [("node1", 4000, 10000), ("node2", 6000, 10000)],
                 [], [87, 100], id="nothing scheduled, resources requested, differently sized "
                 "nodes"),
    pytest.param(api_pod(*CPU_AND_MEMORY), [("node1", 10000, 20000), ("node2", 10000, 20000)],
                 [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], [82, 95],
                 id="resources requested, pods scheduled with resources"),
    pytest.param(api_pod(*CPU_AND_MEMORY), [("node1", 10000, 20000), ("node2", 10000, 50000)],
                 [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], [82, 80],
                 id="resources requested, pods scheduled with resources, differently sized "
                 "nodes"),
    pytest.param(api_pod(*CPU_ONLY), [("node1", 6000, 10000), ("node2", 6000, 10000)],
                 [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], [50, 75],
                 id="requested resources at node capacity"),
])
def test_kube_balanced_allocation(pod: dict[str, Any], nodes: list[tuple[str, int, int]],
                                  placed: list[tuple[str, tuple[dict[str, str], ...]]],
                                  want: list[int] | None) -> None:
    case = KubeCase("node-resources-balanced-allocation", pod,
                    [kube_node(*n) for n in nodes],
                    [api_pod(*containers, node=name) for name, containers in placed])
    scores = case.scores()
    assert scores == (None if want is None else {n[0]: w for n, w in zip(nodes, want, strict=True)})


def test_requests_of_sidecars_init_containers_and_overhead_count_without_defaults() -> None:
    # BalancedAllocation reads the real requests (useRequested): a container without a
    # memory request counts 0 (not 200Mi); sidecars, init containers and overhead count as
    # for the filter. cpu: (500 + 250 sidecar, init 1000 + 250) = 1250 + 250 overhead on
    # 4000 -> 0.375; memory: 1Gi of 8Gi -> 0.125; std 0.125 -> 87
    pod = api_pod({"cpu": "500m"}, sidecars=[{"cpu": "250m", "memory": "1Gi"}],
                  init=[{"cpu": "1"}], overhead={"cpu": "250m"})
    case = KubeCase("node-resources-balanced-allocation", pod,
                    [api_node("node1", cpu="4", memory="8Gi", pods="110")])
    assert case.scores() == {"node1": 87}
