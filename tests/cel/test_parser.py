"""Tests of the CEL parser: grammar, literals, positions, macros, limits and conformance."""

from __future__ import annotations

import base64
import json
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policysched.cel import ast
from policysched.cel.errors import CelCompileError, CompileErrorKind
from policysched.cel.parser import (
    MAX_EXPRESSION_LENGTH,
    MAX_HEIGHT,
    MAX_NESTING,
    RESERVED,
    parse,
)
from policysched.cel.values import UInt

# ---------------------------------------------------------------------------------------
# helpers


def sx(node: ast.Node) -> str:
    """A compact s-expression of a tree, to compare shapes in one string."""
    if isinstance(node, ast.Literal):
        v = node.value
        if v is None:
            return "null"
        if v is True or v is False:
            return str(v).lower()
        if isinstance(v, UInt):
            return f"{int(v)}u"
        return repr(v)
    if isinstance(node, ast.Ident):
        return node.name
    if isinstance(node, ast.Select):
        op = "has." if node.test_only else ".?" if node.optional else "."
        return f"({op} {sx(node.operand)} {node.field})"
    if isinstance(node, ast.Call):
        parts = [sx(a) for a in node.args]
        if node.target is not None:
            return f"({sx(node.target)}.{node.function} {' '.join(parts)})".replace(" )", ")")
        return f"({node.function} {' '.join(parts)})".replace(" )", ")")
    if isinstance(node, ast.CreateList):
        items = [("?" if i in node.optional_indices else "") + sx(e)
                 for i, e in enumerate(node.elements)]
        return f"[{' '.join(items)}]"
    if isinstance(node, ast.CreateMap):
        entries = [("?" if e.optional else "") + f"{sx(e.key)}:{sx(e.value)}"
                   for e in node.entries]
        return "{" + " ".join(entries) + "}"
    if isinstance(node, ast.CreateStruct):
        fields = [("?" if f.optional else "") + f"{f.field}:{sx(f.value)}" for f in node.fields]
        return node.type_name + "{" + " ".join(fields) + "}"
    if isinstance(node, ast.Macro):
        target = "" if node.target is None else sx(node.target) + "."
        names = node.var if node.var2 is None else f"{node.var},{node.var2}"
        return f"<{target}{node.kind} {names}: {' '.join(sx(a) for a in node.args)}>"
    raise AssertionError(f"unknown node {node!r}")


def p(text: str) -> str:
    return sx(parse(text))


def err(text: str) -> CelCompileError:
    with pytest.raises(CelCompileError) as info:
        parse(text)
    e = info.value
    assert e.kind is CompileErrorKind.SYNTAX
    assert 0 <= e.offset <= len(text)
    return e


def height(node: ast.Node) -> int:
    best, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in ast.children(n))
    return best


# ---------------------------------------------------------------------------------------
# literals


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("42", 42),
        ("007", 7),
        ("0x1F", 31),
        ("0xff", 255),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("-0x8000000000000000", -(2**63)),
        ("-7", -7),
        ("- 7", -7),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        ("1E3", 1000.0),
        ("1.5e-3", 0.0015),
        ("2e+2", 200.0),
        (".5", 0.5),
        (".5e1", 5.0),
        ("-1.5", -1.5),
        ("true", True),
        ("false", False),
        ("null", None),
        ("'a'", "a"),
        ('"a"', "a"),
        ("''", ""),
        ("''''''", ""),
        ("'''x''x'''", "x''x"),
        ("'\"\"'", '""'),
        ('"\\""', '"'),
        ('"\\\\"', "\\"),
        ('r"\\\\"', "\\\\"),
        ("R'\\n'", "\\n"),
        ("r'''a\\'''", "a\\"),
        ('"""a\nb"""', "a\nb"),
        ("'''a\r\nb\rc'''", "a\nb\nc"),
        ("'''a\\r\\nb'''", "a\r\nb"),
        ("'é😬'", "é😬"),
        ("b'abc'", b"abc"),
        ('B"abc"', b"abc"),
        ("b'ÿ'", b"\xc3\xbf"),
        ("b'\\303\\277'", b"\xc3\xbf"),
        ("'\\303\\277'", "\u00c3\u00bf"),
        ("'\\377'", "\u00ff"),
        ("b'\\377'", b"\xff"),
        ("'\\xFF'", "\u00ff"),
        ("b'\\xFF'", b"\xff"),
        ("b'\\X0a'", b"\n"),
        ("br'\\x00'", b"\\x00"),
        ("bR'''\\n'''", b"\\n"),
        ("b'''a\nb'''", b"a\nb"),
        ("'\\a\\b\\f\\n\\r\\t\\v\\\\\\'\\\"\\`\\?'", "\a\b\f\n\r\t\v\\'\"`?"),
        ("'\\u00e9\\U0001F62C'", "é😬"),
        ("'\\U0010FFFF'", "\U0010ffff"),
        ("'\\000\\012\\177'", "\x00\n\x7f"),
    ],
)
def test_literal_values(text: str, value: Any) -> None:
    node = parse(text)
    assert isinstance(node, ast.Literal)
    assert node.offset == 0
    assert type(node.value) is type(value)
    if isinstance(value, float):
        assert node.value == pytest.approx(value)
    else:
        assert node.value == value


