"""policy.sources: the configuration and policy sources every command resolves the same
way — policySources honoured (relative to the configuration), --policies added, --enable,
and warnings for what a command cannot use."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from policysched.errors import UserError
from policysched.policy import DiagnosticKind, load_policy_set
from policysched.policy.sources import (
    BUILTIN_CONFIGURATION,
    not_enabled,
    resolve_sources,
    with_enabled,
)
from policysched.resources import BUILTIN_POLICIES

POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {{name: {name}}}
spec:
  filter:
  - name: any
    expression: "true"
"""
CONFIG = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulerConfiguration
{sources}
profiles:
- schedulerName: policysched
  policies:
    enabled: [{{name: mine}}]
    disabled: [{{name: "*"}}]
"""


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_without_a_configuration_the_built_in_one_and_its_library() -> None:
    sources = resolve_sources(None, ["extra.yaml"])
    assert sources.builtin and Path(sources.config_path) == BUILTIN_CONFIGURATION
    assert [Path(p).resolve() for p in sources.paths[:1]] == [BUILTIN_POLICIES.resolve()]
    assert sources.paths[-1] == "extra.yaml"  # added, not replacing the library
    assert sources.configuration["profiles"][0]["schedulerName"] == "policysched"


def test_policy_sources_are_relative_to_the_configuration_file(tmp_path: Path) -> None:
    config = write(tmp_path / "conf" / "config.yaml",
                   CONFIG.format(sources="policySources: {directories: [lib]}"))
    sources = resolve_sources(config, ["added"])
    assert sources.paths == (str((tmp_path / "conf" / "lib").resolve()), "added")
    assert not sources.builtin and sources.label == config


def test_a_configuration_without_policy_sources_uses_the_built_in_library(
        tmp_path: Path) -> None:
    config = write(tmp_path / "config.yaml", CONFIG.format(sources=""))
    assert resolve_sources(config).paths == (str(BUILTIN_POLICIES),)


def test_a_configmap_source_is_a_positioned_warning_offline(tmp_path: Path) -> None:
    config = write(tmp_path / "config.yaml", CONFIG.format(
        sources="policySources:\n  configMaps:\n  - namespace: team-a\n"))
    sources = resolve_sources(config)
    assert sources.paths == () and [c.namespace for c in sources.configmaps] == ["team-a"]
    (notice,) = sources.offline_notices()
    assert (notice.severity, notice.kind, notice.line) == ("warning", DiagnosticKind.SOURCE, 5)
    assert "read from the cluster by `policysched run` only" in notice.message
    assert "--policies" in notice.message


def test_a_file_without_exactly_one_configuration_is_a_clear_error(tmp_path: Path) -> None:
    policy = write(tmp_path / "p.yaml", POLICY.format(name="mine"))
    with pytest.raises(UserError, match="expected one SchedulerConfiguration document, "
                                        "found 0"):
        resolve_sources(policy)


def test_enable_appends_to_the_first_profile_with_its_weight() -> None:
    configuration = {"profiles": [
        {"schedulerName": "a", "policies": {"enabled": [{"name": "x", "weight": 3}],
                                            "disabled": [{"name": "*"}]}},
        {"schedulerName": "b", "policies": {"enabled": []}}]}
    out = with_enabled(configuration, ["mine:5", "x"])
    assert out["profiles"][0]["policies"]["enabled"] == [{"name": "mine", "weight": 5},
                                                         {"name": "x"}]
    assert out["profiles"][1] == configuration["profiles"][1]
    assert configuration["profiles"][0]["policies"]["enabled"] == [{"name": "x", "weight": 3}]
    with pytest.raises(UserError, match="expected NAME or NAME:WEIGHT"):
        with_enabled(configuration, ["mine:heavy"])


def test_a_policy_enabled_by_no_profile_is_a_warning_but_not_the_library(
        tmp_path: Path) -> None:
    mine = write(tmp_path / "mine.yaml", POLICY.format(name="mine"))
    other = write(tmp_path / "other.yaml", POLICY.format(name="other"))
    policies = load_policy_set([mine, other, BUILTIN_POLICIES / "zone-a-first.yaml"]).policies
    configuration = resolve_sources(write(tmp_path / "c.yaml", CONFIG.format(sources="")))
    (warning,) = not_enabled(policies, configuration.configuration, "c.yaml")
    assert (warning.path, warning.line, warning.policy) == (other, 1, "other")
    assert warning.severity == "warning" and warning.kind == DiagnosticKind.NOT_ENABLED
    assert "--enable other[:WEIGHT]" in warning.message


def test_the_warning_names_the_label_a_profile_selects() -> None:
    policy = load_policy_set([BUILTIN_POLICIES / "zone-a-first.yaml"]).policies
    configuration = {"profiles": [{"schedulerName": "p", "policies": {
        "disabled": [{"name": "*"}],
        "selector": {"matchLabels": {"policysched.io/profile": "p"}}}}]}
    # the library is exempt: check the hint through a copy outside it
    moved = [dataclasses.replace(p, source="elsewhere.yaml") for p in policy]
    (warning,) = not_enabled(moved, configuration, "c.yaml")
    assert "give it the label policysched.io/profile: p in its metadata.labels" in \
        warning.message
