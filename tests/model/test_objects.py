from __future__ import annotations

import copy
from typing import Any

import pytest

from policysched.cache.node_info import NodeInfo
from policysched.cel import compile_expression
from policysched.cel.values import INT64_MAX
from policysched.model.objects import (
    SPEC_PARTS_KEPT,
    ObjectError,
    format_timestamp,
    node_view,
    parse_timestamp,
    pod_group_spec,
    pod_info,
    priority_class_spec,
)
from policysched.policy import variables
from policysched.policy.variables import NODE_TYPE, OBJECT_TYPES, POD_TYPE

from ..cache.objects_builder import make_node, make_pod
from ..cache.view_types import type_errors

FULL_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-1",
        "namespace": "shop",
        "uid": "u-1",
        "labels": {"app": "web", "scheduling.x-k8s.io/pod-group": "g1"},
        "annotations": {"delay": "15"},
        "creationTimestamp": "2024-01-01T00:00:00Z",
        "deletionTimestamp": "2024-01-01T00:01:00Z",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                             "uid": "rs-1"}],
    },
    "spec": {
        "priority": 100,
        "schedulerName": "policysched",
        "nodeSelector": {"zone": "a"},
        "affinity": {"nodeAffinity": {}},
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [{
            "name": "c",
            "resources": {"requests": {"cpu": "250m", "memory": "64Mi"},
                          "limits": {"cpu": "1", "memory": "128Mi"}},
            "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 9090}],
        }],
    },
    "status": {"phase": "Pending", "nominatedNodeName": "n2"},
}


def test_pod_view_has_exactly_the_declared_fields_with_their_types() -> None:
    view = pod_info(FULL_POD).view
    assert set(view) == set(OBJECT_TYPES[POD_TYPE.name])
    assert type_errors(view, POD_TYPE) == []


def test_minimal_pod_view_has_every_field_with_kubernetes_defaults() -> None:
    info = pod_info({"metadata": {"name": "p"}})
    assert type_errors(info.view, POD_TYPE) == []
    view = info.view
    assert view["namespace"] == "default"
    assert view["labels"] == {} and view["annotations"] == {} and view["nodeSelector"] == {}
    assert view["creationTimestamp"] == 0 and view["priority"] == 0
    assert view["requests"] == {} and view["limits"] == {}
    assert view["ports"] == [] and view["tolerations"] == [] and view["ownerReferences"] == []
    assert view["affinity"] == {} and view["spec"] == {} and view["status"] == {}
    assert view["schedulerName"] == "default-scheduler"
    assert view["nodeName"] == ""
    assert view["podGroup"] == {"name": "", "minMember": 0, "scheduleTimeoutSeconds": 0}
    assert info.key == "default/p"
    assert info.group is None and info.nominated_node == "" and not info.deleting


def test_pod_convenience_attributes() -> None:
    info = pod_info(FULL_POD)
    assert info.key == "shop/web-1" and info.uid == "u-1"
    assert info.scheduler_name == "policysched" and info.priority == 100
    assert info.creation == 1704067200
    assert info.requests == {"cpu": 250, "memory": 64 * 2**20}
    assert info.limits == {"cpu": 1000, "memory": 128 * 2**20}
    assert info.host_ports == (("", "TCP", 8080),)
    assert info.group == "g1"
    assert info.nominated_node == "n2"
    assert info.deleting
    assert info.obj is FULL_POD


def test_pod_nested_defaults() -> None:
    view = pod_info(FULL_POD).view
    assert view["ports"] == [
        {"containerPort": 80, "hostPort": 8080, "protocol": "TCP", "hostIP": ""},
        {"containerPort": 9090, "hostPort": 0, "protocol": "TCP", "hostIP": ""},
    ]
    assert view["tolerations"] == [{"key": "gpu", "operator": "Exists", "value": "",
                                    "effect": "NoSchedule", "tolerationSeconds": 0}]
    no_operator = make_pod("p", tolerations=[{"key": "k", "value": "v"}])
    assert pod_info(no_operator).view["tolerations"][0]["operator"] == "Equal"
    assert view["ownerReferences"][0]["controller"] is False


def test_host_network_pods_use_their_container_ports_on_the_host() -> None:
    pod = make_pod("p", hostNetwork=True)
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 53, "protocol": "UDP"}]
    assert pod_info(pod).host_ports == (("", "UDP", 53),)


