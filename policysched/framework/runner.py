"""The one runner of the extension points: runs a profile's compiled policies for a pod.

A ``Framework`` is one profile (schedulerName): its enabled policies, in order, with their
params and weights. Every ``run_*`` method evaluates the rules of the policies that match
the pod, turns CEL results into ``Status``es with kube-scheduler's meaning and never
raises for a policy's mistake: a CEL error is an ``Error`` status naming the policy, rule
and expression (or the rule is skipped under ``failurePolicy: Ignore``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cache.node_info import NodeInfo
from ..cache.objects import PodInfo
from ..cel import CelError
from ..policy.model import (
    CelExpression,
    ExtensionPoint,
    FailurePolicy,
    FilterRule,
    Normalization,
    PermitOnFalse,
    PermitRule,
    Policy,
    PostFilterRule,
    PreBindRule,
    PreFilterRule,
    QueueSortRule,
    ReserveRule,
    Rule,
    ScoreRule,
)
from . import messages
from .status import SKIP, SUCCESS, Code, Status, error, unschedulable

MAX_NODE_SCORE = 100


@dataclass(frozen=True)
class PolicyInstance:
    """A policy as a profile enables it: params after the profile's overrides, and the
    profile's weight multiplier for its score rules."""

    policy: Policy
    params: Mapping[str, Any]
    weight: int = 1

    @property
    def name(self) -> str:
        return self.policy.name


class _Ignored:
    """The value of a rule whose evaluation failed under ``failurePolicy: Ignore``."""


IGNORED = _Ignored()


class RuleError(Exception):
    """A CEL evaluation error, already phrased for the user (policy, rule, expression)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def evaluate(rule: Rule, expression: CelExpression, activation: Mapping[str, Any]) -> Any:
    """``expression``'s value, ``IGNORED`` under failurePolicy Ignore, or ``RuleError``."""
    try:
        return expression.evaluate(activation)
    except CelError as e:
        if rule.failure_policy is FailurePolicy.IGNORE:
            return IGNORED
        message = messages.EVALUATION_ERROR.format(
            policy=rule.policy, rule=rule.name, field=expression.field,
            text=expression.text, error=e.message)
        raise RuleError(error(rule.qualified_name, message)) from None


def rule_message(rule: Rule, activation: Mapping[str, Any], default: str | None = None) -> str:
    """The rule's ``messageExpression`` (when it evaluates to a string), else ``message``,
    else ``default`` (by default "rejected by policy/rule")."""
    if rule.message_expression is not None:
        try:
            value = rule.message_expression.evaluate(activation)
        except CelError:
            value = None
        if isinstance(value, str):
            return value
    if rule.message:
        return rule.message
    return messages.RULE_REJECTED.format(rule=rule.qualified_name) if default is None \
        else default


class _Variables(dict[str, Any]):
    """``variables`` of one policy for one pod: each computed on first use, then kept."""

    def __init__(self, instance: PolicyInstance, base: dict[str, Any]) -> None:
        super().__init__()
        self._expressions = instance.policy.variable_expressions
        self._base: Mapping[str, Any] = base
        self._policy = instance.policy.name

    def __missing__(self, name: str) -> Any:
        expression = self._expressions.get(name)
        if expression is None:
            raise KeyError(name)
        try:
            value = expression.evaluate(self._base)
        except CelError as e:
            raise CelError(f"variable {name} of policy {self._policy}: {e.message}") from None
        self[name] = value
        return value


@dataclass
class CycleState:
    """What one scheduling attempt of one pod computes once and shares across points."""

    pod: PodInfo
    now: int
    pod_views: Callable[[], list[dict[str, Any]]]
    node_views: Callable[[], list[dict[str, Any]]]
    affinity_pod_views: Callable[[], list[dict[str, Any]]] = list
    _bases: dict[str, Activation] = field(default_factory=dict)
    _matches: dict[str, bool] = field(default_factory=dict)
    skipped_scoring: set[str] = field(default_factory=set)
    parts: dict[Any, Any] = field(default_factory=dict)  # pod-side expression parts' values
    template: Any = None  # the pod's template, frozen (see framework.vectorised)
    reserved_counters: list[tuple[str, float]] = field(default_factory=list)

    def base(self, instance: PolicyInstance) -> Activation:
        """The pod-level activation of ``instance``'s expressions."""
        base = self._bases.get(instance.name)
        if base is None:
            base = Activation({"now": self.now, "pod": self.pod.view,
                               "params": instance.params},
                              {"pods": self.pod_views, "nodes": self.node_views,
                               "podsWithAffinity": self.affinity_pod_views})
            base["variables"] = _Variables(instance, base)
            self._bases[instance.name] = base
        return base


