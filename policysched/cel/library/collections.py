"""List and set functions.

* Kubernetes list library: ``sum``, ``min``, ``max``, ``isSorted``, ``includes`` (and the
  list overloads of ``indexOf`` / ``lastIndexOf``, declared in ``strings`` because the
  string overloads share the name).
* cel-go ext lists: ``slice``, ``flatten``, ``distinct``, ``sort``, ``lists.range`` (and the
  list overload of ``reverse``, declared in ``strings``); ``sort_by_keys`` evaluates the
  ``sortBy`` macro (compiler).
* cel-go optional library: ``first``, ``last``.
* cel-go ext sets (as enabled by Kubernetes): ``sets.contains``, ``sets.equivalent``,
  ``sets.intersects``.

Equality is CEL's (``1 == 1u == 1.0``, ``true != 1``); ordering is ``values.compare``.

Deliberate difference from Kubernetes: ``min``/``max``/``isSorted`` on a ``dyn`` list whose
elements cannot be ordered against each other (``[1, 'a']``) raise an error, where
Kubernetes silently skips the failed comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

from ..types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    LIST_DYN,
    STRING,
    TIMESTAMP,
    UINT,
    A,
    Type,
    list_of,
    optional_of,
)
from ..values import (
    INT64_MAX,
    INT64_MIN,
    OVERFLOW,
    UINT64_MAX,
    UINT_OVERFLOW,
    CelError,
    Duration,
    OptionalValue,
    Timestamp,
    UInt,
    cel_equals,
    compare,
    no_such_overload,
)
from .function import Function, Overload, member_overload
from .gosort import go_sort_order

LIST_A = list_of(A)

# Element types with a total order of their own (sort, min/max fast paths).
_ORDERED = frozenset({int, UInt, float, str, bytes, bool, Timestamp, Duration})
_CONTAINERS = frozenset({list, tuple, dict})

_COMPARABLE: tuple[tuple[str, Type], ...] = (
    ("int", INT),
    ("uint", UINT),
    ("double", DOUBLE),
    ("bool", BOOL),
    ("duration", DURATION),
    ("timestamp", TIMESTAMP),
    ("string", STRING),
    ("bytes", BYTES),
)
_SUMMABLE: tuple[tuple[str, Type], ...] = (
    ("int", INT),
    ("uint", UINT),
    ("double", DOUBLE),
    ("duration", DURATION),
)


def _is_list(v: Any) -> bool:
    t = type(v)
    return t is list or t is tuple


# --- membership helpers -----------------------------------------------------------------


class _Members:
    """Fast CEL-equality membership over a list: hashable scalars go to a set (numbers of
    different types hash and compare equal in Python just as in CEL; bools are tagged so
    ``true`` never equals ``1``); lists and maps are compared one by one."""

    __slots__ = ("containers", "keys")

    def __init__(self, items: Any) -> None:
        self.keys: set[Any] = set()
        self.containers: list[Any] = []
        for v in items:
            key = _key(v)
            if key is not _NO_KEY:
                self.keys.add(key)
            elif type(v) in _CONTAINERS:
                self.containers.append(v)

    def __contains__(self, v: Any) -> bool:
        key = _key(v)
        if key is not _NO_KEY:
            return key in self.keys
        if type(v) in _CONTAINERS:
            return any(cel_equals(c, v) for c in self.containers)
        return False


_NO_KEY = object()


def _key(v: Any) -> Any:
    """A hash key with CEL equality, or ``_NO_KEY`` (containers; NaN, equal to nothing)."""
    t = type(v)
    if t is str or t is int or t is UInt or t is bytes:
        return v
    if t is bool:
        return (bool, v)
    if t is float:
        return _NO_KEY if v != v else v
    if t in _CONTAINERS:
        return _NO_KEY
    try:
        hash(v)
    except TypeError:
        return _NO_KEY
    return v


# --- Kubernetes lists -------------------------------------------------------------------


def list_index_of(lst: Any, item: Any) -> int:
    if type(item) is str:
        try:
            return lst.index(item)
        except ValueError:
            return -1
    for i, x in enumerate(lst):
        if cel_equals(x, item):
            return i
    return -1


def list_last_index_of(lst: Any, item: Any) -> int:
    for i in range(len(lst) - 1, -1, -1):
        if cel_equals(lst[i], item):
            return i
    return -1


def list_reverse(lst: Any) -> list[Any]:
    return list(lst[::-1])


def list_sum(lst: Any) -> Any:
    """Sum of ints, uints, doubles or durations (all of one type); ``[].sum()`` is 0."""
    if not _is_list(lst):
        raise no_such_overload("sum", lst)
    if not lst:
        return 0
    t = type(lst[0])
    if t is float:
        acc = 0.0
        for x in lst:
            if type(x) is not float:
                raise no_such_overload("sum", lst)
            acc += x
        return acc
    if t is int or t is UInt:
        total = 0
        high = INT64_MAX if t is int else UINT64_MAX
        low = INT64_MIN if t is int else 0
        for x in lst:
            if type(x) is not t:
                raise no_such_overload("sum", lst)
            total += x
            if not low <= total <= high:
                raise CelError(OVERFLOW if t is int else UINT_OVERFLOW)
        return total if t is int else UInt(total)
    if t is Duration:
        ns = 0
        for x in lst:
            if type(x) is not Duration:
                raise no_such_overload("sum", lst)
            ns += x.ns
        return Duration(ns)
    raise no_such_overload("sum", lst)


def _sum_of(result: Type) -> Callable[[Any], Any] | None:
    """``sum`` for a call the checker typed ``result``: an empty list sums to that type's
    zero (``0.0``, ``0u``, ``duration('0s')``), as Kubernetes' typed overloads give."""
    zero: Any
    if result == DOUBLE:
        zero = 0.0
    elif result == UINT:
        zero = UInt(0)
    elif result == DURATION:
        zero = Duration(0)
    else:
        return None

    def typed_sum(lst: Any) -> Any:
        if _is_list(lst) and not lst:
            return zero
        return list_sum(lst)

    return typed_sum


