"""kube's volume binder on storage objects (policysched.model.volume_binding)."""

from __future__ import annotations

from typing import Any

from policysched.model.volume_binding import find_pod_volumes
from policysched.model.volumes import (
    PodVolume,
    StorageObjects,
    claim_info,
    storage_class_info,
    volume_info,
)

ZONE = "topology.kubernetes.io/zone"
WAIT = "WaitForFirstConsumer"


def claim(name: str, size: str = "1Gi", cls: str = "local", **extra: Any) -> dict[str, Any]:
    annotations = extra.pop("annotations", {})
    return {"kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                         "annotations": annotations},
            "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": size}}, **extra}}


def volume(name: str, size: str = "1Gi", zone: str | None = "a", cls: str = "local",
           phase: str = "Available", **spec: Any) -> dict[str, Any]:
    affinity = {} if zone is None else {"nodeAffinity": {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}}}
    return {"kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                     "capacity": {"storage": size}, **affinity, **spec},
            "status": {"phase": phase}}


def storage(claims: list[dict[str, Any]], volumes: list[dict[str, Any]],
            classes: tuple[dict[str, Any], ...] = ()) -> StorageObjects:
    classes = classes or (
        {"metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner",
         "volumeBindingMode": WAIT},)
    cs = [claim_info(c) for c in claims]
    vs = [volume_info(v) for v in volumes]
    return StorageObjects({c.key: c for c in cs}, {v.name: v for v in vs},
                          {s.name: s for s in map(storage_class_info, classes)}, {}, {})


def find(objects: StorageObjects, *names: str, zone: str = "a", node: str = "n1"):
    return find_pod_volumes(objects, "ns", tuple(PodVolume(n, n) for n in names), node,
                            {ZONE: zone})


def test_each_claim_takes_the_smallest_matching_volume_once() -> None:
    objects = storage([claim("big", "5Gi"), claim("small", "1Gi")],
                      [volume("pv-10", "10Gi"), volume("pv-5", "5Gi"), volume("pv-2", "2Gi"),
                       volume("pv-b", "1Gi", zone="b")])
    found = find(objects, "big", "small")
    # smallest request first: small takes pv-2 (pv-b is in another zone), big pv-5
    assert [(c.name, v.name) for c, v in found.static] == [("small", "pv-2"), ("big", "pv-5")]
    assert found.unmatched == () and found.provisions == ()
    assert find(objects, "big", "small", zone="b").unmatched == ("big",)


def test_unavailable_claimed_or_mismatched_volumes_are_not_taken() -> None:
    objects = storage([claim("data")], [
        volume("released", phase="Released"),
        volume("taken", claimRef={"namespace": "ns", "name": "other"}),
        volume("block", volumeMode="Block"),
        volume("rwx", accessModes=["ReadWriteMany"])])
    assert find(objects, "data").unmatched == ("data",)


def test_a_pre_bound_volume_wins_and_its_affinity_decides() -> None:
    ref = {"namespace": "ns", "name": "data", "uid": "uid-data"}
    objects = storage([claim("data")], [volume("any", zone=None),
                                        volume("mine", "9Gi", claimRef=ref, phase="Pending")])
    assert [v.name for _, v in find(objects, "data").static] == ["mine"]
    assert find(objects, "data", zone="b").unmatched == ("data",)


def test_provisioning_needs_a_provisioner_whose_topology_admits_the_node() -> None:
    dynamic = {"metadata": {"name": "local"}, "provisioner": "csi.example.com",
               "volumeBindingMode": WAIT, "allowedTopologies": [
                   {"matchLabelExpressions": [{"key": ZONE, "values": ["a"]}]}]}
    objects = storage([claim("data")], [], (dynamic,))
    assert [c.name for c in find(objects, "data").provisions] == ["data"]
    assert find(objects, "data", zone="b").unmatched == ("data",)


def test_a_claim_selected_for_another_node_fails_the_node() -> None:
    selected = claim("data", annotations={"volume.kubernetes.io/selected-node": "n2"})
    objects = storage([selected], [volume("pv")])
    assert find(objects, "data").unmatched == ("data",)


def test_bound_claims_check_their_volume() -> None:
    done = {"pv.kubernetes.io/bind-completed": "yes"}
    objects = storage([claim("data", volumeName="pv", annotations=done),
                       claim("lost", volumeName="gone", annotations=done)], [volume("pv")])
    assert find(objects, "data").bound_conflict is False
    assert find(objects, "data", zone="b").bound_conflict is True
    found = find(objects, "lost", "data", zone="b")  # the first bound claim decides
    assert (found.missing_volumes, found.bound_conflict) == (True, False)


def test_class_utilization_sums_per_class() -> None:
    objects = storage([claim("a", "1Gi"), claim("b", "2Gi")],
                      [volume("pv-a", "4Gi"), volume("pv-b", "4Gi")])
    assert find(objects, "a", "b").class_utilization() == {"local": 37}
