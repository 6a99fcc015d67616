"""Where every extension point's semantics live: ``Framework`` runs a profile's compiled
policies for a pod and turns their results into ``Status``es.

A ``Framework`` is one profile (schedulerName): its enabled policies, in order, with their
params and weights. Every ``run_*`` method evaluates the rules of the policies that match
the pod, turns CEL results into ``Status``es with kube-scheduler's meaning and never
raises for a policy's mistake: a CEL error is an ``Error`` status naming the policy, rule
and expression (or the rule is skipped under ``failurePolicy: Ignore``). Where a rule only
notifies (unreserve, postBind) or only orders pods (queueSort ``less``), or where a
``messageExpression`` fails (``message`` is used instead), the error is logged as a warning
once per rule and error text instead: none of them decides whether or where a pod runs.
"""

from __future__ import annotations

import itertools
import logging
import math
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol, TypeVar

from ..cache.node_info import NodeInfo
from ..cel import CelError
from ..cel.values import OptionalValue
from ..model.objects import PodInfo
from ..model.volume_binding import VolumeAssumption, VolumeBinder
from ..model.volumes import NO_STORAGE
from ..policy.model import (
    DEFAULT_PERMIT_TIMEOUT,
    BindRule,
    CelExpression,
    ExtensionPoint,
    FailurePolicy,
    FilterRule,
    Normalization,
    PermitOnFalse,
    PermitRule,
    PostFilterRule,
    PreBindRule,
    PreFilterRule,
    QueueSortRule,
    ReserveRule,
    Rule,
    ScoreRule,
)
from ..policy.reads import EVERY_FACT, Fact, policy_reads
from ..policy.selection import PolicyInstance
from . import aggregates, messages
from .status import SKIP, SUCCESS, Code, Status, error, unschedulable

MAX_NODE_SCORE = 100
MAX_PERMIT_WAIT = 900  # seconds: kube-scheduler cuts a permit wait to 15 minutes (maxTimeout)
DEFAULT_VOLUME_BIND_TIMEOUT = 600  # seconds: kube's VolumeBindingArgs.bindTimeoutSeconds

_T = TypeVar("_T")
log = logging.getLogger(__name__)


class _Ignored:
    """The value of a rule whose evaluation failed under ``failurePolicy: Ignore``."""


IGNORED = _Ignored()


class _Unordered:
    """A queueSort key that failed to evaluate: equal to any other key."""

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __lt__(self, other: object) -> bool:
        return False

    __gt__ = __lt__

    def __repr__(self) -> str:
        return "UNORDERED"


UNORDERED = _Unordered()


@dataclass(frozen=True)
class PermitWait:
    """A permit rule holding a pod (kube's pending permit plugin, with its own timer): a
    gang rule (``group`` "namespace/name" and ``min_member``) or a false ``onFalse: Wait``
    rule."""

    rule: str  # policy/rule
    timeout: float  # seconds
    group: str | None = None
    min_member: int = 0


class VolumeAssumptions(Protocol):
    """Where reserve assumes volume bindings (the cache)."""

    def assume_volumes(self, pod_key: str, assumption: VolumeAssumption) -> str | None:
        """None when assumed, else why not."""
        ...

    def revert_volumes(self, pod_key: str) -> None: ...


