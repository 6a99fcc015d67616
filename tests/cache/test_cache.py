from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from policysched.cache import Cache, CacheError, ObjectError
from policysched.model.events import ClusterEvent
from policysched.model.objects import PodInfo

from .objects_builder import (
    controlled_by,
    make_controller,
    make_namespace,
    make_node,
    make_pod,
    make_service,
)

FIXTURE = Path(__file__).parent / "fixtures" / "cluster.yaml"


def _objects() -> list[dict[str, Any]]:
    return [o for o in yaml.safe_load_all(FIXTURE.read_text()) if o]


def _event(kind: Any, obj: dict[str, Any]) -> ClusterEvent:
    return ClusterEvent(kind, obj["kind"], copy.deepcopy(obj))


def _loaded() -> Cache:
    cache = Cache()
    for obj in _objects():
        cache.apply(_event("ADDED", obj))
    return cache


def _pod_obj(name: str) -> dict[str, Any]:
    return next(o for o in _objects() if o["metadata"]["name"] == name)


def _bound(obj: dict[str, Any], node: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["spec"]["nodeName"] = node
    return obj


def _pending(cache: Cache) -> PodInfo:
    pod = cache.pod("default/pending")
    assert pod is not None
    return pod


def test_bound_pods_of_every_scheduler_count_and_pending_pods_do_not() -> None:
    cache = _loaded()
    snapshot = cache.snapshot()
    assert [n.name for n in snapshot.nodes] == ["node-a", "node-b", "node-c"]
    a, b, c = (snapshot.node(n) for n in ("node-a", "node-b", "node-c"))
    assert a is not None and b is not None and c is not None
    assert a.requested == {"cpu": 1000, "memory": 2**30, "pods": 1}
    assert b.requested["cpu"] == 500  # another scheduler's pod still uses node-b
    assert c.requested == {"cpu": 0, "memory": 0, "pods": 0}
    assert [p.key for p in cache.pending_pods()] == ["default/pending"]
    assert {p.name for p in snapshot.pod_infos()} == {"running-a", "other-scheduler-b"}
    # the CEL `pods` list holds every pod: counted ones, then the pending ones
    assert [v["name"] for v in snapshot.pod_views()][-1] == "pending"
    assert {v["name"] for v in snapshot.pod_views()} == {"running-a", "other-scheduler-b",
                                                        "pending"}
    assert [v["name"] for v in snapshot.node_views()] == ["node-a", "node-b", "node-c"]
    assert snapshot.node("node-late") is None


def test_a_pod_on_an_unknown_node_is_counted_when_the_node_appears() -> None:
    cache = _loaded()
    assert cache.counted_node("default/early") == "node-late"
    cache.apply(_event("ADDED", make_node("node-late")))
    late = cache.snapshot().node("node-late")
    assert late is not None and late.requested["cpu"] == 100 and late.pod_count == 1
    assert [n.name for n in cache.snapshot().nodes][-1] == "node-late"


def test_deleting_a_node_keeps_its_pods() -> None:
    cache = _loaded()
    node_a = next(o for o in _objects() if o["metadata"]["name"] == "node-a")
    cache.apply(_event("DELETED", node_a))
    assert cache.snapshot().node("node-a") is None
    assert cache.pod("default/running-a") is not None
    assert cache.counted_node("default/running-a") == "node-a"
    assert "running-a" not in {v["name"] for v in cache.snapshot().pod_views()}
    cache.apply(_event("ADDED", node_a))
    again = cache.snapshot().node("node-a")
    assert again is not None and again.requested["cpu"] == 1000


def test_assume_counts_the_pod_before_the_bind_and_forget_undoes_it() -> None:
    cache = _loaded()
    pod = _pending(cache)
    assumed = cache.assume(pod, "node-c")
    assert assumed.node_name == "node-c" and assumed.view["nodeName"] == "node-c"
    assert cache.is_assumed(pod)
    node = cache.snapshot().node("node-c")
    assert node is not None and node.requested["cpu"] == 250 and node.pod_views == [assumed.view]
    assert cache.pending_pods() == []
    assert "pending" in {v["name"] for v in cache.snapshot().pod_views()}
    cache.forget(pod)
    node = cache.snapshot().node("node-c")
    assert node is not None and node.requested["cpu"] == 0 and node.pod_count == 0
    assert not cache.is_assumed(pod)
    assert [p.key for p in cache.pending_pods()] == ["default/pending"]


@pytest.mark.parametrize("finish_first", [True, False])
def test_the_bound_event_confirms_an_assumed_pod_without_double_counting(
    finish_first: bool,
) -> None:
    cache = _loaded()
    pod = _pending(cache)
    cache.assume(pod, "node-c")
    if finish_first:
        cache.finish_binding(pod)
        assert cache.binding_finished(pod)
    cache.apply(_event("MODIFIED", _bound(_pod_obj("pending"), "node-c")))
    if not finish_first:
        cache.finish_binding(pod)  # after the confirmation: nothing left to do
    assert not cache.is_assumed(pod) and not cache.binding_finished(pod)
    node = cache.snapshot().node("node-c")
    assert node is not None and node.requested["cpu"] == 250 and node.pod_count == 1
    assert node.pods["default/pending"] is cache.pod("default/pending")
    with pytest.raises(CacheError):
        cache.forget(pod)


def test_an_update_that_changes_nothing_counted_keeps_the_node_view() -> None:
    """The bind confirming an assumption and a status update of a bound pod (same spec)
    replace the pod in ``nodePods``, in its place, without touching the view: the node's
    generation changes, its view generation does not. A spec change counts anew."""
    cache = _loaded()
    pod = _pending(cache)
    cache.assume(pod, "node-c")
    [live] = [n for n in cache.nodes() if n.name == "node-c"]
    view, view_generation, generation = live.view, live.view_generation, live.generation
    requested = dict(live.requested)
    bound = _bound(_pod_obj("pending"), "node-c")
    cache.apply(_event("MODIFIED", bound))
    running = copy.deepcopy(bound)
    running["status"] = {"phase": "Running", "podIP": "10.0.0.9"}
    running["metadata"]["resourceVersion"] = "9"
    cache.apply(_event("MODIFIED", running))
    node = cache.snapshot().node("node-c")
    assert node is not None and node.generation != generation
    assert node.view_generation == view_generation and node.requested == requested
    assert live.view is view
    [counted] = node.pod_views
    assert counted["status"]["phase"] == "Running" and node.pods[pod.key] is cache.pod(pod.key)
    resized = copy.deepcopy(running)
    resized["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    cache.apply(_event("MODIFIED", resized))
    node = cache.snapshot().node("node-c")
    assert node is not None and node.view_generation != view_generation
    assert node.requested["cpu"] == 2000 and node.pod_count == 1


def test_a_pod_bound_elsewhere_than_assumed_moves() -> None:
    cache = _loaded()
    pod = _pending(cache)
    cache.assume(pod, "node-c")
    cache.apply(_event("MODIFIED", _bound(_pod_obj("pending"), "node-b")))
    snapshot = cache.snapshot()
    c, b = snapshot.node("node-c"), snapshot.node("node-b")
    assert c is not None and b is not None
    assert c.pod_count == 0 and b.pod_count == 2 and b.requested["cpu"] == 750


def test_an_update_of_an_assumed_pod_before_its_bind_keeps_it_assumed() -> None:
    cache = _loaded()
    pod = _pending(cache)
    cache.assume(pod, "node-c")
    patched = _pod_obj("pending")
    patched["metadata"]["labels"] = {"stamp": "yes"}
    cache.apply(_event("MODIFIED", patched))
    assert cache.is_assumed(pod)
    node = cache.snapshot().node("node-c")
    assert node is not None and node.pod_count == 1 and node.requested["cpu"] == 250
    assert node.pod_views[0]["labels"] == {"stamp": "yes"}
    assert node.pod_views[0]["nodeName"] == "node-c"
    current = cache.pod("default/pending")
    assert current is not None and current.node_name == ""  # the object itself is unbound


def test_deleting_an_assumed_pod_releases_its_node() -> None:
    cache = _loaded()
    pod = _pending(cache)
    cache.assume(pod, "node-c")
    change = cache.apply(_event("DELETED", _pod_obj("pending")))
    assert change.old_pod is pod and change.pod is None
    assert not cache.is_assumed(pod) and cache.pod("default/pending") is None
    node = cache.snapshot().node("node-c")
    assert node is not None and node.pod_count == 0


def test_assume_refuses_unknown_bound_and_assumed_pods() -> None:
    cache = _loaded()
    pod = _pending(cache)
    cache.assume(pod, "node-c")
    with pytest.raises(CacheError, match="already assumed"):
        cache.assume(pod, "node-a")
    running = cache.pod("default/running-a")
    assert running is not None
    with pytest.raises(CacheError, match="already assigned"):
        cache.assume(running, "node-c")
    from policysched.model.objects import pod_info

    with pytest.raises(CacheError, match="not in the cache"):
        cache.assume(pod_info(make_pod("ghost")), "node-c")
    with pytest.raises(CacheError, match="not assumed"):
        cache.forget(running)


def test_finished_pods_stop_using_their_node() -> None:
    cache = _loaded()
    done = _pod_obj("running-a")
    done["status"] = {"phase": "Succeeded"}
    cache.apply(_event("MODIFIED", done))
    node = cache.snapshot().node("node-a")
    assert node is not None and node.pod_count == 0 and node.requested["cpu"] == 0
    assert "default/running-a" not in {p.key for p in cache.pending_pods()}


def test_snapshot_is_cached_until_the_cache_changes() -> None:
    cache = _loaded()
    first = cache.snapshot()
    assert cache.snapshot() is first
    assert first.pod_views() is first.pod_views() and first.node_views() is first.node_views()
    old_c = first.node("node-c")
    assert old_c is not None
    cache.assume(_pending(cache), "node-c")
    second = cache.snapshot()
    assert second is not first
    assert second.node("node-a") is first.node("node-a")  # unchanged nodes are not copied
    assert second.node("node-c") is not old_c
    assert old_c.pod_count == 0 and old_c.requested["cpu"] == 0  # the old snapshot holds
    assert len(second.pod_infos()) == len(first.pod_infos()) + 1
    assert len(second.pod_views()) == len(first.pod_views())  # pending → assumed


def test_snapshot_nodes_are_copies_of_the_live_nodes() -> None:
    cache = _loaded()
    snapshot = cache.snapshot()
    live = cache.node("node-a")
    copy_a = snapshot.node("node-a")
    assert live is not None and copy_a is not None and live is not copy_a
    assert copy_a.view == live.view and copy_a.view["requested"] is not live.view["requested"]


def test_pod_groups_fill_the_pod_group_view_of_their_pods() -> None:
    cache = _loaded()
    labelled = _bound(_pod_obj("running-a"), "node-a")
    labelled["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "g"}
    cache.apply(_event("MODIFIED", labelled))
    pending = make_pod("member", labels={"scheduling.x-k8s.io/pod-group": "g"})
    cache.apply(_event("ADDED", pending))
    member = cache.pod("default/member")
    assert member is not None and member.view["podGroup"]["minMember"] == 0
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": "g", "namespace": "default"},
             "spec": {"minMember": 2, "scheduleTimeoutSeconds": 10}}
    cache.apply(_event("ADDED", group))
    assert cache.pod_groups()["default/g"].min_member == 2
    member = cache.pod("default/member")
    assert member is not None
    assert member.view["podGroup"] == {"name": "g", "minMember": 2, "scheduleTimeoutSeconds": 10}
    node = cache.snapshot().node("node-a")
    assert node is not None and node.pod_views[0]["podGroup"]["minMember"] == 2
    assert node.requested["cpu"] == 1000 and node.pod_count == 1
    cache.apply(_event("DELETED", group))
    assert cache.pod_group("default/g") is None
    member = cache.pod("default/member")
    assert member is not None and member.view["podGroup"]["minMember"] == 0


def test_a_malformed_object_is_refused_and_changes_nothing() -> None:
    cache = _loaded()
    generation = cache.generation
    bad = _pod_obj("running-a")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1.5.3Gi"
    with pytest.raises(ObjectError) as caught:
        cache.apply(_event("MODIFIED", bad))
    assert caught.value.field == "spec.containers[0].resources.requests.cpu"
    assert cache.generation == generation
    with pytest.raises(ObjectError):
        cache.apply(_event("MODIFIED", {"kind": "Node", "metadata": {"name": "node-a"},
                                        "spec": {"unschedulable": "no"}}))
    assert cache.generation == generation


def test_apply_reports_what_changed() -> None:
    cache = _loaded()
    before = cache.pod("default/pending")
    change = cache.apply(_event("MODIFIED", _bound(_pod_obj("pending"), "node-a")))
    assert change.old_pod is before and change.pod is cache.pod("default/pending")
    assert change.pod is not None and change.pod.node_name == "node-a"
    node_change = cache.apply(_event("MODIFIED", make_node("node-b", cpu="3")))
    assert node_change.node is cache.node("node-b")
    assert node_change.node is not None and node_change.node.free["cpu"] == 2500


def test_incremental_snapshots_always_match_the_live_cache() -> None:
    import random

    rng = random.Random(11)
    cache = Cache()
    for i in range(6):
        cache.apply(_event("ADDED", make_node(f"n{i}")))
    pods = [make_pod(f"p{i}", cpu=f"{100 * (i % 5 + 1)}m", host_port=8000 + i % 3)
            for i in range(30)]
    for pod in pods:
        cache.apply(_event("ADDED", pod))
    nodes = [f"n{i}" for i in range(8)]
    for _ in range(400):
        op = rng.random()
        obj = rng.choice(pods)
        key = f"default/{obj['metadata']['name']}"
        current = cache.pod(key)
        if op < 0.3 and current is not None and not current.node_name and not \
                cache.is_assumed(current):
            cache.assume(current, rng.choice(nodes))
        elif op < 0.4 and current is not None and cache.is_assumed(current):
            cache.forget(current)
        elif op < 0.55 and current is not None:
            cache.apply(_event("MODIFIED", _bound(obj, rng.choice(nodes))))
        elif op < 0.65:
            cache.apply(_event("DELETED", obj))
        elif op < 0.75 and current is None:
            cache.apply(_event("ADDED", obj))
        elif op < 0.85:
            cache.apply(_event("MODIFIED" if cache.node(name := rng.choice(nodes)) else "ADDED",
                               make_node(name, cpu=str(rng.randint(1, 8)))))
        elif op < 0.9:
            name = rng.choice(nodes)
            if cache.node(name):
                cache.apply(_event("DELETED", make_node(name)))
        snapshot = cache.snapshot()
        live = cache.nodes()
        assert [n.name for n in snapshot.nodes] == [n.name for n in live]
        for node in live:
            copied = snapshot.node(node.name)
            assert copied is not None and copied is not node
            assert copied.view == node.view and list(copied.pods) == list(node.pods)
        counted = {p.name for p in snapshot.pod_infos()}
        assert counted == {k.split("/")[1] for n in live for k in n.pods}


# --------------------------------------------------------------------------- namespaces, workloads


def test_namespaces_are_kept_with_their_labels() -> None:
    """namespace_labels: None for a namespace not known (kube's incoming-pod semantics),
    its labels otherwise; a change of labels renews the snapshot and its generation,
    anything else changes nothing."""
    cache = Cache()
    assert cache.namespace_labels("team-a") is None
    before = cache.snapshot()
    change = cache.apply(_event("ADDED", make_namespace("team-a", team="a")))
    assert change.changed and cache.namespace_labels("team-a") == {"team": "a"}
    after = cache.snapshot()
    assert after is not before
    assert after.namespace_generation > before.namespace_generation
    assert after.namespace_labels("team-a") == {"team": "a"}
    assert before.namespace_labels("team-a") is None  # a snapshot keeps what it saw
    annotated = make_namespace("team-a", team="a")
    annotated["metadata"]["annotations"] = {"owner": "x"}
    assert not cache.apply(_event("MODIFIED", annotated)).changed
    assert cache.snapshot() is after
    relabelled = make_namespace("team-a", team="b")
    assert cache.apply(_event("MODIFIED", relabelled)).changed
    assert cache.snapshot().namespace_labels("team-a") == {"team": "b"}
    assert cache.apply(_event("DELETED", relabelled)).changed
    assert cache.namespace_labels("team-a") is None
    assert cache.snapshot().namespace_generation == after.namespace_generation + 2


def test_an_added_namespace_without_labels_is_known() -> None:
    cache = Cache()
    assert cache.apply(_event("ADDED", make_namespace("plain"))).changed
    assert cache.namespace_labels("plain") == {}


def test_workloads_make_the_default_selector_of_their_namespaces_pods() -> None:
    cache = Cache()
    pod_obj = controlled_by(make_pod("web-1", namespace="shop",
                                     labels={"app": "web", "tier": "front"}), "ReplicaSet",
                            "web")
    cache.apply(_event("ADDED", pod_obj))
    pod = cache.pod("shop/web-1")
    assert pod is not None
    assert cache.default_selector(pod) is None
    service = make_service("front", {"tier": "front"}, namespace="shop")
    replica_set = make_controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}},
                                  namespace="shop")
    for obj in (service, replica_set,
                make_service("elsewhere", {"app": "web"}, namespace="other"),
                make_controller("ReplicaSet", "web", {"matchLabels": {"x": "y"}},
                                namespace="other")):
        assert cache.apply(_event("ADDED", obj)).changed
    want = {"matchLabels": {"tier": "front"},
            "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}
    assert cache.default_selector(pod) == want
    snapshot = cache.snapshot()
    assert snapshot.default_selector(pod) == want
    # a status update changes nothing; the snapshot stays
    replica_set["status"] = {"replicas": 3}
    assert not cache.apply(_event("MODIFIED", replica_set)).changed
    assert cache.snapshot() is snapshot
    # a selector changed or a workload deleted: a new snapshot, the old one unchanged
    assert cache.apply(_event("DELETED", service)).changed
    assert cache.default_selector(pod) == {"matchLabels": {}, "matchExpressions": want[
        "matchExpressions"]}
    assert snapshot.default_selector(pod) == want
    assert cache.snapshot() is not snapshot
    assert cache.apply(_event("DELETED", replica_set)).changed
    assert cache.default_selector(pod) is None
    assert not cache.apply(_event("DELETED", replica_set)).changed  # already gone


def test_a_malformed_workload_is_refused_and_changes_nothing() -> None:
    cache = Cache()
    good = make_service("s", {"app": "web"})
    cache.apply(_event("ADDED", good))
    with pytest.raises(ObjectError):
        cache.apply(_event("MODIFIED", make_service("s", {"app": "-bad-"})))
    pod = _pod_info_of(cache, make_pod("p", labels={"app": "web"}))
    assert cache.default_selector(pod) == {"matchLabels": {"app": "web"},
                                           "matchExpressions": []}


def _pod_info_of(cache: Cache, obj: dict[str, Any]) -> PodInfo:
    cache.apply(_event("ADDED", obj))
    pod = cache.pod(f"{obj['metadata']['namespace']}/{obj['metadata']['name']}")
    assert pod is not None
    return pod


def test_pods_of_a_pod_group_are_counted_in_any_phase() -> None:
    """``group_members``: what Coscheduling counts as siblings (every labelled pod)."""
    group = "scheduling.x-k8s.io/pod-group"
    cache = Cache()
    pods = [make_pod(f"p{i}", labels={group: "g"}) for i in range(3)]
    for p in pods:
        cache.apply(_event("ADDED", p))
    cache.apply(_event("ADDED", make_pod("other-ns", namespace="x", labels={group: "g"})))
    assert cache.snapshot().group_members("default/g") == 3
    bound = copy.deepcopy(pods[0])
    bound["spec"]["nodeName"] = "n1"
    bound["status"] = {"phase": "Succeeded"}
    cache.apply(_event("MODIFIED", bound))  # still a member when finished
    moved = copy.deepcopy(pods[1])
    moved["metadata"]["labels"] = {group: "h"}
    cache.apply(_event("MODIFIED", moved))
    cache.apply(_event("DELETED", pods[2]))
    snapshot = cache.snapshot()
    assert (snapshot.group_members("default/g"), snapshot.group_members("default/h"),
            snapshot.group_members("x/g")) == (1, 1, 1)


# --------------------------------------------------------------------------- budgets


def _budget(name: str, allowed: int, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "shop"},
            "spec": {"selector": {"matchLabels": labels}},
            "status": {"disruptionsAllowed": allowed}}


def test_disruption_budgets_are_kept_for_preemption() -> None:
    """A snapshot has the budgets of its moment; a change of what preemption reads of one
    renews the snapshot, anything else changes nothing; a malformed one is refused."""
    cache = Cache()
    budget = _budget("web", 1, app="web")
    assert cache.apply(_event("ADDED", budget)).changed
    before = cache.snapshot()
    assert [(b.key, b.disruptions_allowed) for b in before.disruption_budgets] == [
        ("shop/web", 1)]
    budget["status"]["currentHealthy"] = 3
    assert not cache.apply(_event("MODIFIED", budget)).changed
    assert cache.snapshot() is before
    budget["status"]["disruptionsAllowed"] = 0
    assert cache.apply(_event("MODIFIED", budget)).changed
    assert [b.disruptions_allowed for b in cache.snapshot().disruption_budgets] == [0]
    assert [b.disruptions_allowed for b in before.disruption_budgets] == [1]
    with pytest.raises(ObjectError):
        cache.apply(_event("ADDED", {**_budget("bad", 0), "spec": {"selector": 1}}))
    assert cache.apply(_event("DELETED", budget)).changed
    assert cache.snapshot().disruption_budgets == ()
