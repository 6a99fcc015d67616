"""Test-session hooks: print the CEL conformance and Kubernetes differential figures in the
summary."""

from __future__ import annotations

from typing import Any, cast


def pytest_terminal_summary(terminalreporter: Any) -> None:
    try:
        from tests.cel.test_conformance import REPORT
    except ImportError:
        return
    if "summary" in REPORT:
        for line in cast(list[str], REPORT.get("lines", [])):
            terminalreporter.write_line(str(line))
        terminalreporter.write_line(str(REPORT["summary"]))
    try:
        from tests.cel.test_kubernetes import REPORT as KUBERNETES
    except ImportError:
        return
    if "summary" in KUBERNETES:
        terminalreporter.write_line(KUBERNETES["summary"])
