"""Regular expressions: CEL's ``matches`` and the Kubernetes ``find`` / ``findAll``.

Patterns are RE2 syntax, compiled with google-re2 (linear time, no backtracking) and kept
in a bounded LRU cache; Python's ``re`` is never used on policy text. ``matches`` is a
search: it is true when the pattern matches anywhere in the string (anchor with ``^...$``).
``findAll`` follows Go's ``FindAllString``: an empty match right after a previous match is
skipped.

A pattern written as a string literal is compiled when the expression is checked
(``Function.literal_check``), with the same engine and options as at run time, so an
invalid one is a compile error exactly when it would be a run-time error.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import re2

from ..errors import shown
from ..types import BOOL, INT, STRING, list_of
from ..values import CelError, no_such_overload
from .function import Function, Overload

# Memory bounds: each compiled RE2 object (program + DFA cache) stays under
# REGEX_MAX_MEM, and at most REGEX_CACHE_SIZE of them are kept, so patterns taken from
# untrusted data cannot pin more than ~256 MiB. Typical patterns use a few KiB; a pattern
# whose DFA would outgrow the budget still matches in linear time (RE2 falls back to NFA).
REGEX_CACHE_SIZE = 128
REGEX_MAX_MEM = 2 << 20


def _options() -> Any:
    options = re2.Options()
    options.never_capture = True  # only the whole match is ever used
    options.log_errors = False
    options.max_mem = REGEX_MAX_MEM
    return options


_OPTIONS = _options()
# ``re2.compile`` would also keep each pattern in its own 128-entry LRU; construct
# the pattern object directly when the binding allows it.
_REGEXP_CLASS = getattr(re2, "_Regexp", None)


@lru_cache(maxsize=REGEX_CACHE_SIZE)
def _compile(pattern: str) -> Any:
    if _REGEXP_CLASS is not None:
        return _REGEXP_CLASS(pattern, _OPTIONS)
    return re2.compile(pattern, _OPTIONS)  # pragma: no cover


def _any_byte_escape(pattern: str) -> bool:
    """Whether ``pattern`` has ``\\C`` (one byte) outside ``\\Q...\\E``: RE2 accepts it, Go's
    regexp (Kubernetes') does not."""
    i, n = 0, len(pattern)
    while i < n - 1:
        if pattern[i] != "\\":
            i += 1
            continue
        escaped = pattern[i + 1]
        if escaped == "C":
            return True
        if escaped == "Q":
            end = pattern.find("\\E", i + 2)
            if end < 0:
                return False
            i = end
        i += 2
    return False


def compile_regex(pattern: str) -> Any:
    """The compiled RE2 pattern (cached); a bad pattern is a ``CelError``. The syntax is
    Go's (cel-go's): RE2's, without ``\\C``."""
    if "\\C" in pattern and _any_byte_escape(pattern):
        raise CelError(f"invalid regular expression {shown(pattern)!r}: "
                       "invalid escape sequence: \\C")
    try:
        return _compile(pattern)
    except re2.error as err:
        detail = err.args[0] if err.args else err
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        # RE2's detail quotes the offending part, which may be the whole pattern
        raise CelError(
            f"invalid regular expression {shown(pattern)!r}: {shown(str(detail))}"
        ) from None
    except UnicodeEncodeError:
        raise CelError(
            f"invalid regular expression {shown(pattern)!r}: not valid UTF-8"
        ) from None


def _utf8(s: str) -> bytes:
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return s.encode("utf-8", "replace")


def _make_search() -> Callable[[Any, bytes, int], tuple[int, int] | None]:
    """``search(regex, data, pos) -> (start, end)`` in bytes, or None.

    Uses the binding's RE2 object directly when available (5x less overhead than the
    ``re``-compatible wrapper, which re-encodes and re-indexes the text on every call).
    """
    probe = re2.compile("b", _OPTIONS)
    raw = getattr(probe, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if raw is not None and anchor is not None and hasattr(raw, "Match"):
        try:
            ok = raw.Match(anchor, b"ab", 0, 2)[0] == (1, 2)
        except Exception:  # pragma: no cover - binding changed shape
            ok = False
        if ok:

            def fast(regex: Any, data: bytes, pos: int) -> tuple[int, int] | None:
                span = regex._regexp.Match(anchor, data, pos, len(data))[0]
                return None if span[0] < 0 else span

            return fast

    def portable(regex: Any, data: bytes, pos: int) -> tuple[int, int] | None:
        m = regex.search(data, pos)
        return None if m is None else m.span()

    return portable  # pragma: no cover


_search = _make_search()


def matches(s: Any, pattern: Any) -> bool:
    """``matches(s, re)`` / ``s.matches(re)``: whether ``re`` matches a substring of ``s``."""
    if type(s) is str and type(pattern) is str:
        return _search(compile_regex(pattern), _utf8(s), 0) is not None
    raise no_such_overload("matches", s, pattern)


def find(s: Any, pattern: Any) -> str:
    """The first match of ``pattern`` in ``s``, or ''."""
    if type(s) is str and type(pattern) is str:
        data = _utf8(s)
        span = _search(compile_regex(pattern), data, 0)
        if span is None:
            return ""
        return data[span[0] : span[1]].decode("utf-8", "replace")
    raise no_such_overload("find", s, pattern)


def _rune_width(data: bytes, pos: int) -> int:
    b = data[pos]
    if b < 0x80:
        return 1
    if b < 0xE0:
        return 2
    if b < 0xF0:
        return 3
    return 4


def find_all(*args: Any) -> list[str]:
    """All successive non-overlapping matches, at most ``limit`` of them when ``limit >= 0``."""
    n = len(args)
    if n in (2, 3) and type(args[0]) is str and type(args[1]) is str:
        limit = -1 if n == 2 else args[2]
        if type(limit) is int:
            regex = compile_regex(args[1])
            if limit == 0:
                return []
            data = _utf8(args[0])
            end = len(data)
            out: list[str] = []
            pos = 0
            prev_end = -1
            while pos <= end:
                span = _search(regex, data, pos)
                if span is None:
                    break
                start, stop = span
                accept = True
                if stop == pos:  # empty match at pos
                    if start == prev_end:
                        accept = False  # no empty match right after the previous match
                    pos += _rune_width(data, pos) if pos < end else 1
                else:
                    pos = stop
                prev_end = stop
                if accept:
                    out.append(data[start:stop].decode("utf-8", "replace"))
                    if len(out) == limit:
                        break
            return out
    raise no_such_overload("findAll", *args)


LIST_STRING = list_of(STRING)

FUNCTIONS: list[Function] = [
    Function(
        "matches",
        (
            Overload("matches", (STRING, STRING), BOOL),
            Overload("matches_string", (STRING, STRING), BOOL, member=True),
        ),
        matches,
        cost_per_size=True,
        doc="whether the RE2 pattern matches part of the string",
        examples=("pod.name.matches('^web-[0-9]+$')",),
        literal_check=compile_regex,
        literal_arg=1,
    ),
    Function(
        "find",
        (Overload("string_find_string", (STRING, STRING), STRING, member=True),),
        find,
        cost_per_size=True,
        doc="the first match of an RE2 pattern, or ''",
        examples=("'nginx:1.27.3'.find('[0-9.]+$')",),
        literal_check=compile_regex,
        literal_arg=1,
    ),
    Function(
        "findAll",
        (
            Overload("string_find_all_string", (STRING, STRING), LIST_STRING, member=True),
            Overload(
                "string_find_all_string_int", (STRING, STRING, INT), LIST_STRING, member=True
            ),
        ),
        find_all,
        cost_per_size=True,
        doc="all matches of an RE2 pattern, optionally at most n",
        examples=("'a1b22c333'.findAll('[0-9]+')", "'a1b22c333'.findAll('[0-9]+', 2)"),
        literal_check=compile_regex,
        literal_arg=1,
    ),
]
