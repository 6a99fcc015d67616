"""PostFilter: preemption, as kube-scheduler's DefaultPreemption does it, with the victim
rule written in CEL.

For each node that failed the filters with a resolvable status, every pod the postFilter
rules allow to be evicted is removed in simulation; if the filters then pass, victims are
reprieved one by one (highest priority first) while the pod still fits. Among the nodes
where preemption helps, the one with the lowest highest-victim priority wins, then the
smallest sum of victim priorities, then the fewest victims, then the first in node order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..cache.node_info import NodeInfo
from ..model.objects import PodInfo
from ..policy.model import PostFilterRule
from . import messages
from .runtime import CycleState, Framework, PolicyInstance, RuleError
from .status import Code, Status


@dataclass(frozen=True)
class Candidate:
    node: str
    victims: tuple[PodInfo, ...]

    def rank(self) -> tuple[int, int, int]:
        priorities = [v.priority for v in self.victims]
        return (max(priorities, default=-(2**31)), sum(priorities), len(priorities))


@dataclass(frozen=True)
class PreemptionResult:
    """A nominated node and its victims, or why preemption did not help (``message``,
    appended to the FailedScheduling text) — or an Error ``status``."""

    candidate: Candidate | None
    message: str
    status: Status | None = None


def preempt(fwk: Framework, state: CycleState, nodes: Sequence[NodeInfo],
            statuses: Mapping[str, Status]) -> PreemptionResult:
    """The best candidate, or why there is none; an Error ``status`` when a postFilter
    rule (its ``expression`` or ``victims``) failed, never "no victims found"."""
    found = fwk.preemption_rules(state)
    if isinstance(found, Status):
        return PreemptionResult(None, "", found)
    rules, refusal = found
    if not rules:
        return PreemptionResult(None, f"{messages.PREEMPTION_PREFIX} {refusal}" if refusal
                                else "")
    reasons: Counter[str] = Counter()
    candidates: list[Candidate] = []
    for node in nodes:
        status = statuses.get(node.name)
        if status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            reasons[messages.PREEMPTION_NOT_HELPFUL] += 1
            continue
        try:
            victims = _victims(fwk, state, rules, node)
        except RuleError as e:
            return PreemptionResult(None, "", e.status)
        if victims is None:
            reasons[messages.PREEMPTION_NO_VICTIMS] += 1
            continue
        candidates.append(Candidate(node.name, victims))
    if not candidates:
        text = messages.fit_error(len(nodes), reasons.elements())
        return PreemptionResult(None, f"{messages.PREEMPTION_PREFIX} {text}")
    best = min(candidates, key=Candidate.rank)  # min keeps the first of equals
    return PreemptionResult(best, "")


def _victims(fwk: Framework, state: CycleState,
             rules: Sequence[tuple[PolicyInstance, PostFilterRule]],
             node: NodeInfo) -> tuple[PodInfo, ...] | None:
    """The smallest set of evictable pods on ``node`` whose removal lets the pod fit.
    Raises ``RuleError`` when a rule fails on the way (a ``victims`` rule, or a filter on
    the node without its victims)."""
    evictable = [p for p in node.pods.values() if fwk.may_evict(state, rules, node, p)]
    if not evictable:
        return None
    current = node.clone()
    for pod in evictable:
        current.remove_pod(pod)
    if not _fits(fwk, state, current):
        return None
    victims: list[PodInfo] = []
    for pod in sorted(evictable, key=lambda p: -p.priority):
        current.add_pod(pod)  # try to reprieve it
        if not _fits(fwk, state, current):
            current.remove_pod(pod)
            victims.append(pod)
    return tuple(victims)


def _fits(fwk: Framework, state: CycleState, node: NodeInfo) -> bool:
    status = fwk.run_filter(state, node)
    if status.code is Code.ERROR:
        raise RuleError(status)
    return status.is_success
