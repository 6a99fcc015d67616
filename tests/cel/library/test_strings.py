# ruff: noqa: RUF001  (Greek letters in the test strings are intentional)
"""Unit tests of the ext strings library, called directly with runtime values.

Cases mirror cel-spec's string_ext conformance file plus cel-go's documented examples.
"""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cel import CelCompileError, Environment, compile_expression
from policysched.cel.library import strings as S
from policysched.cel.values import CelError, UInt


def _err(fn: Any, *args: Any) -> str:
    with pytest.raises(CelError) as info:
        fn(*args)
    return info.value.message


def test_function_names_are_unique_and_declared() -> None:
    names = [f.name for f in S.FUNCTIONS]
    assert len(names) == len(set(names))
    assert {"charAt", "indexOf", "lastIndexOf", "strings.quote", "join"} <= set(names)
    assert all(f.overloads for f in S.FUNCTIONS)


# --- charAt -----------------------------------------------------------------------------


def test_char_at() -> None:
    assert S.char_at("tacocat", 3) == "o"
    assert S.char_at("tacocat", 7) == ""
    assert [S.char_at("©αT", i) for i in range(3)] == ["©", "α", "T"]
    assert _err(S.char_at, "tacocat", 30) == "index out of range: 30"
    assert _err(S.char_at, "tacocat", -1) == "index out of range: -1"
    assert "no such overload" in _err(S.char_at, 42, 2)
    assert "no such overload" in _err(S.char_at, "hello", True)


# --- indexOf / lastIndexOf --------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (("tacocat", ""), 0),
        (("tacocat", "ac"), 1),
        (("tacocat", "none"), -1),
        (("tacocat", "", 3), 3),
        (("tacocat", "a", 3), 5),
        (("tacocat", "at", 3), 5),
        (("ta©o©αT", "©"), 2),
        (("ta©o©αT", "©", 3), 4),
        (("ta©o©αT", "©αT", 3), 4),
        (("ta©o©αT", "©α", 5), -1),
        (("ijk", "k"), 2),
        (("hello wello", "hello wello"), 0),
        (("hello wello", "ello", 6), 7),
        (("hello wello", "elbo room!!"), -1),
        # cel-go v0.26 (Kubernetes 1.34): an offset past the end finds nothing; the empty
        # string is found at the offset, whatever it is
        (("tacocat", "a", 30), -1),
        (("tacocat", "", 30), 30),
        (("tacocat", "", -5), -5),
        (("abc", "", -1), -1),
        (("tacocat", "a", 7), -1),
    ],
)
def test_index_of(args: tuple[Any, ...], want: int) -> None:
    assert S.index_of(*args) == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (("", "@@"), -1),
        (("tacocat", ""), 7),
        (("tacocat", "at"), 5),
        (("tacocat", "none"), -1),
        (("tacocat", "", 3), 3),
        (("tacocat", "a", 3), 1),
        (("ta©o©αT", "©"), 4),
        (("ta©o©αT", "©", 3), 2),
        (("ta©o©αT", "©α", 4), 4),
        (("hello wello", "ello", 6), 1),
        (("hello wello", "low"), -1),
        (("hello wello", "elbo room!!"), -1),
        (("hello wello", "hello wello"), 0),
        (("bananananana", "nana", 7), 6),
        (("tacocat", "a", 30), -1),
        (("tacocat", "", 30), 30),
        (("tacocat", "", -1), -1),
        (("abc", "", -2), -2),
        (("hello mellow", "ello", 6), 1),
    ],
)
def test_last_index_of(args: tuple[Any, ...], want: int) -> None:
    assert S.last_index_of(*args) == want


def test_index_of_errors() -> None:
    assert _err(S.index_of, "tacocat", "a", -1) == "index out of range: -1"
    assert _err(S.last_index_of, "tacocat", "a", -1) == "index out of range: -1"
    for args in [
        (24, "2"),
        ("hello", True),
        (42, "4", 0),
        ("42", 4, 0),
        ("42", "4", "0"),
        ("42", "4", 0, 1),
        ("42",),
    ]:
        assert "no such overload" in _err(S.index_of, *args)
        assert "no such overload" in _err(S.last_index_of, *args)


