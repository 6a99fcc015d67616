"""cel-go's ``ext.Math`` library: ``math.greatest`` / ``math.least`` (varargs or one list),
rounding, ``abs``/``sign``/``sqrt``, float classification and bit operations.

In cel-go ``math.greatest``/``math.least`` are macros over ``math.@max``/``math.@min``; here
they are ordinary functions taking one number, one list of numbers, or two or more numbers.
Mixed int/uint/double arguments are compared exactly and the winner keeps its own type;
ties keep the earlier argument.
"""

from __future__ import annotations

import math
from itertools import product
from typing import Any

from ..types import BOOL, DOUBLE, DYN, INT, UINT, Type, list_of
from ..values import INT64_MIN, OVERFLOW, UINT64_MAX, CelError, UInt, no_such_overload
from .function import Function, Overload

_MASK64 = UINT64_MAX
_SIGN_BIT = 1 << 63
_NUMBERS = (INT, UINT, DOUBLE)
_NAMES = {INT: "int", UINT: "uint", DOUBLE: "double"}


def _is_num(v: Any) -> bool:
    t = type(v)
    return t is int or t is float or t is UInt


# --- greatest / least -------------------------------------------------------------------


def _pick(name: str, a: Any, b: Any, greater: bool) -> Any:
    """``b`` if it strictly beats ``a``, else ``a``; both must be numbers, NaN is an error."""
    ta, tb = type(a), type(b)
    if not ((ta is int or ta is float or ta is UInt) and (tb is int or tb is float or tb is UInt)):
        raise no_such_overload(name, a, b)
    if a != a or b != b:
        raise CelError(f"{name}: NaN values cannot be ordered")
    if greater:
        return b if b > a else a
    return b if b < a else a


def _extreme(name: str, args: Any, greater: bool) -> Any:
    if not args:
        raise CelError(f"{name}(list) argument must not be empty")
    result = args[0]
    if len(args) == 1:
        if not _is_num(result):
            raise no_such_overload(name, result)
        return result
    for v in args[1:]:
        result = _pick(name, result, v, greater)
    return result


def greatest(*args: Any) -> Any:
    if len(args) == 1:
        v = args[0]
        t = type(v)
        if t is int or t is float or t is UInt:
            return v
        if t is list or t is tuple:
            return _extreme("math.greatest", v, True)
        raise no_such_overload("math.greatest", v)
    if len(args) == 2:
        return _pick("math.greatest", args[0], args[1], True)
    if not args:
        raise no_such_overload("math.greatest")
    return _extreme("math.greatest", args, True)


def least(*args: Any) -> Any:
    if len(args) == 1:
        v = args[0]
        t = type(v)
        if t is int or t is float or t is UInt:
            return v
        if t is list or t is tuple:
            return _extreme("math.least", v, False)
        raise no_such_overload("math.least", v)
    if len(args) == 2:
        return _pick("math.least", args[0], args[1], False)
    if not args:
        raise no_such_overload("math.least")
    return _extreme("math.least", args, False)


# --- rounding ---------------------------------------------------------------------------


def _signed_zero(r: float, x: float) -> float:
    """Go keeps the sign of a zero result (``math.ceil(-0.5)`` is ``-0.0``)."""
    return r if r else math.copysign(0.0, x)


def ceil(x: Any) -> float:
    if type(x) is float:
        return _signed_zero(float(math.ceil(x)), x) if math.isfinite(x) else x
    raise no_such_overload("math.ceil", x)


def floor(x: Any) -> float:
    if type(x) is float:
        return _signed_zero(float(math.floor(x)), x) if math.isfinite(x) else x
    raise no_such_overload("math.floor", x)


def round_(x: Any) -> float:
    """Half away from zero, as Go's ``math.Round`` (not Python's banker's rounding)."""
    if type(x) is float:
        if not math.isfinite(x):
            return x
        r = float(math.trunc(x))
        if abs(x - r) >= 0.5:  # exact: x - trunc(x) is representable
            r += math.copysign(1.0, x)
        return _signed_zero(r, x)
    raise no_such_overload("math.round", x)


def trunc(x: Any) -> float:
    if type(x) is float:
        return _signed_zero(float(math.trunc(x)), x) if math.isfinite(x) else x
    raise no_such_overload("math.trunc", x)


# --- abs / sign / sqrt / classification -------------------------------------------------


def abs_(x: Any) -> Any:
    t = type(x)
    if t is int:
        if x == INT64_MIN:
            raise CelError(OVERFLOW)
        return -x if x < 0 else x
    if t is float:
        return abs(x)
    if t is UInt:
        return x
    raise no_such_overload("math.abs", x)


