"""node-resources-fit: kube-scheduler's NodeResourcesFit filter and LeastAllocated score."""

from __future__ import annotations

import random
from typing import Any

import pytest

from policysched.framework.status import Code

from .helpers import (
    GI,
    MI,
    Cluster,
    Harness,
    KubeCase,
    Rejection,
    api_node,
    api_pod,
    cap,
    huge_cluster,
    node,
    pod,
    req,
    weights,
)


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
    ({"example.com/dongle": 1}, "Insufficient example.com/dongle"),
])
def test_larger_than_the_node_is_unresolvable(requests: dict, reason: str) -> None:
    found = rejection(requests)
    assert found is not None and found.reasons == (reason,) and found.unresolvable


@pytest.mark.parametrize(("requests", "reason"), [
    ({"cpu": 3500}, "Insufficient cpu"),
    ({"memory": 7 * GI}, "Insufficient memory"),
])
def test_larger_than_what_is_free_is_resolvable(requests: dict, reason: str) -> None:
    found = rejection(requests, running=[{"cpu": 1000, "memory": 2 * GI}])
    assert found is not None and found.reasons == (reason,) and not found.unresolvable


def test_every_insufficient_resource_is_a_reason_in_kube_order() -> None:
    alloc = {"cpu": 4000, "memory": 8 * GI, "pods": 1, "example.com/dongle": 1}
    found = rejection({"cpu": 3500, "memory": 9 * GI, "example.com/dongle": 2,
                       "ephemeral-storage": 1},
                      alloc, running=[{"cpu": 1000}])
    assert found is not None
    assert found.reasons == ("Too many pods", "Insufficient cpu", "Insufficient memory",
                             "Insufficient ephemeral-storage",
                             "Insufficient example.com/dongle")
    assert found.unresolvable  # memory exceeds the whole node


def test_too_many_pods() -> None:
    alloc = {"cpu": 4000, "memory": 8 * GI, "pods": 2}
    assert rejection({}, alloc, running=[{}]) is None
    found = rejection({}, alloc, running=[{}, {}])
    assert found is not None and found.reasons == ("Too many pods",) and not found.unresolvable


def test_node_without_pods_allocatable_takes_no_pod() -> None:
    found = rejection({}, {"cpu": 4000, "memory": 8 * GI})
    assert found is not None and found.reasons == ("Too many pods",)


def test_extended_resource_fits_when_free() -> None:
    alloc = {"cpu": 4000, "memory": 8 * GI, "pods": 110, "nvidia.com/gpu": 2,
             "example.com/dongle": 1}
    assert rejection({"nvidia.com/gpu": 2, "example.com/dongle": 1}, alloc) is None
    found = rejection({"nvidia.com/gpu": 2}, alloc, running=[{"nvidia.com/gpu": 1}])
    assert found is not None and found.reasons == ("Insufficient nvidia.com/gpu",)


def test_zero_request_on_an_overcommitted_node_fits() -> None:
    # requested > allocatable (e.g. allocatable shrank): a zero request is not checked (kube)
    found = rejection({"cpu": 0}, running=[{"cpu": 5000}])
    assert found is None


# kube-scheduler's TestEnoughRequests, TestNotEnoughRequests, TestStorageRequests and
# TestRestartableInitContainers (noderesources/fit_test.go), on API objects through the
# model, the cache and the engine: the node's allocatable is makeAllocatableResources(10, 20,
# 32, 5, 20, 5) (pods: 1 for TestNotEnoughRequests), one pod runs on it.
AAA, BBB = "example.com/aaa", "example.com/bbb"
HUGE = "hugepages-2Mi"
UNSCHEDULABLE, UNRESOLVABLE = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def res(cpu: int = 0, memory: int = 0, storage: int = 0, aaa: int | None = None,
        bbb: int | None = None) -> dict[str, str]:
    """newResourcePod's container requests: cpu in millicores, the rest in units;
    ``aaa``/``bbb``: example.com/aaa and example.com/bbb."""
    out = {"cpu": f"{cpu}m", "memory": str(memory), "pods": "0",
           "ephemeral-storage": str(storage)}
    out.update({name: str(n) for name, n in ((AAA, aaa), (BBB, bbb)) if n is not None})
    return out


