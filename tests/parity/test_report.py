"""The saved failures: a run's directory holds that run's differing decisions only."""

from __future__ import annotations

from pathlib import Path

from .compare import Comparison
from .outcome import Outcome
from .report import save_failures
from .scenario import Scenario


def test_a_run_replaces_the_failures_of_the_last_one(tmp_path: Path) -> None:
    (tmp_path / "s_ns_old.yaml").write_text("# a decision of an earlier run\n")
    agreeing = Comparison(Scenario("s", (), ()), 0, Outcome("ns/p", "n1"), Outcome("ns/p", "n1"),
                          frozenset())
    assert save_failures([agreeing], tmp_path) == 0
    assert list(tmp_path.iterdir()) == []
