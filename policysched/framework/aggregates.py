"""Aggregates: pods counted per topology domain (docs/architecture.md#aggregates).

A policy's ``spec.aggregates`` (``policy.model.Aggregate``) are computed at most once per
pod and scheduling cycle, when a rule first reads ``aggregates.<name>``. Nothing is
re-scanned per cycle: every per-node quantity is a column of the ``NodeTable``, which
recomputes only the rows of the nodes that changed since it was last read (a bind changes
one node), and a column is shared by every pod asking the same question (the same selector
and namespaces). Per pod, the counts are then summed per domain with array operations.

Kube-scheduler's PreFilterExtensions (AddPod / RemovePod) are what-if nodes here: a filter
evaluated on a copy of a node with pods added (nominated pods) or removed (preemption's
victims) sees the counts of that copy (``ClusterView.what_if``).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cache.cache import Snapshot, has_pod_affinity
from ..cache.node_info import NodeInfo
from ..cache.node_table import NodeTable
from ..cel import CelError, ast
from ..cel.values import detached, register_identity
from ..cel.vector import FactorisedColumn, NumericColumn
from ..model.objects import PodInfo
from ..model.selectors import (
    PodAffinityTerm,
    SelectorError,
    pod_affinity_term,
    required_node_affinity,
    untolerated_taint,
)
from ..policy.model import Aggregate, CelExpression
from . import messages

HARD_EFFECTS = ("NoSchedule", "NoExecute")
HOSTNAME = "kubernetes.io/hostname"
POD_AFFINITY_FIELDS = frozenset({"podAffinity", "podAntiAffinity"})  # of a pod's affinity
_SERIALS = itertools.count()


@functools.lru_cache(maxsize=4)
def _no_counts(size: int) -> np.ndarray:
    """A zero on each of ``size`` rows, shared (read-only): what an aggregate counting
    nothing anywhere holds, without allocating and scanning two arrays per pod."""
    zeros = np.zeros(size, np.int64)
    zeros.flags.writeable = False
    return zeros


@dataclass
class ClusterView:
    """What aggregates read in one scheduling cycle: the snapshot, the node table brought
    up to date with it, and the node being evaluated as a what-if copy, if any."""

    snapshot: Snapshot
    table: NodeTable
    what_if_node: NodeInfo | None = None
    scored: np.ndarray | None = None  # the rows being scored (those that passed the filters)

    def __post_init__(self) -> None:
        self.table.refresh(self.snapshot)

    @contextmanager
    def what_if(self, node: NodeInfo) -> Iterator[None]:
        """Aggregates read while evaluating ``node``, a changed copy of a snapshot node,
        count its pods instead of the snapshot's."""
        previous, self.what_if_node = self.what_if_node, node
        try:
            yield
        finally:
            self.what_if_node = previous

    def label_codes(self, key: str) -> tuple[np.ndarray, list[Any]]:
        """Per row, a code for the node's value of label ``key`` (uniques[code] is the value,
        None for nodes without the label)."""
        column, _ = self.table.column(("label", key), lambda n: n.view["labels"].get(key),
                                      objects_only=True)
        assert isinstance(column, FactorisedColumn)  # strings and None: never numeric
        return column.codes, column.uniques

    def has_label(self, key: str) -> np.ndarray:
        return self.bools(("has label", key), lambda n: key in n.view["labels"],
                          objects_only=True)

    def ints(self, key: Hashable, compute: Callable[[NodeInfo], int]) -> np.ndarray:
        column, values = self.table.column(key, compute)
        if isinstance(column, NumericColumn) and column.err is None \
                and column.data.dtype == np.int64:
            return column.data
        return np.array([v if type(v) is int else 0 for v in values], np.int64)

    def bools(self, key: Hashable, compute: Callable[[NodeInfo], bool],
              objects_only: bool = False) -> np.ndarray:
        column, values = self.table.column(key, compute, objects_only=objects_only)
        if isinstance(column, NumericColumn) and column.data.dtype == np.bool_:
            return column.data
        return np.array([v is True for v in values], bool)


