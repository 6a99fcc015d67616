"""Bad policies under ``fixtures/``, one per kind of mistake.

Each fixture ends with ``# expect: LINE:COL: policy/rule: message`` comments: the exact
diagnostics ``policysched validate`` must report for it, in order (the comments come last
so they shift no line).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from policysched.policy import DiagnosticKind, load_policy_set, render_text

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT = "# expect: "

KINDS = {
    "invalid-yaml.yaml": {DiagnosticKind.YAML},
    "duplicate-key.yaml": {DiagnosticKind.YAML},
    "not-a-policy.yaml": {DiagnosticKind.DOCUMENT},
    "unknown-field.yaml": {DiagnosticKind.UNKNOWN_FIELD},
    "missing-field.yaml": {DiagnosticKind.SCHEMA},
    "wrong-type.yaml": {DiagnosticKind.SCHEMA},
    "bad-value.yaml": {DiagnosticKind.SCHEMA},
    "duplicate-rule.yaml": {DiagnosticKind.DUPLICATE_NAME},
    "cel-syntax.yaml": {DiagnosticKind.CEL_SYNTAX},
    "cel-undeclared.yaml": {DiagnosticKind.CEL_REFERENCE, DiagnosticKind.CEL_TYPE},
    "cel-wrong-point.yaml": {DiagnosticKind.CEL_REFERENCE},
    "cel-type.yaml": {DiagnosticKind.CEL_TYPE},
    "cel-cost.yaml": {DiagnosticKind.CEL_COST},
    "cel-literal-block.yaml": {DiagnosticKind.CEL_REFERENCE, DiagnosticKind.CEL_TYPE},
    "cel-folded-block.yaml": {DiagnosticKind.CEL_TYPE},
    "configmap-block.yaml": {
        DiagnosticKind.CEL_REFERENCE, DiagnosticKind.UNKNOWN_FIELD, DiagnosticKind.CEL_TYPE,
    },
}


def expectations(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"{path}:{line[len(EXPECT):]}" for line in lines if line.startswith(EXPECT)]


def test_every_fixture_is_covered() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.yaml")) == sorted(KINDS)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_fixture_reports_exactly_the_expected_errors(name: str) -> None:
    path = FIXTURES / name
    expected = expectations(path)
    assert expected, f"{name} has no '# expect:' lines"
    policy_set = load_policy_set([path])
    assert [d.headline() for d in policy_set.errors] == expected
    assert {d.kind for d in policy_set.errors} == KINDS[name]
    assert policy_set.policies == () or name == "configmap-block.yaml"


def test_configmap_fixture_keeps_its_valid_policy() -> None:
    policy_set = load_policy_set([FIXTURES / "configmap-block.yaml"])
    assert [p.name for p in policy_set.policies] == ["good"]
    [good] = policy_set.policies
    assert good.origin == "kube-system/scheduling-policies[good.yaml]"
    assert good.position.line == 8


def test_caret_sits_under_the_reported_column() -> None:
    policy_set = load_policy_set([FIXTURES / "cel-wrong-point.yaml"])
    first = render_text(policy_set.diagnostics[:1]).splitlines()
    source, caret = first[1:]
    assert source == "  " + "    retryAfter: 15 - (now - node.podCount)"
    assert caret == "  " + " " * 28 + "^"
    assert source[caret.index("^"):].startswith("node")
