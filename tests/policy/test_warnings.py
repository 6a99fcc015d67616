"""Warnings for free-form map keys read without a guard: which accesses are reported,
where, how the policy's match counts, and what they do to validity and ``--strict``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from policysched.cli import main
from policysched.policy import load_policy_set
from policysched.policy.diagnostics import DiagnosticKind
from policysched.policy.loader import load_text
from policysched.policy.policy_set import PolicySet, build_policy_set

ROOT = Path(__file__).resolve().parents[2]


def policy(*, filter: str = "true", score: str | None = None, match: str | None = None,
           variable: str | None = None) -> str:
    lines = ["apiVersion: policysched.io/v1alpha1", "kind: SchedulingPolicy",
             "metadata:", "  name: p", "spec:"]
    if match is not None:
        lines.append(f"  match: {json.dumps(match)}")
    if variable is not None:
        lines += ["  variables:", "  - name: v", f"    expression: {json.dumps(variable)}"]
    lines += ["  filter:", "  - name: f", f"    expression: {json.dumps(filter)}"]
    if score is not None:
        lines += ["  score:", "  - name: s", f"    expression: {json.dumps(score)}"]
    return "\n".join(lines) + "\n"


def compiled(text: str) -> PolicySet:
    return build_policy_set(load_text(text, "p.yaml"))


def warned(expression: str, **fields: str) -> list[str]:
    """The accesses the warnings of a filter ``expression`` name."""
    policy_set = compiled(policy(filter=expression, **fields))
    assert policy_set.valid, policy_set.diagnostics
    return [d.message.split(" fails ", 1)[0] for d in policy_set.warnings]


@pytest.mark.parametrize("expression, accesses", [
    # unguarded: every free-form map of pod and node, select and index
    ("node.labels.spot != 'false'", ["node.labels.spot"]),
    ("node.labels['spot'] != 'false'", ["node.labels['spot']"]),
    ("pod.annotations.delay == '1'", ["pod.annotations.delay"]),
    ("pod.nodeSelector.disk == 'ssd'", ["pod.nodeSelector.disk"]),
    ("pod.requests.cpu <= node.free['cpu']", ["pod.requests.cpu", "node.free['cpu']"]),
    ("node.allocatable['nvidia.com/gpu'] > 0", ["node.allocatable['nvidia.com/gpu']"]),
    ("pod.limits.memory > 0 && node.requested.memory > 0 && node.images['a'] > 0",
     ["pod.limits.memory", "node.requested.memory", "node.images['a']"]),
    # a guard on another key, another map or the wrong branch does not count
    ("'zone' in node.labels && node.labels.spot == 'x'", ["node.labels.spot"]),
    ("'spot' in pod.labels && node.labels.spot == 'x'", ["node.labels.spot"]),
    ("'spot' in node.labels || node.labels.spot == 'x'", ["node.labels.spot"]),
    ("('spot' in node.labels ? 'x' : node.labels.spot) == 'x'", ["node.labels.spot"]),
    ("!('spot' in node.labels) && node.labels.spot == 'x'", ["node.labels.spot"]),
    ("('spot' in node.labels || true) && node.labels.spot == 'x'", ["node.labels.spot"]),
    ("['a'].all(x, node.labels.spot == x)", ["node.labels.spot"]),
    # guarded
    ("has(node.labels.spot)", []),
    ("has(node.labels.spot) && node.labels.spot != 'false'", []),
    ("'spot' in node.labels && node.labels.spot != 'false'", []),
    ("node.labels.spot != 'false' && 'spot' in node.labels", []),  # && is commutative
    ("!('spot' in node.labels) || node.labels['spot'] == 'true'", []),
    ("!has(node.labels.spot) || node.labels.spot == 'true'", []),
    ("'spot' in node.labels ? node.labels.spot == 'true' : false", []),
    ("!('spot' in node.labels) ? false : node.labels.spot == 'true'", []),
    ("('spot' in node.labels && 'a' in node.labels) && node.labels.spot == node.labels.a", []),
    ("'spot' in node.labels && ['a'].all(x, node.labels.spot == x)", []),
    ("cel.bind(s, 'spot' in node.labels ? node.labels.spot : '', s == 'x')", []),
    ("node.labels[?'spot'].orValue('') != 'false'", []),
    ("node.labels.?spot.orValue('') != 'false'", []),
    # not judged: comprehension variables, computed keys, maps that are not free-form
    ("nodePods.all(p, p.labels.spot == 'x')", []),
    ("pod.labels.all(k, node.labels[k] == pod.labels[k])", []),
    ("node.metadata.labels.spot == 'x'", []),
    ("nodePods.all(pod, pod.labels.x == 'y')", []),
])
def test_unguarded_accesses_are_reported(expression: str, accesses: list[str]) -> None:
    assert warned(expression) == accesses


def test_the_warning_is_positioned_and_spells_out_the_fix() -> None:
    policy_set = compiled(policy(filter="node.name != '' && node.labels.spot != 'false'"))
    [warning] = policy_set.warnings
    assert warning.kind is DiagnosticKind.ABSENT_KEY
    assert (warning.path, warning.line, warning.column) == ("p.yaml", 8, 37)
    assert warning.line_text is not None and warning.line_text[36:].startswith("node.labels")
    assert (warning.policy, warning.rule) == ("p", "f")
    assert warning.headline() == (
        "p.yaml:8:37: p/f: warning: node.labels.spot fails with 'no such key' on objects "
        "without that label; guard it: `'spot' in node.labels && node.labels.spot ...`, or "
        "read it with a default: `node.labels[?'spot'].orValue('')`"
    )
    assert warning.to_json()["severity"] == "warning"


def test_a_resource_default_is_zero() -> None:
    [warning] = compiled(policy(filter="pod.requests.cpu > 0")).warnings
    assert "`pod.requests[?'cpu'].orValue(0)`" in warning.message


def test_the_match_guards_every_expression_of_the_policy() -> None:
    guarded = policy(match="'delay' in pod.annotations", filter="pod.annotations.delay != ''",
                     variable="int(pod.annotations.delay)", score="size(pod.annotations.delay)")
    assert compiled(guarded).warnings == ()
    unguarded = policy(match="'other' in pod.annotations", filter="pod.annotations.delay != ''",
                       variable="int(pod.annotations.delay)")
    assert [d.rule for d in compiled(unguarded).warnings] == [None, "f"]  # variable, rule


def test_warnings_in_variables_and_other_fields_are_positioned_there() -> None:
    policy_set = compiled(policy(variable="pod.labels.zone",
                                 score="node.labels.zone == 'a' ? 1 : 0"))
    assert [(d.line, d.column, d.rule) for d in policy_set.warnings] == [
        (8, 18, None), (14, 18, "s")]


def test_warnings_do_not_make_a_policy_invalid() -> None:
    policy_set = compiled(policy(filter="node.labels.spot != 'false'"))
    assert policy_set.valid and [p.name for p in policy_set.policies] == ["p"]
    assert policy_set.errors == ()


def test_warnings_are_kept_next_to_errors() -> None:
    policy_set = compiled(policy(filter="node.labels.spot != 'false'", score="nw"))
    assert not policy_set.valid
    assert [d.severity for d in policy_set.diagnostics] == ["warning", "error"]


def test_the_builtin_library_has_no_wrong_warning() -> None:
    """zone-a-first reads the zone label unguarded (issue 12: it errors on nodes without
    it); every other built-in policy guards its map reads."""
    policy_set = load_policy_set([ROOT / "policies"])
    assert policy_set.errors == ()
    assert [(d.policy, d.rule) for d in policy_set.warnings] == [
        ("zone-a-first", "prefer-zone-a")
    ]


def test_strict_makes_warnings_fail_validate(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(policy(filter="node.labels.spot != 'false'"))
    lenient = CliRunner().invoke(main, ["validate", "--no-color", str(path)])
    assert lenient.exit_code == 0, lenient.output
    assert f"{path}:8:18: p/f: warning: node.labels.spot fails" in lenient.stdout
    assert lenient.stderr.endswith("1 policy valid (1 file), 1 warning\n")
    strict = CliRunner().invoke(main, ["validate", "--strict", str(path)])
    assert strict.exit_code == 1
    as_json = CliRunner().invoke(main, ["validate", "--strict", "-o", "json", str(path)])
    assert as_json.exit_code == 1
    document = json.loads(as_json.stdout)
    assert document["valid"] is True
    assert [e["severity"] for e in document["errors"]] == ["warning"]
    path.write_text(policy(filter="'spot' in node.labels && node.labels.spot != 'false'"))
    clean = CliRunner().invoke(main, ["validate", "--strict", str(path)])
    assert (clean.exit_code, clean.stdout) == (0, "1 policy valid (1 file)\n")
