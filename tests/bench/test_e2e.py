"""bench/e2e.py's reports: no path of the machine they ran on; repetitions taken in turns
and summed up by their medians; policysched's threads grouped by their OS names."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from e2e import (  # bench/ is not a package: on sys.path above
    BINDERS,
    KUBE_SCHEDULER,
    MAIN_THREAD,
    MULTIPLEXER,
    OTHER_THREADS,
    POLICYSCHED,
    UNATTRIBUTED,
    NodeCountResult,
    SchedulerResult,
    Spread,
    ThreadTimes,
    WorkloadResult,
    format_table,
    home_relative,
    ratio_lines,
    thread_cpu_by_group,
    turn_order,
)

from policysched.cluster.exchange import MULTIPLEXER_NAME


def test_binaries_under_home_are_written_with_a_tilde() -> None:
    home = Path.home()
    assert home_relative(str(home / ".cache" / "x" / "kube-scheduler")) == \
        "~/.cache/x/kube-scheduler"
    assert home_relative("/opt/kube-scheduler") == "/opt/kube-scheduler"
    assert home_relative(str(home) + "-other/bin") == str(home) + "-other/bin"


def test_the_schedulers_take_turns_and_which_goes_first_alternates() -> None:
    order = [(repetition, label) for repetition, label, _ in turn_order(3)]
    assert order == [(0, POLICYSCHED), (0, KUBE_SCHEDULER), (1, KUBE_SCHEDULER),
                     (1, POLICYSCHED), (2, POLICYSCHED), (2, KUBE_SCHEDULER)]


def test_a_spread_is_the_median_and_range_of_the_known_values() -> None:
    assert Spread.of([3.0, None, 1.0, 10.0]) == Spread(3.0, 1.0, 10.0, 3)
    assert Spread.of([None]) is None


def run(scheduler: str, bound: int, window: float, cpu: float,
        threads: dict[str, float] | None = None) -> SchedulerResult:
    return SchedulerResult(scheduler, "basic", 1000, 100, created=100, bound=bound,
                           window_seconds=window, cpu_seconds={scheduler: cpu},
                           threads=threads or {})


def test_ratios_are_those_of_the_medians_and_the_summary_lines_keep_their_form() -> None:
    threads = {MAIN_THREAD: 0.2, "informer-Pod": 0.05, BINDERS: 0.02, OTHER_THREADS: 0.0001,
               "informer-Node": 0.0}
    w = WorkloadResult("basic", 1000, 100, 200, repeat=3, runs=[
        run(POLICYSCHED, 100, 1.0, 0.3, threads), run(POLICYSCHED, 100, 2.0, 0.3, threads),
        run(POLICYSCHED, 100, 4.0, 0.3, threads), run(KUBE_SCHEDULER, 100, 1.0, 0.1),
        run(KUBE_SCHEDULER, 100, 1.0, 0.1), run(KUBE_SCHEDULER, 100, 10.0, 0.1)])
    assert w.measured
    assert w.ratio("throughput") == 0.5  # medians 50 / 100 pods/s
    assert w.ratio("cpu") == 3.0
    lines = ratio_lines([NodeCountResult(1000, [w])])
    assert lines[0] == "e2e throughput ratio policysched/kube-scheduler @1000 nodes: 0.50"
    assert "e2e cpu per pod ratio policysched/kube-scheduler @1000 nodes: 3.00" in lines
    table = format_table([NodeCountResult(1000, [w])])
    assert "| basic | policysched | 100/100 | 50.0 (25.0-100.0) |" in table
    assert "| MainThread | 2.00 (67%) |" in table
    assert "| informer-Pod | 0.50 (17%) |" in table
    assert "informer-Node" not in table  # under 0.01 ms/pod: with the others


def test_a_missing_run_means_not_measured() -> None:
    w = WorkloadResult("basic", 1000, 100, 200, repeat=2, runs=[
        run(POLICYSCHED, 100, 1.0, 0.3), run(KUBE_SCHEDULER, 100, 1.0, 0.1),
        run(POLICYSCHED, 100, 1.0, 0.3)])
    assert not w.measured


def test_thread_cpu_is_grouped_by_os_thread_name() -> None:
    pid = 100
    before = ThreadTimes(10.0, {100: ("policysched", 5.0), 101: ("binder-0", 1.0),
                                102: ("informer-Pod", 2.0), 103: ("binder-1", 0.5)})
    after = ThreadTimes(20.0, {100: ("policysched", 9.0), 101: ("binder-0", 2.0),
                               102: ("informer-Pod", 3.0), 104: ("binder-2", 1.0),
                               105: ("policysched-hea", 0.5), 106: ("http-multiplex", 0.25)})
    groups = thread_cpu_by_group(pid, before, after)
    assert groups[MAIN_THREAD] == 4.0
    assert groups[BINDERS] == 2.0  # binder-0 + the new binder-2
    assert groups["informer-Pod"] == 1.0
    assert groups[OTHER_THREADS] == 0.5
    assert groups[MULTIPLEXER] == 0.25 and MULTIPLEXER == MULTIPLEXER_NAME  # policysched's
    assert abs(groups[UNATTRIBUTED] - 2.25) < 1e-9  # binder-1 and others that ended
