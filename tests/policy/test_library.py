"""The shipped policy library evaluates as kube-scheduler's plugins decide
(cases in ``library_cases.yaml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from policysched.policy import CelExpression, ExtensionPoint, Policy, load_policy_set
from policysched.policy.compile import snake_case

ROOT = Path(__file__).resolve().parents[2]
CASES = yaml.safe_load((Path(__file__).parent / "library_cases.yaml").read_text())


@pytest.fixture(scope="module")
def library() -> dict[str, Policy]:
    policy_set = load_policy_set([ROOT / "policies"])
    assert policy_set.diagnostics == ()
    return {p.name: p for p in policy_set.policies}


def expression(policy: Policy, case: dict[str, Any]) -> CelExpression | tuple[CelExpression, ...]:
    if case.get("field") == "match":
        assert policy.match is not None
        return policy.match
    point = ExtensionPoint(case["point"])
    [rule] = [r for r in policy.rules_for(point) if r.name == case["rule"]]
    found = getattr(rule, snake_case(case.get("field", "expression")))
    assert found is not None
    return found  # type: ignore[no-any-return]


def case_id(case: dict[str, Any]) -> str:
    return f"{case['policy']}-{case.get('rule', 'match')}-{case.get('field', 'expression')}"


@pytest.mark.parametrize("case", CASES["cases"], ids=case_id)
def test_library_case(library: dict[str, Policy], case: dict[str, Any]) -> None:
    policy = library[case["policy"]]
    base = CASES["base"]
    activation: dict[str, Any] = {
        "now": base["now"],
        "pod": {**base["pod"], **case.get("pod", {})},
        "node": {**base["node"], **case.get("node", {})},
        "nodePods": [],
        "params": dict(policy.params),
        "variables": {},
    }
    if "victim" in case:
        activation["victim"] = {**base["pod"], **case["victim"]}
    found = expression(policy, case)
    if isinstance(found, tuple):
        assert [k.evaluate(activation) for k in found] == case["expect"]
    else:
        assert found.evaluate(activation) == case["expect"]