@pytest.mark.parametrize("text", ["0u", "7u", "7U", "0x1Fu", "0x1FU", "18446744073709551615u"])
def test_uint_literals_are_uint(text: str) -> None:
    node = parse(text)
    assert isinstance(node, ast.Literal)
    assert isinstance(node.value, UInt)
    digits = text.rstrip("uU")
    assert int(node.value) == (int(digits, 16) if digits.startswith("0x") else int(digits))


def test_minus_on_uint_is_an_operator() -> None:
    assert p("-1u") == "(-_ 1u)"


def test_minus_folding_is_only_for_the_innermost_sign() -> None:
    assert p("--5") == "(-_ -5)"
    assert p("--9223372036854775808") == "(-_ -9223372036854775808)"
    assert p("-(5)") == "(-_ 5)"
    assert p("-x") == "(-_ x)"
    assert p("!-5") == "(!_ -5)"
    assert p("1 - -1") == "(_-_ 1 -1)"
    assert p("1-1") == "(_-_ 1 1)"
    assert p("-5.abs()") == "(-5.abs)"  # the sign belongs to the literal, as in cel-go


def test_negative_literal_offset_is_the_sign() -> None:
    node = parse("1 + -2")
    assert isinstance(node, ast.Call)
    assert node.args[1] == ast.Literal(4, -2)


@pytest.mark.parametrize(
    ("text", "offset", "message"),
    [
        ("9223372036854775808", 0, "integer literal out of range"),
        ("1 + 9223372036854775808", 4, "integer literal out of range"),
        ("-(9223372036854775808)", 2, "integer literal out of range"),
        ("-9223372036854775809", 0, "integer literal out of range"),
        ("0x8000000000000000", 0, "integer literal out of range"),
        ("18446744073709551616u", 0, "unsigned integer literal out of range"),
        ("x + 1e999", 4, "double literal out of range"),
    ],
)
def test_number_range_errors(text: str, offset: int, message: str) -> None:
    e = err(text)
    assert e.offset == offset
    assert e.message == message


def test_float_forms_that_are_not_floats() -> None:
    # "1." is not a double (cel-go's grammar): the '.' starts a selection
    assert p("1.e5") == "(. 1 e5)"
    assert "field name" in err("1.").message
    assert err("1.5.").offset == 4


@pytest.mark.parametrize(
    ("text", "offset", "fragment"),
    [
        ("'abc", 0, "unterminated string literal"),
        ("x + 'abc", 4, "unterminated string literal"),
        ('"abc\'', 0, "unterminated string literal"),
        ("'a\nb'", 0, "spanning lines"),
        ("'''abc''", 0, "unterminated string literal"),
        ('r"abc', 0, "unterminated string literal"),
        ("b'abc", 0, "unterminated string literal"),
        ("'abc\\'", 0, "unterminated string literal"),
        ("'a\\qb'", 2, "invalid escape sequence '\\q'"),
        ("'ab\\x4'", 3, "\\x must be followed by 2 hexadecimal digits"),
        ("'ab\\u12'", 3, "\\u must be followed by 4 hexadecimal digits"),
        ("'\\U0000'", 1, "\\U must be followed by 8 hexadecimal digits"),
        ("'\\400'", 1, "octal"),
        ("'\\08'", 1, "octal"),
        ("'\\ud800'", 1, "invalid unicode code point"),
        ("'\\uDFFF'", 1, "invalid unicode code point"),
        ("'\\U00110000'", 1, "invalid unicode code point"),
        ("'\\U0000D800'", 1, "invalid unicode code point"),
        ("b'\\u0041'", 2, "not allowed in bytes"),
        ("b'\\U00000041'", 2, "not allowed in bytes"),
        ("'''a\\'", 0, "unterminated string literal"),
        ("'''a\\z'''", 4, "invalid escape sequence '\\z'"),
        ("'''a\\\nb'''", 4, "a backslash cannot end a line"),
        ("'\\", 0, "unterminated string literal"),
    ],
)
def test_string_errors(text: str, offset: int, fragment: str) -> None:
    e = err(text)
    assert e.offset == offset
    assert fragment in e.message


def test_escaped_quote_does_not_end_string() -> None:
    assert parse("'it\\'s'") == ast.Literal(0, "it's")
    assert parse('"say \\"hi\\""') == ast.Literal(0, 'say "hi"')


def test_raw_strings_keep_backslashes_and_cannot_escape_the_quote() -> None:
    assert parse("r'\\d+'") == ast.Literal(0, "\\d+")
    # in a raw string the backslash does not escape the quote: r'\' is one backslash
    assert parse("r'\\' + 'x'") == ast.Call(5, ast.ADD, (ast.Literal(0, "\\"),
                                                         ast.Literal(7, "x")))


def test_triple_quoted_literal_ends_at_the_first_delimiter() -> None:
    # as cel-go (non-greedy lexer rule): the fourth quote starts a new, unterminated string
    e = err('r"""a""""')
    assert (e.offset, e.message) == (8, "unterminated string literal")
    assert parse("'''a'''+'b'") == ast.Call(7, ast.ADD, (ast.Literal(0, "a"),
                                                         ast.Literal(8, "b")))
    assert parse("'''a''b'''") == ast.Literal(0, "a''b")


