"""The committed list of known differences (``known-differences.yaml``): each differing
decision of the test sample with the aspects that differ and the reason. ``test_parity``
fails on a difference not listed and on a listed one that now agrees, so the list stays
honest; ``python -m tests.parity --write-known`` rewrites it from a run, keeping the reasons
already written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from .compare import Comparison

KNOWN_FILE = Path(__file__).resolve().parent / "known-differences.yaml"
HEADER = """\
# Decisions of the parity sample where policysched and kube-scheduler v1.34 are known to
# differ, with the aspects that differ and why (tests/parity/test_parity.py fails on a
# difference not listed here AND on a listed one that now agrees: remove it when fixed).
# Regenerate with `python -m tests.parity --decisions 400 --write-known` (reasons kept).
"""


@dataclass(frozen=True)
class Known:
    decision: str
    differs: tuple[str, ...]
    reason: str


def load_known(path: Path = KNOWN_FILE) -> dict[str, Known]:
    if not path.exists():
        return {}
    entries = yaml.safe_load(path.read_text()) or []
    return {e["decision"]: Known(e["decision"], tuple(e["differs"]), e["reason"])
            for e in entries}


def write_known(comparisons: Sequence[Comparison], path: Path = KNOWN_FILE) -> None:
    known = load_known(path)
    entries = []
    for c in comparisons:
        if c.differences:
            previous = known.get(c.id)
            reason = previous.reason if previous is not None else c.kind
            entries.append({"decision": c.id, "differs": list(c.differences), "reason": reason})
    path.write_text(HEADER + yaml.safe_dump(entries, sort_keys=False, width=100,
                                                default_flow_style=None))