def sign(x: Any) -> Any:
    t = type(x)
    if t is int:
        return (x > 0) - (x < 0)
    if t is float:
        if x > 0:
            return 1.0
        if x < 0:
            return -1.0
        return x if x != x else 0.0
    if t is UInt:
        return UInt(1 if x else 0)
    raise no_such_overload("math.sign", x)


def sqrt(x: Any) -> float:
    t = type(x)
    if t is float or t is int or t is UInt:
        v = float(x)
        return math.nan if v < 0 else math.sqrt(v)
    raise no_such_overload("math.sqrt", x)


def ln(x: Any) -> float:
    """The natural logarithm (Go's math.Log: NaN below 0, -Inf at 0); not in cel-go's math
    library, needed for kube-scheduler's scores (PodTopologySpread's topology weight)."""
    t = type(x)
    if t is float or t is int or t is UInt:
        v = float(x)
        if math.isnan(v) or v < 0:
            return math.nan
        if v == 0:
            return -math.inf
        return math.inf if math.isinf(v) else math.log(v)
    raise no_such_overload("math.ln", x)


def is_inf(x: Any) -> bool:
    if type(x) is float:
        return math.isinf(x)
    raise no_such_overload("math.isInf", x)


def is_nan(x: Any) -> bool:
    if type(x) is float:
        return x != x
    raise no_such_overload("math.isNaN", x)


def is_finite(x: Any) -> bool:
    if type(x) is float:
        return math.isfinite(x)
    raise no_such_overload("math.isFinite", x)


# --- bits -------------------------------------------------------------------------------


def _to_int64(v: int) -> int:
    v &= _MASK64
    return v - (1 << 64) if v & _SIGN_BIT else v