def kube_node(pods: int = 32) -> dict[str, Any]:
    return api_node("node", cpu="10m", memory="20", pods=str(pods), **{AAA: "5"},
                    **{"ephemeral-storage": "20", HUGE: "5"})


ENOUGH: list[Any] = [
    ("no resources requested always fits", api_pod(), [res(10, 20)], None),
    ("too many resources fails", api_pod(res(1, 1)), [res(10, 20)],
     (UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory")),
    ("too many resources fails due to init container cpu",
     api_pod(res(1, 1), init=[res(3, 1)]), [res(8, 19)], (UNSCHEDULABLE, "Insufficient cpu")),
    ("too many resources fails due to highest init container cpu",
     api_pod(res(1, 1), init=[res(3, 1), res(2, 1)]), [res(8, 19)],
     (UNSCHEDULABLE, "Insufficient cpu")),
    ("too many resources fails due to init container memory",
     api_pod(res(1, 1), init=[res(1, 3)]), [res(9, 19)],
     (UNSCHEDULABLE, "Insufficient memory")),
    ("too many resources fails due to highest init container memory",
     api_pod(res(1, 1), init=[res(1, 3), res(1, 2)]), [res(9, 19)],
     (UNSCHEDULABLE, "Insufficient memory")),
    ("init container fits because it's the max, not sum, of containers and init containers",
     api_pod(res(1, 1), init=[res(1, 1)]), [res(9, 19)], None),
    ("multiple init containers fit because it's the max, not sum, of containers and init "
     "containers", api_pod(res(1, 1), init=[res(1, 1), res(1, 1)]), [res(9, 19)], None),
    ("both resources fit", api_pod(res(1, 1)), [res(5, 5)], None),
    ("one resource memory fits", api_pod(res(2, 1)), [res(9, 5)],
     (UNSCHEDULABLE, "Insufficient cpu")),
    ("one resource cpu fits", api_pod(res(1, 2)), [res(5, 19)],
     (UNSCHEDULABLE, "Insufficient memory")),
    ("equal edge case", api_pod(res(5, 1)), [res(5, 19)], None),
    ("equal edge case for init container", api_pod(res(4, 1), init=[res(5, 1)]),
     [res(5, 19)], None),
    ("extended resource fits", api_pod(res(aaa=1)), [res()], None),
    ("extended resource fits for init container",
     api_pod(res(), init=[res(aaa=1)]), [res()], None),
    ("extended resource capacity enforced", api_pod(res(1, 1, aaa=10)),
     [res(aaa=0)], (UNRESOLVABLE, "Insufficient example.com/aaa")),
    ("extended resource capacity enforced for init container",
     api_pod(res(), init=[res(1, 1, aaa=10)]), [res(aaa=0)],
     (UNRESOLVABLE, "Insufficient example.com/aaa")),
    ("extended resource allocatable enforced", api_pod(res(1, 1, aaa=1)),
     [res(aaa=5)], (UNSCHEDULABLE, "Insufficient example.com/aaa")),
    ("extended resource allocatable enforced for init container",
     api_pod(res(), init=[res(1, 1, aaa=1)]), [res(aaa=5)],
     (UNSCHEDULABLE, "Insufficient example.com/aaa")),
    ("extended resource allocatable enforced for multiple containers",
     api_pod(res(1, 1, aaa=3), res(1, 1, aaa=3)),
     [res(aaa=2)], (UNRESOLVABLE, "Insufficient example.com/aaa")),
    ("extended resource allocatable admits multiple init containers",
     api_pod(res(), init=[res(1, 1, aaa=3), res(1, 1, aaa=3)]),
     [res(aaa=2)], None),
    ("extended resource allocatable enforced for multiple init containers",
     api_pod(res(), init=[res(1, 1, aaa=6), res(1, 1, aaa=3)]),
     [res(aaa=2)], (UNRESOLVABLE, "Insufficient example.com/aaa")),
    ("extended resource allocatable enforced for unknown resource",
     api_pod(res(1, 1, bbb=1)), [res()],
     (UNRESOLVABLE, "Insufficient example.com/bbb")),
    ("extended resource allocatable enforced for unknown resource for init container",
     api_pod(res(), init=[res(1, 1, bbb=1)]), [res()],
     (UNRESOLVABLE, "Insufficient example.com/bbb")),
    ("kubernetes.io resource capacity enforced",
     api_pod({**res(1, 1), "kubernetes.io/something": "10"}), [res()],
     (UNRESOLVABLE, "Insufficient kubernetes.io/something")),
    ("kubernetes.io resource capacity enforced for init container",
     api_pod(res(), init=[{**res(1, 1), "subdomain.kubernetes.io/something": "10"}]), [res()],
     (UNRESOLVABLE, "Insufficient subdomain.kubernetes.io/something")),
    ("hugepages resource capacity enforced", api_pod({**res(1, 1), HUGE: "10"}),
     [{**res(), HUGE: "0"}], (UNRESOLVABLE, "Insufficient hugepages-2Mi")),
    ("hugepages resource capacity enforced for init container",
     api_pod(res(), init=[{**res(1, 1), HUGE: "10"}]), [{**res(), HUGE: "0"}],
     (UNRESOLVABLE, "Insufficient hugepages-2Mi")),
    ("hugepages resource allocatable enforced for multiple containers",
     api_pod({**res(1, 1), HUGE: "3"}, {**res(1, 1), HUGE: "3"}), [{**res(), HUGE: "2"}],
     (UNRESOLVABLE, "Insufficient hugepages-2Mi")),
    ("resources + pod overhead fits",
     api_pod(res(1, 1), overhead={"cpu": "3m", "memory": "13"}), [res(5, 5)], None),
    ("requests + overhead does not fit for memory",
     api_pod(res(1, 1), overhead={"cpu": "1m", "memory": "15"}), [res(5, 5)],
     (UNSCHEDULABLE, "Insufficient memory")),
    ("skip checking extended resource request with quantity zero via resource groups",
     api_pod(res(1, 1, aaa=0)), [res(aaa=6)], None),
    ("skip checking resource request with quantity zero",
     api_pod(res(aaa=1)), [res(20, 30, aaa=1)], None),
    ("both pod-level and container-level resources fit",
     api_pod(res(1, 1), resources={"requests": {"cpu": "1m", "memory": "2"}}), [res(5, 5)],
     None),
    ("pod-level cpu resource not fit",
     api_pod(res(1, 1), resources={"requests": {"cpu": "7m", "memory": "2"}}), [res(5, 5)],
     (UNSCHEDULABLE, "Insufficient cpu")),
    ("pod-level memory resource not fit",
     api_pod(res(1, 1), resources={"requests": {"cpu": "3m", "memory": "2"}}), [res(5, 19)],
     (UNSCHEDULABLE, "Insufficient memory")),
    ("pod-level hugepages resource fit",
     api_pod(resources={"requests": {"cpu": "3m", "memory": "2", HUGE: "5"}}), [], None),
    ("both pod-level and container-level hugepages resource fit",
     api_pod({**res(1, 1), HUGE: "3"},
             resources={"requests": {"cpu": "3m", "memory": "2", HUGE: "5"}}), [], None),
    ("pod-level hugepages resource not fit",
     api_pod(resources={"requests": {"cpu": "3m", "memory": "2", HUGE: "10"}}), [],
     (UNRESOLVABLE, "Insufficient hugepages-2Mi")),
    ("one pod-level cpu resource fits and all init and non-init containers resources fit",
     api_pod(res(1, 1), init=[res(1, 1)], resources={"requests": {"cpu": "3m", "memory": "2"}}),
     [res(5, 19)], (UNSCHEDULABLE, "Insufficient memory")),
    ("extended resource backed by DRA not enabled",
     api_pod({**res(1, 1), "extended.resource.dra.io/something": "1"}), [res()],
     (UNRESOLVABLE, "Insufficient extended.resource.dra.io/something")),
    # TestStorageRequests
    ("empty storage requested, and pod fits", api_pod(res(1, 1)), [res(2, 10)], None),
    ("storage ephemeral local storage request exceeds allocatable",
     api_pod(res(storage=25)), [res(2, 2)],
     (UNRESOLVABLE, "Insufficient ephemeral-storage")),
    ("ephemeral local storage is sufficient", api_pod(res(storage=5)),
     [res(2, 2, storage=10)], None),
    ("pod fits", api_pod(res(storage=10)), [res(2, 2)], None),
]


@pytest.mark.parametrize(("pod", "running", "want"), [pytest.param(*c[1:], id=c[0])
                                                       for c in ENOUGH])
def test_kube_enough_requests(pod: dict[str, Any], running: list[dict[str, str]],
                              want: tuple[Code, ...] | None) -> None:
    pods = [api_pod(*([r] if r else []), node="node") for r in running]
    status = KubeCase("node-resources-fit", pod, [kube_node()], pods).filter()["node"]
    assert (status.code, *status.reasons) == (want or (Code.SUCCESS,))


@pytest.mark.parametrize(("pod", "running"), [
    pytest.param(api_pod(), res(10, 20), id="even without specified resources, predicate "
                 "fails when there's no space for additional pod"),
    pytest.param(api_pod(res(1, 1)), res(5, 5), id="even if both resources fit, predicate "
                 "fails when there's no space for additional pod"),
    pytest.param(api_pod(res(5, 1)), res(5, 19), id="even for equal edge case, predicate "
                 "fails when there's no space for additional pod"),
    pytest.param(api_pod(res(5, 1), init=[res(5, 1)]), res(5, 19), id="even for equal edge "
                 "case, predicate fails when there's no space for additional pod due to init "
                 "container"),
])
def test_kube_not_enough_requests(pod: dict[str, Any], running: dict[str, str]) -> None:
    node = api_node("node", cpu="10m", memory="20", pods="1")
    status = KubeCase("node-resources-fit", pod, [node],
                      [api_pod(running, node="node")]).filter()["node"]
    assert (status.code, *status.reasons) == (UNSCHEDULABLE, "Too many pods")


@pytest.mark.parametrize(("container", "sidecar", "want"), [
    ({}, {}, None),
    ({"cpu": "1m"}, {"cpu": "1m"}, None),
    ({"cpu": "1m"}, {"cpu": "2m"}, (UNRESOLVABLE, "Insufficient cpu")),
])
def test_kube_restartable_init_containers(container: dict[str, str], sidecar: dict[str, str],
                                          want: tuple[Code, ...] | None) -> None:
    node = api_node("node", cpu="2m", memory="0", pods="1")
    status = KubeCase("node-resources-fit", api_pod(container, sidecars=[sidecar]),
                      [node]).filter()["node"]
    assert (status.code, *status.reasons) == (want or (Code.SUCCESS,))


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
                Cluster([node("a")]), params=weights(cpu=3, memory=1))
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
    for r in ("cpu", "memory"):
        alloc = n["allocatable"].get(r, 0)
        if alloc == 0:
            continue
        used = n["nonZeroRequested"][r] + the_pod["nonZeroRequests"][r]
        total += 0 if used > alloc else (alloc - used) * 100 // alloc
        weights += 1
    return total // weights if weights else 0


def test_least_allocated_is_exact_and_int64_safe_on_huge_nodes() -> None:
    # up to 2^63-1 (an 8Ei node), where kube-scheduler's (allocatable - requested) * 100 wraps
    rng = random.Random(9)
    for _ in range(400):
        the_pod, cluster = huge_cluster(rng)
        assert least_allocated(the_pod, cluster) == {"a": exact_least_allocated(the_pod, cluster)}


# kube-scheduler's TestLeastAllocatedScoringStrategy (least_allocated_test.go) and TestFitScore
# (fit_test.go, LeastAllocated), on API objects: st.MakePod().Req(...) adds one container per
# request map, cpu "4000" is 4000 cores.
TWO_CONTAINERS = api_pod(req("1000", "2000"), req("2000", "3000"))
LEAST_ALLOCATED: list[Any] = [
    ("nothing scheduled, nothing requested", api_pod(),
     [cap("4000", "10000"), cap("4000", "10000")], [], {}, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS,
     [cap("4000", "10000"), cap("6000", "10000")], [], {}, [37, 50]),
    ("no resources requested, pods scheduled", api_pod(),
     [cap("4000", "10000"), cap("4000", "10000")], [(0, None), (0, None), (1, None), (1, None)],
     {}, [100, 100]),
    ("no resources requested, pods scheduled with resources", api_pod(),
     [cap("10000", "20000"), cap("10000", "20000")],
     [(0, req("3000", "0")), (0, req("3000", "0")), (1, req("3000", "0")),
      (1, req("3000", "5000"))], {}, [70, 57]),
    ("resources requested, pods scheduled with resources", TWO_CONTAINERS,
     [cap("10000", "20000"), cap("10000", "20000")],
     [(0, req("3000", "0")), (1, req("3000", "5000"))], {}, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     TWO_CONTAINERS, [cap("10000", "20000"), cap("10000", "50000")],
     [(0, req("3000", "0")), (1, req("3000", "5000"))], {}, [57, 60]),
    ("requested resources exceed node capacity", api_pod(req("3000", "0")),
     [cap("4000", "10000"), cap("4000", "10000")],
     [(0, req("3000", "0")), (1, req("3000", "5000"))], {}, [50, 25]),
    ("zero node resources, pods scheduled with resources", api_pod(), [{}, {}],
     [(0, req("3000", "0")), (1, req("3000", "5000"))], {}, [0, 0]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, "
     "differently sized nodes", api_pod(req("3000", "5000")),
     [cap("4000", "10000"), cap("6000", "10000")], [], weights(cpu=1, memory=2),
     [41, 50]),
    ("test case for ScoringStrategy LeastAllocated", api_pod(req("1000", "2000")),
     [cap("4000", "10000"), cap("6000", "10000")],
     [(0, req("2000", "4000")), (1, req("1000", "2000"))], {}, [32, 63]),
    ("test case for ScoringStrategy LeastAllocated with sidecar container",
     api_pod(req("1000", "2000")), [cap("4000", "10000"), cap("4000", "10000")],
     [(0, api_pod(req("1000", "2000"), sidecars=[req("1000", "2000")])),
      (1, req("1000", "2000"))], {}, [32, 55]),
]


@pytest.mark.parametrize(("pod", "nodes", "placed", "params", "want"),
                         [pytest.param(*c[1:], id=c[0]) for c in LEAST_ALLOCATED])
def test_kube_least_allocated(pod: dict[str, Any], nodes: list[dict[str, str]],
                              placed: list[tuple[int, Any]], params: dict[str, int],
                              want: list[int]) -> None:
    case = KubeCase.numbered("node-resources-fit", pod, nodes, placed)
    assert case.numbered_scores(params) == want


def test_non_zero_defaults_apply_per_container() -> None:
    # two containers without requests count 2 x (100m, 200Mi), on the node and in the pod:
    # cpu (1000 - 400) * 100 / 1000 = 60, memory (1024 - 800) * 100 / 1024 = 21 -> 40
    # (per pod, as before: 80 and 60 -> 70)
    node = api_node("node1", cpu="1", memory="1Gi", pods="110")
    case = KubeCase("node-resources-fit", api_pod({}, {}), [node],
                    [api_pod({}, {}, node="node1")])
    assert case.scores() == {"node1": 40}


def test_least_allocated_ignores_the_scored_pods_pod_level_requests() -> None:
    # kube-scheduler v1.34.12's scores for tests/parity/cases/fit-pod-level-resources.yaml
    # (NodeResourcesFit in its V(10) log): the pod being scored counts its two containers'
    # defaults (200m, 400Mi), not its pod-level 500m / 512Mi (Fit's scorer runs without
    # PodLevelResources); the pod on node2 counts its pod-level 3 cpus and 1Gi.
    # node1: cpu (2000 - 200) * 100 / 2000 = 90, memory (4096 - 400) * 100 / 4096 = 90 -> 90
    # node2: cpu (4000 - 3200) * 100 / 4000 = 20, memory (4096 - 1424) * 100 / 4096 = 65 -> 42
    pod_level = {"requests": {"cpu": "500m", "memory": "512Mi"}}
    running = api_pod({"cpu": "100m"}, {}, node="node2",
                      resources={"requests": {"cpu": "3", "memory": "1Gi"}})
    case = KubeCase("node-resources-fit", api_pod({}, {}, resources=pod_level),
                    [api_node("node1", cpu="2", memory="4Gi", pods="110"),
                     api_node("node2", cpu="4", memory="4Gi", pods="110")], [running])
    assert case.scores() == {"node1": 90, "node2": 42}
