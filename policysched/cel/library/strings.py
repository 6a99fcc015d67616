"""String functions of cel-go's ``ext.Strings`` library, version 2 as Kubernetes 1.34
enables it.

``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``,
``split``, ``substring``, ``trim``, ``join`` and ``strings.quote`` (``format`` is in
``formatting``); ``reverse`` of lists only, as Kubernetes (``SPEC_REVERSE``, which also
reverses strings, is for the CEL conformance suite).
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

from typing import Any

from ..types import INT, STRING, A, list_of
from ..values import (
    CelError,
    no_such_overload,
    type_name,
)
from . import collections as _lists
from .function import Function, Overload, member_overload

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
                if not sub:  # cel-go: the offset as it is, even out of range
                    return off
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
                if not sub:  # cel-go: the offset as it is, even out of range
                    return off
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
    """The ext lists ``list.reverse()``; Kubernetes 1.34 has no ``string.reverse()``
    (ext.Strings version 3), not even for a ``dyn`` string at run time."""
    if _is_list(v):
        return _lists.list_reverse(v)
    raise no_such_overload("reverse", v)


def spec_reverse(v: Any) -> Any:
    """``reverse()`` of cel-go's latest libraries: lists, and strings by code points."""
    if type(v) is str:
        return v[::-1]
    return reverse(v)


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


_LIST_REVERSE = member_overload("list_reverse", (LIST_A,), LIST_A)

# The CEL specification's reverse (the conformance suite's): strings too.
SPEC_REVERSE = Function(
    "reverse",
    (member_overload("string_reverse", (STRING,), STRING), _LIST_REVERSE),
    spec_reverse,
    cost_per_size=True,
    doc="the string's code points, or the list's elements, in reverse order",
)

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
        (_LIST_REVERSE,),
        reverse,
        cost_per_size=True,
        doc="the list's elements in reverse order (as Kubernetes, not strings)",
        examples=("[1, 2, 3].reverse()",),
    ),
    Function(
        "strings.quote",
        (Overload("strings_quote", (STRING,), STRING),),
        quote,
        cost_per_size=True,
        doc="a double-quoted, escaped rendering of the string",
        examples=("strings.quote('say \"hi\"')",),
    ),
]

