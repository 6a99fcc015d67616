"""The JSON Schemas and the messages made from their violations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from policysched.policy import ExtensionPoint, build_policy_set, load_text
from policysched.policy.documents import CONFIGURATION_KIND, POLICY_KIND
from policysched.policy.schema import load_schema, rule_fields

ROOT = Path(__file__).resolve().parents[2]

# The product's contract, verbatim (docs/architecture.md#the-contract).
DELAY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: delay
spec:
  match: "'delay' in pod.annotations"            # which pods the policy applies to
  preFilter:
  - name: delay-elapsed
    expression: now - pod.creationTimestamp >= int(pod.annotations.delay)
    message: delay not reached
    retryAfter: int(pod.annotations.delay) - (now - pod.creationTimestamp)  # seconds
"""

ZONE_A_FIRST = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: zone-a-first
spec:
  filter:
  - name: not-cordoned
    expression: "!node.unschedulable"
    reason: node(s) were unschedulable
  score:
  - name: prefer-zone-a
    expression: "node.labels['topology.kubernetes.io/zone'] == 'zone-a' ? 100 : 0"
    weight: 2
"""

MODELINE = "# yaml-language-server: $schema=../schemas/schedulingpolicy.schema.json\n"


def errors(text: str) -> list[str]:
    """``line:col: subject: message`` of every error of ``text`` (warnings:
    test_warnings.py)."""
    policy_set = build_policy_set(load_text(text, "p.yaml"))
    return [d.headline().removeprefix("p.yaml:") for d in policy_set.errors]


@pytest.mark.parametrize("kind", [POLICY_KIND, CONFIGURATION_KIND])
def test_schemas_are_valid_draft_2020_12(kind: str) -> None:
    schema = load_schema(kind)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def object_schemas(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if "properties" in schema:
            yield schema
        for value in schema.values():
            yield from object_schemas(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from object_schemas(value)


@pytest.mark.parametrize("kind", [POLICY_KIND, CONFIGURATION_KIND])
def test_every_object_with_fields_rejects_unknown_fields(kind: str) -> None:
    objects = list(object_schemas(load_schema(kind)))
    assert len(objects) > 5
    for schema in objects:
        assert schema.get("additionalProperties") is False, sorted(schema["properties"])


def test_every_field_is_documented() -> None:
    for kind in (POLICY_KIND, CONFIGURATION_KIND):
        for schema in object_schemas(load_schema(kind)):
            for name, field in schema["properties"].items():
                if name in ("apiVersion", "kind") and kind == CONFIGURATION_KIND:
                    continue
                documented = "description" in field or "$ref" in field
                assert documented, name


def test_spec_has_one_rule_list_per_extension_point() -> None:
    spec = load_schema(POLICY_KIND)["$defs"]["spec"]["properties"]
    assert set(spec) == {p.value for p in ExtensionPoint} | {
        "match", "pluginName", "enforcement", "params", "variables", "aggregates"}
    for point in ExtensionPoint:
        rule = load_schema(POLICY_KIND)["$defs"][f"{point.value}Rule"]
        assert "name" in rule["required"]


def test_extension_point_specific_fields() -> None:
    fields = rule_fields()
    assert fields["weight"] == ("score",)
    assert fields["retryAfter"] == ("preFilter",)
    assert fields["reason"] == ("filter",)
    assert fields["victims"] == ("postFilter",)
    assert set(fields["failurePolicy"]) == {p.value for p in ExtensionPoint} - {"queueSort"}
    assert set(fields["enforcement"]) == {p.value for p in ExtensionPoint}  # Audit: some
    timeout = load_schema(POLICY_KIND)["$defs"]["permitRule"]["properties"]["timeoutSeconds"]
    assert timeout["anyOf"][0]["maximum"] == 900  # a number, or an expression


def test_design_documents_are_valid_verbatim() -> None:
    assert errors(DELAY) == []
    assert errors(ZONE_A_FIRST) == []


@pytest.mark.parametrize(("name", "text"), [("delay", DELAY), ("zone-a-first", ZONE_A_FIRST)])
def test_shipped_policies_are_the_design_documents(name: str, text: str) -> None:
    shipped = (ROOT / "policies" / f"{name}.yaml").read_text(encoding="utf-8")
    # the modeline first, header comments allowed, then the contract's document verbatim
    assert shipped.startswith(MODELINE)
    assert shipped.endswith(text)
    assert all(line.startswith("#") for line in shipped[: -len(text)].splitlines())


def policy(spec: str, name: str = "p") -> str:
    return (
        "apiVersion: policysched.io/v1alpha1\nkind: SchedulingPolicy\n"
        f"metadata:\n  name: {name}\nspec:\n{spec}"
    )


def test_wrong_api_version_and_missing_spec() -> None:
    text = "apiVersion: v1\nkind: SchedulingPolicy\nmetadata: {name: p}\n"
    assert errors(text) == [
        '1:1: p: missing required field "spec"',
        '1:13: p: field "apiVersion" must be "policysched.io/v1alpha1", not "v1"',
    ]


def test_queue_sort_needs_exactly_one_of_less_and_keys() -> None:
    assert errors(policy("  queueSort:\n  - name: q\n")) == [
        '7:5: p/q: one of "less", "keys" is required',
    ]
    both = policy("  queueSort:\n  - name: q\n    less: a.priority > b.priority\n"
                  "    keys: [pod.priority]\n")
    assert errors(both) == ['9:5: p/q: only one of "less", "keys" may be set']


def test_filter_needs_exactly_one_of_expression_and_reasons_and_reasons_no_message() -> None:
    assert errors(policy("  filter:\n  - name: f\n    reason: r\n")) == [
        '7:5: p/f: one of "expression", "reasons" is required',
    ]
    both = policy("  filter:\n  - name: f\n    expression: 'true'\n    reasons: '[]'\n")
    assert errors(both) == ['9:5: p/f: only one of "expression", "reasons" may be set']
    with_message = policy("  filter:\n  - name: f\n    reasons: \"['x']\"\n"
                          "    reason: r\n    messageExpression: \"'m'\"\n"
                          "    unresolvableExpression: 'true'\n")
    assert errors(with_message) == [
        '9:5: p/f: field "reason" cannot be set with "reasons"',
        '10:5: p/f: field "messageExpression" cannot be set with "reasons"',
    ]
    assert errors(policy("  filter:\n  - name: f\n    reasons: '[1]'\n")) == [
        "8:15: p/f: reasons: type error: expression must evaluate to list(string), "
        "found list(int)"]


def test_params_keys_must_be_identifiers_and_expressions_non_empty() -> None:
    text = policy('  params:\n    max-pods: 3\n  filter:\n  - name: f\n    expression: ""\n')
    assert errors(text) == [
        "7:5: p: key \"max-pods\" is not a CEL identifier: use letters, digits and '_', "
        "not starting with a digit",
        '10:17: p/f: field "expression" must not be empty',
    ]


def test_rule_list_of_wrong_type() -> None:
    assert errors(policy("  filter:\n    name: f\n")) == [
        '7:5: p: field "filter" must be a list, not a mapping',
    ]


def test_reserve_counter_needs_a_limit() -> None:
    text = policy("  reserve:\n  - name: r\n    counter: \"'jobs'\"\n")
    assert errors(text) == ['8:5: p/r: field "limit" is required when "counter" is set']


def test_scheduler_configuration_is_validated() -> None:
    text = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulerConfiguration
policySources:
  directories: [/etc/policysched/policies]
  configMaps:
  - namespace: kube-system
    labelSelector: {matchLabels: {policysched.io/policy: "true"}}
profiles:
- schedulerName: policysched
  queueSort: priority-sort
  policies:
    enabled:
    - name: zone-a-first
      weight: 2
      params: {zone: zone-b}
    disabled:
    - name: "*"
percentageOfNodesToScore: 0
backoff: {initialSeconds: 1, maxSeconds: 10}
leaderElection: {leaderElect: true, leaseName: policysched, namespace: kube-system}
"""
    policy_set = build_policy_set(load_text(text, "c.yaml"))
    assert policy_set.errors == ()
    assert len(policy_set.configurations) == 1
    bad = text.replace("schedulerName: policysched", "schedulername: policysched")
    assert errors(bad) == ['9:3: unknown field "schedulername" (did you mean "schedulerName"?)']


@pytest.mark.parametrize(("value", "message"), [
    ("0", 'field "timeoutSeconds" must be at least 1, not 0'),
    ("1.5", 'field "timeoutSeconds" must be an integer or a string, not a number'),
    ("[60]", 'field "timeoutSeconds" must be an integer or a string, not a list'),
    ('""', 'field "timeoutSeconds" must not be empty'),
])
def test_a_permit_timeout_is_a_number_or_an_expression(value: str, message: str) -> None:
    """The alternative the value's type picks gives the message, not either branch's."""
    text = policy(f"  permit:\n  - name: w\n    expression: 'false'\n    onFalse: Wait\n"
                  f"    timeoutSeconds: {value}\n")
    [found] = errors(text)
    assert found.endswith(f"p/w: {message}"), found
    assert errors(text.replace(value, "pod.podGroup.scheduleTimeoutSeconds")) == []