def test_only_ascii_digits_are_numbers() -> None:
    e = err("x == \u0663")
    assert e.offset == 5
    assert "unexpected character" in e.message


def test_raw_prefix_must_follow_bytes_prefix() -> None:
    e = err("rb'x'")
    assert e.offset == 2
    assert "string literal" in e.message


# ---------------------------------------------------------------------------------------
# identifiers, reserved words, selection


def test_identifiers_and_selection() -> None:
    assert p("a") == "a"
    assert p("_a1") == "_a1"
    assert p("a.b.c") == "(. (. a b) c)"
    assert p(".a.b") == "(. .a b)"
    assert p("a.`b-c`") == "(. a b-c)"
    assert p("a.`b.c/d e_1`") == "(. a b.c/d e_1)"
    assert p("a.?`b-c`") == "(.? a b-c)"


@pytest.mark.parametrize("word", sorted(RESERVED))
def test_reserved_words_are_not_identifiers(word: str) -> None:
    e = err(f"x + {word}")
    assert e.message == f"reserved identifier '{word}'"
    assert e.offset == 4
    e = err(f"{word}(1)")
    assert e.message == f"reserved identifier '{word}'"
    assert err(f".{word}").offset == 1


@pytest.mark.parametrize("word", sorted(RESERVED))
def test_reserved_words_are_field_and_method_names(word: str) -> None:
    assert p(f"a.{word}") == f"(. a {word})"
    assert p(f"a.{word}()") == f"(a.{word})"
    assert p(f"M{{{word}: 1}}") == f"M{{{word}:1}}"


def test_reserved_word_list_matches_the_spec() -> None:
    expected = {
        "as", "break", "const", "continue", "else", "for", "function", "if", "import",
        "let", "loop", "package", "namespace", "return", "var", "void", "while",
    }
    assert expected == RESERVED


@pytest.mark.parametrize("word", ["in", "true", "false", "null"])
def test_keywords_are_not_field_names_but_can_be_quoted(word: str) -> None:
    e = err(f"a.{word}")
    assert e.offset == 2
    assert "expected a field name" in e.message
    assert f"`{word}`" in e.message
    assert p(f"a.`{word}`") == f"(. a {word})"


def test_in_is_an_operator() -> None:
    assert p("a in b") == "(@in a b)"
    assert err("in").message == "unexpected 'in', expected an expression"


def test_quoted_identifier_errors() -> None:
    e = err("`a`")
    assert e.offset == 0
    assert "field name" in e.message
    assert err("a.`b").message == "unterminated quoted identifier"
    assert err("a.``").message == "empty quoted identifier"
    e = err("a.`b!c`")
    assert e.offset == 4
    assert "invalid character '!'" in e.message
    e = err("a.`b`()")
    assert e.offset == 5
    assert "cannot be called" in e.message


# ---------------------------------------------------------------------------------------
# precedence and associativity


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a || b && c", "(_||_ a (_&&_ b c))"),
        ("a && b || c && d", "(_||_ (_&&_ a b) (_&&_ c d))"),
        ("a == b && c != d", "(_&&_ (_==_ a b) (_!=_ c d))"),
        ("a < b + c", "(_<_ a (_+_ b c))"),
        ("a + b * c - d", "(_-_ (_+_ a (_*_ b c)) d)"),
        ("a - b - c", "(_-_ (_-_ a b) c)"),
        ("a / b % c * d", "(_*_ (_%_ (_/_ a b) c) d)"),
        ("a < b < c", "(_<_ (_<_ a b) c)"),
        ("a in b == c", "(_==_ (@in a b) c)"),
        ("a <= b >= c > d", "(_>_ (_>=_ (_<=_ a b) c) d)"),
        ("!a.b", "(!_ (. a b))"),
        ("!!a", "(!_ (!_ a))"),
        ("-a[0]", "(-_ (_[_] a 0))"),
        ("-a * b", "(_*_ (-_ a) b)"),
        ("!a && b", "(_&&_ (!_ a) b)"),
        ("(a + b) * c", "(_*_ (_+_ a b) c)"),
        ("a ? b : c ? d : e", "(_?_:_ a b (_?_:_ c d e))"),
        ("a || b ? c + 1 : d", "(_?_:_ (_||_ a b) (_+_ c 1) d)"),
        ("(a ? b : c) ? d : e", "(_?_:_ (_?_:_ a b c) d e)"),
        ("a ? (b ? c : d) : e", "(_?_:_ a (_?_:_ b c d) e)"),
        ("a.b(c).d[e].f", "(. (_[_] (. (a.b c) d) e) f)"),
        ("f(a, b)(c)", None),
        ("x[0][1]", "(_[_] (_[_] x 0) 1)"),
        ("[1, 2][0]", "(_[_] [1 2] 0)"),
        ("{'a': 1}.a", "(. {'a':1} a)"),
    ],
)
def test_precedence_and_associativity(text: str, tree: str | None) -> None:
    if tree is None:
        err(text)
    else:
        assert p(text) == tree


