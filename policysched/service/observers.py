"""What the service loop reports to the metrics, the health checks and the log: the end of
each scheduling attempt (``Attempt``) and the loop's life (``RunObserver``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..cluster import kube_messages as km
from ..framework.audit import AuditFinding
from ..framework.scheduler import RESULT_ERROR, RESULT_SCHEDULED, AttemptEnd, Scheduler

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Attempt:
    """The end of one scheduling attempt of one pod (the engine's ``AttemptEnd``, with
    the pod's record)."""

    pod: str  # "namespace/name"
    profile: str  # the pod's schedulerName
    result: str  # framework.scheduler's RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, RESULT_ERROR
    node: str | None  # where it was bound (scheduled only)
    message: str  # why not (unschedulable, error)
    attempts: int  # attempts so far, this one included
    duration: float  # seconds since the attempt began (scheduling, permit wait, binding)
    in_queue: float | None  # seconds since the pod entered the queue (scheduled: the SLI)

    @classmethod
    def of(cls, end: AttemptEnd, scheduler: Scheduler) -> Attempt:
        """The attempt ``scheduler`` reported ending just now; the pod's record adds its
        attempts and its time in the queue."""
        record = scheduler.records.get(end.pod.key)
        first_seen = record.first_seen if record is not None else None
        return cls(pod=end.pod.key, profile=end.profile, result=end.result, node=end.node,
                   message=end.message, attempts=record.attempts if record is not None else 1,
                   duration=time.perf_counter() - end.started,
                   in_queue=None if first_seen is None
                   else max(0.0, scheduler.clock.now() - first_seen))


class RunObserver:
    """What the loop reports. Subclass and override what you need (all no-ops here)."""

    def on_leading(self, leading: bool) -> None:
        """Leadership changed (always True first when there is no leader election)."""

    def on_synced(self, seconds: float, nodes: int, pods: int) -> None:
        """A fresh cache finished its initial list, ``seconds`` after the backend started."""

    def on_attempt(self, attempt: Attempt) -> None:
        """A scheduling attempt ended."""

    def on_audit(self, profile: str, finding: AuditFinding) -> None:
        """An audited rule of ``profile`` would have changed a decision."""

    def on_loop(self, scheduler: Scheduler | None) -> None:
        """Heartbeat, at least every LOOP_WAIT_CAP seconds; ``scheduler`` is None while not
        leading or not synced (e.g. read ``scheduler.queue.pending()``)."""

    def on_profiles(self, profiles: Sequence[str]) -> None:
        """A new policy set became active."""

    def on_error(self, error: BaseException) -> None:
        """The loop or the engine recovered from an unexpected error (a pod's cycle or an
        event that raised: the pod was requeued with an event, the others went on)."""


class LogObserver(RunObserver):
    """Logs each attempt: an erring one at every verbosity (info: an API outage is
    reported once per client by the connection logs, not once per pod), a binding or an
    unschedulable pod only with ``-v 1`` and more (kube-scheduler's V(2)); at the default
    verbosity each pod's outcome is in its Events."""

    def on_attempt(self, attempt: Attempt) -> None:
        if attempt.result == RESULT_SCHEDULED:
            queued = (attempt.in_queue or 0.0) * 1000
            log.debug(km.LOG_BOUND, attempt.pod, attempt.node, attempt.attempts, queued)
        else:
            log.log(logging.INFO if attempt.result == RESULT_ERROR else logging.DEBUG,
                    km.LOG_FAILED, attempt.pod, attempt.attempts, attempt.result,
                    attempt.message)
