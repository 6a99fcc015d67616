"""``enforcement: Audit | Enforce`` on a policy (``spec.enforcement``) and on a rule:
defaults, the points that support audit, and positioned errors for the others."""

from __future__ import annotations

import pytest

from policysched.policy import Enforcement, ExtensionPoint, build_policy_set, load_text
from policysched.policy.model import AUDITABLE_POINTS

POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: trial
spec:
  enforcement: Audit
  filter:
  - name: audited
    expression: "true"
  - name: enforced
    enforcement: Enforce
    expression: "true"
  score:
  - name: scored
    expression: "1"
"""


def test_a_rule_takes_the_policys_enforcement_unless_it_sets_its_own() -> None:
    policy_set = build_policy_set(load_text(POLICY, "p.yaml"))
    [policy] = policy_set.policies
    assert policy.enforcement is Enforcement.AUDIT
    enforcement = {r.name: r.enforcement for p in ExtensionPoint for r in policy.rules_for(p)}
    assert enforcement == {"audited": Enforcement.AUDIT, "enforced": Enforcement.ENFORCE,
                           "scored": Enforcement.AUDIT}
    assert [r.name for r in policy.audited_rules] == ["audited", "scored"]
    enforced = policy.without_audited()
    assert [r.name for p in ExtensionPoint for r in enforced.rules_for(p)] == ["enforced"]


def test_enforce_is_the_default() -> None:
    text = POLICY.replace("  enforcement: Audit\n", "")
    [policy] = build_policy_set(load_text(text, "p.yaml")).policies
    assert policy.enforcement is Enforcement.ENFORCE and policy.audited_rules == ()
    assert policy.without_audited() is policy


def test_a_value_outside_the_enum_is_a_positioned_error() -> None:
    text = POLICY.replace("enforcement: Enforce", "enforcement: audit")
    [error] = build_policy_set(load_text(text, "p.yaml")).errors
    assert error.headline() == (
        'p.yaml:11:18: trial/enforced: field "enforcement" must be one of Enforce, Audit, '
        'not "audit"')


UNSUPPORTED = sorted(set(ExtensionPoint) - AUDITABLE_POINTS - {ExtensionPoint.QUEUE_SORT})


@pytest.mark.parametrize("point", UNSUPPORTED)
def test_a_rule_at_a_point_without_audit_is_a_positioned_error(point: ExtensionPoint) -> None:
    text = f"""\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: trial
spec:
  {point.value}:
  - name: r
    expression: "true"
    enforcement: Audit
"""
    [error] = build_policy_set(load_text(text, "p.yaml")).errors
    assert error.line == 9 and error.column == 18 and error.rule == "r"
    assert error.message.startswith(f"enforcement Audit is not supported for a {point.value} "
                                    "rule: ")


def test_an_audited_policy_with_a_rule_that_cannot_be_audited_names_the_rule() -> None:
    text = POLICY + """\
  postBind:
  - name: announce
    expression: "true"
"""
    [error] = build_policy_set(load_text(text, "p.yaml")).errors
    assert error.headline() == (
        'p.yaml:6:16: trial: spec.enforcement Audit cannot apply to postBind rule '
        '"announce": it only notifies: it decides nothing (give that rule enforcement: '
        "Enforce, or audit the policy's other rules one by one)")
    # the way out the message gives works
    fixed = text + "    enforcement: Enforce\n"
    assert not build_policy_set(load_text(fixed, "p.yaml")).errors


def test_a_gang_rule_cannot_be_audited() -> None:
    text = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: trial
spec:
  permit:
  - name: gang
    group: pod.podGroup.name
    minMember: pod.podGroup.minMember
    enforcement: Audit
  - name: plain
    expression: "true"
    enforcement: Audit
"""
    [error] = build_policy_set(load_text(text, "p.yaml")).errors
    assert (error.line, error.rule) == (10, "gang")
    assert "a gang rule holds a whole group of pods" in error.message
