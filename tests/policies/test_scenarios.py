"""The scenario fixtures under scenarios/, and the examples' test files, run through the
engine (``policysched test``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from policysched.commands.policy_tests import run_file

SCENARIOS = sorted(p for p in (Path(__file__).parent / "scenarios").glob("*.yaml")
                   if p.name != "library-config.yaml")
EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*/*-test.yaml"))


@pytest.mark.parametrize("path", SCENARIOS + EXAMPLES, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    results = run_file(path)
    assert results, f"{path.name}: no test document"
    for result in results:
        assert result.passed, f"{result.name}: {result.failures}"
