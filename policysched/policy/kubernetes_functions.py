"""Kubernetes' matching functions for policies (``model.selectors``), as CEL functions over
opaque values: label selectors, required and preferred node affinity, tolerations of taints,
pod affinity terms.

* ``labelSelector(dyn) -> LabelSelector`` — a ``metav1.LabelSelector``;
  ``LabelSelector.matches(map(string, string)) -> bool``;
* ``nodeAffinity(map(string, string), dyn) -> NodeAffinity`` — a pod's required node
  affinity, from its ``nodeSelector`` and ``affinity``; ``NodeAffinity.matches(Node) -> bool``;
* ``preferredNodeAffinity(dyn) -> PreferredNodeAffinity`` — the preferred node selector
  terms of a pod's ``affinity``; ``PreferredNodeAffinity.score(Node) -> int``, the sum of
  the weights of the terms the node matches;
* ``Toleration.tolerates(Taint) -> bool``;
* ``podAffinityTerm(dyn, string, map(string, string)) -> PodAffinityTerm`` — a pod
  (anti-)affinity term of a pod in this namespace with these labels;
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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from ..cel import CelError
from ..cel.library.function import Function, Overload, member_overload
from ..cel.types import BOOL, DYN, INT, MAP_STRING_STRING, STRING, Type
from ..cel.values import no_such_overload
from ..model import selectors
from ..model.selectors import (
    LabelSelector,
    NodeAffinity,
    PodAffinityTerm,
    PreferredNodeAffinity,
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


def _preferred_node_affinity(affinity: Any) -> PreferredNodeAffinity:
    return _parsed(messages.INVALID_NODE_AFFINITY,
                   lambda: selectors.preferred_node_affinity(affinity))


def _score(preferred: Any, node: Any) -> int:
    if type(preferred) is not PreferredNodeAffinity:
        raise no_such_overload("score", preferred, node)
    return preferred.score(*_node_labels_and_name(node, "score", preferred))


def _tolerates(toleration: Any, taint: Any) -> bool:
    if type(toleration) is not dict or type(taint) is not dict:
        raise no_such_overload("tolerates", toleration, taint)
    return _parsed(messages.INVALID_TOLERATION,
                   lambda: selectors.tolerates(toleration, taint))


def _pod_affinity_term(term: Any, namespace: Any, labels: Any) -> PodAffinityTerm:
    if type(namespace) is not str or type(labels) is not dict:
        raise no_such_overload("podAffinityTerm", term, namespace, labels)
    return _parsed(messages.INVALID_POD_AFFINITY_TERM,
                   lambda: selectors.pod_affinity_term(term, namespace, labels))


def _selects(term: Any, pod: Any) -> bool:
    if type(term) is not PodAffinityTerm:
        raise no_such_overload("selects", term, pod)
    namespace = pod.get("namespace") if type(pod) is dict else None
    if type(namespace) is not str:
        raise no_such_overload("selects", term, pod)
    return term.selects(_labels(pod.get("labels"), "selects", term), namespace)


FUNCTIONS: tuple[Function, ...] = (
    Function("labelSelector",
             (Overload("label_selector_dyn", (DYN,), LABEL_SELECTOR_TYPE),),
             _label_selector, cost=_PARSE_COST,
             doc="a metav1.LabelSelector: null selects nothing, {} everything"),
    Function("nodeAffinity",
             (Overload("node_affinity_map_dyn", (MAP_STRING_STRING, DYN), NODE_AFFINITY_TYPE),),
             _node_affinity, cost=_PARSE_COST,
             doc="a pod's required node affinity: its nodeSelector and spec.affinity"),
    Function("preferredNodeAffinity",
             (Overload("preferred_node_affinity_dyn", (DYN,), PREFERRED_NODE_AFFINITY_TYPE),),
             _preferred_node_affinity, cost=_PARSE_COST,
             doc="the preferred node selector terms of a pod's spec.affinity"),
    Function("score",
             (member_overload("preferred_node_affinity_score_node",
                              (PREFERRED_NODE_AFFINITY_TYPE, NODE_TYPE), INT),),
             _score, cost=_MATCH_COST,
             doc="the sum of the weights of the preferred terms the node matches"),
    Function("tolerates",
             (member_overload("toleration_tolerates_taint", (TOLERATION_TYPE, TAINT_TYPE),
                              BOOL),),
             _tolerates, cost=_MATCH_COST, doc="whether the toleration tolerates the taint"),
    Function("podAffinityTerm",
             (Overload("pod_affinity_term_dyn_string_map",
                       (DYN, STRING, MAP_STRING_STRING), POD_AFFINITY_TERM_TYPE),),
             _pod_affinity_term, cost=_PARSE_COST,
             doc="a pod affinity term of a pod in this namespace with these labels"),
    Function("selects",
             (member_overload("pod_affinity_term_selects_pod",
                              (POD_AFFINITY_TERM_TYPE, POD_TYPE), BOOL),),
             _selects, cost=_MATCH_COST,
             doc="whether the pod is one the term is about (namespace and labels)"),
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
    )