def _extreme(name: str, lst: Any, prefer: int) -> Any:
    if not _is_list(lst):
        raise no_such_overload(name, lst)
    if not lst:
        raise CelError(f"{name} called on empty list")
    first = lst[0]
    t = type(first)
    if t in _ORDERED:
        for x in lst:
            if type(x) is not t:
                break
        else:
            return min(lst) if prefer > 0 else max(lst)
    result = first
    for x in lst:
        if compare(result, x) == prefer:
            result = x
    return result


def list_min(lst: Any) -> Any:
    return _extreme("min", lst, 1)


def list_max(lst: Any) -> Any:
    return _extreme("max", lst, -1)


def is_sorted(lst: Any) -> bool:
    if not _is_list(lst):
        raise no_such_overload("isSorted", lst)
    if len(lst) < 2:
        if lst and type(lst[0]) not in _ORDERED:
            raise no_such_overload("isSorted", lst[0])
        return True
    t = type(lst[0])
    if t in _ORDERED and all(type(x) is t for x in lst):
        # ``b < a`` rather than ``a > b``: Timestamp/Duration define only ``<``; NaN pairs
        # are unordered and do not make the list unsorted (as Kubernetes).
        return not any(b < a for a, b in pairwise(lst))
    return all(compare(a, b) != 1 for a, b in pairwise(lst))


def includes(target: Any, item: Any) -> bool:
    """Kubernetes ``includes``: list membership, or equality for a non-list receiver."""
    if _is_list(target):
        if type(item) is str:
            return item in target
        return any(cel_equals(x, item) for x in target)
    return cel_equals(target, item)


# --- cel-go ext lists -------------------------------------------------------------------