class RuleError(Exception):
    """A CEL evaluation error, already phrased for the user (policy, rule, expression)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def evaluate(rule: Rule, expression: CelExpression, activation: Mapping[str, Any]) -> Any:
    """``expression``'s value, ``IGNORED`` under failurePolicy Ignore, or ``RuleError``
    (``CelExpression.evaluate`` turns any exception into a CEL error)."""
    try:
        return expression.evaluate(activation)
    except CelError as e:
        if rule.failure_policy is FailurePolicy.IGNORE:
            return IGNORED
        message = messages.EVALUATION_ERROR.format(
            policy=rule.policy, rule=rule.name, field=expression.field,
            text=expression.summary, error=e.message)
    raise RuleError(error(rule.qualified_name, message)) from None


def wrong_result(rule: Rule, expression: CelExpression, expected: str, value: Any) -> Status:
    """The Error of an expression whose value has the wrong type."""
    return error(rule.qualified_name, messages.EVALUATION_ERROR.format(
        policy=rule.policy, rule=rule.name, field=expression.field, text=expression.summary,
        error=messages.WRONG_RESULT.format(expected=expected, got=value)))


_WARNED: set[tuple[str, str]] = set()
_WARNED_LIMIT = 1024  # distinct (rule, error) pairs remembered


def warn_once(rule: Rule, expression: CelExpression, problem: str) -> None:
    """Log that ``rule``'s ``expression`` failed where the failure decides nothing (a
    notification, a message, an order): once per rule and problem, not per pod."""
    key = (rule.qualified_name, problem)
    if key in _WARNED:
        return
    if len(_WARNED) >= _WARNED_LIMIT:
        _WARNED.clear()
    _WARNED.add(key)
    log.warning(messages.LOG_RULE_WARNING, messages.EVALUATION_ERROR.format(
        policy=rule.policy, rule=rule.name, field=expression.field, text=expression.summary,
        error=problem))


def rule_message(rule: Rule, activation: Mapping[str, Any], default: str | None = None) -> str:
    """The rule's ``messageExpression`` (when it evaluates to a string), else ``message``,
    else ``default`` (by default "rejected by policy/rule"). A failing
    ``messageExpression`` is logged (``warn_once``)."""
    value = expression_message(rule, activation)
    if value is not None:
        return value
    if rule.message:
        return rule.message
    return messages.RULE_REJECTED.format(rule=rule.qualified_name) if default is None \
        else default


def expression_message(rule: Rule, activation: Mapping[str, Any]) -> str | None:
    """The rule's ``messageExpression`` when it has one that evaluates to a string; a
    failing one is logged (``warn_once``)."""
    expression = rule.message_expression
    if expression is None:
        return None
    try:
        value = expression.evaluate(activation)
    except CelError as e:
        warn_once(rule, expression, e.message)
        return None
    return value if isinstance(value, str) else None



class _Variables(dict[str, Any]):
    """``variables`` of one policy for one pod: each computed on first use, then kept."""

    def __init__(self, instance: PolicyInstance, base: Activation) -> None:
        super().__init__()
        self._expressions = instance.policy.variable_expressions
        # weak: the base holds this (no reference cycle, so a cycle's state is freed at
        # once instead of by the garbage collector)
        self._base = weakref.ref(base)
        self._policy = instance.policy.name

    def __missing__(self, name: str) -> Any:
        expression = self._expressions.get(name)
        if expression is None:
            raise KeyError(name)
        base: Activation = _alive(self._base)
        try:
            value = expression.evaluate(base)
        except CelError as e:
            raise CelError(f"variable {name} of policy {self._policy}: {e.message}") from None
        self[name] = value
        return value


class _Aggregates(dict[str, Any]):
    """``aggregates`` of one policy for one pod: each computed on first use, then kept."""

    def __init__(self, instance: PolicyInstance, base: Activation, pod: PodInfo,
                 cluster: aggregates.ClusterView | None) -> None:
        super().__init__()
        self._instance = instance
        self._base = weakref.ref(base)  # weak, as _Variables'
        self._pod, self._view = pod, cluster

    def __missing__(self, name: str) -> Any:
        policy = self._instance.policy
        spec = policy.aggregates_by_name.get(name)
        view = self._view
        if spec is None or view is None:
            raise KeyError(name)
        base = _alive(self._base)

        def evaluate(expression: CelExpression, extra: Mapping[str, Any]) -> Any:
            activation = base.copy()
            activation.update(extra)
            return expression.evaluate(activation)

        try:
            value = aggregates.compute(spec, self._pod, view, evaluate,
                                       self._instance.params, id(self._instance))
        except CelError as e:
            raise CelError(messages.AGGREGATE_FAILED.format(
                name=name, policy=policy.name, error=e.message)) from None
        self[name] = value
        return value


def _alive(ref: weakref.ref[_T]) -> _T:
    """The object of a weak reference held by something it holds (so alive: an
    activation's ``variables`` and ``aggregates`` are read through that activation)."""
    found = ref()
    if found is None:
        raise RuntimeError(messages.ACTIVATION_GONE)
    return found


@dataclass(frozen=True)
class PreFilterResult:
    """preFilter's verdict, the node names the filters may consider (None: every node)
    and the plugin names (``Policy.plugin``) of the policies that narrowed them."""

    status: Status
    node_names: set[str] | None = None
    narrowed_by: frozenset[str] = frozenset()


@dataclass
class CycleState:
    """What one scheduling attempt of one pod computes once and shares across points."""

    pod: PodInfo
    now: int
    pod_views: Callable[[], list[dict[str, Any]]]
    node_views: Callable[[], list[dict[str, Any]]]
    affinity_pod_views: Callable[[], list[dict[str, Any]]] = list
    _bases: dict[str, Activation] = field(default_factory=dict)
    _lists: dict[str, Callable[[], Any]] = field(default_factory=dict)  # what bases share
    _matches: dict[str, bool | Status] = field(default_factory=dict)  # Status: an Error
    skipped_scoring: set[str] = field(default_factory=set)
    parts: dict[Any, Any] = field(default_factory=dict)  # pod-side expression parts' values
    template: Any = None  # the pod's template, frozen (see framework.vectorised)
    reserved_counters: list[tuple[str, float]] = field(default_factory=list)
    reserved_volumes: list[VolumeAssumption] = field(default_factory=list)
    volume_bind_timeout: float | None = None  # preBind: write reserved_volumes with the bind
    cluster: aggregates.ClusterView | None = None  # what aggregates read (no snapshot: none)
    pre_filter_skipped: set[str] = field(default_factory=set)  # policies preFilter did not
    # get to

    def base(self, instance: PolicyInstance) -> Activation:
        """The pod-level activation of ``instance``'s expressions. Its ``variables`` and
        ``aggregates`` hold it weakly: read them through it, while it is alive."""
        base = self._bases.get(instance.name)
        if base is None:
            # nothing the base holds refers to this state: no reference cycle, so that the
            # state is freed when the cycle is over, not by the garbage collector
            lists, pod, cluster = self._lists, self.pod, self.cluster
            if not lists:
                lists.update({"pods": self.pod_views, "nodes": self.node_views,
                              "podsWithAffinity": self.affinity_pod_views,
                              "workloadSelector": partial(_workload_selector, pod, cluster),
                              "podGroupPods": partial(_pod_group_pods, pod, cluster),
                              "podVolumes": partial(_pod_volumes, pod, cluster),
                              "volumeBinder": partial(_volume_binder, pod, cluster)})
            base = Activation({"now": self.now, "pod": self.pod.view,
                               "params": instance.params},
                              # read in postFilter only, once preFilter is over
                              {**lists, "preFilterRan": partial(
                                  _not_in, instance.name, self.pre_filter_skipped)})
            base["variables"] = _Variables(instance, base)
            base["aggregates"] = _Aggregates(instance, base, pod, cluster)
            self._bases[instance.name] = base
        return base

    def release(self) -> None:
        """Forget what filtering and scoring computed: the vectorised tier's memo of pod
        parts and the policies' activations, with their variables and aggregates (arrays
        over every node). A bind in flight keeps its state until its outcome; holding
        these made each one ~0.6 MiB at 5,000 nodes (pod anti-affinity), so a hundred binds
        in flight took ~65 MiB. A postBind or unreserve rule computes again what it reads
        (from the same pod, cluster view and ``now``: the same values)."""
        self.parts = {}
        self.template = None
        self._bases = {}


def _not_in(name: str, names: set[str]) -> bool:
    return name not in names


def _pod_group_pods(pod: PodInfo, cluster: aggregates.ClusterView | None) -> int:
    """``podGroupPods``: the pods labelled with the pod's pod group, in any phase (0 for a
    pod of no group, or without a snapshot)."""
    key = pod.group_key
    return 0 if cluster is None or key is None else cluster.snapshot.group_members(key)


def _pod_volumes(pod: PodInfo, cluster: aggregates.ClusterView | None
                 ) -> list[dict[str, Any]]:
    """``podVolumes``: the pod's volumes with their claims, volumes and classes in the
    cycle's snapshot ([] without one)."""
    return [] if cluster is None else cluster.snapshot.volume_views(pod)


def _volume_binder(pod: PodInfo, cluster: aggregates.ClusterView | None) -> VolumeBinder:
    """``volumeBinder``: kube's volume binder for the pod on the cycle's snapshot (one
    without claims without a snapshot)."""
    if cluster is None:
        return VolumeBinder(NO_STORAGE, pod.namespace, ())
    return cluster.snapshot.volume_binder(pod)


def _workload_selector(pod: PodInfo, cluster: aggregates.ClusterView | None
                       ) -> dict[str, Any] | None:
    """``workloadSelector``: kube-scheduler's DefaultSelector of the pod in the cycle's
    snapshot (None without one)."""
    return None if cluster is None else cluster.snapshot.default_selector(pod)


class Activation(dict[str, Any]):
    """Variables of an expression; the cluster-wide ones (``pods``, ``nodes``,
    ``podsWithAffinity``, ``workloadSelector``, ``podGroupPods``, ``podVolumes``) are only
    computed when an expression reads them."""

    def __init__(self, values: Mapping[str, Any],
                 lists: Mapping[str, Callable[[], Any]]) -> None:
        super().__init__(values)
        self._lists = lists
        self._origin: Activation | None = None

    def __missing__(self, name: str) -> Any:
        build = self._lists.get(name)
        if build is None:
            raise KeyError(name)
        value = self[name] = build()
        return value

    def copy(self) -> Activation:
        copied = Activation(self, self._lists)
        copied._origin = self  # what its variables and aggregates evaluate with, kept alive
        return copied


class _NodeActivation(dict[str, Any]):
    """A filter's activation on one node: its policy's pod-level values copied, and what
    was not computed yet (``podVolumes``, ``pods`` …: ``Activation``'s lazy lists) read
    from that activation, which computes it once for every node."""

    base: dict[str, Any] = {}

    def __missing__(self, name: str) -> Any:
        return self.base[name]


@dataclass(frozen=True)
class AuditedRule:
    """A rule in audit mode (framework/audit.py), with a profile of its own in which it is
    the only rule (``framework``, whose one instance is its policy with only this rule):
    it runs there by the same code as an enforced rule, every tier included, and its
    verdict decides nothing."""

    rule: Rule
    instance: PolicyInstance
    framework: Framework


class Framework:
    """The extension points of one profile. Audited rules are set apart when the profile
    is built (``audited``): the points run the enforced rules only, so a profile without
    audited rules runs exactly as before, and one with them decides as if they were
    absent."""

    def __init__(self, scheduler_name: str, instances: Sequence[PolicyInstance],
                 queue_sort: PolicyInstance | None = None) -> None:
        self.scheduler_name = scheduler_name
        self.audited: dict[ExtensionPoint, tuple[AuditedRule, ...]] = {}
        if any(i.policy.audited_rules for i in instances):
            instances = self._set_audited_apart(instances)
        self.instances = tuple(instances)
        self.queue_sort = queue_sort
        self._by_point = {
            point: tuple((i, r) for i in self.instances for r in i.policy.rules_for(point))
            for point in ExtensionPoint
        }
        self._matched = tuple(i for i in self.instances
                              if any(p is not ExtensionPoint.QUEUE_SORT for p in i.policy.points))
        self._reads: dict[str, frozenset[Fact]] | None = None  # policy/rule -> facts
        self._reads_of: dict[frozenset[str], frozenset[Fact]] = {}

    def _set_audited_apart(self, instances: Sequence[PolicyInstance]
                           ) -> list[PolicyInstance]:
        """Fill ``audited``; the instances with their enforced rules only."""
        audited: dict[ExtensionPoint, list[AuditedRule]] = {}
        for instance in instances:
            for rule in instance.policy.audited_rules:
                alone = replace(instance, policy=instance.policy.with_only(rule))
                audited.setdefault(rule.point, []).append(
                    AuditedRule(rule, alone, Framework(self.scheduler_name, [alone])))
        self.audited = {point: tuple(found) for point, found in audited.items()}
        return [replace(i, policy=i.policy.without_audited()) for i in instances]

    def rules(self, point: ExtensionPoint) -> tuple[tuple[PolicyInstance, Rule], ...]:
        return self._by_point[point]

    def has_rules(self, point: ExtensionPoint) -> bool:
        return bool(self._by_point[point])

    def requeue_reads(self, rules: frozenset[str]) -> frozenset[Fact]:
        """What the rules named ``policy/rule`` read that a cluster event can change (the
        pod's queueing hints, ``policy.reads``): every fact for no rule (a failure no rule
        is named for), or for a rule the analysis does not cover (reserve, permit...)."""
        found = self._reads_of.get(rules)
        if found is None:
            if self._reads is None:
                self._reads = {name: facts for i in self.instances
                               for name, facts in policy_reads(i.policy).items()}
            facts: set[Fact] = set()
            for name in rules or ("",):
                facts |= self._reads.get(name, EVERY_FACT)
            found = self._reads_of[rules] = frozenset(facts)
        return found

    # -- matching ---------------------------------------------------------------------

    def matches(self, state: CycleState, instance: PolicyInstance) -> bool:
        """Whether ``spec.match`` selects the pod. A match that fails to evaluate raises
        ``RuleError`` (an Error for the pod naming the policy and ``spec.match``; the
        scheduler reports it before any other point through ``check_matches``) — unless
        every rule of the policy has ``failurePolicy: Ignore``: then the policy is skipped,
        as each of its rules would be."""
        if instance.policy.match is None:  # most policies: every pod
            return True
        known = state._matches.get(instance.name)
        if known is True:
            return True
        if known is None:
            known = state._matches[instance.name] = self._match(state, instance)
        if isinstance(known, Status):
            raise RuleError(known)
        return known

    def check_matches(self, state: CycleState) -> Status:
        """The first policy whose ``match`` fails to evaluate, as an Error (else Success);
        policies with queueSort rules only are not matched, so not checked."""
        for instance in self._matched:
            try:
                self.matches(state, instance)
            except RuleError as e:
                return e.status
        return SUCCESS

    @staticmethod
    def _match(state: CycleState, instance: PolicyInstance) -> bool | Status:
        policy = instance.policy
        match = policy.match
        if match is None:
            return True
        try:  # match sees now, pod and params only: no policy activation needed for it
            value = match.evaluate({"now": state.now, "pod": state.pod.view,
                                    "params": instance.params})
        except CelError as e:
            if all(rule.failure_policy is FailurePolicy.IGNORE
                   for point, rules in policy.rules.items() for rule in rules
                   if point is not ExtensionPoint.QUEUE_SORT):  # queueSort has no match
                return False
            return error(policy.name, messages.MATCH_ERROR.format(
                policy=policy.name, field=match.field, text=match.summary, error=e.message))
        if not isinstance(value, bool):
            return error(policy.name, messages.MATCH_ERROR.format(
                policy=policy.name, field=match.field, text=match.summary,
                error=messages.WRONG_RESULT.format(expected="bool", got=value)))
        return value

    def _applicable(self, state: CycleState, point: ExtensionPoint
                    ) -> Iterable[tuple[PolicyInstance, Rule, dict[str, Any]]]:
        for instance, rule in self._by_point[point]:
            if self.matches(state, instance):
                yield instance, rule, state.base(instance)

    # -- queueSort ----------------------------------------------------------------------

    def sort_key(self, pod: PodInfo, now: int) -> tuple[tuple[Any, ...] | None, Status]:
        """The pod's queue sort keys (``keys`` rules; None when ``less`` is used), and an
        Error when a key failed to evaluate: that key is then ``UNORDERED``, equal to any
        other, so the pod keeps its FIFO place among pods equal on the other keys."""
        if self.queue_sort is None:
            return (-pod.priority, pod.creation), SUCCESS
        keys: list[Any] = []
        status = SUCCESS
        act = {"now": now, "pod": pod.view, "params": self.queue_sort.params}
        for rule in self.queue_sort.policy.rules_for(ExtensionPoint.QUEUE_SORT):
            assert isinstance(rule, QueueSortRule)
            if rule.less is not None:
                return None, SUCCESS
            values, found = _sort_keys(rule, act)
            keys += values
            status = found if status.is_success else status
        return tuple(keys), status

    def less(self, a: PodInfo, b: PodInfo, now: int) -> bool:
        """queueSort: whether ``a`` goes before ``b``. A ``less`` that fails to evaluate
        leaves the two pods equal under its rule (logged once: ordering decides nothing
        about whether or where a pod runs, and the error belongs to no single pod)."""
        if self.queue_sort is None:
            return (-a.priority, a.creation) < (-b.priority, b.creation)
        params = self.queue_sort.params
        act = {"now": now, "a": a.view, "b": b.view, "params": params}
        for rule in self.queue_sort.policy.rules_for(ExtensionPoint.QUEUE_SORT):
            assert isinstance(rule, QueueSortRule)
            if rule.less is not None:
                try:
                    if rule.less.evaluate(act) is True:
                        return True
                    if rule.less.evaluate(dict(act, a=b.view, b=a.view)) is True:
                        return False
                except CelError as e:
                    if rule.failure_policy is FailurePolicy.FAIL:
                        warn_once(rule, rule.less, e.message)
                continue
            ka, _ = _sort_keys(rule, {"now": now, "pod": a.view, "params": params})
            kb, _ = _sort_keys(rule, {"now": now, "pod": b.view, "params": params})
            if ka != kb:
                try:
                    return bool(ka < kb)
                except TypeError:  # keys of different types: as if equal
                    continue
        return False

    # -- preEnqueue ---------------------------------------------------------------------

    def pre_enqueue(self, state: CycleState) -> Status:
        """Success when the pod may enter the active queue; else the refusing rule's
        Unschedulable status (message "policy/rule: why"), or an Error."""
        try:
            for _, rule, act in self._applicable(state, ExtensionPoint.PRE_ENQUEUE):
                assert rule.expression is not None
                value = evaluate(rule, rule.expression, act)
                if value is IGNORED or value is True:
                    continue
                if value is not False:
                    return wrong_result(rule, rule.expression, "bool", value)
                return unschedulable(rule.qualified_name,
                                     f"{rule.qualified_name}: {rule_message(rule, act)}")
        except RuleError as e:
            return e.status
        return SUCCESS

    # -- preFilter ----------------------------------------------------------------------

    def run_pre_filter(self, state: CycleState) -> PreFilterResult:
        """kube-scheduler's RunPreFilterPlugins, a policy being a plugin: a policy's rules
        run in order up to its first rejection; an Unschedulable rejection lets the next
        policies run (the last one is the verdict), an UnschedulableAndUnresolvable one or
        an Error ends preFilter, and so do ``nodeNames`` sets that intersect to nothing.
        The policies preFilter did not get to are kept in ``state.pre_filter_skipped``."""
        names: set[str] | None = None
        narrowing: set[str] = set()
        rejections: list[Status] = []
        groups = itertools.groupby(self._by_point[ExtensionPoint.PRE_FILTER], lambda r: r[0])
        for instance, rules in groups:
            try:
                if not self.matches(state, instance):
                    continue
                status, chosen = self._policy_pre_filter(state, instance, [r for _, r in rules])
            except RuleError as e:
                return self._pre_filter_stop(state, instance, e.status)
            if status is not None:
                if status.code is not Code.UNSCHEDULABLE:
                    return self._pre_filter_stop(state, instance, status)
                rejections.append(status)
                continue
            if chosen is None:
                continue
            narrowing.add(instance.policy.plugin)
            names = chosen if names is None else names & chosen
            if not names:
                reason = (messages.PRE_FILTER_NO_NODE.format(plugin=next(iter(narrowing)))
                          if len(narrowing) == 1 else messages.PRE_FILTER_NO_NODE_TOGETHER
                          .format(plugins=plugin_list(narrowing)))
                return self._pre_filter_stop(state, instance, unschedulable(
                    instance.name, reason, unresolvable=True))
        if rejections:
            return PreFilterResult(_last_rejection(rejections))
        return PreFilterResult(SUCCESS, names, frozenset(narrowing))

    def _policy_pre_filter(self, state: CycleState, instance: PolicyInstance,
                           rules: Sequence[Rule]) -> tuple[Status | None, set[str] | None]:
        """One policy's preFilter rules: its rejection (None when it passes) and the node
        names it allows (None: every node). Raises ``RuleError``."""
        act = state.base(instance)
        names: set[str] | None = None
        for rule in rules:
            assert isinstance(rule, PreFilterRule)
            if rule.expression is not None:
                value = evaluate(rule, rule.expression, act)
                if value is not True and value is not IGNORED:
                    return self._pre_filter_rejection(rule, act, value), None
            if rule.node_names is not None:
                value = evaluate(rule, rule.node_names, act)
                if isinstance(value, OptionalValue):  # none: every node
                    value = value.value if value.has else IGNORED
                if value is not IGNORED:
                    chosen = set(value)
                    names = chosen if names is None else names & chosen
        return None, names

    def _pre_filter_stop(self, state: CycleState, instance: PolicyInstance,
                         status: Status) -> PreFilterResult:
        """preFilter ends at ``instance``'s policy: the policies after it are skipped."""
        after = self.instances[self.instances.index(instance) + 1:]
        state.pre_filter_skipped.clear()  # in place: the activations' preFilterRan read it
        state.pre_filter_skipped.update(i.name for i in after)
        return PreFilterResult(status)

    @staticmethod
    def _pre_filter_rejection(rule: PreFilterRule, act: dict[str, Any], value: Any) -> Status:
        """The status of a preFilter rule that is not true; raises ``RuleError`` when its
        ``retryAfter`` fails (under ``failurePolicy: Ignore`` it is left out)."""
        assert rule.expression is not None
        if value is not False:
            return wrong_result(rule, rule.expression, "bool", value)
        retry_after = None
        if rule.retry_after is not None:
            seconds = evaluate(rule, rule.retry_after, act)
            if isinstance(seconds, int | float) and not isinstance(seconds, bool) \
                    and seconds > 0:
                retry_after = float(seconds)
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
                assert isinstance(rule, FilterRule)
                plan.append((rule, state.base(instance)))
        return plan

    def run_filter(self, state: CycleState, node: NodeInfo,
                   rules: Sequence[tuple[PolicyInstance, Rule]] | None = None,
                   plan: list[tuple[FilterRule, dict[str, Any]]] | None = None) -> Status:
        """The first failing filter rule's status for ``node`` (Success when all pass;
        a rule with ``reasons`` may give several).
        ``node`` may be a changed copy of a snapshot node (nominated pods added, victims
        removed): the aggregates the rules read then count its pods."""
        if plan is None:
            plan = self.filter_plan(state, rules)
        view = state.cluster
        if view is not None and view.snapshot.node(node.name) is not node:
            with view.what_if(node):
                return self._run_filter(node, plan)
        return self._run_filter(node, plan)

    @staticmethod
    def _run_filter(node: NodeInfo, plan: list[tuple[FilterRule, dict[str, Any]]]) -> Status:
        act = _NodeActivation()
        current: dict[str, Any] | None = None
        for rule, base in plan:
            if base is not current:  # next policy: its params, variables, ...
                act.update(base)
                act.base = base
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
        try:
            for instance, rule, act in self._applicable(state, ExtensionPoint.POST_FILTER):
                assert isinstance(rule, PostFilterRule)
                if rule.victims is None:
                    continue  # not preemption: see post_filter_report
                allowed = (True if rule.expression is None
                           else evaluate(rule, rule.expression, act))
                if allowed is True:
                    out.append((instance, rule))
                elif not refusal:
                    refusal = rule_message(rule, act, "")
        except RuleError as e:
            return e.status
        return out, refusal

    def post_filter_report(self, state: CycleState, instance: PolicyInstance,
                           rule: PostFilterRule) -> Status | None:
        """What a postFilter rule reports (see post_filter.py): None when its expression
        is true (or absent), else its message as an Unschedulable status
        (UnschedulableAndUnresolvable with ``unresolvable``). Raises ``RuleError``."""
        act = state.base(instance)
        value = True if rule.expression is None else evaluate(rule, rule.expression, act)
        if value is True or value is IGNORED:
            return None
        if value is not False:
            assert rule.expression is not None
            raise RuleError(wrong_result(rule, rule.expression, "bool", value))
        return unschedulable(rule.qualified_name, rule_message(rule, act),
                             unresolvable=rule.unresolvable)

    def may_evict(self, state: CycleState,
                  rules: Sequence[tuple[PolicyInstance, PostFilterRule]],
                  node: NodeInfo, victim: PodInfo) -> bool:
        """Whether every preemption rule lets ``victim`` on ``node`` be evicted (a rule
        ignored under ``failurePolicy: Ignore`` does not). Raises ``RuleError`` when a
        ``victims`` expression fails or is not a bool."""
        for instance, rule in rules:
            act = dict(state.base(instance))
            act.update(node=node.view, nodePods=node.pod_views, victim=victim.view)
            victims = rule.victims
            assert victims is not None  # preemption_rules: the rules with victims
            value = evaluate(rule, victims, act)
            if value is IGNORED or value is False:
                return False
            if value is not True:
                raise RuleError(wrong_result(rule, victims, "bool", value))
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
            for node, value in zip(nodes, raw, strict=True):
                if not math.isfinite(value):
                    return score_not_finite(rule, node.name, value), totals, detail
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
                    counters: dict[str, float],
                    volumes: VolumeAssumptions | None = None) -> Status:
        """Reserve rules in order; counters are taken in ``counters`` and recorded in
        ``state.reserved_counters``, volume bindings assumed in ``volumes`` and recorded
        in ``state.reserved_volumes``, so that ``run_unreserve`` can give them back."""
        try:
            for instance, rule, _ in self._applicable(state, ExtensionPoint.RESERVE):
                assert isinstance(rule, ReserveRule)
                act = self.node_activation(state, instance, node)
                if rule.expression is not None:
                    value = evaluate(rule, rule.expression, act)
                    if value is False:
                        return _rejected(rule, act)
                    if value is not True and value is not IGNORED:
                        return wrong_result(rule, rule.expression, "bool", value)
                if rule.counter is not None and rule.limit is not None:
                    status = self._take_counter(rule, act, state, counters)
                    if not status.is_success:
                        return status
                if rule.volume_bindings is not None:
                    status = self._assume_volumes(rule, act, state, node, volumes)
                    if not status.is_success:
                        return status
        except RuleError as e:
            return e.status
        return SUCCESS

    @staticmethod
    def _assume_volumes(rule: ReserveRule, act: dict[str, Any], state: CycleState,
                        node: NodeInfo, volumes: VolumeAssumptions | None) -> Status:
        """A ``volumeBindings`` rule: assume its bindings on ``node`` (Unschedulable when
        a volume was taken meanwhile: the cache says why)."""
        assert rule.volume_bindings is not None
        value = evaluate(rule, rule.volume_bindings, act)
        if value is IGNORED:
            return SUCCESS
        try:
            assumption = VolumeAssumption(
                state.pod.namespace, node.name,
                tuple((b["claimName"], b["volumeName"]) for b in value["static"]),
                tuple(p["claimName"] for p in value["provisions"]))
        except (TypeError, KeyError):
            return wrong_result(rule, rule.volume_bindings, "a policysched.VolumeBindings",
                                value)
        if not assumption:
            return SUCCESS
        if volumes is None:
            return error(rule.qualified_name, messages.NO_VOLUME_CACHE)
        refused = volumes.assume_volumes(state.pod.key, assumption)
        if refused is not None:
            return unschedulable(rule.qualified_name, rule_message(rule, act, refused))
        state.reserved_volumes.append(assumption)
        return SUCCESS

    @staticmethod
    def _take_counter(rule: ReserveRule, act: dict[str, Any], state: CycleState,
                      counters: dict[str, float]) -> Status:
        assert rule.counter is not None and rule.limit is not None
        key = evaluate(rule, rule.counter, act)
        amount = 1 if rule.amount is None else _finite(rule, rule.amount, act)
        limit = _finite(rule, rule.limit, act)
        if key is IGNORED or amount is IGNORED or limit is IGNORED:
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

    def run_unreserve(self, state: CycleState, node: NodeInfo | None,
                      counters: dict[str, float],
                      volumes: VolumeAssumptions | None = None) -> list[str]:
        """Give back counters in reverse order and revert the assumed volume bindings;
        the messages of unreserve rules that fired (to be recorded as events; none when
        the node is gone)."""
        for name, amount in reversed(state.reserved_counters):
            counters[name] = counters.get(name, 0) - amount
        state.reserved_counters.clear()
        if state.reserved_volumes and volumes is not None:
            volumes.revert_volumes(state.pod.key)
        state.reserved_volumes.clear()
        state.volume_bind_timeout = None
        if node is None:
            return []
        return self._notifications(state, node, ExtensionPoint.UNRESERVE)

    def _notifications(self, state: CycleState, node: NodeInfo,
                       point: ExtensionPoint) -> list[str]:
        notes: list[str] = []
        for instance, rule, _ in reversed(list(self._applicable(state, point))):
            act = self.node_activation(state, instance, node)
            fired = True
            if rule.expression is not None:
                try:
                    fired = rule.expression.evaluate(act) is True
                except CelError as e:  # a notification: the pod's fate is decided already
                    if rule.failure_policy is FailurePolicy.FAIL:
                        warn_once(rule, rule.expression, e.message)
                    continue
            if fired:
                notes.append(rule_message(rule, act, rule.qualified_name))
        if point is ExtensionPoint.POST_BIND:
            notes.reverse()
        return notes

    # -- permit -------------------------------------------------------------------------

    def run_permit(self, state: CycleState, node: NodeInfo
                   ) -> tuple[Status, list[PermitWait]]:
        """Allow (Success), deny (Unschedulable) or hold (Wait, with the rules that hold
        the pod: its gangs and its ``onFalse: Wait`` rules that are false, each with the
        time-out it evaluated to)."""
        waits: list[PermitWait] = []
        for instance, rule, _ in self._applicable(state, ExtensionPoint.PERMIT):
            assert isinstance(rule, PermitRule)
            act = self.node_activation(state, instance, node)
            try:
                if rule.group is not None and rule.min_member is not None:
                    group = evaluate(rule, rule.group, act)
                    if isinstance(group, str) and group:
                        minimum = evaluate(rule, rule.min_member, act)
                        waits.append(PermitWait(
                            rule.qualified_name, _permit_timeout(rule, act),
                            f"{state.pod.view['namespace']}/{group}",
                            int(minimum) if isinstance(minimum, int) else 1))
                    continue
                value = True if rule.expression is None else evaluate(
                    rule, rule.expression, act)
                if value is True or value is IGNORED:
                    continue
                if rule.on_false is not PermitOnFalse.WAIT:
                    return unschedulable(rule.qualified_name, rule_message(rule, act)), waits
                waits.append(PermitWait(rule.qualified_name, _permit_timeout(rule, act)))
            except RuleError as e:
                return e.status, waits
        return (Status(Code.WAIT) if waits else SUCCESS), waits

    def run_waiting_rules(self, state: CycleState, node: NodeInfo, pending: Iterable[str]
                          ) -> tuple[Status, list[str]]:
        """Re-evaluation of a waiting pod's ``onFalse: Wait`` rules named in ``pending``
        (gang rules are the waiting room's): the ones that now pass, or an Error."""
        names = set(pending)
        passed: list[str] = []
        try:
            for instance, rule, _ in self._applicable(state, ExtensionPoint.PERMIT):
                assert isinstance(rule, PermitRule)
                if rule.qualified_name not in names or rule.group is not None:
                    continue
                act = self.node_activation(state, instance, node)
                value = True if rule.expression is None else evaluate(
                    rule, rule.expression, act)
                if value is True or value is IGNORED:
                    passed.append(rule.qualified_name)
        except RuleError as e:
            return e.status, passed
        return SUCCESS, passed

    # -- preBind / bind / postBind ------------------------------------------------------------

    def run_pre_bind(self, state: CycleState, node: NodeInfo
                     ) -> tuple[Status, dict[str, str], dict[str, str]]:
        """A refusal, or the labels and annotations to patch onto the pod; a rule with
        ``volumeBindingTimeoutSeconds`` sets ``state.volume_bind_timeout``: the volume
        bindings reserve assumed go with the bind, which waits that long for them."""
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
                if rule.volume_binding_timeout_seconds is not None and state.reserved_volumes:
                    timeout = evaluate(rule, rule.volume_binding_timeout_seconds, act)
                    state.volume_bind_timeout = float(
                        DEFAULT_VOLUME_BIND_TIMEOUT if timeout is IGNORED else max(timeout, 0))
            except RuleError as e:
                return e.status, labels, annotations
        return SUCCESS, labels, annotations

    def bind_target(self, state: CycleState, node: NodeInfo
                    ) -> tuple[Status, str, BindRule | None]:
        """The node to bind to and the bind rule that chose it: the first rule whose
        expression holds decides (a rule ignored under ``failurePolicy: Ignore`` does
        not); the chosen node with no rule otherwise. An Error when a rule fails or its
        target is not a string."""
        try:
            for instance, rule, _ in self._applicable(state, ExtensionPoint.BIND):
                assert isinstance(rule, BindRule)
                act = self.node_activation(state, instance, node)
                if rule.expression is not None and \
                        evaluate(rule, rule.expression, act) is not True:
                    continue
                if rule.target is None:
                    return SUCCESS, node.name, rule
                value = evaluate(rule, rule.target, act)
                if value is IGNORED:
                    continue
                if not isinstance(value, str):
                    return wrong_result(rule, rule.target, "a string", value), node.name, rule
                return SUCCESS, value, rule
        except RuleError as e:
            return e.status, node.name, None
        return SUCCESS, node.name, None

    def run_post_bind(self, state: CycleState, node: NodeInfo) -> list[str]:
        return self._notifications(state, node, ExtensionPoint.POST_BIND)


