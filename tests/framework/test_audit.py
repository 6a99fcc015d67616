"""Audit rules (framework/audit.py): evaluated where they would run, deciding nothing."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path
from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend, RecordedEvent
from policysched.framework import audit
from policysched.framework.audit import AuditEvents, AuditFinding
from policysched.framework.profiles import Engine
from policysched.framework.scheduler import SCALAR, VECTORISED, Scheduler
from policysched.model.clock import SimulatedClock
from policysched.policy import ExtensionPoint

from ..cache.objects_builder import make_node, make_pod
from . import engine_with, run

NOW = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.UTC).timestamp()
TIERS = [VECTORISED, SCALAR]

# node-a is the only one with an SSD, node-c the biggest (least-allocated prefers it)
NODES = [
    make_node("node-a", cpu="4") | {"metadata": {"name": "node-a", "labels": {"disk": "ssd"}}},
    make_node("node-b", cpu="4"),
    make_node("node-c", cpu="16"),
]

SSD_FILTER = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: try
spec:
  enforcement: {enforcement}
  filter:
  - name: needs-ssd
    expression: node.labels[?'disk'].orValue('') == 'ssd'
    reason: node(s) without an SSD
"""

NOWHERE = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: try
spec:
  filter:
  - name: nowhere
    enforcement: Audit
    expression: "false"
    reason: node(s) refused by the trial
"""

PREFER_SSD = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: try
spec:
  score:
  - name: prefer-ssd
    enforcement: Audit
    expression: "node.labels[?'disk'].orValue('') == 'ssd' ? 100 : 0"
    weight: 5
"""

POD_LEVEL = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: try
spec:
  enforcement: Audit
  preEnqueue:
  - name: has-team
    expression: "'team' in pod.labels"
    message: pods need a team label
  preFilter:
  - name: small
    expression: pod.requests[?'cpu'].orValue(0) <= 100
    message: too big for the trial
  permit:
  - name: deny
    expression: "false"
    message: not yet
  - name: hold
    expression: "false"
    onFalse: Wait
    timeoutSeconds: 30
"""


ABSENT = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: try
spec: {}
"""


