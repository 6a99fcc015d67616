"""The storage objects (policysched.model.volumes): Kubernetes' defaults, the fields the
volume plugins read, errors naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.model.objects import ObjectError
from policysched.model.volumes import (
    Disk,
    claim_info,
    csi_driver_info,
    csi_node_info,
    csi_volume,
    pod_volumes,
    storage_class_info,
    volume_info,
    volume_topology,
)


def pvc(spec: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "ns", **metadata}, "spec": spec}


def pv(spec: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv1", **metadata}, "spec": spec}


def test_claim_defaults_and_fields() -> None:
    claim = claim_info(pvc({"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                            "resources": {"requests": {"storage": "1Gi"}}}))
    assert (claim.key, claim.storage_class, claim.access_modes, claim.requested_storage,
            claim.volume_name, claim.phase, claim.selected_node, claim.volume_mode,
            claim.selector) == ("ns/data", "fast", ("ReadWriteOnce",), 1 << 30, "", "Pending",
                                "", "Filesystem", None)
    bound = claim_info({**pvc({"volumeName": "pv1", "storageClassName": "fast"},
                              annotations={
                                  "volume.beta.kubernetes.io/storage-class": "old",
                                  "volume.kubernetes.io/selected-node": "n1"}),
                        "status": {"phase": "Bound"}})
    # the beta annotation wins over spec.storageClassName (GetPersistentVolumeClaimClass)
    assert (bound.storage_class, bound.volume_name, bound.phase, bound.selected_node) == (
        "old", "pv1", "Bound", "n1")


def test_volume_fields() -> None:
    volume = volume_info(pv({
        "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOncePod"],
        "storageClassName": "fast", "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
        "claimRef": {"namespace": "ns", "name": "data"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}}},
        labels={"topology.kubernetes.io/zone": "a"}))
    assert (volume.capacity, volume.access_modes, volume.csi_driver, volume.volume_handle,
            volume.claim, volume.phase, dict(volume.labels)) == (
        10 << 30, ("ReadWriteOncePod",), "ebs.csi.aws.com", "vol-1", "ns/data", "Pending",
        {"topology.kubernetes.io/zone": "a"})
    assert volume.node_affinity is not None
    assert volume.node_affinity.matches({"topology.kubernetes.io/zone": "a"}, "n1")
    assert not volume.node_affinity.matches({"topology.kubernetes.io/zone": "b"}, "n1")
    assert volume_info(pv({})).node_affinity is None


def test_storage_class_defaults_and_topologies() -> None:
    plain = storage_class_info({"kind": "StorageClass", "metadata": {"name": "std"},
                                "provisioner": "csi.example.com"})
    assert (plain.binding_mode, plain.allowed_topologies) == ("Immediate", ())
    assert plain.allows({})
    zoned = storage_class_info({
        "kind": "StorageClass", "metadata": {"name": "zoned"}, "provisioner": "p",
        "volumeBindingMode": "WaitForFirstConsumer", "allowedTopologies": [
            {"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}]})
    assert zoned.binding_mode == "WaitForFirstConsumer"
    assert zoned.allows({"zone": "b"}) and not zoned.allows({"zone": "c"})
    assert not zoned.allows({})


def test_csi_node_limits_and_driver_default() -> None:
    node = csi_node_info({"kind": "CSINode", "metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": "a", "nodeID": "n1", "allocatable": {"count": 2}},
        {"name": "b", "nodeID": "n1"}]}})
    assert dict(node.limits) == {"a": 2}  # a driver without a count has no limit
    assert csi_driver_info({"metadata": {"name": "a"}}).attach_required is True
    assert csi_driver_info({"metadata": {"name": "a"},
                            "spec": {"attachRequired": False}}).attach_required is False


def test_pod_volumes() -> None:
    pod = {"metadata": {"name": "web-0"}, "spec": {"volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0", "readOnly": True}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
        {"name": "inline", "csi": {"driver": "d"}},
        {"name": "cfg", "configMap": {"name": "c"}}]}}
    found = [(v.name, v.claim, v.read_only, v.ephemeral, v.csi_driver) for v in pod_volumes(pod)]
    assert found == [("data", "data-web-0", True, False, ""),
                     ("scratch", "web-0-scratch", False, True, ""),
                     ("inline", "", False, False, "d")]
    assert pod_volumes({"metadata": {"name": "p"}, "spec": {}}) == ()


def test_inline_disks_are_what_volume_restrictions_compares() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"volumes": [
        {"name": "g", "gcePersistentDisk": {"pdName": "disk-1", "readOnly": True}},
        {"name": "a", "awsElasticBlockStore": {"volumeID": "vol-1"}},
        {"name": "i", "iscsi": {"targetPortal": "t:3260", "iqn": "iqn.x", "lun": 0}},
        {"name": "r", "rbd": {"monitors": ["m1", "m2"], "image": "img"}},
        {"name": "r2", "rbd": {"monitors": [], "pool": "p", "image": "img"}}]}}
    found = [(v.name, v.claim, v.read_only, v.disk) for v in pod_volumes(pod)]
    assert found == [
        ("g", "", True, Disk("gcePersistentDisk", "disk-1", True)),
        ("a", "", False, Disk("awsElasticBlockStore", "vol-1", False)),
        ("i", "", False, Disk("iscsi", "iqn.x", False)),
        ("r", "", False, Disk("rbd", "rbd/img", False, ("m1", "m2"))),  # the API's pool
        ("r2", "", False, Disk("rbd", "p/img", False))]
    assert Disk("rbd", "rbd/img", False, ("m1",)).view() == {
        "kind": "rbd", "id": "rbd/img", "readOnly": False, "monitors": ["m1"]}


@pytest.mark.parametrize(("labels", "topology"), [
    ({"topology.kubernetes.io/zone": "a"}, {"topology.kubernetes.io/zone": ["a"]}),
    ({"topology.kubernetes.io/zone": "b__a__b", "failure-domain.beta.kubernetes.io/region": "r",
      "other": "x"},
     {"topology.kubernetes.io/zone": ["a", "b"],
      "failure-domain.beta.kubernetes.io/region": ["r"]}),
    ({"topology.kubernetes.io/zone": "a__"}, {}),  # LabelZonesToSet fails: ignored
    ({"topology.kubernetes.io/region": ""}, {}),
    ({}, {}),
])
def test_volume_topology_is_volume_zones_zone_sets(labels: dict[str, str],
                                                   topology: dict[str, list[str]]) -> None:
    assert volume_topology(labels) == topology


def test_csi_volume_counts_bound_volume_or_provisioner() -> None:
    """As NodeVolumeLimits' getCSIDriverInfo: the bound CSI volume's handle; the class's
    provisioner while unbound; nothing for a non-CSI volume or a claim without class."""
    volumes = {"pv1": volume_info(pv({"csi": {"driver": "d", "volumeHandle": "h"}})),
               "nfs": volume_info(pv({"nfs": {"server": "s", "path": "/"}}, name="nfs"))}
    classes = {"fast": storage_class_info({"metadata": {"name": "fast"}, "provisioner": "p"})}
    assert csi_volume(claim_info(pvc({"volumeName": "pv1"})), volumes, classes) == ("d", "d/h")
    assert csi_volume(claim_info(pvc({"volumeName": "nfs"})), volumes, classes) is None
    assert csi_volume(claim_info(pvc({"storageClassName": "fast"})), volumes, classes) == (
        "p", "p/-ns/data")
    assert csi_volume(claim_info(pvc({})), volumes, classes) is None


@pytest.mark.parametrize(("obj", "parse", "field"), [
    (pvc({"accessModes": ["ReadWriteSometimes"]}), claim_info, "spec.accessModes[0]"),
    (pvc({"resources": {"requests": {"storage": "lots"}}}), claim_info,
     "spec.resources.requests.storage"),
    (pvc({"selector": {"matchLabels": {"a": "b c"}}}), claim_info, "spec.selector"),
    (pvc({"volumeMode": "Raw"}), claim_info, "spec.volumeMode"),
    ({"kind": "PersistentVolumeClaim", "metadata": {}}, claim_info, "metadata.name"),
    (pv({"csi": {"driver": "d"}}), volume_info, "spec.csi.volumeHandle"),
    (pv({"capacity": {"storage": "-1"}}), volume_info, "spec.capacity.storage"),
    ({"metadata": {"name": "s"}}, storage_class_info, "provisioner"),
    ({"metadata": {"name": "s"}, "provisioner": "p", "volumeBindingMode": "Later"},
     storage_class_info, "volumeBindingMode"),
    ({"metadata": {"name": "s"}, "provisioner": "p", "allowedTopologies": [
        {"matchLabelExpressions": [{"key": "z", "values": [1]}]}]},
     storage_class_info, "allowedTopologies[0].matchLabelExpressions[0].values[0]"),
    ({"metadata": {"name": "n"}, "spec": {"drivers": [{"name": "a", "allocatable": {
        "count": "2"}}]}}, csi_node_info, "spec.drivers[0].allocatable.count"),
    ({"metadata": {"name": "d"}, "spec": {"attachRequired": "yes"}}, csi_driver_info,
     "spec.attachRequired"),
])
def test_malformed_objects_name_the_field(obj: dict[str, Any], parse: Any, field: str) -> None:
    with pytest.raises(ObjectError) as e:
        parse(obj)
    assert e.value.field == field