def test_logical_chains_are_balanced_like_cel_go() -> None:
    assert p("a || b || c") == "(_||_ (_||_ a b) c)"
    assert p("a || b || c || d") == "(_||_ (_||_ a b) (_||_ c d))"
    assert p("a && b && c && d && e") == "(_&&_ (_&&_ (_&&_ a b) c) (_&&_ d e))"
    long_chain = parse(" || ".join(f"x{i}" for i in range(1000)))
    assert height(long_chain) <= 12
    # every operand appears once, in source order
    leaves: list[str] = []
    stack: list[ast.Node] = [long_chain]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Ident):
            leaves.append(n.name)
        stack.extend(reversed(ast.children(n)))
    assert leaves == [f"x{i}" for i in range(1000)]


def test_unary_operators_cannot_be_mixed_without_parentheses() -> None:
    e = err("!-x")
    assert e.offset == 1
    assert "parentheses" in e.message
    assert err("-!x").offset == 1
    assert p("!(-x)") == "(!_ (-_ x))"


# ---------------------------------------------------------------------------------------
# offsets


def test_node_offsets() -> None:
    text = "a.b + f(x)[0] * m.g(y, 'z')"
    node = parse(text)
    assert isinstance(node, ast.Call) and node.function == ast.ADD
    assert node.offset == text.index("+")
    sel, mul = node.args
    assert isinstance(sel, ast.Select) and sel.offset == 1
    assert isinstance(sel.operand, ast.Ident) and sel.operand.offset == 0
    assert isinstance(mul, ast.Call) and mul.offset == text.index("*")
    index, member = mul.args
    assert isinstance(index, ast.Call) and index.function == ast.INDEX
    assert index.offset == text.index("[")
    call = index.args[0]
    assert isinstance(call, ast.Call) and call.function == "f" and call.offset == 7
    assert call.args[0] == ast.Ident(8, "x")
    assert isinstance(member, ast.Call) and member.function == "g"
    assert member.offset == text.index("g(") + 1  # calls sit on their "(" (cel-go)
    assert member.target == ast.Ident(text.index("m."), "m")
    assert member.args[1] == ast.Literal(text.index("'z'"), "z")


def test_offsets_of_literals_and_entries() -> None:
    text = "[1, {?'k': v}, M{f: 2, ?g: 3}, c ? d : e]"
    node = parse(text)
    assert isinstance(node, ast.CreateList) and node.offset == 0
    m = node.elements[1]
    assert isinstance(m, ast.CreateMap) and m.offset == 4
    assert m.entries[0].offset == 5 and m.entries[0].optional
    assert m.entries[0].key.offset == 6
    s = node.elements[2]
    assert isinstance(s, ast.CreateStruct) and s.offset == text.index("M{")
    assert [f.offset for f in s.fields] == [text.index("f:"), text.index("?g")]
    cond = node.elements[3]
    assert isinstance(cond, ast.Call) and cond.offset == text.index("c ?") + 2


def test_offsets_are_code_points() -> None:
    node = parse("'😬é' + x")
    assert isinstance(node, ast.Call)
    assert node.offset == 5
    assert node.args[1] == ast.Ident(7, "x")


def test_whitespace_and_comments() -> None:
    text = "a\t+\n// comment ( ' \r still comment\n\fb\r// c\n"
    assert p(text) == "(_+_ a b)"
    node = parse(text)
    assert isinstance(node, ast.Call)
    assert node.args[1].offset == text.index("b")
    assert p("a // trailing comment without newline") == "a"
    assert err("a +\n// b").offset == len("a +\n// b")


@pytest.mark.parametrize(
    ("text", "offset", "message"),
    [
        ("", 0, "unexpected end of expression, expected an expression"),
        ("   ", 3, "unexpected end of expression, expected an expression"),
        ("1 +", 3, "unexpected end of expression, expected an expression"),
        ("(1 + 2", 6, "unexpected end of expression, expected ')'"),
        ("f(1, 2))", 7, "unexpected ')', expected an operator or the end of the expression"),
        ("(1 + )", 5, "unexpected ')', expected an expression"),
        ("1 2", 2, "unexpected number '2', expected an operator or the end of the expression"),
        ("a b", 2, "unexpected identifier 'b', expected an operator or the end of the "
                   "expression"),
        ("f(a b)", 4, "unexpected identifier 'b', expected ',' or ')'"),
        ("[1 2]", 3, "unexpected number '2', expected ',' or ']'"),
        ("[1,,2]", 3, "unexpected ',', expected an expression"),
        ("{1 2}", 3, "unexpected number '2', expected ':' after the map key"),
        ("{1: 2 3: 4}", 6, "unexpected number '3', expected ',' or '}'"),
        ("M{1: 2}", 2, "unexpected number '1', expected a field name"),
        ("M{f 2}", 4, "unexpected number '2', expected ':' after the field name"),
        ("a ? b", 5, "unexpected end of expression, expected ':'"),
        ("a ? b ? c : d : e", 6, "unexpected '?', expected ':'"),
        ("a.", 2, "unexpected end of expression, expected a field name"),
        ("a.(b)", 2, "unexpected '(', expected a field name"),
        ("a[1", 3, "unexpected end of expression, expected ']'"),
        ("f(a,)", 4, "unexpected ')', expected an expression (a call cannot end with a "
                     "trailing comma)"),
        ("a = b", 2, "unexpected '=', did you mean '=='?"),
        ("a & b", 2, "unexpected '&', did you mean '&&'?"),
        ("a | b", 2, "unexpected '|', did you mean '||'?"),
        ("a # b", 2, "unexpected character '#'"),
        ("a\x00", 1, "unexpected character '\\x00' (U+0000)"),
        ("x + ü", 4, "unexpected character 'ü' (identifiers are ASCII letters, digits and '_')"),
        ("a /* c */", 3, "unexpected '*', expected an expression"),
        (". 1", 2, "unexpected number '1', expected a name after the leading '.'"),
        ("'s' 'x'", 4, "unexpected string literal, expected an operator or the end of the "
                       "expression"),
        ("f(x){}", 4, "unexpected '{', expected an operator or the end of the expression"),
        ("a.?b()", 4, "a field selected with '.?' cannot be called"),
    ],
)
def test_error_messages_and_positions(text: str, offset: int, message: str) -> None:
    e = err(text)
    assert (e.offset, e.message) == (offset, message)
    assert str(e) == f"syntax error at offset {offset}: {message}"


