"""Documents → compiled ``Policy`` objects: defaults, types, and evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from policysched.cel import CelError
from policysched.cel.types import INT
from policysched.policy import (
    BindRule,
    ExtensionPoint,
    FailurePolicy,
    FilterRule,
    Normalization,
    PermitOnFalse,
    PermitRule,
    Policy,
    PostFilterRule,
    PreBindRule,
    PreFilterRule,
    QueueSortRule,
    ReserveRule,
    ScoreRule,
    build_policy_set,
    load_policy_set,
    load_text,
)

ROOT = Path(__file__).resolve().parents[2]

EVERY_POINT = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: everything
  labels: {team: platform}
spec:
  match: pod.namespace != 'kube-system'
  params:
    zone: zone-a
    maxGangWait: 120
  variables:
  - name: age
    expression: now - pod.creationTimestamp
  - name: old
    expression: variables.age > 60
  queueSort:
  - name: priority
    keys: [-pod.priority, pod.creationTimestamp]
  preEnqueue:
  - name: gate
    expression: "!('hold' in pod.annotations)"
  preFilter:
  - name: only
    nodeNames: "nodes.filter(n, n.labels['zone'] == params.zone).map(n, n.name)"
    unresolvable: true
  filter:
  - name: free-cpu
    expression: node.free['cpu'] >= pod.requests['cpu']
    message: Insufficient cpu
  - name: plain
    expression: variables.old || true
  postFilter:
  - name: lower-priority
    victims: victim.priority < pod.priority
  preScore:
  - name: scored
    expression: "true"
  score:
  - name: least-allocated
    expression: "100 - node.requested['cpu'] * 100 / node.allocatable['cpu']"
    normalize: reverse
    failurePolicy: Ignore
  reserve:
  - name: per-zone
    counter: "'jobs/' + node.labels['zone']"
    limit: "10"
  unreserve:
  - name: note
    expression: "true"
    message: rolled back
  permit:
  - name: gang
    group: "pod.labels['pod-group']"
    minMember: "int(pod.annotations['min-member'])"
    timeoutSeconds: 120
  - name: window
    expression: now % 86400 > 3600
    onFalse: Wait
  preBind:
  - name: stamp
    labels:
      policysched.io/zone: node.labels['zone']
  bind:
  - name: default
    expression: "true"
  postBind:
  - name: done
    expression: "true"
    messageExpression: "'bound to ' + node.name"
"""


@pytest.fixture(scope="module")
def everything() -> Policy:
    policy_set = build_policy_set(load_text(EVERY_POINT, "everything.yaml"))
    assert policy_set.diagnostics == ()
    [policy] = policy_set.policies
    return policy


def test_policy_fields(everything: Policy) -> None:
    assert everything.name == "everything"
    assert everything.labels == {"team": "platform"}
    assert everything.params == {"zone": "zone-a", "maxGangWait": 120}
    assert everything.points == tuple(ExtensionPoint)
    assert [v.name for v in everything.variables] == ["age", "old"]
    assert everything.variables[0].expression.program.type == INT
    assert everything.match is not None and everything.match.field == "spec.match"


