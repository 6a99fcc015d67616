"""Leader election on a ``coordination.k8s.io/v1`` Lease, so that only one replica binds.

The Lease read/create/update and the take-over rule come from the ``kubernetes`` package
(``kubernetes.leaderelection``: ``LeaseLock`` and ``LeaderElection.try_acquire_or_renew``).
Its ``LeaderElection.run`` is not used as is, because it

* cannot be stopped (its loops ``time.sleep`` forever) and never releases the Lease;
* says nothing about *now*: while its renew loop retries for up to ``renewDeadline``, the
  caller cannot tell whether the Lease still protects it, and a hung request (the client
  sets no timeout) blocks it indefinitely;
* builds its own API client from the global configuration and calls ``sys.exit`` on a bad
  configuration.

``LeaderElector`` runs the same acquire / renew cycle in a daemon thread, with stoppable
waits, request time-outs, client-go's jitter, release on ``stop()``, and an ``is_leader()``
that is computed from the clock: it turns False ``renewDeadline`` seconds after the last
successful renewal *started*, whatever the thread is doing. Other candidates only take over
``leaseDuration`` (> ``renewDeadline``) seconds after they last saw the Lease change, so two
replicas never both see ``is_leader()`` True (barring clock-rate drift).

The run loop checks ``is_leader()`` before every cycle; ``LeaderOnlyBackend`` checks it
before every bind (and drops every other write), so a replica that lost the Lease
mid-cycle writes nothing.
"""

from __future__ import annotations

import datetime
import logging
import random
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kubernetes import client
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.leaderelectionrecord import LeaderElectionRecord
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

from ..cluster import kube_messages as km
from ..cluster.connection import ConnectionLog
from ..framework.backend import (
    Backend,
    BindError,
    BindOutcome,
    BindRequest,
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
logging.getLogger("leaderelection").setLevel(logging.WARNING)  # the library logs each retry


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


class _TimedCoordinationApi(client.CoordinationV1Api):
    """The Lease calls ``LeaseLock`` makes, on our API client, with a request time-out."""

    def __init__(self, api_client: Any, timeout: float) -> None:
        super().__init__(api_client)
        self._timeout = timeout

    def read_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("_request_timeout", self._timeout)
        return super().read_namespaced_lease(*args, **kwargs)

    def create_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("_request_timeout", self._timeout)
        return super().create_namespaced_lease(*args, **kwargs)

    def replace_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("_request_timeout", self._timeout)
        return super().replace_namespaced_lease(*args, **kwargs)


def lease_lock(settings: LeaderElectionSettings, identity: str, api_client: Any) -> LeaseLock:
    """The library's ``LeaseLock``, talking through ``api_client``."""
    lock = LeaseLock(settings.lease_name, settings.namespace, identity)
    lock.api_instance = _TimedCoordinationApi(api_client, float(settings.retry_period))
    return lock


Callback = Callable[[], None]


class LeaderElector(Worker):
    """Campaigns for the Lease in a daemon thread; ``is_leader()`` is safe from any thread.

    After losing the Lease (not after ``stop()``) the elector campaigns again, unless
    ``rejoin=False``: then it ends, as kube-scheduler does (it exits on "leaderelection
    lost" and lets its Deployment restart it with a fresh cache).
    """

    thread_name = "policysched-leader"

    def __init__(self, settings: LeaderElectionSettings, lock: Any, *,
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
        self._election = leaderelection.LeaderElection(electionconfig.Config(
            lock, settings.lease_duration, settings.renew_deadline, settings.retry_period,
            onstarted_leading=lambda: None, onstopped_leading=lambda: None))
        self._leading = threading.Event()
        self._valid_until = 0.0
        self.transitions = 0  # times this elector became leader
        self.connection = ConnectionLog(km.CONNECTION_LEASE.format(
            lease=f"{settings.namespace}/{settings.lease_name}"), log)

    @classmethod
    def for_cluster(cls, settings: LeaderElectionSettings, api_client: Any,
                    identity: str | None = None, **kwargs: Any) -> LeaderElector:
        return cls(settings, lease_lock(settings, identity or default_identity(), api_client),
                   **kwargs)

    # -- state --------------------------------------------------------------------------

    def is_leader(self) -> bool:
        """Holding the Lease right now: leading, and the last renewal is recent enough."""
        return self._leading.is_set() and self._clock() < self._valid_until

    @property
    def holder(self) -> str | None:
        """The holder identity last seen on the Lease."""
        record = self._election.observed_record
        return getattr(record, "holder_identity", None) or None

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
            ok = bool(self._election.try_acquire_or_renew())
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

    def _release(self) -> bool:
        """client-go's ReleaseOnCancel: an empty holder and a 1 s lease."""
        now = str(datetime.datetime.now())
        record = LeaderElectionRecord("", "1", now, now)
        try:
            # LeaseLock.update replaces the Lease it last read (its replies are dropped), so
            # read it again first: after our own renewal its resourceVersion is stale.
            found, current = self.lock.get(self.lock.name, self.lock.namespace)
            if not found or getattr(current, "holder_identity", None) != self.identity:
                return False
            ok = bool(self.lock.update(self.lock.name, self.lock.namespace, record))
        except Exception as e:
            log.debug("lease %s: release failed: %s", self.settings.lease_name, e)
            return False
        if ok:
            log.info(RELEASED, self.identity, self.settings.lease_name)
        return ok

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

    def record_event(self, pod: PodInfo, type: EventType, reason: str, message: str) -> None:
        if self._may_write():
            self.backend.record_event(pod, type, reason, message)

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
    "default_identity",
    "lease_lock",
]
