"""CEL's standard functions: ``size``, string tests, type conversions, ``dyn``/``type``,
``timestamp``/``duration`` and the optional-value functions.

Conversions follow cel-go (which follows Go's ``strconv``): ``int('…')`` takes an optional
sign and ASCII digits only, ``uint('…')`` no sign, ``double('…')`` Go float syntax (``1e3``,
``inf``, ``NaN``, hex floats with a ``p`` exponent), ``bool('…')`` one of ``1 t T TRUE true
True 0 f F FALSE false False``; ``int(double)`` truncates and errors outside
(-2^63, 2^63); ``string(double)`` is Go's ``%g``.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from ..types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    STRING,
    TIMESTAMP,
    UINT,
    A,
    B,
    list_of,
    map_of,
    optional_of,
    type_of_type,
)
from ..values import (
    INT64_MAX,
    INT64_MIN,
    NANOS,
    OVERFLOW,
    TIMESTAMP_MIN_SECONDS,
    TIMESTAMP_OVERFLOW,
    UINT64_MAX,
    UINT_OVERFLOW,
    CelError,
    Duration,
    OptionalValue,
    Timestamp,
    TypeValue,
    UInt,
    no_such_overload,
    type_of,
)
from .function import Function, Overload
from .network import CIDR, CIDR_T, IP, IP_T
from .network import to_string as _net_to_string
from .time import format_duration, format_timestamp, parse_duration, parse_timestamp

_NONE = OptionalValue.NONE


def _quote(s: str) -> str:
    return "'" + (s if len(s) <= 80 else s[:77] + "...") + "'"


def _conversion_error(value: Any, target: str) -> CelError:
    shown = _quote(value) if type(value) is str else repr(value)
    return CelError(f"type conversion error from '{type_of(value).name}' to '{target}': {shown}")


def _range_error(value: Any, target: str) -> CelError:
    if type(value) is str:
        return CelError(f"type conversion error from 'string' to '{target}': "
                        f"{_quote(value)} is out of range")
    return CelError(OVERFLOW if target == "int" else UINT_OVERFLOW)  # cel-go's texts


# --------------------------------------------------------------------------- size & strings


def _size(v: Any) -> int:
    tv = type(v)
    if tv is str or tv is list or tv is dict or tv is bytes or tv is tuple:
        return len(v)
    raise no_such_overload("size", v)


def _contains(s: Any, sub: Any) -> bool:
    if type(s) is str and type(sub) is str:
        return sub in s
    raise no_such_overload("contains", s, sub)


def _starts_with(s: Any, prefix: Any) -> bool:
    if type(s) is str and type(prefix) is str:
        return s.startswith(prefix)
    raise no_such_overload("startsWith", s, prefix)


def _ends_with(s: Any, suffix: Any) -> bool:
    if type(s) is str and type(suffix) is str:
        return s.endswith(suffix)
    raise no_such_overload("endsWith", s, suffix)


# --------------------------------------------------------------------------- numbers


def _ascii_digits(s: str) -> bool:
    return s.isascii() and s.isdigit()


def _parse_int(s: str) -> int:
    body = s[1:] if s[:1] in ("+", "-") else s
    if not _ascii_digits(body):
        raise _conversion_error(s, "int")
    if len(body.lstrip("0")) > 19:
        raise _range_error(s, "int")
    v = int(s)
    if not (INT64_MIN <= v <= INT64_MAX):
        raise _range_error(s, "int")
    return v


def _parse_uint(s: str) -> UInt:
    if not _ascii_digits(s):
        raise _conversion_error(s, "uint")
    if len(s.lstrip("0")) > 20:
        raise _range_error(s, "uint")
    v = int(s)
    if v > UINT64_MAX:
        raise _range_error(s, "uint")
    return UInt(v)


def _parse_double(s: str) -> float:
    """Go's ``strconv.ParseFloat(s, 64)``: ASCII, no spaces, underscores only between digits,
    ``inf``/``infinity`` (signed or not) and unsigned ``nan`` in any case, hex floats with a
    ``p`` exponent; magnitudes beyond the double range are errors rather than infinities."""
    if not s or not s.isascii() or any(c.isspace() for c in s):
        raise _conversion_error(s, "double")
    body = s[1:] if s[0] in "+-" else s
    lowered = body.lower()
    if lowered in ("inf", "infinity"):
        return -math.inf if s[0] == "-" else math.inf
    if lowered == "nan" and body is s:
        return math.nan
    try:
        if lowered.startswith("0x"):
            if "p" not in lowered:
                raise ValueError(s)
            v = float.fromhex(s)
        else:
            v = float(s)
    except OverflowError:
        raise _range_error(s, "double") from None
    except ValueError:
        raise _conversion_error(s, "double") from None
    if math.isinf(v):
        raise _range_error(s, "double")
    if math.isnan(v):  # only a signed "nan" gets here, which Go rejects
        raise _conversion_error(s, "double")
    return v


def format_double(x: float) -> str:
    """Go's ``fmt.Sprintf("%g", x)`` (cel-go's ``string(double)``): the shortest digits that
    round-trip, in exponent form when the decimal exponent is < -4 or >= 6."""
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign, digit_tuple, exp = Decimal(repr(x)).as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exp += len(digit_tuple) - len(digits)
    nd = len(digits)
    dp = nd + exp  # value = 0.<digits> * 10**dp
    neg = "-" if sign else ""
    e10 = dp - 1
    if e10 < -4 or e10 >= 6:
        mant = digits[0] + ("." + digits[1:] if nd > 1 else "")
        return f"{neg}{mant}e{'-' if e10 < 0 else '+'}{abs(e10):02d}"
    if dp <= 0:
        return f"{neg}0.{'0' * -dp}{digits}"
    if dp >= nd:
        return f"{neg}{digits}{'0' * (dp - nd)}"
    return f"{neg}{digits[:dp]}.{digits[dp:]}"


_TWO_63 = 2.0**63
_TWO_64 = 2.0**64


def _int(v: Any) -> int:
    tv = type(v)
    if tv is int:
        return v
    if tv is float:
        if not (-_TWO_63 < v < _TWO_63):  # also NaN
            raise _range_error(v, "int")
        return int(v)
    if tv is str:
        return _parse_int(v)
    if tv is UInt:
        if v > INT64_MAX:
            raise _range_error(v, "int")
        return int(v)
    if tv is Timestamp:
        return v.ns // NANOS
    if tv is Duration:
        ns = v.ns
        if not (INT64_MIN <= ns <= INT64_MAX):
            raise _range_error(v, "int")
        return ns
    raise no_such_overload("int", v)


def _uint(v: Any) -> UInt:
    tv = type(v)
    if tv is UInt:
        return v
    if tv is int:
        if v < 0 or v > UINT64_MAX:
            raise _range_error(v, "uint")
        return UInt(v)
    if tv is float:
        if not (0 <= v < _TWO_64):  # also NaN
            raise _range_error(v, "uint")
        return UInt(int(v))
    if tv is str:
        return _parse_uint(v)
    raise no_such_overload("uint", v)


def _double(v: Any) -> float:
    tv = type(v)
    if tv is float:
        return v
    if tv is int or tv is UInt:
        return float(v)
    if tv is str:
        return _parse_double(v)
    raise no_such_overload("double", v)


# --------------------------------------------------------------------------- other scalars


def _string(v: Any) -> str:
    tv = type(v)
    if tv is str:
        return v
    if tv is int:
        return str(v)
    if tv is UInt:
        return str(int(v))
    if tv is float:
        return format_double(v)
    if tv is bool:
        return "true" if v else "false"
    if tv is bytes:
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CelError("invalid UTF-8 in bytes, cannot convert to string") from None
    if tv is Timestamp:
        return format_timestamp(v)
    if tv is Duration:
        return format_duration(v)
    if tv is IP or tv is CIDR:
        return _net_to_string(v)
    raise no_such_overload("string", v)


def _bytes(v: Any) -> bytes:
    tv = type(v)
    if tv is bytes:
        return v
    if tv is str:
        try:
            return v.encode("utf-8")
        except UnicodeEncodeError:
            raise CelError("invalid UTF-8 in string, cannot convert to bytes") from None
    raise no_such_overload("bytes", v)


_BOOL_STRINGS = {
    "1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
    "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False,
}


def _bool(v: Any) -> bool:
    tv = type(v)
    if tv is bool:
        return v
    if tv is str:
        b = _BOOL_STRINGS.get(v)
        if b is None:
            raise _conversion_error(v, "bool")
        return b
    raise no_such_overload("bool", v)


def _dyn(v: Any) -> Any:
    return v


def _type(v: Any) -> TypeValue:
    return type_of(v)


def _timestamp(v: Any) -> Timestamp:
    tv = type(v)
    if tv is Timestamp:
        return v
    if tv is str:
        return parse_timestamp(v)
    if tv is int:
        if not (-(2**40) < v < 2**40):
            raise CelError(TIMESTAMP_OVERFLOW)
        return Timestamp(v * NANOS)
    raise no_such_overload("timestamp", v)


def _duration(v: Any) -> Duration:
    tv = type(v)
    if tv is Duration:
        return v
    if tv is str:
        return parse_duration(v)
    raise no_such_overload("duration", v)


# --------------------------------------------------------------------------- optionals

_ZERO_TIMESTAMP_NS = TIMESTAMP_MIN_SECONDS * NANOS  # Go's zero time, 0001-01-01T00:00:00Z


def is_zero_value(v: Any) -> bool:
    """The zero value of its type (cel-go's ``IsZeroValue``), for ``optional.ofNonZeroValue``."""
    tv = type(v)
    if v is None:
        return True
    if tv is bool:
        return not v
    if tv is int or tv is float or tv is UInt:
        return bool(v == 0)
    if tv is str or tv is bytes or tv is list or tv is tuple or tv is dict:
        return len(v) == 0
    if tv is Duration:
        return bool(v.ns == 0)
    if tv is Timestamp:
        return bool(v.ns == _ZERO_TIMESTAMP_NS)
    if tv is OptionalValue:
        return not v.has
    return False


def _optional_of(v: Any) -> OptionalValue:
    return OptionalValue(v)


def _optional_none() -> OptionalValue:
    return _NONE


def _optional_of_non_zero(v: Any) -> OptionalValue:
    return _NONE if is_zero_value(v) else OptionalValue(v)


def _has_value(o: Any) -> bool:
    if type(o) is OptionalValue:
        return o.has
    raise no_such_overload("hasValue", o)


def _value(o: Any) -> Any:
    if type(o) is OptionalValue:
        if o.has:
            return o.value
        raise CelError("optional.none() dereference")
    raise no_such_overload("value", o)


def _or(o: Any, other: Any) -> OptionalValue:
    if type(o) is OptionalValue and type(other) is OptionalValue:
        return o if o.has else other
    raise no_such_overload("or", o, other)


def _or_value(o: Any, default: Any) -> Any:
    if type(o) is OptionalValue:
        return o.value if o.has else default
    raise no_such_overload("orValue", o, default)


def _unwrap_list(items: Any, name: str) -> list[Any]:
    if type(items) is list or type(items) is tuple:
        out = []
        for o in items:
            if type(o) is not OptionalValue:
                raise no_such_overload(name, items)
            if o.has:
                out.append(o.value)
        return out
    raise no_such_overload(name, items)


def _optional_unwrap(items: Any) -> list[Any]:
    return _unwrap_list(items, "optional.unwrap")


def _unwrap_opt(items: Any) -> list[Any]:
    return _unwrap_list(items, "unwrapOpt")


# --------------------------------------------------------------------------- declarations

OPTIONAL_A = optional_of(A)


def _function(name: str, impl: Any, *overloads: Overload, doc: str = "",
              examples: tuple[str, ...] = (), per_size: bool = False,
              conversion: bool = False) -> Function:
    """``conversion``: a string literal argument is converted when the expression is checked,
    so that ``timestamp('yesterday')`` is a compile error, not an error on every pod."""
    return Function(name, overloads, impl, cost_per_size=per_size, doc=doc,
                    literal_check=impl if conversion else None, examples=examples)


FUNCTIONS: list[Function] = [
    _function(
        "size", _size,
        Overload("size_string", (STRING,), INT),
        Overload("size_bytes", (BYTES,), INT),
        Overload("size_list", (list_of(A),), INT),
        Overload("size_map", (map_of(A, B),), INT),
        Overload("string_size", (STRING,), INT, member=True),
        Overload("bytes_size", (BYTES,), INT, member=True),
        Overload("list_size", (list_of(A),), INT, member=True),
        Overload("map_size", (map_of(A, B),), INT, member=True),
        doc="code points of a string, bytes, list elements or map entries",
        examples=("size('héllo')", "pod.tolerations.size()"),
    ),
    _function("contains", _contains,
        Overload("contains_string", (STRING, STRING), BOOL, member=True),
        doc="whether the string contains the substring",
        examples=("'topology.kubernetes.io/zone'.contains('zone')",), per_size=True),
    _function("startsWith", _starts_with,
        Overload("starts_with_string", (STRING, STRING), BOOL, member=True),
        doc="whether the string starts with the prefix",
        examples=("pod.name.startsWith('web-')",), per_size=True),
    _function("endsWith", _ends_with,
        Overload("ends_with_string", (STRING, STRING), BOOL, member=True),
        doc="whether the string ends with the suffix",
        examples=("'node-1.example.com'.endsWith('.example.com')",), per_size=True),
    _function(
        "int", _int,
        Overload("int64_to_int64", (INT,), INT),
        Overload("uint64_to_int64", (UINT,), INT),
        Overload("double_to_int64", (DOUBLE,), INT),
        Overload("string_to_int64", (STRING,), INT),
        Overload("timestamp_to_int64", (TIMESTAMP,), INT),
        Overload("duration_to_int64", (DURATION,), INT),
        doc="to int: doubles truncate, timestamps give Unix seconds, durations nanoseconds",
        examples=("int('42')", "int(2.9)", "int(timestamp('2025-01-01T00:00:00Z'))"),
        conversion=True,
    ),
    _function(
        "uint", _uint,
        Overload("uint64_to_uint64", (UINT,), UINT),
        Overload("int64_to_uint64", (INT,), UINT),
        Overload("double_to_uint64", (DOUBLE,), UINT),
        Overload("string_to_uint64", (STRING,), UINT),
        doc="to uint",
        examples=("uint(42)",),
        conversion=True,
    ),
    _function(
        "double", _double,
        Overload("double_to_double", (DOUBLE,), DOUBLE),
        Overload("int64_to_double", (INT,), DOUBLE),
        Overload("uint64_to_double", (UINT,), DOUBLE),
        Overload("string_to_double", (STRING,), DOUBLE),
        doc="to double",
        examples=("double(pod.priority) / 8.0",),
        conversion=True,
    ),
    _function(
        "string", _string,
        Overload("string_to_string", (STRING,), STRING),
        Overload("bool_to_string", (BOOL,), STRING),
        Overload("int64_to_string", (INT,), STRING),
        Overload("uint64_to_string", (UINT,), STRING),
        Overload("double_to_string", (DOUBLE,), STRING),
        Overload("bytes_to_string", (BYTES,), STRING),
        Overload("timestamp_to_string", (TIMESTAMP,), STRING),
        Overload("duration_to_string", (DURATION,), STRING),
        Overload("ip_to_string", (IP_T,), STRING),
        Overload("cidr_to_string", (CIDR_T,), STRING),
        doc="to string (bytes must be valid UTF-8)",
        examples=("string(pod.priority)", "string(duration('90m'))"),
    ),
    _function(
        "bytes", _bytes,
        Overload("bytes_to_bytes", (BYTES,), BYTES),
        Overload("string_to_bytes", (STRING,), BYTES),
        doc="to bytes (UTF-8)",
        examples=("bytes('abc')",),
    ),
    _function(
        "bool", _bool,
        Overload("bool_to_bool", (BOOL,), BOOL),
        Overload("string_to_bool", (STRING,), BOOL),
        doc="to bool; strings 1 t T TRUE true True / 0 f F FALSE false False",
        examples=("bool('true')",),
        conversion=True,
    ),
    _function("dyn", _dyn, Overload("to_dyn", (A,), DYN),
        doc="the value, typed dyn: the checker accepts it wherever any type is expected "
            "(a list or map literal mixes types only when each of its values is dyn)",
        examples=("[dyn(1), dyn('one')]",)),
    _function("type", _type, Overload("type", (A,), type_of_type(A)), doc="the type of a value",
        examples=("type(pod.priority) == int",)),
    _function(
        "timestamp", _timestamp,
        Overload("timestamp_to_timestamp", (TIMESTAMP,), TIMESTAMP),
        Overload("string_to_timestamp", (STRING,), TIMESTAMP),
        Overload("int64_to_timestamp", (INT,), TIMESTAMP),
        doc="RFC 3339 text or Unix seconds to a timestamp",
        examples=("timestamp('2025-01-01T12:00:00Z')", "timestamp(pod.creationTimestamp)"),
        conversion=True,
    ),
    _function(
        "duration", _duration,
        Overload("duration_to_duration", (DURATION,), DURATION),
        Overload("string_to_duration", (STRING,), DURATION),
        doc="'1h2m3.5s', '100ms', '-1.5h' ... to a duration",
        examples=("duration('1h30m')",),
        conversion=True,
    ),
    _function("optional.of", _optional_of, Overload("optional_of", (A,), OPTIONAL_A),
        doc="an optional holding the value", examples=("optional.of(pod.name)",)),
    _function("optional.none", _optional_none, Overload("optional_none", (), OPTIONAL_A),
        doc="the empty optional", examples=("optional.none()",)),
    _function("optional.ofNonZeroValue", _optional_of_non_zero,
        Overload("optional_of_non_zero_value", (A,), OPTIONAL_A),
        doc="optional.none() for a zero value (0, '', [], {}, null, false...), else of(v)",
        examples=("optional.ofNonZeroValue(pod.nodeName)",)),
    _function("hasValue", _has_value,
        Overload("optional_hasValue", (OPTIONAL_A,), BOOL, member=True),
        doc="whether the optional holds a value",
        examples=("pod.labels[?'app'].hasValue()",)),
    _function("value", _value, Overload("optional_value", (OPTIONAL_A,), A, member=True),
        doc="the held value; an error on optional.none()",
        examples=("pod.labels[?'app'].value()",)),
    _function("or", _or,
        Overload("optional_or_optional", (OPTIONAL_A, OPTIONAL_A), OPTIONAL_A, member=True),
        doc="this optional if it has a value, else the other",
        examples=("node.labels[?'zone'].or(node.labels[?'topology.kubernetes.io/zone'])",)),
    _function("orValue", _or_value,
        Overload("optional_orValue_value", (OPTIONAL_A, A), A, member=True),
        doc="the held value, else the default",
        examples=("node.labels[?'spot'].orValue('false')",)),
    _function("optional.unwrap", _optional_unwrap,
        Overload("optional_unwrap", (list_of(OPTIONAL_A),), list_of(A)),
        doc="the values of the non-empty optionals of a list",
        examples=("optional.unwrap([pod.labels[?'app'], pod.labels[?'tier']])",)),
    _function("unwrapOpt", _unwrap_opt,
        Overload("optional_unwrapOpt", (list_of(OPTIONAL_A),), list_of(A), member=True),
        doc="the values of the non-empty optionals of a list",
        examples=("[pod.labels[?'app'], pod.labels[?'tier']].unwrapOpt()",)),
]