def test_sidecar_ports_count_and_other_init_container_ports_do_not() -> None:
    # kube-scheduler's GetHostPorts: sidecars (restartPolicy Always) first, then containers;
    # an init container that exits before the pod runs holds no port; hostNetwork defaults
    # a sidecar's hostPort too
    pod = make_pod("p", host_port=8080, hostNetwork=True)
    pod["spec"]["initContainers"] = [
        {"name": "setup", "ports": [{"containerPort": 9000, "hostPort": 9000}]},
        {"name": "proxy", "restartPolicy": "Always",
         "ports": [{"containerPort": 15001}, {"containerPort": 53, "protocol": "UDP"}]},
    ]
    info = pod_info(pod)
    assert info.host_ports == (("", "TCP", 15001), ("", "UDP", 53), ("", "TCP", 8080))
    assert [p["containerPort"] for p in info.view["ports"]] == [15001, 53, 80]


def _requests(spec: dict[str, Any]) -> dict[str, int]:
    return pod_info({"metadata": {"name": "p"}, "spec": spec}).requests


def _container(**requests: str) -> dict[str, Any]:
    return {"name": "c", "resources": {"requests": requests}}


def test_requests_sum_containers_and_take_the_largest_init_container() -> None:
    spec = {
        "containers": [_container(cpu="100m", memory="1Gi"), _container(cpu="200m")],
        "initContainers": [_container(cpu="1"), _container(memory="512Mi")],
    }
    assert _requests(spec) == {"cpu": 1000, "memory": 2**30}


def test_sidecar_init_containers_add_to_the_running_sum() -> None:
    sidecar = {**_container(cpu="100m"), "restartPolicy": "Always"}
    spec = {
        "containers": [_container(cpu="200m")],
        "initContainers": [sidecar, _container(cpu="250m")],
    }
    # running: 200m + 100m sidecar; init phase: 250m + the 100m sidecar started before it
    assert _requests(spec) == {"cpu": 350}


def test_overhead_is_added_after_the_maximum() -> None:
    spec = {
        "containers": [_container(cpu="100m")],
        "initContainers": [_container(cpu="500m")],
        "overhead": {"cpu": "50m", "memory": "10Mi"},
    }
    assert _requests(spec) == {"cpu": 550, "memory": 10 * 2**20}


def test_a_request_defaults_to_its_limit() -> None:
    spec = {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"},
                                                       "requests": {"memory": "512Mi"}}}]}
    info = pod_info({"metadata": {"name": "p"}, "spec": spec})
    assert info.requests == {"cpu": 2000, "memory": 512 * 2**20}
    assert info.limits == {"cpu": 2000, "memory": 2**30}


def test_pod_level_resources_replace_the_container_sum() -> None:
    spec = {"containers": [_container(cpu="100m", memory="1Gi")],
            "resources": {"requests": {"cpu": "2"}}}
    assert _requests(spec) == {"cpu": 2000, "memory": 2**30}


@pytest.mark.parametrize(
    ("resource", "quantity", "expected"),
    [
        ("cpu", "1.5", 1500),
        ("cpu", 2, 2000),
        ("cpu", "0.1m", 1),  # rounded up, as MilliValue()
        ("memory", "500m", 1),  # rounded up to a whole byte, as Value()
        ("memory", "1.5Gi", 1610612736),
        ("memory", "1e3", 1000),
        ("ephemeral-storage", "1k", 1000),
        ("nvidia.com/gpu", "2", 2),
    ],
)
def test_quantities_become_ints(resource: str, quantity: Any, expected: int) -> None:
    assert _requests({"containers": [_container(**{resource: quantity})]}) == {resource: expected}


# Node amounts the API server accepts (any non-negative quantity) stay int64: kube's
# Value() / MilliValue() saturated (see cel.library.quantity.quantity_int)
@pytest.mark.parametrize(
    ("quantity", "value", "milli"),
    [
        ("8Ei", INT64_MAX, INT64_MAX),
        ("7Ei", 7 * 2**60, INT64_MAX),
        ("1e19", INT64_MAX, INT64_MAX),
        ("99999999999999999999999999999", INT64_MAX, INT64_MAX),
        ("9223372036854775807m", 9223372036854776, INT64_MAX),
        ("1e9999", INT64_MAX, INT64_MAX),
    ],
)
def test_huge_node_amounts_saturate_at_int64(quantity: str, value: int, milli: int) -> None:
    view = node_view(make_node("n", cpu=quantity, memory=quantity, pods=quantity))
    assert view["allocatable"] == {"cpu": milli, "memory": value, "pods": value}
    assert view["free"] == view["allocatable"]
    assert type_errors(view, NODE_TYPE) == []