class Activation(dict[str, Any]):
    """Variables of an expression; the cluster-wide lists (``pods``, ``nodes``,
    ``podsWithAffinity``) are only built when an expression reads them."""

    def __init__(self, values: Mapping[str, Any],
                 lists: Mapping[str, Callable[[], list[dict[str, Any]]]]) -> None:
        super().__init__(values)
        self._lists = lists

    def __missing__(self, name: str) -> Any:
        build = self._lists.get(name)
        if build is None:
            raise KeyError(name)
        value = self[name] = build()
        return value

    def copy(self) -> Activation:
        return Activation(self, self._lists)


class Framework:
    """The extension points of one profile."""

    def __init__(self, scheduler_name: str, instances: Sequence[PolicyInstance],
                 queue_sort: PolicyInstance | None = None) -> None:
        self.scheduler_name = scheduler_name
        self.instances = tuple(instances)
        self.queue_sort = queue_sort
        self._by_point = {
            point: tuple((i, r) for i in self.instances for r in i.policy.rules_for(point))
            for point in ExtensionPoint
        }

    def rules(self, point: ExtensionPoint) -> tuple[tuple[PolicyInstance, Rule], ...]:
        return self._by_point[point]

    def has_rules(self, point: ExtensionPoint) -> bool:
        return bool(self._by_point[point])

    # -- matching ---------------------------------------------------------------------

    def matches(self, state: CycleState, instance: PolicyInstance) -> bool:
        """Whether ``spec.match`` selects the pod (a failing match is a non-match)."""
        known = state._matches.get(instance.name)
        if known is not None:
            return known
        match = instance.policy.match
        result = True
        if match is not None:
            try:
                result = match.evaluate(state.base(instance)) is True
            except CelError:
                result = False
        state._matches[instance.name] = result
        return result

    def _applicable(self, state: CycleState, point: ExtensionPoint
                    ) -> Iterable[tuple[PolicyInstance, Rule, dict[str, Any]]]:
        for instance, rule in self._by_point[point]:
            if self.matches(state, instance):
                yield instance, rule, state.base(instance)

    # -- queueSort ----------------------------------------------------------------------

    def sort_key(self, pod: PodInfo, now: int) -> tuple[Any, ...] | None:
        """The pod's queue sort keys (``keys`` rules), or None when ``less`` is used."""
        if self.queue_sort is None:
            return (-pod.priority, pod.creation)
        keys: list[Any] = []
        act = {"now": now, "pod": pod.view, "params": self.queue_sort.params}
        for rule in self.queue_sort.policy.rules_for(ExtensionPoint.QUEUE_SORT):
            assert isinstance(rule, QueueSortRule)
            if rule.less is not None:
                return None
            for expression in rule.keys:
                try:
                    keys.append(expression.evaluate(act))
                except CelError:
                    keys.append(0)
        return tuple(keys)

    def less(self, a: PodInfo, b: PodInfo, now: int) -> bool:
        """queueSort: whether ``a`` goes before ``b``."""
        if self.queue_sort is None:
            return (-a.priority, a.creation) < (-b.priority, b.creation)
        act = {"now": now, "a": a.view, "b": b.view, "params": self.queue_sort.params}
        for rule in self.queue_sort.policy.rules_for(ExtensionPoint.QUEUE_SORT):
            assert isinstance(rule, QueueSortRule)
            if rule.less is not None:
                try:
                    if rule.less.evaluate(act) is True:
                        return True
                    act_swapped = dict(act, a=b.view, b=a.view)
                    if rule.less.evaluate(act_swapped) is True:
                        return False
                except CelError:
                    continue
            else:
                ka, kb = self.sort_key(a, now), self.sort_key(b, now)
                if ka is not None and kb is not None and ka != kb:
                    try:
                        return bool(ka < kb)
                    except TypeError:
                        continue
        return False

    # -- preEnqueue ---------------------------------------------------------------------

    def pre_enqueue(self, state: CycleState) -> str | None:
        """None when the pod may enter the active queue, else the gate's message."""
        for _, rule, act in self._applicable(state, ExtensionPoint.PRE_ENQUEUE):
            assert rule.expression is not None
            try:
                value = evaluate(rule, rule.expression, act)
            except RuleError as e:
                return e.status.message
            if value is IGNORED or value is True:
                continue
            return f"{rule.qualified_name}: " + rule_message(rule, act)
        return None

    # -- preFilter ----------------------------------------------------------------------

    def run_pre_filter(self, state: CycleState) -> tuple[Status, set[str] | None]:
        """The pod-level verdict and the node names the filters may consider (None: all)."""
        node_names: set[str] | None = None
        skipped: set[str] = set()
        for instance, rule, act in self._applicable(state, ExtensionPoint.PRE_FILTER):
            assert isinstance(rule, PreFilterRule)
            if instance.name in skipped:
                continue
            try:
                if rule.expression is not None:
                    value = evaluate(rule, rule.expression, act)
                    if value is not True and value is not IGNORED:
                        return self._pre_filter_rejection(rule, act, value), None
                if rule.node_names is not None:
                    names = evaluate(rule, rule.node_names, act)
                    if names is not IGNORED:
                        chosen = set(names)
                        node_names = chosen if node_names is None else node_names & chosen
            except RuleError as e:
                return e.status, None
        return SUCCESS, node_names

    def _pre_filter_rejection(self, rule: PreFilterRule, act: dict[str, Any],
                              value: Any) -> Status:
        if value is not False:
            return error(rule.qualified_name, messages.EVALUATION_ERROR.format(
                policy=rule.policy, rule=rule.name, field="expression",
                text=rule.expression.text if rule.expression else "",
                error=messages.WRONG_RESULT.format(expected="bool", got=value)))
        retry_after = None
        if rule.retry_after is not None:
            try:
                seconds = rule.retry_after.evaluate(act)
                if isinstance(seconds, int | float) and not isinstance(seconds, bool) \
                        and seconds > 0:
                    retry_after = float(seconds)
            except CelError:
                retry_after = None
        reason = rule_message(rule, act)
        return unschedulable(rule.qualified_name, reason, unresolvable=rule.unresolvable,
                             retry_after=retry_after)

    # -- filter -------------------------------------------------------------------------

    def filter_plan(self, state: CycleState,
                    rules: Sequence[tuple[PolicyInstance, Rule]] | None = None
                    ) -> list[tuple[FilterRule, dict[str, Any]]]:
        """The filter rules that apply to this pod, each with its policy's pod-level
        activation; computed once per cycle, then run on every node."""
        plan: list[tuple[FilterRule, dict[str, Any]]] = []
        for instance, rule in (self._by_point[ExtensionPoint.FILTER] if rules is None
                               else rules):
            if self.matches(state, instance):
                assert isinstance(rule, FilterRule) and rule.expression is not None
                plan.append((rule, state.base(instance)))
        return plan

    def run_filter(self, state: CycleState, node: NodeInfo,
                   rules: Sequence[tuple[PolicyInstance, Rule]] | None = None,
                   plan: list[tuple[FilterRule, dict[str, Any]]] | None = None) -> Status:
        """The first failing filter rule's status for ``node`` (Success when all pass)."""
        if plan is None:
            plan = self.filter_plan(state, rules)
        act: dict[str, Any] = {}
        current: dict[str, Any] | None = None
        for rule, base in plan:
            if base is not current:  # next policy: its params, variables, ...
                act.update(base)
                act["node"] = node.view
                act["nodePods"] = node.pod_views
                current = base
            status = filter_rule_status(rule, act)
            if status is not SUCCESS:
                return status
        return SUCCESS

    # -- postFilter (preemption rules) ----------------------------------------------------

    def preemption_rules(self, state: CycleState
                         ) -> tuple[list[tuple[PolicyInstance, PostFilterRule]], str] | Status:
        """The postFilter rules that let this pod preempt (their ``expression`` is true),
        and the message of the first that refuses it ("" if none does; kube-scheduler's
        "not eligible due to …"); a Status when evaluating them failed."""
        out: list[tuple[PolicyInstance, PostFilterRule]] = []
        refusal = ""
        for instance, rule, act in self._applicable(state, ExtensionPoint.POST_FILTER):
            assert isinstance(rule, PostFilterRule)
            try:
                allowed = (True if rule.expression is None
                           else evaluate(rule, rule.expression, act))
            except RuleError as e:
                return e.status
            if allowed is True:
                out.append((instance, rule))
            elif not refusal:
                refusal = rule_message(rule, act, "")
        return out, refusal

    def may_evict(self, state: CycleState,
                  rules: Sequence[tuple[PolicyInstance, PostFilterRule]],
                  node: NodeInfo, victim: PodInfo) -> bool:
        """Whether every preemption rule lets ``victim`` on ``node`` be evicted."""
        for instance, rule in rules:
            act = dict(state.base(instance))
            act.update(node=node.view, nodePods=node.pod_views, victim=victim.view)
            try:
                if evaluate(rule, rule.victims, act) is not True:
                    return False
            except RuleError:
                return False
        return True

    # -- preScore / score ---------------------------------------------------------------

    def run_pre_score(self, state: CycleState) -> Status:
        for instance, rule, act in self._applicable(state, ExtensionPoint.PRE_SCORE):
            if rule.expression is None:
                continue
            try:
                value = evaluate(rule, rule.expression, act)
            except RuleError as e:
                return e.status
            if value is False:
                state.skipped_scoring.add(instance.name)
        return SUCCESS

    def run_score(self, state: CycleState, nodes: Sequence[NodeInfo]
                  ) -> tuple[Status, list[int], dict[str, list[tuple[float, float, int]]]]:
        """Total weighted score per node (in ``nodes`` order) and, per rule, the
        (raw, normalised, weighted) triple per node for ``explain``."""
        totals = [0] * len(nodes)
        detail: dict[str, list[tuple[float, float, int]]] = {}
        for instance, rule, base in self._applicable(state, ExtensionPoint.SCORE):
            assert isinstance(rule, ScoreRule) and rule.expression is not None
            if instance.name in state.skipped_scoring:
                continue
            weight = rule.weight * instance.weight
            raw: list[float] = []
            act = dict(base)
            for node in nodes:
                act["node"] = node.view
                act["nodePods"] = node.pod_views
                value = score_value(rule, act)
                if isinstance(value, Status):
                    return value, totals, detail
                raw.append(value)
            normalised = normalise(raw, rule.normalize)
            rows = []
            for i, (node, score) in enumerate(zip(nodes, normalised, strict=True)):
                if not 0 <= score <= MAX_NODE_SCORE:
                    return score_out_of_range(rule, node.name, score), totals, detail
                weighted = int(score) * weight
                totals[i] += weighted
                rows.append((raw[i], score, weighted))
            detail[rule.qualified_name] = rows
        return SUCCESS, totals, detail

    # -- reserve / unreserve ----------------------------------------------------------------

    def node_activation(self, state: CycleState, instance: PolicyInstance,
                        node: NodeInfo) -> dict[str, Any]:
        act = state.base(instance).copy()
        act["node"] = node.view
        act["nodePods"] = node.pod_views
        return act

    def run_reserve(self, state: CycleState, node: NodeInfo,
                    counters: dict[str, float]) -> Status:
        """Reserve rules in order; counters are taken in ``counters`` and recorded in
        ``state.reserved_counters`` so that ``run_unreserve`` can give them back."""
        for instance, rule, _ in self._applicable(state, ExtensionPoint.RESERVE):
            assert isinstance(rule, ReserveRule)
            act = self.node_activation(state, instance, node)
            try:
                if rule.expression is not None and \
                        evaluate(rule, rule.expression, act) is False:
                    return _rejected(rule, act)
                if rule.counter is not None and rule.limit is not None:
                    status = self._take_counter(rule, act, state, counters)
                    if not status.is_success:
                        return status
            except RuleError as e:
                return e.status
        return SUCCESS

    def _take_counter(self, rule: ReserveRule, act: dict[str, Any], state: CycleState,
                      counters: dict[str, float]) -> Status:
        assert rule.counter is not None and rule.limit is not None
        key = evaluate(rule, rule.counter, act)
        amount = 1 if rule.amount is None else evaluate(rule, rule.amount, act)
        limit = evaluate(rule, rule.limit, act)
        if IGNORED in (key, amount, limit):
            return SUCCESS
        name = f"{rule.policy}/{key}"
        value = counters.get(name, 0) + amount
        if value > limit:
            return unschedulable(rule.qualified_name, rule_message(
                rule, act, messages.RESERVE_LIMIT.format(counter=key, value=value,
                                                         limit=limit)))
        counters[name] = value
        state.reserved_counters.append((name, float(amount)))
        return SUCCESS

    def run_unreserve(self, state: CycleState, node: NodeInfo,
                      counters: dict[str, float]) -> list[str]:
        """Give back counters in reverse order; the messages of unreserve rules that
        fired (to be recorded as events)."""
        for name, amount in reversed(state.reserved_counters):
            counters[name] = counters.get(name, 0) - amount
        state.reserved_counters.clear()
        return self._notifications(state, node, ExtensionPoint.UNRESERVE)

    def _notifications(self, state: CycleState, node: NodeInfo,
                       point: ExtensionPoint) -> list[str]:
        notes: list[str] = []
        for instance, rule, _ in reversed(list(self._applicable(state, point))):
            act = self.node_activation(state, instance, node)
            try:
                fired = rule.expression is None or evaluate(rule, rule.expression, act) is True
            except RuleError:
                continue
            if fired:
                notes.append(rule_message(rule, act, rule.qualified_name))
        if point is ExtensionPoint.POST_BIND:
            notes.reverse()
        return notes

    # -- permit -------------------------------------------------------------------------

    def run_permit(self, state: CycleState, node: NodeInfo
                   ) -> tuple[Status, list[tuple[PermitRule, str, int]]]:
        """Allow (Success), deny (Unschedulable) or hold (Wait with the shortest timeout).
        Also the gang rules that apply: (rule, group name, minMember)."""
        wait: Status | None = None
        gangs: list[tuple[PermitRule, str, int]] = []
        for instance, rule, _ in self._applicable(state, ExtensionPoint.PERMIT):
            assert isinstance(rule, PermitRule)
            act = self.node_activation(state, instance, node)
            try:
                if rule.group is not None and rule.min_member is not None:
                    group = evaluate(rule, rule.group, act)
                    if isinstance(group, str) and group:
                        minimum = evaluate(rule, rule.min_member, act)
                        gangs.append((rule, f"{state.pod.view['namespace']}/{group}",
                                      int(minimum) if isinstance(minimum, int) else 1))
                        wait = _shorter(wait, Status(Code.WAIT, (), rule.qualified_name,
                                                     timeout=rule.timeout_seconds))
                    continue
                value = True if rule.expression is None else evaluate(
                    rule, rule.expression, act)
            except RuleError as e:
                return e.status, gangs
            if value is True or value is IGNORED:
                continue
            reason = rule_message(rule, act)
            if rule.on_false is PermitOnFalse.WAIT:
                wait = _shorter(wait, Status(Code.WAIT, (reason,), rule.qualified_name,
                                             timeout=rule.timeout_seconds))
                continue
            return unschedulable(rule.qualified_name, reason), gangs
        return (wait or SUCCESS), gangs

    def waiting_rules_pass(self, state: CycleState, node: NodeInfo) -> bool:
        """Re-evaluation of the non-gang ``onFalse: Wait`` rules of a waiting pod."""
        for instance, rule, _ in self._applicable(state, ExtensionPoint.PERMIT):
            assert isinstance(rule, PermitRule)
            if rule.group is not None or rule.on_false is not PermitOnFalse.WAIT:
                continue
            act = self.node_activation(state, instance, node)
            try:
                value = True if rule.expression is None else evaluate(
                    rule, rule.expression, act)
            except RuleError:
                return False
            if value is not True and value is not IGNORED:
                return False
        return True

    # -- preBind / bind / postBind ------------------------------------------------------------

    def run_pre_bind(self, state: CycleState, node: NodeInfo
                     ) -> tuple[Status, dict[str, str], dict[str, str]]:
        """A refusal, or the labels and annotations to patch onto the pod."""
        labels: dict[str, str] = {}
        annotations: dict[str, str] = {}
        for instance, rule, _ in self._applicable(state, ExtensionPoint.PRE_BIND):
            assert isinstance(rule, PreBindRule)
            act = self.node_activation(state, instance, node)
            try:
                if rule.expression is not None and \
                        evaluate(rule, rule.expression, act) is False:
                    return _rejected(rule, act), labels, annotations
                for target, patches in ((labels, rule.labels),
                                        (annotations, rule.annotations)):
                    for key, expression in patches.items():
                        value = evaluate(rule, expression, act)
                        if value is not IGNORED:
                            target[key] = value if isinstance(value, str) else str(value)
            except RuleError as e:
                return e.status, labels, annotations
        return SUCCESS, labels, annotations

    def bind_target(self, state: CycleState, node: NodeInfo) -> tuple[Status, str]:
        """The node to bind to: the first bind rule whose expression holds decides;
        default binder otherwise."""
        for instance, rule, _ in self._applicable(state, ExtensionPoint.BIND):
            act = self.node_activation(state, instance, node)
            try:
                if rule.expression is not None and \
                        evaluate(rule, rule.expression, act) is not True:
                    continue
                target = getattr(rule, "target", None)
                if target is None:
                    return SUCCESS, node.name
                value = evaluate(rule, target, act)
            except RuleError as e:
                return e.status, node.name
            if isinstance(value, str) and value:
                return SUCCESS, value
        return SUCCESS, node.name

    def run_post_bind(self, state: CycleState, node: NodeInfo) -> list[str]:
        return self._notifications(state, node, ExtensionPoint.POST_BIND)