# ---------------------------------------------------------------------------------------
# aggregates


def test_list_map_and_message_literals() -> None:
    assert p("[]") == "[]"
    assert p("[1, 2,]") == "[1 2]"
    assert p("{}") == "{}"
    assert p("{'a': 1, 2: b,}") == "{'a':1 2:b}"
    assert p("M{}") == "M{}"
    assert p("M{a: 1, b: [2],}") == "M{a:1 b:[2]}"
    assert p("a.b.M{c: 1}") == "a.b.M{c:1}"
    assert p(".a.M{}") == ".a.M{}"
    assert p("M{`a-b`: 1}") == "M{a-b:1}"
    assert p("M{}.f") == "(. M{} f)"
    # as cel-go's grammar: an empty literal may keep its trailing comma, nothing else may
    assert (p("[,]"), p("{,}"), p("M{,}")) == ("[]", "{}", "M{}")
    assert err("[,1]").message == "unexpected ',', expected an expression"
    assert err("{,1: 2}").offset == 1
    node = parse("pkg.Msg{x: 1}")
    assert isinstance(node, ast.CreateStruct)
    assert node.type_name == "pkg.Msg" and node.offset == 0


# ---------------------------------------------------------------------------------------
# optional syntax


def test_optional_syntax() -> None:
    assert p("a.?b") == "(.? a b)"
    assert p("a.?b.c") == "(. (.? a b) c)"
    assert p("a . ? b") == "(.? a b)"
    assert p("a[?b]") == "(_[?_] a b)"
    assert p("a[?0][1]") == "(_[_] (_[?_] a 0) 1)"
    assert p("[?x, y, ?z]") == "[?x y ?z]"
    assert p("{?'k': v, 'j': w}") == "{?'k':v 'j':w}"
    assert p("M{?f: v, g: w}") == "M{?f:v g:w}"
    node = parse("[a, ?b]")
    assert isinstance(node, ast.CreateList)
    assert node.optional_indices == frozenset({1})
    node = parse("x.?y")
    assert isinstance(node, ast.Select) and node.optional and not node.test_only


# ---------------------------------------------------------------------------------------
# calls and macros


def test_calls() -> None:
    assert p("f()") == "(f)"
    assert p("f(a, b)") == "(f a b)"
    assert p(".f(a)") == "(.f a)"
    assert p("a.f()") == "(a.f)"
    assert p("math.abs(-1)") == "(math.abs -1)"
    node = parse("math.abs(x)")
    assert node == ast.Call(8, "abs", (ast.Ident(9, "x"),), ast.Ident(0, "math"))
    assert isinstance(node, ast.Call) and node.target is not None
    assert ast.qualified_name(node.target) == "math"
    node = parse("a.b.c.f(x)")
    assert isinstance(node, ast.Call) and node.target is not None
    assert ast.qualified_name(node.target) == "a.b.c"


