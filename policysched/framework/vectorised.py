"""Filters and scores over all nodes at once: evaluation tiers 2 to 4
(docs/architecture.md#evaluation-tiers).

Every node-level rule is split once (``cel.partial``): pod-side parts are evaluated once per
pod, node-side parts are columns of the ``NodeTable`` (kept per node version), and the
remainder runs over those columns (``cel.vector``). Nodes the columns cannot decide are
evaluated by the rule's scalar closure, so each node's outcome is exactly the scalar tier's.

Equivalence (tier 4): a rule's per-node results are kept with the values of the pod-side
parts they were computed from. The next pod whose parts have the same values (a pod of the
same template) reuses them, and only the nodes whose generation changed since (the node the
previous pod went to) are evaluated again. When every part read depends on nothing but the
pod's template (its spec, labels, ... but not its name, uid, creation time, status, nor the
cluster-wide lists or ``now``), a pod with the same template skips even evaluating them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cache.cache import Snapshot
from ..cache.node_info import NodeInfo
from ..cache.node_table import NodeTable
from ..cel import CelError, ast
from ..cel.compiler import compile_tree
from ..cel.partial import NODE_PART, POD_PART, SHARED, free_names, shape, split
from ..cel.values import detached
from ..cel.vector import (
    Column,
    Evaluation,
    FactorisedColumn,
    NumericColumn,
    Remainder,
    Scalar,
    Value,
    freeze,
)
from ..policy.model import ExtensionPoint, FilterRule, Normalization, Rule, ScoreRule
from . import messages
from .evaluator import NO_ROWS, Feasible, Nominated, with_pods
from .runtime import (
    HUGE,
    MAX_NODE_SCORE,
    SHRINK,
    SUCCESS,
    CycleState,
    Framework,
    PolicyInstance,
    filter_rejection,
    filter_rule_status,
    score_not_finite,
    score_out_of_range,
    score_value,
)
from .runtime import normalise as runtime_normalise
from .status import Code, Status

NODE_ROOTS = frozenset({"node", "nodePods"})
# the fields of the ``node`` view that come from the Node object alone (not from its pods)
NODE_OBJECT_FIELDS = frozenset({"name", "labels", "annotations", "taints", "unschedulable",
                                "allocatable", "images", "metadata", "spec", "status"})
# what differs between two pods of one template (the rest of the pod view is the template)
POD_IDENTITY = frozenset({"name", "uid", "creationTimestamp", "metadata", "status"})
# what changes between two scheduling cycles without the pod changing
CYCLE_INPUTS = frozenset({"now", "pods", "nodes", "podsWithAffinity", "workloadSelector",
                          "podGroupPods", "podVolumes", "volumeBinder", "aggregates"})
POLICY_OWN = frozenset({"params", "variables"})  # what differs between two policies
PASS, FAIL, OTHER = 1, 0, 2  # a filter rule's outcome on a node; OTHER: see ``statuses``

Evaluator = Callable[[Mapping[str, Any]], Any]
log = logging.getLogger(__name__)


@dataclass
class _Plan:
    """One rule of one policy instance, split, with its equivalence cache."""

    instance: PolicyInstance
    rule: Rule
    remainder: Remainder
    pod_parts: tuple[tuple[Hashable, Evaluator], ...]
    node_parts: tuple[tuple[Hashable, Evaluator], ...]
    template_only: tuple[bool, ...]  # per pod part: reads only the pod's template
    views: frozenset[int]  # the node parts that are ``node`` itself (one value per row)
    rejection: Status | None = None
    # per node part: its NodeTable column (key, row function, one value per row, read
    # from the Node object alone, from the node view alone)
    columns: tuple[tuple[Hashable, Callable[[NodeInfo], Any], bool, bool, bool], ...] = ()
    # the equivalence cache: pod-side parts read (index, frozen value), in order ...
    used: list[tuple[int, Any]] = field(default_factory=list)
    index: Any = None  # ... the snapshot row index (None: not yet evaluated) and table
    # epoch of the results ...
    epoch: int = -1
    constant: bool = False  # ... which did not depend on the nodes
    template: Any = None  # the pod template, when the parts read depended only on it
    parts: dict[int, Any] = field(default_factory=dict)  # values of the parts read
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    statuses: dict[int, Status] = field(default_factory=dict)
    # the node parts the results were computed from, and the rows the rule's closure
    # decided (from the whole node, not the parts)
    read: set[int] = field(default_factory=set)
    scalar_rows: set[int] = field(default_factory=set)
    fell_back: bool = False  # the columns failed once (logged once)
    # a score rule's weighted score on every row (None: to compute), valid when every
    # row's normalised score is in range; kept in step with ``values`` through the rows
    # evaluated since (``patched``; None: all of them)
    weighted: np.ndarray | None = None
    patched: list[int] | None = None


def _plan(instance: PolicyInstance, rule: Rule) -> _Plan:
    expression = rule.verdict if isinstance(rule, FilterRule) else rule.expression
    assert expression is not None
    program = expression.program
    env = program.env
    assert env is not None
    roots = {name.split(".", 1)[0] for name in env.variables}
    parts = split(program.tree, roots, NODE_ROOTS)
    pod_parts = []
    variables = {v.name: v.expression.program.tree for v in instance.policy.variables
                 if v.expression is not None}
    template_only = tuple(_template_only(p, variables, {}) for p in parts.pod_parts)
    for part in parts.pod_parts:
        # the same expression in two rules is evaluated once per pod
        owner = id(instance) if free_names(part) & POLICY_OWN else None
        pod_parts.append(((shape(part), owner), compile_tree(part, env, program.types)))
    node_parts = []
    for part in parts.node_parts:
        # a node-side part that does not read params is the same column in every policy
        owner = id(instance.params) if free_names(part) & SHARED else None
        node_parts.append(((shape(part), owner), compile_tree(part, env, program.types)))
    rejection = filter_rejection(rule) if isinstance(rule, FilterRule) \
        and rule.static_rejection else None
    views = frozenset(k for k, part in enumerate(parts.node_parts)
                      if isinstance(part, ast.Ident) and part.name == "node")
    columns = tuple((key, _row_function(compute, instance.params), k in views,
                     _reads_node_fields(part, NODE_OBJECT_FIELDS), _reads_node_fields(part))
                    for k, ((key, compute), part) in enumerate(
                        zip(node_parts, parts.node_parts, strict=True)))
    return _Plan(instance, rule, Remainder(parts.remainder, env, program.types),
                 tuple(pod_parts), tuple(node_parts), template_only, views, rejection,
                 columns)


def _row_function(compute: Evaluator, params: Any) -> Callable[[NodeInfo], Any]:
    """A node part's value on one node."""
    return lambda n: compute({"node": n.view, "nodePods": n.pod_views, "params": params})


