"""service.main: ``run`` resolves its configuration and policy sources as the offline
commands do."""

from __future__ import annotations

from pathlib import Path

import pytest

from policysched.errors import UserError
from policysched.policy.sources import resolve_sources
from policysched.resources import BUILTIN_POLICIES
from policysched.service.leader import LeaderElectionSettings
from policysched.service.main import leader_elect_default, own_namespace, watched_sources

CONFIG = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulerConfiguration
policySources:
  directories: [pol]
  configMaps:
  - namespace: ops
  - namespace: team
    labelSelector: {matchLabels: {team: a}}
leaderElection: {leaderElect: true}
"""


def test_run_watches_what_the_offline_commands_read(tmp_path: Path) -> None:
    config = tmp_path / "conf" / "config.yaml"
    config.parent.mkdir()
    config.write_text(CONFIG)
    resolved = resolve_sources(str(config), ["extra"])
    sources = watched_sources(resolved, "mine")
    # the configuration's directories (relative to it) first, then --policies
    assert sources.directories == resolved.paths == (
        str((tmp_path / "conf" / "pol").resolve()), "extra")
    assert [(s.namespace, s.label_selector) for s in sources.configmaps] == [
        ("ops", "policysched.io/policy=true"), ("team", "team=a")]
    assert leader_elect_default(str(config)) is True


def test_without_a_configuration_run_uses_the_built_in_one_and_adds_policies() -> None:
    sources = watched_sources(resolve_sources(None, ["mine.yaml"]), None)
    # before, --policies replaced the built-in library (and enabled every policy found)
    assert sources.directories == (str(BUILTIN_POLICIES), "mine.yaml")
    assert sources.configmaps == ()
    assert leader_elect_default(None) is False


def test_a_source_without_a_namespace_is_the_schedulers_own(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.replace("  - namespace: ops\n", "  - {}\n"))
    resolved = resolve_sources(str(config))
    sources = watched_sources(resolved, "policysched-system")
    assert [s.namespace for s in sources.configmaps] == ["policysched-system", "team"]
    with pytest.raises(UserError, match=r"policySources.configMaps\[0\] names no namespace"):
        watched_sources(resolved, None)


def test_the_own_namespace_is_pod_namespace_else_the_service_accounts(
        tmp_path: Path) -> None:
    account = tmp_path / "namespace"
    assert own_namespace({}, account) is None
    account.write_text("from-token\n")
    assert own_namespace({}, account) == "from-token"
    assert own_namespace({"POD_NAMESPACE": "from-env"}, account) == "from-env"


def test_a_lease_without_a_namespace_is_in_the_given_default() -> None:
    spec = {"leaderElection": {"leaderElect": True}}
    assert LeaderElectionSettings.from_configuration(spec).namespace == "kube-system"
    assert LeaderElectionSettings.from_configuration(spec, "mine").namespace == "mine"
    spec["leaderElection"]["namespace"] = "set"
    assert LeaderElectionSettings.from_configuration(spec, "mine").namespace == "set"