def test_has_macro() -> None:
    node = parse("has(a.b)")
    assert node == ast.Select(3, ast.Ident(4, "a"), "b", test_only=True)
    assert p("has(a.b.c)") == "(has. (. a b) c)"
    assert p("has(a.`b-c`)") == "(has. a b-c)"
    assert p("has({}.?x.y)") == "(has. (.? {} x) y)"
    assert p("!has(a.b) && x") == "(_&&_ (!_ (has. a b)) x)"
    # not the macro: other arities and member style stay calls
    assert p("has(a.b, c)") == "(has (. a b) c)"
    assert p("x.has(a.b)") == "(x.has (. a b))"
    assert p("has()") == "(has)"


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("has(a)", 4),
        ("has(a[0])", 5),
        ("has(a.b())", 7),
        ("has(a.?b)", 5),
        ("has(1)", 4),
        ("x && has( f(y) )", 11),
        ("has(has(a.b))", 7),
    ],
)
def test_has_macro_errors(text: str, offset: int) -> None:
    e = err(text)
    assert e.offset == offset
    assert e.message.startswith("invalid argument to has() macro")


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("x.all(v, v > 0)", "<x.all v: (_>_ v 0)>"),
        ("x.exists(v, p)", "<x.exists v: p>"),
        ("x.exists_one(v, p)", "<x.exists_one v: p>"),
        ("x.existsOne(v, p)", "<x.exists_one v: p>"),
        ("x.map(v, v * 2)", "<x.map v: (_*_ v 2)>"),
        ("x.map(v, v > 1, v * 2)", "<x.map_filter v: (_>_ v 1) (_*_ v 2)>"),
        ("x.filter(v, p)", "<x.filter v: p>"),
        ("x.all(i, v, p)", "<x.all i,v: p>"),
        ("x.exists(k, v, p)", "<x.exists k,v: p>"),
        ("x.existsOne(i, v, p)", "<x.exists_one i,v: p>"),
        ("x.exists_one(i, v, p)", "<x.exists_one i,v: p>"),
        ("x.transformList(i, v, e)", "<x.transformList i,v: e>"),
        ("x.transformList(i, v, p, e)", "<x.transformList i,v: p e>"),
        ("x.transformMap(k, v, e)", "<x.transformMap k,v: e>"),
        ("x.transformMap(k, v, p, e)", "<x.transformMap k,v: p e>"),
        ("x.transformMapEntry(k, v, e)", "<x.transformMapEntry k,v: e>"),
        ("x.transformMapEntry(k, v, p, e)", "<x.transformMapEntry k,v: p e>"),
        ("o.optMap(v, v + 1)", "<o.optMap v: (_+_ v 1)>"),
        ("o.optFlatMap(v, v.?a)", "<o.optFlatMap v: (.? v a)>"),
        ("cel.bind(v, 1, v + v)", "<cel.bind v: 1 (_+_ v v)>"),
        ("cel.block([1, cel.index(0) + 1], cel.index(1))",
         "<cel.block : 1 (_+_ @index0 1) @index1>"),
        ("cel.index(12)", "@index12"),
        ("cel.iterVar(0, 1)", "@it:0:1"),
        ("cel.accuVar(2, 3)", "@ac:2:3"),
        ("[1].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 0)",
         "<[1].exists @it:0:0: (_>_ @it:0:0 0)>"),
        ("x.all(a, y.exists(b, a == b))", "<x.all a: <y.exists b: (_==_ a b)>>"),
        ("a.b.map(m, m).size()", "(<(. a b).map m: m>.size)"),
    ],
)
def test_macro_expansion(text: str, tree: str) -> None:
    assert p(text) == tree


def test_macro_node_fields() -> None:
    node = parse("items.map(i, i > 0, i * 2)")
    assert node == ast.Macro(
        9, ast.MAP_FILTER, ast.Ident(0, "items"), "i", None,
        (ast.Call(15, ast.GT, (ast.Ident(13, "i"), ast.Literal(17, 0))),
         ast.Call(22, ast.MUL, (ast.Ident(20, "i"), ast.Literal(24, 2)))),
    )
    node = parse("cel.bind(x, 1, x)")
    assert node == ast.Macro(8, ast.BIND, None, "x", None,
                             (ast.Literal(12, 1), ast.Ident(15, "x")))
    node = parse("cel.block([a], b)")
    assert isinstance(node, ast.Macro)
    assert (node.kind, node.target, node.var, node.var2) == ("cel.block", None, "", None)
    assert node.args == (ast.Ident(11, "a"), ast.Ident(15, "b"))
    node = parse("m.transformMap(k, v, k + v)")
    assert isinstance(node, ast.Macro)
    assert (node.kind, node.var, node.var2) == (ast.TRANSFORM_MAP, "k", "v")


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("x.all(v)", "(x.all v)"),
        ("x.all(a, b, c, d)", "(x.all a b c d)"),
        ("x.map(v)", "(x.map v)"),
        ("x.map(a, b, c, d)", "(x.map a b c d)"),
        ("x.filter(a, b, c)", "(x.filter a b c)"),
        ("x.transformList(i, v)", "(x.transformList i v)"),
        ("x.optMap(v)", "(x.optMap v)"),
        ("all(x, v, p)", "(all x v p)"),
        ("foo.bind(v, 1, v)", "(foo.bind v 1 v)"),
        ("cel.bind(v, 1)", "(cel.bind v 1)"),
        ("a.cel.bind(v, 1, v)", "((. a cel).bind v 1 v)"),
        ("foo.index(1)", "(foo.index 1)"),
        ("cel.block([1])", "(cel.block [1])"),
    ],
)
def test_macro_names_with_other_arities_are_calls(text: str, tree: str) -> None:
    assert p(text) == tree


@pytest.mark.parametrize(
    ("text", "offset", "fragment"),
    [
        ("x.all(1, p)", 6, "argument must be a simple name"),
        ("x.exists(a.b, p)", 10, "argument must be a simple name"),
        ("x.map(f(y), y)", 7, "argument must be a simple name"),
        ("x.map(y + 1, y, y)", 8, "argument must be a simple name"),
        ("x.filter(.y, p)", 9, "argument must be a simple name"),
        ("x.all(i, 2, p)", 9, "argument must be a simple name"),
        ("x.transformMap(k, v.w, p)", 19, "argument must be a simple name"),
        ("o.optMap('v', v)", 9, "argument must be a simple name"),
        ("cel.bind(a.b, 1, 2)", 10, "argument must be a simple name"),
        ("x.all(a, a, p)", 9, "duplicate variable name 'a'"),
        ("x.transformList(i, i, e)", 19, "duplicate variable name 'i'"),
        ("cel.block(x, y)", 10, "cel.block requires a list literal"),
        ("cel.block([?x], y)", 10, "cel.block requires a list literal"),
        ("cel.index(-1)", 10, "cel.index requires a single non-negative int constant"),
        ("cel.index(x)", 10, "cel.index requires a single non-negative int constant"),
        ("cel.index(1u)", 10, "cel.index requires a single non-negative int constant"),
        ("cel.index(true)", 10, "cel.index requires a single non-negative int constant"),
        ("cel.iterVar(0, -1)", 15, "cel.iterVar requires two non-negative int constant"),
        ("cel.accuVar(a, 0)", 12, "cel.accuVar requires two non-negative int constant"),
    ],
)
def test_macro_errors(text: str, offset: int, fragment: str) -> None:
    e = err(text)
    assert e.offset == offset
    assert fragment in e.message