def slice_(lst: Any, start: Any, end: Any) -> list[Any]:
    if not (_is_list(lst) and type(start) is int and type(end) is int):
        raise no_such_overload("slice", lst, start, end)
    if start < 0 or end < 0:
        raise CelError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CelError(
            f"cannot slice({start}, {end}), start index must be less than or equal to end index"
        )
    if len(lst) < end:
        raise CelError(f"cannot slice({start}, {end}), list is length {len(lst)}")
    return list(lst[start:end])


def _flatten_into(out: list[Any], lst: Any, depth: int) -> None:
    for v in lst:
        t = type(v)
        if depth > 0 and (t is list or t is tuple):
            _flatten_into(out, v, depth - 1)
        else:
            out.append(v)


def flatten(*args: Any) -> list[Any]:
    """``list.flatten()`` one level; ``list.flatten(n)`` n levels (n < 0 is an error)."""
    n = len(args)
    if n in (1, 2) and _is_list(args[0]):
        depth = 1 if n == 1 else args[1]
        if type(depth) is int:
            if depth < 0:
                raise CelError("level must be non-negative")
            out: list[Any] = []
            _flatten_into(out, args[0], depth)
            return out
    raise no_such_overload("flatten", *args)


def distinct(lst: Any) -> list[Any]:
    """The first occurrence of each value, in order (``[1, 1.0, 1u].distinct() == [1]``)."""
    if not _is_list(lst):
        raise no_such_overload("distinct", lst)
    seen: set[Any] = set()
    containers: list[Any] = []
    out: list[Any] = []
    for v in lst:
        key = _key(v)
        if key is not _NO_KEY:
            if key in seen:
                continue
            seen.add(key)
        elif type(v) in _CONTAINERS:
            if any(cel_equals(c, v) for c in containers):
                continue
            containers.append(v)
        out.append(v)
    return out


def sort(lst: Any) -> list[Any]:
    """Sort a list whose elements are all of one comparable type."""
    if not _is_list(lst):
        raise no_such_overload("sort", lst)
    return sort_by_keys(lst, lst)


def sort_by_keys(lst: Any, keys: list[Any]) -> list[Any]:
    """cel-go's ``@sortByAssociatedKeys`` (behind ``sort()`` and the ``sortBy`` macro): the
    elements of ``lst`` ordered by the key at the same position; the keys must all be of one
    comparable type. Where Go's unstable sort could leave a different order than Python's
    (equal keys that are distinct elements, NaN, 0.0 and -0.0), its order is reproduced."""
    if not _is_list(lst):
        raise no_such_overload("@sortByAssociatedKeys", lst, keys)
    if not keys:
        return list(lst)
    t = type(keys[0])
    if t not in _ORDERED:
        raise CelError("list elements must be comparable")
    for x in keys:
        if type(x) is not t:
            raise CelError("list elements must have the same type")
    if not (t is float and any(k != k or k == 0 for k in keys)):
        if keys is lst:  # equal elements are the same value: any sort gives Go's result
            return sorted(lst)
        if len(set(keys)) == len(keys):  # no ties: the order is unique
            return [lst[i] for i in sorted(range(len(lst)), key=keys.__getitem__)]
    return [lst[i] for i in go_sort_order(keys, _less)]


def _less(a: Any, b: Any) -> bool:
    return bool(a < b)  # False whenever a NaN is involved, as cel-go's failed comparison


# The checker's signatures of ``@sortByAssociatedKeys`` (the sortBy macro's call): the
# keys must be a list of one comparable type.
SORT_BY_OVERLOADS: tuple[Overload, ...] = tuple(
    member_overload(f"list_{n}_sortByAssociatedKeys", (LIST_A, list_of(t)), LIST_A)
    for n, t in _COMPARABLE)