def engine(tmp_path: Path, policies: str, tier: str = VECTORISED) -> Engine:
    """node-resources-fit and ``policies`` (ABSENT: none, the rules under audit absent)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    found = engine_with(tmp_path, policies)
    return dataclasses.replace(found, settings=dataclasses.replace(found.settings,
                                                                   evaluation=tier))


def schedule(engine: Engine, *objects: dict[str, Any]
             ) -> tuple[Scheduler, MemoryBackend, list[tuple[str, AuditFinding]]]:
    backend = MemoryBackend([*NODES, *objects], SimulatedClock(NOW))
    found: list[tuple[str, AuditFinding]] = []
    scheduler = Scheduler(backend, engine.frameworks, engine.settings,
                          on_audit=lambda profile, f: found.append((profile, f)))
    run(scheduler)
    return scheduler, backend, found


def pod(name: str = "web", cpu: str = "1", **labels: str) -> dict[str, Any]:
    return make_pod(name, cpu=cpu, labels=labels or None, schedulerName="policysched")


def others(events: list[RecordedEvent]) -> list[tuple[str, str, str, str]]:
    """The events but PolicyAudit ones, without their time."""
    return [(e.pod, e.type, e.reason, e.message) for e in events if e.reason != "PolicyAudit"]


def audit_events(events: list[RecordedEvent]) -> list[tuple[str, str]]:
    return [(e.type, e.message) for e in events if e.reason == "PolicyAudit"]


@pytest.mark.parametrize("tier", TIERS)
def test_a_filter_that_would_reject_every_node_changes_nothing(tmp_path: Path,
                                                               tier: str) -> None:
    without, plain_backend, _ = schedule(engine(tmp_path / "a", ABSENT, tier), pod())
    with_rule, backend, found = schedule(engine(tmp_path / "b", NOWHERE, tier), pod())
    assert with_rule.records["default/web"].node == without.records["default/web"].node \
        == "node-c"
    assert others(backend.events) == others(plain_backend.events)
    assert [(profile, f.rule, f.point, f.result) for profile, f in found] == [
        ("policysched", "try/nowhere", ExtensionPoint.FILTER, audit.REJECTED)]
    assert audit_events(backend.events) == [(
        "Warning", "audit: try/nowhere would have rejected every feasible node (3): "
        "3 node(s) refused by the trial; the pod would have been unschedulable")]


@pytest.mark.parametrize("tier", TIERS)
def test_a_filter_that_would_reject_some_nodes_names_the_chosen_one(tmp_path: Path,
                                                                    tier: str) -> None:
    scheduler, _, found = schedule(
        engine(tmp_path, SSD_FILTER.format(enforcement="Audit"), tier), pod())
    assert scheduler.records["default/web"].node == "node-c"
    assert [f.text for _, f in found] == [
        "audit: try/needs-ssd would have rejected 2 of 3 feasible nodes: 2 node(s) without "
        "an SSD; the chosen node node-c among them"]
    assert found[0][1].result == audit.NODES_REJECTED


@pytest.mark.parametrize("tier", TIERS)
def test_a_score_that_would_change_the_choice_says_which_node(tmp_path: Path,
                                                              tier: str) -> None:
    without, plain_backend, _ = schedule(engine(tmp_path / "a", ABSENT, tier), pod())
    scheduler, backend, found = schedule(engine(tmp_path / "b", PREFER_SSD, tier), pod())
    assert scheduler.records["default/web"].node == without.records["default/web"].node \
        == "node-c"
    assert others(backend.events) == others(plain_backend.events)
    [(_, finding)] = found
    assert finding.result == audit.CHOICE_CHANGED and finding.event_type == "Normal"
    assert finding.message.startswith(
        "would have changed the score by +0 on the chosen node node-c (+0 to +500 on the "
        "3 scored nodes); node-a would have been chosen instead (")
    assert audit_events(backend.events) == [("Normal", finding.text)]


def test_a_score_that_keeps_the_choice_says_so(tmp_path: Path) -> None:
    prefer_c = PREFER_SSD.replace("'disk'].orValue('') == 'ssd'",
                                  "'kubernetes.io/hostname'].orValue('') == 'none'")
    prefer_c = prefer_c.replace("? 100 : 0", "? 0 : (node.allocatable.cpu > 4000 ? 1 : 0)")
    _, _, found = schedule(engine(tmp_path, prefer_c), pod())
    [(_, finding)] = found
    assert finding.result == audit.SCORE_CHANGED
    assert finding.message == ("would have changed the score by +5 on the chosen node node-c "
                               "(+0 to +5 on the 3 scored nodes); the choice would stay")


def test_pod_level_points_would_have_gated_rejected_denied_and_held(tmp_path: Path) -> None:
    without, plain_backend, _ = schedule(engine(tmp_path / "a", ABSENT), pod())
    scheduler, backend, found = schedule(engine(tmp_path / "b", POD_LEVEL), pod())
    assert scheduler.records["default/web"].node == without.records["default/web"].node
    assert not scheduler.waiting  # not held at permit
    assert others(backend.events) == others(plain_backend.events)
    assert [(f.point.value, f.result, f.message) for _, f in found] == [
        ("preEnqueue", audit.REJECTED,
         "would have kept the pod out of the active queue: try/has-team: pods need a team "
         "label"),
        ("preFilter", audit.REJECTED, "would have rejected the pod: too big for the trial"),
        ("permit", audit.REJECTED, "would have rejected the pod at permit: not yet"),
        ("permit", audit.WAITED, "would have held the pod at permit on node-c for up to 30s"),
    ]
    # one event per point (the two permit findings share theirs), each with its action
    assert [(e.type, e.action) for e in backend.events if e.reason == "PolicyAudit"] == [
        ("Warning", "AuditPreEnqueue"), ("Warning", "AuditPreFilter"),
        ("Warning", "AuditPermit")]
    assert backend.events[-2].message == (
        "audit: try/deny would have rejected the pod at permit: not yet; audit: try/hold "
        "would have held the pod at permit on node-c for up to 30s")


def test_an_audited_rule_that_fails_is_an_error_finding_not_an_error_for_the_pod(
        tmp_path: Path) -> None:
    failing = NOWHERE.replace('expression: "false"',
                              "expression: node.labels['missing'] == 'x'")
    scheduler, _, found = schedule(engine(tmp_path, failing), pod())
    assert scheduler.records["default/web"].node == "node-c"
    [(_, finding)] = found
    assert finding.result == audit.ERROR
    assert finding.message.startswith("would have failed with an Error: policy try rule "
                                      "nowhere: spec.filter[0].expression")


def test_an_audited_policys_failing_match_does_not_fail_the_pod(tmp_path: Path) -> None:
    policy = SSD_FILTER.format(enforcement="Audit").replace(
        "spec:\n", "spec:\n  match: pod.labels['team'] == 'x'\n")
    scheduler, _, found = schedule(engine(tmp_path, policy), pod())
    assert scheduler.records["default/web"].node == "node-c"
    assert [f.result for _, f in found] == [audit.ERROR]
    assert "spec.match" in found[0][1].message


def test_a_profile_without_audited_rules_keeps_its_policies_as_they_are(
        tmp_path: Path) -> None:
    """No audit, no change: the profile runs the very policy objects it was given."""
    plain = engine(tmp_path / "a", SSD_FILTER.format(enforcement="Enforce"))
    fwk = plain.frameworks["policysched"]
    assert fwk.audited == {}
    audited = engine(tmp_path / "b", SSD_FILTER.format(enforcement="Audit"))
    fwk = audited.frameworks["policysched"]
    [rule] = fwk.audited[ExtensionPoint.FILTER]
    assert rule.rule.qualified_name == "try/needs-ssd" and rule.rule.audited
    assert [r.qualified_name for _, r in fwk.rules(ExtensionPoint.FILTER)] \
        == ["node-resources-fit/fits-request"]


def test_enforced_the_same_rule_decides(tmp_path: Path) -> None:
    scheduler, backend, found = schedule(
        engine(tmp_path, SSD_FILTER.format(enforcement="Enforce")), pod())
    assert scheduler.records["default/web"].node == "node-a" and found == []
    assert audit_events(backend.events) == []


def test_a_pod_retried_a_hundred_times_gets_one_event_and_a_hundred_counts(
        tmp_path: Path) -> None:
    """The audited preFilter finds the same thing at every attempt of a pod an enforced
    rule keeps rejecting (retried every 5 s): counted each time, recorded once per 10
    minutes."""
    policies = POD_LEVEL.split("  permit:")[0].replace("  preFilter:\n", """\
  preFilter:
  - name: not-yet
    enforcement: Enforce
    expression: "false"
    retryAfter: "5"
    message: retry later