def test_pod_sums_saturate_at_int64() -> None:
    huge = [_container(cpu="8Ei", memory="8Ei"), _container(cpu="1", memory="8Ei")]
    assert _requests({"containers": huge, "overhead": {"memory": "1"}}) == \
        {"cpu": INT64_MAX, "memory": INT64_MAX}
    limits = {"limits": {"memory": "5Ei"}}
    info = pod_info({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "resources": limits}, {"name": "b", "resources": limits}]}})
    assert info.limits == info.requests == {"memory": INT64_MAX}  # requests default to limits


@pytest.mark.parametrize(
    ("obj", "field", "reason"),
    [
        ({"metadata": {"name": "p"}, "spec": {"containers": [_container(cpu="-0.5m")]}},
         "spec.containers[0].resources.requests.cpu", "negative"),  # even if it rounds to 0
        ({"metadata": {}}, "metadata.name", "required"),
        ({"metadata": {"name": ""}}, "metadata.name", "empty"),
        ("pod", "", "mapping"),
        ({"metadata": {"name": "p", "labels": {"v": 1}}}, "metadata.labels.v", "string"),
        ({"metadata": {"name": "p", "labels": ["a"]}}, "metadata.labels", "mapping"),
        ({"metadata": {"name": "p", "creationTimestamp": "yesterday"}},
         "metadata.creationTimestamp", "RFC 3339"),
        ({"metadata": {"name": "p"}, "spec": {"priority": "high"}}, "spec.priority", "integer"),
        ({"metadata": {"name": "p"}, "spec": {"containers": [_container(cpu="1.5.3Gi")]}},
         "spec.containers[0].resources.requests.cpu", "invalid quantity '1.5.3Gi'"),
        ({"metadata": {"name": "p"}, "spec": {"containers": [_container(cpu="-1")]}},
         "spec.containers[0].resources.requests.cpu", "negative"),
        ({"metadata": {"name": "p"},
          "spec": {"containers": [_container(**{"example.com/dongle": "x"})]}},
         'spec.containers[0].resources.requests["example.com/dongle"]', "invalid quantity"),
        ({"metadata": {"name": "p"}, "spec": {"containers": [{"ports": [{"hostPort": 1}]}]}},
         "spec.containers[0].ports[0].containerPort", "required"),
        ({"metadata": {"name": "p"},
          "spec": {"containers": [{"ports": [{"containerPort": 70000}]}]}},
         "spec.containers[0].ports[0].containerPort", "65535"),
        ({"metadata": {"name": "p"},
          "spec": {"containers": [{"ports": [{"containerPort": 1, "protocol": "HTTP"}]}]}},
         "spec.containers[0].ports[0].protocol", "TCP"),
        ({"metadata": {"name": "p"}, "spec": {"containers": {"name": "c"}}},
         "spec.containers", "list"),
    ],
)
def test_malformed_pods_name_the_field(obj: Any, field: str, reason: str) -> None:
    with pytest.raises(ObjectError) as caught:
        pod_info(obj)
    assert caught.value.field == field
    assert reason in caught.value.reason
    assert str(caught.value).startswith(field)


def test_pod_group_view_comes_from_the_pod_group_objects() -> None:
    spec = pod_group_spec({"metadata": {"name": "g1", "namespace": "shop"},
                           "spec": {"minMember": 3, "scheduleTimeoutSeconds": 30}})
    info = pod_info(FULL_POD, {spec.key: spec})
    assert info.group_key == "shop/g1"
    assert info.view["podGroup"] == {"name": "g1", "minMember": 3, "scheduleTimeoutSeconds": 30}
    unknown = pod_info(FULL_POD)
    assert unknown.view["podGroup"] == {"name": "g1", "minMember": 0,
                                        "scheduleTimeoutSeconds": 0}
    assert unknown.with_pod_group(spec).view["podGroup"]["minMember"] == 3
    assert unknown.view["podGroup"]["minMember"] == 0
    assert pod_info(FULL_POD, {"default/g1": spec}).view["podGroup"]["minMember"] == 0


def test_with_node_copies_without_touching_the_original() -> None:
    info = pod_info(make_pod("p", cpu="1"))
    bound = info.with_node("n1")
    assert bound.node_name == "n1" and bound.view["nodeName"] == "n1"
    assert bound.view["spec"]["nodeName"] == "n1" and bound.obj["spec"]["nodeName"] == "n1"
    assert info.node_name == "" and info.view["nodeName"] == ""
    assert "nodeName" not in info.obj["spec"]
    assert bound.requests is info.requests and bound.key == info.key


NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "spec": {"unschedulable": True,
             "taints": [{"key": "gpu", "effect": "NoSchedule"},
                        {"key": "team", "value": "x", "effect": "NoExecute",
                         "timeAdded": "2024-01-01T00:00:00Z"}]},
    "status": {
        "allocatable": {"cpu": "3900m", "memory": "7Gi", "pods": "110",
                        "ephemeral-storage": "100Gi", "nvidia.com/gpu": "2"},
        "images": [{"names": ["docker.io/library/nginx:1.25", "nginx:1.25"],
                    "sizeBytes": 70000000}],
    },
}


def test_node_view_has_exactly_the_declared_fields_with_their_types() -> None:
    view = node_view(NODE)
    assert set(view) == set(OBJECT_TYPES[NODE_TYPE.name])
    assert type_errors(view, NODE_TYPE) == []
    assert type_errors(node_view({"metadata": {"name": "bare"}}), NODE_TYPE) == []


def test_node_view_values() -> None:
    view = node_view(NODE)
    assert view["allocatable"] == {"cpu": 3900, "memory": 7 * 2**30, "pods": 110,
                                   "ephemeral-storage": 100 * 2**30, "nvidia.com/gpu": 2}
    assert view["requested"] == {"cpu": 0, "memory": 0, "pods": 0, "ephemeral-storage": 0,
                                 "nvidia.com/gpu": 0}
    assert view["free"] == view["allocatable"] and view["free"] is not view["allocatable"]
    assert view["taints"] == [{"key": "gpu", "value": "", "effect": "NoSchedule"},
                              {"key": "team", "value": "x", "effect": "NoExecute"}]
    assert view["unschedulable"] is True
    assert view["images"] == {"docker.io/library/nginx:1.25": 70000000, "nginx:1.25": 70000000}
    assert view["podCount"] == 0 and view["usedPorts"] == []


def test_node_without_allocatable_uses_its_capacity() -> None:
    view = node_view({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "2"}}})
    assert view["allocatable"] == {"cpu": 2000}


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({"metadata": {}}, "metadata.name"),
        ({"metadata": {"name": "n"}, "status": {"allocatable": {"memory": "lots"}}},
         "status.allocatable.memory"),
        ({"metadata": {"name": "n"}, "spec": {"taints": [{"effect": "NoSchedule"}]}},
         "spec.taints[0].key"),
        ({"metadata": {"name": "n"}, "spec": {"unschedulable": "yes"}}, "spec.unschedulable"),
        ({"metadata": {"name": "n"}, "status": {"images": [{"names": [3]}]}},
         "status.images[0].names[0]"),
    ],
)
def test_malformed_nodes_name_the_field(obj: dict[str, Any], field: str) -> None:
    with pytest.raises(ObjectError) as caught:
        node_view(obj)
    assert caught.value.field == field


def test_timestamps() -> None:
    assert parse_timestamp("2024-01-01T00:00:00Z") == 1704067200
    assert parse_timestamp("2024-01-01T01:00:00+01:00") == 1704067200
    assert parse_timestamp("2024-01-01T00:00:00.999Z") == 1704067200
    assert format_timestamp(1704067200.7) == "2024-01-01T00:00:00Z"
    for bad in ("2024-01-01", "2024-13-01T00:00:00Z", "1704067200", "2024-01-01T00:00:00"):
        with pytest.raises(ValueError):
            parse_timestamp(bad)


def test_pod_groups_and_priority_classes() -> None:
    group = pod_group_spec({"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"},
                            "spec": {"minMember": 3, "scheduleTimeoutSeconds": 30}})
    assert (group.key, group.min_member, group.schedule_timeout_seconds) == ("ml/g", 3, 30)
    default = pod_group_spec({"metadata": {"name": "g"}})
    assert (default.key, default.min_member, default.schedule_timeout_seconds) == (
        "default/g", 1, None)
    with pytest.raises(ObjectError, match=r"spec\.minMember"):
        pod_group_spec({"metadata": {"name": "g"}, "spec": {"minMember": 0}})
    high = priority_class_spec({"metadata": {"name": "high"}, "value": 1000,
                                "globalDefault": True, "preemptionPolicy": "Never"})
    assert (high.value, high.global_default, high.preemption_policy) == (1000, True, "Never")
    with pytest.raises(ObjectError, match="value"):
        priority_class_spec({"metadata": {"name": "p"}})


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("pod.labels.app == 'web' && !('x' in pod.labels)", True),
        ("now - pod.creationTimestamp >= int(pod.annotations.delay)", True),
        ("node.free.cpu >= pod.requests.cpu", True),
        ("node.allocatable['nvidia.com/gpu'] == 2", True),
        ("node.taints.exists(t, t.key == 'gpu' && pod.tolerations.exists(o, o.key == t.key))",
         True),
        ("pod.ports.filter(p, p.hostPort > 0).all(p, !node.usedPorts.exists(u, "
         "u.hostPort == p.hostPort && u.protocol == p.protocol))", False),
        ("nodePods.size() == node.podCount && node.requested.pods == 1", True),
        ("'nginx:1.25' in node.images", True),
    ],
)
def test_views_evaluate_in_cel(expression: str, expected: bool) -> None:
    env = variables.environment(variables.FILTER)
    program = compile_expression(expression, env)
    node = NodeInfo.of(NODE)
    other = pod_info(make_pod("other", cpu="100m", node="n1", host_port=8080))
    node.add_pod(other)
    activation = {"now": 1704067200 + 20, "pod": pod_info(FULL_POD).view, "node": node.view,
                  "nodePods": node.pod_views, "params": {}, "variables": {}}
    assert program.evaluate(activation) is expected