def bit_and(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return a & b
    if ta is UInt and tb is UInt:
        return UInt(a & b)
    raise no_such_overload("math.bitAnd", a, b)


def bit_or(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return a | b
    if ta is UInt and tb is UInt:
        return UInt(a | b)
    raise no_such_overload("math.bitOr", a, b)


def bit_xor(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return a ^ b
    if ta is UInt and tb is UInt:
        return UInt(a ^ b)
    raise no_such_overload("math.bitXor", a, b)


def bit_not(a: Any) -> Any:
    t = type(a)
    if t is int:
        return ~a
    if t is UInt:
        return UInt(_MASK64 ^ a)
    raise no_such_overload("math.bitNot", a)


def bit_shift_left(v: Any, n: Any) -> Any:
    """Shifts of 64 bits or more give 0; int results wrap in two's complement (Go)."""
    tv = type(v)
    if type(n) is int and (tv is int or tv is UInt):
        if n < 0:
            raise CelError(f"math.bitShiftLeft() negative offset: {n}")
        if n >= 64:
            return 0 if tv is int else UInt(0)
        if tv is int:
            return _to_int64(v << n)
        return UInt((v << n) & _MASK64)
    raise no_such_overload("math.bitShiftLeft", v, n)


def bit_shift_right(v: Any, n: Any) -> Any:
    """Logical shift: negative ints shift in zero bits (Go's ``int(uint(v) >> n)``)."""
    tv = type(v)
    if type(n) is int and (tv is int or tv is UInt):
        if n < 0:
            raise CelError(f"math.bitShiftRight() negative offset: {n}")
        if n >= 64:
            return 0 if tv is int else UInt(0)
        if tv is int:
            return _to_int64((v & _MASK64) >> n)
        return UInt(v >> n)
    raise no_such_overload("math.bitShiftRight", v, n)


# --- declarations -----------------------------------------------------------------------


def _extreme_overloads(prefix: str) -> tuple[Overload, ...]:
    out: list[Overload] = []
    for t in _NUMBERS:
        out.append(Overload(f"{prefix}_{_NAMES[t]}", (t,), t))
    for a, b in product(_NUMBERS, repeat=2):
        out.append(Overload(f"{prefix}_{_NAMES[a]}_{_NAMES[b]}", (a, b), a if a == b else DYN))
    for t in _NUMBERS:
        out.append(Overload(f"{prefix}_list_{_NAMES[t]}", (list_of(t),), t))
    # Three or more arguments: cel-go's macro makes them a list literal, whose element
    # type is dyn as soon as the numbers are mixed; so the result is dyn.
    out.append(Overload(f"{prefix}_varargs", (DYN, DYN, DYN), DYN, varargs=True))
    return tuple(out)


def _unary(name: str, oid: str, params: tuple[Type, ...], result: Type) -> Overload:
    return Overload(f"math_{name}_{oid}", params, result)


def _double_fn(name: str, impl: Any, doc: str, example: str, result: Type = DOUBLE
               ) -> Function:
    return Function(
        f"math.{name}", (Overload(f"math_{name}_double", (DOUBLE,), result),), impl,
        doc=doc, examples=(example,),
    )


def _bit_pair(name: str, impl: Any, doc: str, example: str) -> Function:
    return Function(
        f"math.{name}",
        (
            Overload(f"math_{name}_int_int", (INT, INT), INT),
            Overload(f"math_{name}_uint_uint", (UINT, UINT), UINT),
        ),
        impl,
        doc=doc,
        examples=(example,),
    )


def _bit_shift(name: str, impl: Any, doc: str, example: str) -> Function:
    return Function(
        f"math.{name}",
        (
            Overload(f"math_{name}_int_int", (INT, INT), INT),
            Overload(f"math_{name}_uint_int", (UINT, INT), UINT),
        ),
        impl,
        doc=doc,
        examples=(example,),
    )


FUNCTIONS: list[Function] = [
    Function(
        "math.greatest",
        _extreme_overloads("math_@max"),
        greatest,
        cost_per_size=True,
        doc="math.greatest(a, b, ...) or math.greatest([list]): the largest number",
        examples=("math.greatest(1, 5, 3)", "math.greatest([2.5, 1.0])"),
    ),
    Function(
        "math.least",
        _extreme_overloads("math_@min"),
        least,
        cost_per_size=True,
        doc="math.least(a, b, ...) or math.least([list]): the smallest number",
        examples=("math.least(100, node.podCount * 10)",),
    ),
    _double_fn("ceil", ceil, "the smallest whole number not below x", "math.ceil(1.2)"),
    _double_fn("floor", floor, "the largest whole number not above x", "math.floor(1.8)"),
    _double_fn("round", round_, "the nearest whole number, halves away from zero",
               "math.round(2.5)"),
    _double_fn("trunc", trunc, "x without its fraction", "math.trunc(-1.7)"),
    _double_fn("isInf", is_inf, "whether x is +Inf or -Inf", "math.isInf(1.0 / 0.0)", BOOL),
    _double_fn("isNaN", is_nan, "whether x is NaN", "math.isNaN(0.0 / 0.0)", BOOL),
    _double_fn("isFinite", is_finite, "whether x is neither infinite nor NaN",
               "math.isFinite(1.5)", BOOL),
    Function(
        "math.abs",
        (
            _unary("abs", "double", (DOUBLE,), DOUBLE),
            _unary("abs", "int", (INT,), INT),
            _unary("abs", "uint", (UINT,), UINT),
        ),
        abs_,
        doc="the absolute value (an int64 overflow error for the smallest int)",
        examples=("math.abs(-5)",),
    ),
    Function(
        "math.sign",
        (
            _unary("sign", "double", (DOUBLE,), DOUBLE),
            _unary("sign", "int", (INT,), INT),
            _unary("sign", "uint", (UINT,), UINT),
        ),
        sign,
        doc="-1, 0 or 1, of the argument's type",
        examples=("math.sign(-2.5)",),
    ),
    Function(
        "math.sqrt",
        (
            _unary("sqrt", "double", (DOUBLE,), DOUBLE),
            _unary("sqrt", "int", (INT,), DOUBLE),
            _unary("sqrt", "uint", (UINT,), DOUBLE),
        ),
        sqrt,
        doc="the square root, a double (NaN below zero)",
        examples=("math.sqrt(16)",),
    ),
    Function(
        "math.ln",
        (
            _unary("ln", "double", (DOUBLE,), DOUBLE),
            _unary("ln", "int", (INT,), DOUBLE),
            _unary("ln", "uint", (UINT,), DOUBLE),
        ),
        ln,
        doc="the natural logarithm, a double (-Inf at zero, NaN below)",
        examples=("math.ln(1)", "math.ln(2.718281828459045)"),
    ),
    _bit_pair("bitAnd", bit_and, "bitwise and", "math.bitAnd(6, 3)"),
    _bit_pair("bitOr", bit_or, "bitwise or", "math.bitOr(4, 1)"),
    _bit_pair("bitXor", bit_xor, "bitwise exclusive or", "math.bitXor(6, 3)"),
    Function(
        "math.bitNot",
        (
            Overload("math_bitNot_int_int", (INT,), INT),
            Overload("math_bitNot_uint_uint", (UINT,), UINT),
        ),
        bit_not,
        doc="bitwise complement",
        examples=("math.bitNot(0)",),
    ),
    _bit_shift("bitShiftLeft", bit_shift_left, "x shifted left by n bits",
               "math.bitShiftLeft(1, 4)"),
    _bit_shift("bitShiftRight", bit_shift_right,
               "x shifted right by n bits (logical: zeros come in, also for a negative int)",
               "math.bitShiftRight(16, 2)"),
]
