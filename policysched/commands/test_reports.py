"""The reports of ``policysched test``: text for people, JSON for tools, JUnit XML for CI.

All three are built from the same results, grouped by file in the order the files ran.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from .policy_tests import CaseResult, Status

JUNIT_SUITES = "policysched test"
LABELS = {Status.PASSED: "PASS", Status.FAILED: "FAIL", Status.ERROR: "ERROR"}


@dataclass(frozen=True)
class FileReport:
    path: str
    cases: Sequence[CaseResult]


def count(results: Sequence[CaseResult], status: Status) -> int:
    return sum(1 for r in results if r.status is status)


def summary(results: Sequence[CaseResult]) -> str:
    return (f"{count(results, Status.PASSED)} passed, {count(results, Status.FAILED)} failed"
            + (f", {errors} error{'s' * (errors != 1)}"
               if (errors := count(results, Status.ERROR)) else ""))


def text_lines(results: Sequence[CaseResult]) -> list[str]:
    """``PASS``/``FAIL``/``ERROR`` and the case, then each failure and each loading
    warning indented."""
    lines = []
    for result in results:
        label = f"{result.path}: {result.name}" if result.name else result.path
        lines.append(f"{LABELS[result.status]} {label}")
        lines += [f"    {line}" for failure in result.failures for line in failure.splitlines()]
        lines += [f"    {warning}" for warning in result.warnings]
    return lines


def as_json(files: Sequence[FileReport]) -> str:
    """``{"passed": n, "failed": n, "errors": n, "files": [{"path", "cases": [{"name",
    "status", "failures": [...], "warnings": [...]}]}]}``; status is passed, failed or
    error."""
    results = [r for f in files for r in f.cases]
    return json.dumps({
        "passed": count(results, Status.PASSED),
        "failed": count(results, Status.FAILED),
        "errors": count(results, Status.ERROR),
        "files": [{"path": f.path,
                   "cases": [{"name": r.name, "status": r.status.value,
                              "failures": r.failures, "warnings": r.warnings}
                             for r in f.cases]}
                  for f in files],
    }, indent=2)


def as_junit(files: Sequence[FileReport]) -> bytes:
    """JUnit XML: a testsuite per file, a testcase per case, with a ``failure`` (an
    expectation did not hold) or an ``error`` (the case could not run) element."""
    results = [r for f in files for r in f.cases]
    root = ET.Element("testsuites", name=JUNIT_SUITES, tests=str(len(results)),
                      failures=str(count(results, Status.FAILED)),
                      errors=str(count(results, Status.ERROR)))
    for file in files:
        suite = ET.SubElement(root, "testsuite", name=file.path, tests=str(len(file.cases)),
                              failures=str(count(file.cases, Status.FAILED)),
                              errors=str(count(file.cases, Status.ERROR)))
        for result in file.cases:
            case = ET.SubElement(suite, "testcase", name=result.name or file.path,
                                 classname=file.path)
            if result.status is not Status.PASSED:
                tag = "failure" if result.status is Status.FAILED else "error"
                problem = ET.SubElement(case, tag, message=result.failures[0].splitlines()[0])
                problem.text = "\n".join(result.failures)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