def plugin_list(plugins: Iterable[str]) -> str:
    """Plugin names as kube-scheduler prints a sorted list of them: ``[A B]``."""
    return "[" + " ".join(sorted(plugins)) + "]"


def _last_rejection(rejections: Sequence[Status]) -> Status:
    """The verdict of Unschedulable preFilter rejections: the last one (kube's), retried
    after the longest ``retryAfter`` when every rejection has one."""
    last = rejections[-1]
    delays = [s.retry_after for s in rejections]
    retry_after = None if None in delays else max(d for d in delays if d is not None)
    return Status(last.code, last.reasons, last.plugin, retry_after)


def filter_rule_status(rule: FilterRule, act: Mapping[str, Any]) -> Status:
    """One filter rule on one node (``act`` holds ``node``): SUCCESS when it passes (or
    is ignored), else Unschedulable (or UnschedulableAndUnresolvable) with its reasons, or
    an Error."""
    verdict = rule.verdict
    try:
        value = evaluate(rule, verdict, act)
        if value is IGNORED or value is True:
            return SUCCESS
        if rule.reasons is None:
            if value is not False:
                return wrong_result(rule, verdict, "bool", value)
            reason = expression_message(rule, act)
            return _node_rejection(rule, act, (reason,) if reason else ())
        if type(value) is not list or any(type(r) is not str for r in value):
            return wrong_result(rule, verdict, "a list of strings", value)
        return _node_rejection(rule, act, tuple(value)) if value else SUCCESS
    except RuleError as e:
        return e.status


