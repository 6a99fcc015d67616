"""PostFilter: preemption, as kube-scheduler v1.34's DefaultPreemption does it
(pkg/scheduler/framework/plugins/defaultpreemption and framework/preemption), with the
victim rule written in CEL.

1. Eligibility (PodEligibleToPreemptOthers): the postFilter rules' ``expression`` (the
   policy's preemptionPolicy check), then, for a pod nominated to a node the filters did
   not reject as unresolvable, no pod there that the rules let it evict may be terminating
   because of an earlier preemption ("not eligible due to a terminating pod on the
   nominated node.").
2. Candidates (findCandidates, DryRunPreemption): the nodes the filters rejected as
   Unschedulable (the others: "Preemption is not helpful for scheduling"), visited from a
   random offset until as many have a candidate as kube wants (10 % of them, at least 100:
   all of them below 100, where the offset changes nothing), one of them violating no
   PodDisruptionBudget.
3. Victims on one node (SelectVictimsOnNode): every pod the ``victims`` rules allow is
   removed (none: "No preemption victims found for incoming pod"); if the filters still
   fail — with the pods nominated to the node of at least the pod's priority, as
   RunFilterPluginsWithNominatedPods — their status is the node's. Then the pods are
   reprieved one by one while the pod still fits, most important first (higher priority,
   then earlier start: MoreImportantPod), those whose eviction would violate a budget
   before the others; the violating ones left as victims are counted.
4. The best candidate (pickOneNodeForPreemption): fewest budget violations, then the
   lowest highest-victim priority, then the smallest sum of victim priorities each offset
   by MaxInt32 + 1 (so fewer victims win), then the fewest victims, then the latest start
   among the highest-priority victims, then the first in node order. kube takes any of
   the candidates equal on all five (its candidates come from a map): they are all
   reported (``PreemptionResult.tied``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..cache.node_info import NodeInfo
from ..model.disruption_budgets import DisruptionBudget
from ..model.objects import PodInfo
from ..policy.model import PostFilterRule
from . import messages
from .evaluator import filter_with_nominated
from .runtime import CycleState, Framework, PolicyInstance, RuleError
from .status import Code, Status, unschedulable

MIN_CANDIDATE_NODES_PERCENTAGE = 10  # kube's DefaultPreemptionArgs defaults
MIN_CANDIDATE_NODES_ABSOLUTE = 100
PRIORITY_OFFSET = 2**31  # MaxInt32 + 1: every victim's adjusted priority is positive

Rules = Sequence[tuple[PolicyInstance, PostFilterRule]]
Nominated = Mapping[str, Sequence[PodInfo]]  # node -> pods nominated to it (>= priority)


@dataclass(frozen=True)
class Candidate:
    """A node where evicting ``victims`` (most important first) lets the pod fit, and how
    many of them a PodDisruptionBudget does not allow to evict."""

    node: str
    victims: tuple[PodInfo, ...]
    budget_violations: int = 0


@dataclass(frozen=True)
class PreemptionResult:
    """A candidate to nominate and evict, or why preemption did not help (``message``,
    appended to the FailedScheduling text) — or an Error ``status``. ``nomination`` is
    kube's NominatingInfo: the node to nominate, "" to clear the pod's nomination (no
    candidate), None to leave it as it is (not eligible, or an error). ``tied`` holds the
    candidates as good as ``candidate`` on every criterion (it included, in node order):
    kube-scheduler nominates any of them."""

    candidate: Candidate | None
    message: str
    status: Status | None = None
    nomination: str | None = None
    tied: tuple[Candidate, ...] = ()


def no_offset(count: int) -> int:
    return 0


@dataclass(frozen=True)
class PreemptionInputs:
    """What preemption reads besides the framework and the cycle: the pods nominated to
    each node (of at least the pod's priority, the pod excluded), the budgets, and the
    random offset of the candidate search (``offset(n)`` in ``range(n)``)."""

    nominated: Nominated = field(default_factory=dict)
    budgets: Sequence[DisruptionBudget] = ()
    offset: Callable[[int], int] = no_offset


def preempt(fwk: Framework, state: CycleState, nodes: Sequence[NodeInfo],
            statuses: Mapping[str, Status],
            inputs: PreemptionInputs | None = None) -> PreemptionResult:
    """The best candidate, or why there is none; an Error ``status`` when a postFilter
    rule (its ``expression`` or ``victims``) or a filter failed, never "no victims found".
    ``nodes`` are the snapshot's, ``statuses`` the filters' verdicts on them."""
    inputs = inputs or PreemptionInputs()
    found = fwk.preemption_rules(state)
    if isinstance(found, Status):
        return PreemptionResult(None, "", found)
    rules, refusal = found
    if not rules:
        return PreemptionResult(None, _prefixed(refusal) if refusal else "")
    try:
        refusal = _terminating_victim(fwk, state, rules, nodes, statuses)
        if refusal:
            return PreemptionResult(None, _prefixed(refusal))
        return _best(fwk, state, rules, nodes, statuses, inputs)
    except RuleError as e:
        return PreemptionResult(None, "", e.status)


def _prefixed(text: str) -> str:
    return f"{messages.PREEMPTION_PREFIX} {text}"


def _terminating_victim(fwk: Framework, state: CycleState, rules: Rules,
                        nodes: Sequence[NodeInfo], statuses: Mapping[str, Status]) -> str:
    """kube's refusal while an earlier preemption of the pod is under way: a pod the rules
    let it evict is terminating by preemption on its nominated node ("" if none)."""
    name = state.pod.nominated_node
    status = statuses.get(name) if name else None
    if status is None or status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return ""  # kube: a node absent from the verdicts counts as unresolvable
    node = next((n for n in nodes if n.name == name), None)
    if node is not None and any(p.preempted and fwk.may_evict(state, rules, node, p)
                                for p in node.pods.values()):
        return messages.PREEMPTION_TERMINATING_VICTIM
    return ""


def candidates_wanted(potential: int) -> int:
    """kube's calculateNumCandidates with the default arguments."""
    wanted = max(potential * MIN_CANDIDATE_NODES_PERCENTAGE // 100, MIN_CANDIDATE_NODES_ABSOLUTE)
    return min(wanted, potential)


@dataclass(frozen=True)
class DryRun:
    """What DryRunPreemption found: the candidates (those violating no budget first, as
    kube lists them), why each other node examined has none, and kube's "expected at
    least one victim" errors."""

    candidates: list[Candidate]
    verdicts: dict[str, Status]
    errors: list[str]


def dry_run(fwk: Framework, state: CycleState, rules: Rules, potential: Sequence[NodeInfo],
            inputs: PreemptionInputs) -> DryRun:
    """DryRunPreemption: the ``potential`` nodes from a random offset (drawn only when
    not all of them are to be examined: the order then changes nothing) until as many
    have a candidate as kube wants, one of them violating no budget; each of kube's two
    candidate lists holds at most that many."""
    wanted = candidates_wanted(len(potential))
    start = inputs.offset(len(potential)) if wanted < len(potential) else 0
    within: list[Candidate] = []  # violating no budget
    violating: list[Candidate] = []
    verdicts: dict[str, Status] = {}
    errors: list[str] = []
    for i in range(len(potential)):
        node = potential[(start + i) % len(potential)]
        found = _select_victims(fwk, state, rules, node, inputs)
        if isinstance(found, Status):
            verdicts[node.name] = found
        elif not found.victims:
            errors.append(messages.PREEMPTION_NO_VICTIM_FOUND.format(node=node.name))
        else:
            chosen = violating if found.budget_violations else within
            if len(chosen) < wanted:
                chosen.append(found)
            if within and len(within) + len(violating) >= wanted:
                break
    return DryRun(within + violating, verdicts, errors)


def _best(fwk: Framework, state: CycleState, rules: Rules, nodes: Sequence[NodeInfo],
          statuses: Mapping[str, Status], inputs: PreemptionInputs) -> PreemptionResult:
    """The candidates of the nodes the filters rejected as Unschedulable, then the best
    one; without any, the FailedScheduling text of what preemption found."""
    potential = [n for n in nodes
                 if (s := statuses.get(n.name)) is not None and s.code is Code.UNSCHEDULABLE]
    found = dry_run(fwk, state, rules, potential, inputs)
    if not found.candidates:
        if found.errors:  # kube: the error goes on as the postFilter message, nomination kept
            unique = list(dict.fromkeys(found.errors))
            return PreemptionResult(None, _prefixed(
                unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"))
        reasons = [r for s in found.verdicts.values() for r in s.reasons]
        reasons += [messages.PREEMPTION_NOT_HELPFUL] * (len(nodes) - len(found.verdicts))
        return PreemptionResult(None, _prefixed(messages.fit_error(len(nodes), reasons)),
                                nomination="")
    order = {n.name: i for i, n in enumerate(nodes)}
    ranks = {c.node: _rank(c, state.now) for c in found.candidates}
    ranked = sorted(found.candidates, key=lambda c: (ranks[c.node], order[c.node]))
    best = ranked[0]
    tied = tuple(c for c in ranked if ranks[c.node] == ranks[best.node])
    return PreemptionResult(best, "", nomination=best.node, tied=tied)


def _select_victims(fwk: Framework, state: CycleState, rules: Rules, node: NodeInfo,
                    inputs: PreemptionInputs) -> Candidate | Status:
    """SelectVictimsOnNode: the fewest, least important pods whose eviction lets the pod
    fit on ``node``, or the node's status when none does. Raises ``RuleError`` when a rule
    fails on the way (a ``victims`` rule, or a filter)."""
    potential = [p for p in node.pods.values() if fwk.may_evict(state, rules, node, p)]
    if not potential:
        return unschedulable("", messages.PREEMPTION_NO_VICTIMS, unresolvable=True)
    nominated = inputs.nominated.get(node.name)
    current = node.clone()
    for pod in potential:
        current.remove_pod(pod)
    status = _filter(fwk, state, current, nominated)
    if not status.is_success:
        return status

    def importance(pod: PodInfo) -> tuple[int, int]:
        return -pod.priority, _start(pod, state.now)

    potential.sort(key=importance)
    violating, others = budget_groups(potential, inputs.budgets)
    victims: list[PodInfo] = []

    def reprieved(pod: PodInfo) -> bool:
        current.add_pod(pod)
        if _filter(fwk, state, current, nominated).is_success:
            return True
        current.remove_pod(pod)
        victims.append(pod)
        return False

    violations = sum(not reprieved(pod) for pod in violating)
    for pod in others:
        reprieved(pod)
    if violating and others:
        victims.sort(key=importance)
    return Candidate(node.name, tuple(victims), violations)


def budget_groups(pods: Sequence[PodInfo], budgets: Sequence[DisruptionBudget]
                  ) -> tuple[list[PodInfo], list[PodInfo]]:
    """kube's filterPodsWithPDBViolation: ``pods`` (in order) split into those whose
    eviction, after the ones before them, would take a budget covering them below zero
    allowed disruptions, and the others. A pod the budget lists as already disrupted
    does not count against it."""
    allowed = [b.disruptions_allowed for b in budgets]
    violating: list[PodInfo] = []
    others: list[PodInfo] = []
    for pod in pods:
        violated = False
        labels = pod.view["labels"]
        for i, budget in enumerate(budgets):
            if budget.covers(pod.namespace, labels) and pod.name not in budget.disrupted_pods:
                allowed[i] -= 1
                violated = violated or allowed[i] < 0
        (violating if violated else others).append(pod)
    return violating, others


def _rank(candidate: Candidate, now: int) -> tuple[int, int, int, int, int]:
    """pickOneNodeForPreemption's criteria, smallest best."""
    priorities = [v.priority for v in candidate.victims]
    highest = max(priorities)
    earliest = min(_start(v, now) for v in candidate.victims if v.priority == highest)
    return (candidate.budget_violations, highest,
            sum(p + PRIORITY_OFFSET for p in priorities), len(priorities), -earliest)


def _start(pod: PodInfo, now: int) -> int:
    """kube's GetPodStartTime: ``status.startTime``, else now (not started yet)."""
    return now if pod.start_time is None else pod.start_time


def _filter(fwk: Framework, state: CycleState, node: NodeInfo,
            nominated: Sequence[PodInfo] | None) -> Status:
    status = filter_with_nominated(fwk, state, node, nominated)
    if status.code is Code.ERROR:
        raise RuleError(status)
    return status
