from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policysched.cache import Cache, ObjectError
from policysched.cluster.cluster_file import load_cluster_file, start_time
from policysched.cluster.memory import MemoryBackend, RecordedBinding, RecordedEvent
from policysched.framework.backend import BackendError, BindError
from policysched.model.clock import SimulatedClock
from policysched.model.objects import PodInfo, parse_timestamp, pod_info

from ..cache.objects_builder import (
    controlled_by,
    make_controller,
    make_namespace,
    make_node,
    make_pod,
    make_service,
)

FIXTURES = Path(__file__).parent / "fixtures"
T0 = parse_timestamp("2024-01-01T00:05:00Z")


def _backend() -> MemoryBackend:
    objects = load_cluster_file(FIXTURES / "valid.yaml")
    return MemoryBackend(objects, SimulatedClock(start_time(objects)))


def _pod(backend: MemoryBackend, key: str) -> PodInfo:
    obj = backend.pod(key)
    assert obj is not None
    return pod_info(obj)


def _scheduled(obj: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == "PodScheduled")


def test_the_first_drain_delivers_the_initial_objects_as_added_events() -> None:
    backend = _backend()
    events = backend.drain_events()
    assert [(e.kind, e.resource, e.obj["metadata"]["name"]) for e in events] == [
        ("ADDED", "Node", "node-a"),
        ("ADDED", "Node", "node-b"),
        ("ADDED", "PodGroup", "trio"),
        ("ADDED", "Pod", "web-0"),
        ("ADDED", "Pod", "urgent"),
        ("ADDED", "Pod", "plain"),
        ("ADDED", "Pod", "critical"),
    ]
    assert backend.drain_events() == []


def test_created_objects_are_defaulted_as_the_api_server_does() -> None:
    backend = _backend()
    stored = backend.add_object({"kind": "Pod", "metadata": {"name": "new"},
                                 "spec": {"containers": [{"name": "c"}]}})
    metadata = stored["metadata"]
    assert metadata["namespace"] == "default" and metadata["uid"]
    assert metadata["creationTimestamp"] == "2024-01-01T00:05:00Z"  # the clock's time
    assert metadata["resourceVersion"]
    assert stored["spec"]["schedulerName"] == "default-scheduler"
    assert stored["spec"]["priority"] == 10  # the file's global default class
    assert stored["status"]["phase"] == "Pending"
    at = backend.add_object(make_pod("later"), at=T0 + 30)
    assert at["metadata"]["creationTimestamp"] == "2024-01-01T00:05:30Z"
    events = backend.drain_events()
    assert [e.obj["metadata"]["name"] for e in events][-2:] == ["new", "later"]


def test_uids_are_stable_and_distinct() -> None:
    uids = [o["metadata"]["uid"] for o in _backend().objects("Pod")]
    assert len(set(uids)) == len(uids)
    assert uids == [o["metadata"]["uid"] for o in _backend().objects("Pod")]


def test_creating_refuses_duplicates_unknown_kinds_and_malformed_objects() -> None:
    backend = _backend()
    with pytest.raises(BackendError, match="already exists"):
        backend.add_object(make_node("node-a"))
    with pytest.raises(BackendError, match='unsupported kind "Deployment"'):
        backend.add_object({"kind": "Deployment", "metadata": {"name": "s"}})
    with pytest.raises(ObjectError, match=r"spec.containers\[0\].resources.requests.cpu"):
        backend.add_object(make_pod("bad", cpu="1.5.3Gi"))
    with pytest.raises(ObjectError, match='no PriorityClass with name "gold"'):
        backend.add_object(make_pod("vip", priorityClassName="gold"))


def test_bind_sets_the_node_and_the_scheduled_condition() -> None:
    clock = SimulatedClock(T0)
    backend = MemoryBackend([make_node("n1"), make_pod("p", cpu="1")], clock)
    backend.drain_events()
    pod = _pod(backend, "default/p")
    clock.advance_to(T0 + 7)
    backend.bind(pod, "n1")
    (event,) = backend.drain_events()
    assert (event.kind, event.resource) == ("MODIFIED", "Pod")
    assert event.obj["spec"]["nodeName"] == "n1"
    condition = _scheduled(event.obj)
    assert condition["status"] == "True"
    assert condition["lastTransitionTime"] == "2024-01-01T00:05:07Z"
    assert backend.bindings == [RecordedBinding(T0 + 7, "default/p", "n1")]
    event.obj["spec"]["nodeName"] = "changed by the receiver"
    stored = backend.pod("default/p")
    assert stored is not None and stored["spec"]["nodeName"] == "n1"


