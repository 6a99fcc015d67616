"""End-to-end tests against the local control plane (``deploy/local/cluster.sh``)."""

from __future__ import annotations

from typing import Any


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "e2e: needs the local control plane (deploy/local/cluster.sh)")
