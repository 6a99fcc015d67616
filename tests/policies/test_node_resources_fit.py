"""node-resources-fit: kube-scheduler's NodeResourcesFit filter and LeastAllocated score."""

from __future__ import annotations

import random

import pytest

from policysched.policy import ExtensionPoint

from .helpers import GI, MI, Cluster, Harness, Rejection, huge_cluster, node, pod


def rejection(requests: dict[str, int], allocatable: dict[str, int] | None = None,
              running: list[dict[str, int]] | None = None) -> Rejection | None:
    n = node("a", allocatable=allocatable)
    placed = [pod(f"r{i}", node_name="a", requests=r) for i, r in enumerate(running or [])]
    return Harness("node-resources-fit", pod(requests=requests), Cluster([n], placed)).filter("a")


def test_fits() -> None:
    assert rejection({"cpu": 1000, "memory": GI}) is None
    assert rejection({}) is None


@pytest.mark.parametrize(("requests", "reason"), [
    ({"cpu": 5000}, "Insufficient cpu"),
    ({"memory": 9 * GI}, "Insufficient memory"),
    ({"ephemeral-storage": 1}, "Insufficient ephemeral-storage"),
    ({"nvidia.com/gpu": 1}, "Insufficient nvidia.com/gpu"),
    ({"hugepages-2Mi": 2 * MI}, "Insufficient hugepages-2Mi"),
    ({"example.com/dongle": 1}, "Insufficient extended resource"),
])
def test_larger_than_the_node_is_unresolvable(requests: dict, reason: str) -> None:
    found = rejection(requests)
    assert found is not None and found.reason == reason and found.unresolvable


@pytest.mark.parametrize(("requests", "reason"), [
    ({"cpu": 3500}, "Insufficient cpu"),
    ({"memory": 7 * GI}, "Insufficient memory"),
])
def test_larger_than_what_is_free_is_resolvable(requests: dict, reason: str) -> None:
    found = rejection(requests, running=[{"cpu": 1000, "memory": 2 * GI}])
    assert found is not None and found.reason == reason and not found.unresolvable


def test_too_many_pods() -> None:
    alloc = {"cpu": 4000, "memory": 8 * GI, "pods": 2}
    assert rejection({}, alloc, running=[{}]) is None
    found = rejection({}, alloc, running=[{}, {}])
    assert found is not None and found.reason == "Too many pods" and not found.unresolvable


def test_node_without_pods_allocatable_takes_no_pod() -> None:
    found = rejection({}, {"cpu": 4000, "memory": 8 * GI})
    assert found is not None and found.reason == "Too many pods"


def test_extended_resource_fits_when_free() -> None:
    alloc = {"cpu": 4000, "memory": 8 * GI, "pods": 110, "nvidia.com/gpu": 2,
             "example.com/dongle": 1}
    assert rejection({"nvidia.com/gpu": 2, "example.com/dongle": 1}, alloc) is None
    found = rejection({"nvidia.com/gpu": 2}, alloc, running=[{"nvidia.com/gpu": 1}])
    assert found is not None and found.reason == "Insufficient nvidia.com/gpu"


def test_extended_resource_message_expression_names_the_resource() -> None:
    h = Harness("node-resources-fit", pod(requests={"example.com/dongle": 1}),
                Cluster([node("a")]))
    assert h.message(ExtensionPoint.FILTER, "other-resources-capacity", "a") == \
        "Insufficient example.com/dongle"


def test_zero_request_on_an_overcommitted_node_fits() -> None:
    # requested > allocatable (e.g. allocatable shrank): a zero request is not checked (kube)
    found = rejection({"cpu": 0}, running=[{"cpu": 5000}])
    assert found is None


def least_allocated(the_pod: dict, cluster: Cluster) -> dict[str, int]:
    return Harness("node-resources-fit", the_pod, cluster).raw_scores("least-allocated")


def test_least_allocated_worked_example() -> None:
    # cpu: (4000 - (1000 + 500)) * 100 / 4000 = 62; memory: (8Gi - 3Gi) * 100 / 8Gi = 62
    running = [pod("r", node_name="a", requests={"cpu": 1000, "memory": 2 * GI})]
    the_pod = pod(requests={"cpu": 500, "memory": GI})
    scores = least_allocated(the_pod, Cluster([node("a")], running))
    assert scores == {"a": 62}


def test_least_allocated_ranks_emptier_nodes_higher() -> None:
    running = [pod("r", node_name="busy", requests={"cpu": 3000, "memory": 6 * GI})]
    scores = least_allocated(pod(requests={"cpu": 500, "memory": GI}),
                             Cluster([node("busy"), node("idle")], running))
    # busy: cpu (4000-3500)*100/4000 = 12, memory (8-7)*100/8 = 12 -> 12
    # idle: cpu 3500*100/4000 = 87, memory 7*100/8 = 87 -> 87
    assert scores == {"busy": 12, "idle": 87}


def test_least_allocated_uses_non_zero_defaults() -> None:
    # a pod without requests counts as 100m / 200Mi, on both sides
    running = [pod("best-effort", node_name="a")]
    scores = least_allocated(pod(), Cluster([node("a", allocatable={"cpu": 1000, "memory": GI,
                                                                    "pods": 110})], running))
    # cpu (1000 - 200) * 100 / 1000 = 80; memory (1024 - 400) * 100 / 1024 = 60 -> 70
    assert scores == {"a": 70}


def test_least_allocated_over_capacity_scores_zero_and_weights_apply() -> None:
    h = Harness("node-resources-fit", pod(requests={"cpu": 8000, "memory": GI}),
                Cluster([node("a")]), params={"cpuWeight": 3, "memoryWeight": 1})
    # cpu over capacity: 0 * 3; memory (8-1)*100/8 = 87 * 1 -> 87 / 4 = 21
    assert h.raw_scores("least-allocated") == {"a": 21}


def test_least_allocated_skips_resources_the_node_lacks() -> None:
    h = Harness("node-resources-fit", pod(requests={"cpu": 1000}),
                Cluster([node("a", allocatable={"cpu": 4000, "pods": 110})]))
    assert h.raw_scores("least-allocated") == {"a": 75}
    h = Harness("node-resources-fit", pod(), Cluster([node("a", allocatable={"pods": 110})]))
    assert h.raw_scores("least-allocated") == {"a": 0}


def exact_least_allocated(the_pod: dict, cluster: Cluster) -> int:
    """LeastAllocated in exact (unbounded) integer arithmetic: what kube-scheduler computes
    wherever its int64 does not overflow."""
    n = cluster.node("a")
    total = weights = 0
    for r, default in (("cpu", 100), ("memory", 200 * MI)):
        alloc = n["allocatable"].get(r, 0)
        if alloc == 0:
            continue
        used = n["requested"].get(r, 0) + the_pod["requests"].get(r, default) + default * sum(
            1 for p in cluster.pods_on("a") if r not in p["requests"])
        total += 0 if used > alloc else (alloc - used) * 100 // alloc
        weights += 1
    return total // weights if weights else 0


def test_least_allocated_is_exact_and_int64_safe_on_huge_nodes() -> None:
    # up to 2^63-1 (an 8Ei node), where kube-scheduler's (allocatable - requested) * 100 wraps
    rng = random.Random(9)
    for _ in range(400):
        the_pod, cluster = huge_cluster(rng)
        assert least_allocated(the_pod, cluster) == {"a": exact_least_allocated(the_pod, cluster)}
