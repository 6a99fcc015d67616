"""PostFilter: the rules kube-scheduler's RunPostFilterPlugins would run when no node fits
(or preFilter rejected the pod), and the message they add to the FailedScheduling text.

The rules run in profile order, a rule being a PostFilter plugin. The rules with
``victims`` together are preemption (preemption.py), run once, in the place of the first
of them; a rule without ``victims`` makes no room and reports its message when its
expression is false (``Framework.post_filter_report``). The reports are joined with ", "
(kube's Unschedulable reasons, in plugin order); a nomination drops them (kube returns at
the first Success), and the report of an ``unresolvable`` rule (with or without
``victims``) alone ends postFilter (kube's UnschedulableAndUnresolvable or Error status of a
plugin).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..cache.node_info import NodeInfo
from ..policy.model import ExtensionPoint, PostFilterRule
from .preemption import Candidate, PreemptionInputs, preempt
from .runtime import CycleState, Framework, RuleError
from .status import Status


@dataclass(frozen=True)
class PostFilterOutcome:
    """A nominated node and its victims (``candidate``), or what postFilter says about the
    pod (``message``, appended to the FailedScheduling text) — or an Error ``status``.
    ``nomination``: preemption's (kube's NominatingInfo; None, leave it, when preemption did
    not run); ``tied``: the candidates as good as the nominated one."""

    candidate: Candidate | None
    message: str
    status: Status | None = None
    nomination: str | None = None
    tied: tuple[Candidate, ...] = ()


def run_post_filter(fwk: Framework, state: CycleState, nodes: Sequence[NodeInfo],
                    statuses: Mapping[str, Status],
                    inputs: PreemptionInputs | None = None) -> PostFilterOutcome:
    """Run the postFilter rules for a pod no node fits (``statuses``: why each node
    failed)."""
    reports: list[str] = []
    preempted = False
    nomination: str | None = None
    for instance, rule in fwk.rules(ExtensionPoint.POST_FILTER):
        assert isinstance(rule, PostFilterRule)
        try:
            if not fwk.matches(state, instance):
                continue
            # preemption evaluates its rules' expressions itself, unless one may end it all
            report = (fwk.post_filter_report(state, instance, rule)
                      if rule.victims is None or rule.unresolvable else None)
            if report is not None:
                if rule.unresolvable:
                    return PostFilterOutcome(None, report.message)
                reports.append(report.message)
                continue
            if rule.victims is None or preempted:
                continue
            preempted = True
            result = preempt(fwk, state, nodes, statuses, inputs)
        except RuleError as e:
            return PostFilterOutcome(None, "", e.status)
        if result.status is not None or result.candidate is not None:
            return PostFilterOutcome(result.candidate, "", result.status, result.nomination,
                                     result.tied)
        nomination = result.nomination
        if result.message:
            reports.append(result.message)
    return PostFilterOutcome(None, ", ".join(reports), nomination=nomination)
