"""The contract between the framework engine and a cluster: the only thing the engine knows
about where it runs (``policysched.cluster``: the in-process ``MemoryBackend``, the API
server's ``KubeBackend``).

Data flows one way: the backend's events feed the cache, the engine decides from a
snapshot, and its decisions go back through these calls; their effects come back as events
(a successful ``bind`` is followed by a MODIFIED event of the bound pod).

Binds are handed over, not waited for (kube-scheduler's binding goroutines): the engine
calls ``start_bind`` and later collects ``BindOutcome``s with ``drain_bind_outcomes``. A
backend may complete the bind before ``start_bind`` returns (``MemoryBackend``, which keeps
simulations deterministic) or on threads of its own (``KubeBackend``); either way every
request has exactly one outcome, drained on the engine's thread.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..model.clock import Clock
from ..model.events import ClusterEvent, ConditionStatus, EventType
from ..model.objects import PodGroupSpec, PodInfo
from ..model.volume_binding import VolumeAssumption


class BackendError(Exception):
    """A call the cluster refused (the pod is gone, the object does not exist…)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BindError(BackendError):
    """A bind that conflicts with the cluster: the pod is already bound, the pod or the node
    is gone."""


@dataclass(frozen=True)
class VolumeBindRequest:
    """The volume bindings reserve assumed for a pod, to write before its bind (kube's
    VolumeBinding PreBind): each static binding's PersistentVolume gets the claim as its
    claimRef, each claim to provision the selected-node annotation; then the bind waits
    at most ``timeout`` seconds for every claim to be bound."""

    assumptions: tuple[VolumeAssumption, ...]
    timeout: float


@dataclass(frozen=True, eq=False)
class BindRequest:
    """One bind handed to a backend: ``pod`` to ``node_name``, after writing its
    ``volumes`` (when preBind asked for it) and merging preBind's ``labels`` and
    ``annotations`` into the pod's (None removes a key). Compared by identity: its outcome
    carries the very same object."""

    pod: PodInfo
    node_name: str
    labels: Mapping[str, str | None] = field(default_factory=dict)
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    volumes: VolumeBindRequest | None = None


@dataclass(frozen=True)
class BindOutcome:
    """How a ``BindRequest`` ended: ``error`` is None when the pod was bound; ``seconds``
    is how long the bind call took (the Bind extension point's duration)."""

    request: BindRequest
    error: BackendError | None
    seconds: float = 0.0


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
        """Bind ``pod`` to ``node_name`` and wait for it; raises ``BindError`` on
        conflict."""
        ...

    def start_bind(self, request: BindRequest) -> None:
        """Hand over a bind (metadata patch first, then the bind: ``run_bind``). It may be
        done before this returns or later; it blocks while the backend's bound on binds in
        flight is reached. Never raises for the bind's own failure: that is an outcome."""
        ...

    def drain_bind_outcomes(self) -> list[BindOutcome]:
        """The outcomes of started binds since the last call, in completion order."""
        ...

    def bind_volumes(self, pod: PodInfo, volumes: VolumeBindRequest) -> None:
        """Write the pod's volume bindings (claimRef and the bound-by-controller annotation
        on each PersistentVolume, the selected-node annotation on each claim to provision)
        and wait until every claim is bound (a volume name and the bind-completed
        annotation), at most ``volumes.timeout`` seconds; raises ``BackendError`` on a
        failed write, a binding undone, or the time-out."""
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

    def record_event(self, pod: PodInfo, type: EventType, reason: str, message: str,
                     action: str | None = None) -> None:
        """Record an Event about ``pod`` (reasons: Scheduled, FailedScheduling,
        Preempted…). ``action`` (events.k8s.io's; by default the reason's) is part of what
        makes two events one series: a different action keeps them apart."""
        ...

    def set_pod_condition(
        self, pod: PodInfo, status: ConditionStatus, reason: str, message: str
    ) -> None:
        """Set the pod's PodScheduled condition."""
        ...

    def pod_groups(self) -> dict[str, PodGroupSpec]:
        """Every PodGroup by "namespace/name"."""
        ...


def run_bind(backend: Backend, request: BindRequest) -> BindOutcome:
    """Carry out ``request`` with ``backend``'s synchronous calls: write the volume
    bindings and wait for them, patch the pod's metadata (when preBind asked for either),
    then bind. A ``BackendError`` becomes the outcome's error; ``seconds`` times the bind
    call alone."""
    pod = request.pod
    started = time.perf_counter()
    try:
        if request.volumes is not None:
            backend.bind_volumes(pod, request.volumes)
            started = time.perf_counter()
        if request.labels or request.annotations:
            backend.patch_pod_metadata(pod, request.labels, request.annotations)
            started = time.perf_counter()
        backend.bind(pod, request.node_name)
    except BackendError as e:
        return BindOutcome(request, e, time.perf_counter() - started)
    return BindOutcome(request, None, time.perf_counter() - started)
