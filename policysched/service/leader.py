"""Leader election on a ``coordination.k8s.io/v1`` Lease, so that only one replica binds.

``LeaseLock`` reads, creates and updates the Lease through the process's one API client
(``cluster.transport.Transport``: raw JSON, its limiter, connections and credentials).
``LeaderElector`` runs client-go's acquire / renew cycle (``tryAcquireOrRenew``: a leader
renews optimistically on the Lease it last wrote, falling back to a read; another
candidate takes over only ``leaseDuration`` seconds after it last saw the Lease change;
``leaseTransitions`` counts the changes of holder) in a daemon thread, with stoppable
waits, request time-outs, client-go's jitter, release on ``stop()`` (client-go's
ReleaseOnCancel: an empty holder and a 1 s lease), and an ``is_leader()`` that is computed
from the clock: it turns False ``renewDeadline`` seconds after the last successful renewal
*started*, whatever the thread is doing. Other candidates only take over ``leaseDuration``
(> ``renewDeadline``) seconds after they last saw the Lease change, so two replicas never
both see ``is_leader()`` True (barring clock-rate drift).

The run loop checks ``is_leader()`` before every cycle; ``LeaderOnlyBackend`` checks it
before every bind (and drops every other write), so a replica that lost the Lease
mid-cycle writes nothing.
"""

from __future__ import annotations

import logging
import random
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from ..cluster import kube_messages as km
from ..cluster.connection import ConnectionLog, about_the_object
from ..cluster.kube import micro_time
from ..cluster.transport import ApiError, Transport
from ..framework.backend import (
    Backend,
    BindError,
    BindOutcome,
    BindRequest,
    VolumeBindRequest,
)
from ..model.clock import Clock
from ..model.events import (
    ClusterEvent,
    ConditionStatus,
    EventType,
)
from ..model.objects import PodGroupSpec, PodInfo
from .worker import Worker

DEFAULT_LEASE_NAME: Final = "policysched"
DEFAULT_NAMESPACE: Final = "kube-system"
DEFAULT_LEASE_DURATION: Final = 15
DEFAULT_RENEW_DEADLINE: Final = 10
DEFAULT_RETRY_PERIOD: Final = 2
JITTER_FACTOR: Final = 1.2  # client-go's JitterFactor; the library checks it as well

# User-visible texts.
BAD_DURATIONS: Final = (
    "leaderElection: leaseDurationSeconds ({lease}) must be greater than "
    "renewDeadlineSeconds ({renew}), which must be greater than {jitter} times "
    "retryPeriodSeconds ({retry})")
NOT_LEADER: Final = "not the leader (lease {lease} is held by {holder})"
UNKNOWN_HOLDER: Final = "another replica or nobody"
STARTED_LEADING: Final = "%s: acquired lease %s"
STOPPED_LEADING: Final = "%s: lost lease %s"
RELEASED: Final = "%s: released lease %s"

log = logging.getLogger(__name__)


class LeaderElectionError(ValueError):
    """An unusable leaderElection configuration."""


@dataclass(frozen=True)
class LeaderElectionSettings:
    """The configuration's ``leaderElection`` (kube-scheduler's defaults). Seconds are
    whole numbers: the Lease stores ``leaseDurationSeconds`` as an integer."""

    leader_elect: bool = True
    lease_name: str = DEFAULT_LEASE_NAME
    namespace: str = DEFAULT_NAMESPACE
    lease_duration: int = DEFAULT_LEASE_DURATION
    renew_deadline: int = DEFAULT_RENEW_DEADLINE
    retry_period: int = DEFAULT_RETRY_PERIOD

    @classmethod
    def from_configuration(cls, configuration: Mapping[str, Any] | None,
                           default_namespace: str = DEFAULT_NAMESPACE
                           ) -> LeaderElectionSettings:
        """The settings of ``configuration``; a Lease without a namespace is in
        ``default_namespace``."""
        spec = (configuration or {}).get("leaderElection") or {}
        settings = cls(
            leader_elect=bool(spec.get("leaderElect", True)),
            lease_name=str(spec.get("leaseName", DEFAULT_LEASE_NAME)),
            namespace=str(spec.get("namespace", default_namespace)),
            lease_duration=int(spec.get("leaseDurationSeconds", DEFAULT_LEASE_DURATION)),
            renew_deadline=int(spec.get("renewDeadlineSeconds", DEFAULT_RENEW_DEADLINE)),
            retry_period=int(spec.get("retryPeriodSeconds", DEFAULT_RETRY_PERIOD)),
        )
        settings.validate()
        return settings

    def validate(self) -> None:
        """The library's rules (which it enforces with ``sys.exit``), as an exception."""
        if not (self.lease_duration > self.renew_deadline > JITTER_FACTOR * self.retry_period
                and self.retry_period >= 1):
            raise LeaderElectionError(BAD_DURATIONS.format(
                lease=self.lease_duration, renew=self.renew_deadline, jitter=JITTER_FACTOR,
                retry=self.retry_period))


