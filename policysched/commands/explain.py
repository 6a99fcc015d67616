"""``policysched explain``: every filter rule's verdict and every score, per node, for one
pod — the table kube-scheduler never shows. A gate (preEnqueue) that refuses the pod, or a
policy ``match`` that fails, is shown too: the pod is then not scheduled, whatever the
nodes say."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cluster.memory import MemoryBackend
from ..framework.runtime import Framework
from ..framework.scheduler import EngineSettings, Scheduler
from ..framework.status import Code, Status
from ..model.clock import SimulatedClock
from ..policy import ExtensionPoint

PASS = "pass"


@dataclass
class NodeExplanation:
    node: str
    filters: dict[str, str] = field(default_factory=dict)  # rule -> "pass" or the reason
    scores: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    total: int | None = None

    @property
    def feasible(self) -> bool:
        return all(v == PASS for v in self.filters.values())


@dataclass
class Explanation:
    pod: str
    profile: str
    pre_enqueue: str  # "pass" or why the gate keeps the pod out of the active queue
    pre_filter: str  # "pass" or the rejection (or a policy's failing match)
    nodes: list[NodeExplanation]
    chosen: str | None
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod, "profile": self.profile, "preEnqueue": self.pre_enqueue,
            "preFilter": self.pre_filter,
            "chosen": self.chosen, "message": self.message or None,
            "nodes": [{"node": n.node, "feasible": n.feasible, "filters": n.filters,
                       "scores": {r: {"raw": s[0], "normalized": s[1], "weighted": s[2]}
                                  for r, s in n.scores.items()},
                       "total": n.total} for n in self.nodes],
        }


class UnknownPod(LookupError):
    pass


def explain(objects: Sequence[Mapping[str, Any]], frameworks: Mapping[str, Framework],
            settings: EngineSettings, start: float, pod_key: str) -> Explanation:
    backend = MemoryBackend([dict(o) for o in objects], SimulatedClock(start))
    scheduler = Scheduler(backend, frameworks, settings)
    scheduler.sync()
    pod = scheduler.cache.pod(pod_key)
    if pod is None:
        raise UnknownPod(f"no pod {pod_key} in the cluster file")
    fwk = frameworks.get(pod.scheduler_name)
    if fwk is None:
        raise UnknownPod(f"pod {pod_key} names schedulerName {pod.scheduler_name}, which no "
                         f"profile serves (profiles: {', '.join(frameworks)})")
    snapshot = scheduler.cache.snapshot()
    state = scheduler.cycle_state(pod, snapshot)
    gate = fwk.pre_enqueue(state)
    matched = fwk.check_matches(state)
    status = fwk.run_pre_filter(state)[0] if matched.is_success else matched
    rows = [NodeExplanation(n.name) for n in snapshot.nodes]
    decision = scheduler.decide(fwk, scheduler.cycle_state(pod, snapshot), snapshot)
    explanation = Explanation(pod_key, fwk.scheduler_name, _verdict(gate), _verdict(status),
                              rows, decision.node, decision.message)
    if not gate.is_success:
        explanation.chosen, explanation.message = None, gate.message
    if not matched.is_success:  # which policies apply is unknown: no per-node detail
        return explanation
    for row, node in zip(rows, snapshot.nodes, strict=True):
        for instance, rule in fwk.rules(ExtensionPoint.FILTER):
            if not fwk.matches(state, instance):
                continue
            verdict = fwk.run_filter(state, node, [(instance, rule)])
            row.filters[rule.qualified_name] = (
                PASS if verdict.is_success else
                ("error: " if verdict.code is Code.ERROR else "") + verdict.message)
    feasible = [n for n, row in zip(snapshot.nodes, rows, strict=True) if row.feasible]
    if status.is_success and feasible:
        fwk.run_pre_score(state)
        _, totals, detail = fwk.run_score(state, feasible)
        by_name = {r.node: r for r in rows}
        for i, node in enumerate(feasible):
            row = by_name[node.name]
            row.total = totals[i] if i < len(totals) else None
            for rule_name, values in detail.items():
                row.scores[rule_name] = values[i]
    return explanation


def _verdict(status: Status) -> str:
    return PASS if status.is_success else f"{status.code.value}: {status.message}"
