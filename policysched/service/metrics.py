"""Prometheus metrics of one policysched process, named like kube-scheduler's.

Each ``SchedulerMetrics`` owns its own ``CollectorRegistry`` (never the global one), so
several loops — or several tests — in one process never collide. The run loop, the
engine and the reloader report through the ``on_*`` / ``set_*`` methods; ``/metrics``
serves ``exposition()``.

kube-scheduler names kept (same labels and values):

* ``scheduler_schedule_attempts_total{result, profile}`` — result: scheduled,
  unschedulable, error;
* ``scheduler_scheduling_attempt_duration_seconds{result, profile}``;
* ``scheduler_pending_pods{queue}`` — queue: active, backoff, unschedulable, gated;
* ``scheduler_framework_extension_point_duration_seconds{extension_point, status, profile}``;
* ``scheduler_pod_scheduling_sli_duration_seconds{attempts}``;
* ``scheduler_goroutines{operation="binding"}`` — binds in flight (as kube-scheduler
  counts its binding goroutines);
* ``leader_election_master_status{name}``.

Ours: ``policysched_audit_findings_total{profile, policy, rule, extension_point, reason}``
— what audited rules (``enforcement: Audit``) would have changed, reason one of
``framework.audit.RESULTS`` (Rejected, NodesRejected, Waited, ScoreChanged, ChoiceChanged,
Error: never a rule's own text, nor a pod's or node's name, so the series are bounded by the
audited rules); ``policysched_policy_reloads_total{result}`` (success, failure),
``policysched_active_policy_set_info{version}`` (1 for the active set's version),
``policysched_policy_reload_duration_seconds`` (change observed → set active).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from ..framework.audit import AuditFinding
from ..framework.queue import PENDING_QUEUES
from ..framework.scheduler import RESULT_ERROR, RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, Scheduler
from .observers import Attempt, RunObserver

ATTEMPT_RESULTS: Final = (RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, RESULT_ERROR)

RELOAD_SUCCESS: Final = "success"
RELOAD_FAILURE: Final = "failure"

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """client_golang's ``prometheus.ExponentialBuckets``."""
    return tuple(start * factor**i for i in range(count))


# kube-scheduler's buckets (pkg/scheduler/metrics/metrics.go).
ATTEMPT_BUCKETS: Final = exponential_buckets(0.001, 2, 15)  # 1 ms .. 16 s
EXTENSION_POINT_BUCKETS: Final = exponential_buckets(0.0001, 2, 12)  # 0.1 ms .. 200 ms
SLI_BUCKETS: Final = exponential_buckets(0.01, 2, 20)  # 10 ms .. ~1.5 h
RELOAD_BUCKETS: Final = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
OPERATION_BINDING: Final = "binding"
SLI_MAX_ATTEMPTS_LABEL: Final = 15  # kube caps the label the same way ("15+" is 15)


