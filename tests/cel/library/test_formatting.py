# ruff: noqa: RUF001  (the multiplication sign and superscripts are what Kubernetes prints)
"""Unit tests of ``string.format``: Kubernetes' version (expected texts from Kubernetes 1.34's
CEL, the cel-reference program of tests/cel/kubernetes), its compile-time validator, and the
CEL specification's version (cases of cel-spec's string_ext conformance file).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from policysched.cel import CelCompileError, CelError, Environment, compile_expression
from policysched.cel.library import formatting as F
from policysched.cel.values import NANOS, Duration, Timestamp, TypeValue, UInt


def _err(fn: Any, *args: Any) -> str:
    with pytest.raises(CelError) as info:
        fn(*args)
    return info.value.message


TS = Timestamp(1675467080 * NANOS)  # 2023-02-03T23:31:20Z


# --- Kubernetes ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ('"%e".format([2.71828])', "2.718280×10⁰⁰"),
        ('"%.6e".format([1052.032911275])', "1.052033×10⁰³"),
        ('"%.2e".format([1052.032911275])', "1.052033×10⁰³"),  # the precision is a width
        ('"%.20e".format([2.5])', "       2.500000×10⁰⁰"),
        ('"%e".format([-1234.5])', "-1.234500×10⁰³"),
        ('"%e".format([1e-300])', "1.000000×10⁻³⁰⁰"),
        ('"%e".format([-0.0000001])', "-1.000000×10⁻⁰⁷"),
        ('"%e".format([9.9999999e9])', "1.000000×10¹⁰"),
        ('"%e".format([-0.0])', "0.000000×10⁰⁰"),
        ('"%e".format([double("NaN")])', "   NaN"),
        ('"%e".format([double("Infinity")])', "     ∞"),
        ('"%e".format(["-Infinity"])', "    -∞"),
        ('"%.0e".format([double("NaN")])', "NaN"),
        ('"%.012e".format([double("NaN")])', "         NaN"),
        ('"%f".format([1234567.891])', "1,234,567.891000"),
        ('"%f".format([-1234567.5])', "-1,234,567.500000"),
        ('"%f".format([1e21])', "1,000,000,000,000,000,000,000.000000"),
        ('"%.0f".format([1234.5])', "1,234"),
        ('"%.0f".format([2.5])', "2"),
        ('"%.3f".format([1234.0005])', "1,234.001"),
        ('"%.10f".format([0.1])', "0.1000000000"),
        ('"%f".format([-0.0])', "0.000000"),
        ('"%f".format([-0.0000001])', "-0.000000"),
        ('"%f".format([0.000001234])', "0.000001"),
        ('"%f".format([double("-Infinity")])', "-∞"),
        ('"%f".format(["NaN"])', "NaN"),
        ('"%.32768f".format([0.1])', "0.1"),  # int16(precision) < 0: shortest digits
        ('"%.65536f".format([0.1])', "0"),  # int16(precision) == 0
        ('"%.10000010f".format([1.5])', "%!(NOVERB)"),  # past x/text's largest precision
        ('"%s".format([["abc", 3.14, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]])',
         '["abc", 3.140000, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]'),
        ('"%s".format([{"key1": b"xyz", "key5": null, "key2": duration("2h"), "key4": true, '
         '"key3": 2.71828}])',
         '{"key1":b"xyz", "key2":duration("7200s"), "key3":2.718280, "key4":true, "key5":null}'),
        ('"%s".format([[double("NaN"), 1.0, 2.5, -0.0]])',
         '["NaN", 1.000000, 2.500000, -0.000000]'),
        ('"%s".format([[double("inf"), double("-inf")]])', '["+Inf", "-Inf"]'),
        ('"%s".format([{"a": [1.5, {"b": b"x"}]}])', '{"a":[1.500000, {"b":b"x"}]}'),
        ('"%s".format([{1: "a", 2: "b", 10: "c"}])', '{1:"a", 10:"c", 2:"b"}'),
        ('"%s".format([{true: "a"}])', '{true:"a"}'),
        ('"%s".format([[1u, -2, true, null]])', "[1, -2, true, null]"),
        ('"%s".format([["tab\\there", "é\\u00a0", "\\x01", "😀", "q\\"b"]])',
         '["tab\\there", "é\\u00a0", "\\x01", "😀", "q\\"b"]'),
        ('"%s".format([[type(1), type("a")]])', "[int, string]"),
        ('"%s".format([[duration("1.5s")]])', '[duration("1.5s")]'),
        ('"%s".format([1234567.0])', "1.234567e+06"),
        ('"%s".format([-0.0])', "-0"),
        ('"%s".format([duration("40809282.123456789s")])', "40809282.12345679s"),
        ('"%x".format([-26])', "-1a"),
        ('"%b".format([-5])', "-101"),
        ('"%o".format([-8])', "-10"),
        ('"%x".format(["é"])', "c3a9"),
    ],
)
def test_kubernetes_format(expr: str, want: str) -> None:
    assert compile_expression(expr, Environment()).evaluate({}) == want


@pytest.mark.parametrize(
    ("template", "args", "message"),
    [  # what Kubernetes fails at run time (the template or the list is not a literal)
        ("%d", ["a"], "decimal clause can only be used on integers, was given string"),
        ("%d", [math.nan], "decimal clause can only be used on integers, was given double"),
        ("%f", [2], "fixed-point clause can only be used on doubles, was given int"),
        ("%f", ["abc"], "fixed-point clause can only be used on doubles, was given string"),
        ("%e", [UInt(3)], "scientific clause can only be used on doubles, was given uint"),
        ("%s", [b"\xff"], 'could not convert argument "invalid UTF-8 in bytes'),
        ("%s", [[Duration(1), object()]], "no formatting function for object"),
        ("%s", [{1.5: 1}], "no formatting function for map key of type double"),
        ("%s %s", [1], "index 1 out of range"),
        ("%s %z", [1], "index 1 out of range"),
        ("%z %s", [1], 'unrecognized formatting clause "z"'),
        ("%é", [1], 'unrecognized formatting clause "Ã"'),
        ("%", [], "index 0 out of range"),
        ("%.99999999999999999999f", [1.5], 'parsing "99999999999999999999": value out of range'),
    ],
)
def test_kubernetes_format_errors(template: str, args: list[Any], message: str) -> None:
    assert message in _err(F.format_kubernetes, template, args)


def test_kubernetes_format_has_no_precision_limit() -> None:
    # x/text: at most int16 decimals, at least uint8 (1000 % 256 = 232)
    assert F.format_kubernetes("%.1000f", [1.5]) == "1.5" + "0" * 231
    # strconv.Atoi: leading zeros are read, more than int64 is an error (no Python int
    # conversion of the whole digit string, which Python limits)
    assert F.format_kubernetes("%." + "0" * 5000 + "3f", [1.5]) == "1.500"
    assert "value out of range" in _err(F.format_kubernetes, "%." + "1" * 5000 + "f", [1.5])
    assert "exceeds maximum allowed precision" in _err(F.format_spec, "%." + "1" * 5000 + "f",
                                                       [1.5])


@pytest.mark.parametrize(
    ("expr", "message", "column"),
    [  # Kubernetes' cel.validator.string_format: message and 1-based column
        ('"%d".format(["a"])', "error during formatting: decimal clause can only be used on "
         "integers, was given string", 14),
        ('"%d".format([double("NaN")])', "decimal clause can only be used on integers, was "
         "given double", 20),
        ('"%f".format([2])', "fixed-point clause can only be used on doubles, was given int", 14),
        ('"%d".format([[1]])', "was given list", 14),
        ('"%s".format([optional.of(1)])', "string clause can only be used on strings, bools, "
         "bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given "
         "optional_type", 25),
        ('"%s".format([[optional.of(1)]])', "was given optional_type", 26),
        ('"%s".format([{"a": [ip("1.2.3.4")]}])', "was given net.IP", 23),
        ('"%s %s".format([1])', "index 1 out of range", 15),
        ('"%s %z".format([1])', "index 1 out of range", 15),
        ('"%z %s".format([1])', 'could not parse formatting clause: unrecognized formatting '
         'clause "z"', 15),
        ('"%.x".format([1])', "could not parse formatting clause: error while parsing "
         "precision: error while converting precision to integer: strconv.Atoi: parsing \"\": "
         "invalid syntax", 13),
        ('"%.3".format([1])', "could not find end of precision specifier", 13),
        ('"%".format([1])', "unexpected end of string", 11),
        ('"%".format([])', "unexpected end of string", 11),
        ('"%s".format([])', "index 0 out of range", 12),
        ('"%%".format([1])', "too many arguments supplied to string.format (expected 0, got 1)",
         12),
        ('"%s".format(["a", 1])', "too many arguments supplied to string.format (expected 1, "
         "got 2)", 12),
    ],
)
def test_kubernetes_format_validator(expr: str, message: str, column: int) -> None:
    with pytest.raises(CelCompileError) as info:
        compile_expression(expr, Environment())
    assert message in info.value.message
    assert info.value.offset == column - 1


@pytest.mark.parametrize(
    "expr",
    [  # not checked when compiled (as Kubernetes): a value of type dyn, or no literal
        'dyn("%d").format(["a"])',
        '"%d".format(dyn(["a"]))',
        '"%d".format([dyn("a")])',
    ],
)
def test_kubernetes_format_validator_leaves_runtime_errors(expr: str) -> None:
    program = compile_expression(expr, Environment())
    with pytest.raises(CelError):
        program.evaluate({})


def test_kubernetes_format_validator_accepts_mixed_literals() -> None:
    expr = '"%s is %d, %.1f%% and %s".format(["x", 1, 2.25, [1, "a"]])'
    assert compile_expression(expr, Environment()).evaluate({}) == 'x is 1, 2.2% and [1, "a"]'


# --- the CEL specification -----------------------------------------------------------------

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
def test_spec_format(template: str, args: list[Any], want: str) -> None:
    assert F.format_spec(template, args) == want


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
def test_spec_format_errors(template: str, args: list[Any], message: str) -> None:
    assert message in _err(F.format_spec, template, args)


@pytest.mark.parametrize("impl", [F.format_spec, F.format_kubernetes])
def test_format_overloads(impl: Any) -> None:
    assert "no such overload" in _err(impl, 1, [])
    assert "no such overload" in _err(impl, "%s", "x")
    assert "no such overload" in _err(impl, "%s")
