"""model/resources.py: a pod's requests, limits and non-zero requests as kube-scheduler v1.34
counts them. Expected values are those of kube-scheduler's and component-helpers' unit tests
where they have the case (named below)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.model.objects import PodInfo, pod_info
from policysched.model.resources import DEFAULT_MEMORY_REQUEST as MEM0
from policysched.model.resources import DEFAULT_MILLI_CPU_REQUEST as CPU0

M = 10**6


def container(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
              sidecar: bool = False) -> dict[str, Any]:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    out: dict[str, Any] = {"name": "c", "resources": resources}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def info(containers: list[dict[str, Any]], inits: list[dict[str, Any]] | None = None,
         **spec: Any) -> PodInfo:
    return pod_info({"metadata": {"name": "p"},
                     "spec": {"containers": containers, "initContainers": inits or [],
                              **spec}})


# kube-scheduler's TestPodInfoCalculateResources (framework/types_test.go): Non0CPU / Non0Mem
@pytest.mark.parametrize(("pod", "requests", "non_zero"), [
    pytest.param(info([container()]), {}, {"cpu": CPU0, "memory": MEM0},
                 id="requestless container"),
    pytest.param(info([container({"cpu": "500m", "memory": "500M"})]),
                 {"cpu": 500, "memory": 500 * M}, {"cpu": 500, "memory": 500 * M},
                 id="1X container with requests"),
    pytest.param(info([container({"cpu": "500m", "memory": "500M"}),
                       container({"cpu": "700m", "memory": "800M"})]),
                 {"cpu": 1200, "memory": 1300 * M}, {"cpu": 1200, "memory": 1300 * M},
                 id="2X container with requests"),
    pytest.param(info([container({"cpu": "500m", "memory": "500M"})],
                      [container({"cpu": "500m", "memory": "500M"})],
                      resources={"requests": {"cpu": "1200m", "memory": "1200M"}}),
                 {"cpu": 1200, "memory": 1200 * M}, {"cpu": 1200, "memory": 1200 * M},
                 id="1X container and 1X init container with pod-level requests"),
    pytest.param(info([container({"cpu": "500m", "memory": "500M"})],
                      [container({"cpu": "500m", "memory": "500M"}, sidecar=True)],
                      resources={"requests": {"cpu": "1200m", "memory": "1200M"}}),
                 {"cpu": 1200, "memory": 1200 * M}, {"cpu": 1200, "memory": 1200 * M},
                 id="1X container and 1X sidecar container with pod-level requests"),
    pytest.param(info([container()], [container()],
                      resources={"requests": {"memory": "1200M"}}),
                 {"memory": 1200 * M}, {"cpu": CPU0, "memory": 1200 * M},
                 id="1X container with pod-level memory requests"),
    pytest.param(info([container()], [container()], resources={"requests": {"cpu": "500m"}}),
                 {"cpu": 500}, {"cpu": 500, "memory": MEM0},
                 id="1X container with pod-level cpu requests"),
    pytest.param(info([container({"ephemeral-storage": "800M"})],
                      [container({"ephemeral-storage": "500M"})],
                      resources={"requests": {"cpu": "500m"}}),
                 {"cpu": 500, "ephemeral-storage": 800 * M}, {"cpu": 500, "memory": MEM0},
                 id="1X container unsupported resources and pod-level supported resources"),
])
def test_node_side_non_zero_requests(pod: PodInfo, requests: dict[str, int],
                                     non_zero: dict[str, int]) -> None:
    assert pod.requests == requests
    assert pod.non_zero == non_zero


def test_non_zero_defaults_apply_per_container() -> None:
    # two containers without requests count 2 x 100m / 200Mi (kube's NonMissingContainerRequests),
    # not 100m / 200Mi for the pod; a container's explicit 0 is kept
    pod = info([container(), container(), container({"cpu": "0", "memory": "1Gi"})])
    assert pod.view["nonZeroRequests"] == {"cpu": 2 * CPU0, "memory": 2 * MEM0 + 2**30}
    assert pod.non_zero == {"cpu": 2 * CPU0, "memory": 2 * MEM0 + 2**30}
    assert pod.requests == {"cpu": 0, "memory": 2**30}


def test_non_zero_defaults_count_init_containers_sidecars_and_overhead() -> None:
    # running: the container's 100m default + the sidecar's 100m default; the init phase:
    # 300m + the sidecar started before it; then the 50m overhead
    pod = info([container()], [container(sidecar=True), container({"cpu": "300m"})],
               overhead={"cpu": "50m"})
    assert pod.view["nonZeroRequests"] == {"cpu": 400 + 50, "memory": 2 * MEM0}
    assert pod.requests == {"cpu": 300 + 50}


def test_scoring_and_node_side_non_zero_differ_as_kube() -> None:
    # with pod-level requests, the node side gives no default to a resource the pod requests
    # anywhere (here cpu 0 explicitly in one container) and counts the pod-level memory; the
    # scoring of the pod being scheduled defaults every container without one and ignores
    # pod-level requests (kube v1.34's two computations)
    pod = info([container({"cpu": "0"}), container()],
               resources={"requests": {"memory": "1Gi"}})
    assert pod.non_zero == {"cpu": 0, "memory": 2**30}
    assert pod.view["nonZeroRequests"] == {"cpu": CPU0, "memory": 2 * MEM0}


def test_scoring_ignores_pod_level_requests_but_counts_overhead() -> None:
    # kube v1.34's NodeResourcesFit scorer is built without the plugin's feature flags
    # (nodeResourceStrategyTypeMap: resourceAllocationScorer.enablePodLevelResources false),
    # so PodRequests(SkipPodLevelResources: true, NonMissingContainerRequests: 100m / 200Mi)
    # then overhead: the containers' non-zero requests, not spec.resources; the filters and
    # the node side (PodInfo.CalculateResource, feature gate on) count spec.resources
    pod = info([container({"cpu": "100m"}), container()],
               resources={"requests": {"cpu": "3", "memory": "1Gi"}},
               overhead={"cpu": "10m", "memory": "1Mi"})
    assert pod.requests == {"cpu": 3010, "memory": 2**30 + 2**20}
    assert pod.non_zero == {"cpu": 3010, "memory": 2**30 + 2**20}
    assert pod.view["nonZeroRequests"] == {"cpu": 200 + 10, "memory": 2 * MEM0 + 2**20}


# the API server's defaulting of pod-level resources (pkg/apis/core/v1 TestPodResourcesDefaults)
@pytest.mark.parametrize(("containers", "pod_level", "requests", "limits"), [
    pytest.param([container({"cpu": "1m", "memory": "1Mi"}),
                  container({"cpu": "1m", "memory": "2Mi"})],
                 {"limits": {"cpu": "4m", "memory": "8Mi"}},
                 {"cpu": 2, "memory": 3 * 2**20}, {"cpu": 4, "memory": 8 * 2**20},
                 id="pod requests=unset limits=set, container requests=set limits=unset"),
    pytest.param([container(), container()], {"limits": {"cpu": "4m"}},
                 {"cpu": 4}, {"cpu": 4},
                 id="pod requests=unset cpu limits=set, container resources=unset"),
    pytest.param([container(limits={"cpu": "2m", "hugepages-2Mi": "4Mi"}),
                  container(limits={"cpu": "1m", "hugepages-2Mi": "2Mi"})],
                 {"limits": {"cpu": "5m"}},
                 {"cpu": 3, "hugepages-2Mi": 6 * 2**20}, {"cpu": 5, "hugepages-2Mi": 6 * 2**20},
                 id="pod has cpu limit with hugepages requests=unset limits=unset, container "
                    "hugepages requests=unset limits=set"),
    pytest.param([container(limits={"cpu": "2m", "hugepages-2Mi": "4Mi"}),
                  container(limits={"cpu": "1m", "hugepages-2Mi": "2Mi"})],
                 {"requests": {"cpu": "5m"}},
                 {"cpu": 5, "hugepages-2Mi": 6 * 2**20}, {"cpu": 3, "hugepages-2Mi": 6 * 2**20},
                 id="pod has cpu request with hugepages requests=unset limits=unset, container "
                    "hugepages requests=unset limits=set"),
])
def test_pod_level_defaulting(containers: list[dict[str, Any]], pod_level: dict[str, Any],
                              requests: dict[str, int], limits: dict[str, int]) -> None:
    pod = info(containers, resources=pod_level)
    assert pod.requests == requests
    assert pod.limits == limits


def test_overhead_is_added_only_to_limits_that_are_set() -> None:
    # component-helpers' PodLimits: "Add overhead to non-zero limits"
    pod = info([container(limits={"cpu": "1"})], overhead={"cpu": "100m", "memory": "10Mi"})
    assert pod.limits == {"cpu": 1100}
    assert pod.requests == {"cpu": 1100, "memory": 10 * 2**20}


def test_resources_are_listed_in_kube_order() -> None:
    # kube's fitsRequest checks cpu, memory, ephemeral-storage, then the others
    pod = info([container({"nvidia.com/gpu": "1", "example.com/foo": "1", "memory": "1",
                           "ephemeral-storage": "1", "cpu": "1", "hugepages-2Mi": "2Mi"})])
    assert list(pod.requests) == ["cpu", "memory", "ephemeral-storage", "example.com/foo",
                                  "hugepages-2Mi", "nvidia.com/gpu"]
