"""The saved failures: a run's directory holds that run's differing decisions only."""

from __future__ import annotations

from pathlib import Path

from .compare import Comparison
from .outcome import Outcome
from .report import COLUMNS, describe, save_failures, table_rows
from .scenario import Scenario


def test_a_run_replaces_the_failures_of_the_last_one(tmp_path: Path) -> None:
    (tmp_path / "s_ns_old.yaml").write_text("# a decision of an earlier run\n")
    agreeing = Comparison(Scenario("s", (), ()), 0, Outcome("ns/p", "n1"), Outcome("ns/p", "n1"),
                          frozenset())
    assert save_failures([agreeing], tmp_path) == 0
    assert list(tmp_path.iterdir()) == []


def test_the_volumes_column_counts_decisions_with_storage_only() -> None:
    plain = Comparison(Scenario("s", (), ()), 0, Outcome("ns/p", "n1"), Outcome("ns/p", "n1"),
                       frozenset())
    volumes = COLUMNS.index("volumes")
    assert table_rows([plain])[-1][volumes] == "-"
    kube = Outcome("ns/q", "n1", bindings={"ns/c": "pv-a"})
    other = Comparison(Scenario("s", (), ()), 1, kube, Outcome("ns/q", "n1", bindings={
        "ns/c": "pv-b"}), frozenset())
    rows = table_rows([plain, other])
    assert rows[-1][volumes] == "0.0% (0/1)"
    assert rows[-1][COLUMNS.index("all")] == "50.0% (1/2)"
    assert "bound ns/c → pv-b" in describe(other.ours)