def test_bind_conflicts() -> None:
    backend = MemoryBackend([make_node("n1"), make_pod("p"), make_pod("q", node="n1")])
    pod = _pod(backend, "default/p")
    with pytest.raises(BindError, match='nodes "nope" not found'):
        backend.bind(pod, "nope")
    with pytest.raises(BindError, match="already assigned"):
        backend.bind(_pod(backend, "default/q"), "n1")
    backend.delete_object("Pod", "p")
    with pytest.raises(BindError, match='pods "p" not found'):
        backend.bind(pod, "n1")
    backend.add_object(make_pod("p"))
    with pytest.raises(BindError, match="deleted and recreated"):
        backend.bind(pod, "n1")


def test_evict_marks_and_deletes_the_victim() -> None:
    clock = SimulatedClock(T0)
    backend = MemoryBackend([make_node("n1"), make_pod("victim", node="n1")], clock)
    backend.drain_events()
    victim = _pod(backend, "default/victim")
    backend.evict(victim, "preempted by default/urgent on node n1")
    (event,) = backend.drain_events()
    assert (event.kind, event.resource) == ("DELETED", "Pod")
    target = next(c for c in event.obj["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert target["reason"] == "PreemptionByScheduler"
    assert target["message"] == "preempted by default/urgent on node n1"
    assert backend.pod("default/victim") is None
    assert backend.evictions[0].node == "n1" and backend.evictions[0].pod == "default/victim"
    with pytest.raises(BackendError, match="not found"):
        backend.evict(victim, "again")


def test_disruption_budgets_are_objects_of_the_cluster() -> None:
    """PodDisruptionBudgets are created before pods (preemption may read them at once),
    validated, and delivered as events."""
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "web"},
              "spec": {"selector": {"matchLabels": {"app": "web"}}},
              "status": {"disruptionsAllowed": 1}}
    backend = MemoryBackend([make_pod("p"), budget])
    assert [(e.kind, e.resource) for e in backend.drain_events()] == [
        ("ADDED", "PodDisruptionBudget"), ("ADDED", "Pod")]
    with pytest.raises(ObjectError, match=r"spec\.selector"):
        backend.add_object({**budget, "metadata": {"name": "bad"}, "spec": {"selector": 1}})
    assert backend.delete_object("PodDisruptionBudget", "web")["status"] == {
        "disruptionsAllowed": 1}


def test_metadata_patches_merge_and_no_op_patches_are_silent() -> None:
    backend = MemoryBackend([make_pod("p", labels={"keep": "1", "drop": "x"})])
    backend.drain_events()
    pod = _pod(backend, "default/p")
    backend.patch_pod_metadata(pod, {"drop": None, "new": "2"}, {"note": "hi"})
    (event,) = backend.drain_events()
    assert event.obj["metadata"]["labels"] == {"keep": "1", "new": "2"}
    assert event.obj["metadata"]["annotations"] == {"note": "hi"}
    backend.patch_pod_metadata(pod, {"keep": "1", "absent": None}, {})
    assert backend.drain_events() == []


def test_nominated_node() -> None:
    backend = MemoryBackend([make_pod("p")])
    backend.drain_events()
    pod = _pod(backend, "default/p")
    backend.set_nominated_node(pod, "n1")
    (event,) = backend.drain_events()
    assert event.obj["status"]["nominatedNodeName"] == "n1"
    assert pod_info(event.obj).nominated_node == "n1"
    backend.set_nominated_node(pod, "n1")
    assert backend.drain_events() == []
    backend.set_nominated_node(pod, None)
    (event,) = backend.drain_events()
    assert "nominatedNodeName" not in event.obj["status"]