def _reads_node_fields(tree: ast.Node, fields: frozenset[str] | None = None) -> bool:
    """Whether a node part reads only fields of ``node`` (those in ``fields``; None: any):
    never ``nodePods`` nor ``node`` as a whole. With ``NODE_OBJECT_FIELDS`` (not what its
    pods change: ``requested``, ``free`` ...), its value changes only when the Node object
    does; with any field, only when the view does."""
    if isinstance(tree, ast.Select) and isinstance(tree.operand, ast.Ident) \
            and tree.operand.name == "node":
        return fields is None or tree.field in fields
    if isinstance(tree, ast.Ident):
        return tree.name.split(".", 1)[0] not in NODE_ROOTS
    if isinstance(tree, ast.Macro) and NODE_ROOTS & {tree.var, tree.var2}:
        return False  # binds the name itself: not followed
    return all(_reads_node_fields(child, fields) for child in ast.children(tree))


def _template_only(tree: ast.Node, variables: Mapping[str, ast.Node],
                   known: dict[str, bool]) -> bool:
    """Whether ``tree`` reads the pod only through fields of its template, and no
    cycle input (``now``, cluster-wide lists); ``variables`` are followed."""
    if free_names(tree) & CYCLE_INPUTS:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Select) and isinstance(node.operand, ast.Ident):
            head = node.operand.name
            if head == "pod" and node.field in POD_IDENTITY:
                return False
            if head == "variables":
                if node.field not in known:
                    known[node.field] = False  # a cycle: not provable
                    expression = variables.get(node.field)
                    known[node.field] = expression is not None and _template_only(
                        expression, variables, known)
                if not known[node.field]:
                    return False
        elif isinstance(node, ast.Ident) and node.name in ("pod", "variables") \
                and not _selected(tree, node):
            return False
    return True


