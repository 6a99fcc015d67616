"""Unit tests of the list and set functions (Kubernetes lists, cel-go ext lists and sets)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from policysched.cel import CelCompileError, Environment, compile_expression
from policysched.cel.library import collections as C
from policysched.cel.values import INT64_MAX, CelError, Duration, OptionalValue, Timestamp, UInt


def _err(fn: Any, *args: Any) -> str:
    with pytest.raises(CelError) as info:
        fn(*args)
    return info.value.message


def _same(got: Any, want: Any) -> bool:
    """Equal values of the same Python types (1 is not 1.0 or 1u; true is not 1)."""
    if type(got) is not type(want):
        return False
    if isinstance(want, list):
        return len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want, strict=True))
    if isinstance(want, float) and math.isnan(want):
        return math.isnan(got)
    return bool(got == want)


# --- Kubernetes lists -------------------------------------------------------------------


def test_sum() -> None:
    assert _same(C.list_sum([1, 3]), 4)
    assert _same(C.list_sum([1.0, 3.0]), 4.0)
    assert _same(C.list_sum([UInt(1), UInt(2)]), UInt(3))
    assert C.list_sum([Duration(60 * 10**9), Duration(10**9)]) == Duration(61 * 10**9)
    assert _same(C.list_sum([]), 0)
    assert _same(C.list_sum(()), 0)
    assert "overflow" in _err(C.list_sum, [INT64_MAX, 1])
    assert "overflow" in _err(C.list_sum, [INT64_MAX, 1, -1])  # intermediate overflow
    assert "overflow" in _err(C.list_sum, [UInt(0), UInt(1), UInt(2**64 - 1)])
    assert "no such overload" in _err(C.list_sum, [1, 2.0])
    assert "no such overload" in _err(C.list_sum, [1, True])
    assert "no such overload" in _err(C.list_sum, ["a"])
    assert "no such overload" in _err(C.list_sum, "ab")


def test_min_max() -> None:
    assert _same(C.list_min([1, 3]), 1)
    assert _same(C.list_max([1, 3]), 3)
    assert _same(C.list_min([1]), 1)
    assert _same(C.list_max(["b", "c", "a"]), "c")
    assert _same(C.list_min([True, False]), False)
    assert C.list_max([Timestamp(5), Timestamp(9), Timestamp(1)]) == Timestamp(9)
    assert C.list_min([Duration(5), Duration(-1)]) == Duration(-1)
    assert _same(C.list_min([3, 1.0, UInt(2)]), 1.0)  # mixed numbers compare across types
    assert _same(C.list_max([3, 3.0]), 3)  # ties keep the first
    assert _err(C.list_min, []) == "min called on empty list"
    assert _err(C.list_max, []) == "max called on empty list"
    assert "no such overload" in _err(C.list_min, [1, "a"])
    assert "no such overload" in _err(C.list_max, [[1]])


def test_is_sorted() -> None:
    assert C.is_sorted([1, 2, 3]) is True
    assert C.is_sorted(["a", "b", "b", "c"]) is True
    assert C.is_sorted([2.0, 1.0]) is False
    assert C.is_sorted([1]) is True
    assert C.is_sorted([]) is True
    assert C.is_sorted([1, 2.5, UInt(3)]) is True
    assert C.is_sorted([1, 2.5, UInt(2)]) is False
    assert C.is_sorted([Timestamp(1), Timestamp(2)]) is True
    assert C.is_sorted([Duration(2), Duration(1)]) is False
    assert "no such overload" in _err(C.is_sorted, [{}])
    assert "no such overload" in _err(C.is_sorted, [1, "a"])


def test_includes() -> None:
    assert C.includes([1, 2, 3], 2) is True
    assert C.includes([1, 2, 3], 4) is False
    assert C.includes([1, 2, 3], 2.0) is True
    assert C.includes([1], True) is False
    assert C.includes(["a"], "a") is True
    assert C.includes("model-a", "model-a") is True
    assert C.includes("model-a", "model-b") is False


# --- cel-go ext lists -------------------------------------------------------------------


def test_slice() -> None:
    assert C.slice_([1, 2, 3, 4], 1, 3) == [2, 3]
    assert C.slice_([1, 2, 3, 4], 2, 4) == [3, 4]
    assert C.slice_((1, 2), 0, 0) == []
    assert _err(C.slice_, [1, 2], -1, 1) == "cannot slice(-1, 1), negative indexes not supported"
    assert "start index must be less than or equal to end index" in _err(C.slice_, [1, 2], 2, 1)
    assert _err(C.slice_, [1, 2], 0, 3) == "cannot slice(0, 3), list is length 2"
    assert "no such overload" in _err(C.slice_, [1], 0, 1.0)


def test_flatten() -> None:
    assert C.flatten([1, [2, 3], [4]]) == [1, 2, 3, 4]
    assert C.flatten([1, [2, [3, 4]]]) == [1, 2, [3, 4]]
    assert C.flatten([1, 2, [], [], [3, 4]]) == [1, 2, 3, 4]
    assert C.flatten([1, [2, [3, [4]]]], 2) == [1, 2, 3, [4]]
    assert C.flatten([1, [2, [3, [4]]]], 0) == [1, [2, [3, [4]]]]
    assert C.flatten([1, (2, (3,))], 10) == [1, 2, 3]
    assert C.flatten([1, 2]) == [1, 2]  # already flat
    assert _err(C.flatten, [1, [2]], -1) == "level must be non-negative"
    assert "no such overload" in _err(C.flatten, "ab")
    assert "no such overload" in _err(C.flatten, [1], "1")


def test_distinct() -> None:
    assert C.distinct([1, 2, 2, 3, 3, 3]) == [1, 2, 3]
    assert C.distinct(["b", "b", "c", "a", "c"]) == ["b", "c", "a"]
    assert C.distinct([1, "b", 2, "b"]) == [1, "b", 2]
    got = C.distinct([1, 1.0, UInt(1), True, True, [1], [1.0], {"a": 1}, {"a": 1.0}, None, None])
    assert _same(got[0], 1) and got[1] is True
    assert got[2:] == [[1], {"a": 1}, None]
    nans = C.distinct([math.nan, math.nan])
    assert len(nans) == 2  # NaN equals nothing, not even NaN
    assert C.distinct([Duration(1), Duration(1), Timestamp(1)]) == [Duration(1), Timestamp(1)]
    assert C.distinct([]) == []


def test_reverse_and_range() -> None:
    assert C.list_reverse([5, 3, 1, 2]) == [2, 1, 3, 5]
    assert C.list_reverse(()) == []
    assert C.lists_range(5) == [0, 1, 2, 3, 4]
    assert C.lists_range(0) == []
    assert C.lists_range(-3) == []
    assert "no such overload" in _err(C.lists_range, 2.0)


def test_sort() -> None:
    assert C.sort([3, 2, 1]) == [1, 2, 3]
    assert C.sort(["b", "c", "a"]) == ["a", "b", "c"]
    assert C.sort([b"b", b"a"]) == [b"a", b"b"]
    assert C.sort([True, False]) == [False, True]
    assert C.sort([Duration(3), Duration(-1)]) == [Duration(-1), Duration(3)]
    assert C.sort([]) == []
    assert _err(C.sort, [1, "b"]) == "list elements must have the same type"
    assert _err(C.sort, [1, 2.0]) == "list elements must have the same type"
    assert _err(C.sort, [[1, 2, 3]]) == "list elements must be comparable"


# sortBy, from apiextensions-apiserver's CEL validation tests (cel-go ext lists v3).
SORT_BY_CASES = [
    "[].sortBy(e, e) == []",
    '["a"].sortBy(e, e) == ["a"]',
    "[-3, 1, -5, -2, 4].sortBy(e, -(e * e)) == [-5, 4, -3, -2, 1]",
    "[-3, 1, -5, -2, 4].map(e, e * 2).sortBy(e, -(e * e)) == [-10, 8, -6, -4, 2]",
    "lists.range(3).sortBy(e, -e) == [2, 1, 0]",
    '["a", "c", "b", "first"].sortBy(e, e == "first" ? "" : e) == ["first", "a", "b", "c"]',
    "[{'name': 'foo'}, {'name': 'bar'}, {'name': 'baz'}].sortBy(e, e.name) == "
    "[{'name': 'bar'}, {'name': 'baz'}, {'name': 'foo'}]",
    "[3, 1, 2].sortBy(e, dyn(e)) == [1, 2, 3]",
    "[1, 2, 3, 4].sortBy(e, e % 2) == [2, 4, 1, 3]",  # equal keys keep their order
    "[10].all(e, [3, 1].sortBy(e, e) == [1, 3] && e == 10)",  # e is scoped to the macro
]


@pytest.mark.parametrize("expr", SORT_BY_CASES)
def test_sort_by(expr: str) -> None:
    assert compile_expression(expr, Environment()).evaluate({}) is True


@pytest.mark.parametrize(
    ("expr", "kind", "message"),
    [
        ("[1, 2].sortBy(e, [e])", "type",
         "found no matching overload for '@sortByAssociatedKeys' applied to "
         "'list(int).(list(list(int)))'"),
        ("{'a': 1}.sortBy(k, k)", "syntax", "sortBy can only be applied to a list, "
         "identifier, comprehension, call or select expression"),
        ("1.sortBy(e, e)", "syntax", "sortBy can only be applied to a list"),
        ("[1].sortBy(1, e)", "syntax", "argument must be a simple name"),
    ],
)
def test_sort_by_compile_errors(expr: str, kind: str, message: str) -> None:
    with pytest.raises(CelCompileError) as info:
        compile_expression(expr, Environment())
    assert info.value.kind.value == kind
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("[dyn(1), dyn('a')].sortBy(e, e)", "list elements must have the same type"),
        ("dyn([[1], [2]]).sortBy(e, e)", "list elements must be comparable"),
        ("dyn({'b': 1}).sortBy(k, k)", "no such overload"),
    ],
)
def test_sort_by_runtime_errors(expr: str, message: str) -> None:
    with pytest.raises(CelError, match=message):
        compile_expression(expr, Environment()).evaluate({})


def test_sort_order_is_gos_unstable_one() -> None:
    """Beyond 12 elements Go's sort.Slice is not stable; its orders (from cel-go in the
    Kubernetes 1.34 environment) are reproduced."""
    env = Environment()
    assert compile_expression("lists.range(20).sortBy(e, e % 2)", env).evaluate({}) == [
        10, 18, 2, 16, 4, 0, 6, 14, 8, 12, 5, 11, 9, 13, 7, 15, 3, 17, 1, 19]
    assert compile_expression("lists.range(14).sortBy(e, e % 3)", env).evaluate({}) == [
        6, 12, 9, 3, 0, 4, 1, 10, 7, 13, 8, 5, 2, 11]
    nan = float("nan")
    got = C.sort([3.0, nan, 1.0, 2.0, nan, 0.0])  # NaN is never less: insertion sort stops
    assert _same(got, [3.0, nan, 1.0, 2.0, nan, 0.0])


def test_sort_by_keys() -> None:
    assert C.sort_by_keys(["foo", "bar", "baz"], [3, 1, 2]) == ["bar", "baz", "foo"]
    assert C.sort_by_keys([], []) == []
    assert _err(C.sort_by_keys, [1, 2], [1, "a"]) == "list elements must have the same type"


def test_sort_by_cost_counts_the_keys_and_the_sort() -> None:
    env = Environment()
    plain = compile_expression("[3, 1, 2].map(e, -e)", env).cost
    assert compile_expression("[3, 1, 2].sortBy(e, -e)", env).cost == plain + 3


def test_first_last() -> None:
    assert C.first([1, 2, 3]) == OptionalValue(1)
    assert C.last([1, 2, 3]) == OptionalValue(3)
    assert C.first([]) is OptionalValue.NONE
    assert C.last(()) is OptionalValue.NONE
    assert C.first([None]).has is True
    assert "no such overload" in _err(C.first, "abc")


# --- sets -------------------------------------------------------------------------------


def test_sets_contains() -> None:
    assert C.sets_contains([], []) is True
    assert C.sets_contains([1], []) is True
    assert C.sets_contains([], [1]) is False
    assert C.sets_contains([1, 2, 3, 4], [2, 3]) is True
    assert C.sets_contains([1, 2, 3], [3.0, UInt(2)]) is True
    assert C.sets_contains([True], [1]) is False
    assert C.sets_contains(["a", "b"], ["b", "b", "a"]) is True
    assert C.sets_contains(["a"], ["a", "c"]) is False
    assert C.sets_contains([[1], [2, 3]], [[2.0, 3]]) is True
    assert C.sets_contains([{"a": 1}], [{"a": UInt(1)}]) is True
    assert C.sets_contains([math.nan], [math.nan]) is False
    assert "no such overload" in _err(C.sets_contains, [1], 1)


def test_sets_equivalent() -> None:
    assert C.sets_equivalent([], []) is True
    assert C.sets_equivalent([1], [1, 1]) is True
    assert C.sets_equivalent([1, 2, 3], [3, 2.0, UInt(1)]) is True
    assert C.sets_equivalent([1, 2], [1, 2, 3]) is False
    assert C.sets_equivalent([[1], [2]], [[2.0], [1]]) is True
    assert C.sets_equivalent(["a"], ["b"]) is False


def test_sets_intersects() -> None:
    assert C.sets_intersects([], []) is False
    assert C.sets_intersects([1], []) is False
    assert C.sets_intersects([1, 2], [2, 3]) is True
    assert C.sets_intersects([1], [1.0]) is True
    assert C.sets_intersects([1], [True]) is False
    assert C.sets_intersects(["a", "b"], ["c", "b"]) is True
    assert C.sets_intersects(["a"], ["c"]) is False
    assert C.sets_intersects([[1]], [[1.0], 2]) is True
    assert "no such overload" in _err(C.sets_intersects, "a", ["a"])


def test_declarations() -> None:
    names = [f.name for f in C.FUNCTIONS]
    assert len(names) == len(set(names))
    assert {"sum", "min", "max", "isSorted", "slice", "flatten", "distinct", "sort",
            "lists.range", "first", "last", "sets.contains", "sets.equivalent",
            "sets.intersects"} <= set(names)
    sets = [f for f in C.FUNCTIONS if f.name.startswith("sets.")]
    assert all(not o.member for f in sets for o in f.overloads)


@pytest.mark.parametrize(("text", "want"), [
    ("[0.5].filter(x, x > 1.0).sum()", 0.0),     # list(double): 0.0, as Kubernetes' overload
    ("[1u].filter(x, x > 1u).sum()", UInt(0)),
    ("[duration('1s')].filter(x, x > duration('1s')).sum()", Duration(0)),
    ("[1].filter(x, x > 1).sum()", 0),
    ("[].sum()", 0),
    ("dyn([]).sum()", 0),                          # dyn: Kubernetes' int overload
    ("[0.5, 1.5].sum()", 2.0),
])
def test_sum_of_an_empty_list_is_the_zero_of_its_static_type(text: str, want: Any) -> None:
    got = compile_expression(text, Environment()).evaluate({})
    assert got == want and type(got) is type(want)
