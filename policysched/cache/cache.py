"""The cluster cache: nodes and pods as the backend's events describe them, plus the pods
the scheduler has assumed onto nodes before their bind returned, pod groups, namespaces'
labels, the workloads that select pods (Services, ReplicationControllers, ReplicaSets,
StatefulSets: ``model.workloads``), PodDisruptionBudgets (``model.disruption_budgets``) and
the storage objects (claims, volumes, classes, CSINodes, CSIDrivers: ``model.volumes``); and
the per-cycle ``Snapshot`` the framework reads.

Rules (those of kube-scheduler's cache):

* every pod that has a node counts toward that node's usage, whatever its schedulerName,
  except pods that have finished (phase Succeeded or Failed);
* an assumed pod counts on its node from ``assume`` until ``forget`` or until the event
  of the bound pod arrives, which replaces the assumed copy (never counting twice);
* a pod whose node does not exist (yet) is kept and counted when the node appears;
  deleting a node keeps its pods;
* a node counts the unique CSI volumes of its pods per driver (NodeVolumeLimits' count:
  ``StorageObjects.attached_csi_volumes``), kept up to date as pods are placed and as the
  claims, volumes and classes they use change. Only pods with volumes cost anything;
* which nodes' pods use each claim through a ``persistentVolumeClaim`` volume (kube's
  NodeInfo.PVCRefCounts over all nodes, VolumeRestrictions' ReadWriteOncePod check) is an
  index brought up to date at each snapshot from the nodes that changed.

Not thread-safe: the engine applies events and takes snapshots from one thread.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from ..model import messages as model_messages
from ..model.disruption_budgets import (
    POD_DISRUPTION_BUDGET,
    DisruptionBudget,
    disruption_budget,
)
from ..model.events import ClusterEvent
from ..model.objects import (
    PodGroupSpec,
    PodInfo,
    object_name,
    pod_group_spec,
    pod_info,
    pod_key,
)
from ..model.volume_binding import VolumeAssumption, VolumeBinder
from ..model.volumes import (
    CSI_DRIVER,
    CSI_NODE,
    NO_STORAGE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
    STORAGE_PARSERS,
    VOLUME_KINDS,
    PodVolume,
    StorageObjects,
    pod_volumes,
)
from ..model.workloads import (
    NAMESPACE,
    WORKLOAD_KINDS,
    Workload,
    WorkloadKey,
    default_selector,
    namespace_info,
    workload,
)
from . import messages
from .node_info import NodeInfo


class CacheError(Exception):
    """An assumption the cache cannot make or undo (a bug in the caller)."""


@dataclass(frozen=True)
class CacheChange:
    """What one applied event changed: the pod (or node) after it, None once deleted, and
    the pod before it; ``changed`` is False when the event changed nothing the engine
    reads (a ReplicaSet's status, a Namespace's annotations)."""

    event: ClusterEvent
    pod: PodInfo | None = None
    old_pod: PodInfo | None = None
    node: NodeInfo | None = None
    changed: bool = True


NamespaceLabels = Mapping[str, Mapping[str, str]]  # namespace name -> its labels
Workloads = Mapping[str, Mapping[WorkloadKey, Workload]]  # namespace -> its workloads


def _no_namespace(name: str) -> Mapping[str, str] | None:
    return None


def _no_selector(pod: PodInfo) -> dict[str, Any] | None:
    return None


def _no_members(group_key: str) -> int:
    return 0


def _no_volumes(pod_key: str) -> tuple[PodVolume, ...]:
    return ()


_COUNTED = frozenset({PERSISTENT_VOLUME_CLAIM, PERSISTENT_VOLUME, STORAGE_CLASS})  # CSI counts


def _volumes_of(pod_volumes: Mapping[str, tuple[PodVolume, ...]], pod_key: str
                ) -> tuple[PodVolume, ...]:
    return pod_volumes.get(pod_key, ())


def _no_claim_nodes(claim_key: str) -> tuple[str, ...]:
    return ()


def _nodes_using(index: Mapping[str, tuple[str, ...]], claim_key: str) -> tuple[str, ...]:
    return index.get(claim_key, ())




def _default_selector(workloads: Workloads, pod: PodInfo) -> dict[str, Any] | None:
    """kube-scheduler's DefaultSelector of ``pod`` (``model.workloads.default_selector``)
    among ``workloads``."""
    found = workloads.get(pod.namespace)
    if not found:
        return None
    return default_selector(pod.view["labels"], pod.view["ownerReferences"], found)


@dataclass(eq=False)
class Snapshot:
    """The cluster for one scheduling cycle. ``nodes`` are copies in a stable order
    (insertion order of the nodes); treat them as read-only and ``clone()`` one to simulate
    changes. The cluster-wide lists are built on first use. ``namespace_labels`` and
    ``default_selector`` read the namespaces and workloads of the moment it was taken."""

    generation: int
    nodes: list[NodeInfo]
    index: Mapping[str, int] = field(default_factory=dict, repr=False)  # name -> position
    pending: Callable[[], list[PodInfo]] = field(default=list, repr=False)
    affinity_views: list[dict[str, Any]] = field(default_factory=list, repr=False)
    # each node's generation, in ``nodes`` order (the node table compares them)
    generations: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64),
                                    repr=False)
    # a namespace's labels (None: not known), and a count that changes when any do
    namespace_labels: Callable[[str], Mapping[str, str] | None] = field(
        default=_no_namespace, repr=False)
    namespace_generation: int = 0
    # kube-scheduler's DefaultSelector of a pod: model.workloads.default_selector
    default_selector: Callable[[PodInfo], dict[str, Any] | None] = field(
        default=_no_selector, repr=False)
    # the pods of the cluster (any phase) labelled with a pod group ("namespace/name")
    group_members: Callable[[str], int] = field(default=_no_members, repr=False)
    disruption_budgets: tuple[DisruptionBudget, ...] = field(default=(), repr=False)
    storage: StorageObjects = field(default=NO_STORAGE, repr=False)
    # the volumes of a pod ("namespace/name") that refer to claims or CSI drivers
    pod_volumes: Callable[[str], tuple[PodVolume, ...]] = field(default=_no_volumes,
                                                                 repr=False)
    # the nodes (sorted) whose pods use a claim ("namespace/name") through a
    # persistentVolumeClaim volume
    claim_nodes: Callable[[str], tuple[str, ...]] = field(default=_no_claim_nodes,
                                                          repr=False)
    _pod_infos: list[PodInfo] | None = field(default=None, init=False, repr=False)
    _pod_views: list[dict[str, Any]] | None = field(default=None, init=False, repr=False)
    _node_views: list[dict[str, Any]] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.index and self.nodes:
            self.index = {n.name: i for i, n in enumerate(self.nodes)}
        if len(self.generations) != len(self.nodes):
            self.generations = np.fromiter((n.generation for n in self.nodes), np.int64,
                                           len(self.nodes))

    def node(self, name: str) -> NodeInfo | None:
        i = self.index.get(name)
        return None if i is None else self.nodes[i]

    def pod_infos(self) -> list[PodInfo]:
        """Every pod counted on a node (bound or assumed), node by node."""
        if self._pod_infos is None:
            self._pod_infos = [p for n in self.nodes for p in n.pods.values()]
        return self._pod_infos

    def pod_views(self) -> list[dict[str, Any]]:
        """The CEL ``pods`` list: every pod of the cluster — those counted on a node (bound
        or assumed) node by node, then the pending ones (``nodeName`` "")."""
        if self._pod_views is None:
            self._pod_views = [v for n in self.nodes for v in n.pod_views]
            self._pod_views += [p.view for p in self.pending()]
        return self._pod_views

    def pods_with_affinity_views(self) -> list[dict[str, Any]]:
        """The CEL ``podsWithAffinity`` list: pods counted on a node with pod (anti-)affinity
        terms, in the order they were placed."""
        return self.affinity_views

    def volume_views(self, pod: PodInfo) -> list[dict[str, Any]]:
        """The pod's volumes with their claims, bound PersistentVolumes and classes
        (``StorageObjects.volume_views``); [] for a pod without any."""
        volumes = self.pod_volumes(pod.key)
        if not volumes:
            return []
        return self.storage.volume_views(pod.namespace, volumes, self.claim_nodes)

    def volume_binder(self, pod: PodInfo) -> VolumeBinder:
        """The CEL ``volumeBinder`` of ``pod``: kube's volume binder on this snapshot's
        storage objects, bindings assumed by reserve included."""
        return VolumeBinder(self.storage, pod.namespace, self.pod_volumes(pod.key))

    def node_views(self) -> list[dict[str, Any]]:
        """The CEL ``nodes`` list."""
        if self._node_views is None:
            self._node_views = [n.view for n in self.nodes]
        return self._node_views


def has_pod_affinity(view: Mapping[str, Any]) -> bool:
    """Whether the pod (its CEL view) has pod affinity or anti-affinity terms."""
    affinity = view.get("affinity")
    return isinstance(affinity, dict) and (
        "podAffinity" in affinity or "podAntiAffinity" in affinity)


class Cache:
    """Nodes (in insertion order), every known pod, assumed pods, pod groups."""

    def __init__(self) -> None:
        self.generation = 0  # changes whenever a snapshot would differ
        self._nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, PodInfo] = {}  # the latest object of every pod
        self._placement: dict[str, str] = {}  # pod key -> node it is counted on
        self._orphans: dict[str, dict[str, PodInfo]] = {}  # missing node -> its pods
        self._assumed: dict[str, str] = {}  # pod key -> node
        self._binding_finished: set[str] = set()
        self._pod_groups: dict[str, PodGroupSpec] = {}
        self._snapshot: Snapshot | None = None
        self._dirty: set[str] = set()  # nodes changed since the last snapshot
        self._restructured = False  # nodes added or deleted since the last snapshot
        self._with_affinity: dict[str, PodInfo] = {}  # placed pods with pod (anti-)affinity
        self._affinity_views: list[dict[str, Any]] | None = []  # their views (None: stale)
        # replaced, never changed in place, so that a snapshot keeps what it was given
        self._namespaces: NamespaceLabels = {}
        self.namespace_generation = 0  # changes whenever a namespace's labels do
        self._workloads: Workloads = {}
        self._group_members: Counter[str] = Counter()  # pod group key -> its pods
        self._budgets: dict[str, DisruptionBudget] = {}  # "namespace/name" -> budget
        self._storage: dict[str, dict[str, Any]] = {kind: {} for kind in VOLUME_KINDS}
        self._storage_view: StorageObjects | None = NO_STORAGE  # None: stale
        self._pod_volumes: dict[str, tuple[PodVolume, ...]] = {}  # pods with volumes only
        self._recount = False  # claims, volumes or classes changed since the last recount
        # claim key -> the nodes whose pods use it (sorted; replaced, never changed in
        # place), and each node's usedClaims as last indexed
        self._claim_nodes: dict[str, tuple[str, ...]] = {}
        self._indexed_claims: dict[str, dict[str, int]] = {}
        # volume bindings reserve assumed (kube's assume cache): each pod's, and the
        # overlays they put on the storage objects until the informer delivers them
        self._volume_assumptions: dict[str, list[VolumeAssumption]] = {}
        self._assumed_volumes: dict[str, tuple[str, str]] = {}  # volume -> (claim key, pod)
        self._assumed_claims: dict[str, tuple[str, str]] = {}  # claim key -> (node, pod)

    # ------------------------------------------------------------------ events

    def apply(self, event: ClusterEvent) -> CacheChange:
        """Apply one backend event; raises ``ObjectError`` for a malformed object (the
        cache is then unchanged)."""
        if event.resource == "Pod":
            return self._apply_pod(event)
        if event.resource == "Node":
            return self._apply_node(event)
        if event.resource == "PodGroup":
            key = pod_key(event.obj)
            if event.kind == "DELETED":
                self._pod_groups.pop(key, None)
            else:
                self._pod_groups[key] = pod_group_spec(event.obj)
            self._refresh_group(key)
            return CacheChange(event)
        if event.resource == NAMESPACE:
            return self._apply_namespace(event)
        if event.resource in WORKLOAD_KINDS:
            return self._apply_workload(event)
        if event.resource == POD_DISRUPTION_BUDGET:
            return self._apply_budget(event)
        if event.resource in STORAGE_PARSERS:
            return self._apply_storage(event)
        raise CacheError(
            messages.UNSUPPORTED_EVENT.format(kind=event.kind, resource=event.resource)
        )

    def _apply_pod(self, event: ClusterEvent) -> CacheChange:
        if event.kind == "DELETED":
            key = pod_key(event.obj)
            old = self._pods.pop(key, None)
            self._count_member(old, None)
            self._pod_volumes.pop(key, None)
            self._assumed.pop(key, None)
            self._binding_finished.discard(key)
            self._unplace(key)
            self._changed()  # the cluster-wide `pods` list changed even if no node did
            return CacheChange(event, old_pod=old)
        key = pod_key(event.obj)
        old = self._pods.get(key)
        pod = pod_info(event.obj, self._pod_groups, old)
        if old is None or pod.spec_parts is not old.spec_parts:  # else the same volumes
            volumes = pod_volumes(event.obj)  # (may raise: before any change)
            if volumes:
                self._pod_volumes[key] = volumes
            else:
                self._pod_volumes.pop(key, None)
        self._pods[key] = pod
        self._count_member(old, pod)
        assumed_node = self._assumed.get(key)
        if assumed_node is not None and not pod.node_name and not pod.terminated:
            self._place(pod.with_node(assumed_node), assumed_node)  # still assumed
            return CacheChange(event, pod=pod, old_pod=old)
        if assumed_node is not None:  # the bind is confirmed (or the pod finished)
            del self._assumed[key]
            self._binding_finished.discard(key)
        if pod.node_name and not pod.terminated:
            if not self._replace(pod, pod.node_name):
                self._place(pod, pod.node_name)
        else:
            self._unplace(key)
            self._changed()  # a pending pod is in the cluster-wide `pods` list too
        return CacheChange(event, pod=pod, old_pod=old)

    def _apply_node(self, event: ClusterEvent) -> CacheChange:
        if event.kind == "DELETED":
            name = object_name(event.obj)
            gone = self._nodes.pop(name, None)
            if gone is not None:
                if gone.pods:
                    self._orphans[name] = dict(gone.pods)
                self._restructured = True
                self._changed()
            return CacheChange(event)
        info = self._nodes.get(object_name(event.obj))
        if info is not None:
            info.set_node(event.obj)
            self._dirty.add(info.name)
        else:
            info = NodeInfo.of(event.obj)
            for pod in self._orphans.pop(info.name, {}).values():
                info.add_pod(pod, self._csi_volumes(pod), self._pod_volumes.get(pod.key, ()))
            self._nodes[info.name] = info
            if info.name in self._storage[CSI_NODE]:
                self._set_csi_limits(info.name)
            self._restructured = True
        self._changed()
        return CacheChange(event, node=info)

    def _apply_namespace(self, event: ClusterEvent) -> CacheChange:
        namespaces = dict(self._namespaces)
        if event.kind == "DELETED":
            changed = namespaces.pop(object_name(event.obj), None) is not None
        else:
            info = namespace_info(event.obj)
            changed = namespaces.get(info.name) != info.labels
            namespaces[info.name] = info.labels
        if changed:
            self._namespaces = namespaces
            self.namespace_generation += 1
            self._changed()
        return CacheChange(event, changed=changed)

    def _apply_workload(self, event: ClusterEvent) -> CacheChange:
        found: Workload | None = None
        key: WorkloadKey
        if event.kind == "DELETED":
            namespace, _, name = pod_key(event.obj).partition("/")
            key = (event.resource, name)
        else:
            found = workload(event.resource, event.obj)
            namespace, key = found.namespace, found.key
        current = self._workloads.get(namespace, {})
        if current.get(key) == found:
            return CacheChange(event, changed=False)
        changed = dict(current)
        if found is None:
            del changed[key]
        else:
            changed[key] = found
        workloads = dict(self._workloads)
        if changed:
            workloads[namespace] = changed
        else:
            del workloads[namespace]
        self._workloads = workloads
        self._changed()
        return CacheChange(event)

    def _apply_budget(self, event: ClusterEvent) -> CacheChange:
        key = pod_key(event.obj)
        if event.kind == "DELETED":
            changed = self._budgets.pop(key, None) is not None
        else:
            budget = disruption_budget(event.obj)
            changed = self._budgets.get(key) != budget
            self._budgets[key] = budget
        if changed:
            self._changed()
        return CacheChange(event, changed=changed)

    def _apply_storage(self, event: ClusterEvent) -> CacheChange:
        objects = self._storage[event.resource]
        found: Any = None
        if event.kind == "DELETED":
            key = (pod_key(event.obj) if event.resource == PERSISTENT_VOLUME_CLAIM
                   else object_name(event.obj))
            changed = objects.pop(key, None) is not None
        else:
            found = STORAGE_PARSERS[event.resource](event.obj)
            key = found.key if event.resource == PERSISTENT_VOLUME_CLAIM else found.name
            changed = objects.get(key) != found
            objects[key] = found
        if self._settle_assumption(event.resource, key, found):
            changed = True
        if changed:
            self._storage_view = None
            self._changed()
            if event.resource in _COUNTED:
                self._recount = True  # at the next snapshot: once for a burst of events
            elif event.resource == CSI_NODE:
                self._set_csi_limits(key)
        return CacheChange(event, changed=changed)

    def _settle_assumption(self, resource: str, key: str, found: Any) -> bool:
        """A volume or claim with an assumed binding changed: the assumption gives way to
        the informer's object once that object carries a binding of its own (a claimRef;
        a selected node or volume name) or is gone — kube's assume cache keeps an assumed
        object until a newer version arrives. Returns whether an overlay went."""
        if resource == PERSISTENT_VOLUME and key in self._assumed_volumes:
            if found is None or found.claim:
                del self._assumed_volumes[key]
                return True
        elif resource == PERSISTENT_VOLUME_CLAIM and key in self._assumed_claims \
                and (found is None or found.selected_node or found.volume_name):
            del self._assumed_claims[key]
            return True
        return False

    def _set_csi_limits(self, name: str) -> None:
        node = self._nodes.get(name)
        if node is not None:
            csi_node = self._storage[CSI_NODE].get(name)
            node.set_csi_limits(csi_node.limits if csi_node is not None else {})
            self._dirty.add(name)

    def storage(self) -> StorageObjects:
        """The storage objects as they are now, with the bindings reserve assumed (a copy
        made once per change)."""
        if self._storage_view is None:
            s = self._storage
            claims, volumes = dict(s[PERSISTENT_VOLUME_CLAIM]), dict(s[PERSISTENT_VOLUME])
            for name, (claim_key, _) in self._assumed_volumes.items():
                volume, claim = volumes.get(name), claims.get(claim_key)
                if volume is not None:
                    volumes[name] = replace(volume, claim=claim_key,
                                            claim_uid=claim.uid if claim else "")
            for claim_key, (node, _) in self._assumed_claims.items():
                claim = claims.get(claim_key)
                if claim is not None:
                    claims[claim_key] = replace(claim, selected_node=node)
            self._storage_view = StorageObjects(
                claims, volumes, dict(s[STORAGE_CLASS]), dict(s[CSI_NODE]), dict(s[CSI_DRIVER]))
        return self._storage_view

    # ------------------------------------------------------------------ assumed volumes

    def assume_volumes(self, pod_key: str, assumption: VolumeAssumption) -> str | None:
        """Assume ``assumption`` (reserve's volume bindings) for pod ``pod_key``: each
        volume taken by its claim, each claim to provision marked for the node, in the
        snapshots from now on. None when done; else why not (a volume or claim gone, or a
        volume another claim took meanwhile), and nothing is assumed."""
        storage = self.storage()
        namespace = assumption.namespace
        for claim_name, volume_name in assumption.static:
            claim_key = f"{namespace}/{claim_name}"
            volume = storage.volumes.get(volume_name)
            if claim_key not in storage.claims or volume is None:
                return messages.VOLUME_GONE.format(claim=claim_key, volume=volume_name)
            if volume.claim and volume.claim != claim_key:
                return messages.VOLUME_TAKEN.format(volume=volume_name, claim=volume.claim)
        for claim_name in assumption.provisions:
            claim = storage.claims.get(f"{namespace}/{claim_name}")
            if claim is None:
                return messages.CLAIM_GONE.format(claim=f"{namespace}/{claim_name}")
            if claim.selected_node and claim.selected_node != assumption.node:
                return messages.CLAIM_SELECTED.format(claim=claim.key, node=claim.selected_node)
        if not assumption:
            return None
        for claim_name, volume_name in assumption.static:
            self._assumed_volumes[volume_name] = (f"{namespace}/{claim_name}", pod_key)
        for claim_name in assumption.provisions:
            self._assumed_claims[f"{namespace}/{claim_name}"] = (assumption.node, pod_key)
        self._volume_assumptions.setdefault(pod_key, []).append(assumption)
        self._storage_view = None
        self._changed()
        return None

    def revert_volumes(self, pod_key: str) -> None:
        """Undo the pod's ``assume_volumes`` (unreserve): its overlays that the informer
        has not replaced yet go."""
        assumptions = self._volume_assumptions.pop(pod_key, ())
        for assumption in assumptions:
            for _, volume_name in assumption.static:
                if self._assumed_volumes.get(volume_name, ("", ""))[1] == pod_key:
                    del self._assumed_volumes[volume_name]
            for claim_name in assumption.provisions:
                key = f"{assumption.namespace}/{claim_name}"
                if self._assumed_claims.get(key, ("", ""))[1] == pod_key:
                    del self._assumed_claims[key]
        if assumptions:
            self._storage_view = None
            self._changed()

    def forget_volume_assumptions(self, pod_key: str) -> None:
        """The pod's volume bindings were written and completed (postBind): nothing can
        revert them any more; their overlays stay until the informer delivers the objects."""
        self._volume_assumptions.pop(pod_key, None)

    def assumed_volumes(self, pod_key: str) -> list[VolumeAssumption]:
        """What the pod's reserve assumed and nothing reverted or forgot yet."""
        return list(self._volume_assumptions.get(pod_key, ()))

    def _csi_volumes(self, pod: PodInfo) -> dict[str, str]:
        volumes = self._pod_volumes.get(pod.key)
        if not volumes:
            return {}
        return self.storage().attached_csi_volumes(pod.namespace, volumes)

    def _recount_csi_volumes(self) -> None:
        """Claims, volumes or classes changed: recount the CSI volumes of the placed pods
        with volumes whose count they changed."""
        self._recount = False
        for key in self._pod_volumes:
            node = self._nodes.get(self._placement.get(key, ""))
            counted = node.pods.get(key) if node is not None else None
            if node is None or counted is None:
                continue
            csi = self._csi_volumes(counted)
            if csi != node.pod_csi_volumes.get(key, {}):
                node.add_pod(counted, csi, self._pod_volumes.get(key, ()))
                self._dirty.add(node.name)

    def _index_claims(self) -> None:
        """Bring ``_claim_nodes`` up to date with the nodes changed since the last
        snapshot (every node after nodes were added or deleted)."""
        names = (set(self._nodes) | set(self._indexed_claims) if self._restructured
                 else self._dirty)
        for name in names:
            node = self._nodes.get(name)
            now: dict[str, int] = node.view["usedClaims"] if node is not None else {}
            before = self._indexed_claims.get(name, {})
            if now == before:
                continue
            for claim in before.keys() ^ now.keys():
                nodes = set(self._claim_nodes.get(claim, ()))
                nodes.symmetric_difference_update((name,))
                if nodes:
                    self._claim_nodes[claim] = tuple(sorted(nodes))
                else:
                    self._claim_nodes.pop(claim, None)
            if now:
                self._indexed_claims[name] = dict(now)
            else:
                self._indexed_claims.pop(name, None)

    def disruption_budgets(self) -> tuple[DisruptionBudget, ...]:
        return tuple(self._budgets.values())

    def _refresh_group(self, group_key: str) -> None:
        """The PodGroup ``group_key`` changed: renew its pods' ``podGroup`` views."""
        spec = self._pod_groups.get(group_key)
        for key, pod in list(self._pods.items()):
            if pod.group_key != group_key:
                continue
            pod = pod.with_pod_group(spec)
            self._pods[key] = pod
            assumed_node = self._assumed.get(key)
            if assumed_node is not None:
                self._place(pod.with_node(assumed_node), assumed_node)
            elif key in self._placement:
                self._place(pod, self._placement[key])

    # ------------------------------------------------------------------ assumptions

    def assume(self, pod: PodInfo, node_name: str) -> PodInfo:
        """Count ``pod`` on ``node_name`` before its bind returns; returns the assumed copy
        (of the cache's latest object of the pod, with ``nodeName`` set). Raises
        ``CacheError`` for an unknown, bound or assumed pod."""
        key = pod.key
        if key in self._assumed:
            raise CacheError(
                messages.POD_ALREADY_ASSUMED.format(key=key, node=self._assumed[key])
            )
        current = self._pods.get(key)
        if current is None:
            raise CacheError(messages.POD_UNKNOWN.format(key=key))
        if current.node_name:
            raise CacheError(model_messages.POD_ALREADY_BOUND.format(
                key=key, node=current.node_name))
        assumed = current.with_node(node_name)
        self._assumed[key] = node_name
        self._place(assumed, node_name)
        return assumed

    def forget(self, pod: PodInfo) -> None:
        """Undo ``assume`` (the bind failed or permit rejected the pod)."""
        if self._assumed.pop(pod.key, None) is None:
            raise CacheError(messages.POD_NOT_ASSUMED.format(key=pod.key))
        self._binding_finished.discard(pod.key)
        self._unplace(pod.key)

    def finish_binding(self, pod: PodInfo) -> None:
        """The bind call returned; the pod stays assumed until its bound event arrives.
        Nothing to do when that event came first."""
        if pod.key in self._assumed:
            self._binding_finished.add(pod.key)

    def is_assumed(self, pod: PodInfo) -> bool:
        return pod.key in self._assumed

    def binding_finished(self, pod: PodInfo) -> bool:
        return pod.key in self._binding_finished

    # ------------------------------------------------------------------ queries

    def node(self, name: str) -> NodeInfo | None:
        """The live NodeInfo (changes as events arrive; use ``snapshot()`` for a cycle)."""
        return self._nodes.get(name)

    def nodes(self) -> list[NodeInfo]:
        return list(self._nodes.values())

    def pod(self, key: str) -> PodInfo | None:
        """The latest object of the pod ``namespace/name`` (not its assumed copy)."""
        return self._pods.get(key)

    def pods(self) -> list[PodInfo]:
        return list(self._pods.values())

    def pending_pods(self) -> list[PodInfo]:
        """Pods neither bound, nor assumed, nor finished: what a scheduler may schedule."""
        return [
            p for p in self._pods.values()
            if not p.node_name and not p.terminated and p.key not in self._assumed
        ]

    def counted_node(self, key: str) -> str | None:
        """The node the pod ``key`` is counted on (bound or assumed), None if none."""
        return self._placement.get(key)

    def pod_groups(self) -> dict[str, PodGroupSpec]:
        return dict(self._pod_groups)

    def pod_group(self, key: str) -> PodGroupSpec | None:
        return self._pod_groups.get(key)

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """The labels of the namespace ``name``, None when it is not known."""
        return self._namespaces.get(name)

    def default_selector(self, pod: PodInfo) -> dict[str, Any] | None:
        """kube-scheduler's DefaultSelector of ``pod``: the selector of the Services and
        the controller that select it, as a ``metav1.LabelSelector``; None when none does
        (``model.workloads.default_selector``)."""
        return _default_selector(self._workloads, pod)

    def snapshot(self) -> Snapshot:
        """The cluster for one cycle; the same object until the cache changes. Only nodes
        that changed since the previous snapshot are copied (the work is proportional to
        the changes, except after nodes were added or deleted)."""
        if self._recount:
            self._recount_csi_volumes()
        previous = self._snapshot
        if previous is not None and previous.generation == self.generation:
            return previous
        self._index_claims()
        if previous is None or self._restructured:
            nodes = []
            for name, live in self._nodes.items():
                old = previous.node(name) if previous is not None else None
                if old is None or old.generation != live.generation:
                    old = live.clone()
                nodes.append(old)
            snapshot = Snapshot(self.generation, nodes, pending=self.pending_pods,
                                affinity_views=self._affinity_view_list(),
                                **self._cluster_objects())
        else:
            nodes = list(previous.nodes)
            generations = previous.generations.copy()
            for name in self._dirty:
                i = previous.index.get(name)
                changed = self._nodes.get(name)
                if i is not None and changed and nodes[i].generation != changed.generation:
                    nodes[i] = changed.clone()
                    generations[i] = changed.generation
            snapshot = Snapshot(self.generation, nodes, previous.index, self.pending_pods,
                                self._affinity_view_list(), generations,
                                **self._cluster_objects())
        self._dirty.clear()
        self._restructured = False
        self._snapshot = snapshot
        return snapshot

    # ------------------------------------------------------------------ placement

    def _place(self, pod: PodInfo, node_name: str) -> None:
        """Count ``pod`` on ``node_name`` only (moving it if it was counted elsewhere)."""
        self._unplace(pod.key)
        node = self._nodes.get(node_name)
        if node is not None:
            node.add_pod(pod, self._csi_volumes(pod), self._pod_volumes.get(pod.key, ()))
            self._dirty.add(node_name)
        else:
            self._orphans.setdefault(node_name, {})[pod.key] = pod
        self._placement[pod.key] = node_name
        if has_pod_affinity(pod.view):
            self._with_affinity[pod.key] = pod
            self._affinity_views = None
        self._changed()

    def _replace(self, pod: PodInfo, node_name: str) -> bool:
        """``pod`` in place of the one counted with its key on ``node_name``, when that
        one has the same spec (``NodeInfo.replace_pod``): its view stays as it was."""
        node = self._nodes.get(node_name)
        if node is None or self._placement.get(pod.key) != node_name \
                or not node.replace_pod(pod):
            return False
        self._dirty.add(node_name)
        if pod.key in self._with_affinity:  # the same spec: the same affinity
            self._with_affinity[pod.key] = pod
            self._affinity_views = None
        self._changed()
        return True

    def _unplace(self, key: str) -> None:
        node_name = self._placement.pop(key, None)
        if node_name is None:
            return
        if self._with_affinity.pop(key, None) is not None:
            self._affinity_views = None
        node = self._nodes.get(node_name)
        if node is not None:
            counted = node.pods.get(key)
            if counted is not None:
                node.remove_pod(counted)
                self._dirty.add(node_name)
        else:
            orphans = self._orphans.get(node_name, {})
            orphans.pop(key, None)
            if not orphans:
                self._orphans.pop(node_name, None)
        self._changed()

    def _cluster_objects(self) -> dict[str, Any]:
        """The snapshot's view of namespaces, workloads and pod groups, as they are now."""
        return {"namespace_labels": self._namespaces.get,
                "namespace_generation": self.namespace_generation,
                "default_selector": partial(_default_selector, self._workloads),
                "group_members": self._group_members.__getitem__,
                "disruption_budgets": self.disruption_budgets(),
                "storage": self.storage(),
                "pod_volumes": partial(_volumes_of, self._pod_volumes),
                "claim_nodes": partial(_nodes_using, self._claim_nodes)}

    def _count_member(self, old: PodInfo | None, new: PodInfo | None) -> None:
        """Keep ``_group_members`` (pods per pod-group label) as ``old`` becomes ``new``."""
        before = old.group_key if old is not None else None
        after = new.group_key if new is not None else None
        if before == after:
            return
        if before is not None:
            self._group_members[before] -= 1
            if not self._group_members[before]:
                del self._group_members[before]
        if after is not None:
            self._group_members[after] += 1

    def _affinity_view_list(self) -> list[dict[str, Any]]:
        """The views of ``_with_affinity``, rebuilt only after it changed."""
        if self._affinity_views is None:
            self._affinity_views = [p.view for p in self._with_affinity.values()]
        return self._affinity_views

    def _changed(self) -> None:
        self.generation += 1
