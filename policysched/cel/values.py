"""CEL runtime values as plain Python values, and the semantics shared by every tier.

Representation (chosen so that Kubernetes JSON objects are CEL values as they are):

=============  ==========================================================
CEL type       Python
=============  ==========================================================
int            ``int`` (never ``bool``; checked to int64 range)
uint           ``UInt`` (an ``int`` subclass; checked to uint64 range)
double         ``float``
bool           ``bool``
string         ``str``
bytes          ``bytes``
null_type      ``None``
list           ``list`` or ``tuple``
map            ``dict``
timestamp      ``Timestamp`` (nanoseconds since the Unix epoch, UTC)
duration       ``Duration`` (nanoseconds)
type           ``TypeValue``
optional       ``OptionalValue``
=============  ==========================================================

Evaluation errors are ``CelError`` exceptions; ``&&``, ``||``, ``?:`` and the macros
absorb them where CEL says a definite result exists.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import orjson

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1

# Timestamps: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z
TIMESTAMP_MIN_SECONDS = -62135596800
TIMESTAMP_MAX_SECONDS = 253402300799
# Durations: int64 nanoseconds (Go's time.Duration, which cel-go uses: about 292 years).
NANOS = 1_000_000_000

# cel-go's texts of range errors
OVERFLOW = "integer overflow"
UINT_OVERFLOW = "unsigned integer overflow"
TIMESTAMP_OVERFLOW = "timestamp overflow"


class CelError(Exception):
    """A CEL evaluation error (the error value of the CEL spec)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CostLimitExceeded(CelError):
    """The runtime cost budget of one evaluation ran out."""


_Error = TypeVar("_Error", bound=CelError)


def detached(error: _Error) -> _Error:
    """A copy of ``error`` without its traceback, to keep as a value or to raise again one
    that is kept: the frames of a kept error's traceback hold what keeps it (a reference
    cycle, freed only by a full collection) or keep a finished cycle alive."""
    return copy.copy(error)


def no_such_overload(name: str, *args: Any) -> CelError:
    kinds = ", ".join(type_name(a) for a in args)
    return CelError(f"no such overload: {name}({kinds})")


def no_such_key(key: Any) -> CelError:
    return CelError(f"no such key: {key!r}" if not isinstance(key, str) else f"no such key: {key}")


class UInt(int):
    """A CEL ``uint``. Arithmetic on it is done by the operators, which re-wrap results."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class Timestamp:
    """A point in time: integer nanoseconds since 1970-01-01T00:00:00Z, and the UTC offset
    (seconds east) it was written with. As in cel-go, the offset only shows in
    ``string(t)`` (``'2024-01-01T10:00:00+02:00'``) and is kept through arithmetic;
    equality, ordering and the ``get*`` functions (UTC by default) ignore it."""

    __slots__ = ("ns", "offset")

    def __init__(self, ns: int, offset: int = 0) -> None:
        if not (TIMESTAMP_MIN_SECONDS * NANOS <= ns <= TIMESTAMP_MAX_SECONDS * NANOS + NANOS - 1):
            raise CelError(TIMESTAMP_OVERFLOW)
        self.ns = ns
        self.offset = offset

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timestamp) and other.ns == self.ns

    def __lt__(self, other: Timestamp) -> bool:
        return self.ns < other.ns

    def __hash__(self) -> int:
        return hash(("ts", self.ns))

    def __repr__(self) -> str:
        return f"Timestamp({self.ns})"


class Duration:
    """A signed span of time: integer nanoseconds."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        if not INT64_MIN <= ns <= INT64_MAX:
            raise CelError(OVERFLOW)
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.ns == self.ns

    def __lt__(self, other: Duration) -> bool:
        return self.ns < other.ns

    def __hash__(self) -> int:
        return hash(("dur", self.ns))

    def __repr__(self) -> str:
        return f"Duration({self.ns})"


