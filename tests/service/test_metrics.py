"""Metrics: names and labels like kube-scheduler's, one registry per instance."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from policysched.service.metrics import (
    RELOAD_FAILURE,
    RELOAD_SUCCESS,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    SchedulerMetrics,
    exponential_buckets,
)


def samples(metrics: SchedulerMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.exposition().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(metrics: SchedulerMetrics, metric: str, **labels: str) -> float | None:
    return samples(metrics).get((metric, tuple(sorted(labels.items()))))


def test_attempts_and_their_duration_by_result_and_profile() -> None:
    m = SchedulerMetrics()
    m.on_attempt("policysched", RESULT_SCHEDULED, 0.004)
    m.on_attempt("policysched", RESULT_SCHEDULED, 0.002)
    m.on_attempt("other", RESULT_UNSCHEDULABLE, 0.5)
    assert value(m, "scheduler_schedule_attempts_total", result="scheduled",
                 profile="policysched") == 2
    assert value(m, "scheduler_schedule_attempts_total", result="unschedulable",
                 profile="other") == 1
    assert value(m, "scheduler_scheduling_attempt_duration_seconds_count",
                 result="scheduled", profile="policysched") == 2
    assert value(m, "scheduler_scheduling_attempt_duration_seconds_bucket",
                 result="scheduled", profile="policysched", le="0.004") == 2
    assert value(m, "scheduler_scheduling_attempt_duration_seconds_bucket",
                 result="scheduled", profile="policysched", le="0.002") == 1


def test_pending_pods_per_queue_start_at_zero_and_follow_the_queue() -> None:
    m = SchedulerMetrics()
    for queue in ("active", "backoff", "unschedulable", "gated"):
        assert value(m, "scheduler_pending_pods", queue=queue) == 0
    m.set_pending({"active": 3, "backoff": 1, "unschedulable": 2, "gated": 0})
    assert value(m, "scheduler_pending_pods", queue="active") == 3
    m.set_pending({"active": 0})
    assert value(m, "scheduler_pending_pods", queue="unschedulable") == 0


def test_binds_in_flight_are_binding_goroutines() -> None:
    m = SchedulerMetrics()
    assert value(m, "scheduler_goroutines", operation="binding") == 0
    m.set_binding(5)
    assert value(m, "scheduler_goroutines", operation="binding") == 5


def test_extension_points_sli_and_leader() -> None:
    m = SchedulerMetrics()
    m.on_extension_point("policysched", "Filter", "Success", 0.0002)
    m.on_pod_scheduled(1, 0.3)
    m.on_pod_scheduled(40, 9.0)  # the attempts label is capped at 15, as kube does
    m.set_leader("kube-system/policysched", True)
    assert value(m, "scheduler_framework_extension_point_duration_seconds_count",
                 extension_point="Filter", status="Success", profile="policysched") == 1
    assert value(m, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") == 1
    assert value(m, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="15") == 1
    assert value(m, "leader_election_master_status", name="kube-system/policysched") == 1


def test_reloads_and_the_active_version() -> None:
    m = SchedulerMetrics()
    assert value(m, "policysched_policy_reloads_total", result=RELOAD_SUCCESS) == 0
    m.set_active_version("aaaa")
    m.on_reload(RELOAD_SUCCESS, 0.12)
    m.on_reload(RELOAD_FAILURE)
    m.set_active_version("bbbb")
    assert value(m, "policysched_policy_reloads_total", result=RELOAD_SUCCESS) == 1
    assert value(m, "policysched_policy_reloads_total", result=RELOAD_FAILURE) == 1
    assert value(m, "policysched_policy_reload_duration_seconds_count") == 1
    assert value(m, "policysched_active_policy_set_info", version="bbbb") == 1
    assert value(m, "policysched_active_policy_set_info", version="aaaa") is None
    assert m.active_version == "bbbb"


def test_registries_are_separate() -> None:
    a, b = SchedulerMetrics(), SchedulerMetrics()  # would raise on a shared registry
    a.on_attempt("p", RESULT_SCHEDULED, 0.01)
    assert value(a, "scheduler_schedule_attempts_total", result="scheduled", profile="p") == 1
    assert value(b, "scheduler_schedule_attempts_total", result="scheduled", profile="p") is None


def test_exponential_buckets_match_client_golang() -> None:
    assert exponential_buckets(0.001, 2, 3) == (0.001, 0.002, 0.004)


def test_audit_findings_by_policy_rule_point_and_reason_never_by_pod() -> None:
    from policysched.framework import audit
    from policysched.policy import ExtensionPoint
    from policysched.service.metrics import MetricsObserver

    m = SchedulerMetrics()
    observer = MetricsObserver(m)
    finding = audit.AuditFinding("trial/nowhere", "trial", "nowhere", ExtensionPoint.FILTER,
                                 audit.REJECTED, "would have rejected every feasible node "
                                 "(3): 3 node(s) refused on node-7 for pod web-1")
    for _ in range(3):
        observer.on_audit("policysched", finding)
    labels = {"profile": "policysched", "policy": "trial", "rule": "nowhere",
              "extension_point": "filter", "reason": "Rejected"}
    assert value(m, "policysched_audit_findings_total", **labels) == 3
    # the message (which may name nodes and pods) is in no label
    audit_samples = [k for k in samples(m) if k[0].startswith("policysched_audit")]
    assert all("web-1" not in str(k) and "node-7" not in str(k) for k in audit_samples)
