"""The cache's storage objects (policysched.cache.cache with policysched.model.volumes):
claims, volumes, classes, CSINodes and CSIDrivers from events, the pods' volume views, and
each node's count of unique CSI volumes (NodeVolumeLimits'), kept up to date."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from policysched.cache import Cache, ObjectError
from policysched.model.events import ClusterEvent

from .objects_builder import make_node, make_pod


def _apply(cache: Cache, kind: Any, obj: dict[str, Any]) -> bool:
    return cache.apply(ClusterEvent(kind, obj["kind"], copy.deepcopy(obj))).changed


def claim(name: str, volume: str = "", storage_class: str = "csi") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": storage_class, "volumeName": volume,
                     "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound" if volume else "Pending"}}


def volume(name: str, handle: str, driver: str = "d") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"],
                     "csi": {"driver": driver, "volumeHandle": handle}}}


STORAGE_CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                 "metadata": {"name": "csi"}, "provisioner": "d",
                 "volumeBindingMode": "WaitForFirstConsumer"}


def pod_with(name: str, *claims: str, node: str | None = "n1") -> dict[str, Any]:
    return make_pod(name, node=node, volumes=[
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
        for i, c in enumerate(claims)])


def test_each_kind_is_added_updated_and_deleted() -> None:
    cache = Cache()
    objects = [claim("data"), volume("pv1", "h1"), STORAGE_CLASS,
               {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
                "spec": {"drivers": [{"name": "d", "nodeID": "n1", "allocatable": {"count": 3}}]}},
               {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d"},
                "spec": {"attachRequired": False}}]
    for obj in objects:
        assert _apply(cache, "ADDED", obj)
        assert not _apply(cache, "MODIFIED", obj)  # nothing the scheduler reads changed
    storage = cache.snapshot().storage
    assert storage.claims["default/data"].storage_class == "csi"
    assert storage.volumes["pv1"].volume_handle == "h1"
    assert storage.classes["csi"].binding_mode == "WaitForFirstConsumer"
    assert dict(storage.csi_nodes["n1"].limits) == {"d": 3}
    assert storage.csi_drivers["d"].attach_required is False
    assert _apply(cache, "MODIFIED", claim("data", "pv1"))
    assert cache.snapshot().storage.claims["default/data"].volume_name == "pv1"
    assert storage.claims["default/data"].volume_name == ""  # an old snapshot keeps its own
    for obj in objects:
        assert _apply(cache, "DELETED", obj)
        assert not _apply(cache, "DELETED", obj)
    assert cache.snapshot().storage.claims == {}


def test_a_malformed_object_is_refused_and_changes_nothing() -> None:
    cache = Cache()
    generation = cache.generation
    with pytest.raises(ObjectError, match="provisioner"):
        _apply(cache, "ADDED", {**STORAGE_CLASS, "provisioner": None})
    assert cache.generation == generation and cache.snapshot().storage.classes == {}


def test_a_pod_with_a_malformed_volume_is_refused_and_changes_nothing() -> None:
    cache = Cache()
    with pytest.raises(ObjectError) as caught:
        _apply(cache, "ADDED", make_pod("p", volumes=[{"name": "v", "persistentVolumeClaim": {}}]))
    assert caught.value.field == "spec.volumes[0].persistentVolumeClaim.claimName"
    assert cache.pod("default/p") is None


def test_a_claim_binding_updates_the_pods_volume_views() -> None:
    cache = Cache()
    for obj in (make_node("n1"), STORAGE_CLASS, volume("pv1", "h1"), claim("data"),
                pod_with("web", "data", node=None), make_pod("plain")):
        _apply(cache, "ADDED", obj)
    pod = cache.pod("default/web")
    plain = cache.pod("default/plain")
    assert pod is not None and plain is not None
    [view] = cache.snapshot().volume_views(pod)
    assert (view["claimName"], view["claim"]["phase"], view["persistentVolume"]["name"],
            view["storageClass"]["volumeBindingMode"]) == (
        "data", "Pending", "", "WaitForFirstConsumer")
    assert cache.snapshot().volume_views(plain) == []
    _apply(cache, "MODIFIED", claim("data", "pv1"))
    [view] = cache.snapshot().volume_views(pod)
    assert (view["claim"]["volumeName"], view["persistentVolume"]["capacity"],
            view["persistentVolume"]["volumeHandle"]) == ("pv1", 2 << 30, "h1")


def test_nodes_count_unique_csi_volumes_of_their_pods() -> None:
    """As NodeVolumeLimits: a volume two pods share counts once; an unbound claim counts
    under its class's provisioner; a binding, a deletion or a pod leaving recounts."""
    cache = Cache()
    for obj in (make_node("n1"), STORAGE_CLASS, volume("pv1", "h1"), volume("pv2", "h2"),
                claim("a", "pv1"), claim("b", "pv1"), claim("c"),
                pod_with("p1", "a"), pod_with("p2", "b", "c")):
        _apply(cache, "ADDED", obj)

    def counted() -> tuple[dict[str, int], list[str]]:
        node = cache.snapshot().node("n1")
        assert node is not None
        return node.attached_csi_volumes(), sorted(node.csi_volumes)

    assert counted() == ({"d": 2}, ["d/-default/c", "d/h1"])
    _apply(cache, "MODIFIED", claim("c", "pv2"))  # bound: its volume's handle now
    assert counted() == ({"d": 2}, ["d/h1", "d/h2"])
    _apply(cache, "DELETED", make_pod("p2", node="n1"))
    assert counted() == ({"d": 1}, ["d/h1"])
    _apply(cache, "DELETED", claim("a", "pv1"))  # a claim not known is not counted
    assert counted() == ({}, [])
    before = cache.snapshot().node("n1")
    _apply(cache, "ADDED", claim("a", "pv1"))
    assert counted() == ({"d": 1}, ["d/h1"])
    assert before is not None and before.attached_csi_volumes() == {}  # snapshots keep theirs