def filter_rejection(rule: FilterRule) -> Status:
    """The status of every node a rule with a ``static_rejection`` rejects: its
    ``reason``, which defaults to ``message``, then to a generic reason."""
    reason = rule.reason or messages.FILTER_DEFAULT_REASON.format(rule=rule.qualified_name)
    return unschedulable(rule.qualified_name, reason, unresolvable=rule.unresolvable)


def _node_rejection(rule: FilterRule, act: Mapping[str, Any], reasons: tuple[str, ...]
                    ) -> Status:
    """The status of a node ``rule`` rejects: ``reasons`` (those of a ``reasons`` rule, or
    its ``messageExpression`` on that node), else the static ones; unresolvable when its
    ``unresolvableExpression`` holds on that node (left out when ignored), else when
    ``unresolvable``. Raises ``RuleError`` when ``unresolvableExpression`` fails."""
    static = filter_rejection(rule)
    code = static.code
    if rule.unresolvable_expression is not None:
        value = evaluate(rule, rule.unresolvable_expression, act)
        if value is not IGNORED and type(value) is not bool:
            raise RuleError(wrong_result(rule, rule.unresolvable_expression, "bool", value))
        if type(value) is bool:
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if value else Code.UNSCHEDULABLE
    return Status(code, reasons or static.reasons, rule.qualified_name)


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
        return wrong_result(rule, rule.expression, "a number", value)
    try:
        return float(value)
    except OverflowError:  # an int beyond a double (not CEL's, a raw view's): infinite
        return math.inf if value > 0 else -math.inf


