"""A loaded, compiled SchedulingPolicy: what the framework engine runs.

Every CEL field is a ``CelExpression`` holding its compiled ``Program`` and where it was
written, so that a runtime error can name the policy, the rule, the field and the line.
Defaults of the schema are applied here: the engine never sees a missing optional field.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from typing import Any

from ..cel import CelError, Program
from . import messages
from .positions import Position

log = logging.getLogger(__name__)

SUMMARY_LENGTH = 160  # characters of an expression quoted in a message


class ExtensionPoint(StrEnum):
    """The scheduling-framework extension points a policy can have rules for, in the order
    a pod meets them."""

    QUEUE_SORT = "queueSort"
    PRE_ENQUEUE = "preEnqueue"
    PRE_FILTER = "preFilter"
    FILTER = "filter"
    POST_FILTER = "postFilter"
    PRE_SCORE = "preScore"
    SCORE = "score"
    RESERVE = "reserve"
    UNRESERVE = "unreserve"
    PERMIT = "permit"
    PRE_BIND = "preBind"
    BIND = "bind"
    POST_BIND = "postBind"


class FailurePolicy(StrEnum):
    FAIL = "Fail"      # a CEL evaluation error is an Error status for the pod
    IGNORE = "Ignore"  # the rule is skipped as if it passed (a score counts 0)


class Normalization(StrEnum):
    NONE = "none"        # the score is used as is
    MAX = "max"          # x * 100 / max
    REVERSE = "reverse"  # 100 - x * 100 / max
    MIN_MAX = "minmax"   # (x - min) * 100 / (max - min)
    # (max + min - x) * 100 / max over the nodes scored x >= 0 (100 when max is 0), 0 for
    # the others (PodTopologySpread's NormalizeScore: nodes it ignores score -1)
    INVERSE = "inverse"


class Enforcement(StrEnum):
    """Whether a rule decides (``ENFORCE``) or only reports what it would have decided
    (``AUDIT``: see framework/audit.py)."""

    ENFORCE = "Enforce"
    AUDIT = "Audit"


# Where a rule can be audited (docs/authoring.md#audit-rules says why the others cannot):
# each point whose verdict is about this pod alone and can be judged without acting on it.
AUDITABLE_POINTS: frozenset[ExtensionPoint] = frozenset({
    ExtensionPoint.PRE_ENQUEUE, ExtensionPoint.PRE_FILTER, ExtensionPoint.FILTER,
    ExtensionPoint.SCORE, ExtensionPoint.PERMIT})


DEFAULT_PERMIT_TIMEOUT = 60  # seconds: a permit rule's timeoutSeconds when not given


class PermitOnFalse(StrEnum):
    DENY = "Deny"
    WAIT = "Wait"


@dataclass(frozen=True, kw_only=True)
class CelExpression:
    """One compiled CEL field: ``field`` is its path in the document
    (``spec.preFilter[0].retryAfter``), ``position`` where its text starts."""

    text: str
    field: str
    position: Position
    program: Program

    @cached_property
    def summary(self) -> str:
        """The text on one line (white space folded), shortened: for messages on a pod."""
        folded = " ".join(self.text.split())
        if len(folded) <= SUMMARY_LENGTH:
            return folded
        return folded[:SUMMARY_LENGTH - 1] + "…"

    def evaluate(self, activation: Mapping[str, Any]) -> Any:
        """The value for ``activation``; raises ``policysched.cel.CelError``, also for any
        other exception (an engine defect, a value the host cannot hold), so that a failure
        stays the failure of one rule for one pod wherever the expression is evaluated."""
        try:
            return self.program.evaluate(activation)
        except CelError:
            raise
        except Exception as e:  # isolation: one rule, one pod
            log.debug(messages.LOG_UNEXPECTED_ERROR, self.field, self.text, exc_info=True)
            raise CelError(messages.UNEXPECTED_ERROR.format(
                kind=type(e).__name__, error=e)) from None


@dataclass(frozen=True, kw_only=True)
class Rule:
    """Fields every rule has. ``expression`` is None only where the schema makes it
    optional (then its documented default applies: usually "true")."""

    policy: str
    point: ExtensionPoint
    name: str
    position: Position
    expression: CelExpression | None = None
    failure_policy: FailurePolicy = FailurePolicy.FAIL
    message: str | None = None
    message_expression: CelExpression | None = None
    enforcement: Enforcement = Enforcement.ENFORCE  # the rule's, else its policy's

    @property
    def qualified_name(self) -> str:
        return f"{self.policy}/{self.name}"

    @property
    def audited(self) -> bool:
        return self.enforcement is Enforcement.AUDIT


@dataclass(frozen=True, kw_only=True)
class QueueSortRule(Rule):
    """Exactly one of ``less`` (sees ``a``, ``b``) and ``keys`` (sees ``pod``) is set."""

    less: CelExpression | None = None
    keys: tuple[CelExpression, ...] = ()


@dataclass(frozen=True, kw_only=True)
class PreEnqueueRule(Rule):
    pass


@dataclass(frozen=True, kw_only=True)
class PreFilterRule(Rule):
    retry_after: CelExpression | None = None
    unresolvable: bool = False
    node_names: CelExpression | None = None


@dataclass(frozen=True, kw_only=True)
class FilterRule(Rule):
    """Exactly one of ``expression`` (the node passes when true) and ``reasons`` (the
    node's reasons to fail, a list of strings: it passes when empty) is set.
    ``unresolvable_expression``, evaluated on a node the rule rejects, overrides
    ``unresolvable``."""

    reason: str = ""  # defaults applied: reason, else message, else a generic reason
    unresolvable: bool = False  # a failing node is UnschedulableAndUnresolvable
    reasons: CelExpression | None = None
    unresolvable_expression: CelExpression | None = None

    @property
    def verdict(self) -> CelExpression:
        """The expression that decides whether a node passes: ``expression`` or
        ``reasons``."""
        found = self.expression or self.reasons
        assert found is not None
        return found

    @property
    def static_rejection(self) -> bool:
        """Whether every node the rule rejects gets the same status (its ``reason`` and
        ``unresolvable``): no reason or unresolvability computed per node."""
        return self.reasons is None and self.message_expression is None \
            and self.unresolvable_expression is None


@dataclass(frozen=True, kw_only=True)
class PostFilterRule(Rule):
    """With ``victims``: part of preemption. Without: a rule that makes no room and only
    reports its message when its expression is false. ``unresolvable``: that message alone
    ends postFilter (framework/post_filter.py)."""

    victims: CelExpression | None = None
    unresolvable: bool = False


@dataclass(frozen=True, kw_only=True)
class PreScoreRule(Rule):
    pass


@dataclass(frozen=True, kw_only=True)
class ScoreRule(Rule):
    weight: int = 1
    normalize: Normalization = Normalization.NONE


@dataclass(frozen=True, kw_only=True)
class ReserveRule(Rule):
    """``counter``/``amount``/``limit`` are set together (``amount`` None means 1).
    ``volume_bindings`` (a ``policysched.VolumeBindings``) is assumed in the cache."""

    counter: CelExpression | None = None
    amount: CelExpression | None = None
    limit: CelExpression | None = None
    volume_bindings: CelExpression | None = None


@dataclass(frozen=True, kw_only=True)
class UnreserveRule(Rule):
    pass


@dataclass(frozen=True, kw_only=True)
class PermitRule(Rule):
    """``group`` and ``min_member`` are set together (a gang rule). ``timeout_seconds`` is
    a number, or an expression evaluated when the rule makes a pod wait."""

    on_false: PermitOnFalse = PermitOnFalse.DENY
    timeout_seconds: int | CelExpression = DEFAULT_PERMIT_TIMEOUT
    group: CelExpression | None = None
    min_member: CelExpression | None = None


@dataclass(frozen=True, kw_only=True)
class PreBindRule(Rule):
    """``volume_binding_timeout_seconds``: the volume bindings reserve assumed are written
    with the bind, which waits at most that long for them to complete."""

    labels: Mapping[str, CelExpression] = field(default_factory=dict)
    annotations: Mapping[str, CelExpression] = field(default_factory=dict)
    volume_binding_timeout_seconds: CelExpression | None = None


@dataclass(frozen=True, kw_only=True)
class BindRule(Rule):
    target: CelExpression | None = None  # None: the chosen node


@dataclass(frozen=True, kw_only=True)
class PostBindRule(Rule):
    pass


RULE_TYPES: Mapping[ExtensionPoint, type[Rule]] = {
    ExtensionPoint.QUEUE_SORT: QueueSortRule,
    ExtensionPoint.PRE_ENQUEUE: PreEnqueueRule,
    ExtensionPoint.PRE_FILTER: PreFilterRule,
    ExtensionPoint.FILTER: FilterRule,
    ExtensionPoint.POST_FILTER: PostFilterRule,
    ExtensionPoint.PRE_SCORE: PreScoreRule,
    ExtensionPoint.SCORE: ScoreRule,
    ExtensionPoint.RESERVE: ReserveRule,
    ExtensionPoint.UNRESERVE: UnreserveRule,
    ExtensionPoint.PERMIT: PermitRule,
    ExtensionPoint.PRE_BIND: PreBindRule,
    ExtensionPoint.BIND: BindRule,
    ExtensionPoint.POST_BIND: PostBindRule,
}


@dataclass(frozen=True, kw_only=True)
class Variable:
    """``variables.<name>``: computed at most once per pod and scheduling cycle."""

    name: str
    expression: CelExpression


@dataclass(frozen=True, kw_only=True)
class Aggregate:
    """``aggregates.<name>`` (docs/architecture.md#aggregates): pods on nodes counted per
    topology domain, computed at most once per pod and scheduling cycle.

    Either ``pods`` (the pods the pod being scheduled selects: a PodAffinityTerm, or a
    list of them that must all select a counted pod) grouped by the node label
    ``group_by``, over the nodes ``node_affinity`` / ``node_taints`` / ``node_labels``
    admit; or ``terms_of`` (the counted pods' own PodAffinityTerms, or weighted ones, that
    select the pod being scheduled, each in the domain of its topologyKey). ``for_each``
    makes one aggregate per element (``item``)."""

    name: str
    position: Position
    for_each: CelExpression | None = None
    pods: CelExpression | None = None
    group_by: CelExpression | None = None
    skip_terminating: bool = False
    node_affinity: CelExpression | None = None
    node_taints: CelExpression | None = None
    node_labels: CelExpression | None = None
    terms_of: CelExpression | None = None


@dataclass(frozen=True, kw_only=True)
class Policy:
    """A compiled SchedulingPolicy. ``source`` is the file (or ``namespace/name[key]``) it
    came from, ``origin`` the ConfigMap key when it was embedded in one."""

    name: str
    source: str
    position: Position
    origin: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    plugin_name: str = ""  # spec.pluginName ("" for none: see ``plugin``)
    enforcement: Enforcement = Enforcement.ENFORCE  # spec.enforcement: its rules' default
    match: CelExpression | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    variables: tuple[Variable, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    rules: Mapping[ExtensionPoint, tuple[Rule, ...]] = field(default_factory=dict)
    document: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def rules_for(self, point: ExtensionPoint) -> tuple[Rule, ...]:
        return self.rules.get(point, ())

    @property
    def plugin(self) -> str:
        """The policy's name in the framework's texts that name plugins (kube-scheduler's
        ``node(s) didn't satisfy plugin(s) [NodeAffinity]``): ``spec.pluginName``, else
        ``metadata.name``."""
        return self.plugin_name or self.name

    @cached_property
    def variable_expressions(self) -> Mapping[str, CelExpression]:
        """The variables' expressions by name."""
        return {v.name: v.expression for v in self.variables}

    @cached_property
    def aggregates_by_name(self) -> Mapping[str, Aggregate]:
        return {a.name: a for a in self.aggregates}

    @cached_property
    def audited_rules(self) -> tuple[Rule, ...]:
        """The rules in audit mode, in framework order."""
        return tuple(r for p in ExtensionPoint for r in self.rules.get(p, ()) if r.audited)

    def without_audited(self) -> Policy:
        """This policy with its enforced rules only (itself when none is audited)."""
        if not self.audited_rules:
            return self
        rules = {p: tuple(r for r in rules if not r.audited) for p, rules in self.rules.items()}
        return replace(self, rules={p: r for p, r in rules.items() if r})

    def with_only(self, rule: Rule) -> Policy:
        """This policy with ``rule``, enforced, as its only rule: how an audited rule is
        run alone, to see what it would decide."""
        enforced = replace(rule, enforcement=Enforcement.ENFORCE)
        return replace(self, rules={rule.point: (enforced,)})

    @property
    def points(self) -> tuple[ExtensionPoint, ...]:
        """The extension points this policy has rules for, in framework order."""
        return tuple(p for p in ExtensionPoint if self.rules.get(p))