def test_a_pod_placed_before_its_node_counts_its_volumes_when_the_node_appears() -> None:
    cache = Cache()
    for obj in (volume("pv1", "h1"), claim("a", "pv1"), pod_with("p1", "a"), make_node("n1")):
        _apply(cache, "ADDED", obj)
    node = cache.snapshot().node("n1")
    assert node is not None and node.attached_csi_volumes() == {"d": 1}


def test_a_nodes_csi_volume_limits_come_from_its_csinode() -> None:
    """node.csiVolumeLimits: its CSINode's drivers' allocatable counts, whichever of the
    two arrives first; gone with the CSINode. node.attachedCSIVolumes counts per driver."""
    csi_node = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
                "spec": {"drivers": [{"name": "d", "nodeID": "n1", "allocatable": {"count": 2}}]}}
    cache = Cache()
    _apply(cache, "ADDED", csi_node)
    _apply(cache, "ADDED", make_node("n1"))

    def view() -> dict[str, Any]:
        node = cache.snapshot().node("n1")
        assert node is not None
        return node.view

    assert (view()["csiVolumeLimits"], view()["attachedCSIVolumes"]) == ({"d": 2}, {})
    _apply(cache, "MODIFIED", {**csi_node, "spec": {"drivers": [
        {"name": "d", "nodeID": "n1", "allocatable": {"count": 5}}]}})
    assert view()["csiVolumeLimits"] == {"d": 5}
    for obj in (volume("pv1", "h1"), claim("a", "pv1"), pod_with("p1", "a")):
        _apply(cache, "ADDED", obj)
    assert view()["attachedCSIVolumes"] == {"d": 1}
    _apply(cache, "MODIFIED", make_node("n1", cpu="8"))  # the Node object changed: kept
    assert (view()["csiVolumeLimits"], view()["attachedCSIVolumes"]) == ({"d": 5}, {"d": 1})
    _apply(cache, "DELETED", csi_node)
    assert view()["csiVolumeLimits"] == {}


