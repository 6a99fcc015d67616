"""The contract between the framework engine and a cluster: the only thing the engine knows
about where it runs (the in-process ``MemoryBackend`` now, a Kubernetes API backend later).

Data flows one way: the backend's events feed the cache, the engine decides from a
snapshot, and its decisions go back through these calls; their effects come back as events
(a successful ``bind`` is followed by a MODIFIED event of the bound pod).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .clock import Clock

if TYPE_CHECKING:  # the cache imports this package's messages: no import cycle at run time
    from ..cache.objects import PodGroupSpec, PodInfo

EventKind = Literal["ADDED", "MODIFIED", "DELETED"]
Resource = Literal["Node", "Pod", "PodGroup"]
EventType = Literal["Normal", "Warning"]
ConditionStatus = Literal["True", "False", "Unknown"]

@dataclass(frozen=True)
class ClusterEvent:
    """One change of one object, as a watch reports it. ``obj`` is the object after the
    change (for DELETED: its last state); it belongs to the receiver."""

    kind: EventKind
    resource: Resource
    obj: dict[str, Any]


class BackendError(Exception):
    """A call the cluster refused (the pod is gone, the object does not exist…)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BindError(BackendError):
    """A bind that conflicts with the cluster: the pod is already bound, the pod or the node
    is gone."""


class Backend(Protocol):
    """A cluster the engine schedules for. Calls that change a pod raise ``BackendError``
    when it no longer exists (or was recreated with another uid)."""

    @property
    def clock(self) -> Clock: ...

    def drain_events(self) -> list[ClusterEvent]:
        """The events since the last call, oldest first (the engine pulls between
        cycles)."""
        ...

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """Bind ``pod`` to ``node_name``; raises ``BindError`` on conflict."""
        ...

    def evict(self, pod: PodInfo, message: str) -> None:
        """Delete a preemption victim; ``message`` says why (it goes on the pod's
        DisruptionTarget condition)."""
        ...

    def patch_pod_metadata(
        self,
        pod: PodInfo,
        labels: Mapping[str, str | None],
        annotations: Mapping[str, str | None],
    ) -> None:
        """Merge ``labels`` and ``annotations`` into the pod's (None removes a key)."""
        ...

    def set_nominated_node(self, pod: PodInfo, node_name: str | None) -> None:
        """Set ``status.nominatedNodeName`` (None clears it)."""
        ...

    def record_event(self, pod: PodInfo, type: EventType, reason: str, message: str) -> None:
        """Record an Event about ``pod`` (reasons: Scheduled, FailedScheduling,
        Preempted…)."""
        ...

    def set_pod_condition(
        self, pod: PodInfo, status: ConditionStatus, reason: str, message: str
    ) -> None:
        """Set the pod's PodScheduled condition."""
        ...

    def pod_groups(self) -> dict[str, PodGroupSpec]:
        """Every PodGroup by "namespace/name"."""
        ...
