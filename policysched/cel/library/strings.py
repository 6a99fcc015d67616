"""String functions of cel-go's ``ext.Strings`` library (latest version semantics).

``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``,
``split``, ``substring``, ``trim``, ``join``, ``reverse``, ``strings.quote`` and ``format``.
Positions are Unicode code points (Python ``str`` indices), as cel-go's rune indices.

``indexOf``, ``lastIndexOf`` and ``reverse`` also have list overloads (Kubernetes lists and
cel-go ext lists); one CEL function name is one ``Function``, so they are declared here and
dispatch to ``collections`` for lists.

Deliberate choice: an ``indexOf``/``lastIndexOf`` offset past the end of the string returns
-1 (cel-go since v0.22, which skips the two cel-spec conformance cases that still expect an
error); a negative offset is an error. With an empty substring the offset itself is returned,
whatever it is (``'abc'.indexOf('', 10) == 10``, ``'abc'.indexOf('', -5) == -5``), as cel-go
does.
"""

from __future__ import annotations

import math
from decimal import Decimal
from functools import lru_cache
from typing import Any

from ..types import INT, LIST_DYN, STRING, A, list_of
from ..values import (
    NANOS,
    CelError,
    Duration,
    Timestamp,
    TypeValue,
    UInt,
    no_such_overload,
    type_name,
)
from . import collections as _lists
from .function import Function, Overload, member_overload
from .time import format_timestamp

LIST_STRING = list_of(STRING)
LIST_A = list_of(A)

# Go's unicode.IsSpace (what strings.TrimSpace strips): Latin-1 spaces plus White_Space.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_ASCII_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}
_QUOTE = {
    ord("\a"): "\\a",
    ord("\b"): "\\b",
    ord("\f"): "\\f",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    ord("\v"): "\\v",
    ord("\\"): "\\\\",
    ord('"'): '\\"',
}
MAX_FORMAT_PRECISION = 100  # cel-go's default limit (strings version >= 5)


def _is_list(v: Any) -> bool:
    t = type(v)
    return t is list or t is tuple


def _out_of_range(i: int) -> CelError:
    return CelError(f"index out of range: {i}")


# --- charAt / indexOf / lastIndexOf -----------------------------------------------------


def char_at(s: Any, i: Any) -> str:
    if type(s) is str and type(i) is int:
        if 0 <= i < len(s):
            return s[i]
        if i == len(s):
            return ""
        raise _out_of_range(i)
    raise no_such_overload("charAt", s, i)


def index_of(*args: Any) -> int:
    """``string.indexOf(string[, int])`` and the Kubernetes ``list.indexOf(T)``."""
    n = len(args)
    if n >= 2:
        s = args[0]
        sub = args[1]
        if type(s) is str and type(sub) is str:
            if n == 2:
                return s.find(sub)
            off = args[2]
            if n == 3 and type(off) is int:
                if not sub:
                    return off  # whatever it is, as cel-go
                if off < 0:
                    raise _out_of_range(off)
                if off >= len(s):
                    return -1
                return s.find(sub, off)
        elif n == 2 and _is_list(s):
            return _lists.list_index_of(s, sub)
    raise no_such_overload("indexOf", *args)


def last_index_of(*args: Any) -> int:
    """``string.lastIndexOf(string[, int])`` and the Kubernetes ``list.lastIndexOf(T)``."""
    n = len(args)
    if n >= 2:
        s = args[0]
        sub = args[1]
        if type(s) is str and type(sub) is str:
            if n == 2:
                return s.rfind(sub)
            off = args[2]
            if n == 3 and type(off) is int:
                if not sub:
                    return off  # whatever it is, as cel-go
                if off < 0:
                    raise _out_of_range(off)
                if off >= len(s):
                    return -1
                # the last match starting at or before ``off``
                return s.rfind(sub, 0, off + len(sub))
        elif n == 2 and _is_list(s):
            return _lists.list_last_index_of(s, sub)
    raise no_such_overload("lastIndexOf", *args)


# --- case, replace, split, substring, trim ----------------------------------------------


def lower_ascii(s: Any) -> str:
    if type(s) is str:
        return s.lower() if s.isascii() else s.translate(_ASCII_LOWER)
    raise no_such_overload("lowerAscii", s)


def upper_ascii(s: Any) -> str:
    if type(s) is str:
        return s.upper() if s.isascii() else s.translate(_ASCII_UPPER)
    raise no_such_overload("upperAscii", s)


def replace(*args: Any) -> str:
    """``s.replace(old, new[, n])``: ``n < 0`` replaces all, ``n == 0`` none (Go's Replace)."""
    n = len(args)
    if n >= 3:
        s, old, new = args[0], args[1], args[2]
        if type(s) is str and type(old) is str and type(new) is str:
            if n == 3:
                return s.replace(old, new)
            if n == 4 and type(args[3]) is int:
                count = args[3]
                return s.replace(old, new, count if count >= 0 else -1)
    raise no_such_overload("replace", *args)


