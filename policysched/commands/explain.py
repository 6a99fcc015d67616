"""``policysched explain``: every filter rule's verdict and every score, per node, for one
pod — the table kube-scheduler never shows. A gate (preEnqueue) that refuses the pod, or a
policy ``match`` that fails, is shown too: the pod is then not scheduled, whatever the
nodes say.

The pod is explained at the moment of decision: the simulation (the same run as
``simulate``) is replayed, and the cluster is taken as it was at the pod's last scheduling
attempt (or the one asked for), with the pods placed before it. ``chosen`` is the node that
attempt chose. A pod never attempted (held by a gate, or served by no profile) is explained
against the cluster at the end of the run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cache.cache import Snapshot
from ..cel import CelError
from ..framework import audit
from ..framework.runtime import CycleState, Framework
from ..framework.scheduler import Decision, EngineSettings, Scheduler
from ..framework.status import Code, Status
from ..model.objects import PodInfo
from ..policy import ExtensionPoint
from .diff import NodeFill, node_fill
from .simulate import simulate

PASS = "pass"


@dataclass
class NodeExplanation:
    node: str
    filters: dict[str, str] = field(default_factory=dict)  # rule -> "pass" or the reasons
    # rule -> the reasons it rejects the node for (a rule with `reasons` may give several)
    reasons: dict[str, tuple[str, ...]] = field(default_factory=dict)
    scores: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    # audited rules (they decide nothing): filter rule -> "pass" or the reasons; score
    # rule -> (raw, normalised, weighted), on the feasible nodes
    audit_filters: dict[str, str] = field(default_factory=dict)
    audit_scores: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    # "policy/aggregate[i]" -> {"count": in the node's domain, "onNode": on the node}
    aggregates: dict[str, dict[str, int]] = field(default_factory=dict)
    total: int | None = None

    rank: int | None = None  # 1 for the best total among the feasible nodes
    fill: NodeFill | None = None  # the node's zone and fill at that moment

    @property
    def feasible(self) -> bool:
        return all(v == PASS for v in self.filters.values())

    @property
    def failure(self) -> tuple[str, str] | None:
        """The first filter rule that rejects the node, and its reasons (joined)."""
        return next(((r, v) for r, v in self.filters.items() if v != PASS), None)


@dataclass
class Explanation:
    pod: str
    profile: str
    pre_enqueue: str  # "pass" or why the gate keeps the pod out of the active queue
    pre_filter: str  # "pass" or the rejection (or a policy's failing match)
    nodes: list[NodeExplanation]
    chosen: str | None
    message: str
    attempt: int  # the attempt explained; 0: never attempted
    attempts: int  # the pod's attempts in the whole run
    at: float  # simulated seconds from the start
    # "policy/aggregate[i]" -> {"minimum", "domains", "total"}, or {"error": message}
    aggregates: dict[str, dict[str, Any]] = field(default_factory=dict)
    # what the audited rules would have changed: "audit: policy/rule would have ..."
    audits: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod, "profile": self.profile, "preEnqueue": self.pre_enqueue,
            "preFilter": self.pre_filter,
            "chosen": self.chosen, "message": self.message or None,
            "attempt": self.attempt, "attempts": self.attempts, "at": self.at,
            "aggregates": self.aggregates, "audits": self.audits,
            "nodes": [{"node": n.node, "feasible": n.feasible, "filters": n.filters,
                       "reasons": {r: list(v) for r, v in n.reasons.items()},
                       "aggregates": n.aggregates,
                       "scores": {r: {"raw": s[0], "normalized": s[1], "weighted": s[2]}
                                  for r, s in n.scores.items()},
                       "auditFilters": n.audit_filters,
                       "auditScores": {r: {"raw": s[0], "normalized": s[1], "weighted": s[2]}
                                       for r, s in n.audit_scores.items()},
                       "total": n.total, "rank": n.rank,
                       "rejectedBy": None if n.failure is None else n.failure[0],
                       **_fill_json(n.fill)} for n in self.nodes],
            "rejections": [{"rule": rule, "nodes": count,
                            "reasons": [{"reason": r, "nodes": k} for r, k in reasons]}
                           for rule, count, reasons in self.rejections()],
        }


    def ordered(self) -> list[NodeExplanation]:
        """The chosen node first, then the scored nodes best first, then the rest by
        name."""
        return sorted(self.nodes, key=lambda n: (
            n.node != self.chosen, n.rank is None, n.rank or 0, n.node))

    def rejections(self) -> list[tuple[str, int, list[tuple[str, int]]]]:
        """Per filter rule: how many nodes it rejected (as their first failing rule), and
        its reasons with the number of nodes each was given for, most frequent first (a
        node rejected for several reasons counts under each, as in the FailedScheduling
        message)."""
        nodes: dict[str, int] = {}
        by_rule: dict[str, dict[str, int]] = {}
        for node in self.nodes:
            failure = node.failure
            if failure is None:
                continue
            rule = failure[0]
            nodes[rule] = nodes.get(rule, 0) + 1
            reasons = by_rule.setdefault(rule, {})
            for reason in node.reasons.get(rule) or (failure[1],):
                reasons[reason] = reasons.get(reason, 0) + 1
        out = [(rule, nodes[rule], sorted(reasons.items(), key=lambda item: (-item[1], item[0])))
               for rule, reasons in by_rule.items()]
        return sorted(out, key=lambda item: (-item[1], item[0]))


class UnknownPod(LookupError):
    pass


@dataclass
class _Moment:
    """The explained attempt: the cluster and clock as they were, and what was decided."""

    attempt: int
    at: float
    explanation: Explanation | None = None


def explain(objects: Sequence[Mapping[str, Any]], frameworks: Mapping[str, Framework],
            settings: EngineSettings, start: float, pod_key: str,
            attempt: int | None = None) -> Explanation:
    """Explain ``pod_key`` at its last scheduling attempt, or at attempt ``attempt``
    (1-based)."""
    seen = _Moment(0, 0.0)

    def observe(scheduler: Scheduler, fwk: Framework, state: CycleState, snapshot: Snapshot,
                decision: Decision) -> None:
        if state.pod.key != pod_key:
            return
        seen.attempt += 1
        if attempt is None or seen.attempt == attempt:
            seen.at = scheduler.clock.now() - start
            seen.explanation = _explain(scheduler, fwk, state.pod, snapshot, decision)

    run = simulate(objects, frameworks, settings, start, on_decision=observe)
    if run.pod(pod_key) is None and run.scheduler.cache.pod(pod_key) is None:
        raise UnknownPod(f"no pod {pod_key} in the cluster file")
    if attempt is not None and seen.explanation is None:
        raise UnknownPod(f"pod {pod_key} had {seen.attempt} scheduling attempt(s), "
                         f"not {attempt}")
    result = seen.explanation
    if result is None:  # never attempted: as the cluster is at the end of the run
        result = _never_attempted(run.scheduler, pod_key)
        seen.at = run.end - start
    result.attempt = attempt or (seen.attempt if seen.explanation else 0)
    result.attempts, result.at = seen.attempt, seen.at
    return result


def _never_attempted(scheduler: Scheduler, pod_key: str) -> Explanation:
    pod = scheduler.cache.pod(pod_key)
    assert pod is not None
    fwk = scheduler.profiles.get(pod.scheduler_name)
    if fwk is None:
        raise UnknownPod(f"pod {pod_key} names schedulerName {pod.scheduler_name}, which no "
                         f"profile serves (profiles: {', '.join(scheduler.profiles)})")
    return _explain(scheduler, fwk, pod, scheduler.cache.snapshot(), None)


def _explain(scheduler: Scheduler, fwk: Framework, pod: PodInfo, snapshot: Snapshot,
             decision: Decision | None) -> Explanation:
    """Every verdict and score for ``pod`` against ``snapshot``; ``decision`` is what the
    attempt decided (None: the pod was never attempted)."""
    state = scheduler.cycle_state(pod, snapshot)
    gate = fwk.pre_enqueue(state)
    matched = fwk.check_matches(state)
    status = fwk.run_pre_filter(state).status if matched.is_success else matched
    rows = [NodeExplanation(n.name, fill=node_fill(n)) for n in snapshot.nodes]
    chosen, message = (None, "") if decision is None else (decision.node, decision.message)
    if not gate.is_success:
        chosen, message = None, gate.message
    explanation = Explanation(pod.key, fwk.scheduler_name, _verdict(gate), _verdict(status),
                              rows, chosen, message, 0, 0, 0.0)
    explanation.audits = [f.text for f in audit.pre_enqueue(fwk, state)]
    if decision is not None:
        explanation.audits += [f.text for f in decision.audits]
        node = snapshot.node(decision.node) if decision.node is not None else None
        if node is not None:
            explanation.audits += [f.text for f in audit.permit(fwk, state, node)]
    if not matched.is_success:  # which policies apply is unknown: no per-node detail
        return explanation
    audited_filters = fwk.audited.get(ExtensionPoint.FILTER, ())
    for row, node in zip(rows, snapshot.nodes, strict=True):
        for instance, rule in fwk.rules(ExtensionPoint.FILTER):
            if not fwk.matches(state, instance):
                continue
            verdict = fwk.run_filter(state, node, [(instance, rule)])
            row.filters[rule.qualified_name] = _filter_cell(verdict)
            if verdict.is_rejection:
                row.reasons[rule.qualified_name] = verdict.reasons
        for audited in audited_filters:
            row.audit_filters[audited.rule.qualified_name] = _filter_cell(
                audited.framework.run_filter(state, node))
    _aggregates(fwk, state, snapshot, explanation)
    feasible = [n for n, row in zip(snapshot.nodes, rows, strict=True) if row.feasible]
    if status.is_success and feasible:
        if state.cluster is not None:  # what aggregates' scoredDomains() count
            state.cluster.scored = np.array([snapshot.index[n.name] for n in feasible])
        fwk.run_pre_score(state)
        _, totals, detail = fwk.run_score(state, feasible)
        by_name = {r.node: r for r in rows}
        for i, node in enumerate(feasible):
            row = by_name[node.name]
            row.total = totals[i] if i < len(totals) else None
            for rule_name, values in detail.items():
                row.scores[rule_name] = values[i]
        for audited in fwk.audited.get(ExtensionPoint.SCORE, ()):
            _, _, detail = audited.framework.run_score(state, feasible)
            for i, node in enumerate(feasible):
                for rule_name, values in detail.items():
                    by_name[node.name].audit_scores[rule_name] = values[i]
        scored = [r.total for r in rows if r.total is not None]
        for row in rows:  # equal totals share a rank
            if row.total is not None:
                row.rank = 1 + sum(1 for t in scored if t > row.total)
    return explanation


def _aggregates(fwk: Framework, state: CycleState, snapshot: Snapshot,
                explanation: Explanation) -> None:
    """The values of the aggregates of the policies that apply to the pod."""
    for instance in fwk.instances:
        if not instance.policy.aggregates or not fwk.matches(state, instance):
            continue
        values = state.base(instance)["aggregates"]
        for spec in instance.policy.aggregates:
            name = f"{instance.name}/{spec.name}"
            try:
                found = values[spec.name]
            except CelError as e:
                explanation.aggregates[name] = {"error": e.message}
                continue
            items = found if isinstance(found, list) else [found]
            for i, value in enumerate(items):
                label = f"{name}[{i}]" if isinstance(found, list) else name
                explanation.aggregates[label] = {
                    "minimum": value.minimum(), "domains": value.domains(),
                    "total": value.total()}
                for node, row in zip(snapshot.nodes, explanation.nodes, strict=True):
                    row.aggregates[label] = {"count": value.count(node.view),
                                             "onNode": value.on_node(node.view)}


def _fill_json(fill: NodeFill | None) -> dict[str, Any]:
    """A node's zone, cpu and memory fill and pods, as the JSON output has them."""
    if fill is None:
        return {}
    return {key: value for key, value in fill.as_json().items() if key != "node"}


def _filter_cell(verdict: Status) -> str:
    """A filter rule's verdict on a node: "pass", or its reasons (an Error's marked)."""
    return (PASS if verdict.is_success else
            ("error: " if verdict.code is Code.ERROR else "") + verdict.message)


def _verdict(status: Status) -> str:
    return PASS if status.is_success else f"{status.code.value}: {status.message}"