@dataclass(frozen=True)
class WhatIf:
    """An aggregate's values with a what-if copy of one node: the count in that node's
    domain, on the node, the minimum over the domains and the total."""

    count: int
    own: int
    minimum: int
    total: int


@dataclass(eq=False)
class AggregateValue:
    """One aggregate for one pod: per snapshot row, the count in the node's domain
    (``counts``) and on the node (``own``). ``adjust(node, row)`` gives the values with a
    what-if copy of the node of that row. Equal only to itself, and never to a
    later value (tier 4 compares pod-side values; a reused ``id`` must not match)."""

    view: ClusterView
    counts: np.ndarray
    own: np.ndarray
    minimum_count: int
    domain_count: int
    total_count: int
    adjust: Callable[[NodeInfo, int], WhatIf] = field(repr=False)
    scored_domains: Callable[[np.ndarray], int] | None = field(default=None, repr=False)
    serial: int = field(default_factory=lambda: next(_SERIALS))

    def __hash__(self) -> int:
        return self.serial

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AggregateValue) and other.serial == self.serial

    def identity(self) -> Hashable:
        """The tier-4 key (``cel.vector.freeze``): an aggregate that counts nothing
        anywhere reads the same on every node as any other such aggregate over the same
        rows (a pod no existing pod's terms select, in a cluster without them), so its
        results are kept from one pod to the next; any other is only itself."""
        if self.total_count or self.domain_count or self.minimum_count \
                or self.scored_domains is not None:
            return ("serial", self.serial)
        zeros = _no_counts(len(self.counts))  # the arrays of ``_selecting_terms``: not scanned
        if (self.counts is zeros or not self.counts.any()) \
                and (self.own is zeros or not self.own.any()):
            return ("nothing counted", len(self.counts))
        return ("serial", self.serial)

    # -- CEL ------------------------------------------------------------------------------

    def _row(self, node: Mapping[str, Any]) -> int | None:
        row = self.view.snapshot.index.get(node.get("name", ""))
        if row is None or self.view.snapshot.nodes[row].view is not node:
            what_if = self.view.what_if_node
            if what_if is not None and what_if.view is node:
                return row
            raise CelError(messages.AGGREGATE_UNKNOWN_NODE.format(node=node.get("name")))
        return row

    def _what_if(self, node: Mapping[str, Any]) -> WhatIf | None:
        what_if = self.view.what_if_node
        if what_if is None or what_if.name != node.get("name"):
            return None
        row = self.view.snapshot.index.get(what_if.name)
        if row is None:
            return None
        return self.adjust(what_if, row)

    def count(self, node: dict[str, Any]) -> int:
        adjusted = self._what_if(node)
        if adjusted is not None:
            return adjusted.count
        row = self._row(node)
        return 0 if row is None else int(self.counts[row])

    def on_node(self, node: dict[str, Any]) -> int:
        adjusted = self._what_if(node)
        if adjusted is not None:
            return adjusted.own
        row = self._row(node)
        return 0 if row is None else int(self.own[row])

    def _adjusted(self) -> WhatIf | None:
        what_if = self.view.what_if_node
        return None if what_if is None else self._what_if(what_if.view)

    def minimum(self) -> int:
        adjusted = self._adjusted()
        return self.minimum_count if adjusted is None else adjusted.minimum

    def domains(self) -> int:
        return self.domain_count

    def total(self) -> int:
        adjusted = self._adjusted()
        return self.total_count if adjusted is None else adjusted.total

    def domains_scored(self) -> int:
        rows = self.view.scored
        if rows is None or self.scored_domains is None:
            raise CelError(messages.AGGREGATE_NOT_SCORING)
        return self.scored_domains(rows)

    # -- tier 3 -----------------------------------------------------------------------------

    def _aligned(self, size: int, node: Any) -> bool:
        """Whether ``node`` is the ``node`` column of this snapshot (row i: node i)."""
        nodes = self.view.snapshot.nodes
        if self.view.what_if_node is not None or size != len(nodes) or not size \
                or not isinstance(node, FactorisedColumn) or len(node.codes) != size:
            return False
        return all(node.uniques[node.codes[i]] is nodes[i].view for i in (0, size - 1))

    def count_column(self, size: int, node: Any) -> NumericColumn | None:
        return NumericColumn(self.counts, None) if self._aligned(size, node) else None

    def on_node_column(self, size: int, node: Any) -> NumericColumn | None:
        return NumericColumn(self.own, None) if self._aligned(size, node) else None