def split(*args: Any) -> list[str]:
    """``s.split(sep[, n])`` as Go's SplitN: ``n == 0`` gives [], ``n < 0`` splits all."""
    n = len(args)
    if n >= 2:
        s, sep = args[0], args[1]
        if type(s) is str and type(sep) is str:
            if n == 2:
                return s.split(sep) if sep else list(s)
            limit = args[2]
            if n == 3 and type(limit) is int:
                if limit == 0:
                    return []
                if sep:
                    return s.split(sep) if limit < 0 else s.split(sep, limit - 1)
                if limit < 0 or limit >= len(s):
                    return list(s)
                return [*s[: limit - 1], s[limit - 1 :]]
    raise no_such_overload("split", *args)


def substring(*args: Any) -> str:
    n = len(args)
    if n >= 2:
        s, start = args[0], args[1]
        if type(s) is str and type(start) is int:
            size = len(s)
            if n == 2:
                if 0 <= start <= size:
                    return s[start:]
                raise _out_of_range(start)
            end = args[2]
            if n == 3 and type(end) is int:
                if start > end:
                    raise CelError(f"invalid substring range. start: {start}, end: {end}")
                if start < 0 or start > size:
                    raise _out_of_range(start)
                if end < 0 or end > size:
                    raise _out_of_range(end)
                return s[start:end]
    raise no_such_overload("substring", *args)


def trim(s: Any) -> str:
    if type(s) is str:
        return s.strip(_GO_SPACE)
    raise no_such_overload("trim", s)


# --- join / reverse / quote -----------------------------------------------------------


def join(*args: Any) -> str:
    n = len(args)
    if n >= 1 and _is_list(args[0]):
        sep = "" if n == 1 else args[1]
        if n <= 2 and type(sep) is str:
            items = args[0]
            try:
                return sep.join(items)
            except TypeError:
                bad = next(x for x in items if type(x) is not str)
                raise CelError(f"join: invalid input: {type_name(bad)}") from None
    raise no_such_overload("join", *args)


def reverse(v: Any) -> Any:
    """``string.reverse()`` (by code points) and the ext lists ``list.reverse()``."""
    if type(v) is str:
        return v[::-1]
    if _is_list(v):
        return _lists.list_reverse(v)
    raise no_such_overload("reverse", v)


def _sanitize(s: str) -> str:
    """Replace lone surrogates (invalid in UTF-8) by U+FFFD, as Go does for bad runes."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)
    return s


def quote(s: Any) -> str:
    if type(s) is str:
        return '"' + _sanitize(s).translate(_QUOTE) + '"'
    raise no_such_overload("strings.quote", s)


# --- format -----------------------------------------------------------------------------

_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def go_float(x: float) -> str:
    """Go's ``strconv.FormatFloat(x, 'f', -1, 64)`` (shortest digits, never an exponent),
    with CEL's spelling of NaN and infinities."""
    if x != x:
        return "NaN"
    if x in _NON_FINITE:
        return _NON_FINITE[x]
    r = repr(x)
    if "e" in r:
        return format(Decimal(r), "f")
    if r.endswith(".0"):
        return r[:-2]
    return r


def format_duration(d: Duration) -> str:
    """Seconds with the shortest fraction, e.g. ``6347s`` or ``1.5s`` (cel-go %s)."""
    ns = d.ns
    sec, nsec = divmod(abs(ns), NANOS)
    if ns < 0:
        sec, nsec = -sec, -nsec
    return go_float(float(sec) + float(nsec) / 1e9) + "s"


def _format_error(message: str, v: Any) -> CelError:
    return CelError(f"error during formatting: {message}, was given {type_name(v)}")


def format_string(v: Any) -> str:
    """The ``%s`` rendering of a value (also used for list elements and map entries)."""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return go_float(v)
    if v is None:
        return "null"
    if t is list or t is tuple:
        return "[" + ", ".join([format_string(x) for x in v]) + "]"
    if t is dict:
        entries = sorted((format_string(k), format_string(x)) for k, x in v.items())
        return "{" + ", ".join([f"{k}: {x}" for k, x in entries]) + "}"
    if t is bytes:
        return v.decode("utf-8", "replace")
    if t is Duration:
        return format_duration(v)
    if t is Timestamp:
        return format_timestamp(v)
    if t is TypeValue:
        return v.name
    raise _format_error(
        "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, "
        "types, durations, and timestamps",
        v,
    )


def _format_decimal(v: Any, _precision: int) -> str:
    t = type(v)
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return go_float(v)
    raise _format_error("decimal clause can only be used on integers", v)


