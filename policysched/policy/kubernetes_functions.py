"""Kubernetes' matching functions for policies (``model.selectors``), as CEL functions over
opaque values: label selectors, required and preferred node affinity, tolerations of taints,
pod affinity terms.

* ``labelSelector(dyn) -> LabelSelector`` — a ``metav1.LabelSelector``;
  ``LabelSelector.matches(map(string, string)) -> bool``;
* ``nodeAffinity(map(string, string), dyn) -> NodeAffinity`` — a pod's required node
  affinity, from its ``nodeSelector`` and ``affinity``; ``NodeAffinity.matches(Node) -> bool``;
  ``NodeAffinity.nodeNames() -> optional(list(string))``, the nodes its terms name (none:
  every node);
* ``preferredNodeAffinity(dyn) -> PreferredNodeAffinity`` — the preferred node selector
  terms of a pod's ``affinity``; ``PreferredNodeAffinity.score(Node) -> int``, the sum of
  the weights of the terms the node matches;
* ``Toleration.tolerates(Taint) -> bool``;
* ``podAffinityTerm(dyn, string[, map(string, string)]) -> PodAffinityTerm`` — a pod
  (anti-)affinity term (or topology spread constraint) of a pod in this namespace, its
  selector as stored, or merged with these labels through its matchLabelKeys /
  mismatchLabelKeys (kube-scheduler's merge for a spread constraint);
  ``PodAffinityTerm.selects(Pod) -> bool``, whether the term is about that pod (its
  namespace's labels are not known here: a namespaceSelector other than ``{}`` selects no
  namespace but those listed in ``namespaces``).

Types are ``policysched.*``. The values are the frozen dataclasses of ``model.selectors``:
hashable and equal by content, so that the vectorised tiers can key and compare them; a
function parses its input once (then it is a cache lookup) and is pure. A selector that
Kubernetes refuses is a ``CelError`` naming what is wrong; a required node selector term
Kubernetes cannot parse matches nothing, as in kube-scheduler.

``matches`` is also the standard library's regular-expression function: ``matches_extending``
adds these overloads to it.

``NodeAffinity.matches(node)`` and ``PreferredNodeAffinity.score(node)`` have a ``columns``
implementation for the vectorised tier: over a column of nodes, one array operation per
requirement instead of one call per node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from ..cel import CelError
from ..cel.library.function import Function, Overload, member_overload
from ..cel.types import BOOL, DYN, INT, MAP_STRING_STRING, STRING, Type, list_of, optional_of
from ..cel.values import OptionalValue, no_such_overload
from ..cel.vector import FactorisedColumn, NumericColumn, Scalar
from ..model import selectors
from ..model.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    IN,
    METADATA_NAME,
    NOT_IN,
    LabelSelector,
    NodeAffinity,
    NodeSelectorTerm,
    PodAffinityTerm,
    PreferredNodeAffinity,
    Requirement,
    SelectorError,
)
from . import messages

LABEL_SELECTOR_TYPE = Type("policysched.LabelSelector")
NODE_AFFINITY_TYPE = Type("policysched.NodeAffinity")
PREFERRED_NODE_AFFINITY_TYPE = Type("policysched.PreferredNodeAffinity")
POD_AFFINITY_TERM_TYPE = Type("policysched.PodAffinityTerm")
# as declared in ``variables`` (which imports this module): types compare by name
POD_TYPE = Type("policysched.Pod")
NODE_TYPE = Type("policysched.Node")
TOLERATION_TYPE = Type("policysched.Toleration")
TAINT_TYPE = Type("policysched.Taint")

_T = TypeVar("_T")

# one call: a cache lookup (parse) or a few requirement checks (match)
_PARSE_COST = 5
_MATCH_COST = 3


def _parsed(template: str, parse: Callable[[], _T]) -> _T:
    try:
        return parse()
    except SelectorError as e:
        raise CelError(template.format(reason=e)) from None


def _labels(value: Any, function: str, receiver: Any) -> dict[str, str]:
    """A CEL map of strings to strings, or no such overload."""
    if type(value) is not dict or not all(
            type(k) is str and type(v) is str for k, v in value.items()):
        raise no_such_overload(function, receiver, value)
    return value


# --------------------------------------------------------------------------- implementations


def _label_selector(obj: Any) -> LabelSelector:
    return _parsed(messages.INVALID_LABEL_SELECTOR, lambda: selectors.label_selector(obj))


def _selector_matches(selector: LabelSelector, labels: Any) -> bool:
    return selector.matches(_labels(labels, "matches", selector))


def _node_affinity(node_selector: Any, affinity: Any) -> NodeAffinity:
    if type(node_selector) is not dict:
        raise no_such_overload("nodeAffinity", node_selector, affinity)
    return _parsed(messages.INVALID_NODE_AFFINITY,
                   lambda: selectors.required_node_affinity(node_selector, affinity))


def _node_labels_and_name(node: Any, function: str, receiver: Any) -> tuple[dict[str, str], str]:
    """The labels and name of a CEL ``node``, or no such overload."""
    name = node.get("name") if type(node) is dict else None
    if type(name) is not str:
        raise no_such_overload(function, receiver, node)
    return _labels(node.get("labels"), function, receiver), name


def _affinity_matches(affinity: NodeAffinity, node: Any) -> bool:
    return affinity.matches(*_node_labels_and_name(node, "matches", affinity))


def _node_names(affinity: Any) -> OptionalValue:
    if type(affinity) is not NodeAffinity:
        raise no_such_overload("nodeNames", affinity)
    names = affinity.node_names
    return OptionalValue.NONE if names is None else OptionalValue(sorted(names))


def _preferred_node_affinity(affinity: Any) -> PreferredNodeAffinity:
    return _parsed(messages.INVALID_NODE_AFFINITY,
                   lambda: selectors.preferred_node_affinity(affinity))


def _score(preferred: Any, node: Any) -> int:
    if type(preferred) is not PreferredNodeAffinity:
        raise no_such_overload("score", preferred, node)
    return preferred.score(*_node_labels_and_name(node, "score", preferred))


# --------------------------------------------------------------------------- over node columns


class _NotViews(Exception):
    """A column holds something else than node views (through ``dyn``)."""


class _Nodes:
    """The distinct ``node`` views of a column, read a label key at a time: a matcher's
    requirements are evaluated for all of them with one pass per requirement (and the
    matcher itself once per distinct value for Gt / Lt), which gives what the matcher
    gives node by node."""

    def __init__(self, views: list[Any]) -> None:
        try:
            self.labels = [view["labels"] for view in views]
        except (TypeError, KeyError) as e:
            raise _NotViews from e
        if not all(type(labels) is dict for labels in self.labels):
            raise _NotViews
        self.size = len(views)
        self._views = views
        self._values: dict[str, list[str | None]] = {}
        self._names: list[str] | None = None

    def values(self, key: str) -> list[str | None]:
        """The value of label ``key`` on each node (None: no such label)."""
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = [labels.get(key) for labels in self.labels]
            try:
                distinct = set(found)
            except TypeError as e:
                raise _NotViews from e
            if not all(v is None or type(v) is str for v in distinct):
                raise _NotViews
        return found

    def names(self) -> list[str]:
        if self._names is None:
            try:
                self._names = [view["name"] for view in self._views]
            except (TypeError, KeyError) as e:
                raise _NotViews from e
            if not all(type(name) is str for name in self._names):
                raise _NotViews
        return self._names

    def equal(self, key: str, value: str) -> np.ndarray:
        return np.fromiter((v == value for v in self.values(key)), bool, self.size)

    def requirement(self, r: Requirement) -> np.ndarray:
        values = self.values(r.key)
        if r.operator in (IN, NOT_IN):
            allowed = frozenset(r.values)
            hits = np.fromiter((v in allowed for v in values), bool, self.size)
            return hits if r.operator == IN else ~hits
        if r.operator in (EXISTS, DOES_NOT_EXIST):
            present = np.fromiter((v is not None for v in values), bool, self.size)
            return present if r.operator == EXISTS else ~present
        one = LabelSelector((r,))  # Gt, Lt: integers parsed as the matcher does
        results = {v: one.matches({} if v is None else {r.key: v}) for v in set(values)}
        return np.fromiter(map(results.__getitem__, values), bool, self.size)

    def term(self, term: NodeSelectorTerm) -> np.ndarray:
        requirements = term.labels.requirements
        if requirements is None:
            return np.zeros(self.size, bool)
        out = np.ones(self.size, bool)
        for r in requirements:
            out &= self.requirement(r)
        if term.fields:
            names = self.names()
            unnamed = np.fromiter((not name for name in names), bool, self.size)
            for key, operator, value in term.fields:  # a node without a name passes
                if key == METADATA_NAME:
                    hits = np.fromiter((name == value for name in names), bool, self.size)
                else:
                    hits = np.full(self.size, value == "")
                out &= (hits if operator == IN else ~hits) | unnamed
        return out

    def matches(self, affinity: NodeAffinity) -> np.ndarray:
        """``affinity.matches`` on each node."""
        out = np.ones(self.size, bool)
        for key, value in affinity.node_selector:
            out &= self.equal(key, value)
        if affinity.terms is not None:
            any_term = np.zeros(self.size, bool)
            for term in affinity.terms:
                any_term |= self.term(term)
            out &= any_term
        return out

    def score(self, preferred: PreferredNodeAffinity) -> np.ndarray:
        """``preferred.score`` on each node."""
        out = np.zeros(self.size, np.int64)
        for weight, term in preferred.terms:
            out[self.term(term)] += weight
        return out


def _over_nodes(node: Any, evaluate: Callable[[_Nodes], np.ndarray]) -> NumericColumn | None:
    """``evaluate`` over the distinct views of a column of ``node``s, as a column; None
    (the function is called per node) for anything else."""
    if not isinstance(node, FactorisedColumn):
        return None
    try:
        found = evaluate(_Nodes(node.uniques))
    except _NotViews:
        return None
    return NumericColumn(found[node.codes], node.err)


def _affinity_columns(size: int, affinity: Any, node: Any) -> NumericColumn | None:
    if not isinstance(affinity, Scalar) or type(affinity.value) is not NodeAffinity:
        return None
    required: NodeAffinity = affinity.value
    return _over_nodes(node, lambda nodes: nodes.matches(required))


def _score_columns(size: int, preferred: Any, node: Any) -> NumericColumn | None:
    if not isinstance(preferred, Scalar) or type(preferred.value) is not PreferredNodeAffinity:
        return None
    terms: PreferredNodeAffinity = preferred.value
    return _over_nodes(node, lambda nodes: nodes.score(terms))


def _tolerates(toleration: Any, taint: Any) -> bool:
    if type(toleration) is not dict or type(taint) is not dict:
        raise no_such_overload("tolerates", toleration, taint)
    return _parsed(messages.INVALID_TOLERATION,
                   lambda: selectors.tolerates(toleration, taint))


def _pod_affinity_term(term: Any, namespace: Any, *labels: Any) -> PodAffinityTerm:
    if type(namespace) is not str or any(type(x) is not dict for x in labels):
        raise no_such_overload("podAffinityTerm", term, namespace, *labels)
    return _parsed(messages.INVALID_POD_AFFINITY_TERM,
                   lambda: selectors.pod_affinity_term(term, namespace, *labels))


def _selects(term: Any, pod: Any) -> bool:
    if type(term) is not PodAffinityTerm:
        raise no_such_overload("selects", term, pod)
    namespace = pod.get("namespace") if type(pod) is dict else None
    if type(namespace) is not str:
        raise no_such_overload("selects", term, pod)
    return term.selects(_labels(pod.get("labels"), "selects", term), namespace)


_SELECTS_EXAMPLE = ("nodePods.exists(p, podAffinityTerm({'labelSelector': {'matchLabels': "
                    "{'app': 'db'}}, 'topologyKey': 'kubernetes.io/hostname'}, "
                    "pod.namespace).selects(p))")

# The functions above whose argument is a Kubernetes object (a selector, an affinity, a
# term), which a policy may write as a literal: its list and map literals mix types.
OBJECT_ARGUMENT_FUNCTIONS = frozenset({
    "labelSelector", "nodeAffinity", "preferredNodeAffinity", "podAffinityTerm"})

FUNCTIONS: tuple[Function, ...] = (
    Function("labelSelector",
             (Overload("label_selector_dyn", (DYN,), LABEL_SELECTOR_TYPE),),
             _label_selector, cost=_PARSE_COST,
             doc="a metav1.LabelSelector: null selects nothing, {} everything",
             examples=("labelSelector({'matchExpressions': [{'key': 'disktype', "
                       "'operator': 'In', 'values': ['ssd', 'nvme']}]}).matches(node.labels)",)),
    Function("nodeAffinity",
             (Overload("node_affinity_map_dyn", (MAP_STRING_STRING, DYN), NODE_AFFINITY_TYPE),),
             _node_affinity, cost=_PARSE_COST,
             doc="a pod's required node affinity: its nodeSelector and spec.affinity",
             examples=("nodeAffinity(pod.nodeSelector, pod.affinity).matches(node)",)),
    Function("nodeNames",
             (member_overload("node_affinity_node_names", (NODE_AFFINITY_TYPE,),
                              optional_of(list_of(STRING))),),
             _node_names, cost=_MATCH_COST,
             doc="the nodes the required node affinity names, as kube-scheduler's "
                 "NodeAffinity PreFilter reads them: the union over the terms of the names "
                 "a term's matchFields metadata.name In allow; none (every node) when a "
                 "term names no node",
             examples=("nodeAffinity(pod.nodeSelector, pod.affinity).nodeNames()"
                       ".orValue([]).size()",)),
    Function("preferredNodeAffinity",
             (Overload("preferred_node_affinity_dyn", (DYN,), PREFERRED_NODE_AFFINITY_TYPE),),
             _preferred_node_affinity, cost=_PARSE_COST,
             doc="the preferred node selector terms of a pod's spec.affinity",
             examples=("preferredNodeAffinity(pod.affinity).score(node)",)),
    Function("score",
             (member_overload("preferred_node_affinity_score_node",
                              (PREFERRED_NODE_AFFINITY_TYPE, NODE_TYPE), INT),),
             _score, cost=_MATCH_COST,
             doc="the sum of the weights of the preferred terms the node matches",
             columns=_score_columns,
             examples=("preferredNodeAffinity(pod.affinity).score(node)",)),
    Function("tolerates",
             (member_overload("toleration_tolerates_taint", (TOLERATION_TYPE, TAINT_TYPE),
                              BOOL),),
             _tolerates, cost=_MATCH_COST, doc="whether the toleration tolerates the taint",
             examples=("node.taints.all(t, t.effect == 'PreferNoSchedule' || "
                       "pod.tolerations.exists(x, x.tolerates(t)))",)),
    Function("podAffinityTerm",
             (Overload("pod_affinity_term_dyn_string", (DYN, STRING), POD_AFFINITY_TERM_TYPE),
              Overload("pod_affinity_term_dyn_string_map",
                       (DYN, STRING, MAP_STRING_STRING), POD_AFFINITY_TERM_TYPE)),
             _pod_affinity_term, cost=_PARSE_COST,
             doc="a pod affinity term (or topology spread constraint) of a pod in this "
                 "namespace, its selector as stored (the API server merged matchLabelKeys / "
                 "mismatchLabelKeys when it created the pod); with the pod's labels, those "
                 "keys merged again with them, as kube-scheduler does for a topology spread "
                 "constraint",
             examples=(_SELECTS_EXAMPLE,
                       "podAffinityTerm({'labelSelector': {}, 'matchLabelKeys': ['app'], "
                       "'topologyKey': 'kubernetes.io/hostname'}, pod.namespace, "
                       "pod.labels).selects(pod)")),
    Function("selects",
             (member_overload("pod_affinity_term_selects_pod",
                              (POD_AFFINITY_TERM_TYPE, POD_TYPE), BOOL),),
             _selects, cost=_MATCH_COST,
             doc="whether the pod is one the term is about (namespace and labels)",
             examples=(_SELECTS_EXAMPLE,)),
)


def matches_extending(standard: Function) -> Function:
    """The standard library's ``matches`` (regular expressions) with the overloads
    ``LabelSelector.matches(map(string, string))`` and ``NodeAffinity.matches(Node)``."""

    def impl(receiver: Any, argument: Any) -> bool:
        kind = type(receiver)
        if kind is LabelSelector:
            return _selector_matches(receiver, argument)
        if kind is NodeAffinity:
            return _affinity_matches(receiver, argument)
        return standard.impl(receiver, argument)

    return replace(
        standard,
        overloads=(*standard.overloads,
                   member_overload("label_selector_matches_map",
                                   (LABEL_SELECTOR_TYPE, MAP_STRING_STRING), BOOL),
                   member_overload("node_affinity_matches_node",
                                   (NODE_AFFINITY_TYPE, NODE_TYPE), BOOL)),
        impl=impl,
        doc=f"{standard.doc}; whether a label selector selects the labels; whether a node "
            "satisfies a node affinity",
        examples=(*standard.examples,
                  "labelSelector({'matchLabels': {'app': 'web'}}).matches(pod.labels)",
                  "nodeAffinity(pod.nodeSelector, pod.affinity).matches(node)"),
        columns=_affinity_columns,
    )
