"""``MemoryBackend``: an in-process cluster for ``policysched simulate`` and tests.

Every call changes the stored objects as the API server would and queues the watch event
it causes: ``bind`` sets ``spec.nodeName`` and a PodScheduled=True condition (MODIFIED),
``evict`` marks the pod with a DisruptionTarget condition and deletes it (DELETED), patches
and status updates produce MODIFIED events, no-op changes produce none. ``start_bind``
binds at once and keeps the outcome for ``drain_bind_outcomes`` (simulations stay
deterministic). Created objects get a uid, a resourceVersion, a creationTimestamp (the
clock's time) and the defaults, priority admission and pod mutations on create
(``merge_label_keys``) of the API server. Events, conditions, bindings and evictions are
kept in lists (with the clock's time) for tests and simulation reports.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..framework.backend import (
    BackendError,
    BindError,
    BindOutcome,
    BindRequest,
    VolumeBindRequest,
    run_bind,
)
from ..model import messages as model_messages
from ..model.clock import Clock, SimulatedClock
from ..model.disruption_budgets import POD_DISRUPTION_BUDGET, disruption_budget
from ..model.events import (
    ClusterEvent,
    ConditionStatus,
    EventType,
    Resource,
)
from ..model.objects import (
    DEFAULT_NAMESPACE,
    DEFAULT_SCHEDULER,
    DISRUPTION_TARGET,
    PREEMPTION_BY_SCHEDULER,
    ObjectError,
    PodGroupSpec,
    PodInfo,
    PriorityClassSpec,
    format_timestamp,
    node_view,
    object_name,
    pod_group_spec,
    pod_info,
    priority_class_spec,
)
from ..model.volumes import (
    AVAILABLE,
    BIND_COMPLETED_ANNOTATION,
    BOUND,
    BOUND_BY_CONTROLLER_ANNOTATION,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_PARSERS,
    VOLUME_KINDS,
    pod_volumes,
)
from ..model.workloads import NAMESPACE, WORKLOAD_KINDS, namespace_info, workload
from . import messages
from .volume_writes import bind_volume_to_claim, claim_reference, select_node

NODE = "Node"
HOSTNAME_LABEL = "kubernetes.io/hostname"
POD = "Pod"
POD_GROUP = "PodGroup"
PRIORITY_CLASS = "PriorityClass"
KINDS = (NODE, POD, POD_GROUP, PRIORITY_CLASS, NAMESPACE, *WORKLOAD_KINDS,
         POD_DISRUPTION_BUDGET, *VOLUME_KINDS)
NAMESPACED = frozenset({POD, POD_GROUP, *WORKLOAD_KINDS, POD_DISRUPTION_BUDGET,
                        PERSISTENT_VOLUME_CLAIM})
POD_SCHEDULED = "PodScheduled"

# Kubernetes creates these in every cluster.
SYSTEM_PRIORITY_CLASSES: Mapping[str, PriorityClassSpec] = {
    "system-cluster-critical": PriorityClassSpec("system-cluster-critical", 2_000_000_000),
    "system-node-critical": PriorityClassSpec("system-node-critical", 2_000_001_000),
}

_UID_NAMESPACE = uuid.UUID("6f1f3e4a-3c52-4c1e-9a57-4f1c0d6c2b10")


@dataclass(frozen=True)
class RecordedEvent:
    """An Event the scheduler recorded about a pod."""

    time: float
    pod: str  # "namespace/name"
    type: str
    reason: str
    message: str
    action: str | None = None  # when not the reason's


@dataclass(frozen=True)
class RecordedCondition:
    """A pod condition as it was set (by the scheduler, or by a bind or an eviction)."""

    time: float
    pod: str
    type: str
    status: str
    reason: str
    message: str


@dataclass(frozen=True)
class RecordedBinding:
    time: float
    pod: str
    node: str


@dataclass(frozen=True)
class RecordedEviction:
    time: float
    pod: str
    node: str
    message: str


def admit_priority(pod: dict[str, Any], classes: Mapping[str, PriorityClassSpec]) -> None:
    """Kubernetes' Priority admission on a Pod object (changed in place): resolve
    ``spec.priorityClassName`` (or the global default class) into ``spec.priority`` and
    ``spec.preemptionPolicy``. A pod without a class keeps a ``spec.priority`` it has (a
    simulation convenience; the API server would reject it). Call it on a pod that
    ``pod_info`` accepts; raises ``ObjectError``."""
    spec = pod.setdefault("spec", {})
    name = spec.get("priorityClassName")  # pod_info() checked it is a string
    known = {**SYSTEM_PRIORITY_CLASSES, **classes}
    if name:
        chosen = known.get(name)
        if chosen is None:
            raise ObjectError(
                "spec.priorityClassName", messages.UNKNOWN_PRIORITY_CLASS.format(name=name)
            )
    else:
        chosen = next((c for c in classes.values() if c.global_default), None)
        if chosen is None:
            spec.setdefault("priority", 0)
            return
        spec["priorityClassName"] = chosen.name
    given = spec.get("priority")
    if given is not None and given != chosen.value:
        raise ObjectError("spec.priority", messages.PRIORITY_MISMATCH.format(
            priority=given, name=chosen.name, value=chosen.value))
    spec["priority"] = chosen.value
    if chosen.preemption_policy and "preemptionPolicy" not in spec:
        spec["preemptionPolicy"] = chosen.preemption_policy


def merge_label_keys(pod: dict[str, Any]) -> None:
    """kube-apiserver's pod strategy on create (PrepareForCreate: mutatePodAffinity,
    mutateTopologySpreadConstraints; MatchLabelKeysInPodAffinity and
    MatchLabelKeysInPodTopologySpreadSelectorMerge are on in v1.34), in place: for every
    pod (anti-)affinity term and topology spread constraint with a labelSelector, each
    ``matchLabelKeys`` key the pod's labels have becomes ``key In (value)`` and each
    ``mismatchLabelKeys`` key ``key NotIn (value)`` in ``matchExpressions``; other keys are
    skipped. Kubernetes does it once, at creation: call it on a new pod only. A pod read
    back from a cluster (a dump in a cluster file) has them merged already: a requirement
    on a ``matchLabelKeys`` key the selector names, or equal to one it has, is not added
    again (the API server would refuse the first)."""
    spec = pod.get("spec")
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if not isinstance(spec, dict) or not isinstance(labels, dict):
        return  # (validation reports it)
    affinity = spec.get("affinity")
    terms = _list(spec.get("topologySpreadConstraints"))
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind) if isinstance(affinity, dict) else None
        if isinstance(rules, dict):
            terms += _list(rules.get("requiredDuringSchedulingIgnoredDuringExecution"))
            terms += [w.get("podAffinityTerm") for w in
                      _list(rules.get("preferredDuringSchedulingIgnoredDuringExecution"))
                      if isinstance(w, dict)]
    for term in terms:
        if isinstance(term, dict) and isinstance(term.get("labelSelector"), dict):
            _merge_keys(term["labelSelector"], term.get("matchLabelKeys"), "In", labels)
            _merge_keys(term["labelSelector"], term.get("mismatchLabelKeys"), "NotIn", labels)


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _merge_keys(selector: dict[str, Any], keys: Any, operator: str,
                labels: Mapping[str, Any]) -> None:
    expressions = selector.get("matchExpressions") or []
    match_labels = selector.get("matchLabels")
    if not isinstance(expressions, list):
        return  # (validation reports it)
    named = {e.get("key") for e in expressions if isinstance(e, dict)}
    named |= set(match_labels) if isinstance(match_labels, dict) else set()
    for key in _list(keys):
        if not isinstance(key, str) or key not in labels:
            continue
        requirement = {"key": key, "operator": operator, "values": [labels[key]]}
        if requirement in expressions or (operator == "In" and key in named):
            continue
        expressions.append(requirement)
    if expressions:
        selector["matchExpressions"] = expressions


_CONTAINERS = (dict, list)


def copy_object(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, scalars)."""
    if type(value) is dict:
        return {k: copy_object(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if type(value) is list:
        return [copy_object(v) if type(v) in _CONTAINERS else v for v in value]
    return value


class MemoryBackend:
    """An in-process cluster of Nodes, Pods, PodGroups, PriorityClasses, Namespaces,
    Services, ReplicationControllers, ReplicaSets, StatefulSets, PodDisruptionBudgets and
    the storage objects (PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
    CSIDrivers). Its initial ``objects`` are created in the order PriorityClasses, Nodes,
    Namespaces, PodGroups, workloads, PodDisruptionBudgets and storage objects, Pods (given
    order within each) and delivered as ADDED events by the first
    ``drain_events()``. Thread-safe."""

    def __init__(self, objects: Iterable[dict[str, Any]] = (), clock: Clock | None = None) -> None:
        self._clock: Clock = clock if clock is not None else SimulatedClock()
        self._store: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in KINDS}
        self._pending: list[ClusterEvent] = []
        self._outcomes: list[BindOutcome] = []
        self._serial = itertools.count(1)
        self._lock = threading.RLock()
        self.events: list[RecordedEvent] = []
        self.conditions: list[RecordedCondition] = []
        self.bindings: list[RecordedBinding] = []
        self.evictions: list[RecordedEviction] = []
        initial = list(objects)
        for obj in sorted(initial, key=_creation_order):
            self._create(copy_object(obj), None)

    @property
    def clock(self) -> Clock:
        return self._clock

    # ------------------------------------------------------------------ Backend

    def drain_events(self) -> list[ClusterEvent]:
        with self._lock:
            events, self._pending = self._pending, []
            return events

    def bind(self, pod: PodInfo, node_name: str) -> None:
        with self._lock:
            stored = self._live_pod(pod, BindError)
            bound = stored.get("spec", {}).get("nodeName")
            if bound:
                raise BindError(model_messages.POD_ALREADY_BOUND.format(key=pod.key, node=bound))
            if node_name not in self._store[NODE]:
                raise BindError(messages.NODE_NOT_FOUND.format(name=node_name))
            stored.setdefault("spec", {})["nodeName"] = node_name
            self._put_condition(pod.key, stored, POD_SCHEDULED, "True", "", "")
            self.bindings.append(RecordedBinding(self._now(), pod.key, node_name))
            self._modified(POD, stored)

    def start_bind(self, request: BindRequest) -> None:
        outcome = run_bind(self, request)
        with self._lock:
            self._outcomes.append(outcome)

    def drain_bind_outcomes(self) -> list[BindOutcome]:
        with self._lock:
            outcomes, self._outcomes = self._outcomes, []
            return outcomes

    def bind_volumes(self, pod: PodInfo, volumes: VolumeBindRequest) -> None:
        """Write the bindings, then complete them at once as the PersistentVolume
        controller would: each claim bound to its volume, each claim to provision given a
        new volume on the selected node (the in-process cluster is its own controller and
        provisioner, so nothing is waited for)."""
        with self._lock:
            self._live_pod(pod, BackendError)
            for assumption in volumes.assumptions:
                for claim_name, volume_name in assumption.static:
                    claim = self._stored(PERSISTENT_VOLUME_CLAIM, claim_name,
                                         assumption.namespace)
                    volume = self._stored(PERSISTENT_VOLUME, volume_name)
                    changed = bind_volume_to_claim(volume, claim)
                    if changed is not None:
                        volume.clear()
                        volume.update(changed)
                        self._modified(PERSISTENT_VOLUME, volume)
                    self._complete_binding(claim, volume)
                for claim_name in assumption.provisions:
                    claim = self._stored(PERSISTENT_VOLUME_CLAIM, claim_name,
                                         assumption.namespace)
                    changed = select_node(claim, assumption.node)
                    if changed is not None:
                        claim.clear()
                        claim.update(changed)
                        self._modified(PERSISTENT_VOLUME_CLAIM, claim)
                    self._complete_binding(claim, self._provision(claim, assumption.node))

    def _stored(self, kind: str, name: str, namespace: str = DEFAULT_NAMESPACE
                ) -> dict[str, Any]:
        key = f"{namespace}/{name}" if kind in NAMESPACED else name
        found = self._store[kind].get(key)
        if found is None:
            raise BackendError(messages.VOLUME_OBJECT_GONE.format(kind=kind, name=key))
        return found

    def _provision(self, claim: dict[str, Any], node_name: str) -> dict[str, Any]:
        """A PersistentVolume for ``claim`` on node ``node_name`` (a provisioner's), bound
        to it."""
        spec = claim.get("spec") or {}
        node = self._store[NODE].get(node_name) or {}
        hostname = ((node.get("metadata") or {}).get("labels") or {}).get(HOSTNAME_LABEL,
                                                                          node_name)
        volume = {
            "apiVersion": "v1", "kind": PERSISTENT_VOLUME,
            "metadata": {"name": f"pvc-{claim['metadata'].get('uid', '')}",
                         "annotations": {BOUND_BY_CONTROLLER_ANNOTATION: "yes"}},
            "spec": {"storageClassName": spec.get("storageClassName", ""),
                     "accessModes": list(spec.get("accessModes") or []),
                     "capacity": dict((spec.get("resources") or {}).get("requests") or {}),
                     "volumeMode": spec.get("volumeMode") or "Filesystem",
                     "claimRef": claim_reference(claim),
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": HOSTNAME_LABEL, "operator": "In", "values": [hostname]}]}]}}},
            "status": {"phase": BOUND}}
        return self._create(volume, None)

    def _complete_binding(self, claim: dict[str, Any], volume: dict[str, Any]) -> None:
        """The PersistentVolume controller's syncClaim: the claim bound to ``volume``."""
        volume_name = volume["metadata"]["name"]
        if (volume.get("status") or {}).get("phase") != BOUND:
            volume.setdefault("status", {})["phase"] = BOUND
            self._modified(PERSISTENT_VOLUME, volume)
        spec = claim.setdefault("spec", {})
        annotations = claim.setdefault("metadata", {}).setdefault("annotations", {})
        if spec.get("volumeName") == volume_name and BIND_COMPLETED_ANNOTATION in annotations:
            return
        spec["volumeName"] = volume_name
        annotations[BIND_COMPLETED_ANNOTATION] = "yes"
        annotations.setdefault(BOUND_BY_CONTROLLER_ANNOTATION, "yes")
        claim["status"] = {**(claim.get("status") or {}), "phase": BOUND,
                           "accessModes": list((volume.get("spec") or {}).get("accessModes")
                                               or []),
                           "capacity": dict((volume.get("spec") or {}).get("capacity") or {})}
        self._modified(PERSISTENT_VOLUME_CLAIM, claim)

    def evict(self, pod: PodInfo, message: str) -> None:
        with self._lock:
            stored = self._live_pod(pod, BackendError)
            self._put_condition(
                pod.key, stored, DISRUPTION_TARGET, "True", PREEMPTION_BY_SCHEDULER, message
            )
            node = stored.get("spec", {}).get("nodeName") or ""
            self.evictions.append(RecordedEviction(self._now(), pod.key, node, message))
            self._remove(POD, pod.key)

    def patch_pod_metadata(
        self,
        pod: PodInfo,
        labels: Mapping[str, str | None],
        annotations: Mapping[str, str | None],
    ) -> None:
        with self._lock:
            stored = self._live_pod(pod, BackendError)
            metadata = stored.setdefault("metadata", {})
            changed = False
            for field, patch in (("labels", labels), ("annotations", annotations)):
                current = metadata.get(field) or {}
                merged = dict(current)
                for key, value in patch.items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
                if merged != current:
                    metadata[field] = merged
                    changed = True
            if changed:
                self._modified(POD, stored)

    def set_nominated_node(self, pod: PodInfo, node_name: str | None) -> None:
        with self._lock:
            stored = self._live_pod(pod, BackendError)
            status = stored.setdefault("status", {})
            if (status.get("nominatedNodeName") or None) == (node_name or None):
                return
            if node_name:
                status["nominatedNodeName"] = node_name
            else:
                status.pop("nominatedNodeName", None)
            self._modified(POD, stored)

    def record_event(self, pod: PodInfo, type: EventType, reason: str, message: str,
                     action: str | None = None) -> None:
        with self._lock:
            self.events.append(RecordedEvent(self._now(), pod.key, type, reason, message,
                                             action))

    def set_pod_condition(
        self, pod: PodInfo, status: ConditionStatus, reason: str, message: str
    ) -> None:
        with self._lock:
            stored = self._live_pod(pod, BackendError)
            if self._put_condition(pod.key, stored, POD_SCHEDULED, status, reason, message):
                self._modified(POD, stored)

    def pod_groups(self) -> dict[str, PodGroupSpec]:
        with self._lock:
            return {key: pod_group_spec(obj) for key, obj in self._store[POD_GROUP].items()}

    # ------------------------------------------------------------------ objects

    def add_object(self, obj: dict[str, Any], *, at: float | None = None) -> dict[str, Any]:
        """Create an object as the API server would (validated, defaulted, admitted); its
        creationTimestamp, when unset, is ``at`` (default: now). Returns a copy of what was
        stored. Raises ``ObjectError`` for a malformed object and ``BackendError`` for an
        unsupported kind or an existing name."""
        with self._lock:
            return copy_object(self._create(copy_object(obj), at))

    def _create(self, obj: dict[str, Any], at: float | None) -> dict[str, Any]:
        """``add_object`` on an object the backend owns; returns the stored object."""
        with self._lock:
            kind = self._kind(obj)
            key = self._key(kind, obj)
            if key in self._store[kind]:
                raise BackendError(messages.OBJECT_EXISTS.format(kind=kind, name=key))
            metadata = obj.setdefault("metadata", {})
            if kind in NAMESPACED:
                metadata.setdefault("namespace", DEFAULT_NAMESPACE)
            serial = next(self._serial)
            # deterministic, and different for an object recreated under the same name
            metadata.setdefault("uid", str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{key}/{serial}")))
            if not metadata.get("creationTimestamp"):
                metadata["creationTimestamp"] = format_timestamp(
                    self._now() if at is None else at
                )
            self._admit(kind, obj)
            if kind == POD:
                merge_label_keys(obj)
            elif kind == PERSISTENT_VOLUME and not (obj.get("status") or {}).get("phase"):
                # the PersistentVolume controller's first sync of a new volume
                obj["status"] = {**(obj.get("status") or {}), "phase": AVAILABLE}
            metadata["resourceVersion"] = str(serial)
            self._store[kind][key] = obj
            if kind != PRIORITY_CLASS:
                self._pending.append(ClusterEvent("ADDED", _resource(kind), copy_object(obj)))
            if kind in (PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM):
                self._sync_pre_bound(kind, obj)
            return obj

    def _sync_pre_bound(self, kind: str, obj: dict[str, Any]) -> None:
        """The PersistentVolume controller's sync of a new claim or volume that completes a
        pre-bound pair: a claim whose ``volumeName`` names a volume that is unclaimed or
        claimed by it is bound to it (so a cluster file's bound claims need no
        bind-completed annotation)."""
        if kind == PERSISTENT_VOLUME_CLAIM:
            claim: dict[str, Any] | None = obj
            volume_name = (obj.get("spec") or {}).get("volumeName")
            volume = self._store[PERSISTENT_VOLUME].get(volume_name) if volume_name else None
        else:
            volume = obj
            ref = (obj.get("spec") or {}).get("claimRef") or {}
            claim = self._store[PERSISTENT_VOLUME_CLAIM].get(
                f"{ref.get('namespace') or DEFAULT_NAMESPACE}/{ref.get('name')}"
            ) if ref.get("name") else None
        if claim is None or volume is None or ((claim.get("spec") or {}).get("volumeName")
                                               != volume["metadata"]["name"]):
            return
        try:
            changed = bind_volume_to_claim(volume, claim)
        except BackendError:
            return  # claimed by another claim: the controller leaves the claim Pending
        if changed is not None:
            volume.clear()
            volume.update(changed)
            self._modified(PERSISTENT_VOLUME, volume)
        self._complete_binding(claim, volume)

    def update_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Replace an existing object (keeping its uid and creationTimestamp), as a PUT
        would; returns a copy of what was stored."""
        with self._lock:
            obj = copy_object(obj)
            kind = self._kind(obj)
            key = self._key(kind, obj)
            current = self._store[kind].get(key)
            if current is None:
                raise BackendError(messages.OBJECT_NOT_FOUND.format(kind=kind, name=key))
            metadata = obj.setdefault("metadata", {})
            for field in ("namespace", "uid", "creationTimestamp"):
                if field in current["metadata"]:
                    metadata[field] = current["metadata"][field]
            self._admit(kind, obj)
            self._store[kind][key] = obj
            self._modified(kind, obj)
            return copy_object(obj)

    def delete_object(
        self, kind: str, name: str, namespace: str = DEFAULT_NAMESPACE
    ) -> dict[str, Any]:
        """Delete an object; returns its last state. Raises ``BackendError`` when it does
        not exist."""
        with self._lock:
            if kind not in self._store:
                raise BackendError(self._unsupported(kind))
            key = f"{namespace}/{name}" if kind in NAMESPACED else name
            if key not in self._store[kind]:
                raise BackendError(messages.OBJECT_NOT_FOUND.format(kind=kind, name=key))
            return copy_object(self._remove(kind, key))

    def get(
        self, kind: str, name: str, namespace: str = DEFAULT_NAMESPACE
    ) -> dict[str, Any] | None:
        """A copy of an object, None when it does not exist."""
        with self._lock:
            key = f"{namespace}/{name}" if kind in NAMESPACED else name
            obj = self._store.get(kind, {}).get(key)
            return None if obj is None else copy_object(obj)

    def pod(self, key: str) -> dict[str, Any] | None:
        """A copy of the pod "namespace/name", None when it does not exist."""
        namespace, _, name = key.partition("/")
        return self.get(POD, name, namespace)

    def objects(self, kind: str) -> list[dict[str, Any]]:
        """Copies of every object of ``kind``, in creation order."""
        with self._lock:
            return [copy_object(o) for o in self._store.get(kind, {}).values()]

    def priority_classes(self) -> dict[str, PriorityClassSpec]:
        with self._lock:
            return {n: priority_class_spec(o) for n, o in self._store[PRIORITY_CLASS].items()}

    # ------------------------------------------------------------------ internals

    def _now(self) -> float:
        return self._clock.now()

    @staticmethod
    def _unsupported(kind: Any) -> str:
        return messages.UNSUPPORTED_OBJECT_KIND.format(kind=kind, expected=", ".join(KINDS))

    def _kind(self, obj: dict[str, Any]) -> str:
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if kind not in KINDS:
            raise BackendError(self._unsupported(kind))
        return str(kind)

    @staticmethod
    def _key(kind: str, obj: dict[str, Any]) -> str:
        name = object_name(obj)
        if kind not in NAMESPACED:
            return name
        namespace = obj["metadata"].get("namespace") or DEFAULT_NAMESPACE
        return f"{namespace}/{name}"

    def _admit(self, kind: str, obj: dict[str, Any]) -> None:
        """Validate, default and admit ``obj`` (changed in place); raises ``ObjectError``."""
        if kind == POD:
            pod_info(obj)
            pod_volumes(obj)
            obj.setdefault("spec", {}).setdefault("schedulerName", DEFAULT_SCHEDULER)
            obj.setdefault("status", {}).setdefault("phase", "Pending")
            admit_priority(obj, self.priority_classes())
        elif kind == NODE:
            node_view(obj)
        elif kind == POD_GROUP:
            pod_group_spec(obj)
        elif kind == NAMESPACE:
            namespace_info(obj)
        elif kind in WORKLOAD_KINDS:
            workload(kind, obj)
        elif kind == POD_DISRUPTION_BUDGET:
            disruption_budget(obj)
        elif kind in STORAGE_PARSERS:
            STORAGE_PARSERS[kind](obj)
        else:
            spec = priority_class_spec(obj)
            if spec.global_default:
                for other in self.priority_classes().values():
                    if other.global_default and other.name != spec.name:
                        reason = messages.MULTIPLE_GLOBAL_DEFAULTS.format(other=other.name)
                        raise ObjectError("globalDefault", reason)

    def _live_pod(self, pod: PodInfo, error: type[BackendError]) -> dict[str, Any]:
        stored = self._store[POD].get(pod.key)
        if stored is None:
            raise error(messages.POD_NOT_FOUND.format(name=pod.name, namespace=pod.namespace))
        uid = stored["metadata"].get("uid", "")
        if pod.uid and uid != pod.uid:
            raise error(messages.POD_REPLACED.format(key=pod.key, expected=pod.uid, actual=uid))
        return stored

    def _put_condition(
        self, key: str, pod: dict[str, Any], type: str, status: str, reason: str, message: str
    ) -> bool:
        """Set condition ``type`` on the stored ``pod``; records the call and returns whether
        the pod changed. lastTransitionTime moves only when the status changes."""
        now = self._now()
        self.conditions.append(RecordedCondition(now, key, type, status, reason, message))
        conditions = pod.setdefault("status", {}).setdefault("conditions", [])
        current = next((c for c in conditions if c.get("type") == type), None)
        if current is not None and (
            current.get("status"), current.get("reason") or "", current.get("message") or ""
        ) == (status, reason, message):
            return False
        if current is None:
            current = {"type": type, "lastProbeTime": None}
            conditions.append(current)
        if current.get("status") != status:
            current["lastTransitionTime"] = format_timestamp(now)
        current["status"] = status
        for field, value in (("reason", reason), ("message", message)):
            if value:
                current[field] = value
            else:
                current.pop(field, None)
        return True

    def _modified(self, kind: str, obj: dict[str, Any]) -> None:
        obj["metadata"]["resourceVersion"] = str(next(self._serial))
        if kind != PRIORITY_CLASS:
            self._pending.append(ClusterEvent("MODIFIED", _resource(kind), copy_object(obj)))

    def _remove(self, kind: str, key: str) -> dict[str, Any]:
        obj = self._store[kind].pop(key)
        if kind != PRIORITY_CLASS:
            self._pending.append(ClusterEvent("DELETED", _resource(kind), copy_object(obj)))
        return obj


def _resource(kind: str) -> Resource:
    return cast(Resource, kind)


_CREATION_ORDER = {PRIORITY_CLASS: 0, NODE: 1, NAMESPACE: 2, POD_GROUP: 3,
                   **dict.fromkeys(WORKLOAD_KINDS, 3), POD_DISRUPTION_BUDGET: 3,
                   **dict.fromkeys(VOLUME_KINDS, 3)}
_LAST = 4


def _creation_order(obj: Any) -> int:
    """PriorityClasses first (pods may name them), then nodes, namespaces, pod groups and
    workloads, then pods: the engine sees a pod after what it refers to."""
    kind = obj.get("kind") if isinstance(obj, dict) else None
    return _CREATION_ORDER.get(kind, _LAST) if isinstance(kind, str) else _LAST


if TYPE_CHECKING:  # MemoryBackend implements the contract
    from ..framework.backend import Backend

    _CONFORMS: type[Backend] = MemoryBackend
