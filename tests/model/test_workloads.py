"""Namespaces and workloads (policysched.model.workloads): objects read as the API server
stores them, and kube-scheduler's DefaultSelector (helper/spread.go and its spread_test.go)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from policysched.model.objects import ObjectError, pod_info
from policysched.model.selectors import label_selector
from policysched.model.workloads import (
    Workload,
    WorkloadKey,
    controller_key,
    default_selector,
    namespace_info,
    workload,
)

from ..cache.objects_builder import (
    controlled_by,
    make_controller,
    make_namespace,
    make_pod,
    make_service,
)
from ..mutation import FuzzSettings, mutate_data

RC, RS, SS = "ReplicationController", "ReplicaSet", "StatefulSet"
SETTINGS = FuzzSettings.from_environment()


def workloads(*objects: dict[str, Any]) -> dict[WorkloadKey, Workload]:
    found = [workload(obj["kind"], obj) for obj in objects]
    return {w.key: w for w in found}


def selector_of(pod: dict[str, Any], *objects: dict[str, Any]) -> dict[str, Any] | None:
    info = pod_info(pod)
    return default_selector(info.view["labels"], info.view["ownerReferences"],
                            workloads(*objects))


def expression(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


# --------------------------------------------------------------------------- objects


def test_a_namespace_is_its_name_and_labels() -> None:
    info = namespace_info(make_namespace("team-a", team="a"))
    assert (info.name, info.labels) == ("team-a", {"team": "a"})
    assert namespace_info({"metadata": {"name": "bare"}}).labels == {}


@pytest.mark.parametrize(("obj", "field"), [
    ({"metadata": {}}, "metadata.name"),
    ({"metadata": {"name": "x", "labels": {"team": 1}}}, "metadata.labels.team"),
    ("not an object", ""),
])
def test_malformed_namespaces(obj: Any, field: str) -> None:
    with pytest.raises(ObjectError) as caught:
        namespace_info(obj)
    assert caught.value.field == field


def test_workloads_read_their_selectors() -> None:
    service = workload("Service", make_service("web", {"app": "web"}, namespace="shop"))
    assert (service.kind, service.namespace, service.name) == ("Service", "shop", "web")
    assert service.labels == {"app": "web"} and service.requirements == ()
    rs = workload(RS, make_controller(RS, "web-1", {
        "matchLabels": {"app": "web"}, "matchExpressions": [expression("tier", "Exists")]}))
    assert rs.labels == {}
    assert rs.requirements == label_selector({"matchLabels": {"app": "web"}, "matchExpressions": [
        expression("tier", "Exists")]}).requirements


def test_a_replication_controller_without_selector_gets_its_templates_labels() -> None:
    """The API server defaults an RC's selector to its pod template's labels."""
    rc = make_controller(RC, "old", None)
    rc["spec"]["template"] = {"metadata": {"labels": {"app": "old"}}}
    assert workload(RC, rc).labels == {"app": "old"}
    rc["spec"]["selector"] = {"app": "older"}
    assert workload(RC, rc).labels == {"app": "older"}


@pytest.mark.parametrize(("obj", "field", "reason"), [
    (make_service("s", {"app": 1}), 'spec.selector.app', "must be a string, not an integer"),
    (make_service("s", {"bad key!": "x"}), "spec.selector", "invalid label key 'bad key!'"),
    (make_service("s", {"app": "-x"}), "spec.selector.app", "invalid label value '-x'"),
    (make_service("s", ["app"]), "spec.selector", "must be a mapping, not a list"),
    (make_controller(RC, "rc", {"app": "x" * 64}), "spec.selector.app",
     "must be no more than 63 bytes"),
    (make_controller(RS, "rs", None), "spec.selector", "required field is missing"),
    (make_controller(SS, "ss", {"matchExpressions": [{"key": "a", "operator": "Is"}]}),
     "spec.selector", 'matchExpressions[0].operator: "Is" is not a valid label selector'),
    (make_controller(RS, "rs", {"matchLabels": "app"}), "spec.selector",
     "matchLabels: must be a mapping"),
    ({"kind": "Service", "metadata": {"namespace": "x"}}, "metadata.name",
     "required field is missing"),
])
def test_malformed_workloads(obj: dict[str, Any], field: str, reason: str) -> None:
    """What the API server would refuse is an ObjectError naming the field."""
    with pytest.raises(ObjectError) as caught:
        workload(obj["kind"], obj)
    assert caught.value.field == field
    assert reason in caught.value.reason


# --------------------------------------------------------------------------- DefaultSelector


def test_get_pod_services() -> None:
    """spread_test.go TestGetPodServices: pod i is selected by service i alone; pods 3 and
    4 by none."""
    services = [make_service(f"service-{i}", {"app": f"test-{i}"}, namespace="test")
                for i in range(3)]
    for i in range(5):
        pod = make_pod(f"test-pod-{i}", namespace="test",
                       labels={"app": f"test-{i}", "label": f"label-{i}"})
        want = {"matchLabels": {"app": f"test-{i}"}, "matchExpressions": []} if i < 3 \
            else None
        assert selector_of(pod, *services) == want


def test_services_selecting_the_pod_are_merged() -> None:
    pod = make_pod("p", labels={"app": "web", "tier": "front", "rev": "7"})
    assert selector_of(
        pod,
        make_service("by-app", {"app": "web"}),
        make_service("by-tier", {"tier": "front", "app": "web"}),
        make_service("other", {"app": "db"}),  # does not select it
        make_service("partly", {"app": "web", "zone": "a"}),  # needs a label it lacks
    ) == {"matchLabels": {"app": "web", "tier": "front"}, "matchExpressions": []}


@pytest.mark.parametrize("selector", [None, {}])
def test_a_service_without_selector_selects_nothing(selector: dict[str, str] | None) -> None:
    """A nil selector matches nothing in kube (and the API server stores {} as nil)."""
    assert selector_of(make_pod("p", labels={"app": "web"}),
                       make_service("headless", selector)) is None


def test_a_service_selector_value_must_be_the_pods() -> None:
    """A label set as a selector: key = value, so "" requires the label, empty."""
    service = make_service("s", {"canary": ""})
    assert selector_of(make_pod("p", labels={"canary": ""}), service) is not None
    assert selector_of(make_pod("p", labels={"app": "x"}), service) is None


def test_a_replication_controller_adds_its_labels_over_the_services() -> None:
    """labels.Merge: the controller's value of a key wins."""
    pod = controlled_by(make_pod("p", labels={"app": "web", "tier": "front"}), RC, "rc")
    assert selector_of(pod, make_service("s", {"tier": "front"}),
                       make_controller(RC, "rc", {"tier": "back", "app": "web"})) == {
        "matchLabels": {"app": "web", "tier": "back"}, "matchExpressions": []}