def filter_rule_status(rule: FilterRule, act: Mapping[str, Any]) -> Status:
    """One filter rule on one node (``act`` holds ``node``): SUCCESS when it passes (or
    is ignored), else Unschedulable with its reason, or an Error."""
    assert rule.expression is not None
    try:
        value = evaluate(rule, rule.expression, act)
    except RuleError as e:
        return e.status
    if value is True or value is IGNORED:
        return SUCCESS
    if value is not False:
        return error(rule.qualified_name, messages.EVALUATION_ERROR.format(
            policy=rule.policy, rule=rule.name, field="expression",
            text=rule.expression.text,
            error=messages.WRONG_RESULT.format(expected="bool", got=value)))
    return filter_rejection(rule)


def filter_rejection(rule: FilterRule) -> Status:
    """The status of a node where ``rule`` is false."""
    reason = rule.reason or messages.FILTER_DEFAULT_REASON.format(rule=rule.qualified_name)
    return unschedulable(rule.qualified_name, reason,
                         unresolvable=getattr(rule, "unresolvable", False))


def score_value(rule: ScoreRule, act: Mapping[str, Any]) -> float | Status:
    """One score rule's raw value on one node (0 when ignored), or an Error status."""
    assert rule.expression is not None
    try:
        value = evaluate(rule, rule.expression, act)
    except RuleError as e:
        return e.status
    if value is IGNORED:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        return error(rule.qualified_name, messages.EVALUATION_ERROR.format(
            policy=rule.policy, rule=rule.name, field="expression",
            text=rule.expression.text,
            error=messages.WRONG_RESULT.format(expected="a number", got=value)))
    return float(value)