class SchedulerMetrics:
    """The metrics of one process or loop, in a registry of their own. Thread-safe."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts", "Number of attempts to schedule pods, by the "
            "result. 'unschedulable' means a pod could not be scheduled, while 'error' means "
            "an internal scheduler problem.", ["result", "profile"], registry=r)
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds", "Scheduling attempt latency in "
            "seconds (scheduling algorithm + binding)", ["result", "profile"],
            buckets=ATTEMPT_BUCKETS, registry=r)
        self.pending_pods = Gauge(
            "scheduler_pending_pods", "Number of pending pods, by the queue type. 'active' "
            "means number of pods in activeQ; 'backoff' means number of pods in backoffQ; "
            "'unschedulable' means number of pods in unschedulablePods; 'gated' means number "
            "of pods gated by preEnqueue.", ["queue"], registry=r)
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds", "Latency for running all "
            "policies of a specific extension point.", ["extension_point", "status",
                                                        "profile"],
            buckets=EXTENSION_POINT_BUCKETS, registry=r)
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds", "E2e latency for a pod being "
            "scheduled, from the time the pod enters the scheduling queue and might involve "
            "multiple scheduling attempts.", ["attempts"], buckets=SLI_BUCKETS, registry=r)
        self.goroutines = Gauge(
            "scheduler_goroutines", "Number of running goroutines split by the work they do "
            "such as binding (here: binds in flight).", ["operation"], registry=r)
        self.leader = Gauge(
            "leader_election_master_status", "Gauge of if the reporting system is master of "
            "the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the "
            "string used to identify the lease.", ["name"], registry=r)
        self.audit_findings = Counter(
            "policysched_audit_findings", "What rules in audit mode would have changed, by "
            "profile, policy, rule, extension point and reason: 'Rejected' the pod, "
            "'NodesRejected' some feasible nodes, 'Waited' at permit, 'ScoreChanged' the "
            "totals, 'ChoiceChanged' the node with the highest total, 'Error' failed to "
            "evaluate. The pod was scheduled as if the rule were absent.",
            ["profile", "policy", "rule", "extension_point", "reason"], registry=r)
        self.reloads = Counter(
            "policysched_policy_reloads", "Policy set reloads, by result: 'success' means a "
            "new set became active, 'failure' that a change was rejected and the last good "
            "set stayed active.", ["result"], registry=r)
        self.active_set = Gauge(
            "policysched_active_policy_set_info", "The version (content hash) of the active "
            "policy set; the value is always 1.", ["version"], registry=r)
        self.reload_duration = Histogram(
            "policysched_policy_reload_duration_seconds", "Seconds from a policy change being "
            "observed (a ConfigMap's new resourceVersion, a file's new mtime) to the new set "
            "being active.", buckets=RELOAD_BUCKETS, registry=r)
        self._lock = threading.Lock()
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        self._active_version: str | None = None
        for queue in PENDING_QUEUES:
            self.pending_pods.labels(queue).set(0)
        self.goroutines.labels(OPERATION_BINDING).set(0)
        for result in (RELOAD_SUCCESS, RELOAD_FAILURE):
            self.reloads.labels(result)

    # -- scheduling -------------------------------------------------------------------------

    def _child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, looked up once: the scheduling cycle records
        several samples per pod, and every label set here is bounded (profiles, points,
        codes, results)."""
        key = (id(metric), labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    def on_attempt(self, profile: str, result: str, seconds: float) -> None:
        """One scheduling attempt ended with ``result`` (one of ``ATTEMPT_RESULTS``)."""
        self._child(self.schedule_attempts, result, profile).inc()
        self._child(self.attempt_duration, result, profile).observe(seconds)

    def on_extension_point(self, profile: str, extension_point: str, status: str,
                           seconds: float) -> None:
        """One run of an extension point (``status`` is a ``Code`` value, e.g. Success)."""
        self._child(self.extension_point_duration, extension_point, status,
                    profile).observe(seconds)

    def on_pod_scheduled(self, attempts: int, seconds: float) -> None:
        """A pod was bound ``seconds`` after it entered the queue, after ``attempts``."""
        label = str(min(max(attempts, 1), SLI_MAX_ATTEMPTS_LABEL))
        self._child(self.sli_duration, label).observe(seconds)

    def on_audit(self, profile: str, finding: AuditFinding) -> None:
        """An audited rule would have changed a decision (``framework.audit``)."""
        self.audit_findings.labels(profile, finding.policy, finding.rule_name,
                                   finding.point.value, finding.result).inc()

    def set_pending(self, counts: Mapping[str, int]) -> None:
        """Refresh ``scheduler_pending_pods`` from ``SchedulingQueue.pending()``."""
        for queue in PENDING_QUEUES:
            self.pending_pods.labels(queue).set(counts.get(queue, 0))

    def set_binding(self, in_flight: int) -> None:
        """Refresh ``scheduler_goroutines{operation="binding"}``: binds in flight."""
        self.goroutines.labels(OPERATION_BINDING).set(in_flight)

    def set_leader(self, lease: str, leading: bool) -> None:
        self.leader.labels(lease).set(1 if leading else 0)

    # -- policy reloads ---------------------------------------------------------------------

    def on_reload(self, result: str, seconds: float | None = None) -> None:
        """A reload ended with ``result`` (success, failure); ``seconds`` from the change
        being observed to the new set being active, when known."""
        self.reloads.labels(result).inc()
        if seconds is not None:
            self.reload_duration.observe(seconds)

    def set_active_version(self, version: str) -> None:
        """The policy set now active (the initial one included)."""
        with self._lock:
            if self._active_version is not None and self._active_version != version:
                self.active_set.remove(self._active_version)
            self._active_version = version
            self.active_set.labels(version).set(1)

    @property
    def active_version(self) -> str | None:
        return self._active_version

    # -- exposition -------------------------------------------------------------------------

    def exposition(self) -> bytes:
        """The text exposition format of every metric of this registry."""
        return generate_latest(self.registry)


class MetricsObserver(RunObserver):
    """Feeds ``SchedulerMetrics`` from the run loop: attempts (and the SLI of bound pods),
    pending pods at every loop tick, and leadership of ``lease`` ("namespace/name")."""

    def __init__(self, metrics: SchedulerMetrics, lease: str | None = None) -> None:
        self.metrics = metrics
        self.lease = lease
        if lease is not None:  # a standby reports 0 from the start
            metrics.set_leader(lease, False)

    def on_attempt(self, attempt: Attempt) -> None:
        self.metrics.on_attempt(attempt.profile, attempt.result, attempt.duration)
        if attempt.result == RESULT_SCHEDULED and attempt.in_queue is not None:
            self.metrics.on_pod_scheduled(attempt.attempts, attempt.in_queue)

    def on_audit(self, profile: str, finding: AuditFinding) -> None:
        self.metrics.on_audit(profile, finding)

    def on_loop(self, scheduler: Scheduler | None) -> None:
        self.metrics.set_pending(scheduler.queue.pending() if scheduler is not None else {})
        self.metrics.set_binding(len(scheduler.binds_in_flight) if scheduler is not None else 0)

    def on_leading(self, leading: bool) -> None:
        if self.lease is not None:
            self.metrics.set_leader(self.lease, leading)


__all__ = [
    "ATTEMPT_RESULTS",
    "CONTENT_TYPE",
    "RELOAD_FAILURE",
    "RELOAD_SUCCESS",
    "RESULT_ERROR",
    "RESULT_SCHEDULED",
    "RESULT_UNSCHEDULABLE",
    "MetricsObserver",
    "SchedulerMetrics",
    "exponential_buckets",
]