@pytest.mark.parametrize("kind", [RS, SS])
def test_a_replica_set_or_stateful_set_adds_its_requirements(kind: str) -> None:
    pod = controlled_by(make_pod("p", labels={"app": "web", "tier": "front"}), kind, "web")
    controller = make_controller(kind, "web", {
        "matchLabels": {"app": "web"},
        "matchExpressions": [expression("tier", "In", "front", "edge"),
                             expression("canary", "DoesNotExist")]})
    found = selector_of(pod, make_service("s", {"tier": "front"}), controller)
    assert found == {"matchLabels": {"tier": "front"}, "matchExpressions": [
        expression("app", "In", "web"), expression("canary", "DoesNotExist"),
        expression("tier", "In", "edge", "front")]}
    # a LabelSelector for the policies (workloadSelector), selecting the pod's siblings
    parsed = label_selector(found)
    assert parsed.matches({"app": "web", "tier": "front"})
    assert not parsed.matches({"app": "web", "tier": "front", "canary": "yes"})
    assert not parsed.matches({"app": "web", "tier": "edge"})  # not the Service's


@pytest.mark.parametrize(("selector", "want"), [
    ({}, None),  # Everything: no requirements
    ({"matchLabels": {"app": "web"}},
     {"matchLabels": {}, "matchExpressions": [{"key": "app", "operator": "In",
                                               "values": ["web"]}]}),
])
def test_an_empty_controller_selector_adds_nothing(selector: dict[str, Any],
                                                   want: dict[str, Any] | None) -> None:
    pod = controlled_by(make_pod("p", labels={"app": "web"}), RS, "rs")
    assert selector_of(pod, make_controller(RS, "rs", selector)) == want


