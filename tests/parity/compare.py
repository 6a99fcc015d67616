"""One decision compared: kube's outcome and ours, aspect by aspect.

* feasibility — the first attempt found a node on both sides, or on neither;
* message — the first FailedScheduling message is the same text (or absent on both);
* node — the same node, or (kube chooses at random among equal top scores) ours is in
  kube's top-score set; both unbound agrees too;
* victims — the same nominated node and the same victims.

``scores`` (our per-node totals equal kube's) is reported, not required. A difference gets a
``kind``: the first pattern of ``PATTERNS`` that explains it, else the aspect that differs.
"""

from __future__ import annotations

from collections.abc import Callable
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
        """What explains the difference (empty when there is none)."""
        if not self.differences:
            return ""
        for name, explains in PATTERNS:
            if explains(self):
                return name
        return "+".join(self.differences)


def _only_dra_reason(c: Comparison) -> bool:
    """kube's message is ours with DynamicResources' PostFilter reason before
    ``preemption:``, and nothing else differs."""
    kube, ours = c.kube.message, c.ours.message
    return (c.differences == ("message",) and kube is not None and ours is not None
            and kube.replace(DRA_POSTFILTER, "") == ours)


PATTERNS: tuple[tuple[str, Callable[[Comparison], bool]], ...] = (
    ("message: DynamicResources PostFilter reason missing", _only_dra_reason),
)
