"""Cluster events into the cache and the queue, as kube-scheduler's eventhandlers.go: a pod
added, updated or deleted, a node, namespace or workload (Service, ReplicationController,
ReplicaSet, StatefulSet) changed, and the moves of unschedulable pods a change may help (the
queue re-runs the preEnqueue gate on the pods it moves).

Queueing hints: each event is mapped to the ``Fact``s it changes (``policy.reads``: a node's
labels, taints, allocatable…, other pods, namespaces' labels, workloads, PodGroups), and
moves only the pods whose rejecting rules read one of them (``Framework.requeue_reads``;
a pod rejected for no named rule, or after an Error, reads every fact)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cache.cache import Cache
from ..model.clock import Clock
from ..model.events import ClusterEvent
from ..model.objects import ObjectError, PodInfo, pod_key
from ..model.volumes import VOLUME_KINDS
from ..model.workloads import NAMESPACE, WORKLOAD_KINDS
from ..policy.reads import EVERY_FACT, NO_FACT, Fact
from . import messages
from .binding_cycle import BindingCycle
from .queue import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_UPDATE,
    GATED,
    POD_ADD,
    POD_DELETE,
    UNSCHEDULED_POD_UPDATE,
    QueuedPod,
    SchedulingQueue,
)
from .runtime import Framework
from .waiting import WaitingRoom

# what a change of these objects changes (when the cache says it changed anything)
_OBJECT_FACTS: dict[str, frozenset[Fact]] = {
    NAMESPACE: frozenset({Fact.NAMESPACE_LABELS}),
    **{kind: frozenset({Fact.WORKLOADS}) for kind in WORKLOAD_KINDS},
    "PodGroup": frozenset({Fact.POD_GROUPS, Fact.PODS}),  # its pods' podGroup too
    **{kind: frozenset({Fact.STORAGE}) for kind in VOLUME_KINDS},
}
# a node's view fields → the fact their change is (kube's NodeSchedulingPropertiesChange)
_NODE_FIELD_FACTS = (
    ("labels", Fact.NODE_LABELS),
    ("taints", Fact.NODE_TAINTS),
    ("unschedulable", Fact.NODE_TAINTS),
    ("allocatable", Fact.NODE_ALLOCATABLE),
    ("annotations", Fact.NODE_ANNOTATIONS),
)
POD_GONE = frozenset({Fact.PODS, Fact.NODE_USAGE})  # a pod deleted or finished


@dataclass
class PodRecord:
    """What happened to one pod, for ``simulate`` and metrics: created by the first event
    of a pending pod a profile serves, updated by each attempt."""

    key: str
    attempts: int = 0
    node: str | None = None
    bound_at: float | None = None
    message: str | None = None
    first_seen: float | None = None
    victims: list[str] = field(default_factory=list)  # the pods its preemptions evicted


@dataclass
class EventHandlers:
    """Applies one scheduler's cluster events; the state it updates is the scheduler's."""

    cache: Cache
    queue: SchedulingQueue
    waiting: WaitingRoom
    binding_cycle: BindingCycle
    profiles: Mapping[str, Framework]  # the scheduler's, replaced in place on reload
    records: dict[str, PodRecord]  # dropped when the pod is deleted (unless kept, below)
    unserved: dict[str, str]  # pending pods no profile serves → message
    clock: Clock
    forget_pod: Callable[[str], None]  # a pod gone (deleted, terminated): forgotten
    # the scheduler's nominations: pod key -> (node, pod); kube's nominator
    nominated: dict[str, tuple[str, PodInfo]] = field(default_factory=dict)
    # ``simulate`` reports every pod it scheduled, an evicted one too: it keeps the records
    # of deleted pods; a long-running scheduler drops them (its memory stays flat)
    keep_deleted_records: bool = False

    def apply(self, event: ClusterEvent) -> None:
        before = self._node_before(event) if event.resource == "Node" else None
        try:
            change = self.cache.apply(event)
        except ObjectError as e:
            self.unserved[_object_key(event)] = str(e)
            return
        if event.resource == "Node":
            facts = _node_facts(event, before, change.node.view if change.node else None)
            self._move(f"Node{event.kind.title()}", facts)
            return
        if event.resource in _OBJECT_FACTS:
            if change.changed:
                self._move(f"{event.resource}{event.kind.title()}",
                           _OBJECT_FACTS[event.resource])
            return
        if event.resource != "Pod":
            return
        pod, old = change.pod, change.old_pod
        if event.kind == "DELETED" or pod is None:  # (the cache read its key: no error)
            self._pod_deleted(pod_key(event.obj))
        elif pod.node_name or pod.terminated:
            self._pod_assigned(pod, old)
        else:
            self._pod_pending(pod, old)

    def _pod_deleted(self, key: str) -> None:
        """Out of the queue, the waiting room or its binding cycle (each rolled back); the
        room it held may let unschedulable pods fit. What was recorded for it goes."""
        self.unserved.pop(key, None)
        if not self.keep_deleted_records:
            self.records.pop(key, None)
        self.forget_pod(key)
        self.queue.delete(key)
        self.binding_cycle.drop(key)
        self._move(POD_DELETE, POD_GONE)

    def _pod_assigned(self, pod: PodInfo, old: PodInfo | None) -> None:
        """A pod bound (by us or another scheduler), changed on its node or terminated:
        not ours to schedule; the pods it may help are moved."""
        key = pod.key
        self.nominated.pop(key, None)
        if key in self.queue and key not in self.queue.in_flight():
            self.queue.delete(key)
        if pod.terminated and (old is None or not old.terminated):
            # it no longer uses its node: what it held is given back, as on deletion
            self.forget_pod(key)
            self._move(POD_DELETE, POD_GONE)
        elif old is None or old.node_name != pod.node_name:
            # one more pod on a node: the room left there only shrank. The most frequent
            # event (every bind) moves only pods whose rules are known to count pods
            self._move(ASSIGNED_POD_ADD, frozenset({Fact.PODS}),
                       affected=frozenset({Fact.NODE_USAGE}), unknown_moved=False)
        elif _spec_changed(old, pod):  # e.g. resized in place
            self._move(ASSIGNED_POD_UPDATE, POD_GONE)
        elif _pod_identity(old) != _pod_identity(pod):
            self._move(ASSIGNED_POD_UPDATE, frozenset({Fact.PODS}))

    def _pod_pending(self, pod: PodInfo, old: PodInfo | None) -> None:
        """A pending pod added or updated: queued when a profile serves it (not while it
        is assumed or waiting at permit)."""
        key = pod.key
        if pod.scheduler_name not in self.profiles:
            self.unserved[key] = messages.PROFILE_UNKNOWN.format(pod=key,
                                                                 name=pod.scheduler_name)
            return
        if self.cache.is_assumed(pod) or key in self.waiting:
            return
        record = self.records.setdefault(key, PodRecord(key))
        if record.first_seen is None:
            record.first_seen = self.clock.now()
        if key in self.queue:
            spec_changed = old is None or _spec_changed(old, pod)
            self.queue.update(pod, spec_changed=spec_changed)
            self._nominate(pod, old)
            if spec_changed or old is None or _pod_identity(old) != _pod_identity(pod):
                # what other pods' rules count of it may have changed (a gang member)
                self._move(UNSCHEDULED_POD_UPDATE, frozenset({Fact.PODS}))
        else:
            self.queue.add(pod)
            queued = self.queue.get(key)
            if queued is not None and queued.queue != GATED:  # kube: once admitted
                self._nominate(pod, old)
            # a new pod can make others schedulable (a gang's last member, affinity)
            self._move(POD_ADD, frozenset({Fact.PODS}))

    def _nominate(self, pod: PodInfo, old: PodInfo | None) -> None:
        """kube's nominator on a pending pod's event: nominated to the node its status
        names; a nomination its status dropped is gone; with none in either, a nomination
        the scheduler made and not yet written is kept (updated to the new object)."""
        key = pod.key
        if pod.nominated_node:
            self.nominated[key] = (pod.nominated_node, pod)
        elif old is not None and old.nominated_node:
            self.nominated.pop(key, None)
        elif key in self.nominated:
            self.nominated[key] = (self.nominated[key][0], pod)

    # -- queueing hints ------------------------------------------------------------------

    def _move(self, event: str, facts: frozenset[Fact], affected: frozenset[Fact] = NO_FACT,
              *, unknown_moved: bool = True) -> None:
        """``move_all`` for an event that changed ``facts`` (the pods whose rejecting rules
        read one move) and ``affected`` (facts that cannot help now, see ``move_all``).
        Without ``unknown_moved``, a pod whose rules' reads are not known (every fact) is
        only affected: kept where it is, as before queueing hints, its time-out counting."""
        if not facts and not affected:
            return

        relevant = self.helped_by(facts, unknown_moved=unknown_moved)
        touched = self.helped_by(affected | facts)
        self.queue.move_all(event, relevant,
                            is_affected=None if unknown_moved and not affected else touched)

    def helped_by(self, facts: frozenset[Fact], *, unknown_moved: bool = True
                  ) -> Callable[[QueuedPod], bool]:
        """Whether a change of ``facts`` may help a pod (its rules read one of them);
        without ``unknown_moved``, not a pod whose rules' reads are not known."""

        def helped(qp: QueuedPod) -> bool:
            reads = self._reads(qp)
            return (unknown_moved or reads != EVERY_FACT) and not reads.isdisjoint(facts)

        return helped

    def _reads(self, qp: QueuedPod) -> frozenset[Fact]:
        """What the rules that keep ``qp`` out read: its gate's while gated, else the
        rules that rejected its latest attempt."""
        fwk = self.profiles.get(qp.pod.scheduler_name)
        if fwk is None:
            return EVERY_FACT
        if qp.queue == GATED:
            return fwk.requeue_reads(frozenset({qp.gated_by} if qp.gated_by else ()))
        return fwk.requeue_reads(qp.unschedulable_by)

    def _node_before(self, event: ClusterEvent) -> dict[str, Any] | None:
        """The cached view of the node an event modifies (before the cache applies it)."""
        if event.kind != "MODIFIED":
            return None
        found = self.cache.node(str(event.obj.get("metadata", {}).get("name", "")))
        return found.view if found is not None else None