""")
    clock = SimulatedClock(NOW)
    backend = MemoryBackend([*NODES, pod(team="a")], clock)
    found: list[AuditFinding] = []
    scheduler = Scheduler(backend, engine(tmp_path, policies).frameworks,
                          on_audit=lambda _, f: found.append(f))
    run(scheduler)
    while len(found) < 130:
        wakeup = scheduler.next_wakeup()
        assert wakeup is not None
        clock.advance_to(wakeup)
        scheduler.advance()
        run(scheduler)
    attempts = scheduler.records["default/web"].attempts
    assert attempts >= 130 and {f.rule for f in found} == {"try/small"}
    # 650 s and more: a second event after 600 s
    assert clock.now() - NOW >= 645
    assert len(audit_events(backend.events)) == 2


def test_audit_events_are_due_once_per_pod_rule_and_result_per_interval() -> None:
    events = AuditEvents(interval=600)
    finding = AuditFinding("p/r", "p", "r", ExtensionPoint.FILTER, audit.REJECTED, "m")
    other = dataclasses.replace(finding, result=audit.NODES_REJECTED)
    assert events.due("ns/a", finding, 0)
    assert not events.due("ns/a", finding, 599)
    assert events.due("ns/a", other, 1)  # another result
    assert events.due("ns/b", finding, 1)  # another pod
    assert events.due("ns/a", finding, 600)
    events.forget("ns/a")
    assert events.due("ns/a", finding, 601) and len(events) == 2


def test_a_fault_in_the_audit_never_fails_the_pod(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> list[AuditFinding]:
        raise RuntimeError("audit bug")

    monkeypatch.setattr(audit, "decision", broken)
    monkeypatch.setattr(audit, "pre_enqueue", broken)
    monkeypatch.setattr(audit, "permit", broken)
    found = engine(tmp_path, POD_LEVEL.replace("spec:\n", "spec:\n  filter:\n"
                                               "  - {name: f, expression: 'true'}\n"))
    told: list[BaseException] = []
    backend = MemoryBackend([*NODES, pod()], SimulatedClock(NOW))
    scheduler = Scheduler(backend, found.frameworks, found.settings,
                          on_internal_error=told.append)
    run(scheduler)
    assert scheduler.records["default/web"].node == "node-c"
    assert [str(e) for e in told] == ["audit bug"] * 3
    assert [e.reason for e in backend.events] == ["Scheduled"]


def test_a_failing_audit_hook_loses_neither_the_pod_nor_the_event(tmp_path: Path) -> None:
    def hook(profile: str, finding: AuditFinding) -> None:
        raise RuntimeError("hook")

    backend = MemoryBackend([*NODES, pod()], SimulatedClock(NOW))
    scheduler = Scheduler(backend, engine(tmp_path, NOWHERE).frameworks, on_audit=hook)
    run(scheduler)
    assert scheduler.records["default/web"].node == "node-c"
    assert [e.reason for e in backend.events] == ["PolicyAudit", "Scheduled"]


NARROWING = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: try
spec:
  pluginName: SsdOnly
  preFilter:
  - name: ssd-nodes
    enforcement: Audit
    nodeNames: "nodes.filter(n, n.labels[?'disk'].orValue('') == 'ssd').map(n, n.name)"
"""