# ``lists.range(n)`` builds n elements before any comprehension budget can act: bound it
# (policies are untrusted; no scheduling rule needs a million-element range).
MAX_RANGE = 1_000_000


def lists_range(n: Any) -> list[int]:
    if type(n) is int:
        if n > MAX_RANGE:
            raise CelError(f"lists.range({n}) exceeds the limit of {MAX_RANGE} elements")
        return list(range(n))
    raise no_such_overload("lists.range", n)


def first(lst: Any) -> OptionalValue:
    if _is_list(lst):
        return OptionalValue(lst[0]) if lst else OptionalValue.NONE
    raise no_such_overload("first", lst)


def last(lst: Any) -> OptionalValue:
    if _is_list(lst):
        return OptionalValue(lst[-1]) if lst else OptionalValue.NONE
    raise no_such_overload("last", lst)


# --- sets -------------------------------------------------------------------------------


def _all_str(lst: Any) -> bool:
    for x in lst:  # noqa: SIM110 - a plain loop is faster than all() on small lists
        if type(x) is not str:
            return False
    return True


# Up to this many element comparisons, sets functions scan instead of building a set.
_SCAN_LIMIT = 64


def _in_list(x: Any, lst: Any) -> bool:
    if type(x) is str:
        return x in lst  # a string equals only an equal string
    return any(cel_equals(y, x) for y in lst)


def _contains_all(lst: Any, sub: Any) -> bool:
    if not sub:
        return True
    if not lst:
        return False
    if len(lst) * len(sub) <= _SCAN_LIMIT:
        for x in sub:  # noqa: SIM110 - faster than all() on small lists
            if not _in_list(x, lst):
                return False
        return True
    if _all_str(lst) and _all_str(sub):
        return set(lst).issuperset(sub)
    members = _Members(lst)
    return all(x in members for x in sub)


def sets_contains(lst: Any, sub: Any) -> bool:
    """Whether every element of ``sub`` is in ``lst``."""
    if _is_list(lst) and _is_list(sub):
        return _contains_all(lst, sub)
    raise no_such_overload("sets.contains", lst, sub)


def sets_equivalent(a: Any, b: Any) -> bool:
    """Whether both lists hold the same set of values (order and duplicates ignored)."""
    if _is_list(a) and _is_list(b):
        return _contains_all(a, b) and _contains_all(b, a)
    raise no_such_overload("sets.equivalent", a, b)


def sets_intersects(a: Any, b: Any) -> bool:
    """Whether the lists share at least one value."""
    if _is_list(a) and _is_list(b):
        if not a or not b:
            return False
        if len(a) * len(b) <= _SCAN_LIMIT:
            for x in a:  # noqa: SIM110 - faster than any() on small lists
                if _in_list(x, b):
                    return True
            return False
        if _all_str(a) and _all_str(b):
            return not set(b).isdisjoint(a)
        members = _Members(b)
        return any(x in members for x in a)
    raise no_such_overload("sets.intersects", a, b)


