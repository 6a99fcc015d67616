"""kube-scheduler's outcomes, cached in a committed JSON file keyed by scenario hash
(``Scenario.key``: the canonical scenario text and the Kubernetes version), so that a run
with a warm cache needs no control plane. Written sorted with stable formatting; entries of
scenarios a run did not use are kept unless it prunes them (``make parity``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .outcome import Outcome

CACHE_FILE = Path(__file__).resolve().parent / "kube-results.json"


@dataclass
class ResultsCache:
    path: Path = CACHE_FILE
    entries: dict[str, dict[str, object]] = field(default_factory=dict)
    changed: bool = False

    @classmethod
    def load(cls, path: Path = CACHE_FILE) -> ResultsCache:
        if not path.exists():
            return cls(path)
        return cls(path, json.loads(path.read_text())["scenarios"])

    def get(self, key: str) -> list[Outcome] | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        return [Outcome.from_json(d) for d in entry["decisions"]]  # type: ignore[attr-defined]

    def put(self, key: str, scenario_id: str, outcomes: list[Outcome]) -> None:
        self.entries[key] = {"scenario": scenario_id,
                             "decisions": [o.as_json() for o in outcomes]}
        self.changed = True

    def keep_only(self, keys: set[str]) -> None:
        """Forget the entries of scenarios not among ``keys`` (a run's whole set)."""
        stale = set(self.entries) - keys
        for key in stale:
            del self.entries[key]
        self.changed = self.changed or bool(stale)

    def save(self) -> None:
        if not self.changed:
            return
        text = json.dumps({"scenarios": dict(sorted(self.entries.items()))}, indent=1,
                          sort_keys=True, ensure_ascii=False)
        self.path.write_text(text + "\n")
        self.changed = False
