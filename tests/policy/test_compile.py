"""Documents → compiled ``Policy`` objects: defaults, types, and evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policysched.cel import CelError
from policysched.cel.types import INT
from policysched.policy import (
    BindRule,
    CelExpression,
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
    timeoutSeconds: params.maxGangWait
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
    assert policy_set.errors == ()
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
    assert isinstance(window.timeout_seconds, CelExpression)  # an expression, per pod
    assert window.timeout_seconds.field == "spec.permit[1].timeoutSeconds"
    assert window.timeout_seconds.evaluate({"params": everything.params}) == 120
    assert window.on_false is PermitOnFalse.WAIT
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
    [error] = policy_set.errors
    assert error.headline() == (
        "p.yaml:13:26: everything: variable age: type error: undefined field 'old'"
    )
    assert policy_set.policies == ()


def test_undefined_param_is_a_compile_error() -> None:
    text = EVERY_POINT.replace("== params.zone", "== params.zones")
    [error] = build_policy_set(load_text(text, "p.yaml")).errors
    assert error.message == (
        "nodeNames: type error: undefined field 'zones' (did you mean 'zone'?)"
    )
    assert error.rule == "only"


def test_shipped_library_is_valid() -> None:
    policy_set = load_policy_set([ROOT / "policies"])
    assert policy_set.errors == ()  # its warnings: tests/policy/test_warnings.py
    names = {p.name for p in policy_set.policies}
    assert {"delay", "zone-a-first"} <= names


CONFIGMAP_WITH_FOLDED_RULES = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: policies
data:
  p.yaml: |
    apiVersion: policysched.io/v1alpha1
    kind: SchedulingPolicy
    metadata:
      name: p
    spec:
      filter:
      - name: names
        expression: >
          pod.name != '' &&
          pod.name.matches('a**')
      - name: labels
        expression: "pod.labels.exists(k,
          k.find('(?<=a)b') != '')"
      - name: fresh
        expression: >-
          pod.creationTimestamp >
            timestamp('noon')
"""


def position_of(text: str, fragment: str) -> str:
    """``line:column`` of the first occurrence of ``fragment`` in ``text``."""
    index = text.index(fragment)
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"{line}:{column}"


def test_constant_arguments_are_validated_at_their_position_through_two_yaml_levels() -> None:
    """A pattern or timestamp the run time would refuse is reported by validate, at the
    literal, even in a folded or quoted expression inside a ConfigMap value."""
    text = CONFIGMAP_WITH_FOLDED_RULES
    policy_set = build_policy_set(load_text(text, "cm.yaml"))
    assert [d.headline() for d in policy_set.diagnostics] == [
        f"cm.yaml:{position_of(text, repr('a**'))}: p/names: expression: compile error: "
        "invalid matches argument: invalid regular expression 'a**': bad repetition "
        "operator: **",
        f"cm.yaml:{position_of(text, repr('(?<=a)b'))}: p/labels: expression: compile error: "
        "invalid find argument: invalid regular expression '(?<=a)b': invalid perl "
        "operator: (?<=",
        f"cm.yaml:{position_of(text, repr('noon'))}: p/fresh: expression: compile error: "
        "invalid timestamp argument: type conversion error from 'string' to "
        "'google.protobuf.Timestamp': 'noon' is not an RFC 3339 timestamp",
    ]
    assert {d.kind.value for d in policy_set.diagnostics} == {"cel-argument"}
    assert policy_set.policies == ()


EXPRESSION_STYLES = {
    "plain": "expression: pod.priority > 0 && pod.nmae == 'x'",
    "plain-multiline": "expression: pod.priority > 0 &&\n  pod.nmae == 'x'",
    "single-quoted": "expression: 'pod.priority > 0 &&\n\n  pod.nmae == ''x'''",
    "double-quoted": 'expression: "pod.priority > 0 && \\\n  pod.nmae == \\"x\\""',
    "literal": "expression: |\n  pod.priority > 0 &&\n    pod.nmae == 'x'",
    "literal-strip": "expression: |-\n    pod.priority > 0 &&\n    pod.nmae == 'x'\n",
    "folded": "expression: >\n  pod.priority > 0 &&\n  pod.nmae == 'x'",
    "folded-more-indented": "expression: >-\n  pod.priority > 0 &&\n\n    pod.nmae == 'x'",
}


def _policy(expression: str) -> str:
    rule = "\n".join("    " + line if line else "" for line in expression.split("\n"))
    return ("apiVersion: policysched.io/v1alpha1\nkind: SchedulingPolicy\nmetadata:\n"
            "  name: p\nspec:\n  filter:\n  - name: r\n" + rule.rstrip(" ") + "\n")


def _in_configmap(document: str, style: str) -> str:
    head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  p.yaml: "
    if style == "literal":
        return head + "|\n" + "".join(f"    {line}\n" if line else "\n"
                                      for line in document.split("\n")[:-1])
    # double-quoted, each line break escaped and continued on an indented line
    body = json.dumps(document)[1:-1].replace("\\n", "\\\n    \\n")
    return head + '"' + body + '"\n'


@pytest.mark.parametrize("container", ["file", "literal", "double-quoted"])
@pytest.mark.parametrize("style", sorted(EXPRESSION_STYLES))
def test_cel_error_position_is_exact_in_every_scalar_style(style: str, container: str) -> None:
    """The error in ``pod.nmae`` is reported at its '.', on the real line and column of the
    file: in a policy file, and in a policy held by a ConfigMap (two levels of YAML)."""
    document = _policy(EXPRESSION_STYLES[style])
    text = document if container == "file" else _in_configmap(document, container)
    [error] = build_policy_set(load_text(text, "f.yaml")).diagnostics
    assert error.message.startswith("expression: type error: undefined field 'nmae'")
    assert f"{error.line}:{error.column}" == position_of(text, ".nmae")


def test_a_permit_timeout_expression_must_give_an_int() -> None:
    text = EVERY_POINT.replace("timeoutSeconds: params.maxGangWait",
                               "timeoutSeconds: \"'2m'\"")
    [error] = build_policy_set(load_text(text, "p.yaml")).errors
    assert (error.rule, error.message) == (
        "window", "timeoutSeconds: type error: expression must evaluate to int, found string")
