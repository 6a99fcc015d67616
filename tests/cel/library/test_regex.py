"""Unit tests of ``matches``, ``find`` and ``findAll`` (RE2 through google-re2)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cel.library import regex as R
from policysched.cel.values import CelError


def _err(fn: Any, *args: Any) -> str:
    with pytest.raises(CelError) as info:
        fn(*args)
    return info.value.message


@pytest.mark.parametrize(
    ("text", "pattern", "want"),
    [
        ("hubba", "ubb", True),  # unanchored search, as CEL's matches
        ("hubba", "^ubb", False),
        ("hubba", "^h.*a$", True),
        ("zone-a", "^zone-[a-c]$", True),
        ("zone-d", "^zone-[a-c]$", False),
        ("", "", True),
        ("Ünï", "^.n.$", True),  # '.' is one code point, not one byte
        ("ab\ncd", "^cd", False),
        ("ab\ncd", "(?m)^cd", True),
        ("ABC", "(?i)abc", True),
        ("a\u2028b", "a.b", True),
    ],
)
def test_matches(text: str, pattern: str, want: bool) -> None:
    assert R.matches(text, pattern) is want


def test_matches_errors() -> None:
    message = _err(R.matches, "a", "(")
    assert "invalid regular expression" in message and "missing )" in message
    assert "invalid regular expression" in _err(R.matches, "a", "a{1000}{1000}")
    assert "invalid regular expression" in _err(R.matches, "a", "(?=a)")  # no look-ahead
    assert "invalid regular expression" in _err(R.matches, "a", "(a)\\1")  # no backrefs
    assert "no such overload" in _err(R.matches, 1, "a")
    assert "no such overload" in _err(R.matches, "a", 1)


def test_error_shows_a_long_pattern_shortened() -> None:
    message = _err(R.matches, "a", "(" + "a" * 5000)
    assert message.startswith("invalid regular expression '(" + "a" * 76 + "...': missing )")
    assert len(message) < 200


def test_pathological_pattern_is_linear() -> None:
    # catastrophic for a backtracking engine; instant for RE2
    assert R.matches("a" * 5000 + "b", "^(a+)+$") is False


def test_compile_cache_is_bounded_and_reused() -> None:
    first = R.compile_regex("^x+$")
    assert R.compile_regex("^x+$") is first
    info = R._compile.cache_info()
    assert info.maxsize == R.REGEX_CACHE_SIZE
    assert first.options.max_mem == R.REGEX_MAX_MEM  # memory per pattern is bounded


def test_exponential_dfa_pattern_still_matches() -> None:
    # the DFA of this pattern has 2**20 states: over the memory budget, RE2 falls back
    # to a slower but still linear engine and the answer stays right
    text = "ab" * 5000 + "a" + "b" * 20
    assert R.matches(text, "(a|b)*a(a|b){20}$") is True
    assert R.matches("b" * 30, "(a|b)*a(a|b){20}$") is False


def test_find() -> None:
    assert R.find("abc 123", "[0-9]+") == "123"
    assert R.find("abc 123", "[0-9]*") == ""  # the empty match at 0 comes first
    assert R.find("abc 123", "xyz") == ""
    assert R.find("a 1 b 2", "[0-9]") == "1"
    assert R.find("héllo", "é.") == "él"
    assert R.find("abc", "(b)(c)") == "bc"  # whole match, never a group
    assert "invalid regular expression" in _err(R.find, "a", "[")
    assert "no such overload" in _err(R.find, "a", None)


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (("123 abc 456", "[0-9]+"), ["123", "456"]),
        (("123 abc 456", "[0-9]+", 1), ["123"]),
        (("123 abc 456", "[0-9]+", 0), []),
        (("123 abc 456", "[0-9]+", -1), ["123", "456"]),
        (("123 abc 456", "xyz"), []),
        (("abc 123 def 123", "123"), ["123", "123"]),
        # Go's FindAllString: no empty match right after a match
        (("123 abc 456", "[0-9]*"), ["123", "", "", "", "", "456"]),
        (("ab", "x*"), ["", "", ""]),
        (("aaa", "^a"), ["a"]),
        (("héllo wörld", "[^ ]"), list("héllowörld")),
        (("a,b,,c", "[^,]*"), ["a", "b", "", "c"]),
        (("xyz", "(x)(y)"), ["xy"]),
    ],
)
def test_find_all(args: tuple[Any, ...], want: list[str]) -> None:
    assert R.find_all(*args) == want


def test_find_all_errors() -> None:
    assert "invalid regular expression" in _err(R.find_all, "a", "(")
    assert "no such overload" in _err(R.find_all, "a", "a", "1")
    assert "no such overload" in _err(R.find_all, "a")
    assert "no such overload" in _err(R.find_all, 1, "a")


def test_declarations() -> None:
    by_name = {f.name: f for f in R.FUNCTIONS}
    assert set(by_name) == {"matches", "find", "findAll"}
    members = {o.member for o in by_name["matches"].overloads}
    assert members == {True, False}  # matches(s, re) and s.matches(re)
    # a literal pattern (the second argument, receiver first) is compiled at check time
    assert {(f.literal_check, f.literal_arg) for f in R.FUNCTIONS} == {(R.compile_regex, 1)}