def test_pod_conditions_and_events_are_recorded_with_the_clock() -> None:
    clock = SimulatedClock(100)
    backend = MemoryBackend([make_pod("p")], clock)
    backend.drain_events()
    pod = _pod(backend, "default/p")
    backend.set_pod_condition(pod, "False", "Unschedulable", "0/0 nodes are available")
    backend.record_event(pod, "Warning", "FailedScheduling", "0/0 nodes are available")
    (event,) = backend.drain_events()
    condition = _scheduled(event.obj)
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert condition["lastTransitionTime"] == "1970-01-01T00:01:40Z"
    clock.advance_to(200)
    backend.set_pod_condition(pod, "False", "Unschedulable", "0/0 nodes are available")
    assert backend.drain_events() == []  # nothing changed
    backend.set_pod_condition(pod, "False", "Unschedulable", "0/1 nodes are available")
    (event,) = backend.drain_events()
    assert _scheduled(event.obj)["lastTransitionTime"] == "1970-01-01T00:01:40Z"  # same status
    assert [c.time for c in backend.conditions] == [100, 200, 200]
    assert backend.events == [RecordedEvent(100, "default/p", "Warning", "FailedScheduling",
                                            "0/0 nodes are available")]


def test_pod_groups() -> None:
    groups = _backend().pod_groups()
    assert list(groups) == ["jobs/trio"]
    assert groups["jobs/trio"].min_member == 3
    assert groups["jobs/trio"].schedule_timeout_seconds == 60


def test_update_and_delete_objects() -> None:
    backend = MemoryBackend([make_node("n1")])
    (added,) = backend.drain_events()
    cordoned = make_node("n1")
    cordoned["spec"] = {"unschedulable": True}
    stored = backend.update_object(cordoned)
    assert stored["metadata"]["uid"] == added.obj["metadata"]["uid"]
    (event,) = backend.drain_events()
    assert event.kind == "MODIFIED" and event.obj["spec"]["unschedulable"] is True
    backend.delete_object("Node", "n1")
    (event,) = backend.drain_events()
    assert event.kind == "DELETED" and event.obj["metadata"]["name"] == "n1"
    with pytest.raises(BackendError, match='Node "n1" not found'):
        backend.delete_object("Node", "n1")
    with pytest.raises(BackendError, match="not found"):
        backend.update_object(make_node("n1"))


def test_cache_fed_by_the_backend_counts_a_bound_pod_once() -> None:
    backend = _backend()
    cache = Cache()
    for event in backend.drain_events():
        cache.apply(event)
    pod = cache.pod("jobs/urgent")
    assert pod is not None
    cache.assume(pod, "node-b")
    backend.bind(pod, "node-b")
    cache.finish_binding(pod)
    for event in backend.drain_events():
        cache.apply(event)
    node = cache.snapshot().node("node-b")
    assert node is not None
    assert node.requested["cpu"] == 1000 and node.pod_count == 1
    assert not cache.is_assumed(pod)
    assert node.pod_views[0]["priority"] == 1000


def test_namespaces_and_workloads_come_before_pods_and_feed_the_cache() -> None:
    pod = controlled_by(make_pod("web-1", namespace="shop", labels={"app": "web"}),
                        "StatefulSet", "web")
    backend = MemoryBackend([
        pod, make_service("web", {"app": "web"}, namespace="shop"),
        make_controller("StatefulSet", "web", {"matchLabels": {"app": "web"}},
                        namespace="shop"),
        make_namespace("shop", team="a"), make_node("n1")])
    events = backend.drain_events()
    assert [(e.kind, e.resource) for e in events] == [
        ("ADDED", "Node"), ("ADDED", "Namespace"), ("ADDED", "Service"),
        ("ADDED", "StatefulSet"), ("ADDED", "Pod")]
    cache = Cache()
    for event in events:
        cache.apply(event)
    info = cache.pod("shop/web-1")
    assert info is not None and cache.namespace_labels("shop") == {"team": "a"}
    assert cache.default_selector(info) == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}
    backend.update_object(make_namespace("shop", team="b"))
    backend.delete_object("Service", "web", "shop")
    for event in backend.drain_events():
        cache.apply(event)
    assert cache.namespace_labels("shop") == {"team": "b"}
    assert cache.default_selector(info) == {
        "matchLabels": {},
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}
    with pytest.raises(ObjectError, match=r"spec\.selector: required field is missing"):
        backend.add_object(make_controller("ReplicaSet", "bad", None))
    assert backend.get("Namespace", "shop") is not None