FUNCTIONS: list[Function] = [
    Function(
        "sum",
        tuple(member_overload(f"list_{n}_sum_{n}", (list_of(t),), t) for n, t in _SUMMABLE),
        list_sum,
        cost_per_size=True,
        doc="sum of a list of ints, uints, doubles or durations; an empty list sums to the "
            "zero of its element type (0 when that type is dyn)",
        examples=("[1, 2, 3].sum()", "nodePods.map(p, p.priority).sum()",
                  "[0.5, 1.5].filter(x, x > 2.0).sum()"),
        for_result=_sum_of,
    ),
    Function(
        "min",
        tuple(member_overload(f"list_{n}_min_{n}", (list_of(t),), t) for n, t in _COMPARABLE),
        list_min,
        cost_per_size=True,
        doc="smallest element; error on an empty list",
        examples=("[3, 1, 2].min()",),
    ),
    Function(
        "max",
        tuple(member_overload(f"list_{n}_max_{n}", (list_of(t),), t) for n, t in _COMPARABLE),
        list_max,
        cost_per_size=True,
        doc="largest element; error on an empty list",
        examples=("nodes.map(n, n.podCount).max()",),
    ),
    Function(
        "isSorted",
        tuple(member_overload(f"list_{n}_is_sorted_bool", (list_of(t),), BOOL)
              for n, t in _COMPARABLE),
        is_sorted,
        cost_per_size=True,
        doc="whether the elements are in ascending order",
        examples=("[1, 2, 2, 3].isSorted()",),
    ),
    Function(
        "includes",
        (member_overload("list_includes_dyn_dyn", (DYN, DYN), BOOL),),
        includes,
        cost_per_size=True,
        doc="whether the list holds the value (equality for a receiver that is not a list)",
        examples=("['ssd', 'nvme'].includes(node.labels[?'disktype'].orValue(''))",),
    ),
    Function(
        "slice",
        (member_overload("list_slice", (LIST_A, INT, INT), LIST_A),),
        slice_,
        cost_per_size=True,
        doc="list.slice(start, end): elements start..end-1",
        examples=("[1, 2, 3, 4].slice(1, 3)",),
    ),
    Function(
        "flatten",
        (
            member_overload("list_flatten", (list_of(LIST_A),), LIST_A),
            member_overload("list_flatten_int", (LIST_DYN, INT), LIST_DYN),
        ),
        flatten,
        cost_per_size=True,
        doc="the elements of the nested lists, one level deep or `depth` levels",
        examples=("[[1], [2, 3]].flatten()", "[[[1, 2]], [[3]]].flatten(2)"),
    ),
    Function(
        "distinct",
        (member_overload("list_distinct", (LIST_A,), LIST_A),),
        distinct,
        cost_per_size=True,
        doc="the elements without repeats, in order of first occurrence",
        examples=("['a', 'b', 'a'].distinct()",),
    ),
    Function(
        "sort",
        tuple(member_overload(f"list_{n}_sort", (list_of(t),), list_of(t)) for n, t in _COMPARABLE),
        sort,
        cost_per_size=True,
        doc="the elements in ascending order",
        examples=("[3, 1, 2].sort()",),
    ),
    Function(
        "lists.range",
        (Overload("lists_range", (INT,), list_of(INT)),),
        lists_range,
        doc="lists.range(n): [0, 1, ..., n-1]",
        examples=("lists.range(3)",),
    ),
    Function("first", (member_overload("list_first", (LIST_A,), optional_of(A)),), first,
             doc="the first element, or optional.none() for an empty list",
             examples=("pod.tolerations.first()", "[].first()")),
    Function("last", (member_overload("list_last", (LIST_A,), optional_of(A)),), last,
             doc="the last element, or optional.none() for an empty list",
             examples=("[1, 2, 3].last()",)),
    Function(
        "sets.contains",
        (Overload("list_sets_contains_list", (LIST_A, LIST_A), BOOL),),
        sets_contains,
        cost_per_size=True,
        doc="whether the first list holds every element of the second",
        examples=("sets.contains(['a', 'b', 'c'], ['a', 'c'])",),
    ),
    Function(
        "sets.equivalent",
        (Overload("list_sets_equivalent_list", (LIST_A, LIST_A), BOOL),),
        sets_equivalent,
        cost_per_size=True,
        doc="whether the two lists hold the same elements, ignoring order and repeats",
        examples=("sets.equivalent([1, 2], [2, 1, 1])",),
    ),
    Function(
        "sets.intersects",
        (Overload("list_sets_intersects_list", (LIST_A, LIST_A), BOOL),),
        sets_intersects,
        cost_per_size=True,
        doc="whether the two lists have an element in common",
        examples=("sets.intersects(['zone-a', 'zone-b'], "
                  "[node.labels[?'topology.kubernetes.io/zone'].orValue('')])",),
    ),
]
