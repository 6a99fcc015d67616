"""Runs the proto-free CEL conformance cases through our compiler.

Prints ``cel conformance: PASSED/TOTAL`` (and per file) in the test summary and fails when
the pass count drops below ``FLOOR``. Raise the floor as the compiler improves.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from tests.cel.conformance import proto_free_cases, run

FLOOR = 1719  # passes required (of 1,724); raise it as the compiler improves
REPORT: dict[str, object] = {}


def test_conformance_floor() -> None:
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    failures: list[str] = []
    for case in proto_free_cases():
        total[case.file] += 1
        try:
            outcome = run(case)
        except Exception as e:  # a crash is a failure of that case, reported below
            failures.append(f"{case.id}: CRASH {type(e).__name__}: {e}  [{case.raw['expr']}]")
            continue
        if outcome.passed:
            passed[case.file] += 1
        else:
            failures.append(f"{case.id}: {outcome.detail}  [{case.raw['expr']}]")
    n_pass, n_total = sum(passed.values()), sum(total.values())
    REPORT["lines"] = [f"  {f:<16} {passed[f]:>4}/{total[f]}" for f in sorted(total)]
    REPORT["summary"] = f"cel conformance: {n_pass}/{n_total}"
    out = os.environ.get("CEL_CONFORMANCE_FAILURES")
    if out:
        Path(out).write_text("\n".join(failures) + "\n")
    assert n_total == 1724, "the proto-free subset should hold 1,724 cases"
    if n_pass < FLOOR:
        pytest.fail(f"{n_pass}/{n_total} below the floor {FLOOR}; first failures:\n"
                    + "\n".join(failures[:30]))