def _format_fixed(v: Any, precision: int) -> str:
    t = type(v)
    if t is int or t is UInt:
        return f"{float(v):.{precision}f}"
    if t is float:
        if v != v or v in _NON_FINITE:
            return go_float(v)
        return f"{v:.{precision}f}"
    raise _format_error("fixed-point clause can only be used on doubles", v)


def _format_scientific(v: Any, precision: int) -> str:
    t = type(v)
    if t is int or t is UInt:
        return f"{float(v):.{precision}e}"
    if t is float:
        if v != v or v in _NON_FINITE:
            return go_float(v)
        return f"{v:.{precision}e}"
    raise _format_error("scientific clause can only be used on doubles", v)


def _format_binary(v: Any, _precision: int) -> str:
    t = type(v)
    if t is bool:
        return "1" if v else "0"
    if t is int or t is UInt:
        return format(int(v), "b")
    raise _format_error("only integers and bools can be formatted as binary", v)


def _format_hex(v: Any, _precision: int) -> str:
    t = type(v)
    if t is int or t is UInt:
        return format(int(v), "x")
    if t is str:
        return _sanitize(v).encode("utf-8").hex()
    if t is bytes:
        return v.hex()
    raise _format_error("only integers, byte buffers, and strings can be formatted as hex", v)


def _format_hex_upper(v: Any, precision: int) -> str:
    return _format_hex(v, precision).upper()


def _format_octal(v: Any, _precision: int) -> str:
    t = type(v)
    if t is int or t is UInt:
        return format(int(v), "o")
    raise _format_error("octal clause can only be used on integers", v)


def _format_s(v: Any, _precision: int) -> str:
    return format_string(v)


_CLAUSES = {
    "s": _format_s,
    "d": _format_decimal,
    "f": _format_fixed,
    "e": _format_scientific,
    "b": _format_binary,
    "x": _format_hex,
    "X": _format_hex_upper,
    "o": _format_octal,
}


def _clause_error(message: str) -> str:
    return f"could not parse formatting clause: {message}"


# A parsed template: literal text, then (clause, precision) per substitution; a template
# that cannot be parsed ends with its error message (raised only once the arguments before
# it have been formatted, as cel-go, which checks the argument count first).
_Parsed = tuple[tuple[str, ...], tuple[tuple[Any, int], ...], str | None]


@lru_cache(maxsize=512)
def _parse_template(template: str) -> _Parsed:
    literals: list[str] = []
    clauses: list[tuple[Any, int]] = []
    size = len(template)
    text: list[str] = []
    start = 0
    i = template.find("%")
    while i >= 0:
        text.append(template[start:i])
        if i + 1 < size and template[i + 1] == "%":
            text.append("%")
            start = i + 2
            i = template.find("%", start)
            continue
        literals.append("".join(text))
        text = []
        if i + 1 >= size:
            return tuple(literals), tuple(clauses), "unexpected end of string"
        j = i + 1
        precision = 6
        if template[j] == ".":
            j += 1
            k = j
            while k < size and "0" <= template[k] <= "9":
                k += 1
            digits = template[j:k]
            error = None
            if k >= size:
                error = "could not find end of precision specifier"
            elif not digits:
                error = (
                    "error while converting precision to integer: "
                    'strconv.Atoi: parsing "": invalid syntax'
                )
            elif len(digits) > 4 or int(digits) > MAX_FORMAT_PRECISION:
                error = (
                    f"precision {digits} exceeds maximum allowed precision "
                    f"{MAX_FORMAT_PRECISION}"
                )
            if error is not None:
                message = _clause_error(f"error while parsing precision: {error}")
                return tuple(literals), tuple(clauses), message
            precision = int(digits)
            j = k
        verb = template[j]
        clause = _CLAUSES.get(verb)
        if clause is None:
            message = _clause_error(f'unrecognized formatting clause "{verb}"')
            return tuple(literals), tuple(clauses), message
        clauses.append((clause, precision))
        start = j + 1
        i = template.find("%", start)
    text.append(template[start:])
    literals.append("".join(text))
    return tuple(literals), tuple(clauses), None


def format_(*args: Any) -> str:
    """``"template".format([args])`` with clauses %s %d %f %e %b %x %X %o and ``%%``; ``%.Nf``
    / ``%.Ne`` set the precision (default 6)."""
    if len(args) != 2 or type(args[0]) is not str or not _is_list(args[1]):
        raise no_such_overload("format", *args)
    template: str = args[0]
    values = args[1]
    if "%" not in template:
        return template
    literals, clauses, error = _parse_template(template)
    out = [literals[0]]
    n = len(values)
    for index, (clause, precision) in enumerate(clauses):
        if index >= n:
            raise CelError(f"index {index} out of range")
        out.append(clause(values[index], precision))
        out.append(literals[index + 1])
    if error is not None:
        if len(clauses) >= n:
            raise CelError(f"index {len(clauses)} out of range")
        raise CelError(error)
    return "".join(out)