def _selected(tree: ast.Node, ident: ast.Ident) -> bool:
    """Whether ``ident`` is the operand of a field selection in ``tree``."""
    return any(isinstance(n, ast.Select) and n.operand is ident for n in ast.walk(tree))


def template_of(state: CycleState) -> Any:
    """The pod's template, frozen: its view without ``POD_IDENTITY`` (once per cycle)."""
    found = state.template
    if found is None:
        found = state.template = freeze(
            [(k, v) for k, v in state.pod.view.items() if k not in POD_IDENTITY])
    return found


class NodeEvaluator:
    """The vectorised filter and score of one scheduler (all its profiles): an
    ``evaluator.Evaluator``."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self._plans: dict[tuple[int, int], _Plan] = {}

    def reset(self) -> None:
        """The profiles changed: forget the plans (the scheduler clears the table)."""
        self._plans.clear()

    def _plan_for(self, instance: PolicyInstance, rule: Rule) -> _Plan:
        key = (id(instance), id(rule))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = _plan(instance, rule)
        return plan

    # -- filter -------------------------------------------------------------------------

    def filter(self, fwk: Framework, state: CycleState, snapshot: Snapshot
               ) -> tuple[np.ndarray, np.ndarray, Callable[[int], Status]]:
        """Per node (snapshot order): the index of the first filter rule that does not
        pass (-1: all pass) and whether that is an Error; and a function giving a node's
        status by row."""
        self.table.refresh(snapshot)
        size = self.table.size
        first = np.full(size, -1, np.int64)
        plans: list[_Plan] = []
        for instance, rule in fwk.rules(ExtensionPoint.FILTER):
            if not fwk.matches(state, instance):
                continue
            plan = self._plan_for(instance, rule)
            self._update(plan, state, snapshot, filter_rows=True)
            plans.append(plan)
        # the first rule not passing: written last to first, the first one stays
        for k in range(len(plans) - 1, -1, -1):
            plan = plans[k]
            if not (plan.constant and plan.values[0] == PASS):
                first[plan.values != PASS] = k

        errors = np.zeros(size, bool)
        for k, plan in enumerate(plans):
            for row, found in plan.statuses.items():
                if first[row] == k and found.code is Code.ERROR:
                    errors[row] = True

        def status(row: int) -> Status:
            k = int(first[row])
            if k < 0:
                return SUCCESS
            plan = plans[k]
            if plan.values[row] == FAIL:
                if plan.rejection is not None:
                    return plan.rejection
                assert isinstance(plan.rule, FilterRule)  # its status depends on the node
                return filter_rule_status(plan.rule, fwk.node_activation(
                    state, plan.instance, snapshot.nodes[row]))
            return plan.statuses[row]

        return first, errors, status

    def find_feasible(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
                      order: np.ndarray, wanted: int, nominated: Nominated,
                      statuses: dict[str, Status]) -> Feasible:
        """``Evaluator.find_feasible`` with every node filtered at once: the same nodes in
        the same order as the scalar tier's search (the first ``wanted`` feasible)."""
        first, errors, status_of = self.filter(fwk, state, snapshot)
        # room promised to preemptors counts as taken: a node failing with its nominated
        # pods fails (``filter_with_nominated``); passing, the pass without them decides
        overrides: dict[int, Status] = {}
        if nominated:
            plan = fwk.filter_plan(state)
            for name, others in nominated.items():
                node = snapshot.node(name)
                if node is not None:
                    status = fwk.run_filter(state, with_pods(node, others, snapshot), plan=plan)
                    if not status.is_success:
                        overrides[snapshot.index[name]] = status
        ok, failed = first[order] < 0, errors[order]
        for row, status in overrides.items():
            ok[order == row] = status.is_success
            failed[order == row] = status.code is Code.ERROR
        positions = np.flatnonzero(ok)
        processed = int(positions[wanted - 1]) + 1 if len(positions) >= wanted \
            else len(order)
        failures = np.flatnonzero(failed[:processed])
        if len(failures):
            row = int(order[failures[0]])
            return Feasible(NO_ROWS, processed, overrides.get(row) or status_of(row))
        if not len(positions):
            for row in order.tolist():
                statuses[snapshot.nodes[row].name] = overrides.get(row) or status_of(row)
        return Feasible(order[positions[:wanted]], processed)

    # -- score ----------------------------------------------------------------------------

    def score(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
              rows: np.ndarray) -> tuple[Status, np.ndarray, dict[str, np.ndarray]]:
        """Total weighted score of the nodes ``rows`` (in that order), and each policy's
        part of it, as ``run_score``."""
        self.table.refresh(snapshot)
        totals = np.zeros(len(rows), np.int64)
        parts: dict[str, np.ndarray] = {}
        for instance, rule in fwk.rules(ExtensionPoint.SCORE):
            if not fwk.matches(state, instance) or instance.name in state.skipped_scoring:
                continue
            assert isinstance(rule, ScoreRule)
            plan = self._plan_for(instance, rule)
            self._update(plan, state, snapshot, filter_rows=False)
            factor = rule.weight * instance.weight
            weighted = _weighted(plan, rule.normalize, factor)
            if weighted is not None:  # the score of every row is known and valid
                weighted = weighted[rows]
                totals += weighted
                parts[instance.name] = parts.get(instance.name, 0) + weighted
                continue
            if plan.statuses:
                for row in rows.tolist():
                    found = plan.statuses.get(row)
                    if found is not None:
                        return found, totals, parts
            raw = plan.values[rows]
            finite = np.isfinite(raw)
            if not finite.all():
                i = int(np.flatnonzero(~finite)[0])
                return score_not_finite(rule, snapshot.nodes[int(rows[i])].name,
                                        float(raw[i])), totals, parts
            scores = _normalise(raw, rule.normalize)
            inside = (scores >= 0) & (scores <= MAX_NODE_SCORE)
            if not inside.all():
                i = int(np.flatnonzero(~inside)[0])
                return score_out_of_range(rule, snapshot.nodes[int(rows[i])].name,
                                          float(scores[i])), totals, parts
            weighted = np.trunc(scores).astype(np.int64) * factor
            totals += weighted
            parts[instance.name] = parts.get(instance.name, 0) + weighted
        return SUCCESS, totals, parts

    # -- one rule -----------------------------------------------------------------------

    def _update(self, plan: _Plan, state: CycleState, snapshot: Snapshot,
                filter_rows: bool) -> None:
        """``_evaluate``; should the columns fail in a way the scalar tier has no
        counterpart for (an exception that is no CEL error), the rule's closure evaluates
        every node, with the scalar tier's exact statuses, and the equivalence cache starts
        over."""
        try:
            self._evaluate(plan, state, snapshot, filter_rows)
        except Exception:  # isolation: one rule, one pod
            if not plan.fell_back:
                log.warning(messages.LOG_VECTORISED_FALLBACK, plan.rule.qualified_name,
                            exc_info=True)
                plan.fell_back = True
            size = self.table.size
            plan.values = np.zeros(size, np.int8 if filter_rows else np.float64)
            plan.statuses, plan.index, plan.constant = {}, None, False
            plan.scalar_rows, plan.patched = set(), None
            self._scalar_rows(plan, state, snapshot, list(range(size)), filter_rows)

    def _evaluate(self, plan: _Plan, state: CycleState, snapshot: Snapshot,
                  filter_rows: bool) -> None:
        """Bring ``plan.values`` (and ``plan.statuses``) up to date for this pod."""
        memo = state.parts  # (value or CelError, frozen value) by part, for this pod

        def known(k: int) -> tuple[Any, Any]:
            key, compute = plan.pod_parts[k]
            found = memo.get(key)
            if found is None:
                try:
                    value = compute(state.base(plan.instance))
                except CelError as e:  # raised again where it is read
                    value = detached(e)
                except Exception as e:  # (an engine defect)
                    value = e
                found = memo[key] = (value, freeze(value))
            return found

        table = self.table
        template = template_of(state)
        if plan.index is snapshot.index and (
                (plan.template is not None and plan.template == template)
                or all(known(k)[1] == frozen for k, frozen in plan.used)):
            if not plan.constant:
                # results read from Node objects alone hold while those are unchanged
                # (a bind changes a node's pods only)
                stale = table.changed_since(plan.epoch, objects_only=not plan.scalar_rows
                                            and all(plan.columns[k][3] for k in plan.read))
                if stale is None:
                    stale = np.arange(table.size)
                elif len(stale):
                    stale = self._affected(plan, stale)
                if len(stale):
                    self._run(plan, state, snapshot, known, stale, filter_rows)
            plan.epoch = table.epoch
            return
        plan.used, plan.parts, plan.statuses = [], {}, {}
        plan.read, plan.scalar_rows = set(), set()
        plan.template = template
        self._run(plan, state, snapshot, known, None, filter_rows)
        plan.index, plan.epoch = snapshot.index, table.epoch

    def _affected(self, plan: _Plan, stale: np.ndarray) -> np.ndarray:
        """Of the ``stale`` rows (nodes changed since the plan's results), those whose
        result may differ: the remainder's result on a row depends only on the pod-side
        parts (equal, or the plan would start over) and the row's values of the node
        parts it read, so a row where none of those changed keeps its result — unless the
        rule's closure decided it (from the whole node)."""
        if plan.read & plan.views:  # the node views themselves: new on every change
            return stale
        epoch, scalar_rows = plan.epoch, plan.scalar_rows
        modified = [self.table.modified(*plan.columns[k]) for k in plan.read]
        if len(stale) > 16:
            keep = np.ones(len(stale), bool)
            for m in modified:
                keep &= m[stale] <= epoch
            if scalar_rows:
                keep &= ~np.isin(stale, np.fromiter(scalar_rows, np.int64, len(scalar_rows)))
            return stale[~keep]
        # a bind changes one node: plain Python beats NumPy's per-call cost
        return np.array([row for row in stale.tolist() if row in scalar_rows
                         or any(m[row] > epoch for m in modified)], np.int64)

    def _run(self, plan: _Plan, state: CycleState, snapshot: Snapshot,
             known: Callable[[int], tuple[Any, Any]], rows: np.ndarray | None,
             filter_rows: bool) -> None:
        """Evaluate the remainder into ``plan.values``: over every node with columns
        (``rows`` None), or on a few ``rows`` with its closure. Pod-side parts the plan
        already read keep their values (they are equal for this pod); new ones are
        recorded (and end the template shortcut unless they read only the template)."""
        table = self.table
        columns: dict[int, list[Any]] = {}

        def pod_part(k: int) -> Any:
            value = plan.parts.get(k, _UNSET)
            if value is _UNSET:
                value, frozen = known(k)
                plan.parts[k] = value
                plan.used.append((k, frozen))
                if not plan.template_only[k]:
                    plan.template = None
            elif not plan.template_only[k]:
                # equal to this pod's (or the plan would have started over), but this
                # cycle's own: an aggregate answers only for its cycle's nodes
                value = plan.parts[k] = known(k)[0]
            if isinstance(value, Exception):
                raise detached(value) if isinstance(value, CelError) else value
            return value

        def node_part(k: int) -> Column:
            column, values = table.column(*plan.columns[k])
            columns[k] = values
            plan.read.add(k)
            return column

        reasons = isinstance(plan.rule, FilterRule) and plan.rule.reasons is not None
        if rows is None:
            result = Evaluation(plan.remainder, table.size, pod_part, node_part).run()
            plan.values, undecided = _values(result, table.size, filter_rows, reasons)
            plan.constant = isinstance(result, Scalar) and not len(undecided)
            plan.patched = None
            rows = undecided
        else:
            listed = rows.tolist()
            for row in listed:
                plan.statuses.pop(row, None)
                plan.scalar_rows.discard(row)
            if not filter_rows and plan.patched is not None:
                plan.patched += listed
                if len(plan.patched) > table.size:  # not scored for long: start over
                    plan.patched = None
        if not len(rows):
            return
        remainder = plan.remainder.closure(plan.remainder.tree, frozenset())
        undecided_rows: list[int] = []
        for row in rows.tolist():
            act = _RowParts(pod_part, node_part, columns, row)
            try:
                value = remainder(act)
            except Exception:  # the rule's closure decides this node
                value = None
            verdict = _verdict(value, reasons) if filter_rows else None
            if verdict is not None:
                plan.values[row] = verdict
            elif not filter_rows and type(value) in (int, float):
                plan.values[row] = float(value)
            else:
                undecided_rows.append(row)
        self._scalar_rows(plan, state, snapshot, undecided_rows, filter_rows)

    def _scalar_rows(self, plan: _Plan, state: CycleState, snapshot: Snapshot,
                     rows: list[int], filter_rows: bool) -> None:
        """Evaluate the rule with its own closure on ``rows`` (what the remainder could
        not decide: errors, results of the wrong type, with the rule's exact status)."""
        if not rows:
            return
        act = dict(state.base(plan.instance))
        rule = plan.rule
        plan.scalar_rows.update(rows)
        for row in rows:
            node: NodeInfo = snapshot.nodes[row]
            act["node"] = node.view
            act["nodePods"] = node.pod_views
            if filter_rows:
                assert isinstance(rule, FilterRule)
                status = filter_rule_status(rule, act)
                if status is SUCCESS:
                    plan.values[row] = PASS
                elif plan.rejection is not None and status == plan.rejection:
                    plan.values[row] = FAIL
                else:
                    plan.values[row] = OTHER
                    plan.statuses[row] = status
            else:
                assert isinstance(rule, ScoreRule)
                value = score_value(rule, act)
                if isinstance(value, Status):
                    plan.values[row] = 0.0
                    plan.statuses[row] = value
                else:
                    plan.values[row] = value