def test_index_of_on_lists_uses_cel_equality() -> None:
    assert S.index_of([1, 2, 2, 3], 2) == 1
    assert S.last_index_of(["a", "b", "b", "c"], "b") == 2
    assert S.index_of([1.0], 1.1) == -1
    assert S.index_of([], "string") == -1
    assert S.index_of([1, 2.0, UInt(3)], 3) == 2
    assert S.index_of([True, 1], 1) == 1  # true is not 1
    assert S.last_index_of((1, 1.0, 2), UInt(1)) == 1
    assert S.index_of([[1], [2]], [2.0]) == 1


# --- case, replace, split, substring, trim, reverse --------------------------------------


def test_ascii_casing() -> None:
    assert S.lower_ascii("TacoCat") == "tacocat"
    assert S.lower_ascii("TacoCÆt Xii") == "tacocÆt xii"
    assert S.upper_ascii("tacoCat") == "TACOCAT"
    assert S.upper_ascii("tacoCαt") == "TACOCαT"
    assert S.upper_ascii("TacoCÆt Xii") == "TACOCÆT XII"
    assert S.lower_ascii("ÀÉ") == "ÀÉ"  # non-ASCII letters are left alone
    assert "no such overload" in _err(S.lower_ascii, 1)


def test_replace() -> None:
    assert S.replace("12 days 12 hours", "{0}", "2") == "12 days 12 hours"
    assert S.replace("{0} days {0} hours", "{0}", "2") == "2 days 2 hours"
    chained = S.replace(S.replace("{0} days {0} hours", "{0}", "2", 1), "{0}", "23")
    assert chained == "2 days 23 hours"
    assert S.replace("1 ©αT taco", "αT", "o©α") == "1 ©o©α taco"
    assert S.replace("hello hello", "he", "we", -1) == "wello wello"
    assert S.replace("hello hello", "he", "we", -7) == "wello wello"
    assert S.replace("hello hello", "he", "we", 0) == "hello hello"
    assert S.replace("hello hello", "", "_") == "_h_e_l_l_o_ _h_e_l_l_o_"
    assert S.replace("hello hello", "h", "") == "ello ello"
    for args in [
        (42, 2, 1),
        ("42", 2, 1),
        ("42", "2", 1),
        (42, "2", "1", 1),
        ("42", 2, "1", 1),
        ("42", "2", 1, 1),
        ("42", "2", "1", "1"),
        ("42", "2", "1", 1, False),
    ]:
        assert "no such overload" in _err(S.replace, *args)


def test_split() -> None:
    assert S.split("hello world", " ") == ["hello", "world"]
    assert S.split("hello world events!", " ", 0) == []
    assert S.split("hello world events!", " ", 1) == ["hello world events!"]
    assert S.split("hello world events!", " ", 2) == ["hello", "world events!"]
    assert S.split("o©o©o©o", "©", -1) == ["o", "o", "o", "o"]
    assert S.split("", ",") == [""]
    assert S.split("a©c", "") == ["a", "©", "c"]
    assert S.split("abc", "", 2) == ["a", "bc"]
    assert S.split("abc", "", 9) == ["a", "b", "c"]
    assert S.split("", "") == []
    for args in [(42, "2"), ("42", 2), (42, "2", "1"), ("42", 2, 1), ("42", "2", "1"),
                 ("42", "2", 1, 1), (42, "")]:
        assert "no such overload" in _err(S.split, *args)