@pytest.mark.parametrize(("kind", "api_version", "controller", "name", "counted"), [
    (RS, "apps/v1", True, "web", True),
    (RC, "/v1", True, "web", True),  # schema.ParseGroupVersion reads "/v1" as core v1
    (RS, "apps/v1", False, "web", False),  # an owner, not the controller
    (RS, "extensions/v1beta1", True, "web", False),  # only apps/v1 (the GVK is compared)
    (RS, "apps/v1beta2", True, "web", False),
    (SS, "apps/v1/x", True, "web", False),  # does not parse
    (RS, "apps/v1", True, "other", False),  # not known
    ("Deployment", "apps/v1", True, "web", False),  # not a kind DefaultSelector reads
    (RC, "apps/v1", True, "web", False),  # an RC is core v1
])
def test_only_the_pods_known_controller_of_a_supported_kind_counts(
        kind: str, api_version: str, controller: bool, name: str, counted: bool) -> None:
    pod = controlled_by(make_pod("p", labels={"app": "web"}), kind, name, api_version,
                        controller)
    objects = [make_controller(RS, "web", {"matchLabels": {"app": "web"}}),
               make_controller(RC, "web", {"app": "web"})]
    assert (selector_of(pod, *objects) is not None) is counted


def test_the_first_controller_reference_decides() -> None:
    """metav1.GetControllerOf: the first reference with controller true, even one of a
    kind DefaultSelector does not read."""
    pod = make_pod("p", labels={"app": "web"})
    controlled_by(pod, RS, "web", controller=False)
    controlled_by(pod, "Deployment", "web")
    controlled_by(pod, RS, "web")
    assert controller_key(pod_info(pod).view["ownerReferences"]) is None
    assert selector_of(pod, make_controller(RS, "web", {"matchLabels": {"app": "web"}})) \
        is None


# --------------------------------------------------------------------------- hostile input

SAMPLES = [
    make_namespace("ns", team="a"),
    make_service("s", {"app": "web", "tier": "front"}, namespace="ns"),
    {**make_controller(RC, "rc", {"app": "web"}, namespace="ns"),
     "spec": {"selector": {}, "template": {"metadata": {"labels": {"app": "web"}}}}},
    make_controller(RS, "rs", {"matchLabels": {"app": "web"}, "matchExpressions": [
        expression("tier", "In", "front"), expression("canary", "DoesNotExist")]},
        namespace="ns"),
    make_controller(SS, "ss", {"matchExpressions": [expression("app", "NotIn", "db")]},
                    namespace="ns"),
]


@pytest.mark.parametrize("case", SETTINGS.cases(200))
def test_hostile_objects_are_object_errors_or_objects(case: int) -> None:
    """Any mutation of a valid object gives an object or an ObjectError, never another
    exception; what it gives feeds DefaultSelector without error."""
    rng = SETTINGS.rng("tests/model/test_workloads.py", case)
    obj = copy.deepcopy(rng.choice(SAMPLES))
    kind = obj["kind"]
    mutate_data(obj, rng, ())
    if rng.random() < 0.2:  # keys YAML allows and JSON does not
        spec = obj.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("selector"), dict):
            spec["selector"][rng.choice((1, None, True))] = "x"
    try:
        if kind == "Namespace":
            namespace_info(obj)
            return
        found = workload(kind, obj)
    except ObjectError:
        return
    pod = controlled_by(make_pod("p", namespace=found.namespace, labels={"app": "web"}),
                        found.kind, found.name)
    selector = default_selector(pod_info(pod).view["labels"],
                                pod_info(pod).view["ownerReferences"], {found.key: found})
    if selector is not None:
        label_selector(selector)  # what workloadSelector hands to policies parses
