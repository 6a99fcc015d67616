"""Kubernetes' matching of pods and nodes, with Kubernetes' exact semantics: label
selectors, required and preferred node affinity, tolerations of taints, pod affinity terms.

What each follows (Kubernetes v1.34):

* ``label_selector`` — ``metav1.LabelSelectorAsSelector`` and ``labels.NewRequirement``
  (k8s.io/apimachinery): a nil selector selects nothing, an empty one everything; keys and
  values are validated as label keys and values, with Kubernetes' messages.
* ``merged_label_selector`` — kube-scheduler's merging of a topology spread constraint's
  ``matchLabelKeys`` (``key in (the pod's value)``), and ``mismatchLabelKeys`` as
  ``key notin (value)``; a nil selector stays nil.
* ``required_node_affinity`` / ``preferred_node_affinity`` — component-helpers'
  ``nodeaffinity.RequiredNodeAffinity`` and ``PreferredSchedulingTerms``: pod.spec.nodeSelector
  AND the required node selector terms (ORed; requirements ANDed; an empty term matches
  nothing; a term with an invalid requirement matches nothing, as the NodeAffinity plugin
  ignores parse errors). Preferred terms of weight 0 or without requirements are skipped
  unparsed; an invalid one is an error (kube-scheduler's PreScore fails the pod).
* ``tolerates`` — ``v1.Toleration.ToleratesTaint`` (k8s.io/api), ``untolerated_taint`` —
  ``FindMatchingUntoleratedTaint``. The alpha ``Lt``/``Gt`` toleration operators
  (TaintTolerationComparisonOperators, off by default) tolerate nothing, as with the gate off.
* ``pod_affinity_term`` — kube-scheduler's ``newAffinityTerm`` and ``AffinityTerm.Matches``.
  A pod affinity term's selector is read as stored: kube-apiserver merged its
  ``matchLabelKeys`` / ``mismatchLabelKeys`` into it when it created the pod (so does the
  in-memory cluster, ``cluster.memory.merge_label_keys``), with the labels of then. Given
  the owner's labels, they are merged (ANDed) as kube-scheduler merges a topology spread
  constraint's ``matchLabelKeys`` at every attempt, on top of the API server's merge.

Every function raises ``SelectorError`` (and nothing else) on malformed input, whatever its
types; parsed results are cached (least recently used, bounded) by the JSON of their input,
so parsing the same selector again is a dictionary lookup. Results are frozen, hashable
dataclasses; their ``key`` is a canonical form (sorted requirements, sorted value sets).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple, TypeVar

import orjson

from ..cel.values import INT64_MAX, INT64_MIN, json_text
from . import messages
from .objects import child_path, value_kind

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"
EQUAL = "Equal"
METADATA_NAME = "metadata.name"

LABEL_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
NODE_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
FIELD_SELECTOR_OPERATORS = (IN, NOT_IN)

REQUIRED_NODE_AFFINITY = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED_NODE_AFFINITY = "preferredDuringSchedulingIgnoredDuringExecution"

_LABEL_NAME_MAX = 63
_DNS_SUBDOMAIN_MAX = 253
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_SHOWN_MAX = 80  # characters of a bad value quoted in a message
_CACHE_SIZE = 4096


class SelectorError(ValueError):
    """An invalid label selector, node selector, toleration or affinity term; the message
    says what is wrong and where (``matchExpressions[0].operator: ...``)."""


# --------------------------------------------------------------------------- messages


def _shown(value: Any) -> str:
    """A bad value as messages quote it: JSON, about ``_SHOWN_MAX`` characters at most."""
    if isinstance(value, str) and len(value) > _SHOWN_MAX:
        value = value[:_SHOWN_MAX - 5] + "..."
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = value_kind(value)
    return text if len(text) <= _SHOWN_MAX else text[:_SHOWN_MAX - 3] + "..."


def _invalid(path: str, value: Any, detail: str) -> str:
    return messages.SELECTOR_INVALID.format(path=path, value=_shown(value), detail=detail)


def _unsupported(path: str, value: str, supported: Sequence[str]) -> str:
    return messages.SELECTOR_UNSUPPORTED.format(
        path=path, value=_shown(value), supported=", ".join(f'"{s}"' for s in supported))


def _field_error(path: str, reason: str) -> SelectorError:
    return SelectorError(messages.SELECTOR_FIELD.format(path=path, reason=reason)
                         if path else reason)


def _wrong_type(path: str, expected: str, value: Any) -> SelectorError:
    return _field_error(path, messages.WRONG_TYPE.format(expected=expected,
                                                         actual=value_kind(value)))


# --------------------------------------------------------------------------- JSON input


def _map(value: Any, path: str) -> Mapping[str, Any]:
    """A JSON object (absent or null: empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _wrong_type(path, "a mapping", value)
    return value


def _list(value: Any, path: str) -> Sequence[Any]:
    """A JSON array (absent or null: empty)."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise _wrong_type(path, "a list", value)
    return value


def _str(value: Any, path: str) -> str:
    """A JSON string (absent or null: empty)."""
    if value is None:
        return ""
    if type(value) is not str:
        raise _wrong_type(path, "a string", value)
    return value


def _strings(value: Any, path: str) -> tuple[str, ...]:
    """A JSON array of strings (a null element reads as "", as Go decodes it)."""
    return tuple(_str(v, child_path(path, i)) for i, v in enumerate(_list(value, path)))


def _string_map(value: Any, path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in _map(value, path).items():
        if type(k) is not str:
            raise _field_error(path, messages.SELECTOR_KEY_NOT_STRING.format(
                actual=value_kind(k)))
        if type(v) is not str:
            raise _wrong_type(child_path(path, k), "a string", v)
        out[k] = v
    return out


def _maps(value: Any, path: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The objects of a JSON array with their paths (a null element: an empty object)."""
    out = []
    for i, item in enumerate(_list(value, path)):
        item_path = child_path(path, i)
        out.append((item_path, _map(item, item_path)))
    return out


def _key_operator_values(requirement: Mapping[str, Any], path: str
                         ) -> tuple[str, str, tuple[str, ...]]:
    """The ``key``, ``operator`` and ``values`` of a selector requirement at ``path``."""
    return (_str(requirement.get("key"), child_path(path, "key")),
            _str(requirement.get("operator"), child_path(path, "operator")),
            _strings(requirement.get("values"), child_path(path, "values")))


# --------------------------------------------------------------------------- validation

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_NAME_CHARS = _ALNUM | frozenset("-_.")
_DNS_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_DNS_CHARS = _DNS_ALNUM | frozenset("-")


def _byte_length(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass"))


def _is_name(s: str) -> bool:
    """``([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`` (a label name or non-empty value)."""
    return bool(s) and s[0] in _ALNUM and s[-1] in _ALNUM and all(c in _NAME_CHARS for c in s)


def _is_dns_subdomain(s: str) -> bool:
    """RFC 1123 subdomain syntax: dot-separated ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``."""
    return all(label and label[0] in _DNS_ALNUM and label[-1] in _DNS_ALNUM
               and all(c in _DNS_CHARS for c in label) for label in s.split("."))


def label_key_errors(key: str) -> list[str]:
    """Why ``key`` is not a label key (``IsLabelKey``), or [] when it is one."""
    parts = key.split("/")
    if len(parts) > 2:
        return [messages.LABEL_KEY_FORMAT]
    errors = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append(messages.LABEL_KEY_PREFIX.format(reason=messages.LABEL_EMPTY))
        else:
            if _byte_length(prefix) > _DNS_SUBDOMAIN_MAX:
                errors.append(messages.LABEL_KEY_PREFIX.format(
                    reason=messages.LABEL_TOO_LONG.format(limit=_DNS_SUBDOMAIN_MAX)))
            if not _is_dns_subdomain(prefix):
                errors.append(messages.LABEL_KEY_PREFIX.format(
                    reason=messages.LABEL_DNS_SUBDOMAIN))
    if not name:
        errors.append(messages.LABEL_KEY_NAME.format(reason=messages.LABEL_EMPTY))
    elif _byte_length(name) > _LABEL_NAME_MAX:
        errors.append(messages.LABEL_KEY_NAME.format(
            reason=messages.LABEL_TOO_LONG.format(limit=_LABEL_NAME_MAX)))
    if not _is_name(name):
        errors.append(messages.LABEL_KEY_NAME.format(reason=messages.LABEL_NAME_FORMAT))
    return errors


def label_value_errors(value: str) -> list[str]:
    """Why ``value`` is not a label value (``IsLabelValue``), or [] when it is one."""
    errors = []
    if _byte_length(value) > _LABEL_NAME_MAX:
        errors.append(messages.LABEL_TOO_LONG.format(limit=_LABEL_NAME_MAX))
    if value and not _is_name(value):
        errors.append(messages.LABEL_VALUE_FORMAT)
    return errors


def parse_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: an optional sign and ASCII digits, in int64 range;
    None when it fails."""
    digits = s[1:] if s[:1] in ("+", "-") else s
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    significant = digits.lstrip("0")
    if len(significant) > 19:
        return None
    n = int(significant or "0")
    if s[0] == "-":
        n = -n
    return n if INT64_MIN <= n <= INT64_MAX else None


# --------------------------------------------------------------------------- requirements


class Requirement(NamedTuple):
    """One requirement on labels: ``values`` sorted and distinct (one number for Gt/Lt)."""

    key: str
    operator: str
    values: tuple[str, ...]


class FieldRequirement(NamedTuple):
    """One requirement of a node selector term's ``matchFields``: In or NotIn one value."""

    key: str
    operator: str
    value: str


class _RequirementError(SelectorError):
    """A requirement Kubernetes refuses to parse (its node selector term matches nothing)."""


def _requirement(key: str, operator: str, values: Sequence[str], key_path: str,
                 values_path: str, indexed: bool = True) -> Requirement:
    """``labels.NewRequirement``: the key and values validated as Kubernetes does (a value
    is at ``values_path[i]``, or at ``values_path`` itself when not ``indexed``)."""
    errors = [_invalid(key_path, key, e) for e in label_key_errors(key)]
    if operator in (IN, NOT_IN):
        if not values:
            errors.append(_invalid(values_path, list(values), messages.SELECTOR_VALUES_REQUIRED))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errors.append(_invalid(values_path, list(values),
                                   messages.SELECTOR_VALUES_FORBIDDEN))
    else:  # Gt, Lt
        if len(values) != 1:
            errors.append(_invalid(values_path, list(values), messages.SELECTOR_ONE_NUMBER))
        errors += [_invalid(child_path(values_path, i), v, messages.SELECTOR_NOT_INTEGER)
                   for i, v in enumerate(values) if parse_int64(v) is None]
    for i, v in enumerate(values):
        path = child_path(values_path, i) if indexed else values_path
        errors += [_invalid(path, v, e) for e in label_value_errors(v)]
    if errors:
        raise _RequirementError("; ".join(errors))
    return Requirement(key, operator, tuple(sorted(set(values))))


_OP_IN, _OP_NOT_IN, _OP_EXISTS, _OP_DOES_NOT_EXIST, _OP_GT, _OP_LT = range(6)
_OPCODES = {IN: _OP_IN, NOT_IN: _OP_NOT_IN, EXISTS: _OP_EXISTS,
            DOES_NOT_EXIST: _OP_DOES_NOT_EXIST, GT: _OP_GT, LT: _OP_LT}
_Check = tuple[str, int, Any]  # key, opcode, value set (In/NotIn) or bound (Gt/Lt)


def _check(r: Requirement) -> _Check:
    opcode = _OPCODES[r.operator]
    if opcode in (_OP_GT, _OP_LT):
        return r.key, opcode, parse_int64(r.values[0])
    return r.key, opcode, frozenset(r.values)


def _canonical(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    return tuple(sorted(set(requirements)))


# --------------------------------------------------------------------------- label selectors


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: its requirements ANDed, or None when it selects nothing
    (a nil ``metav1.LabelSelector``). ``()`` selects everything."""

    requirements: tuple[Requirement, ...] | None

    @property
    def key(self) -> tuple[Requirement, ...] | None:
        """The canonical form: equal for selectors with the same requirements."""
        return self.requirements

    @cached_property
    def _checks(self) -> tuple[_Check, ...] | None:
        return None if self.requirements is None else tuple(map(_check, self.requirements))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every requirement (``Selector.Matches``)."""
        checks = self._checks
        if checks is None:
            return False
        for key, opcode, arg in checks:
            if opcode == _OP_IN:
                if labels.get(key) not in arg:
                    return False
            elif opcode == _OP_NOT_IN:
                if labels.get(key) in arg:
                    return False
            elif opcode == _OP_EXISTS:
                if key not in labels:
                    return False
            elif opcode == _OP_DOES_NOT_EXIST:
                if key in labels:
                    return False
            else:  # Gt, Lt: the label must be an int64
                value = labels.get(key)
                number = parse_int64(value) if type(value) is str else None
                if number is None or not (number > arg if opcode == _OP_GT else number < arg):
                    return False
        return True


EVERYTHING = LabelSelector(())
NOTHING = LabelSelector(None)


def _parse_label_selector(obj: Any, path: str = "") -> LabelSelector:
    """``metav1.LabelSelectorAsSelector`` of a JSON ``LabelSelector`` at ``path``."""
    if obj is None:
        return NOTHING
    selector = _map(obj, path)
    labels_path = child_path(path, "matchLabels")
    match_labels = _string_map(selector.get("matchLabels"), labels_path)
    expressions = _maps(selector.get("matchExpressions"), child_path(path, "matchExpressions"))
    if not match_labels and not expressions:
        return EVERYTHING
    requirements = [_requirement(k, IN, (v,), labels_path, child_path(labels_path, k),
                                 indexed=False) for k, v in match_labels.items()]
    for p, expression in expressions:
        key, operator, values = _key_operator_values(expression, p)
        if operator not in LABEL_SELECTOR_OPERATORS:
            raise SelectorError(messages.SELECTOR_BAD_OPERATOR.format(
                path=child_path(p, "operator"), operator=_shown(operator)))
        requirements.append(_requirement(key, operator, values, child_path(p, "key"),
                                         child_path(p, "values")))
    return LabelSelector(_canonical(requirements))


def _merged(selector: LabelSelector, additions: Iterable[Requirement]) -> LabelSelector:
    """``selector`` AND ``additions`` (nothing stays nothing)."""
    if selector.requirements is None:
        return selector
    return LabelSelector(_canonical((*selector.requirements, *additions)))


# --------------------------------------------------------------------------- caching

_T = TypeVar("_T")


class _Failure(NamedTuple):
    """A cached SelectorError (raised anew on every hit)."""

    message: str


class _Memo:
    """Parse results by key, least recently used first out, at most ``size`` of them."""

    def __init__(self, size: int = _CACHE_SIZE) -> None:
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: Hashable | None, compute: Callable[[], _T]) -> _T:
        """``compute()``, or its result for ``key`` computed before (None: not cacheable).
        A ``SelectorError`` is remembered too."""
        if key is None:
            return compute()
        with self._lock:
            found = self._entries.get(key, self)
            if found is not self:
                self._entries.move_to_end(key)
        if found is self:
            try:
                found = compute()
            except SelectorError as e:
                found = _Failure(str(e))
            with self._lock:
                self._entries[key] = found
                if len(self._entries) > self._size:
                    self._entries.popitem(last=False)
        if type(found) is _Failure:
            raise SelectorError(found.message)
        return found

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _cached(memo: _Memo, obj: Any, parse: Callable[[Any], _T]) -> _T:
    """``parse(obj)``, cached by the JSON of ``obj``. A miss parses that JSON, so that the
    result depends on the key alone (NaN and infinities read as null there, as in JSON)."""
    data = json_text(obj)
    if data is None:
        return parse(obj)
    return memo.get(data, lambda: parse(orjson.loads(data)))


_SELECTORS = _Memo()
_MERGED = _Memo()
_REQUIRED = _Memo()
_PREFERRED = _Memo()
_TERM_SPECS = _Memo()
_TERMS = _Memo()


def clear_caches() -> None:
    """Forget every cached parse (tests)."""
    for memo in (_SELECTORS, _MERGED, _REQUIRED, _PREFERRED, _TERM_SPECS, _TERMS):
        memo.clear()


def label_selector(obj: Any) -> LabelSelector:
    """A ``metav1.LabelSelector`` (JSON): None selects nothing, ``{}`` everything."""
    return NOTHING if obj is None else _cached(_SELECTORS, obj, _parse_label_selector)


def merged_label_selector(selector_obj: Any, match_label_keys: Any, mismatch_label_keys: Any,
                          labels: Mapping[str, str]) -> LabelSelector:
    """``selector_obj`` AND ``key in (labels[key])`` for each of ``match_label_keys`` and
    ``key notin (labels[key])`` for each of ``mismatch_label_keys`` that ``labels`` has,
    as kube-scheduler merges a topology spread constraint's ``matchLabelKeys`` (not
    validated, as ``labels.SelectorFromSet``); a nil selector stays nil."""
    selector = label_selector(selector_obj)
    match = _strings(match_label_keys, "matchLabelKeys")
    mismatch = _strings(mismatch_label_keys, "mismatchLabelKeys")
    if selector.requirements is None or not (match or mismatch):
        return selector
    labels = _string_map(labels, "labels")
    additions = tuple(
        [Requirement(k, IN, (labels[k],)) for k in match if k in labels]
        + [Requirement(k, NOT_IN, (labels[k],)) for k in mismatch if k in labels])
    if not additions:
        return selector
    return _MERGED.get((selector, additions), lambda: _merged(selector, additions))


# --------------------------------------------------------------------------- node affinity


@dataclass(frozen=True)
class NodeSelectorTerm:
    """A node selector term: its ``matchExpressions`` (``labels``) and ``matchFields``
    (``fields``), ANDed. ``fields`` are ignored for a node without a name, as Kubernetes
    does."""

    labels: LabelSelector
    fields: tuple[FieldRequirement, ...]

    @property
    def key(self) -> tuple[Any, ...]:
        return self.labels.key, self.fields

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        if not self.labels.matches(labels):
            return False
        if name:
            for key, operator, value in self.fields:
                if ((name if key == METADATA_NAME else "") == value) != (operator == IN):
                    return False
        return True


def _node_selector_term(term: Mapping[str, Any], path: str) -> NodeSelectorTerm | None:
    """A parsed term; None for an empty one (it matches nothing); raises
    ``_RequirementError`` when Kubernetes cannot parse a requirement."""
    expressions = _maps(term.get("matchExpressions"), child_path(path, "matchExpressions"))
    fields = _maps(term.get("matchFields"), child_path(path, "matchFields"))
    if not expressions and not fields:
        return None
    errors: list[str] = []
    requirements = []
    for p, expression in expressions:
        key, operator, values = _key_operator_values(expression, p)
        if operator not in NODE_SELECTOR_OPERATORS:
            errors.append(_unsupported(child_path(p, "operator"), operator,
                                       NODE_SELECTOR_OPERATORS))
            continue
        try:
            requirements.append(_requirement(key, operator, values, child_path(p, "key"),
                                             child_path(p, "values")))
        except _RequirementError as e:
            errors.append(str(e))
    field_requirements = set()
    for p, field in fields:
        key, operator, values = _key_operator_values(field, p)
        if operator not in FIELD_SELECTOR_OPERATORS:
            errors.append(_unsupported(child_path(p, "operator"), operator,
                                       FIELD_SELECTOR_OPERATORS))
        elif len(values) != 1:
            errors.append(_invalid(child_path(p, "values"), list(values),
                                   messages.SELECTOR_ONE_FIELD_VALUE))
        else:
            field_requirements.add(FieldRequirement(key, operator, values[0]))
    if errors:
        raise _RequirementError("; ".join(errors))
    labels = LabelSelector(_canonical(requirements)) if expressions else EVERYTHING
    return NodeSelectorTerm(labels, tuple(sorted(field_requirements)))


@dataclass(frozen=True)
class NodeAffinity:
    """A pod's required node affinity: ``node_selector`` (pod.spec.nodeSelector, sorted
    items) AND one of ``terms`` (the valid, non-empty required node selector terms; None
    when the pod has no required node affinity, so only the node selector counts)."""

    node_selector: tuple[tuple[str, str], ...]
    terms: tuple[NodeSelectorTerm, ...] | None
    # kube's PreFilter: the nodes the required terms name (None: every node)
    node_names: frozenset[str] | None = None

    @property
    def key(self) -> tuple[Any, ...]:
        terms = self.terms
        return self.node_selector, None if terms is None else tuple(t.key for t in terms)

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        """``RequiredNodeAffinity.Match`` for a node with these labels and name."""
        for key, value in self.node_selector:
            if key not in labels or labels[key] != value:
                return False
        terms = self.terms
        return terms is None or any(t.matches(labels, name) for t in terms)


def _parse_required(node_selector_and_required: Sequence[Any]) -> NodeAffinity:
    node_selector, required = node_selector_and_required
    terms: tuple[NodeSelectorTerm, ...] | None = None
    if required is not None:
        path = f"affinity.nodeAffinity.{REQUIRED_NODE_AFFINITY}"
        found = set()
        for p, term in _maps(_map(required, path).get("nodeSelectorTerms"),
                             child_path(path, "nodeSelectorTerms")):
            try:
                parsed = _node_selector_term(term, p)
            except _RequirementError:
                continue  # matches nothing, as Kubernetes (which logs nothing) has it
            if parsed is not None:
                found.add(parsed)
        terms = tuple(sorted(found, key=lambda t: t.key))
    return NodeAffinity(tuple(sorted(node_selector.items())), terms, _named_nodes(required))


def _named_nodes(required: Any) -> frozenset[str] | None:
    """The NodeAffinity PreFilter's node names: the union over the required terms of the
    names each term's ``matchFields`` ``metadata.name In`` requirements all allow (read
    as given, valid or not); None (every node) when there is no term, or a term without
    such a requirement. ``required`` has been parsed (its shape is valid)."""
    terms = [] if required is None else _maps(required.get("nodeSelectorTerms"), "")
    if not terms:
        return None
    names: set[str] = set()
    for _, term in terms:
        allowed: set[str] | None = None
        for p, requirement in _maps(term.get("matchFields"), ""):
            key, operator, values = _key_operator_values(requirement, p)
            if key == METADATA_NAME and operator == IN:
                allowed = set(values) if allowed is None else allowed & set(values)
        if allowed is None:
            return None
        names |= allowed
    return frozenset(names)


def _node_affinity(affinity: Any) -> Mapping[str, Any]:
    return _map(_map(affinity, "affinity").get("nodeAffinity"), "affinity.nodeAffinity")


def required_node_affinity(node_selector: Mapping[str, str], affinity: Any) -> NodeAffinity:
    """kube's ``RequiredNodeAffinity`` of a pod with this ``spec.nodeSelector`` and
    ``spec.affinity`` (JSON; None for none)."""
    selector = _string_map(node_selector, "nodeSelector")
    required = _node_affinity(affinity).get(REQUIRED_NODE_AFFINITY)
    return _cached(_REQUIRED, (selector, required), _parse_required)


@dataclass(frozen=True)
class PreferredNodeAffinity:
    """A pod's preferred node affinity: (weight, term) for every term that counts."""

    terms: tuple[tuple[int, NodeSelectorTerm], ...]

    @property
    def key(self) -> tuple[Any, ...]:
        return tuple((weight, term.key) for weight, term in self.terms)

    def score(self, labels: Mapping[str, str], name: str) -> int:
        """``PreferredSchedulingTerms.Score``: the weights of the terms the node matches."""
        return sum(weight for weight, term in self.terms if term.matches(labels, name))


def _parse_preferred(preferred: Any) -> PreferredNodeAffinity:
    path = f"affinity.nodeAffinity.{PREFERRED_NODE_AFFINITY}"
    terms = []
    errors = []
    for p, item in _maps(preferred, path):
        weight = item.get("weight")
        if weight is None:
            weight = 0
        if type(weight) is not int or not _INT32_MIN <= weight <= _INT32_MAX:
            raise _field_error(child_path(p, "weight"),
                               messages.SELECTOR_BAD_WEIGHT.format(value=_shown(weight)))
        term = _map(item.get("preference"), child_path(p, "preference"))
        if weight == 0:
            continue  # skipped unparsed, as Kubernetes does
        try:
            parsed = _node_selector_term(term, child_path(p, "preference"))
        except _RequirementError as e:
            errors.append(str(e))
            continue
        if parsed is not None:
            terms.append((weight, parsed))
    if errors:
        raise SelectorError("; ".join(errors))
    return PreferredNodeAffinity(tuple(sorted(terms, key=lambda t: (t[0], t[1].key))))


def preferred_node_affinity(affinity: Any) -> PreferredNodeAffinity:
    """The preferred node selector terms of a pod's ``spec.affinity`` (JSON); raises
    ``SelectorError`` for a term kube-scheduler cannot parse."""
    preferred = _node_affinity(affinity).get(PREFERRED_NODE_AFFINITY)
    return _cached(_PREFERRED, preferred, _parse_preferred)


# --------------------------------------------------------------------------- tolerations


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``Toleration.ToleratesTaint``: an empty effect tolerates every effect, an empty key
    every key; operator "" or "Equal" compares values, "Exists" ignores them; any other
    operator tolerates nothing."""
    toleration = _map(toleration, "toleration")
    taint = _map(taint, "taint")
    effect = _str(toleration.get("effect"), "toleration.effect")
    if effect and effect != _str(taint.get("effect"), "taint.effect"):
        return False
    key = _str(toleration.get("key"), "toleration.key")
    if key and key != _str(taint.get("key"), "taint.key"):
        return False
    operator = _str(toleration.get("operator"), "toleration.operator")
    if operator in ("", EQUAL):
        return (_str(toleration.get("value"), "toleration.value")
                == _str(taint.get("value"), "taint.value"))
    return operator == EXISTS


def untolerated_taint(tolerations: Iterable[Mapping[str, Any]],
                      taints: Iterable[Mapping[str, Any]],
                      effects: Collection[str]) -> Mapping[str, Any] | None:
    """The first of ``taints`` with one of ``effects`` that none of ``tolerations``
    tolerates (``FindMatchingUntoleratedTaint``), or None."""
    tolerations = _list(tolerations, "tolerations")
    for taint in _list(taints, "taints"):
        if _str(_map(taint, "taint").get("effect"), "taint.effect") in effects \
                and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


# --------------------------------------------------------------------------- pod affinity


@dataclass(frozen=True)
class PodAffinityTerm:
    """A parsed pod (anti-)affinity term (kube-scheduler's ``AffinityTerm``)."""

    selector: LabelSelector
    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    topology_key: str

    @cached_property
    def key(self) -> tuple[Any, ...]:
        """The canonical form: equal for terms selecting the same pods per domain."""
        return (self.selector.key, tuple(sorted(self.namespaces)),
                self.namespace_selector.key, self.topology_key)

    @property
    def reads_namespace_labels(self) -> bool:
        """Whether the pods it selects depend on namespaces' labels: a namespace selector
        neither nil (no namespace) nor ``{}`` (every namespace)."""
        return bool(self.namespace_selector.requirements)

    def selects(self, labels: Mapping[str, str], namespace: str,
                namespace_labels: Mapping[str, str] | None = None) -> bool:
        """``AffinityTerm.Matches``: whether the term is about a pod with these labels in
        ``namespace``, whose labels are ``namespace_labels``. None is a namespace not
        known: then only ``namespaces`` and a namespace selector ``{}`` (every namespace)
        count, as for the incoming pod's terms in kube-scheduler, which turns their
        namespace selector into the namespaces it selects. For the terms of existing pods
        kube-scheduler reads an unknown namespace as one without labels: pass {} there."""
        if namespace in self.namespaces or (
                self.namespace_selector.requirements == () if namespace_labels is None
                else self.namespace_selector.matches(namespace_labels)):
            return self.selector.matches(labels)
        return False


@dataclass(frozen=True)
class _TermSpec:
    """What a term says before it is given its owner."""

    selector: LabelSelector
    match_label_keys: tuple[str, ...]
    mismatch_label_keys: tuple[str, ...]
    namespaces: frozenset[str]
    owner_namespace: bool  # no namespaces, no namespaceSelector: the owner's namespace
    namespace_selector: LabelSelector
    topology_key: str


def _parse_term_spec(obj: Any) -> _TermSpec:
    term = _map(obj, "")
    selector = _parse_label_selector(term.get("labelSelector"), "labelSelector")
    namespaces = _strings(term.get("namespaces"), "namespaces")
    namespace_selector = term.get("namespaceSelector")
    return _TermSpec(
        selector=selector,
        match_label_keys=_strings(term.get("matchLabelKeys"), "matchLabelKeys"),
        mismatch_label_keys=_strings(term.get("mismatchLabelKeys"), "mismatchLabelKeys"),
        namespaces=frozenset(namespaces),
        owner_namespace=not namespaces and namespace_selector is None,
        namespace_selector=_parse_label_selector(namespace_selector, "namespaceSelector"),
        topology_key=_str(term.get("topologyKey"), "topologyKey"),
    )


def _label_requirements(keys: Sequence[str], operator: str, labels: Mapping[str, str],
                        field: str) -> list[Requirement]:
    """``key <operator> (labels[key])`` for each of ``keys`` that ``labels`` has,
    validated as the scheduler validates the merged selector."""
    out = []
    for i, key in enumerate(keys):
        if key in labels:
            path = child_path(field, i)
            out.append(_requirement(key, operator, (labels[key],), path, path, indexed=False))
    return out


def _owned_term(spec: _TermSpec, owner_namespace: str,
                owner_labels: Mapping[str, str] | None) -> PodAffinityTerm:
    selector = spec.selector
    if owner_labels is not None:  # (a nil selector stays nil)
        selector = _merged(selector, [
            *_label_requirements(spec.match_label_keys, IN, owner_labels, "matchLabelKeys"),
            *_label_requirements(spec.mismatch_label_keys, NOT_IN, owner_labels,
                                 "mismatchLabelKeys"),
        ])
    return PodAffinityTerm(
        selector=selector,
        namespaces=frozenset((owner_namespace,)) if spec.owner_namespace else spec.namespaces,
        namespace_selector=spec.namespace_selector,
        topology_key=spec.topology_key,
    )


def pod_affinity_term(term: Any, owner_namespace: str,
                      owner_labels: Mapping[str, str] | None = None) -> PodAffinityTerm:
    """A ``PodAffinityTerm`` (JSON) of a pod in ``owner_namespace``: without namespaces
    and namespaceSelector it is about the owner's namespace. Its selector as stored, or,
    given the owner's labels, with its matchLabelKeys / mismatchLabelKeys merged (see the
    module's docstring)."""
    if type(owner_namespace) is not str:
        raise _wrong_type("namespace", "a string", owner_namespace)
    if owner_labels is not None:
        owner_labels = _string_map(owner_labels, "labels")
    data = json_text(term)  # also the key of the owned term
    spec = _TERM_SPECS.get(data, lambda: _parse_term_spec(
        term if data is None else orjson.loads(data)))
    values: tuple[str | None, ...] | None = None
    if owner_labels is not None and spec.selector.requirements is not None:
        values = tuple(owner_labels.get(k) for k in (*spec.match_label_keys,
                                                      *spec.mismatch_label_keys))
    namespace = owner_namespace if spec.owner_namespace else None
    key = None if data is None else (data, namespace, values)
    return _TERMS.get(key, lambda: _owned_term(
        spec, owner_namespace, None if values is None else owner_labels))
