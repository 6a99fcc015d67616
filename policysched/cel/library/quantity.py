"""Kubernetes resource quantities ("500m", "1.5Gi", "1e3") as plain numbers.

Policies see quantities already normalised to numbers (cpu in millicores, memory in bytes);
``quantity('1.5Gi')`` turns a literal into the same kind of number, ``quantityMilli('500m')``
gives milli-units as ``Quantity.MilliValue()`` does (rounding up), ``isQuantity(s)`` tests the
syntax. ``parse_quantity_value`` / ``parse_quantity_milli`` are the same conversions in Python,
raising ``ValueError``; ``quantity_int`` is the int64 the cluster cache counts.

Huge values, as Kubernetes (apimachinery v0.34) treats them: ``ParseQuantity`` caps a
binary-suffixed quantity at 2^63-1 (``8Ei`` and ``16Ei`` read as 9223372036854775807), and
so does this module. Other quantities keep their value, and there kube-scheduler's int64
accessors overflow: ``Value()`` of ``9223372036854775808`` is -2^63, of ``1e19`` 0;
``MilliValue()`` of ``8Ei`` is -1000, of ``7Ei`` -2^63. ``quantity_int`` saturates at the
int64 bounds instead (the value kube intends, for every quantity whose accessor does not
overflow it is kube's value), so nothing the API server accepts can overflow the cache.

The syntax is Kubernetes' (``resource.ParseQuantity``)::

    quantity   ::= [+-] number [suffix]
    number     ::= digits | digits "." [digits] | "." digits        (ASCII digits)
    suffix     ::= Ki | Mi | Gi | Ti | Pi | Ei | n | u | m | k | M | G | T | P | E
                 | (e | E) [+-] digits

It is checked here first because ``kubernetes.utils.quantity.parse_quantity``, which then
computes the value, also accepts text Kubernetes rejects (spaces, ``1K``, ``NaN``, ``1_000``).
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Context, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from kubernetes.utils.quantity import parse_quantity as _k8s_parse_quantity

from ..types import BOOL, DYN, INT, STRING
from ..values import INT64_MAX, INT64_MIN, CelError, no_such_overload
from .function import Function, Overload

_SUFFIXES = frozenset(
    {"", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
)
_MAX_EXPONENT_DIGITS = 4  # |exponent| < 10**4: beyond that nothing fits a double anyway
_MAX_LENGTH = 256
# a precision holding every digit a quantity can have, so scaleb stays exact
_DECIMAL_CONTEXT = Context(prec=_MAX_LENGTH + 8)


def _syntax_error(s: str) -> str | None:
    """Why ``s`` is not a Kubernetes quantity, or None when it is one."""
    if not s:
        return "empty string"
    if len(s) > _MAX_LENGTH:
        return f"longer than {_MAX_LENGTH} characters"
    n = len(s)
    i = 1 if s[0] in "+-" else 0
    start = i
    while i < n and "0" <= s[i] <= "9":
        i += 1
    whole = i - start
    frac = 0
    if i < n and s[i] == ".":
        i += 1
        fstart = i
        while i < n and "0" <= s[i] <= "9":
            i += 1
        frac = i - fstart
    if whole == 0 and frac == 0:
        return "no digits in the number"
    suffix = s[i:]
    if suffix in _SUFFIXES:
        return None
    if suffix[0] in "eE":
        exp = suffix[1:]
        if exp[:1] in ("+", "-"):
            exp = exp[1:]
        if exp and exp.isascii() and exp.isdigit():
            if len(exp.lstrip("0")) > _MAX_EXPONENT_DIGITS:
                return "exponent out of range"
            return None
    return f"unknown suffix {suffix!r}"


@lru_cache(maxsize=4096)
def _parse(s: str) -> Decimal | str:
    """The exact value of a quantity in base units, or the reason it is not one."""
    why = _syntax_error(s)
    if why is not None:
        return why
    try:
        d = _k8s_parse_quantity(s)
    except (ValueError, ArithmeticError) as e:
        return str(e)
    if not isinstance(d, Decimal) or not d.is_finite():
        return "not a finite number"
    if s.endswith("i") and abs(d) > INT64_MAX:  # a binary suffix: capped, as ParseQuantity
        return Decimal(INT64_MAX).copy_sign(d)
    return d


def _value(d: Decimal) -> int | float:
    """int when the value is a whole number in int64 range, else double."""
    if d.is_zero():
        return 0
    if d.adjusted() <= 18 and d == d.to_integral_value():
        i = int(d)
        if INT64_MIN <= i <= INT64_MAX:
            return i
    f = float(d)
    if f in (float("inf"), float("-inf")):
        raise OverflowError("quantity out of the double range")
    return f


def _milli(d: Decimal) -> int:
    """ceil(d * 1000), as ``Quantity.MilliValue()``; must fit int64."""
    if d.is_zero():
        return 0
    if d.adjusted() > 16:
        raise OverflowError("quantity in milli-units out of int64 range")
    m = int(_DECIMAL_CONTEXT.scaleb(d, 3).to_integral_value(rounding=ROUND_CEILING))
    if not (INT64_MIN <= m <= INT64_MAX):
        raise OverflowError("quantity in milli-units out of int64 range")
    return m


def _shown(s: str) -> str:
    return repr(s if len(s) <= 80 else s[:77] + "...")


def _decimal_of(s: str | int | float) -> Decimal:
    if type(s) is str:
        d = _parse(s)
        if isinstance(d, str):
            raise ValueError(f"invalid quantity {_shown(s)}: {d}")
        return d
    if type(s) is int or type(s) is float:
        try:
            d = Decimal(repr(s))  # the shortest decimal, so 0.1 is 0.1 (not 0.1000...0555)
        except (InvalidOperation, ValueError):
            d = Decimal("NaN")
        if not d.is_finite():
            raise ValueError(f"invalid quantity {s!r}: not a finite number")
        return d
    raise ValueError(f"invalid quantity {s!r}: not a string or number")


def parse_quantity_value(s: str | int | float) -> int | float:
    """A quantity in base units: ``"1.5Gi"`` → 1610612736, ``"500m"`` → 0.5, ``"2"`` → 2.

    Raises ``ValueError`` (naming the input) when ``s`` is not a Kubernetes quantity or is
    out of range. Numbers are accepted as they are (ints as ints).
    """
    if type(s) is int:
        return s
    d = _decimal_of(s)
    try:
        return _value(d)
    except OverflowError as e:
        raise ValueError(f"invalid quantity {_shown(str(s))}: {e}") from None


def parse_quantity_milli(s: str | int | float) -> int:
    """A quantity in milli-units, rounded up: ``"500m"`` → 500, ``"1"`` → 1000,
    ``"0.1m"`` → 1 (as ``resource.Quantity.MilliValue()``).

    Raises ``ValueError`` (naming the input) when ``s`` is not a quantity or the result does
    not fit int64.
    """
    d = _decimal_of(s)
    try:
        return _milli(d)
    except OverflowError as e:
        raise ValueError(f"invalid quantity {_shown(str(s))}: {e}") from None


def quantity_int(s: str | int | float, milli: bool = False) -> int:
    """``Quantity.Value()`` (``MilliValue()`` when ``milli``) as an int64: rounded up,
    saturated at the int64 bounds where kube's accessor overflows (see the module's
    docstring). Raises ``ValueError`` (naming the input) when ``s`` is not a quantity."""
    if type(s) is int and not milli:
        return min(max(s, INT64_MIN), INT64_MAX)
    d = _decimal_of(s)
    if milli:
        d = _DECIMAL_CONTEXT.scaleb(d, 3)
    if d >= INT64_MAX:
        return INT64_MAX
    if d <= INT64_MIN:
        return INT64_MIN
    return int(d.to_integral_value(rounding=ROUND_CEILING))


def is_negative_quantity(s: str | int | float) -> bool:
    """Whether ``s`` is below zero (``-0.5m`` is); raises ``ValueError`` as ``quantity_int``."""
    return _decimal_of(s) < 0


def is_quantity(s: str) -> bool:
    return not isinstance(_parse(s), str)


# --------------------------------------------------------------------------- CEL functions


def _cel_quantity(s: Any) -> int | float:
    if type(s) is not str:
        raise no_such_overload("quantity", s)
    try:
        return parse_quantity_value(s)
    except ValueError as e:
        raise CelError(str(e)) from None


def _cel_quantity_milli(s: Any) -> int:
    if type(s) is not str:
        raise no_such_overload("quantityMilli", s)
    try:
        return parse_quantity_milli(s)
    except ValueError as e:
        raise CelError(str(e)) from None


def _cel_is_quantity(s: Any) -> bool:
    if type(s) is not str:
        raise no_such_overload("isQuantity", s)
    return is_quantity(s)


FUNCTIONS: list[Function] = [
    Function(
        "quantity",
        (Overload("string_to_quantity_value", (STRING,), DYN),),
        _cel_quantity,
        doc="a Kubernetes quantity in base units: int when whole, else double",
        examples=("quantity('1.5Gi')", "quantity('1.5Gi') > quantity('1G')"),
        literal_check=_cel_quantity,
    ),
    Function(
        "quantityMilli",
        (Overload("string_to_quantity_milli", (STRING,), INT),),
        _cel_quantity_milli,
        doc="a Kubernetes quantity in milli-units, rounded up ('500m' -> 500, '2' -> 2000)",
        examples=("quantityMilli('500m')", "quantityMilli('2')"),
        literal_check=_cel_quantity_milli,
    ),
    Function(
        "isQuantity",
        (Overload("is_quantity", (STRING,), BOOL),),
        _cel_is_quantity,
        doc="whether the string is a Kubernetes quantity",
        examples=("isQuantity('2Gi')", "isQuantity('2 GB')"),
    ),
]