_UNSET = object()


class _RowParts(dict[str, Any]):
    """The remainder's activation on one node: ``@pK`` and ``@nK`` read on first use
    (a part's error raises where it is read, as the part itself would)."""

    def __init__(self, pod_part: Callable[[int], Any], node_part: Callable[[int], Any],
                 columns: dict[int, list[Any]], row: int) -> None:
        super().__init__()
        self._pod_part, self._node_part = pod_part, node_part
        self._columns, self._row = columns, row

    def __missing__(self, name: str) -> Any:
        if name.startswith(POD_PART):
            value = self._pod_part(int(name[len(POD_PART):]))
        elif name.startswith(NODE_PART):
            k = int(name[len(NODE_PART):])
            if k not in self._columns:
                self._node_part(k)
            value = self._columns[k][self._row]
            if type(value) is CelError:
                raise detached(value)
        else:
            raise KeyError(name)
        self[name] = value
        return value


def _verdict(value: Any, reasons: bool) -> int | None:
    """A filter rule's outcome for its value on a node: a bool for an ``expression``, a
    list of strings for ``reasons`` (passing when empty); None for any other value (the
    rule's closure then gives that node its exact status)."""
    kind = type(value)
    if not reasons:
        return (PASS if value else FAIL) if kind is bool else None
    if kind is list and all(type(r) is str for r in value):
        return FAIL if value else PASS
    return None