def default_identity() -> str:
    """``hostname_<random>``, as client-go's ``hostname + "_" + uuid``."""
    return f"{socket.gethostname()}_{secrets.token_hex(6)}"


@dataclass(frozen=True)
class LeaseRecord:
    """A Lease's spec as client-go's ``LeaderElectionRecord`` (times in MicroTime text)."""

    holder: str
    lease_duration: int
    acquire_time: str
    renew_time: str
    transitions: int = 0

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> LeaseRecord:
        return cls(str(spec.get("holderIdentity") or ""),
                   int(spec.get("leaseDurationSeconds") or 0),
                   str(spec.get("acquireTime") or ""), str(spec.get("renewTime") or ""),
                   int(spec.get("leaseTransitions") or 0))

    def spec(self) -> dict[str, Any]:
        return {"holderIdentity": self.holder, "leaseDurationSeconds": self.lease_duration,
                "acquireTime": self.acquire_time, "renewTime": self.renew_time,
                "leaseTransitions": self.transitions}


class LeaseLock:
    """One Lease through ``transport``; client-go's ``LeaseLock``: ``update`` writes over
    the Lease last read or written (its resourceVersion is the precondition). Raises
    ``ApiError``."""

    def __init__(self, transport: Transport, namespace: str, name: str, identity: str,
                 timeout: float) -> None:
        self.transport = transport
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.timeout = (timeout, timeout)
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self._lease: dict[str, Any] | None = None

    def get(self) -> LeaseRecord | None:
        """The Lease's record; None when there is no Lease."""
        try:
            lease = self.transport.call("GET", f"{self.path}/{self.name}",
                                        timeout=self.timeout) or {}
        except ApiError as e:
            if e.status == 404:
                return None
            raise
        self._lease = lease
        return LeaseRecord.from_spec(lease.get("spec") or {})

    def create(self, record: LeaseRecord) -> None:
        self._lease = self.transport.call("POST", self.path, body={
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.spec()}, timeout=self.timeout)

    def update(self, record: LeaseRecord) -> None:
        if self._lease is None:
            self.get()
        lease = dict(self._lease or {})
        lease["spec"] = {**(lease.get("spec") or {}), **record.spec()}
        self._lease = self.transport.call("PUT", f"{self.path}/{self.name}", body=lease,
                                          timeout=self.timeout)


def lease_lock(settings: LeaderElectionSettings, identity: str,
               transport: Transport) -> LeaseLock:
    """The Lease of ``settings``, read and written through ``transport``."""
    return LeaseLock(transport, settings.namespace, settings.lease_name, identity,
                     float(settings.retry_period))


Callback = Callable[[], None]


