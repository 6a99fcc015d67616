"""A live cluster read into the objects of a cluster file (``cluster_file``), for
``policysched snapshot``: what the scheduler reads and nothing else.

Every kind a cluster file holds is listed through the one client (``transport``), in pages
(``kube.list_objects``): Namespaces, PriorityClasses, Nodes, the workloads
kube-scheduler's DefaultSelector reads (Services, ReplicationControllers, ReplicaSets,
StatefulSets), PodDisruptionBudgets, the storage objects (PersistentVolumeClaims,
PersistentVolumes, StorageClasses, CSINodes, CSIDrivers), PodGroups when the
``scheduling.x-k8s.io/v1alpha1`` API is served (a cluster without the CRD has none: not an
error) and Pods — bound, pending and finished, as ``KubeBackend``'s informers see them.
Each kind is one consistent list; the kinds are listed one after the other, so a change
between two lists can show (a pod bound to a node listed before it was created).

Each object keeps only what scheduling reads (``trimmed``): its metadata without
``managedFields``, ``resourceVersion`` and the like (and without kubectl's
last-applied-configuration annotation); a pod's scheduling fields and, of its containers,
the name, image, resources, ports and restartPolicy; a node's taints and
``unschedulable``, its allocatable, capacity and images; the workloads' selectors;
what preemption reads of a budget; a pod's volumes that refer to claims, CSI drivers or
disks, and what the volume plugins read of the storage objects. A PriorityClass that pods
name but that was deleted after they were created is written with their priority
(``deleted_priority_classes``), so that the file reads. The objects come sorted by kind
(the order of ``KINDS``), then namespace and name, so two snapshots of the same cluster are
the same file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..model.disruption_budgets import API_VERSION as BUDGET_API_VERSION
from ..model.disruption_budgets import POD_DISRUPTION_BUDGET
from ..model.objects import DISRUPTION_TARGET
from ..model.volumes import (
    CSI_DRIVER,
    CSI_NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
)
from ..model.workloads import (
    NAMESPACE,
    REPLICA_SET,
    REPLICATION_CONTROLLER,
    SERVICE,
    STATEFUL_SET,
)
from .cluster_file import API_VERSIONS
from .kube import LIST_PAGE_SIZE, PODGROUP_API, list_objects
from .memory import NODE, POD, POD_GROUP, PRIORITY_CLASS, SYSTEM_PRIORITY_CLASSES
from .transport import ApiError, Transport


@dataclass(frozen=True)
class ListedKind:
    """One kind a snapshot lists: its collection path, whether it is namespaced, and
    whether a 404 means "not served here" (a CRD that is not installed)."""

    kind: str
    path: str
    namespaced: bool
    optional: bool = False


KINDS = (
    ListedKind(NAMESPACE, "/api/v1/namespaces", namespaced=False),
    ListedKind(PRIORITY_CLASS, "/apis/scheduling.k8s.io/v1/priorityclasses", namespaced=False),
    ListedKind(NODE, "/api/v1/nodes", namespaced=False),
    ListedKind(SERVICE, "/api/v1/services", namespaced=True),
    ListedKind(REPLICATION_CONTROLLER, "/api/v1/replicationcontrollers", namespaced=True),
    ListedKind(REPLICA_SET, "/apis/apps/v1/replicasets", namespaced=True),
    ListedKind(STATEFUL_SET, "/apis/apps/v1/statefulsets", namespaced=True),
    ListedKind(POD_DISRUPTION_BUDGET, f"/apis/{BUDGET_API_VERSION}/poddisruptionbudgets",
               namespaced=True),
    ListedKind(PERSISTENT_VOLUME_CLAIM, "/api/v1/persistentvolumeclaims", namespaced=True),
    ListedKind(PERSISTENT_VOLUME, "/api/v1/persistentvolumes", namespaced=False),
    ListedKind(STORAGE_CLASS, "/apis/storage.k8s.io/v1/storageclasses", namespaced=False),
    ListedKind(CSI_NODE, "/apis/storage.k8s.io/v1/csinodes", namespaced=False),
    ListedKind(CSI_DRIVER, "/apis/storage.k8s.io/v1/csidrivers", namespaced=False),
    ListedKind(POD_GROUP, f"{PODGROUP_API}/podgroups", namespaced=True, optional=True),
    ListedKind(POD, "/api/v1/pods", namespaced=True),
)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_METADATA_KEYS = ("name", "namespace", "uid", "labels", "annotations", "creationTimestamp",
                  "deletionTimestamp", "ownerReferences")
_OWNER_KEYS = ("apiVersion", "kind", "name", "uid", "controller")
_POD_SPEC_KEYS = ("nodeName", "schedulerName", "priority", "priorityClassName",
                  "preemptionPolicy", "nodeSelector", "affinity", "tolerations",
                  "topologySpreadConstraints", "schedulingGates", "overhead", "resources",
                  "hostNetwork", "containers", "initContainers", "volumes")
_CONTAINER_KEYS = ("name", "image", "resources", "ports", "restartPolicy")
_PORT_KEYS = ("containerPort", "hostPort", "hostIP", "protocol")
_POD_STATUS_KEYS = ("phase", "nominatedNodeName", "startTime")
_CONDITION_KEYS = ("type", "status", "reason")
_NODE_SPEC_KEYS = ("unschedulable", "taints")
_NODE_STATUS_KEYS = ("allocatable", "capacity", "images")
_PRIORITY_CLASS_KEYS = ("value", "globalDefault", "preemptionPolicy")
_BUDGET_SPEC_KEYS = ("selector", "minAvailable", "maxUnavailable")
_BUDGET_STATUS_KEYS = ("disruptionsAllowed", "disruptedPods")
# a pod's volumes the volume plugins read: claims, CSI volumes, the disks VolumeRestrictions
# checks (others — configMaps, secrets, projected tokens — are dropped)
_VOLUME_SOURCES = ("persistentVolumeClaim", "ephemeral", "csi", "gcePersistentDisk",
                   "awsElasticBlockStore", "rbd", "iscsi")
_CLAIM_SPEC_KEYS = ("storageClassName", "accessModes", "resources", "volumeName", "selector",
                    "volumeMode")
_VOLUME_SPEC_KEYS = ("capacity", "accessModes", "storageClassName", "csi", "claimRef",
                     "nodeAffinity", "volumeMode", *_VOLUME_SOURCES[3:])
_CSI_SOURCE_KEYS = ("driver", "volumeHandle", "readOnly", "fsType")
_CLAIM_REF_KEYS = ("namespace", "name", "uid")
_STORAGE_CLASS_KEYS = ("provisioner", "volumeBindingMode", "allowedTopologies")


@dataclass(frozen=True)
class ListProgress:
    """Where a snapshot is: ``count`` objects of ``kind`` listed so far, more pages to
    come; or, ``done``, all of them."""

    kind: str
    count: int
    done: bool


ProgressCallback = Callable[[ListProgress], None]


def snapshot(transport: Transport, on_progress: ProgressCallback | None = None,
             page_size: int = LIST_PAGE_SIZE) -> list[dict[str, Any]]:
    """The cluster's objects, trimmed and sorted (see the module docstring). Raises
    ``ApiError`` (a kind that cannot be listed, other than an absent optional one)."""
    listed: dict[str, list[dict[str, Any]]] = {}
    for kind in KINDS:
        def page(count: int, name: str = kind.kind) -> None:
            if on_progress is not None:
                on_progress(ListProgress(name, count, False))

        try:
            items, _ = list_objects(transport, kind.path, on_page=page, page_size=page_size)
        except ApiError as e:
            if not (kind.optional and e.status == 404):
                raise
            items = []
        listed[kind.kind] = [trimmed(kind.kind, item) for item in items]
        if on_progress is not None:
            on_progress(ListProgress(kind.kind, len(items), True))
    listed[PRIORITY_CLASS] += deleted_priority_classes(listed[PRIORITY_CLASS], listed[POD])
    return [obj for kind in KINDS for obj in sorted(listed[kind.kind], key=_namespaced_name)]


def deleted_priority_classes(classes: list[dict[str, Any]], pods: list[dict[str, Any]]
                             ) -> list[dict[str, Any]]:
    """A PriorityClass for each class that pods name but that no longer exists (deleted
    after they were created: they keep the priority it gave them), with the priority of
    the first such pod, so that the cluster file resolves their class as the API server
    did."""
    known = {c["metadata"]["name"] for c in classes} | set(SYSTEM_PRIORITY_CLASSES)
    made: dict[str, dict[str, Any]] = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        name = spec.get("priorityClassName")
        if name and name not in known and name not in made:
            made[name] = {"apiVersion": API_VERSIONS[PRIORITY_CLASS], "kind": PRIORITY_CLASS,
                          "metadata": {"name": name}, "value": int(spec.get("priority") or 0)}
    return list(made.values())


def _namespaced_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return (str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))


def trimmed(kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` (of ``kind``, as the API server returns it) with only what scheduling reads,
    with its ``apiVersion`` and ``kind``."""
    out: dict[str, Any] = {"apiVersion": API_VERSIONS[kind], "kind": kind,
                           "metadata": _metadata(obj.get("metadata") or {})}
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if kind == POD:
        out["spec"] = _pod_spec(spec)
        out["status"] = _pod_status(status)
    elif kind == NODE:
        out["spec"] = _pick(spec, _NODE_SPEC_KEYS)
        out["status"] = _pick(status, _NODE_STATUS_KEYS)
    elif kind == PRIORITY_CLASS:
        out.update(_pick(obj, _PRIORITY_CLASS_KEYS))
    elif kind in (SERVICE, REPLICA_SET, STATEFUL_SET):
        out["spec"] = _pick(spec, ("selector",))
    elif kind == REPLICATION_CONTROLLER:
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
        out["spec"] = _pick(spec, ("selector",))
        if labels:
            out["spec"]["template"] = {"metadata": {"labels": labels}}
    elif kind == POD_DISRUPTION_BUDGET:
        out["spec"] = _pick(spec, _BUDGET_SPEC_KEYS)
        out["status"] = _pick(status, _BUDGET_STATUS_KEYS)
    elif kind == POD_GROUP:
        out["spec"] = dict(spec)
    elif kind == PERSISTENT_VOLUME_CLAIM:
        out["spec"] = _pick(spec, _CLAIM_SPEC_KEYS)
        out["status"] = _pick(status, ("phase",))
    elif kind == PERSISTENT_VOLUME:
        out["spec"] = _volume_spec(spec)
        out["status"] = _pick(status, ("phase",))
    elif kind == STORAGE_CLASS:
        out.update(_pick(obj, _STORAGE_CLASS_KEYS))
    elif kind in (CSI_NODE, CSI_DRIVER):
        out["spec"] = dict(spec)
    return {k: v for k, v in out.items() if v != {}}