def _values(result: Value, size: int, filter_rows: bool, reasons: bool = False
            ) -> tuple[np.ndarray, np.ndarray]:
    """The per-node outcomes of a rule's vectorised result (``reasons``: a filter rule's
    list of reasons), and the rows it did not decide (errors, values of the wrong type)."""
    if filter_rows:
        values = np.zeros(size, np.int8)
        if isinstance(result, Scalar):
            verdict = _verdict(result.value, reasons) if result.error is None else None
            if verdict is not None:
                values[:] = verdict
                return values, np.zeros(0, np.int64)
            return values, np.arange(size)
        if not reasons and isinstance(result, NumericColumn) \
                and result.data.dtype == np.bool_:
            values[result.data] = PASS
            undecided = result.err
        elif reasons and isinstance(result, FactorisedColumn):
            verdicts = [_verdict(u, reasons) for u in result.uniques]
            table = np.array([OTHER if v is None else v for v in verdicts], np.int8)
            values[:] = table[result.codes]
            other = values == OTHER
            values[other] = FAIL
            return values, np.flatnonzero(other if result.err is None else other | result.err)
        else:
            return values, np.arange(size)
    else:
        values = np.zeros(size, np.float64)
        if isinstance(result, Scalar):
            kind = type(result.value)
            if result.error is None and kind in (int, float):
                values[:] = float(result.value)
                return values, np.zeros(0, np.int64)
            return values, np.arange(size)
        if isinstance(result, NumericColumn) and result.data.dtype != np.bool_:
            values[:] = result.data
            undecided = result.err
        else:
            return values, np.arange(size)
    if undecided is None:
        return values, np.zeros(0, np.int64)
    return values, np.flatnonzero(undecided)