def _node_facts(event: ClusterEvent, before: dict[str, Any] | None,
                after: dict[str, Any] | None) -> frozenset[Fact]:
    """What a Node event changed: a node added (or first seen), deleted, or the parts of
    it that differ (``Fact.NODE_OBJECT`` whenever anything of the object does)."""
    if event.kind == "DELETED":
        return frozenset({Fact.NODE_DELETED})
    if before is None or after is None:
        return frozenset({Fact.NODE_ADDED})
    facts = {fact for name, fact in _NODE_FIELD_FACTS if before[name] != after[name]}
    if facts or _without_version(before) != _without_version(after):
        facts.add(Fact.NODE_OBJECT)
    return frozenset(facts)


def _without_version(view: dict[str, Any]) -> tuple[Any, ...]:
    """A node view's raw object, but for the bookkeeping every update changes."""
    metadata = {k: v for k, v in view["metadata"].items()
                if k not in ("resourceVersion", "managedFields", "generation")}
    return metadata, view["spec"], view["status"]


def _spec_changed(old: PodInfo, pod: PodInfo) -> bool:
    """Whether the pod's spec changed (not when both were read as one: ``pod_info``
    shares what it reads only between specs equal but for ``nodeName``)."""
    if old.spec_parts is not None and old.spec_parts is pod.spec_parts \
            and old.node_name == pod.node_name:
        return False
    return old.obj.get("spec") != pod.obj.get("spec")


def _pod_identity(pod: PodInfo) -> tuple[Any, ...]:
    """What other pods' rules see of a pod besides its spec and node: labels and
    whether it is going away."""
    return pod.view["labels"], pod.deleting


def _object_key(event: ClusterEvent) -> str:
    """The key of an event's object, as far as it can be read: "namespace/name" for a pod
    (that of its deletion, which drops the entry), else its name."""
    if event.resource == "Pod":
        try:
            return pod_key(event.obj)
        except ObjectError:
            pass
    return str(event.obj.get("metadata", {}).get("name", "?"))