def test_substring() -> None:
    assert S.substring("tacocat", 4) == "cat"
    assert S.substring("tacocat", 7) == ""
    assert S.substring("tacocat", 0, 4) == "taco"
    assert S.substring("tacocat", 4, 4) == ""
    assert S.substring("ta©o©αT", 2, 6) == "©o©α"
    assert S.substring("ta©o©αT", 7, 7) == ""
    assert _err(S.substring, "tacocat", 40) == "index out of range: 40"
    assert _err(S.substring, "tacocat", -1) == "index out of range: -1"
    assert _err(S.substring, "tacocat", 1, 50) == "index out of range: 50"
    assert _err(S.substring, "tacocat", 49, 50) == "index out of range: 49"
    assert _err(S.substring, "tacocat", 4, 3) == "invalid substring range. start: 4, end: 3"
    for args in [("hello", 1, 2, 3), (30, True, 3), ("tacocat", True, 3), ("tacocat", 0, False)]:
        assert "no such overload" in _err(S.substring, *args)


def test_trim_uses_go_whitespace() -> None:
    assert S.trim(" \f\n\r\t\vtext  ") == "text"
    assert S.trim("\u0085\u00a0\u1680text") == "text"
    assert S.trim("text\u2000\u2001\u2002\u2003\u2004\u2004\u2006\u2007\u2008\u2009") == "text"
    assert S.trim("\u200atext\u2028\u2029\u202f\u205f\u3000") == "text"
    kept = "\u180etext\u200b\u200c\u200d\u2060\ufeff"
    assert S.trim(kept) == kept
    assert S.trim("\x1ctext\x1f") == "\x1ctext\x1f"  # Python's strip() would remove these


def test_reverse() -> None:
    assert S.spec_reverse("") == ""
    assert S.spec_reverse("☺") == "☺"
    assert S.spec_reverse("Ta©oCαt") == "tαCo©aT"
    for impl in (S.reverse, S.spec_reverse):
        assert impl([5, 3, 1, 2]) == [2, 1, 3, 5]
        assert impl((1, "a")) == ["a", 1]
        assert "no such overload" in _err(impl, 1)


def test_no_string_reverse_as_kubernetes() -> None:
    # Kubernetes 1.34 enables ext.Strings version 2: reverse() of a string is a compile
    # error, and a run-time one for a dyn string
    with pytest.raises(CelCompileError, match="reverse"):
        compile_expression("'abc'.reverse()", Environment())
    program = compile_expression("dyn('abc').reverse()", Environment())
    with pytest.raises(CelError, match="no such overload"):
        program.evaluate({})


def test_join() -> None:
    assert S.join(["x", "y"]) == "xy"
    assert S.join(["x", "y"], "-") == "x-y"
    assert S.join([]) == ""
    assert S.join([], "-") == ""
    assert S.join(("a",), ", ") == "a"
    assert "join: invalid input" in _err(S.join, ["a", 1])
    assert "no such overload" in _err(S.join, "ab")
    assert "no such overload" in _err(S.join, ["a"], 1)


# --- strings.quote ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("first\nsecond", '"first\\nsecond"'),
        ("bell\a", '"bell\\a"'),
        ("\bbackspace", '"\\bbackspace"'),
        ("\fform feed", '"\\fform feed"'),
        ("carriage \r return", '"carriage \\r return"'),
        ("horizontal tab\t", '"horizontal tab\\t"'),
        ("vertical \v tab", '"vertical \\v tab"'),
        ("double \\\\ slash", '"double \\\\\\\\ slash"'),
        ("two escape sequences \\a\\n", '"two escape sequences \\\\a\\\\n"'),
        ("verbatim", '"verbatim"'),
        ("ends with \\", '"ends with \\\\"'),
        ("\\ starts with", '"\\\\ starts with"'),
        ("printable unicode😀", '"printable unicode😀"'),
        ('mid string " quote', '"mid string \\" quote"'),
        ("size('πέντε')", "\"size('πέντε')\""),
        ("\U0001f431\U0001f600\U0001f61b", '"🐱😀😛"'),
        ("", '""'),
        ("bad \ud800 rune", '"bad \ufffd rune"'),
    ],
)
def test_quote(text: str, want: str) -> None:
    assert S.quote(text) == want