class LeaderElector(Worker):
    """Campaigns for the Lease in a daemon thread; ``is_leader()`` is safe from any thread.

    After losing the Lease (not after ``stop()``) the elector campaigns again, unless
    ``rejoin=False``: then it ends, as kube-scheduler does (it exits on "leaderelection
    lost" and lets its Deployment restart it with a fresh cache).
    """

    thread_name = "policysched-leader"

    def __init__(self, settings: LeaderElectionSettings, lock: LeaseLock, *,
                 on_started_leading: Callback | None = None,
                 on_stopped_leading: Callback | None = None,
                 rejoin: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        settings.validate()
        self.settings = settings
        self.lock = lock
        self.identity = str(lock.identity)
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.rejoin = rejoin
        self._clock = clock
        self._observed: LeaseRecord | None = None  # the Lease as last read or written
        self._observed_at = float("-inf")  # when it last changed, by ``clock``
        self._leading = threading.Event()
        self._valid_until = 0.0
        self.transitions = 0  # times this elector became leader
        self.connection = ConnectionLog(km.CONNECTION_LEASE.format(
            lease=f"{settings.namespace}/{settings.lease_name}"), log)

    @classmethod
    def for_cluster(cls, settings: LeaderElectionSettings, transport: Transport,
                    identity: str | None = None, **kwargs: Any) -> LeaderElector:
        return cls(settings, lease_lock(settings, identity or default_identity(), transport),
                   **kwargs)

    # -- state --------------------------------------------------------------------------

    def is_leader(self) -> bool:
        """Holding the Lease right now: leading, and the last renewal is recent enough."""
        return self._leading.is_set() and self._clock() < self._valid_until

    @property
    def holder(self) -> str | None:
        """The holder identity last seen on the Lease."""
        return self._observed.holder or None if self._observed is not None else None

    def not_leader_message(self) -> str:
        return NOT_LEADER.format(lease=f"{self.settings.namespace}/{self.settings.lease_name}",
                                 holder=self.holder or UNKNOWN_HOLDER)

    def wait_until_leader(self, timeout: float | None = None) -> bool:
        return self._leading.wait(timeout) and self.is_leader()

    # -- thread (``Worker.stop`` ends the campaign; a leader gives the Lease up) -----------

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if not self._acquire():
                    return
                self._lead()
                if self._stop.is_set() or not self.rejoin:
                    return
        except Exception:  # a bug here must not leave is_leader() True
            log.exception("leader election failed")
            self._leading.clear()

    def _attempt(self) -> bool:
        started = self._clock()
        try:
            ok = self.try_acquire_or_renew()
        except Exception as e:  # the API is unreachable, a request timed out…
            self.connection.failed(e)
            return False
        self.connection.succeeded()
        if ok:
            self._valid_until = started + self.settings.renew_deadline
        return ok

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(max(0.0, seconds))

    def _jittered(self) -> float:
        return self.settings.retry_period * (1 + random.random() * (JITTER_FACTOR - 1))

    def _acquire(self) -> bool:
        while not self._stop.is_set():
            if self._attempt():
                return True
            self._sleep(self._jittered())
        return False

    def _lead(self) -> None:
        self._leading.set()
        self.transitions += 1
        log.info(STARTED_LEADING, self.identity, self.settings.lease_name)
        self._callback(self.on_started_leading)
        while not self._stop.is_set() and self._renew():
            self._sleep(self.settings.retry_period)
        released = self._stop.is_set() and self.is_leader() and self._release()
        self._leading.clear()
        if not released:
            log.info(STOPPED_LEADING, self.identity, self.settings.lease_name)
        self._callback(self.on_stopped_leading)

    def _renew(self) -> bool:
        """Renew, retrying until the deadline; False once the Lease can no longer be
        trusted (or on stop)."""
        while not self._stop.is_set():
            if self._attempt():
                return True
            remaining = self._valid_until - self._clock()
            if remaining <= 0:
                return False
            self._sleep(min(self.settings.retry_period, remaining))
        return self.is_leader()

    def _observe(self, record: LeaseRecord) -> None:
        if record != self._observed:
            self._observed, self._observed_at = record, self._clock()

    def _holds(self) -> bool:
        """The Lease last seen names this candidate (client-go's ``IsLeader``)."""
        return self._observed is not None and self._observed.holder == self.identity

    def _lease_valid(self) -> bool:
        return self._clock() < self._observed_at + self.settings.lease_duration

    def try_acquire_or_renew(self) -> bool:
        """client-go's ``tryAcquireOrRenew``: whether this candidate holds the Lease now.
        Raises ``ApiError`` when the API server cannot be reached (or refuses us)."""
        now = micro_time(time.time())
        mine = LeaseRecord(self.identity, self.settings.lease_duration, now, now)
        try:
            observed = self._observed
            if observed is not None and self._holds() and self._lease_valid():
                # the fast path: renew the Lease as we last wrote it, without reading it
                renewed = replace(mine, acquire_time=observed.acquire_time,
                                  transitions=observed.transitions)
                try:
                    self.lock.update(renewed)
                    self._observed, self._observed_at = renewed, self._clock()
                    return True
                except ApiError as e:
                    if not about_the_object(e):
                        raise
            current = self.lock.get()
            if current is None:
                self.lock.create(mine)
                self._observed, self._observed_at = mine, self._clock()
                return True
            self._observe(current)
            if current.holder and self._lease_valid() and not self._holds():
                return False
            if self._holds():
                mine = replace(mine, acquire_time=current.acquire_time,
                               transitions=current.transitions)
            else:
                mine = replace(mine, transitions=current.transitions + 1)
            self.lock.update(mine)
        except ApiError as e:
            if about_the_object(e):  # another candidate wrote first: not ours this time
                return False
            raise
        self._observed, self._observed_at = mine, self._clock()
        return True

    def _release(self) -> bool:
        """client-go's ReleaseOnCancel: an empty holder and a 1 s lease."""
        try:
            # read it again first: the Lease may have changed since our own renewal
            current = self.lock.get()
            if current is None or current.holder != self.identity:
                return False
            now = micro_time(time.time())
            self.lock.update(LeaseRecord("", 1, now, now, current.transitions))
        except ApiError as e:
            log.debug("lease %s: release failed: %s", self.settings.lease_name, e)
            return False
        log.info(RELEASED, self.identity, self.settings.lease_name)
        return True

    def _callback(self, callback: Callback | None) -> None:
        if callback is None:
            return
        try:
            callback()
        except Exception:
            log.exception("leader election callback failed")


class LeaderOnlyBackend:
    """A ``Backend`` that writes only while ``is_leader()``: ``bind`` raises ``BindError``
    and ``start_bind`` gives a failed outcome (the engine rolls the pod back and requeues
    it); the other writes (evictions, patches, conditions, events) are dropped, since the
    engine does not expect them to fail and the new leader redoes them. Events from the
    cluster still flow. (Binds already handed over when the lease is lost finish or are
    abandoned by the backend's ``close``; the API server refuses to bind a pod twice.)"""

    def __init__(self, backend: Backend, is_leader: Callable[[], bool],
                 reason: Callable[[], str]) -> None:
        self.backend = backend
        self.is_leader = is_leader
        self.reason = reason
        self.dropped = 0  # writes dropped because the Lease was not held
        self._refused: list[BindOutcome] = []  # binds refused without the Lease

    def _may_write(self) -> bool:
        if self.is_leader():
            return True
        self.dropped += 1
        return False

    @property
    def clock(self) -> Clock:
        return self.backend.clock

    def drain_events(self) -> list[ClusterEvent]:
        return self.backend.drain_events()

    def bind(self, pod: PodInfo, node_name: str) -> None:
        if not self.is_leader():
            raise BindError(self.reason())
        self.backend.bind(pod, node_name)

    def start_bind(self, request: BindRequest) -> None:
        if not self.is_leader():
            self._refused.append(BindOutcome(request, BindError(self.reason())))
            return
        self.backend.start_bind(request)

    def drain_bind_outcomes(self) -> list[BindOutcome]:
        refused, self._refused = self._refused, []
        return refused + self.backend.drain_bind_outcomes()

    def bind_volumes(self, pod: PodInfo, volumes: VolumeBindRequest) -> None:
        if not self.is_leader():
            raise BindError(self.reason())
        self.backend.bind_volumes(pod, volumes)

    def evict(self, pod: PodInfo, message: str) -> None:
        if self._may_write():
            self.backend.evict(pod, message)

    def patch_pod_metadata(self, pod: PodInfo, labels: Mapping[str, str | None],
                           annotations: Mapping[str, str | None]) -> None:
        if self._may_write():
            self.backend.patch_pod_metadata(pod, labels, annotations)

    def set_nominated_node(self, pod: PodInfo, node_name: str | None) -> None:
        if self._may_write():
            self.backend.set_nominated_node(pod, node_name)

    def record_event(self, pod: PodInfo, type: EventType, reason: str, message: str,
                     action: str | None = None) -> None:
        if self._may_write():
            self.backend.record_event(pod, type, reason, message, action)

    def set_pod_condition(self, pod: PodInfo, status: ConditionStatus, reason: str,
                          message: str) -> None:
        if self._may_write():
            self.backend.set_pod_condition(pod, status, reason, message)

    def pod_groups(self) -> dict[str, PodGroupSpec]:
        return self.backend.pod_groups()

    def __getattr__(self, name: str) -> Any:  # the wrapped backend's extras (start, synced…)
        return getattr(self.backend, name)


__all__ = [
    "LeaderElectionError",
    "LeaderElectionSettings",
    "LeaderElector",
    "LeaderOnlyBackend",
    "LeaseLock",
    "LeaseRecord",
    "default_identity",
    "lease_lock",
]
