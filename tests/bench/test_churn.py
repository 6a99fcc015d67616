"""bench/churn.py: the RSS verdict compares the run's halves, and its section replaces the
one in docs/benchmarks.md without touching the others."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from churn import (  # bench/ is not a package: on sys.path above
    SECTION,
    ChurnResult,
    Sample,
    existing_section,
    format_report,
    replace_section,
    summary_line,
)


def result(rss: list[float]) -> ChurnResult:
    r = ChurnResult(100, 5.0, 60.0, 10.0)
    r.samples = [Sample(60.0 * i, mib, float(i), 300 * i, 300 * max(0, i - 1))
                 for i, mib in enumerate(rss)]
    return r


def test_a_warm_up_then_a_plateau_is_flat_and_a_steady_climb_is_not() -> None:
    plateau = result([80, 95, 100, 101, 100, 101, 100, 100, 101, 100, 100])
    assert plateau.flat
    assert "**flat**" in format_report(plateau)
    climb = result([80 + 5 * i for i in range(11)])
    assert not climb.flat
    assert climb.second_half_slope is not None and abs(climb.second_half_slope - 300) < 1e-6
    assert "NOT flat" in format_report(climb)
    assert summary_line(climb).startswith("churn rss policysched second/first half: 1.")


def test_the_section_is_replaced_in_place_or_added(tmp_path: Path) -> None:
    text = f"# Benchmarks\n\n## Engine\n\nA\n\n{SECTION}\n\nold\n\n## Summary\n\nS\n"
    replaced = replace_section(text, "new\n")
    assert replaced == f"# Benchmarks\n\n## Engine\n\nA\n\n{SECTION}\n\nnew\n\n## Summary\n\nS\n"
    added = replace_section("# Benchmarks\n", "new")
    assert added == f"# Benchmarks\n\n{SECTION}\n\nnew\n"
    before_summary = replace_section("# Benchmarks\n\n## Engine\n\nA\n\n## Summary\n\nS\n", "new")
    assert before_summary == (f"# Benchmarks\n\n## Engine\n\nA\n\n{SECTION}\n\nnew\n\n"
                              "## Summary\n\nS\n")
    path = tmp_path / "benchmarks.md"
    path.write_text(replaced)
    assert existing_section(path) == f"{SECTION}\n\nnew\n"
