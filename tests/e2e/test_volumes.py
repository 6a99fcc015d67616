"""The real PersistentVolume controller (kube-controller-manager's persistentvolume-binder,
started by ``cluster.sh start-controller-manager``) on the local control plane: what it
does by itself and what it leaves to the scheduler's VolumeBinding plugin.

* Immediate binding: a static PV and a matching PVC are bound by the controller alone.
* WaitForFirstConsumer: the controller never binds an unbound static PV — not before a
  pod uses the claim, not after, and not when the claim carries
  ``volume.kubernetes.io/selected-node`` (that annotation asks a provisioner for a new
  volume; the PV controller passes no node to its matcher, so delayed claims only match
  PVs already bound to them). It completes the binding once the PV's ``claimRef`` names
  the claim: what kube-scheduler's VolumeBinding preBind writes for a static PV
  (``GetBindVolumeToClaim``), and what policysched's preBind must write.

No scheduler runs here: pods name a scheduler that does not exist, so they stay Pending.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from . import support

pytestmark = pytest.mark.e2e

BIND_TIMEOUT = 30.0  # seconds for the controller to react to a new or changed object
SELECTED_NODE = "volume.kubernetes.io/selected-node"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
NO_PROVISIONER = "kubernetes.io/no-provisioner"  # kube's marker for static-only classes


@pytest.fixture
def storage(controller_manager: support.Cluster, namespace: str) -> Iterator[Any]:
    """The core API of a cluster running the PV controller. The StorageClasses and PVs
    created in the test's namespace are deleted after, their protection finalizers dropped
    first (no protection controller runs to release them)."""
    from kubernetes import client

    core: Any = client.CoreV1Api(controller_manager.api)
    storage_api: Any = client.StorageV1Api(controller_manager.api)
    try:
        yield core
    finally:
        for pvc in core.list_namespaced_persistent_volume_claim(namespace).items:
            with contextlib.suppress(Exception):
                core.patch_namespaced_persistent_volume_claim(
                    pvc.metadata.name, namespace, {"metadata": {"finalizers": None}})
                core.delete_namespaced_persistent_volume_claim(pvc.metadata.name, namespace)
        for pv in core.list_persistent_volume(label_selector=f"e2e-namespace={namespace}").items:
            with contextlib.suppress(Exception):
                core.patch_persistent_volume(pv.metadata.name, {"metadata": {"finalizers": None}})
                core.delete_persistent_volume(pv.metadata.name)
        for sc in storage_api.list_storage_class(
                label_selector=f"e2e-namespace={namespace}").items:
            with contextlib.suppress(Exception):
                storage_api.delete_storage_class(sc.metadata.name)


def storage_class(name: str, namespace: str, binding_mode: str) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name, "labels": {"e2e-namespace": namespace}},
            "provisioner": NO_PROVISIONER, "volumeBindingMode": binding_mode}


def persistent_volume(name: str, namespace: str, *, storage_class_name: str,
                      node: str | None = None, size: str = "1Gi") -> dict[str, Any]:
    """A static local-style PV (hostPath), pinned to ``node`` when given."""
    spec: dict[str, Any] = {
        "capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Retain", "storageClassName": storage_class_name,
        "hostPath": {"path": f"/tmp/{name}"}}
    if node is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {"e2e-namespace": namespace}}, "spec": spec}


def claim(name: str, namespace: str, *, storage_class_name: str,
          size: str = "1Gi") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class_name,
                     "resources": {"requests": {"storage": size}}}}


def pod_with_claim(name: str, namespace: str, claim_name: str) -> dict[str, Any]:
    """A pod using ``claim_name``, for a scheduler that does not exist (stays Pending)."""
    document = support.pod(name, scheduler_name="no-such-scheduler")
    document["metadata"]["namespace"] = namespace
    document["spec"]["volumes"] = [{"name": "data",
                                    "persistentVolumeClaim": {"claimName": claim_name}}]
    return document


def wait_for_claim(core: Any, namespace: str, name: str,
                   predicate: Callable[[Any], bool], what: str) -> Any:
    return support.wait_for(core.list_namespaced_persistent_volume_claim, namespace,
                            predicate=predicate, timeout=BIND_TIMEOUT,
                            what=f"PVC {namespace}/{name}: {what}",
                            field_selector=f"metadata.name={name}")


def wait_for_volume(core: Any, name: str, predicate: Callable[[Any], bool],
                    what: str) -> Any:
    return support.wait_for(core.list_persistent_volume, predicate=predicate,
                            timeout=BIND_TIMEOUT, what=f"PV {name}: {what}",
                            field_selector=f"metadata.name={name}")


def claim_event(core: Any, namespace: str, name: str, reason: str) -> Any:
    """The first Event the PV controller records on claim ``name`` with ``reason``."""
    return support.wait_for_event(
        core, namespace,
        lambda e: (e.involved_object.kind == "PersistentVolumeClaim"
                   and e.involved_object.name == name and e.reason == reason),
        BIND_TIMEOUT, f"a {reason} event on PVC {namespace}/{name}")


def is_bound_to(volume: str) -> Callable[[Any], bool]:
    return lambda pvc: pvc.status.phase == "Bound" and pvc.spec.volume_name == volume


def test_immediate_claims_are_bound_by_the_controller(storage: Any, namespace: str,
                                                      admin_api: Any) -> None:
    core = storage
    pv_name = support.unique(f"{namespace}-pv")
    support.create(admin_api, persistent_volume(pv_name, namespace, storage_class_name=""))
    support.create(admin_api, claim("data", namespace, storage_class_name=""))

    wait_for_claim(core, namespace, "data", is_bound_to(pv_name), f"Bound to {pv_name}")
    pv = wait_for_volume(core, pv_name, lambda v: v.status.phase == "Bound", "Bound")
    assert (pv.spec.claim_ref.namespace, pv.spec.claim_ref.name) == (namespace, "data")
    assert pv.metadata.annotations[BOUND_BY_CONTROLLER] == "yes"


def test_delayed_claims_wait_for_the_scheduler_to_name_the_volume(
        storage: Any, namespace: str, admin_api: Any) -> None:
    core = storage
    class_name = support.unique(f"{namespace}-wffc")
    pv_name = support.unique(f"{namespace}-pv")
    node = core.list_node(label_selector="type=kwok").items[0].metadata.name
    support.create(admin_api, storage_class(class_name, namespace, "WaitForFirstConsumer"))
    support.create(admin_api, persistent_volume(pv_name, namespace,
                                                storage_class_name=class_name, node=node))
    support.create(admin_api, claim("data", namespace, storage_class_name=class_name))

    # No pod yet: the controller looks at the claim and waits (kube's event text).
    event = claim_event(core, namespace, "data", "WaitForFirstConsumer")
    assert event.message == "waiting for first consumer to be created before binding"

    # A pod uses the claim but no scheduler binds it: still Pending.
    support.create(admin_api, pod_with_claim("consumer", namespace, "data"))
    # The scheduler's selected-node annotation (for provisioning) does not make the
    # controller take the matching static PV: the claim stays Pending, the PV unclaimed,
    # and the controller turns to provisioning, which the no-provisioner class cannot do
    # (it keeps the annotation: only a failing provisioner operation removes it).
    core.patch_namespaced_persistent_volume_claim(
        "data", namespace, {"metadata": {"annotations": {SELECTED_NODE: node}}})
    event = claim_event(core, namespace, "data", "ProvisioningFailed")
    assert event.message == f"no volume plugin matched name: {NO_PROVISIONER}"
    pvc = core.read_namespaced_persistent_volume_claim("data", namespace)
    assert pvc.status.phase == "Pending" and not pvc.spec.volume_name
    pv = core.read_persistent_volume(pv_name)
    assert pv.status.phase == "Available" and pv.spec.claim_ref is None

    # What kube-scheduler's preBind writes for a static PV (GetBindVolumeToClaim): the
    # PV's claimRef to the claim, marked bound-by-controller. The controller completes it.
    core.patch_persistent_volume(pv_name, {
        "metadata": {"annotations": {BOUND_BY_CONTROLLER: "yes"}},
        "spec": {"claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "namespace": namespace, "name": "data",
                              "uid": pvc.metadata.uid,
                              "resourceVersion": pvc.metadata.resource_version}}})
    wait_for_claim(core, namespace, "data", is_bound_to(pv_name), f"Bound to {pv_name}")
    wait_for_volume(core, pv_name, lambda v: v.status.phase == "Bound", "Bound")