def _rejected(rule: Rule, act: Mapping[str, Any]) -> Status:
    """Unschedulable with the rule's message (or "rejected by policy/rule")."""
    return unschedulable(rule.qualified_name, rule_message(rule, act))


def _shorter(current: Status | None, new: Status) -> Status:
    if current is None or (new.timeout or 0) < (current.timeout or 0):
        return new
    return current


def score_out_of_range(rule: ScoreRule, node: str, score: float) -> Status:
    return error(rule.qualified_name, messages.SCORE_OUT_OF_RANGE.format(
        policy=rule.policy, rule=rule.name, node=node, score=f"{score:g}"))


def normalise(raw: Sequence[float], how: Normalization) -> list[float]:
    """kube-scheduler's NormalizeScore variants, to 0..100."""
    if how is Normalization.NONE or not raw:
        return list(raw)
    high, low = max(raw), min(raw)
    if how is Normalization.MAX:  # kube's DefaultNormalizeScore: integer division
        return [float(int(x * MAX_NODE_SCORE / high)) if high else 0.0 for x in raw]
    if how is Normalization.REVERSE:  # truncate first, then reverse, as kube does
        if not high:
            return [float(MAX_NODE_SCORE)] * len(raw)
        return [float(MAX_NODE_SCORE - int(x * MAX_NODE_SCORE / high)) for x in raw]
    span = high - low
    return [(x - low) * MAX_NODE_SCORE / span if span else 0.0 for x in raw]


__all__ = ["IGNORED", "SKIP", "CycleState", "Framework", "PolicyInstance", "normalise"]
