# ruff: noqa: RUF001  (Greek letters in the test strings are intentional)
"""Unit tests of the ext strings library, called directly with runtime values.

Cases mirror cel-spec's string_ext conformance file plus cel-go's documented examples.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from policysched.cel.library import strings as S
from policysched.cel.values import NANOS, CelError, Duration, Timestamp, TypeValue, UInt


def _err(fn: Any, *args: Any) -> str:
    with pytest.raises(CelError) as info:
        fn(*args)
    return info.value.message


def test_function_names_are_unique_and_declared() -> None:
    names = [f.name for f in S.FUNCTIONS]
    assert len(names) == len(set(names))
    assert {"charAt", "indexOf", "lastIndexOf", "format", "strings.quote", "join"} <= set(names)
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
    assert S.reverse("") == ""
    assert S.reverse("☺") == "☺"
    assert S.reverse("Ta©oCαt") == "tαCo©aT"
    assert S.reverse([5, 3, 1, 2]) == [2, 1, 3, 5]
    assert S.reverse((1, "a")) == ["a", 1]
    assert "no such overload" in _err(S.reverse, 1)


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


# --- format -----------------------------------------------------------------------------

TS = Timestamp(1675467080 * NANOS)  # 2023-02-03T23:31:20Z


@pytest.mark.parametrize(
    ("template", "args", "want"),
    [
        ("no substitution", [], "no substitution"),
        ("str is %s and some more", ["filler"], "str is filler and some more"),
        ("%% and also %%", [], "% and also %"),
        ("%%%s%%", ["text"], "%text%"),
        ("%s%%", ["percent on the right"], "percent on the right%"),
        ("%%%s", ["percent on the left"], "%percent on the left"),
        (
            "%d %d %d, %s %s %s, %d %d %d, %s %s %s",
            [1, 2, 3, "A", "B", "C", 4, 5, 6, "D", "E", "F"],
            "1 2 3, A B C, 4 5 6, D E F",
        ),
        ("%.3f", [1.2345], "1.234"),
        ("this is 5 in binary: %b", [5], "this is 5 in binary: 101"),
        ("%b", [UInt(64)], "1000000"),
        ("%b", [True], "1"),
        ("%b", [-5], "-101"),
        ("%o", [11], "13"),
        ("%o", [UInt(65535)], "177777"),
        ("%x is 20 in hexadecimal", [30], "1e is 20 in hexadecimal"),
        ("%X", [30], "1E"),
        ("%X", [UInt(6000)], "1770"),
        ("%x", [-30], "-1e"),
        ("%x", ["Hello world!"], "48656c6c6f20776f726c6421"),
        ("%X", ["Hello world!"], "48656C6C6F20776F726C6421"),
        ("%x", [b"byte string"], "6279746520737472696e67"),
        ("%X", [b"byte string"], "6279746520737472696E67"),
        ("%.6e", [1052.032911275], "1.052033e+03"),
        ("%f", [2.71828], "2.718280"),
        ("%f", [2], "2.000000"),
        ("%f", [UInt(3)], "3.000000"),
        ("%e", [2.71828], "2.718280e+00"),
        ("%e", [2], "2.000000e+00"),
        ("%e", [UInt(3)], "3.000000e+00"),
        ("%e", [math.nan], "NaN"),
        ("%e", [math.inf], "Infinity"),
        ("%e", [-math.inf], "-Infinity"),
        ("%d", [math.nan], "NaN"),
        ("%d", [math.inf], "Infinity"),
        ("%d", [-math.inf], "-Infinity"),
        ("%d", [1.5], "1.5"),
        ("%f", [math.nan], "NaN"),
        ("%f", [math.inf], "Infinity"),
        ("%f", [-math.inf], "-Infinity"),
        ("%d", [UInt(64)], "64"),
        ("%s", [None], "null"),
        ("%s", [999999999999], "999999999999"),
        ("%s", [b"xyz"], "xyz"),
        ("%s", [TypeValue("string")], "string"),
        ("%s", [TS], "2023-02-03T23:31:20Z"),
        ("%s", [Duration(6347 * NANOS)], "6347s"),
        (
            "%s",
            [["abc", 3.14, None, [9, 8, 7, 6], TS]],
            "[abc, 3.14, null, [9, 8, 7, 6], 2023-02-03T23:31:20Z]",
        ),
        (
            "%s",
            [
                {
                    "key1": b"xyz",
                    "key5": None,
                    "key2": Duration(7200 * NANOS),
                    "key4": True,
                    "key3": 2.71828,
                }
            ],
            "{key1: xyz, key2: 7200s, key3: 2.71828, key4: true, key5: null}",
        ),
        ("%s", [{UInt(1): "value1", "x": math.nan}], "{1: value1, x: NaN}"),
        ("%s, %s", [True, False], "true, false"),
        ("%s, %s", [32, 56.8], "32, 56.8"),
        ("%s", [[math.nan, math.inf, -math.inf]], "[NaN, Infinity, -Infinity]"),
        ("%s", [[6, 4.2, "a string"]], "[6, 4.2, a string]"),
        (
            "%s",
            [{"strKey": "x", 6: Duration(422 * NANOS), True: 42}],
            "{6: 422s, strKey: x, true: 42}",
        ),
        ("%.0f", [123.0], "123"),
        ("%.0f", [3.5001], "4"),
        ("%.0f", [3.4999], "3"),
        ("%.0f", [1.5], "2"),
        ("%.0f", [2.5], "2"),
        ("%.3f", [123.4999], "123.500"),
        ("%.3f", [123.4994], "123.499"),
        ("%.3f", [-123.4999], "-123.500"),
        ("%.3f", [-123.4994], "-123.499"),
        ("%.5f", [-1.2], "-1.20000"),
        ("%.2s", ["precision ignored"], "precision ignored"),
        ("%s", [2.0], "2"),
        ("%s", [-0.0], "-0"),
        ("%s", [1e21], "1000000000000000000000"),
        ("%s", [1.5e-7], "0.00000015"),
        ("%s", [Duration(-1_500_000_000)], "-1.5s"),
        ("%s", [Duration(1)], "0.000000001s"),
        ("%s", [Timestamp(123_456_000)], "1970-01-01T00:00:00.123456Z"),
        ("%s", [Timestamp(-62135596800 * NANOS)], "0001-01-01T00:00:00Z"),
        ("é%sé", [("x",)], "é[x]é"),
    ],
)
def test_format(template: str, args: list[Any], want: str) -> None:
    assert S.format_(template, args) == want


@pytest.mark.parametrize(
    ("template", "args", "message"),
    [
        ("%a", [1], 'could not parse formatting clause: unrecognized formatting clause "a"'),
        ("%d %d %d", [0, 1], "index 2 out of range"),
        ("%s", [], "index 0 out of range"),
        (
            "string is %b",
            ["abc"],
            "error during formatting: only integers and bools can be formatted as binary, "
            "was given string",
        ),
        (
            "%d",
            [Duration(5)],
            "error during formatting: decimal clause can only be used on integers, "
            "was given google.protobuf.Duration",
        ),
        ("octal: %o", ["a string"], "octal clause can only be used on integers, was given string"),
        ("double is %x", [0.5], "can be formatted as hex, was given double"),
        ("double is %E", [0.5], 'unrecognized formatting clause "E"'),
        ("null: %d", [None], "decimal clause can only be used on integers, was given null_type"),
        ("null: %e", [None], "scientific clause can only be used on doubles, was given null_type"),
        ("null: %f", [None], "fixed-point clause can only be used on doubles, was given null_type"),
        ("null: %x", [None], "was given null_type"),
        ("null: %X", [None], "was given null_type"),
        ("null: %b", [None], "formatted as binary, was given null_type"),
        ("null: %o", [None], "octal clause can only be used on integers, was given null_type"),
        ("%s", [[1, object()]], "string clause can only be used on strings"),
        ("trailing %", [1], "unexpected end of string"),
        ("%.3", [1.0], "could not find end of precision specifier"),
        ("%.f", [1.0], "error while converting precision to integer"),
        ("%.101f", [1.0], "precision 101 exceeds maximum allowed precision 100"),
        ("%.99999999999f", [1.0], "exceeds maximum allowed precision"),
        ("%5d", [1], 'unrecognized formatting clause "5"'),
    ],
)
def test_format_errors(template: str, args: list[Any], message: str) -> None:
    assert message in _err(S.format_, template, args)


def test_format_overloads() -> None:
    assert "no such overload" in _err(S.format_, 1, [])
    assert "no such overload" in _err(S.format_, "%s", "x")
    assert "no such overload" in _err(S.format_, "%s")
