"""celCompatibilityVersion of a SchedulerConfiguration: validate, offline commands and the
reloader compile policies at that version."""

from __future__ import annotations

from pathlib import Path

import pytest

from policysched.cel.compatibility import DEFAULT_VERSION, KubernetesVersion
from policysched.commands.validate import validate
from policysched.errors import UserError
from policysched.policy import cel_version, load_policy_set
from policysched.policy.loader import load_paths
from policysched.resources import BUILTIN_POLICIES
from policysched.service.reload import CompileCache

POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: spread
spec:
  filter:
  - name: no-seven
    expression: "[7, 3].sort()[0] != 7 && pod.name != ''"
"""


def config(tmp_path: Path, version: str | None) -> str:
    line = f'celCompatibilityVersion: "{version}"\n' if version is not None else ""
    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: policysched.io/v1alpha1\nkind: SchedulerConfiguration\n"
                    + line + "profiles:\n- schedulerName: s\n  policies:\n"
                    "    enabled: [{name: spread}]\n")
    return str(path)


@pytest.fixture
def policy(tmp_path: Path) -> str:
    path = tmp_path / "policies" / "spread.yaml"
    path.parent.mkdir()
    path.write_text(POLICY)
    return str(path)


def test_from_configuration() -> None:
    assert cel_version.from_configuration(None) == DEFAULT_VERSION
    assert cel_version.from_configuration({}) == DEFAULT_VERSION
    assert cel_version.from_configuration(
        {"celCompatibilityVersion": "1.30"}) == KubernetesVersion(1, 30)
    with pytest.raises(UserError) as info:
        cel_version.from_configuration({"celCompatibilityVersion": "1.99"})
    assert str(info.value) == (
        "celCompatibilityVersion in the SchedulerConfiguration: unknown CEL compatibility "
        "version '1.99': use a Kubernetes version from 1.23 to 1.34")


def test_validate_compiles_at_the_configured_version(tmp_path: Path, policy: str) -> None:
    assert validate([policy]).valid
    assert validate([policy], config(tmp_path, "1.34")).valid
    errors = validate([policy], config(tmp_path, "1.33")).errors
    assert [e.message for e in errors] == [
        "expression: reference error: undeclared reference to 'sort': introduced in "
        "Kubernetes 1.34, the CEL compatibility version is 1.33"]
    assert validate([policy], config(tmp_path, None)).valid


def test_unknown_version_is_a_positioned_configuration_error(tmp_path: Path) -> None:
    path = config(tmp_path, "1.35")
    policy_set = load_policy_set([path])
    [error] = policy_set.errors
    assert (error.line, error.column) == (3, 26)
    assert "celCompatibilityVersion" in error.message and "1.34" in error.message
    with pytest.raises(UserError):
        validate([], path)


def test_the_reloader_compiles_at_the_configured_version(policy: str) -> None:
    loaded = load_paths([policy])
    assert CompileCache().build(loaded).valid
    assert not CompileCache(version=KubernetesVersion(1, 33)).build(loaded).valid


@pytest.mark.parametrize("version", ["1.23", "1.30", "1.33"])
def test_the_builtin_library_compiles_at_its_own_version(tmp_path: Path, version: str) -> None:
    """The setting is about the user's policies: the built-in ones (written for 1.34:
    lists.range, transformMapEntry) stay usable; a copy of one outside the library is the
    user's and is checked at the configured version."""
    assert validate([str(BUILTIN_POLICIES)], config(tmp_path, version)).valid
    copy = tmp_path / "spread.yaml"
    copy.write_text((BUILTIN_POLICIES / "pod-topology-spread.yaml").read_text())
    errors = validate([str(copy)], config(tmp_path, version)).errors
    assert any("'lists.range': introduced in Kubernetes 1.34" in e.message for e in errors)
