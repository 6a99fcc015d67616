"""Kubernetes resource quantities ("500m", "1.5Gi", "1e3"): the plain numbers of the
scheduling variables, and Kubernetes' CEL quantity library.

Policies see the amounts of pods and nodes already normalised to plain numbers (cpu in
millicores, memory in bytes): ``quantity_int`` is the int64 the cluster cache counts
(``Value()`` or ``MilliValue()``), raising ``ValueError`` for what is not a quantity.

In CEL, ``quantity('1.5Gi')`` is a ``kubernetes.Quantity`` (``resource_quantity``) with the
methods of Kubernetes' library (k8s.io/apiserver/pkg/cel/library/quantity.go): ``isInteger``,
``asInteger``, ``asApproximateFloat``, ``add``, ``sub`` (a quantity or an int),
``isGreaterThan``, ``isLessThan``, ``compareTo`` (in ``comparisons``), the global
``sign(q)``, and ``isQuantity(s)``; so ``pod.requests.memory > quantity('1Gi').asInteger()``.
``quantityMilli('500m')`` (500) is policysched's extension, for the millicore amounts.
Unlike Kubernetes, which validates no quantity literal when it compiles, a literal
``quantity()`` / ``quantityMilli()`` refuses is a compile error here.

Huge values, as Kubernetes (apimachinery v0.34) treats them: ``ParseQuantity`` caps a
binary-suffixed quantity at 2^63-1 (``8Ei`` and ``16Ei`` read as 9223372036854775807), and
so does this module. Other quantities keep their value, and there kube-scheduler's int64
accessors overflow: ``Value()`` of ``9223372036854775808`` is -2^63, of ``1e19`` 0;
``MilliValue()`` of ``8Ei`` is -1000, of ``7Ei`` -2^63. ``quantity_int`` saturates at the
int64 bounds instead (the value kube intends, for every quantity whose accessor does not
overflow it is kube's value), so nothing the API server accepts can overflow the cache.

The syntax the plain-number helpers accept is Kubernetes' (``resource.ParseQuantity``), but
for text without digits (``-``, ``.``, ``k``, ``Mi``, ``-.Ki``: zero there, refused here)::

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

from ..types import BOOL, DOUBLE, INT, STRING, Type
from ..values import INT64_MAX, INT64_MIN, CelError, no_such_overload
from . import resource_quantity
from .function import Function, Overload
from .resource_quantity import Quantity

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


# --------------------------------------------------------------------------- CEL functions

QUANTITY_T = Type("kubernetes.Quantity")
_MILLI_RANGE_ERROR = "quantity in milli-units out of int64 range"
_INTEGER_ERROR = "cannot convert value to integer"


def _cel_quantity(s: Any) -> Quantity:
    if type(s) is not str:
        raise no_such_overload("quantity", s)
    return resource_quantity.parse(s)


def _cel_is_quantity(s: Any) -> bool:
    if type(s) is not str:
        raise no_such_overload("isQuantity", s)
    try:
        resource_quantity.parse(s)
    except CelError:
        return False
    return True


def _cel_quantity_milli(s: Any) -> int:
    if type(s) is not str:
        raise no_such_overload("quantityMilli", s)
    q = _cel_quantity(s)
    exponent = q.exponent + 3
    if exponent >= 0:
        if len(str(abs(q.coefficient))) + exponent > 19:
            raise CelError(_MILLI_RANGE_ERROR)
        milli = q.coefficient * 10**exponent
    else:
        milli = -(-q.coefficient // 10**-exponent)  # rounded up, as MilliValue()
    if not (INT64_MIN <= milli <= INT64_MAX):
        raise CelError(_MILLI_RANGE_ERROR)
    return milli


def _cel_sign(q: Any) -> int:
    if type(q) is not Quantity:
        raise no_such_overload("sign", q)
    return q.sign()


def _cel_is_integer(q: Any) -> bool:
    if type(q) is not Quantity:
        raise no_such_overload("isInteger", q)
    return q.as_int64() is not None


def _cel_as_integer(q: Any) -> int:
    if type(q) is not Quantity:
        raise no_such_overload("asInteger", q)
    n = q.as_int64()
    if n is None:
        raise CelError(_INTEGER_ERROR)
    return n


def _cel_as_approximate_float(q: Any) -> float:
    if type(q) is not Quantity:
        raise no_such_overload("asApproximateFloat", q)
    return q.approximate_float()


def _operand(name: str, q: Any, other: Any) -> Quantity:
    if type(q) is Quantity:
        if type(other) is Quantity:
            return other
        if type(other) is int:
            return resource_quantity.from_int(other)
    raise no_such_overload(name, q, other)


def _cel_add(q: Any, other: Any) -> Quantity:
    operand = _operand("add", q, other)  # (first: it checks q too)
    return q.add(operand)


def _cel_sub(q: Any, other: Any) -> Quantity:
    operand = _operand("sub", q, other)
    return q.sub(operand)


def _method(name: str, oid: str, result: Type, impl: Any, doc: str,
            examples: tuple[str, ...]) -> Function:
    return Function(name, (Overload(oid, (QUANTITY_T,), result, member=True),), impl,
                    doc=doc, examples=examples)


def _arithmetic(name: str, impl: Any, doc: str, examples: tuple[str, ...]) -> Function:
    return Function(
        name,
        (Overload(f"quantity_{name}", (QUANTITY_T, QUANTITY_T), QUANTITY_T, member=True),
         Overload(f"quantity_{name}_int", (QUANTITY_T, INT), QUANTITY_T, member=True)),
        impl, doc=doc, examples=examples)


FUNCTIONS: list[Function] = [
    Function(
        "quantity",
        (Overload("string_to_quantity", (STRING,), QUANTITY_T),),
        _cel_quantity,
        cost_per_size=True,
        doc="parse a Kubernetes quantity (`resource.Quantity`): an exact decimal, shown "
            "in canonical form ('1.5Gi' is 1536Mi); an error for text Kubernetes refuses",
        examples=("quantity('1.5Gi')", "quantity('1000m') == quantity('1')",
                  "pod.requests.memory > quantity('1Gi').asInteger()"),
        literal_check=_cel_quantity,
    ),
    Function(
        "isQuantity",
        (Overload("is_quantity_string", (STRING,), BOOL),),
        _cel_is_quantity,
        cost_per_size=True,
        doc="whether quantity() accepts the string",
        examples=("isQuantity('2Gi')", "isQuantity('2 GB')"),
    ),
    Function(
        "sign",
        (Overload("quantity_sign", (QUANTITY_T,), INT),),
        _cel_sign,
        doc="-1, 0 or 1 (a global function, as in Kubernetes: `sign(q)`, not `q.sign()`)",
        examples=("sign(quantity('-500m'))",),
    ),
    _method("isInteger", "quantity_is_integer", BOOL, _cel_is_integer,
            "whether asInteger() succeeds: Kubernetes holds the quantity as an int64 "
            "without fraction digits ('1000m' is not, though it equals 1)",
            ("quantity('50k').isInteger()", "quantity('1000m').isInteger()")),
    _method("asInteger", "quantity_get_int", INT, _cel_as_integer,
            "the value as an int; an error (cannot convert value to integer) where "
            "isInteger() is false",
            ("quantity('50k').asInteger()",)),
    _method("asApproximateFloat", "quantity_get_float", DOUBLE, _cel_as_approximate_float,
            "the value as a double, which may lose precision (+Inf/-Inf beyond its range)",
            ("quantity('50.703k').asApproximateFloat()",)),
    _arithmetic("add", _cel_add, "the sum, with a quantity or an int",
                ("quantity('50k').add(quantity('20k'))", "quantity('50k').add(20)")),
    _arithmetic("sub", _cel_sub, "the difference, with a quantity or an int",
                ("quantity('50k').sub(quantity('20k'))", "quantity('50k').sub(20000)")),
    Function(
        "quantityMilli",
        (Overload("string_to_quantity_milli", (STRING,), INT),),
        _cel_quantity_milli,
        cost_per_size=True,
        doc="policysched's extension, not in Kubernetes: a quantity in milli-units, rounded "
            "up as `Quantity.MilliValue()` ('500m' -> 500, '2' -> 2000), to compare with "
            "millicore amounts such as `pod.requests.cpu`",
        examples=("quantityMilli('500m')", "pod.requests.cpu <= quantityMilli('2')"),
        literal_check=_cel_quantity_milli,
    ),
]
