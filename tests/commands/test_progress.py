"""The progress of long `simulate` and `test` runs: the engine's callback, and the bar on
stderr only when stderr is a terminal and the output is not JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from policysched.cli import main
from policysched.commands import progress
from policysched.commands.loading import load_cluster, load_engine
from policysched.commands.simulate import SimulationProgress, simulate

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "examples" / "demo-cluster.yaml")
SCENARIOS = ROOT / "tests" / "framework" / "scenarios"


def show_at_once(patch: pytest.MonkeyPatch, terminal: bool = True) -> None:
    """A bar shown from the first report and rendered at every one, so that a run as short
    as a test's would show it; ``terminal``: stderr taken for a terminal (CliRunner's is
    not one)."""
    patch.setattr(progress, "SHOW_AFTER", 0.0)
    patch.setattr(progress, "REFRESH_INTERVAL", 0.0)
    if terminal:
        patch.setattr(progress, "stderr_console",
                      lambda: Console(stderr=True, force_terminal=True, width=120))


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code in (0, 1), result.output
    return result


def test_simulate_reports_pods_decided_up_to_the_total() -> None:
    engine = load_engine([], None)
    objects, start = load_cluster(DEMO, None)
    reports: list[SimulationProgress] = []
    outcome = simulate(objects, engine.frameworks, engine.settings, start,
                       on_progress=reports.append)
    total = len(outcome.pods)
    assert reports[0].decided < total
    assert all(r.total == total for r in reports)
    decided = [r.decided for r in reports]
    assert decided == sorted(decided)
    elapsed = [r.elapsed for r in reports]
    assert elapsed == sorted(elapsed)
    assert (reports[-1].decided, reports[-1].elapsed) == (total, outcome.end - start)
    assert reports[-1].elapsed >= 15  # the demo's delayed pod binds after 15 s


@pytest.mark.parametrize("output", ["table", "json"])
def test_no_bar_when_stderr_is_not_a_terminal(output: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    show_at_once(monkeypatch, terminal=False)
    assert invoke("simulate", "--cluster", DEMO, "-o", output).stderr == ""
    assert invoke("test", str(SCENARIOS)).stderr == ""


def test_no_bar_in_json_mode_even_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    show_at_once(monkeypatch)
    result = invoke("simulate", "--cluster", DEMO, "-o", "json")
    assert result.stderr == ""


def test_simulate_bar_on_a_terminal_leaves_stdout_as_the_table(
        monkeypatch: pytest.MonkeyPatch) -> None:
    plain = invoke("simulate", "--cluster", DEMO)
    with monkeypatch.context() as patch:
        show_at_once(patch)
        shown = invoke("simulate", "--cluster", DEMO)
    assert shown.stdout == plain.stdout
    assert plain.stdout.startswith("POD")
    assert "simulating" in shown.stderr and "pods decided" in shown.stderr
    assert "s simulated" in shown.stderr


def test_test_bar_on_a_terminal_leaves_stdout_as_the_report(
        monkeypatch: pytest.MonkeyPatch) -> None:
    plain = invoke("test", str(SCENARIOS))
    with monkeypatch.context() as patch:
        show_at_once(patch)
        shown = invoke("test", str(SCENARIOS))
    assert shown.stdout == plain.stdout
    assert "passed" in plain.stdout
    assert "testing" in shown.stderr and "scenarios" in shown.stderr


def test_the_bar_waits_before_showing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run shorter than SHOW_AFTER prints nothing on stderr, terminal or not."""
    show_at_once(monkeypatch)
    monkeypatch.setattr(progress, "SHOW_AFTER", 60.0)
    assert invoke("simulate", "--cluster", DEMO).stderr == ""
