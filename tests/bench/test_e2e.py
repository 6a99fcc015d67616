"""bench/e2e.py's reports name no path of the machine they ran on."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from e2e import home_relative  # bench/ is not a package: on sys.path above


def test_binaries_under_home_are_written_with_a_tilde() -> None:
    home = Path.home()
    assert home_relative(str(home / ".cache" / "x" / "kube-scheduler")) == \
        "~/.cache/x/kube-scheduler"
    assert home_relative("/opt/kube-scheduler") == "/opt/kube-scheduler"
    assert home_relative(str(home) + "-other/bin") == str(home) + "-other/bin"