def _pick(obj: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The ``keys`` of ``obj`` that are set (not None, not empty)."""
    return {k: obj[k] for k in keys if obj.get(k) not in (None, "", [], {})}


def _metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out = _pick(metadata, _METADATA_KEYS)
    annotations = {k: v for k, v in (out.get("annotations") or {}).items() if k != LAST_APPLIED}
    if annotations:
        out["annotations"] = annotations
    else:
        out.pop("annotations", None)
    if "ownerReferences" in out:
        out["ownerReferences"] = [_pick(r, _OWNER_KEYS) for r in out["ownerReferences"]]
    return out


def _pod_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    out = _pick(spec, _POD_SPEC_KEYS)
    for key in ("containers", "initContainers"):
        if key in out:
            out[key] = [_container(c) for c in out[key]]
    volumes = [v for v in out.pop("volumes", ()) if any(k in v for k in _VOLUME_SOURCES)]
    if volumes:
        out["volumes"] = volumes
    return out


def _volume_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    out = _pick(spec, _VOLUME_SPEC_KEYS)
    if "csi" in out:
        out["csi"] = _pick(out["csi"], _CSI_SOURCE_KEYS)
    if "claimRef" in out:
        out["claimRef"] = _pick(out["claimRef"], _CLAIM_REF_KEYS)
    return out


def _container(container: Mapping[str, Any]) -> dict[str, Any]:
    out = _pick(container, _CONTAINER_KEYS)
    if "ports" in out:
        out["ports"] = [_pick(p, _PORT_KEYS) for p in out["ports"]]
    return out


def _pod_status(status: Mapping[str, Any]) -> dict[str, Any]:
    out = _pick(status, _POD_STATUS_KEYS)
    # only preemption's mark is read (a pod it is evicting)
    conditions = [_pick(c, _CONDITION_KEYS) for c in status.get("conditions") or ()
                  if c.get("type") == DISRUPTION_TARGET]
    if conditions:
        out["conditions"] = conditions
    return out