def _weighted(plan: _Plan, how: Normalization, factor: int) -> np.ndarray | None:
    """The weighted score of a score rule on every row, brought up to date with its values
    (only the rows evaluated since, when it was known); None when some row has no valid
    score (an error, a value out of range) or the normalisation depends on the rows
    scored: the caller then scores the rows it has, reporting the first such row. A rule
    with one value on every row normalises it alike on whatever rows are scored."""
    if plan.statuses or not (how is Normalization.NONE or plan.constant):
        return None
    patched = plan.patched
    if plan.weighted is None or patched is None or not len(plan.weighted) \
            or (patched and how is not Normalization.NONE):  # normalised anew
        plan.weighted, plan.patched = None, []
        values = plan.values
        scores = values if how is Normalization.NONE else np.full(
            len(values), _normalise(values[:1], how)[0] if len(values) else 0.0)
        if not (np.isfinite(scores).all() and ((scores >= 0) & (scores <= MAX_NODE_SCORE)).all()):
            plan.patched = None
            return None
        plan.weighted = np.trunc(scores).astype(np.int64) * factor
        return plan.weighted
    if patched:
        weighted = plan.weighted
        for row, value in zip(patched, plan.values[patched].tolist(), strict=True):
            if not 0 <= value <= MAX_NODE_SCORE:  # NaN too
                plan.weighted, plan.patched = None, None
                return None
            weighted[row] = int(value) * factor
        plan.patched = []
    return plan.weighted


def _normalise(raw: np.ndarray, how: Normalization) -> np.ndarray:
    """``runtime.normalise`` on arrays (the same float operations, so the same results)."""
    if how is Normalization.NONE or not len(raw):
        return raw
    if how is Normalization.INVERSE:  # few nodes score: the scalar arithmetic, exactly
        return np.array(runtime_normalise(raw.tolist(), how), np.float64)
    high, low = float(raw.max()), float(raw.min())
    if max(high, -low) > HUGE:
        raw = raw * SHRINK
        high, low = high * SHRINK, low * SHRINK
    with np.errstate(over="ignore"):  # ±Inf: far out of 0..100, as in the scalar tier
        if how is Normalization.MAX:
            return np.trunc(raw * MAX_NODE_SCORE / high) if high else np.zeros(len(raw))
        if how is Normalization.REVERSE:
            if not high:
                return np.full(len(raw), float(MAX_NODE_SCORE))
            return MAX_NODE_SCORE - np.trunc(raw * MAX_NODE_SCORE / high)
    span = high - low
    return (raw - low) * MAX_NODE_SCORE / span if span else np.zeros(len(raw))


