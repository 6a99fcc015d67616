"""The FailedScheduling text has kube-scheduler's exact form."""

from __future__ import annotations

from policysched.framework.messages import fit_error


def test_reasons_are_counted_and_sorted_as_strings() -> None:
    reasons = ["Insufficient cpu"] * 3 + ["node(s) had untolerated taint(s)"] * 2
    assert fit_error(5, reasons) == (
        "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3 Insufficient cpu.")


def test_counts_sort_as_strings_not_numbers() -> None:
    # kube-scheduler sorts "10 x" before "9 y": the histogram entries are sorted as strings
    reasons = ["y"] * 9 + ["x"] * 10
    assert fit_error(19, reasons) == "0/19 nodes are available: 10 x, 9 y."


def test_pre_filter_message_alone_and_preemption_suffix() -> None:
    assert fit_error(3, ["ignored"], pre_filter_message="delay not reached",
                     post_filter_message="preemption: not eligible") == (
        "0/3 nodes are available: delay not reached. preemption: not eligible")


def test_no_reasons() -> None:
    assert fit_error(0, []) == "0/0 nodes are available:"