def test_rules_have_their_types_and_defaults(everything: Policy) -> None:
    [sort] = everything.rules_for(ExtensionPoint.QUEUE_SORT)
    assert isinstance(sort, QueueSortRule) and sort.less is None and len(sort.keys) == 2
    [pre_filter] = everything.rules_for(ExtensionPoint.PRE_FILTER)
    assert isinstance(pre_filter, PreFilterRule)
    assert pre_filter.unresolvable and pre_filter.expression is None
    assert pre_filter.node_names is not None and pre_filter.retry_after is None
    cpu, plain = everything.rules_for(ExtensionPoint.FILTER)
    assert isinstance(cpu, FilterRule) and isinstance(plain, FilterRule)
    assert cpu.reason == "Insufficient cpu"
    assert plain.reason == "node(s) didn't satisfy policy everything/plain"
    assert cpu.failure_policy is FailurePolicy.FAIL
    [score] = everything.rules_for(ExtensionPoint.SCORE)
    assert isinstance(score, ScoreRule)
    assert (score.weight, score.normalize) == (1, Normalization.REVERSE)
    assert score.failure_policy is FailurePolicy.IGNORE
    [victims] = everything.rules_for(ExtensionPoint.POST_FILTER)
    assert isinstance(victims, PostFilterRule) and victims.victims.text.startswith("victim.")
    [reserve] = everything.rules_for(ExtensionPoint.RESERVE)
    assert isinstance(reserve, ReserveRule) and reserve.amount is None
    gang, window = everything.rules_for(ExtensionPoint.PERMIT)
    assert isinstance(gang, PermitRule) and isinstance(window, PermitRule)
    assert (gang.timeout_seconds, gang.on_false) == (120, PermitOnFalse.DENY)
    assert (window.timeout_seconds, window.on_false) == (60, PermitOnFalse.WAIT)
    [stamp] = everything.rules_for(ExtensionPoint.PRE_BIND)
    assert isinstance(stamp, PreBindRule)
    assert list(stamp.labels) == ["policysched.io/zone"]
    assert stamp.labels["policysched.io/zone"].field == (
        "spec.preBind[0].labels['policysched.io/zone']"
    )
    [bind] = everything.rules_for(ExtensionPoint.BIND)
    assert isinstance(bind, BindRule) and bind.target is None
    [post_bind] = everything.rules_for(ExtensionPoint.POST_BIND)
    assert post_bind.message_expression is not None
    assert post_bind.qualified_name == "everything/done"


def test_rule_and_expression_positions(everything: Policy) -> None:
    cpu = everything.rules_for(ExtensionPoint.FILTER)[0]
    assert (cpu.position.line, cpu.position.column) == (27, 5)
    assert cpu.expression is not None
    assert (cpu.expression.position.line, cpu.expression.position.column) == (28, 17)
    assert cpu.expression.field == "spec.filter[0].expression"


def delay_policy() -> PreFilterRule:
    policy_set = load_policy_set([ROOT / "policies" / "delay.yaml"])
    [policy] = policy_set.policies
    [rule] = policy.rules_for(ExtensionPoint.PRE_FILTER)
    assert isinstance(rule, PreFilterRule)
    return rule


def test_the_delay_policy_evaluates() -> None:
    rule = delay_policy()
    pod = {"annotations": {"delay": "15"}, "creationTimestamp": 1000}
    assert rule.expression is not None and rule.retry_after is not None
    assert rule.expression.evaluate({"now": 1010, "pod": pod}) is False
    assert rule.retry_after.evaluate({"now": 1010, "pod": pod}) == 5
    assert rule.expression.evaluate({"now": 1015, "pod": pod}) is True
    with pytest.raises(CelError):
        rule.expression.evaluate({"now": 1015, "pod": {**pod, "annotations": {"delay": "x"}}})


def test_later_variables_are_not_visible_to_earlier_ones() -> None:
    text = EVERY_POINT.replace("expression: now - pod.creationTimestamp",
                               "expression: variables.old")
    policy_set = build_policy_set(load_text(text, "p.yaml"))
    [error] = policy_set.diagnostics
    assert error.headline() == (
        "p.yaml:13:26: everything: variable age: type error: undefined field 'old'"
    )
    assert policy_set.policies == ()


def test_undefined_param_is_a_compile_error() -> None:
    text = EVERY_POINT.replace("== params.zone", "== params.zones")
    [error] = build_policy_set(load_text(text, "p.yaml")).diagnostics
    assert error.message == (
        "nodeNames: type error: undefined field 'zones' (did you mean 'zone'?)"
    )
    assert error.rule == "only"


def test_shipped_library_is_valid() -> None:
    policy_set = load_policy_set([ROOT / "policies"])
    assert policy_set.diagnostics == ()
    names = {p.name for p in policy_set.policies}
    assert {"delay", "zone-a-first"} <= names