# -- computing one aggregate ------------------------------------------------------------------

Evaluate = Callable[[Any, Mapping[str, Any]], Any]  # (expression, extra activation) -> value


CountedTerms = Callable[[PodInfo], Mapping[Hashable, tuple[PodAffinityTerm, int]]]


def compute(spec: Aggregate, pod: PodInfo, view: ClusterView, evaluate: Evaluate,
            params: Mapping[str, Any], owner: Hashable
            ) -> AggregateValue | list[AggregateValue]:
    """``aggregates.<name>`` for ``pod``: one value, or one per ``forEach`` item.
    ``evaluate(expression, extra)`` evaluates one of the aggregate's fields with
    ``extra`` (``item``) added to the pod's activation; ``termsOf`` sees ``params``. The
    ``owner`` (the policy instance) keys what is kept for the aggregate between pods."""
    if spec.terms_of is not None:
        terms_of = spec.terms_of
        key = ("termsOf", owner, spec.name)
        return _selecting_terms(pod, view, _counted_terms(terms_of, params), key,
                                view.table.answer(key, lambda: _only_with_affinity(
                                    terms_of, params)))
    if spec.for_each is None:
        return _selected_pods(spec, pod, view, evaluate, {})
    items = evaluate(spec.for_each, {})
    return [_selected_pods(spec, pod, view, evaluate, {"item": item}) for item in items]


def _counted_terms(terms_of: CelExpression, params: Mapping[str, Any]) -> CountedTerms:
    """``termsOf`` of one counted pod: its terms by key, with their summed weights."""

    def terms(pod: PodInfo) -> dict[Hashable, tuple[PodAffinityTerm, int]]:
        found: dict[Hashable, tuple[PodAffinityTerm, int]] = {}
        for item in terms_of.evaluate({"p": pod.view, "params": params}):
            weight, term = 1, item
            if isinstance(item, dict) and "podAffinityTerm" in item:
                term, given = item["podAffinityTerm"], item.get("weight")
                if type(given) is not int:
                    raise CelError(messages.AGGREGATE_WEIGHT.format(value=given))
                weight = given
            try:
                parsed = pod_affinity_term(term, pod.namespace)  # as the API server stored it
            except SelectorError as e:
                raise CelError(str(e)) from None
            before = found.get(parsed.key)
            found[parsed.key] = (parsed, weight + (before[1] if before else 0))
        return found

    return terms


def _only_with_affinity(terms_of: CelExpression, params: Mapping[str, Any]) -> bool:
    """Whether only pods with pod (anti-)affinity can have terms: ``termsOf`` reads the
    pod only through ``p.affinity.podAffinity`` and ``p.affinity.podAntiAffinity``, and
    gives no term when ``p.affinity`` is empty (kube-scheduler's PodsWithAffinity index).
    Then the pods without are never evaluated."""
    nodes = ast.walk(terms_of.program.tree)
    reads = {id(n) for n in nodes if isinstance(n, ast.Ident) and n.name == "p"}
    affinity = {id(n) for n in nodes if isinstance(n, ast.Select)
                and n.field == "affinity" and id(n.operand) in reads}
    through_pod_affinity = {id(n.operand) for n in nodes if isinstance(n, ast.Select)
                            and n.field in POD_AFFINITY_FIELDS and id(n.operand) in affinity}
    if len(affinity) != len(reads) or affinity != through_pod_affinity:
        return False
    try:
        return terms_of.evaluate({"p": {"affinity": {}}, "params": params}) == []
    except CelError:
        return False