def test_internal_names_cannot_be_written_by_hand() -> None:
    assert err("@index0").offset == 0
    assert err("x.all(@it, p)").offset == 6


# ---------------------------------------------------------------------------------------
# limits


def test_nesting_limit_boundary() -> None:
    ok = "(" * (MAX_NESTING - 1) + "1" + ")" * (MAX_NESTING - 1)
    assert parse(ok) == ast.Literal(MAX_NESTING - 1, 1)
    deep = "(" * MAX_NESTING + "1" + ")" * MAX_NESTING
    e = err(deep)
    assert e.offset == MAX_NESTING
    assert "nests too deeply" in e.message


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,
        "{1:" * 5000 + "1" + "}" * 5000,
        "f(" * 5000 + ")" * 5000,
        "a[" * 5000 + "0" + "]" * 5000,
        "a ? b : " * 5000 + "c",
        "!" * 5000 + "x",
        "-" * 5000 + "x",
        "x" + ".y" * 5000,
        "x" + ".f()" * 5000,
        " + ".join(["1"] * 5000),
        " == ".join(["1"] * 5000),
        "x" + ".all(v, v)" * 2000,
        "[1].map(x, " * 2000 + "x" + ")" * 2000,
    ],
)
def test_depth_is_bounded_without_recursion_error(text: str) -> None:
    e = err(text)
    assert "nests too deeply" in e.message


def test_tree_height_limit_boundary() -> None:
    ok = "!" * (MAX_HEIGHT - 1) + "x"
    assert height(parse(ok)) == MAX_HEIGHT
    e = err("!" * MAX_HEIGHT + "x")
    assert "nests too deeply" in e.message


@pytest.mark.parametrize(
    ("unit", "join"),
    [
        ("1", " + "),  # left-deep arithmetic
        ("1", " < "),  # relations
        ("a", " ? b : "),  # right-deep conditional
        ("", ".f"),  # selection chain on 'x'
        ("", "[0]"),  # index chain on 'x'
    ],
)
def test_chain_height_boundary(unit: str, join: str) -> None:
    def chain(ops: int) -> str:
        return join.join([unit] * (ops + 1)) if unit else "x" + join * ops

    # n operators in a chain make a tree of height n + 1
    assert height(parse(chain(MAX_HEIGHT - 1))) == MAX_HEIGHT
    e = err(chain(MAX_HEIGHT))
    assert "nests too deeply" in e.message


def test_deep_but_balanced_logic_is_accepted() -> None:
    text = " && ".join(f"a{i}" for i in range(5000))
    assert height(parse(text)) <= 14


def test_no_recursion_error_when_called_from_a_deep_stack() -> None:
    text = "(" * (MAX_NESTING - 1) + "1" + ")" * (MAX_NESTING - 1)

    def dive(n: int) -> CelCompileError | ast.Node:
        if n:
            return dive(n - 1)
        try:
            return parse(text)
        except CelCompileError as e:
            return e

    margin = sys.getrecursionlimit() - len(_stack()) - 60
    result = dive(margin)
    # either it parsed, or it failed cleanly as a syntax error
    assert isinstance(result, ast.Literal | CelCompileError)
    if isinstance(result, CelCompileError):
        assert "nests too deeply" in result.message


def _stack() -> list[object]:
    frames: list[object] = []
    f = sys._getframe()
    while f is not None:
        frames.append(f)
        f = f.f_back  # type: ignore[assignment]
    return frames


def test_length_limit() -> None:
    assert parse("a" * MAX_EXPRESSION_LENGTH) == ast.Ident(0, "a" * MAX_EXPRESSION_LENGTH)
    e = err("a" * (MAX_EXPRESSION_LENGTH + 1))
    assert "too long" in e.message
    assert e.offset == MAX_EXPRESSION_LENGTH


def test_long_flat_expressions_are_fine() -> None:
    big_list = "[" + ", ".join(str(i) for i in range(10000)) + "]"
    node = parse(big_list)
    assert isinstance(node, ast.CreateList) and len(node.elements) == 10000
    big_map = "{" + ", ".join(f"'k{i}': {i}" for i in range(3000)) + "}"
    node = parse(big_map)
    assert isinstance(node, ast.CreateMap) and len(node.entries) == 3000


# ---------------------------------------------------------------------------------------
# the product's own example expressions


