"""Cluster events into the cache and the queue, as kube-scheduler's eventhandlers.go: a pod
added, updated or deleted, a node, namespace or workload (Service, ReplicationController,
ReplicaSet, StatefulSet) changed, and the moves of unschedulable pods a change may help (the
queue re-runs the preEnqueue gate on the pods it moves)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..cache.cache import Cache
from ..model.clock import Clock
from ..model.events import ClusterEvent
from ..model.objects import ObjectError, PodInfo, pod_key
from ..model.workloads import NAMESPACE, WORKLOAD_KINDS
from . import messages
from .binding_cycle import BindingCycle
from .queue import ASSIGNED_POD_UPDATE, GATED, SchedulingQueue
from .runtime import Framework
from .waiting import WaitingRoom

# objects whose changes change what pods select (namespace selectors, DefaultSelector)
_SELECTING_OBJECTS = frozenset({NAMESPACE, *WORKLOAD_KINDS})
# objects whose every change may help pods: nodes, and PodGroups (Coscheduling's hint)
_MOVING_OBJECTS = frozenset({"Node", "PodGroup"})


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
        try:
            change = self.cache.apply(event)
        except ObjectError as e:
            self.unserved[_object_key(event)] = str(e)
            return
        if event.resource in _MOVING_OBJECTS or (event.resource in _SELECTING_OBJECTS
                                                 and change.changed):
            self.queue.move_all(f"{event.resource}{event.kind.title()}")
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
        self.queue.move_all("PodDelete")

    def _pod_assigned(self, pod: PodInfo, old: PodInfo | None) -> None:
        """A pod bound (by us or another scheduler) or terminated: not ours to schedule;
        pods parked on such a change are woken."""
        key = pod.key
        self.nominated.pop(key, None)
        if key in self.queue and key not in self.queue.in_flight():
            self.queue.delete(key)
        if pod.terminated and (old is None or not old.terminated):
            # it no longer uses its node: what it held is given back, as on deletion
            self.forget_pod(key)
            self.queue.move_all("PodDelete")
        if old is None or (old.node_name, old.terminated) != (pod.node_name, pod.terminated):
            self.queue.wake_parked(ASSIGNED_POD_UPDATE)

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
            self.queue.update(pod, spec_changed=old is None or old.obj.get("spec") != pod.obj.get(
                "spec"))
            self._nominate(pod, old)
        else:
            self.queue.add(pod)
            queued = self.queue.get(key)
            if queued is not None and queued.queue != GATED:  # kube: once admitted
                self._nominate(pod, old)
            # a new pod can make others schedulable (a gang's last member, affinity)
            self.queue.move_all("PodAdd")

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


def _object_key(event: ClusterEvent) -> str:
    """The key of an event's object, as far as it can be read: "namespace/name" for a pod
    (that of its deletion, which drops the entry), else its name."""
    if event.resource == "Pod":
        try:
            return pod_key(event.obj)
        except ObjectError:
            pass
    return str(event.obj.get("metadata", {}).get("name", "?"))
