"""service.main: ``run`` resolves its configuration and policy sources as the offline
commands do."""

from __future__ import annotations

from pathlib import Path

from policysched.policy.sources import resolve_sources
from policysched.resources import BUILTIN_POLICIES
from policysched.service.main import leader_elect_default, watched_sources

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
    sources = watched_sources(resolved)
    # the configuration's directories (relative to it) first, then --policies
    assert sources.directories == resolved.paths == (
        str((tmp_path / "conf" / "pol").resolve()), "extra")
    assert [(s.namespace, s.label_selector) for s in sources.configmaps] == [
        ("ops", "policysched.io/policy=true"), ("team", "team=a")]
    assert leader_elect_default(str(config)) is True


def test_without_a_configuration_run_uses_the_built_in_one_and_adds_policies() -> None:
    sources = watched_sources(resolve_sources(None, ["mine.yaml"]))
    # before, --policies replaced the built-in library (and enabled every policy found)
    assert sources.directories == (str(BUILTIN_POLICIES), "mine.yaml")
    assert sources.configmaps == ()
    assert leader_elect_default(None) is False