def test_design_examples() -> None:
    assert p("'delay' in pod.annotations") == "(@in 'delay' (. pod annotations))"
    assert p("now - pod.creationTimestamp >= int(pod.annotations.delay)") == (
        "(_>=_ (_-_ now (. pod creationTimestamp)) (int (. (. pod annotations) delay)))"
    )
    assert p("int(pod.annotations.delay) - (now - pod.creationTimestamp)") == (
        "(_-_ (int (. (. pod annotations) delay)) (_-_ now (. pod creationTimestamp)))"
    )
    assert p("!node.unschedulable") == "(!_ (. node unschedulable))"
    assert p("node.labels['topology.kubernetes.io/zone'] == 'zone-a' ? 100 : 0") == (
        "(_?_:_ (_==_ (_[_] (. node labels) 'topology.kubernetes.io/zone') 'zone-a') 100 0)"
    )


# ---------------------------------------------------------------------------------------
# conformance


PROTO_MARKERS = ("TestAllTypes", "google.protobuf", "object_value", "message_type", "enum_value")

# Words in an expected error that say the expression must not parse. (The IP/CIDR "parse
# error"s of network_ext are evaluation errors of ip()/cidr(), not syntax errors.)
SYNTAX_ERROR_MARKERS = ("syntax error", "Syntax error", "mismatched input",
                        "token recognition error", "reserved identifier", "no viable alternative")

# The cel-spec data expects a backslash that is not in these two expressions; other
# implementations skip them too (cel-cpp: b/464071224).
BAD_EXPECTATIONS = {
    "parse/bytes_literals/triple_single_quoted_unescaped_punctuation",
    "parse/bytes_literals/triple_double_quoted_unescaped_punctuation",
}


def _data_dir() -> Path:
    env = os.environ.get("CEL_CONFORMANCE_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared" / "cel-conformance" / "json"


def _proto_free_cases() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(_data_dir().glob("*.json")):
        data = json.loads(path.read_text())
        for section in data.get("section", []):
            for test in section.get("test", []):
                text = json.dumps(test)
                if "container" in test or any(m in text for m in PROTO_MARKERS):
                    continue
                yield f"{path.stem}/{section.get('name', '')}/{test['name']}", test


def _expects_syntax_error(test: dict[str, Any]) -> bool:
    errors = test.get("eval_error", {}).get("errors", [])
    return any(m in e.get("message", "") for e in errors for m in SYNTAX_ERROR_MARKERS)


CASES = list(_proto_free_cases()) if _data_dir().is_dir() else []
needs_data = pytest.mark.skipif(not CASES, reason="CEL conformance data not found")


@needs_data
def test_conformance_subset_is_present() -> None:
    assert len(CASES) > 1500
    assert any(name.startswith("parse/") for name, _ in CASES)


@needs_data
def test_every_proto_free_conformance_expression_parses() -> None:
    failures: list[str] = []
    should_fail = [name for name, test in CASES if _expects_syntax_error(test)]
    for name, test in CASES:
        expr = test["expr"]
        if name in should_fail:
            try:
                parse(expr)
            except CelCompileError as e:
                if not 0 <= e.offset <= len(expr):
                    failures.append(f"{name}: offset {e.offset} outside the text")
            else:
                failures.append(f"{name}: parsed, but a syntax error is expected")
            continue
        try:
            node = parse(expr)
        except CelCompileError as e:
            failures.append(f"{name}: {e}")
            continue
        if height(node) > MAX_HEIGHT:
            failures.append(f"{name}: tree too high")
    assert failures == []
    # In this data set no proto-free case expects a syntax error: every "error" expectation
    # is an evaluation error (division by zero, overflow, ip() parse errors ...).
    assert should_fail == []


def _scalar(value: dict[str, Any]) -> tuple[bool, Any]:
    if "int64_value" in value:
        return True, int(value["int64_value"])
    if "uint64_value" in value:
        return True, UInt(int(value["uint64_value"]))
    if "double_value" in value:
        return True, float(value["double_value"])
    if "string_value" in value:
        return True, value["string_value"]
    if "bytes_value" in value:
        return True, base64.b64decode(value["bytes_value"])
    if "bool_value" in value:
        return True, value["bool_value"]
    if "null_value" in value:
        return True, None
    return False, None


def _literal_cases() -> list[tuple[str, str, Any]]:
    out = []
    for name, test in CASES:
        if "value" not in test or name in BAD_EXPECTATIONS:
            continue
        ok, expected = _scalar(test["value"])
        if ok and isinstance(parse(test["expr"]), ast.Literal):
            out.append((name, test["expr"], expected))
    return out


LITERAL_CASES = _literal_cases() if CASES else []


@needs_data
def test_literal_conformance_cases_are_numerous() -> None:
    # parse.json's string and bytes sections alone have well over 100 literal cases
    assert len(LITERAL_CASES) > 150


@needs_data
@pytest.mark.parametrize(("name", "expr", "expected"), LITERAL_CASES,
                         ids=[c[0] for c in LITERAL_CASES])
def test_conformance_literal_values(name: str, expr: str, expected: Any) -> None:
    node = parse(expr)
    assert isinstance(node, ast.Literal)
    if isinstance(expected, str):
        # the JSON writes astral characters as surrogate pairs; Python decodes them properly
        expected = expected.encode("utf-16", "surrogatepass").decode("utf-16")
    assert type(node.value) is type(expected)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(node.value)
    else:
        assert node.value == expected