def _terms(value: Any, pod: PodInfo) -> tuple[PodAffinityTerm, ...]:
    """``pods``: a term (JSON, as stored, or a ``podAffinityTerm(...)`` value) or a list."""

    def term(item: Any) -> PodAffinityTerm:
        return item if type(item) is PodAffinityTerm else pod_affinity_term(item, pod.namespace)

    try:
        return tuple(map(term, value)) if isinstance(value, list) else (term(value),)
    except SelectorError as e:
        raise CelError(str(e)) from None


def _selected_pods(spec: Aggregate, pod: PodInfo, view: ClusterView, evaluate: Evaluate,
                   extra: Mapping[str, Any]) -> AggregateValue:
    assert spec.pods is not None and spec.group_by is not None
    terms = _terms(evaluate(spec.pods, extra), pod)
    key = evaluate(spec.group_by, extra)
    if type(key) is not str:
        raise CelError(messages.AGGREGATE_GROUP_BY.format(value=key))
    skip_terminating = spec.skip_terminating
    reads_labels = any(t.reads_namespace_labels for t in terms)
    namespace_labels = view.snapshot.namespace_labels  # None: a namespace not known

    def selected(p: PodInfo) -> bool:
        if skip_terminating and p.deleting:
            return False
        labels = namespace_labels(p.namespace) if reads_labels else None
        return all(t.selects(p.view["labels"], p.namespace, labels) for t in terms)

    def on(node: NodeInfo) -> int:
        return sum(1 for p in node.pods.values() if selected(p))

    question: tuple[Hashable, ...] = ("pods", tuple(t.key for t in terms), skip_terminating)
    if reads_labels:  # then the counts change with the namespaces' labels
        question += (view.snapshot.namespace_generation,)
    own = view.ints(question, on)
    codes, uniques = view.label_codes(key)
    labelled = view.has_label(key).copy()
    if spec.node_labels is not None:
        for label in evaluate(spec.node_labels, extra):
            labelled &= view.has_label(str(label))
    eligible = labelled.copy()
    if spec.node_affinity is not None and evaluate(spec.node_affinity, extra) is True:
        eligible &= _affinity_mask(pod, view)
    if spec.node_taints is not None and evaluate(spec.node_taints, extra) is True:
        eligible &= _toleration_mask(pod, view)

    sums = np.bincount(codes[eligible], weights=own[eligible],
                       minlength=len(uniques)).astype(np.int64)
    present = np.zeros(len(uniques), bool)
    present[codes[eligible]] = True
    counts = np.where(present[codes], sums[codes], 0)
    minimum = int(sums[present].min()) if present.any() else 0

    total = int(sums[present].sum())

    def adjust(node: NodeInfo, row: int) -> WhatIf:
        mine = on(node)
        code = int(codes[row])
        if not present[code]:
            return WhatIf(0, mine, minimum, total)
        changed = sums.copy()
        delta = mine - int(own[row]) if eligible[row] else 0
        changed[code] += delta
        return WhatIf(int(changed[code]), mine, int(changed[present].min()), total + delta)

    def scored_domains(rows: np.ndarray) -> int:
        """kube's topology size for scores: the domains of the scored nodes that carry the
        labels (the node inclusion policies aside); for hostnames, those nodes."""
        rows = rows[labelled[rows]]
        return len(rows) if key == HOSTNAME else len(np.unique(codes[rows]))

    return AggregateValue(view, counts, own, minimum, int(present.sum()), total, adjust,
                          scored_domains)


def _affinity_mask(pod: PodInfo, view: ClusterView) -> np.ndarray:
    try:
        affinity = required_node_affinity(pod.view["nodeSelector"], pod.view["affinity"])
    except SelectorError as e:
        raise CelError(str(e)) from None
    return view.bools(("node affinity", affinity.key),
                      lambda n: affinity.matches(n.view["labels"], n.name))


def _toleration_mask(pod: PodInfo, view: ClusterView) -> np.ndarray:
    tolerations = pod.view["tolerations"]
    key = tuple(tuple(sorted(t.items())) for t in tolerations)
    return view.bools(("tolerated taints", key), lambda n: untolerated_taint(
        tolerations, n.view["taints"], HARD_EFFECTS) is None)