def _finite(rule: Rule, expression: CelExpression, act: Mapping[str, Any]) -> Any:
    """``expression``'s value when it is a finite number (or ``IGNORED``); else raises
    ``RuleError``."""
    value = evaluate(rule, expression, act)
    if value is IGNORED or (isinstance(value, int | float) and not isinstance(value, bool)
                            and math.isfinite(value)):
        return value
    raise RuleError(wrong_result(rule, expression, "a finite number", value))


def _sort_keys(rule: QueueSortRule, act: Mapping[str, Any]) -> tuple[list[Any], Status]:
    """One ``keys`` rule's values for one pod (``UNORDERED`` for a key that failed or
    was ignored) and the first key's Error."""
    values: list[Any] = []
    status = SUCCESS
    for expression in rule.keys:
        try:
            value = evaluate(rule, expression, act)
        except RuleError as e:
            value = IGNORED
            status = e.status if status.is_success else status
        values.append(UNORDERED if value is IGNORED else value)
    return values, status


def _rejected(rule: Rule, act: Mapping[str, Any]) -> Status:
    """Unschedulable with the rule's message (or "rejected by policy/rule")."""
    return unschedulable(rule.qualified_name, rule_message(rule, act))


def _permit_timeout(rule: PermitRule, act: Mapping[str, Any]) -> float:
    """The seconds ``rule`` may hold the pod: its number, or its expression's value (the
    default under ``failurePolicy: Ignore``), cut to ``MAX_PERMIT_WAIT``; 0 or less times
    out at once. Raises ``RuleError``."""
    timeout = rule.timeout_seconds
    if isinstance(timeout, CelExpression):
        value = evaluate(rule, timeout, act)
        if value is IGNORED:
            return float(DEFAULT_PERMIT_TIMEOUT)
        if not isinstance(value, int) or isinstance(value, bool):
            raise RuleError(wrong_result(rule, timeout, "int", value))
        timeout = value
    return float(min(max(timeout, 0), MAX_PERMIT_WAIT))


