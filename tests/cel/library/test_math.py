"""Unit tests of the ext math library (cases from cel-spec's math_ext conformance file)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from policysched.cel import Environment, compile_expression
from policysched.cel.library import math as M
from policysched.cel.values import INT64_MAX, INT64_MIN, UINT64_MAX, CelError, UInt

BIG = 1.797693e308


def _err(fn: Any, *args: Any) -> str:
    with pytest.raises(CelError) as info:
        fn(*args)
    return info.value.message


def _same(got: Any, want: Any) -> bool:
    if type(got) is not type(want):
        return False
    if isinstance(want, float):
        if math.isnan(want):
            return math.isnan(got)
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return bool(got == want)


@pytest.mark.parametrize(
    ("args", "want"),
    [
        ((-5,), -5),
        ((5.0,), 5.0),
        ((UInt(5),), UInt(5)),
        ((1, 1), 1),
        ((1, 1.0), 1),  # ties keep the first argument
        ((1.0, 1), 1.0),
        ((3, -3), 3),
        ((-7, 5), 5),
        ((INT64_MAX, 1), INT64_MAX),
        ((INT64_MIN, 1), 1),
        ((BIG, 1), BIG),
        ((-BIG, 1.5), 1.5),
        ((UInt(5), -7), UInt(5)),
        ((-3, UInt(3)), UInt(3)),
        ((UInt(2**64 - 1), UInt(1)), UInt(2**64 - 1)),
        ((10, 1, 3), 10),
        ((1, 3, 10), 10),
        ((-1, -2, -3), -1),
        ((5.4, 10, UInt(3), -5.0, INT64_MAX), INT64_MAX),
        ((5.4, 10, UInt(3), -5.0, UInt(2**64 - 1)), UInt(2**64 - 1)),
        (([5.4, 10, UInt(3), -5.0, 3.5],), 10),
        (([5.4, 10.5, UInt(3), -5.0, 3.5],), 10.5),
        (([5.4, UInt(10), UInt(3), -5.0, 3.5],), UInt(10)),
        (((7,),), 7),
    ],
)
def test_greatest(args: tuple[Any, ...], want: Any) -> None:
    assert _same(M.greatest(*args), want)


@pytest.mark.parametrize(
    ("args", "want"),
    [
        ((-5,), -5),
        ((5.5,), 5.5),
        ((UInt(5),), UInt(5)),
        ((-3, 3), -3),
        ((5, -7), -7),
        ((INT64_MAX, 1), 1),
        ((1, INT64_MIN), INT64_MIN),
        ((BIG, 1.5), 1.5),
        ((1.5, -BIG), -BIG),
        ((UInt(1), 1.0), UInt(1)),
        ((UInt(5), UInt(2)), UInt(2)),
        ((0, 1, 3), 0),
        ((1, 3, 0), 0),
        ((-1, -2, -3), -3),
        ((5.4, 10, UInt(3), -5.0, INT64_MAX), -5.0),
        ((5.4, 10, UInt(3), UInt(1), UInt(2**64 - 1)), UInt(1)),
        (([5.4, 10, UInt(3), -5.0, 3.5],), -5.0),
        (([5.4, UInt(10), UInt(3), UInt(1), 3.5],), UInt(1)),
    ],
)
def test_least(args: tuple[Any, ...], want: Any) -> None:
    assert _same(M.least(*args), want)


def test_greatest_least_errors() -> None:
    assert "must not be empty" in _err(M.greatest, [])
    assert "must not be empty" in _err(M.least, ())
    assert "no such overload" in _err(M.greatest, "a")
    assert "no such overload" in _err(M.greatest, 1, "a")
    assert "no such overload" in _err(M.least, [1, "a"])
    assert "no such overload" in _err(M.least, ["a"])
    assert "no such overload" in _err(M.greatest, True, 1)
    assert "no such overload" in _err(M.greatest)
    assert "NaN" in _err(M.greatest, 1.0, math.nan)
    assert "NaN" in _err(M.least, [math.nan, 1])


@pytest.mark.parametrize(
    ("fn", "x", "want"),
    [
        (M.ceil, -1.2, -1.0),
        (M.ceil, 1.2, 2.0),
        (M.ceil, -0.5, -0.0),
        (M.floor, -1.2, -2.0),
        (M.floor, 1.2, 1.0),
        (M.round_, -1.6, -2.0),
        (M.round_, -1.4, -1.0),
        (M.round_, -1.5, -2.0),
        (M.round_, 1.2, 1.0),
        (M.round_, 1.5, 2.0),
        (M.round_, 2.5, 3.0),  # half away from zero, not to even
        (M.round_, 0.49999999999999994, 0.0),
        (M.round_, -0.4, -0.0),
        (M.round_, 4503599627370495.5, 4503599627370496.0),
        (M.trunc, -1.2, -1.0),
        (M.trunc, 1.2, 1.0),
        (M.trunc, 1e300, 1e300),
        (M.ceil, math.inf, math.inf),
        (M.floor, -math.inf, -math.inf),
        (M.round_, math.nan, math.nan),
        (M.trunc, math.nan, math.nan),
    ],
)
def test_rounding(fn: Any, x: float, want: float) -> None:
    assert _same(fn(x), want)


@pytest.mark.parametrize("fn", [M.ceil, M.floor, M.round_, M.trunc, M.is_inf, M.is_nan,
                                M.is_finite])
def test_double_only_functions_reject_ints(fn: Any) -> None:
    assert "no such overload" in _err(fn, 1)
    assert "no such overload" in _err(fn, True)


def test_abs_sign_sqrt() -> None:
    assert _same(M.abs_(UInt(1)), UInt(1))
    assert _same(M.abs_(1), 1)
    assert _same(M.abs_(-11), 11)
    assert _same(M.abs_(1.5), 1.5)
    assert _same(M.abs_(-11.5), 11.5)
    assert "overflow" in _err(M.abs_, INT64_MIN)
    assert _same(M.sign(UInt(100)), UInt(1))
    assert _same(M.sign(UInt(0)), UInt(0))
    assert _same(M.sign(100), 1)
    assert _same(M.sign(-11), -1)
    assert _same(M.sign(0), 0)
    assert _same(M.sign(100.5), 1.0)
    assert _same(M.sign(-32.0), -1.0)
    assert _same(M.sign(0.0), 0.0)
    assert math.isnan(M.sign(math.nan))
    assert "no such overload" in _err(M.sign, True)
    assert _same(M.sqrt(49.0), 7.0)
    assert _same(M.sqrt(16), 4.0)
    assert _same(M.sqrt(UInt(4)), 2.0)
    assert math.isnan(M.sqrt(-1.0))
    assert "no such overload" in _err(M.sqrt, "4")


def test_classification() -> None:
    assert M.is_nan(math.nan) is True
    assert M.is_nan(math.inf) is False
    assert M.is_inf(math.inf) is True
    assert M.is_inf(-math.inf) is True
    assert M.is_inf(math.nan) is False
    assert M.is_finite(1.0 / 1.5) is True
    assert M.is_finite(math.nan) is False
    assert M.is_finite(-math.inf) is False


def test_bit_operations() -> None:
    assert _same(M.bit_and(1, 2), 0)
    assert _same(M.bit_and(1, 3), 1)
    assert _same(M.bit_and(1, -1), 1)
    assert _same(M.bit_and(UInt(1), UInt(3)), UInt(1))
    assert _same(M.bit_or(1, 2), 3)
    assert _same(M.bit_or(4, -2), -2)
    assert _same(M.bit_or(UInt(1), UInt(4)), UInt(5))
    assert _same(M.bit_xor(1, 3), 2)
    assert _same(M.bit_xor(4, -2), -6)
    assert _same(M.bit_xor(UInt(1), UInt(3)), UInt(2))
    assert _same(M.bit_not(1), -2)
    assert _same(M.bit_not(-1), 0)
    assert _same(M.bit_not(0), -1)
    assert _same(M.bit_not(UInt(1)), UInt(UINT64_MAX - 1))
    assert _same(M.bit_not(UInt(0)), UInt(UINT64_MAX))
    for fn in (M.bit_and, M.bit_or, M.bit_xor):
        assert "no such overload" in _err(fn, UInt(2), "")
        assert "no such overload" in _err(fn, 1, UInt(1))
        assert "no such overload" in _err(fn, 1.2, 1)
        assert "no such overload" in _err(fn, True, 1)
    assert "no such overload" in _err(M.bit_not, "")


def test_shifts() -> None:
    assert _same(M.bit_shift_left(1, 2), 4)
    assert _same(M.bit_shift_left(1, 200), 0)
    assert _same(M.bit_shift_left(-1, 200), 0)
    assert _same(M.bit_shift_left(1, 63), INT64_MIN)  # wraps like Go's int64
    assert _same(M.bit_shift_left(3, 63), INT64_MIN)
    assert _same(M.bit_shift_left(UInt(1), 2), UInt(4))
    assert _same(M.bit_shift_left(UInt(1), 200), UInt(0))
    assert _same(M.bit_shift_left(UInt(3), 63), UInt(2**63))
    assert _same(M.bit_shift_right(1024, 2), 256)
    assert _same(M.bit_shift_right(1024, 64), 0)
    assert _same(M.bit_shift_right(-1024, 3), 2305843009213693824)
    assert _same(M.bit_shift_right(-1024, 64), 0)
    assert _same(M.bit_shift_right(-1, 0), -1)
    assert _same(M.bit_shift_right(UInt(1024), 2), UInt(256))
    assert _same(M.bit_shift_right(UInt(1024), 200), UInt(0))
    assert "negative offset" in _err(M.bit_shift_left, UInt(1), -1)
    assert "negative offset" in _err(M.bit_shift_right, UInt(1), -1)
    assert "no such overload" in _err(M.bit_shift_left, 4.3, 1)
    assert "no such overload" in _err(M.bit_shift_right, b"123", 1)
    assert "no such overload" in _err(M.bit_shift_right, 1, UInt(1))


def test_declarations() -> None:
    names = {f.name for f in M.FUNCTIONS}
    assert all(n.startswith("math.") for n in names)
    assert {"math.greatest", "math.least", "math.bitShiftRight", "math.sqrt"} <= names
    greatest = next(f for f in M.FUNCTIONS if f.name == "math.greatest")
    assert any(o.varargs for o in greatest.overloads)


@pytest.mark.parametrize(("text", "expected"), [
    ("math.ln(1)", 0.0), ("math.ln(5)", math.log(5)), ("math.ln(2.5)", math.log(2.5)),
    ("math.ln(0)", -math.inf), ("math.ln(-1.0)", math.nan), ("math.ln(5u)", math.log(5)),
])
def test_ln_is_go_math_log(text: str, expected: float) -> None:
    value = compile_expression(text, Environment()).evaluate({})
    assert value == expected or (math.isnan(value) and math.isnan(expected))