class TypeValue:
    """A CEL type as a value (the result of ``type(x)``, or the identifier ``int``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeValue) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("type", self.name))

    def __repr__(self) -> str:
        return self.name


class OptionalValue:
    """A CEL ``optional``: either holds ``value`` or is empty (``OptionalValue.NONE``)."""

    __slots__ = ("has", "value")
    NONE: OptionalValue

    def __init__(self, value: Any = None, has: bool = True) -> None:
        self.has = has
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OptionalValue) or other.has != self.has:
            return False
        return not self.has or cel_equals(self.value, other.value)

    def __hash__(self) -> int:
        return hash(("opt", self.has))

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has else "optional.none()"


OptionalValue.NONE = OptionalValue(None, has=False)

# Type names as CEL prints them.
INT_TYPE = TypeValue("int")
UINT_TYPE = TypeValue("uint")
DOUBLE_TYPE = TypeValue("double")
BOOL_TYPE = TypeValue("bool")
STRING_TYPE = TypeValue("string")
BYTES_TYPE = TypeValue("bytes")
NULL_TYPE = TypeValue("null_type")
LIST_TYPE = TypeValue("list")
MAP_TYPE = TypeValue("map")
TYPE_TYPE = TypeValue("type")
TIMESTAMP_TYPE = TypeValue("google.protobuf.Timestamp")
DURATION_TYPE = TypeValue("google.protobuf.Duration")
OPTIONAL_TYPE = TypeValue("optional_type")

TYPE_IDENTIFIERS: dict[str, TypeValue] = {
    "int": INT_TYPE,
    "uint": UINT_TYPE,
    "double": DOUBLE_TYPE,
    "bool": BOOL_TYPE,
    "string": STRING_TYPE,
    "bytes": BYTES_TYPE,
    "null_type": NULL_TYPE,
    "list": LIST_TYPE,
    "map": MAP_TYPE,
    "type": TYPE_TYPE,
    "google.protobuf.Timestamp": TIMESTAMP_TYPE,
    "google.protobuf.Duration": DURATION_TYPE,
    "optional_type": OPTIONAL_TYPE,
}


# Library-defined value types (e.g. ``net.IP``), registered by their library module.
EXTENSION_TYPES: dict[type, TypeValue] = {}
# For those whose equal values functions can still tell apart (``quantity('1000m')`` and
# ``quantity('1')`` are equal, only one is an integer): the key telling them apart.
IDENTITIES: dict[type, Callable[[Any], Hashable]] = {}


def register_identity(py_type: type, identity: Callable[[Any], Hashable]) -> None:
    """Values of ``py_type`` are the same for the vectorised tier's columns and caches
    exactly when ``identity`` gives equal keys."""
    IDENTITIES[py_type] = identity


def register_type(py_type: type, cel_type: TypeValue,
                  identity: Callable[[Any], Hashable] | None = None) -> None:
    """Declare a library value class; its ``==``/``hash`` are used for CEL equality, and
    ``identity`` (when given) where equal values must not be merged (vector columns)."""
    EXTENSION_TYPES[py_type] = cel_type
    TYPE_IDENTIFIERS.setdefault(cel_type.name, cel_type)
    if identity is not None:
        IDENTITIES[py_type] = identity


def type_of(v: Any) -> TypeValue:
    """The CEL type of a runtime value (``type(v)``)."""
    t = type(v)
    if t is bool:
        return BOOL_TYPE
    if t is int:
        return INT_TYPE
    if t is UInt:
        return UINT_TYPE
    if t is float:
        return DOUBLE_TYPE
    if t is str:
        return STRING_TYPE
    if t is bytes:
        return BYTES_TYPE
    if v is None:
        return NULL_TYPE
    if t is list or t is tuple:
        return LIST_TYPE
    if t is dict:
        return MAP_TYPE
    if t is Timestamp:
        return TIMESTAMP_TYPE
    if t is Duration:
        return DURATION_TYPE
    if t is TypeValue:
        return TYPE_TYPE
    if t is OptionalValue:
        return OPTIONAL_TYPE
    if t in EXTENSION_TYPES:
        return EXTENSION_TYPES[t]
    raise CelError(f"unsupported value of Python type {t.__name__}")


def type_name(v: Any) -> str:
    try:
        return type_of(v).name
    except CelError:
        return type(v).__name__


def is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is float or t is UInt


def cel_equals(a: Any, b: Any) -> bool:
    """CEL ``==`` with heterogeneous numeric equality (``1 == 1u == 1.0``).

    Values of different, non-numeric types are unequal (never an error), ``bool`` is not a
    number, and NaN is unequal to everything.
    """
    ta, tb = type(a), type(b)
    if ta is tb and (ta is str or ta is int or ta is bool):
        return bool(a == b)
    if ta is bool or tb is bool:
        return False
    if (ta is int or ta is float or ta is UInt) and (tb is int or tb is float or tb is UInt):
        if ta is float and tb is not float:
            return _equals_double(a, b)
        if tb is float and ta is not float:
            return _equals_double(b, a)
        return bool(a == b)
    if ta is list or ta is tuple:
        if not (tb is list or tb is tuple) or len(a) != len(b):
            return False
        return all(cel_equals(x, y) for x, y in zip(a, b, strict=True))
    if ta is dict:
        if tb is not dict or len(a) != len(b):
            return False
        for k, v in a.items():
            found, other = map_lookup(b, k)
            if not found or not cel_equals(v, other):
                return False
        return True
    if ta is not tb:
        return False
    return bool(a == b)


_INT64_MAX_DOUBLE = float(INT64_MAX)  # 2^63, as Go converts math.MaxInt64
_UINT64_MAX_DOUBLE = float(UINT64_MAX)  # 2^64


def _equals_double(d: float, n: int) -> bool:
    """A double and an int or uint are equal as cel-go compares them: out of the integer
    type's range unequal, else the integer converted to double (``9223372036854775807 ==
    9.223372036854775807e18``, ``2^53 + 1 == 2.0^53``)."""
    if d != d:
        return False
    if type(n) is UInt:
        if d < 0 or d > _UINT64_MAX_DOUBLE:
            return False
    elif d < INT64_MIN or d > _INT64_MAX_DOUBLE:
        return False
    return float(n) == d


def map_lookup(m: dict[Any, Any], key: Any) -> tuple[bool, Any]:
    """Look ``key`` up in a CEL map, numeric keys compared across int/uint/double."""
    tk = type(key)
    if tk is str:
        if key in m:
            return True, m[key]
        return False, None
    if tk is bool:
        for k, v in m.items():
            if type(k) is bool and k == key:
                return True, v
        return False, None
    if tk is int or tk is UInt or tk is float:
        if tk is float and (math.isnan(key) or key != int(key)):
            return False, None
        if key != 0 and key != 1:  # Python's dict then compares numbers as CEL does
            return (True, m[key]) if key in m else (False, None)
        for k, v in m.items():  # 0 and 1 are also equal to False and True in Python
            if type(k) is not bool and type(k) is not str and is_number(k) and k == key:
                return True, v
        return False, None
    if key is None or tk in (list, tuple, dict, bytes, Timestamp, Duration):
        raise CelError(f"unsupported key type: {type_name(key)}")
    return (True, m[key]) if key in m else (False, None)


def check_map_key(key: Any) -> Any:
    """Map keys must be int, uint, bool or string."""
    t = type(key)
    if t is str or t is int or t is bool or t is UInt:
        return key
    raise CelError(f"unsupported key type: {type_name(key)}")


def compare(a: Any, b: Any) -> int:
    """CEL ordering as -1, 0 or 1 (for sorting, min/max); numbers compare across types.

    The ``<`` family of operators does not use this: Python's own float comparisons already
    give CEL's answer for NaN (every ordering is false).
    """
    ta, tb = type(a), type(b)
    if ta is tb and ta in _ORDERED:
        return -1 if a < b else (1 if b < a else 0)
    if ta is not bool and tb is not bool and is_number(a) and is_number(b):
        return -1 if a < b else (1 if a > b else 0)
    raise no_such_overload("_<_", a, b)


_ORDERED = frozenset({int, UInt, float, str, bytes, bool, Timestamp, Duration})


# orjson writes only plain JSON values (str, int, float, bool, None, list, dict with string
# keys); anything else (a subclass such as ``UInt``, a dataclass, a datetime) raises
_JSON_ONLY = (orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
              | orjson.OPT_PASSTHROUGH_DATETIME)


def json_text(value: Any) -> bytes | None:
    """``value`` as JSON when it holds plain JSON values only; None for anything JSON
    cannot hold as it is (subclasses of str and int, non-string keys, ints beyond 64 bits
    ...). NaN and infinities are written ``null``."""
    try:
        return orjson.dumps(value, option=_JSON_ONLY)
    except TypeError:  # orjson.JSONEncodeError included
        return None
