"""One decision compared: kube's outcome and ours, aspect by aspect.

* feasibility — the first attempt found a node on both sides, or on neither;
* message — the first FailedScheduling message is the same text (or absent on both);
* node — the same node, or (kube chooses at random among equal top scores) ours is in
  kube's top-score set; both unbound agrees too;
* victims — the same nominated node and the same victims.

``scores`` (our per-node totals equal kube's) is reported, not required. A difference has a
``kind`` that says what differs (the message reasons whose counts differ, ...), so that the
report groups decisions that differ alike.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from .outcome import Outcome
from .scenario import Scenario

ASPECTS = ("feasibility", "message", "node", "victims")
DRA_POSTFILTER = "no new claims to deallocate, "


@dataclass(frozen=True)
class Comparison:
    scenario: Scenario
    index: int  # of the pending pod
    kube: Outcome
    ours: Outcome
    features: frozenset[str]

    @property
    def id(self) -> str:
        """``<scenario>/<namespace>/<pod>``: names the decision in reports and lists."""
        return f"{self.scenario.id}/{self.kube.pod}"

    @property
    def compared(self) -> bool:
        """Both sides made the decision (no refusal, time-out or replay failure)."""
        return not self.kube.note and not self.ours.note

    def agrees(self, aspect: str) -> bool:
        kube, ours = self.kube, self.ours
        if aspect == "feasibility":
            return kube.feasible == ours.feasible
        if aspect == "message":
            return kube.message == ours.message
        if aspect == "node":
            return ours.node == kube.node or (ours.node is not None
                                              and ours.node in kube.top_nodes())
        if aspect == "victims":
            return kube.nominated == ours.nominated and kube.victims == ours.victims
        raise ValueError(aspect)

    def applies(self, aspect: str) -> bool:
        """Whether the aspect says anything about this decision: a message where either
        side failed, a node where either bound, victims where either preempted."""
        kube, ours = self.kube, self.ours
        if aspect == "message":
            return kube.message is not None or ours.message is not None
        if aspect == "node":
            return kube.node is not None or ours.node is not None
        if aspect == "victims":
            return bool(kube.nominated or ours.nominated or kube.victims or ours.victims)
        return True

    @property
    def differences(self) -> tuple[str, ...]:
        return tuple(a for a in ASPECTS if self.compared and not self.agrees(a))

    @property
    def scores_equal(self) -> bool:
        return self.kube.scores == self.ours.scores

    @property
    def kind(self) -> str:
        """What kind of difference this is (empty when there is none): per differing
        aspect, what differs — the reasons of the messages whose counts differ, the side
        that bound, ..."""
        kube, ours = self.kube, self.ours
        parts = []
        if "feasibility" in self.differences:
            failed = kube if not kube.feasible else ours
            side = "kube" if failed is kube else "ours"
            why = sorted(_reasons(failed.message or "")[0]) or [failed.message or "unbound"]
            parts.append(f"only {side} unschedulable: {'; '.join(why)}")
        elif "message" in self.differences:
            parts.append(message_kind(kube.message or "", ours.message or ""))
        if "node" in self.differences and "feasibility" not in self.differences:
            parts.append("node outside kube's top scores"
                         + ("" if self.scores_equal else " (scores differ)"))
        if "victims" in self.differences:
            parts.append("nominated node differs" if kube.nominated != ours.nominated
                         else "victims differ")
        return " + ".join(parts)


REASONS = re.compile(r"^0/\d+ nodes are available: (.*?)\.(?: (?:no new claims to deallocate, )?"
                     r"preemption: (.*))?$")
COUNTED = re.compile(r"^(\d+) (.*)$")


def _histogram(text: str) -> Counter[str]:
    """``1 Insufficient cpu, 2 Too many pods`` → reason → count."""
    counts: Counter[str] = Counter()
    for part in re.split(r", (?=\d+ )", text.rstrip(".")):
        found = COUNTED.match(part)
        if found is None:
            counts[part] += 1
        else:
            counts[found.group(2)] += int(found.group(1))
    return counts


def _reasons(message: str) -> tuple[Counter[str], Counter[str]]:
    """The filter reasons and the preemption reasons of a FailedScheduling message."""
    found = REASONS.match(message)
    if found is None:
        return Counter({message: 1}) if message else Counter(), Counter()
    preemption = found.group(2) or ""
    inner = REASONS.match(preemption)
    return _histogram(found.group(1)), (_histogram(inner.group(1)) if inner
                                        else Counter({preemption: 1}) if preemption
                                        else Counter())


def message_kind(kube: str, ours: str) -> str:
    """What differs between two FailedScheduling messages: DynamicResources' PostFilter
    reason, the filter reasons whose counts differ, the preemption reasons that do."""
    parts = []
    if DRA_POSTFILTER in kube and DRA_POSTFILTER not in ours:
        parts.append("DynamicResources PostFilter reason missing")
    for name, theirs, mine in zip(("filter", "preemption"), _reasons(kube), _reasons(ours),
                                  strict=True):
        differing = sorted(r for r in theirs.keys() | mine.keys() if theirs[r] != mine[r])
        if differing:
            parts.append(f"{name} reasons differ: {'; '.join(differing)}")
    if not parts:
        parts.append("message text differs")
    return "message: " + ", ".join(parts)
