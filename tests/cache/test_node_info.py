from __future__ import annotations

import random
from typing import Any

from policysched.cache.node_info import NodeInfo
from policysched.cel.values import INT64_MAX, INT64_MIN
from policysched.model.objects import PodInfo, pod_info
from policysched.policy.variables import NODE_TYPE

from .objects_builder import make_node, make_pod
from .view_types import type_errors


def _pod(name: str, **kwargs: Any) -> PodInfo:
    return pod_info(make_pod(name, **kwargs))


def test_adding_pods_updates_requested_free_count_and_ports() -> None:
    node = NodeInfo.of(make_node("n1", cpu="4", memory="8Gi", pods="3"))
    start = node.generation
    a = _pod("a", cpu="1", memory="1Gi", host_port=8080)
    b = _pod("b", cpu="500m")
    node.add_pod(a)
    node.add_pod(b)
    assert node.requested == {"cpu": 1500, "memory": 2**30, "pods": 2}
    assert node.free == {"cpu": 2500, "memory": 7 * 2**30, "pods": 1}
    assert node.view["podCount"] == 2 == node.pod_count
    assert node.used_ports == [{"hostIP": "", "protocol": "TCP", "hostPort": 8080}]
    assert node.pod_views == [a.view, b.view] and node.pod_views[0] is a.view
    assert node.generation > start
    assert type_errors(node.view, NODE_TYPE) == []


def test_non_zero_requested_counts_kube_defaults_per_container() -> None:
    # kube-scheduler's TestNodeInfoAddPod (framework/types_test.go): overhead, an init
    # container, and a container without a memory request (200Mi by default)
    def pod(name: str, requests: dict[str, str], overhead: dict[str, str],
            init: dict[str, str] | None = None) -> PodInfo:
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "resources": {"requests": requests}}],
            "overhead": overhead}
        if init:
            spec["initContainers"] = [{"name": "i", "resources": {"requests": init}}]
        return pod_info({"metadata": {"name": name}, "spec": spec})

    node = NodeInfo.of(make_node("n1"))
    node.add_pod(pod("test-1", {"cpu": "100m", "memory": "500"}, {"cpu": "500m"}))
    node.add_pod(pod("test-2", {"cpu": "200m"}, {"cpu": "500m", "memory": "500"}))
    test_3 = pod("test-3", {"cpu": "200m"}, {"cpu": "500m", "memory": "500"},
                 {"cpu": "500m", "memory": "200Mi"})
    node.add_pod(test_3)
    assert node.requested["cpu"] == 2300 and node.requested["memory"] == 209716700
    assert node.view["nonZeroRequested"] == {"cpu": 2300, "memory": 419431900, "pods": 3}
    node.remove_pod(test_3)
    assert node.view["nonZeroRequested"] == {"cpu": 1300, "memory": 1000 + 200 * 2**20,
                                             "pods": 2}
    assert type_errors(node.view, NODE_TYPE) == []


def test_removing_pods_restores_the_empty_node() -> None:
    empty = NodeInfo.of(make_node("n1")).view
    node = NodeInfo.of(make_node("n1"))
    a, b = _pod("a", cpu="1", host_port=80), _pod("b", memory="1Gi", host_port=80)
    node.add_pod(a)
    node.add_pod(b)
    generation = node.generation
    assert node.remove_pod(a) is a
    assert node.used_ports == [{"hostIP": "", "protocol": "TCP", "hostPort": 80}]  # b's
    assert node.remove_pod(b) is b
    assert node.generation > generation
    for field in ("requested", "nonZeroRequested", "free", "podCount", "usedPorts"):
        assert node.view[field] == empty[field], field
    assert node.pods == {} and node.pod_views == []


def test_remove_subtracts_what_was_counted_not_what_is_passed() -> None:
    node = NodeInfo.of(make_node("n1"))
    node.add_pod(_pod("a", cpu="1"))
    newer = _pod("a", cpu="3")  # same key, different requests
    node.remove_pod(newer)
    assert node.requested["cpu"] == 0
    assert node.remove_pod(newer) is None


def test_adding_a_pod_with_the_same_key_replaces_it() -> None:
    node = NodeInfo.of(make_node("n1"))
    node.add_pod(_pod("a", cpu="1"))
    replacement = _pod("a", cpu="2")
    node.add_pod(replacement)
    assert node.requested["cpu"] == 2000 and node.pod_count == 1
    assert node.pod_views == [replacement.view]


