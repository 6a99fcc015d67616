"""CEL operators over the Python value representation of ``values``.

Each operator checks the common case first (``type(a) is int`` ...) so that compiled
closures stay fast, then falls back to the rarer overloads, and raises ``CelError`` where
CEL defines an error (overflow, division by zero, no such overload).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import ast
from .values import (
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
    map_lookup,
    no_such_key,
    no_such_overload,
)

DIVISION_BY_ZERO = "division by zero"
NAN_ORDER = "NaN values cannot be ordered"
MODULUS_BY_ZERO = "modulus by zero"


def _int(v: int) -> int:
    if INT64_MIN <= v <= INT64_MAX:
        return v
    raise CelError(OVERFLOW)


def _uint(v: int) -> UInt:
    if 0 <= v <= UINT64_MAX:
        return UInt(v)
    raise CelError(UINT_OVERFLOW)


def add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        r = a + b
        if INT64_MIN <= r <= INT64_MAX:
            return r
        raise CelError(OVERFLOW)
    if ta is tb:
        if ta is float or ta is str or ta is bytes:
            return a + b
        if ta is UInt:
            return _uint(a + b)
        if ta is list or ta is tuple:
            return [*a, *b]
        if ta is Duration:
            return Duration(_int(a.ns + b.ns))
    if (ta is list or ta is tuple) and (tb is list or tb is tuple):
        return [*a, *b]
    if ta is Timestamp and tb is Duration:
        return Timestamp(a.ns + b.ns, a.offset)  # the constructor checks the range
    if ta is Duration and tb is Timestamp:
        return Timestamp(a.ns + b.ns, b.offset)
    raise no_such_overload(ast.ADD, a, b)


def sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        r = a - b
        if INT64_MIN <= r <= INT64_MAX:
            return r
        raise CelError(OVERFLOW)
    if ta is tb:
        if ta is float:
            return a - b
        if ta is UInt:
            return _uint(a - b)
        if ta is Duration:
            return Duration(_int(a.ns - b.ns))
        if ta is Timestamp:
            return Duration(_int(a.ns - b.ns))
    if ta is Timestamp and tb is Duration:
        return Timestamp(a.ns - b.ns, a.offset)
    raise no_such_overload(ast.SUB, a, b)


def mul(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _int(a * b)
    if ta is tb:
        if ta is float:
            return a * b
        if ta is UInt:
            return _uint(a * b)
    raise no_such_overload(ast.MUL, a, b)


def div(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if b == 0:
            raise CelError(DIVISION_BY_ZERO)
        q = abs(a) // abs(b)
        return _int(q if (a >= 0) == (b >= 0) else -q)
    if ta is tb:
        if ta is float:
            if b == 0.0:
                if a == 0.0 or math.isnan(a):
                    return math.nan
                return math.copysign(math.inf, a) * math.copysign(1.0, b)
            return a / b
        if ta is UInt:
            if b == 0:
                raise CelError(DIVISION_BY_ZERO)
            return UInt(a // b)
    raise no_such_overload(ast.DIV, a, b)


def mod(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if b == 0:
            raise CelError(MODULUS_BY_ZERO)
        if a == INT64_MIN and b == -1:  # as INT64_MIN / -1 (cel-go)
            raise CelError(OVERFLOW)
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    if ta is UInt and tb is UInt:
        if b == 0:
            raise CelError(MODULUS_BY_ZERO)
        return UInt(a % b)
    raise no_such_overload(ast.MOD, a, b)


def neg(a: Any) -> Any:
    ta = type(a)
    if ta is int:
        return _int(-a)
    if ta is float:
        return -a
    if ta is Duration:
        return Duration(-a.ns)
    raise no_such_overload(ast.NEG, a)


def logical_not(a: Any) -> bool:
    if a is True:
        return False
    if a is False:
        return True
    raise no_such_overload(ast.NOT, a)


def eq(a: Any, b: Any) -> bool:
    return cel_equals(a, b)


def ne(a: Any, b: Any) -> bool:
    return not cel_equals(a, b)


def _comparable(a: Any, b: Any, op: str) -> tuple[Any, Any]:
    """The operands of ``a op b`` as Python compares them; raise unless it is defined (same
    ordered type, or numbers of any kind). An int or uint compared with a double is
    converted to double first, as cel-go does (so 2^63-1 is not less than 2.0^63). NaN is
    not ordered: an error, as in cel-go."""
    ta, tb = type(a), type(b)
    if ta is tb and ta in _ORDERED:
        if ta is float and (a != a or b != b):
            raise CelError(NAN_ORDER)
        return a, b
    if ta in _NUMBERS and tb in _NUMBERS:
        if ta is float:
            b = float(b)
        elif tb is float:
            a = float(a)
        if a != a or b != b:
            raise CelError(NAN_ORDER)
        return a, b
    raise no_such_overload(op, a, b)


_NUMBERS = frozenset({int, UInt, float})
_ORDERED = frozenset({int, UInt, float, str, bytes, bool, Timestamp, Duration})


def lt(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str):
        return bool(a < b)
    a, b = _comparable(a, b, ast.LT)
    return bool(a < b)


def le(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str):
        return bool(a <= b)
    a, b = _comparable(a, b, ast.LE)
    if ta is Timestamp or ta is Duration:
        return bool(a.ns <= b.ns)
    return bool(a <= b)


def gt(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str):
        return bool(a > b)
    a, b = _comparable(a, b, ast.GT)
    return bool(b < a)


def ge(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str):
        return bool(a >= b)
    a, b = _comparable(a, b, ast.GE)
    if ta is Timestamp or ta is Duration:
        return bool(a.ns >= b.ns)
    return bool(a >= b)


def contains(container: Any, item: Any) -> bool:
    """``item in container``."""
    t = type(container)
    if t is dict:
        if type(item) is str:
            return item in container
        return map_lookup(container, item)[0]
    if t is list or t is tuple:
        ti = type(item)
        if ti is str or ti is int:
            for x in container:
                if type(x) is ti and x == item:
                    return True
            if ti is str:
                return False
        return any(cel_equals(x, item) for x in container)
    raise no_such_overload(ast.IN, item, container)


def _list_position(lst: list[Any] | tuple[Any, ...], index: Any) -> int:
    ti = type(index)
    if ti is int or ti is UInt:
        i = int(index)
    elif ti is float:
        if index != index or index != int(index):
            raise CelError(f"unsupported index value: {index}")
        i = int(index)
    else:
        raise no_such_overload(ast.INDEX, lst, index)
    if not 0 <= i < len(lst):
        raise CelError(f"index out of bounds: {i}")
    return i


def index(container: Any, key: Any) -> Any:
    """``container[key]``; an optional container yields an optional (chaining)."""
    t = type(container)
    if t is dict:
        found, value = map_lookup(container, key)
        if found:
            return value
        raise no_such_key(key)
    if t is list or t is tuple:
        return container[_list_position(container, key)]
    if t is OptionalValue:
        return optional_index(container, key)
    raise no_such_overload(ast.INDEX, container, key)


def optional_index(container: Any, key: Any) -> OptionalValue:
    """``container[?key]``: an optional of the element, empty when absent."""
    t = type(container)
    if t is OptionalValue:
        if not container.has:
            return OptionalValue.NONE
        return optional_index(container.value, key)
    if t is dict:
        found, value = map_lookup(container, key)
        return OptionalValue(value) if found else OptionalValue.NONE
    if t is list or t is tuple:
        try:
            return OptionalValue(container[_list_position(container, key)])
        except CelError:
            if type(key) not in _NUMBERS:
                raise
            return OptionalValue.NONE
    raise no_such_overload(ast.OPT_INDEX, container, key)


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    ast.ADD: add,
    ast.SUB: sub,
    ast.MUL: mul,
    ast.DIV: div,
    ast.MOD: mod,
    ast.EQ: eq,
    ast.NE: ne,
    ast.LT: lt,
    ast.LE: le,
    ast.GT: gt,
    ast.GE: ge,
    ast.INDEX: index,
    ast.OPT_INDEX: optional_index,
}

UNARY: dict[str, Callable[[Any], Any]] = {
    ast.NEG: neg,
    ast.NOT: logical_not,
}