def test_make_node_builder_is_valid() -> None:
    assert type_errors(node_view(make_node("n")), NODE_TYPE) == []


def test_an_update_that_binds_the_pod_reuses_what_its_spec_gave() -> None:
    before = pod_info(FULL_POD)
    bound = copy.deepcopy(FULL_POD)
    bound["spec"]["nodeName"] = "n1"
    bound["status"] = {"phase": "Running", "startTime": "2024-01-01T00:00:30Z"}
    after = pod_info(bound, previous=before)
    assert after.spec_parts is before.spec_parts
    assert after.node_name == after.view["nodeName"] == "n1"
    assert after.start_time is not None and after.nominated_node == ""
    fresh = pod_info(bound)  # the same pod read without a previous one
    assert {k: v for k, v in after.view.items() if k not in ("metadata", "spec", "status")} \
        == {k: v for k, v in fresh.view.items() if k not in ("metadata", "spec", "status")}
    assert (after.requests, after.non_zero, after.host_ports, after.priority) == (
        fresh.requests, fresh.non_zero, fresh.host_ports, fresh.priority)


@pytest.mark.parametrize("change", ["resources", "tolerations", "new key"])
def test_an_update_that_changes_the_spec_reads_it_again(change: str) -> None:
    before = pod_info(FULL_POD)
    updated = copy.deepcopy(FULL_POD)
    if change == "resources":  # an in-place resize
        updated["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m"
    elif change == "tolerations":
        updated["spec"]["tolerations"] = []
    else:
        updated["spec"]["hostNetwork"] = True
    after = pod_info(updated, previous=before)
    assert after.spec_parts is not before.spec_parts
    if change == "resources":
        assert after.requests["cpu"] == 500 and before.requests["cpu"] == 250


def test_pods_of_one_template_share_what_is_read_from_their_spec() -> None:
    """A workload's pods differ in name and uid, not in spec (but nodeName): the spec is
    parsed once; an equal spec of another pod, bound or not, reads the same values."""
    first = pod_info(FULL_POD)
    other = copy.deepcopy(FULL_POD)
    other["metadata"].update(name="other", uid="u-2")
    other["spec"]["nodeName"] = "n2"
    second = pod_info(other)
    assert second.spec_parts is first.spec_parts and second.node_name == "n2"
    changed = copy.deepcopy(other)
    changed["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m"
    third = pod_info(changed)
    assert third.spec_parts is not first.spec_parts
    assert (third.requests["cpu"], first.requests["cpu"]) == (500, 250)
    recreated = copy.deepcopy(FULL_POD)  # deleted and created again under the same name
    recreated["metadata"]["uid"] = "u-3"
    assert pod_info(recreated, previous=third).requests == first.requests


def test_the_templates_remembered_are_bounded() -> None:
    pods = []
    for i in range(SPEC_PARTS_KEPT + 10):
        obj = copy.deepcopy(FULL_POD)
        obj["spec"]["priority"] = i
        pods.append(pod_info(obj))
    again = copy.deepcopy(FULL_POD)
    again["spec"]["priority"] = SPEC_PARTS_KEPT + 9  # the last one: still kept
    assert pod_info(again).spec_parts is pods[-1].spec_parts
    first = copy.deepcopy(FULL_POD)
    first["spec"]["priority"] = 0  # the first one: forgotten, read again, the same
    assert pod_info(first).spec_parts is not pods[0].spec_parts
    assert pod_info(first).priority == 0