@pytest.mark.parametrize("tier", TIERS)
def test_a_prefilter_that_would_narrow_the_nodes_names_those_it_leaves_out(
        tmp_path: Path, tier: str) -> None:
    scheduler, _, found = schedule(engine(tmp_path, NARROWING, tier), pod())
    assert scheduler.records["default/web"].node == "node-c"
    assert [(f.point, f.result, f.message) for _, f in found] == [
        (ExtensionPoint.PRE_FILTER, audit.NODES_REJECTED,
         "would have rejected 2 of 3 feasible nodes: 2 node(s) didn't satisfy plugin(s) "
         "[SsdOnly]; the chosen node node-c among them")]


def test_only_the_nodes_the_search_found_feasible_are_audited(tmp_path: Path) -> None:
    """Node sampling: with 200 nodes and percentageOfNodesToScore 50 the filters stop at
    100 feasible nodes; the audited filter is judged on those."""
    found_engine = engine(tmp_path, NOWHERE)
    found_engine = dataclasses.replace(found_engine, settings=dataclasses.replace(
        found_engine.settings, percentage_of_nodes_to_score=50))
    nodes = [make_node(f"n{i:03}") for i in range(200)]
    backend = MemoryBackend([*nodes, pod()], SimulatedClock(NOW))
    found: list[AuditFinding] = []
    scheduler = Scheduler(backend, found_engine.frameworks, found_engine.settings,
                          on_audit=lambda _, f: found.append(f))
    run(scheduler)
    assert scheduler.records["default/web"].node is not None
    assert [f.message for f in found] == [
        "would have rejected every feasible node (100): 100 node(s) refused by the trial; "
        "the pod would have been unschedulable"]