def _selecting_terms(pod: PodInfo, view: ClusterView, counted_terms: CountedTerms,
                     key: Hashable, only_with_affinity: bool) -> AggregateValue:
    """``termsOf``: per row, the summed weights of the counted pods' terms that select
    ``pod``, each in the domain of its own topology key (``only_with_affinity``: pods
    without an affinity have none)."""

    known = view.table.per_pod(key)  # a pod's terms: evaluated once, not per node change

    def terms_of(p: PodInfo) -> Mapping[Hashable, tuple[PodAffinityTerm, int]]:
        found = known.get(p)
        if found is None:
            found = known[p] = counted_terms(p)
        return found

    def weights(node: NodeInfo) -> tuple[tuple[Hashable, PodAffinityTerm, int], ...]:
        found: dict[Hashable, tuple[PodAffinityTerm, int]] = {}
        for p in node.pods.values():
            if only_with_affinity and not has_pod_affinity(p.view):
                continue
            for key, (term, weight) in terms_of(p).items():
                before = found.get(key)
                found[key] = (term, weight + (before[1] if before else 0))
        return tuple((k, t, w) for k, (t, w) in found.items())

    labels, namespace = pod.view["labels"], pod.namespace
    # kube reads a namespace it does not know as one without labels for existing pods' terms
    namespace_labels = view.snapshot.namespace_labels(namespace) or {}
    size = view.table.size
    if only_with_affinity and not view.snapshot.affinity_views:
        # no placed pod has any term: nothing is counted on any node but a what-if one

        def adjust_nothing(node: NodeInfo, row: int) -> WhatIf:
            after = _selecting(weights(node), labels, namespace, namespace_labels)
            added = sum(w for k, w in after.items() if k in node.view["labels"])
            return WhatIf(added, added, 0, added)

        return AggregateValue(view, _no_counts(size), _no_counts(size), 0, 0, 0,
                              adjust_nothing)
    column, values = view.table.column(key, weights)
    if column.err is not None:
        raise detached(values[int(np.flatnonzero(column.err)[0])])
    assert isinstance(column, FactorisedColumn)
    # per topology key: the weight of the selecting terms per distinct node value
    by_key: dict[str, np.ndarray] = {}
    for u, value in enumerate(column.uniques):
        for topology_key, weight in _selecting(value, labels, namespace, namespace_labels).items():
            table = by_key.setdefault(topology_key, np.zeros(len(column.uniques), np.int64))
            table[u] = weight
    counts = np.zeros(size, np.int64)
    own = np.zeros(size, np.int64)
    for topology_key, table in by_key.items():
        node_weights = table[column.codes]
        codes, uniques = view.label_codes(topology_key)
        labelled = view.has_label(topology_key)
        sums = np.bincount(codes[labelled], weights=node_weights[labelled],
                           minlength=len(uniques)).astype(np.int64)
        counts += np.where(labelled, sums[codes], 0)
        own += np.where(labelled, node_weights, 0)

    total = int(own.sum())

    def adjust(node: NodeInfo, row: int) -> WhatIf:
        """A what-if copy changes the weights of its own domains by the difference."""
        before = _selecting(values[row], labels, namespace, namespace_labels)
        after = _selecting(weights(node), labels, namespace, namespace_labels)
        delta = sum(after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)
                    if k in node.view["labels"])
        return WhatIf(int(counts[row]) + delta, int(own[row]) + delta, 0, total + delta)

    return AggregateValue(view, counts, own, 0, 0, total, adjust)


def _selecting(weights: tuple[tuple[Hashable, PodAffinityTerm, int], ...],
               labels: Mapping[str, str], namespace: str,
               namespace_labels: Mapping[str, str]) -> dict[str, int]:
    """The weights of the terms selecting the pod (in ``namespace``, labelled
    ``namespace_labels``), summed per topology key."""
    out: dict[str, int] = {}
    for _, term, weight in weights:
        if weight and term.selects(labels, namespace, namespace_labels):
            out[term.topology_key] = out.get(term.topology_key, 0) + weight
    return out


register_identity(AggregateValue, AggregateValue.identity)