def test_resources_the_node_does_not_offer_are_requested_but_not_free() -> None:
    node = NodeInfo.of(make_node("n1"))
    gpu = pod_info({"metadata": {"name": "g"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})
    node.add_pod(gpu)
    assert node.requested["nvidia.com/gpu"] == 1
    assert "nvidia.com/gpu" not in node.free
    node.remove_pod(gpu)
    assert "nvidia.com/gpu" not in node.requested


def test_set_node_keeps_pods_and_recomputes_free() -> None:
    node = NodeInfo.of(make_node("n1", cpu="4"))
    a = _pod("a", cpu="1", host_port=9000)
    node.add_pod(a)
    generation = node.generation
    cordoned = make_node("n1", cpu="2", **{"example.com/dongle": "1"})
    cordoned["spec"] = {"unschedulable": True}
    node.set_node(cordoned)
    assert node.generation > generation
    assert node.view["unschedulable"] is True and node.obj is cordoned
    assert node.requested == {"cpu": 1000, "memory": 0, "pods": 1, "example.com/dongle": 0}
    assert node.free["cpu"] == 1000 and node.free["example.com/dongle"] == 1
    assert node.pod_views == [a.view] and node.view["podCount"] == 1
    assert node.view["usedPorts"] == [{"hostIP": "", "protocol": "TCP", "hostPort": 9000}]
    node.remove_pod(a)
    assert node.free["cpu"] == 2000 and node.view["usedPorts"] == []


def test_free_goes_negative_on_an_overcommitted_node() -> None:
    node = NodeInfo.of(make_node("n1", cpu="1", pods="1"))
    node.add_pod(_pod("a", cpu="1"))
    node.add_pod(_pod("b", cpu="1"))
    assert node.free["cpu"] == -1000 and node.free["pods"] == -1


def test_requested_saturates_at_int64_so_free_stays_int64() -> None:
    node = NodeInfo.of(make_node("n1", memory="8Ei"))  # 2^63-1 bytes
    a, b = _pod("a", memory="8Ei"), _pod("b", memory="4Ei")
    node.add_pod(a)
    node.add_pod(b)
    assert node.usage["memory"] == INT64_MAX + 4 * 2**60  # the exact sum is kept ...
    assert node.requested["memory"] == INT64_MAX and node.free["memory"] == 0  # ... not shown
    node.set_node(make_node("n1", memory="1Ki"))
    assert node.requested["memory"] == INT64_MAX and node.free["memory"] == 1024 - INT64_MAX
    node.remove_pod(a)
    assert node.requested["memory"] == 4 * 2**60 and node.free["memory"] == 1024 - 4 * 2**60
    assert type_errors(node.view, NODE_TYPE) == []
    assert all(INT64_MIN <= v <= INT64_MAX for field in ("allocatable", "requested", "free")
               for v in node.view[field].values())


def test_clone_is_independent() -> None:
    node = NodeInfo.of(make_node("n1"))
    node.add_pod(_pod("a", cpu="1", host_port=80))
    copy = node.clone()
    assert copy.generation == node.generation and copy.view == node.view
    copy.remove_pod(_pod("a"))
    copy.add_pod(_pod("b", cpu="2"))
    assert node.requested["cpu"] == 1000 and list(node.pods) == ["default/a"]
    assert node.used_ports and node.view["podCount"] == 1
    assert copy.requested["cpu"] == 2000 and not copy.used_ports


def test_incremental_updates_match_a_fresh_count() -> None:
    rng = random.Random(7)
    node = NodeInfo.of(make_node("n1", cpu="64", memory="256Gi"))
    pods = [
        _pod(f"p{i}", cpu=f"{rng.randint(0, 900)}m", memory=f"{rng.randint(1, 64)}Mi",
             host_port=rng.choice([None, 80, 443]))
        for i in range(40)
    ]
    for _ in range(300):
        pod = rng.choice(pods)
        if pod.key in node.pods:
            node.remove_pod(pod)
        else:
            node.add_pod(pod)
        fresh = NodeInfo.of(node.obj)
        for counted in node.pods.values():
            fresh.add_pod(counted)
        for field in ("requested", "nonZeroRequested", "free", "podCount"):
            assert node.view[field] == fresh.view[field]
        used = sorted((p["hostIP"], p["protocol"], p["hostPort"]) for p in node.used_ports)
        expected = sorted({port for p in node.pods.values() for port in p.host_ports})
        assert used == expected
        assert node.requested["cpu"] == sum(p.requests.get("cpu", 0) for p in node.pods.values())