def test_claim_users_are_indexed_across_nodes() -> None:
    """claim.usedOnNodes: the nodes whose pods reference the claim (kube's PVCRefCounts
    summed over the nodes), kept as pods come, move and go, and as nodes come and go."""
    cache = Cache()
    for obj in (make_node("n1"), make_node("n2"), claim("a"), claim("b"),
                pod_with("pending", "a", "b", node=None)):
        _apply(cache, "ADDED", obj)

    def used_on() -> dict[str, list[str]]:
        snapshot = cache.snapshot()
        pending = cache.pod("default/pending")
        assert pending is not None
        return {v["claimName"]: v["claim"]["usedOnNodes"]
                for v in snapshot.volume_views(pending)}

    assert used_on() == {"a": [], "b": []}
    _apply(cache, "ADDED", pod_with("p1", "a", node="n2"))
    _apply(cache, "ADDED", pod_with("p2", "a", "a", node="n1"))
    assert used_on() == {"a": ["n1", "n2"], "b": []}
    n1 = cache.snapshot().node("n1")
    assert n1 is not None and n1.view["usedClaims"] == {"default/a": 2}
    _apply(cache, "DELETED", pod_with("p1", "a", node="n2"))
    assert used_on() == {"a": ["n1"], "b": []}
    _apply(cache, "DELETED", make_node("n1"))  # its pods wait for it: not on a node
    assert used_on() == {"a": [], "b": []}
    _apply(cache, "ADDED", make_node("n1"))
    assert used_on() == {"a": ["n1"], "b": []}
    # an assumed pod counts until it is forgotten
    pending = cache.pod("default/pending")
    assert pending is not None
    cache.assume(pending, "n2")
    assert used_on() == {"a": ["n1", "n2"], "b": ["n2"]}
    cache.forget(pending)
    assert used_on() == {"a": ["n1"], "b": []}


def test_nodes_list_their_pods_inline_disks_once() -> None:
    disk = {"name": "d", "gcePersistentDisk": {"pdName": "disk-1"}}
    cache = Cache()
    for obj in (make_node("n1"), make_pod("p1", node="n1", volumes=[disk]),
                make_pod("p2", node="n1", volumes=[disk])):
        _apply(cache, "ADDED", obj)

    def used() -> list[dict[str, Any]]:
        node = cache.snapshot().node("n1")
        assert node is not None
        return node.view["usedDisks"]

    assert used() == [{"kind": "gcePersistentDisk", "id": "disk-1", "readOnly": False,
                       "monitors": []}]
    _apply(cache, "DELETED", make_pod("p1", node="n1"))
    assert len(used()) == 1
    _apply(cache, "DELETED", make_pod("p2", node="n1"))
    assert used() == []


def test_a_copy_counts_again_what_a_pod_removed_from_it_used() -> None:
    """Preemption removes victims from a copy and adds the reprieved back as PodInfos:
    their CSI volumes, disks and claims count again."""
    cache = Cache()
    for obj in (make_node("n1"), volume("pv1", "h1"), claim("a", "pv1"),
                make_pod("p1", node="n1", volumes=[
                    {"name": "c", "persistentVolumeClaim": {"claimName": "a"}},
                    {"name": "d", "awsElasticBlockStore": {"volumeID": "v"}}])):
        _apply(cache, "ADDED", obj)
    node = cache.snapshot().node("n1")
    assert node is not None
    before = {k: copy.deepcopy(node.view[k])
              for k in ("attachedCSIVolumes", "csiVolumes", "usedDisks", "usedClaims")}
    copy_ = node.clone()
    victim = copy_.pods["default/p1"]
    copy_.remove_pod(victim)
    assert (copy_.view["attachedCSIVolumes"], copy_.view["csiVolumes"],
            copy_.view["usedDisks"], copy_.view["usedClaims"]) == ({}, {}, [], {})
    copy_.add_pod(victim)
    assert {k: copy_.view[k] for k in before} == before
    assert {k: node.view[k] for k in before} == before  # the snapshot's node is untouched