def score_not_finite(rule: ScoreRule, node: str, value: float) -> Status:
    """The Error of a raw score that is not a finite number (checked before normalising)."""
    return _invalid_score(rule, messages.SCORE_NOT_FINITE.format(
        score=shown_score(value), node=node))


def score_out_of_range(rule: ScoreRule, node: str, score: float) -> Status:
    """The Error of a normalised score outside 0..100, as kube-scheduler's framework
    runtime reports a score plugin's."""
    return _invalid_score(rule, messages.SCORE_OUT_OF_RANGE.format(
        score=shown_score(score), node=node, low=0, high=MAX_NODE_SCORE))


def _invalid_score(rule: ScoreRule, problem: str) -> Status:
    assert rule.expression is not None
    return error(rule.qualified_name, messages.EVALUATION_ERROR.format(
        policy=rule.policy, rule=rule.name, field=rule.expression.field,
        text=rule.expression.summary, error=problem))


def shown_score(value: float) -> str:
    """A score as Go's %v prints a number (``+Inf``, ``NaN``, ``42``, ``33.3333``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:g}"


# Beyond HUGE, x * 100 may overflow a double: scores are first scaled by SHRINK, a power of
# two, which changes no result (it is exact) but the overflow.
HUGE, SHRINK = 2.0 ** 1000, 2.0 ** -100


def normalise(raw: Sequence[float], how: Normalization) -> list[float]:
    """kube-scheduler's NormalizeScore variants, to 0..100 (``raw`` is finite)."""
    if how is Normalization.NONE or not raw:
        return list(raw)
    if how is Normalization.INVERSE:
        ranked = [x for x in raw if x >= 0]
        if not ranked:
            return [0.0] * len(raw)
        high, low = max(ranked), min(ranked)
        return [(0.0 if x < 0 else float(MAX_NODE_SCORE) if not high
                 else _truncated((high + low - x) * MAX_NODE_SCORE / high)) for x in raw]
    high, low = max(raw), min(raw)
    if max(high, -low) > HUGE:
        raw = [x * SHRINK for x in raw]
        high, low = high * SHRINK, low * SHRINK
    if how is Normalization.MAX:  # kube's DefaultNormalizeScore: integer division
        return [_truncated(x * MAX_NODE_SCORE / high) if high else 0.0 for x in raw]
    if how is Normalization.REVERSE:  # truncate first, then reverse, as kube does
        if not high:
            return [float(MAX_NODE_SCORE)] * len(raw)
        return [MAX_NODE_SCORE - _truncated(x * MAX_NODE_SCORE / high) for x in raw]
    span = high - low
    return [(x - low) * MAX_NODE_SCORE / span if span else 0.0 for x in raw]


def _truncated(x: float) -> float:
    """``x`` rounded towards zero (±Inf, from a huge x over a small maximum, kept)."""
    return float(int(x)) if math.isfinite(x) else x


__all__ = ["IGNORED", "SKIP", "CycleState", "Framework", "PolicyInstance", "normalise"]
