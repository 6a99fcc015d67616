"""The limits on policy input: one definition of the defaults, read from the configuration,
described alike by the configuration schema and the README."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from policysched.policy import load_text
from policysched.policy.limits import CONFIGURATION_KEY, DEFAULT_LIMITS, PolicyLimits
from policysched.policy.policy_set import build_policy_set
from policysched.policy.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]


def keys() -> dict[str, str]:
    """Field name → policyLimits key."""
    return {f.name: f.metadata["key"] for f in dataclasses.fields(PolicyLimits)}


def test_the_configuration_sets_some_limits_and_keeps_the_defaults_of_the_others() -> None:
    limits = PolicyLimits.from_configuration(
        {CONFIGURATION_KEY: {"maxRules": 3, "compileTimeoutSeconds": 0.5}})
    assert limits == dataclasses.replace(DEFAULT_LIMITS, max_rules=3, compile_timeout_seconds=0.5)
    assert PolicyLimits.from_configuration(None) == DEFAULT_LIMITS
    assert PolicyLimits.from_configuration({"profiles": []}) == DEFAULT_LIMITS


def test_the_schema_has_every_limit_with_its_default() -> None:
    schema = load_schema("SchedulerConfiguration")
    assert schema["properties"][CONFIGURATION_KEY] == {"$ref": "#/$defs/policyLimits"}
    properties = schema["$defs"]["policyLimits"]["properties"]
    assert {key: p["default"] for key, p in properties.items()} == {
        key: getattr(DEFAULT_LIMITS, name) for name, key in keys().items()}


def test_the_readme_table_has_every_limit_with_its_default() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| (\d+)", readme, re.MULTILINE))
    assert {key: int(rows[key]) for key in keys().values()} == {
        key: getattr(DEFAULT_LIMITS, name) for name, key in keys().items()}


def test_policy_limits_in_a_configuration_are_validated() -> None:
    text = ("apiVersion: policysched.io/v1alpha1\nkind: SchedulerConfiguration\n"
            "policyLimits:\n  maxDepth: 1000\n  maxRule: 3\n")
    policy_set = build_policy_set(load_text(text, "config.yaml"))
    assert [(d.line, d.message) for d in policy_set.diagnostics] == [
        (4, 'field "maxDepth" must be at most 200, not 1000'),
        (5, 'unknown field "maxRule" (did you mean "maxRules"?)'),
    ]
