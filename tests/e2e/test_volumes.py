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

In the first tests no scheduler runs: pods name a scheduler that does not exist, so they
stay Pending. The last ones are scheduled by policysched (the built-in profile's
volume-binding policy): a static volume pulls its pod to its zone, two pods racing for one
volume never both bind, a claim to provision gets the chosen node's selected-node
annotation.
"""

from __future__ import annotations

import contextlib
import time
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


# ------------------------------------------------------------------ with policysched scheduling
# The built-in profile's volume-binding policy (VolumeBinding) schedules the pods below:
# its reserve assumes the bindings, its preBind writes them (claimRef / selected-node) and
# waits for the controller to complete them before the pod is bound.

NO_VOLUME = "node(s) didn't find available persistent volumes to bind"
ZONE = "topology.kubernetes.io/zone"


def zonal_volume(name: str, namespace: str, class_name: str, zone: str) -> dict[str, Any]:
    document = persistent_volume(name, namespace, storage_class_name=class_name)
    document["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}}
    return document


def scheduled_pod(name: str, namespace: str, claim_name: str) -> dict[str, Any]:
    document = pod_with_claim(name, namespace, claim_name)
    document["spec"]["schedulerName"] = support.SCHEDULER_NAME
    return document


def kwok_nodes(core: Any) -> list[Any]:
    return sorted(core.list_node(label_selector="type=kwok").items,
                  key=lambda n: n.metadata.name)


def bound_pod(core: Any, namespace: str, name: str) -> Any:
    return support.wait_for_pod(core, namespace, name, support.is_bound, BIND_TIMEOUT,
                                "bound to a node")


def test_a_static_volume_pulls_its_pod_to_its_zone(
        scheduler: support.SchedulerProcess, storage: Any, namespace: str,
        admin_api: Any) -> None:
    core = storage
    target = kwok_nodes(core)[-1]
    zone = target.metadata.labels[ZONE]
    class_name = support.unique(f"{namespace}-wffc")
    pv_name = support.unique(f"{namespace}-pv")
    support.create(admin_api, storage_class(class_name, namespace, "WaitForFirstConsumer"))
    support.create(admin_api, zonal_volume(pv_name, namespace, class_name, zone))
    support.create(admin_api, claim("data", namespace, storage_class_name=class_name))
    support.create(admin_api, scheduled_pod("db", namespace, "data"))

    placed = bound_pod(core, namespace, "db")
    assert placed.spec.node_name == target.metadata.name
    # preBind wrote the claimRef; the controller completed the binding before the bind
    pvc = core.read_namespaced_persistent_volume_claim("data", namespace)
    assert pvc.spec.volume_name == pv_name and pvc.status.phase == "Bound"
    assert "pv.kubernetes.io/bind-completed" in pvc.metadata.annotations
    pv = core.read_persistent_volume(pv_name)
    assert pv.spec.claim_ref.uid == pvc.metadata.uid
    assert pv.metadata.annotations[BOUND_BY_CONTROLLER] == "yes"


def test_two_pods_racing_for_one_volume_never_both_bind(
        scheduler: support.SchedulerProcess, storage: Any, namespace: str,
        admin_api: Any) -> None:
    core = storage
    zone = kwok_nodes(core)[0].metadata.labels[ZONE]
    class_name = support.unique(f"{namespace}-wffc")
    pv_name = support.unique(f"{namespace}-pv")
    support.create(admin_api, storage_class(class_name, namespace, "WaitForFirstConsumer"))
    support.create(admin_api, zonal_volume(pv_name, namespace, class_name, zone))
    for name in ("a", "b"):
        support.create(admin_api, claim(f"data-{name}", namespace, storage_class_name=class_name))
    for name in ("a", "b"):  # one burst: the second is queued while the first binds
        support.create(admin_api, scheduled_pod(f"db-{name}", namespace, f"data-{name}"))

    def settled(pod: Any) -> bool:
        return support.is_bound(pod) or support.unschedulable_with(NO_VOLUME)(pod)

    outcomes = {name: support.wait_for_pod(core, namespace, f"db-{name}", settled,
                                           BIND_TIMEOUT, "bound or rejected")
                for name in ("a", "b")}
    bound = [name for name, pod in outcomes.items() if support.is_bound(pod)]
    assert len(bound) == 1, outcomes
    loser = "b" if bound == ["a"] else "a"
    time.sleep(2)  # no late second bind
    assert not core.read_namespaced_pod(f"db-{loser}", namespace).spec.node_name
    pv = core.read_persistent_volume(pv_name)
    assert pv.spec.claim_ref.name == f"data-{bound[0]}"
    pending = core.read_namespaced_persistent_volume_claim(f"data-{loser}", namespace)
    assert pending.status.phase == "Pending" and not pending.spec.volume_name


def test_a_claim_to_provision_gets_the_chosen_node(
        scheduler: support.SchedulerProcess, storage: Any, namespace: str,
        admin_api: Any) -> None:
    """A WaitForFirstConsumer claim of a class with a provisioner: preBind annotates it with
    the chosen node; this test then acts as that provisioner (a PV on the node, bound to
    the claim), the controller binds the claim, and the pod is bound to the node."""
    core = storage
    class_name = support.unique(f"{namespace}-dynamic")
    document = storage_class(class_name, namespace, "WaitForFirstConsumer")
    document["provisioner"] = "e2e.policysched.io/provisioner"
    support.create(admin_api, document)
    support.create(admin_api, claim("data", namespace, storage_class_name=class_name))
    support.create(admin_api, scheduled_pod("app", namespace, "data"))

    pvc = wait_for_claim(
        core, namespace, "data",
        lambda c: bool((c.metadata.annotations or {}).get(SELECTED_NODE)), "a selected node")
    node = pvc.metadata.annotations[SELECTED_NODE]
    assert node in {n.metadata.name for n in kwok_nodes(core)}
    assert not core.read_namespaced_pod("app", namespace).spec.node_name  # preBind waits

    pv_name = support.unique(f"{namespace}-pv")
    provisioned = persistent_volume(pv_name, namespace, storage_class_name=class_name,
                                    node=node)
    provisioned["spec"]["claimRef"] = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace,
        "name": "data", "uid": pvc.metadata.uid}
    support.create(admin_api, provisioned)

    placed = bound_pod(core, namespace, "app")
    assert placed.spec.node_name == node
    bound_claim = core.read_namespaced_persistent_volume_claim("data", namespace)
    assert bound_claim.spec.volume_name == pv_name