# -- matchLabelKeys / mismatchLabelKeys: kube-apiserver's pod strategy on create -------------

def term(**extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": "web"}},
            "topologyKey": "kubernetes.io/hostname", **extra}


def labelled_pod(name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return make_pod(name, labels=labels, **spec)


def test_label_keys_are_merged_into_the_selectors_when_a_pod_is_created() -> None:
    """PrepareForCreate (mutatePodAffinity, mutateTopologySpreadConstraints): for every
    pod (anti-)affinity term, required or preferred, and topology spread constraint."""
    backend = MemoryBackend()
    affinity = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            term(matchLabelKeys=["rev", "absent"])]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": term(mismatchLabelKeys=["team"])}],
            "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "zone", "matchLabelKeys": ["rev"]}]}}  # nil selector: left as is
    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {}, "matchLabelKeys": ["rev"]}]
    stored = backend.add_object(labelled_pod("p", {"app": "web", "rev": "7", "team": "a"},
                                              affinity=affinity,
                                              topologySpreadConstraints=spread))
    spec = stored["spec"]
    required = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required[0]["labelSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "rev", "operator": "In", "values": ["7"]}]}
    anti = spec["affinity"]["podAntiAffinity"]
    preferred = anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
    assert preferred["labelSelector"]["matchExpressions"] == [
        {"key": "team", "operator": "NotIn", "values": ["a"]}]
    assert "labelSelector" not in anti["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert spec["topologySpreadConstraints"][0]["labelSelector"] == {
        "matchExpressions": [{"key": "rev", "operator": "In", "values": ["7"]}]}
    # only at creation: an update keeps the selectors as they are
    stored["metadata"]["labels"]["rev"] = "8"
    updated = backend.update_object(stored)
    assert updated["spec"]["topologySpreadConstraints"] == spec["topologySpreadConstraints"]


def test_a_pod_read_back_from_a_cluster_is_not_merged_twice() -> None:
    """A dump of a real cluster has the requirements already."""
    merged = term(matchLabelKeys=["rev"], mismatchLabelKeys=["team"])
    merged["labelSelector"]["matchExpressions"] = [
        {"key": "rev", "operator": "In", "values": ["7"]},
        {"key": "team", "operator": "NotIn", "values": ["a"]}]
    pod = labelled_pod("p", {"app": "web", "rev": "7", "team": "a"}, affinity={
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [merged]}})
    stored = MemoryBackend([pod]).pod("default/p")
    assert stored is not None
    [again] = stored["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]
    assert again == merged


def test_a_term_keeps_the_labels_of_its_pods_creation() -> None:
    """kube v1.34.12: a running pod created without `rev`, labelled rev=2 later, still
    keeps every app=web pod off its node (its term was merged at creation, with no rev)."""
    from policysched.commands.loading import load_engine
    from policysched.framework.scheduler import Scheduler

    engine = load_engine([], None)
    guard = labelled_pod("guard", {"app": "web"}, node="n0", affinity={
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            term(matchLabelKeys=["rev"])]}})
    backend = MemoryBackend([make_node("n0", **{}), make_node("n1"), guard],
                            SimulatedClock(T0))
    for name in ("n0", "n1"):
        node = backend.get("Node", name)
        assert node is not None
        node["metadata"]["labels"] = {"kubernetes.io/hostname": name}
        backend.update_object(node)
    relabelled = backend.pod("default/guard")
    assert relabelled is not None
    relabelled["metadata"]["labels"]["rev"] = "2"
    backend.update_object(relabelled)
    backend.add_object(labelled_pod("incoming", {"app": "web", "rev": "1"},
                                    schedulerName="policysched",
                                    nodeSelector={"kubernetes.io/hostname": "n0"}))
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    scheduler.sync()
    scheduler.schedule_one()
    assert scheduler.records["default/incoming"].message == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 "
        "node(s) didn't satisfy existing pods anti-affinity rules. no new claims to "
        "deallocate, preemption: 0/2 nodes are available: 1 No preemption victims found for "
        "incoming pod, 1 Preemption is not helpful for scheduling.")