FUNCTIONS: list[Function] = [
    Function(
        "charAt",
        (member_overload("string_char_at_int", (STRING, INT), STRING),),
        char_at,
        cost_per_size=True,
        doc="s.charAt(i): the code point at i as a string ('' at the end)",
        examples=("'zone-a'.charAt(5)",),
    ),
    Function(
        "indexOf",
        (
            member_overload("string_index_of_string", (STRING, STRING), INT),
            member_overload("string_index_of_string_int", (STRING, STRING, INT), INT),
            member_overload("list_a_index_of_int", (LIST_A, A), INT),
        ),
        index_of,
        cost_per_size=True,
        doc="first position of a substring (optionally from an offset) or list element, or -1",
        examples=("'zone-a'.indexOf('-')", "['a', 'b'].indexOf('b')"),
    ),
    Function(
        "lastIndexOf",
        (
            member_overload("string_last_index_of_string", (STRING, STRING), INT),
            member_overload("string_last_index_of_string_int", (STRING, STRING, INT), INT),
            member_overload("list_a_last_index_of_int", (LIST_A, A), INT),
        ),
        last_index_of,
        cost_per_size=True,
        doc="last position of a substring (starting at or before an offset) or element, or -1",
        examples=("'a.b.c'.lastIndexOf('.')",),
    ),
    Function(
        "lowerAscii",
        (member_overload("string_lower_ascii", (STRING,), STRING),),
        lower_ascii,
        cost_per_size=True,
        doc="the string with ASCII letters in lower case",
        examples=("'GPU-A100'.lowerAscii()",),
    ),
    Function(
        "upperAscii",
        (member_overload("string_upper_ascii", (STRING,), STRING),),
        upper_ascii,
        cost_per_size=True,
        doc="the string with ASCII letters in upper case",
        examples=("'eu-west'.upperAscii()",),
    ),
    Function(
        "replace",
        (
            member_overload("string_replace_string_string", (STRING, STRING, STRING), STRING),
            member_overload("string_replace_string_string_int", (STRING, STRING, STRING, INT),
                            STRING),
        ),
        replace,
        cost_per_size=True,
        doc="s.replace(old, new[, n]): the string with old replaced by new (at most n times)",
        examples=("'zone_a'.replace('_', '-')",),
    ),
    Function(
        "split",
        (
            member_overload("string_split_string", (STRING, STRING), LIST_STRING),
            member_overload("string_split_string_int", (STRING, STRING, INT), LIST_STRING),
        ),
        split,
        cost_per_size=True,
        doc="s.split(separator[, n]): the parts between separators (at most n parts)",
        examples=("'a,b,c'.split(',')", "'a=b=c'.split('=', 2)"),
    ),
    Function(
        "substring",
        (
            member_overload("string_substring_int", (STRING, INT), STRING),
            member_overload("string_substring_int_int", (STRING, INT, INT), STRING),
        ),
        substring,
        cost_per_size=True,
        doc="s.substring(start[, end]): the code points start..end-1",
        examples=("'topology.kubernetes.io/zone'.substring(23)",),
    ),
    Function("trim", (member_overload("string_trim", (STRING,), STRING),), trim,
             cost_per_size=True, doc="the string without leading and trailing white space",
             examples=("'  ssd '.trim()",)),
    Function(
        "join",
        (
            member_overload("list_join", (LIST_STRING,), STRING),
            member_overload("list_join_string", (LIST_STRING, STRING), STRING),
        ),
        join,
        cost_per_size=True,
        doc="list.join([separator]): the strings of the list, concatenated",
        examples=("['zone', 'a'].join('-')",),
    ),
    Function(
        "reverse",
        (
            member_overload("string_reverse", (STRING,), STRING),
            member_overload("list_reverse", (LIST_A,), LIST_A),
        ),
        reverse,
        cost_per_size=True,
        doc="the string's code points, or the list's elements, in reverse order",
        examples=("'abc'.reverse()", "[1, 2, 3].reverse()"),
    ),
    Function(
        "strings.quote",
        (Overload("strings_quote", (STRING,), STRING),),
        quote,
        cost_per_size=True,
        doc="a double-quoted, escaped rendering of the string",
        examples=("strings.quote('say \"hi\"')",),
    ),
    Function(
        "format",
        (member_overload("string_format", (STRING, LIST_DYN), STRING),),
        format_,
        cost_per_size=True,
        doc="printf-style formatting of the list's values: %s, %d, %f (%.2f), %e, %x, %X, "
            "%o, %b, %%",
        examples=("'%s runs %d pods'.format([node.name, node.podCount])",),
    ),
]

