"""Audit rules (``enforcement: Audit``): evaluated where they would run, never deciding.

A profile sets its audited rules apart when it is built (``Framework.audited``): its points
run the enforced rules only, so the pod is scheduled exactly as if the audited rules were
absent, and a profile without any runs exactly as before (no check per rule or per node).
After a point has decided, each audited rule is run alone, in a profile of its own
(``AuditedRule.framework``), by the same code and the same evaluation tier as an enforced
rule, against what the point decided, and what it would have changed is an
``AuditFinding``:

- preEnqueue: it would have kept the pod out of the active queue;
- preFilter: it would have rejected the pod, or left out some of the feasible nodes
  (``nodeNames``);
- filter: it would have rejected some of the nodes the filters found feasible (the nodes
  the cycle chose among: node sampling applies), or all of them (the pod would have been
  unschedulable);
- score: its weighted score would have changed the nodes' totals, and perhaps which node
  has the highest;
- permit: it would have denied the pod, or held it.

An audited rule that fails to evaluate is a finding too (``ERROR``). The scheduler counts
findings in metrics and records them as ``PolicyAudit`` events, each at most once per pod,
rule and result every ``AUDIT_EVENT_INTERVAL`` (``AuditEvents``): a pod retried a hundred
times gets one event, the metric counts a hundred findings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from ..cache.cache import Snapshot
from ..cache.node_info import NodeInfo
from ..model.events import EventType
from ..policy.model import ExtensionPoint
from . import messages
from .evaluator import Evaluator, Nominated, filter_with_nominated
from .runtime import AuditedRule, CycleState, Framework, plugin_list
from .status import Code, Status

# What an audited rule would have done (the ``reason`` label of the audit metric: a fixed
# set, never a rule's own text, which may name pods or nodes)
REJECTED: Final = "Rejected"  # the pod: gated, rejected at preFilter or permit, unschedulable
NODES_REJECTED: Final = "NodesRejected"  # some of the feasible nodes
WAITED: Final = "Waited"  # held at permit
SCORE_CHANGED: Final = "ScoreChanged"  # the totals, not the node with the highest
CHOICE_CHANGED: Final = "ChoiceChanged"  # another node would have had the highest total
ERROR: Final = "Error"  # the rule failed to evaluate
RESULTS: Final = (REJECTED, NODES_REJECTED, WAITED, SCORE_CHANGED, CHOICE_CHANGED, ERROR)

AUDIT_EVENT_INTERVAL: Final = 600.0  # seconds: kube's event aggregation window (10 min)
# a would-be score change is Normal; a would-be rejection, wait or error a Warning
SCORE_RESULTS: Final = frozenset({SCORE_CHANGED, CHOICE_CHANGED})


@dataclass(frozen=True)
class AuditFinding:
    """What one audited rule would have changed for one pod at one point."""

    rule: str  # policy/rule
    policy: str
    rule_name: str
    point: ExtensionPoint
    result: str  # one of RESULTS
    message: str  # "would have rejected ..."

    @property
    def text(self) -> str:
        """The finding as events and ``explain`` show it."""
        return messages.AUDIT_FINDING.format(rule=self.rule, message=self.message)

    @property
    def event_type(self) -> EventType:
        return "Normal" if self.result in SCORE_RESULTS else "Warning"


def _finding(audited: AuditedRule, result: str, message: str) -> AuditFinding:
    rule = audited.rule
    return AuditFinding(rule.qualified_name, rule.policy, rule.name, rule.point, result,
                        message)


def _failure(audited: AuditedRule, status: Status, rejected: str) -> AuditFinding:
    """The finding of a rule whose status is not Success: an Error, or ``rejected``."""
    if status.code is Code.ERROR:
        return _finding(audited, ERROR, messages.AUDIT_ERROR.format(error=status.message))
    return _finding(audited, REJECTED, rejected.format(message=status.message))


def _matching(fwk: Framework, point: ExtensionPoint, state: CycleState,
              out: list[AuditFinding]) -> Iterator[AuditedRule]:
    """The audited rules at ``point`` whose policy's ``match`` evaluates; a match that
    fails is an Error finding for each of them (the enforced rules report it only for
    the policies they belong to)."""
    for audited in fwk.audited.get(point, ()):
        status = audited.framework.check_matches(state)
        if status.is_success:
            yield audited
        else:
            out.append(_failure(audited, status, ""))


# -- preEnqueue ----------------------------------------------------------------------------

def pre_enqueue(fwk: Framework, state: CycleState) -> list[AuditFinding]:
    """The audited preEnqueue rules that would have kept the pod out of the active queue."""
    out: list[AuditFinding] = []
    for audited in _matching(fwk, ExtensionPoint.PRE_ENQUEUE, state, out):
        status = audited.framework.pre_enqueue(state)
        if not status.is_success:
            out.append(_failure(audited, status, messages.AUDIT_GATED))
    return out


# -- the decision: preFilter, filter, score -----------------------------------------------------

@dataclass(frozen=True)
class Decided:
    """What a cycle decided, as the audits of preFilter, filter and score read it: the
    feasible rows the node was chosen among (None: no node was feasible, or the pod was
    rejected before the filters), the chosen node, and the totals of the scored rows
    (None when fewer than two nodes were feasible: nothing was scored)."""

    feasible: np.ndarray | None
    node: str | None
    totals: np.ndarray | None = None


def decision(fwk: Framework, evaluator: Evaluator, state: CycleState, snapshot: Snapshot,
             decided: Decided, nominated: Nominated) -> list[AuditFinding]:
    """What the audited preFilter, filter and score rules would have changed."""
    out = _pre_filter(fwk, state, snapshot, decided)
    if decided.feasible is not None and len(decided.feasible):
        out += _filter(fwk, evaluator, state, snapshot, decided, nominated)
        if decided.totals is not None:
            out += _score(fwk, evaluator, state, snapshot, decided)
    return out


def _pre_filter(fwk: Framework, state: CycleState, snapshot: Snapshot, decided: Decided
                ) -> list[AuditFinding]:
    out: list[AuditFinding] = []
    skipped = set(state.pre_filter_skipped)  # preFilter's record, which postFilter reads
    try:
        for audited in _matching(fwk, ExtensionPoint.PRE_FILTER, state, out):
            result = audited.framework.run_pre_filter(state)
            if not result.status.is_success:
                out.append(_failure(audited, result.status, messages.AUDIT_REJECTED))
            elif result.node_names is not None and decided.feasible is not None:
                names = result.node_names
                left_out = [row for row in decided.feasible.tolist()
                            if snapshot.nodes[row].name not in names]
                if left_out:
                    reason = messages.PRE_FILTER_EXCLUDED.format(
                        plugins=plugin_list(result.narrowed_by))
                    out.append(_nodes_rejected(audited, snapshot, decided, left_out,
                                               [reason] * len(left_out)))
    finally:
        state.pre_filter_skipped.clear()  # in place, as the activations read it
        state.pre_filter_skipped.update(skipped)
    return out


def _filter(fwk: Framework, evaluator: Evaluator, state: CycleState, snapshot: Snapshot,
            decided: Decided, nominated: Nominated) -> list[AuditFinding]:
    out: list[AuditFinding] = []
    feasible = decided.feasible
    assert feasible is not None
    for audited in _matching(fwk, ExtensionPoint.FILTER, state, out):
        alone = audited.framework
        statuses: dict[str, Status] = {}
        found = evaluator.find_feasible(alone, state, snapshot, feasible, len(feasible),
                                        nominated, statuses)
        if found.failure is not None:
            out.append(_failure(audited, found.failure, messages.AUDIT_REJECTED))
            continue
        passed = set(found.rows.tolist())
        rejected = [row for row in feasible.tolist() if row not in passed]
        if not rejected:
            continue
        reasons: list[str] = []
        for row in rejected:
            node = snapshot.nodes[row]
            status = statuses.get(node.name) or _node_status(alone, state, node, nominated)
            reasons += status.reasons
        out.append(_nodes_rejected(audited, snapshot, decided, rejected, reasons))
    return out


def _node_status(alone: Framework, state: CycleState, node: NodeInfo,
                 nominated: Nominated) -> Status:
    """A rejected node's status, when the tier did not give it (the vectorised tier
    gives the statuses only when no node passes)."""
    return filter_with_nominated(alone, state, node, nominated.get(node.name))


def _nodes_rejected(audited: AuditedRule, snapshot: Snapshot, decided: Decided,
                    rejected: Sequence[int], reasons: Iterable[str]) -> AuditFinding:
    """The finding of a rule that would have rejected the feasible rows ``rejected``."""
    assert decided.feasible is not None
    histogram = ", ".join(sorted(f"{n} {r}" for r, n in Counter(reasons).items()))
    total = len(decided.feasible)
    if len(rejected) == total:
        return _finding(audited, REJECTED, messages.AUDIT_ALL_NODES.format(
            total=total, reasons=histogram))
    names = {snapshot.nodes[row].name for row in rejected}
    chosen = (messages.AUDIT_CHOSEN_AMONG.format(node=decided.node)
              if decided.node in names else "")
    return _finding(audited, NODES_REJECTED, messages.AUDIT_SOME_NODES.format(
        count=len(rejected), total=total, reasons=histogram, chosen=chosen))


def _score(fwk: Framework, evaluator: Evaluator, state: CycleState, snapshot: Snapshot,
           decided: Decided) -> list[AuditFinding]:
    out: list[AuditFinding] = []
    rows, totals = decided.feasible, decided.totals
    assert rows is not None and totals is not None
    names = [snapshot.nodes[row].name for row in rows.tolist()]
    for audited in _matching(fwk, ExtensionPoint.SCORE, state, out):
        status, added, _ = evaluator.score(audited.framework, state, snapshot, rows)
        if not status.is_success:
            out.append(_failure(audited, status, messages.AUDIT_REJECTED))
            continue
        if not added.any():
            continue
        changed = totals + added
        best = np.flatnonzero(changed == changed.max())
        here = names.index(decided.node) if decided.node in names else None
        delta = int(added[here]) if here is not None else 0
        change = messages.AUDIT_SCORE.format(
            delta=delta, node=decided.node, low=int(added.min()), high=int(added.max()),
            total=len(names))
        if here is None or here in best:
            out.append(_finding(audited, SCORE_CHANGED, change + messages.AUDIT_SAME_CHOICE))
            continue
        other = int(best[0])
        out.append(_finding(audited, CHOICE_CHANGED, change + messages.AUDIT_OTHER_CHOICE.format(
            node=names[other], score=int(changed[other]), chosen=int(changed[here]))))
    return out


# -- permit ----------------------------------------------------------------------------------

def permit(fwk: Framework, state: CycleState, node: NodeInfo) -> list[AuditFinding]:
    """The audited permit rules that would have denied or held the pod on ``node``."""
    out: list[AuditFinding] = []
    for audited in _matching(fwk, ExtensionPoint.PERMIT, state, out):
        status, waits = audited.framework.run_permit(state, node)
        if status.code is Code.WAIT:
            out.append(_finding(audited, WAITED, messages.AUDIT_WAITED.format(
                node=node.name, timeout=messages.go_duration(waits[0].timeout))))
        elif not status.is_success:
            out.append(_failure(audited, status, messages.AUDIT_DENIED))
    return out


# -- events ----------------------------------------------------------------------------------

class AuditEvents:
    """Which findings become events: at most one per pod, rule, point and result every
    ``interval`` seconds (kube-scheduler's event broadcaster aggregates repeats the same
    way, within 10 minutes); the metric counts them all."""

    def __init__(self, interval: float = AUDIT_EVENT_INTERVAL) -> None:
        self.interval = interval
        self._last: dict[str, dict[tuple[str, str, str], float]] = {}  # pod -> key -> time

    def due(self, pod: str, finding: AuditFinding, now: float) -> bool:
        """Whether ``finding`` about ``pod`` is to be recorded now (and note that it is)."""
        seen = self._last.setdefault(pod, {})
        key = (finding.rule, finding.point.value, finding.result)
        last = seen.get(key)
        if last is not None and now - last < self.interval:
            return False
        seen[key] = now
        return True

    def forget(self, pod: str) -> None:
        """The pod went away."""
        self._last.pop(pod, None)

    def __len__(self) -> int:
        return len(self._last)
