"""Engine scenarios: YAML files under scenarios/, run through ``policysched test``'s runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from policysched.commands.policy_tests import run_file

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    results = run_file(path)
    assert results
    failures = [f"{r.name}: {f}" for r in results for f in r.failures]
    assert failures == []
