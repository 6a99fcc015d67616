"""Unit tests of policysched.cel.library.core (sizes, string tests, conversions, optionals)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from policysched.cel import Environment, compile_expression
from policysched.cel.library import core, network
from policysched.cel.values import (
    BOOL_TYPE,
    DURATION_TYPE,
    INT_TYPE,
    LIST_TYPE,
    MAP_TYPE,
    NANOS,
    NULL_TYPE,
    OPTIONAL_TYPE,
    TIMESTAMP_MIN_SECONDS,
    TYPE_TYPE,
    UINT_TYPE,
    CelError,
    Duration,
    OptionalValue,
    Timestamp,
    UInt,
)

F = {f.name: f.impl for f in core.FUNCTIONS}


def call(name: str, *args: Any) -> Any:
    return F[name](*args)


def error_of(name: str, *args: Any) -> str:
    with pytest.raises(CelError) as info:
        F[name](*args)
    return info.value.message


# --------------------------------------------------------------------------- declarations


def test_every_function_has_overloads_and_unique_names() -> None:
    names = [f.name for f in core.FUNCTIONS]
    assert len(names) == len(set(names))
    for f in core.FUNCTIONS:
        assert f.overloads, f.name
        ids = [o.id for o in f.overloads]
        assert len(ids) == len(set(ids)), f.name


def test_size_has_global_and_member_forms() -> None:
    size = next(f for f in core.FUNCTIONS if f.name == "size")
    assert {o.member for o in size.overloads} == {True, False}


# --------------------------------------------------------------------------- size & strings


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", 0),
        ("four", 4),
        ("πέντε", 5),
        ("🐱😀", 2),  # code points, not UTF-16 units or bytes
        (b"", 0),
        (b"abc", 3),
        ("ÿ".encode(), 2),
        ([1, 2, 3], 3),
        ((1,), 1),
        ({}, 0),
        ({1: "a", 2: "b"}, 2),
    ],
)
def test_size(value: Any, expected: int) -> None:
    assert call("size", value) == expected


@pytest.mark.parametrize("value", [1, 1.5, True, None, UInt(3), Duration(1)])
def test_size_no_overload(value: Any) -> None:
    assert "no such overload" in error_of("size", value)


def test_string_predicates() -> None:
    assert call("contains", "abababc", "ababc") is True
    assert call("contains", "hello", "") is True
    assert call("contains", "", "x") is False
    assert call("contains", "Straße", "aß") is True
    assert call("startsWith", "🐱😀😛", "🐱") is True
    assert call("startsWith", "", "foo") is False
    assert call("startsWith", "foobar", "") is True
    assert call("endsWith", "forté", "té") is True
    assert call("endsWith", "foobar", "foo") is False
    for name in ("contains", "startsWith", "endsWith"):
        assert "no such overload" in error_of(name, "abc", 1)
        assert "no such overload" in error_of(name, b"abc", b"a")


# --------------------------------------------------------------------------- int / uint


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1),
        (UInt(42), 42),
        (UInt(2**63 - 1), 2**63 - 1),
        (-123.456, -123),
        (1.9, 1),
        (-7.9, -7),
        (11.5, 11),
        (-3.5, -3),
        (float(2**55), 2**55),
        ("987", 987),
        ("+5", 5),
        ("-5", -5),
        ("007", 7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        (Timestamp(1095379199 * NANOS), 1095379199),
        (Timestamp(-1), -1),  # Unix seconds round down, as Go's Time.Unix()
        (Duration(1500), 1500),  # nanoseconds
    ],
)
def test_int(value: Any, expected: int) -> None:
    got = call("int", value)
    assert got == expected and type(got) is int


@pytest.mark.parametrize(
    "value",
    [UInt(2**64 - 1), UInt(2**63), 9223372036854775807.0, -9223372036854775808.0, 1e99,
     math.inf, -math.inf, math.nan, "9223372036854775808", "-9223372036854775809",
     "1" * 40],
)
def test_int_range_errors(value: Any) -> None:
    # cel-go's text for numbers; a string out of range says so
    assert error_of("int", value) == "integer overflow" if type(value) is not str else (
        "out of range" in error_of("int", value))


@pytest.mark.parametrize(
    "value", ["", "-", "1.0", "1e3", " 1", "1 ", "1_000", "\u0661", "0x10", "++1"]
)
def test_int_bad_strings(value: str) -> None:
    assert "type conversion error" in error_of("int", value)


def test_int_no_overload() -> None:
    assert "no such overload" in error_of("int", True)
    assert "no such overload" in error_of("int", None)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1729, 1729),
        (2**63 - 1, 2**63 - 1),
        (UInt(1), 1),
        (3.14159265, 3),
        (25.5, 25),
        (float(2**55), 2**55),
        ("300", 300),
        ("18446744073709551615", 2**64 - 1),
    ],
)
def test_uint(value: Any, expected: int) -> None:
    got = call("uint", value)
    assert got == expected and type(got) is UInt


@pytest.mark.parametrize("value", [-1, -0.5, 6.022e23, 2.0**64, math.nan, "18446744073709551616"])
def test_uint_range_errors(value: Any) -> None:
    assert error_of("uint", value) == "unsigned integer overflow" if type(value) is not str else (
        "out of range" in error_of("uint", value))


@pytest.mark.parametrize("value", ["-1", "+1", "", "1.5", " 1"])
def test_uint_bad_strings(value: str) -> None:
    assert "type conversion error" in error_of("uint", value)


# --------------------------------------------------------------------------- double


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0.0),
        (9223372036854775807, 9.223372036854776e18),
        (UInt(2**64 - 1), 1.8446744073709552e19),
        (5.5, 5.5),
        ("0", 0.0),
        ("123", 123.0),
        ("-987.654", -987.654),
        ("6.02214e23", 6.02214e23),
        ("1e3", 1000.0),
        ("1E3", 1000.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("-5.43e-21", -5.43e-21),
        ("1_000", 1000.0),  # Go's ParseFloat allows underscores between digits
        ("0x1p-2", 0.25),
        ("inf", math.inf),
        ("-Infinity", -math.inf),
        ("+INF", math.inf),
        ("1e-400", 0.0),  # underflow is not an error in Go either
    ],
)
def test_double(value: Any, expected: float) -> None:
    got = call("double", value)
    assert type(got) is float and got == expected


def test_double_negative_zero_and_nan() -> None:
    assert math.copysign(1, call("double", "-0.0")) == -1
    assert math.isnan(call("double", "NaN"))
    assert math.isnan(call("double", "nan"))


@pytest.mark.parametrize(
    "value", ["", " 1", "1 ", "1e", ".", "-nan", "0x10", "\uff11", "e5", "1__0"]
)
def test_double_bad_strings(value: str) -> None:
    assert "type conversion error" in error_of("double", value)


@pytest.mark.parametrize("value", ["1e400", "-1e309"])
def test_double_out_of_range(value: str) -> None:
    assert "range" in error_of("double", value)


# --------------------------------------------------------------------------- string


# Expected texts produced by Go's fmt.Sprintf("%g", x), which cel-go uses for string(double).
GO_G_FORMAT = [
    (0.0, "0"),
    (-0.0, "-0"),
    (1.0, "1"),
    (-1.0, "-1"),
    (0.1, "0.1"),
    (123.456, "123.456"),
    (-0.0045, "-0.0045"),
    (1000000.0, "1e+06"),
    (100000.0, "100000"),
    (123456.0, "123456"),
    (1234567.0, "1.234567e+06"),
    (1e21, "1e+21"),
    (1e-4, "0.0001"),
    (1e-5, "1e-05"),
    (0.00012345, "0.00012345"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (2.0**63, "9.223372036854776e+18"),
    (1 / 3, "0.3333333333333333"),
    (100.0, "100"),
    (999999.5, "999999.5"),
    (-1.5e-07, "-1.5e-07"),
    (math.inf, "+Inf"),
    (-math.inf, "-Inf"),
    (math.nan, "NaN"),
    (1e100, "1e+100"),
    (123456789.0, "1.23456789e+08"),
]


@pytest.mark.parametrize(("value", "expected"), GO_G_FORMAT)
def test_string_of_double_matches_go(value: float, expected: str) -> None:
    assert call("string", value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hello", "hello"),
        (123, "123"),
        (-456, "-456"),
        (UInt(9876), "9876"),
        (True, "true"),
        (False, "false"),
        (b"abc", "abc"),
        (b"\xc3\xbf", "ÿ"),
        (Timestamp(1234567890 * NANOS), "2009-02-13T23:31:30Z"),
        (Timestamp(253402300799 * NANOS + 999999999), "9999-12-31T23:59:59.999999999Z"),
        (Timestamp(TIMESTAMP_MIN_SECONDS * NANOS), "0001-01-01T00:00:00Z"),
        (Timestamp(-1), "1969-12-31T23:59:59.999999999Z"),
        (Timestamp(1_500_000_000), "1970-01-01T00:00:01.5Z"),
        (Duration(1000000 * NANOS), "1000000s"),
        (Duration(1_500_000_000), "1.5s"),
        (Duration(-1), "-0.000000001s"),
        (Duration(0), "0s"),
    ],
)
def test_string(value: Any, expected: str) -> None:
    assert call("string", value) == expected


def test_string_of_invalid_utf8_bytes() -> None:
    assert "invalid UTF-8" in error_of("string", b"\x00\xff")
    assert "invalid UTF-8" in error_of("string", b"\xed\xa0\x80")  # an encoded surrogate


def test_string_of_network_values_uses_network_to_string() -> None:
    assert call("string", network.IP(network.parse_ip("2001:DB8::68"))) == "2001:db8::68"
    assert call("string", network.parse_cidr("192.168.0.1/24")) == "192.168.0.1/24"


@pytest.mark.parametrize("value", [None, [1], {}, 1j])
def test_string_no_overload(value: Any) -> None:
    assert "no such overload" in error_of("string", value)


# --------------------------------------------------------------------------- bytes / bool


def test_bytes() -> None:
    assert call("bytes", "") == b""
    assert call("bytes", "ÿ") == b"\xc3\xbf"
    assert call("bytes", b"\xff") == b"\xff"
    assert "invalid UTF-8" in error_of("bytes", "\ud800")
    assert "no such overload" in error_of("bytes", 1)


@pytest.mark.parametrize("text", ["1", "t", "T", "true", "TRUE", "True"])
def test_bool_true_strings(text: str) -> None:
    assert call("bool", text) is True


@pytest.mark.parametrize("text", ["0", "f", "F", "false", "FALSE", "False"])
def test_bool_false_strings(text: str) -> None:
    assert call("bool", text) is False


@pytest.mark.parametrize("text", ["TrUe", "FaLsE", "yes", "", " true", "2"])
def test_bool_bad_strings(text: str) -> None:
    assert "type conversion error" in error_of("bool", text)


def test_bool_identity_and_no_overload() -> None:
    assert call("bool", True) is True
    assert "no such overload" in error_of("bool", 1)


# --------------------------------------------------------------------------- dyn / type


def test_dyn_is_identity() -> None:
    v = [1, "one"]
    assert call("dyn", v) is v


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, BOOL_TYPE),
        (0, INT_TYPE),
        (UInt(1), UINT_TYPE),
        (None, NULL_TYPE),
        ([1, "a"], LIST_TYPE),
        ({}, MAP_TYPE),
        (INT_TYPE, TYPE_TYPE),
        (Duration(0), DURATION_TYPE),
        (OptionalValue.NONE, OPTIONAL_TYPE),
    ],
)
def test_type(value: Any, expected: Any) -> None:
    assert call("type", value) == expected


def test_type_of_network_values() -> None:
    assert call("type", network.IP(network.parse_ip("1.2.3.4"))).name == "net.IP"
    assert call("type", network.parse_cidr("1.2.3.0/24")).name == "net.CIDR"


# --------------------------------------------------------------------------- timestamp


@pytest.mark.parametrize(
    ("text", "seconds", "nanos"),
    [
        ("2009-02-13T23:31:30Z", 1234567890, 0),
        ("2009-02-13T23:31:20.123456789Z", 1234567880, 123456789),
        ("2009-02-13T23:31:30.1Z", 1234567890, 100_000_000),
        ("2009-02-13T23:31:30.1234567899Z", 1234567890, 123456789),  # truncated, as Go
        ("2009-02-14T00:31:30+01:00", 1234567890, 0),
        ("2009-02-13T21:01:30-02:30", 1234567890, 0),
        ("2008-02-29T00:00:00Z", 1204243200, 0),
        ("1969-12-31T23:59:59.5Z", -1, 500_000_000),
        ("0001-01-01T00:00:00Z", TIMESTAMP_MIN_SECONDS, 0),
        ("9999-12-31T23:59:59.999999999Z", 253402300799, 999999999),
    ],
)
def test_timestamp_from_string(text: str, seconds: int, nanos: int) -> None:
    assert call("timestamp", text) == Timestamp(seconds * NANOS + nanos)


@pytest.mark.parametrize(
    "text",
    [
        "2009-02-13t23:31:30Z",
        "2009-02-13T23:31:30z",
        "2009-02-13 23:31:30Z",
        "2009-02-13T23:31:30",
        "2009-02-29T00:00:00Z",
        "2009-13-01T00:00:00Z",
        "2009-02-13T24:00:00Z",
        "2009-02-13T23:59:60Z",
        "2009-02-13T23:31:30.Z",
        "2009-02-13T23:31:30+0100",
        "2009-02-13T23:31:30+01:00:00",
        "2009-2-13T23:31:30Z",
        "\uff12009-02-13T23:31:30Z",
        "",
    ],
)
def test_timestamp_bad_strings(text: str) -> None:
    assert "type conversion error" in error_of("timestamp", text)


@pytest.mark.parametrize(
    "value",
    ["0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00",
     "9999-12-31T23:00:00-01:00", -62135596801, 253402300800, 2**62],
)
def test_timestamp_range(value: Any) -> None:
    assert error_of("timestamp", value) == "timestamp overflow" if type(value) is int else (
        "out of range" in error_of("timestamp", value))


def test_timestamp_from_int_and_identity() -> None:
    assert call("timestamp", 1000000000) == Timestamp(1000000000 * NANOS)
    ts = Timestamp(5)
    assert call("timestamp", ts) is ts
    assert "no such overload" in error_of("timestamp", 1.5)


# --------------------------------------------------------------------------- duration


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("0", 0),
        ("-0", 0),
        ("0s", 0),
        ("1h2m3.5s", 3723_500_000_000),
        ("-1.5h", -5400 * NANOS),
        ("+1s", NANOS),
        ("100ms", 100_000_000),
        ("1us", 1000),
        ("1µs", 1000),  # micro sign
        ("1μs", 1000),  # Greek mu
        ("1ns", 1),
        ("1m1h", 3660 * NANOS),
        (".5s", 500_000_000),
        ("5.s", 5 * NANOS),
        ("1.000000001s", NANOS + 1),
        ("0.1ns", 0),
        ("1000000s", 1000000 * NANOS),
    ],
)
def test_duration_from_string(text: str, ns: int) -> None:
    assert call("duration", text) == Duration(ns)


@pytest.mark.parametrize(
    "text", ["", "1", "1.5", "s", ".s", "-.s", "1d", "1S", "1h-2m", "--1s", "1h 2m", "3m3"]
)
def test_duration_bad_strings(text: str) -> None:
    assert "type conversion error" in error_of("duration", text)


@pytest.mark.parametrize("text", [
    "320000000000s", "-320000000000s", "1" + "0" * 40 + "ns",
    # Go's time.Duration (int64 nanoseconds), as in Kubernetes: about 292 years
    "2562048h", "-2562048h", "9223372037s", "9223372036.854775808s", "-9223372036.854775809s"])
def test_duration_range(text: str) -> None:
    assert "range" in error_of("duration", text)


@pytest.mark.parametrize(("text", "ns"), [
    ("2562047h", 2562047 * 3600 * 10**9), ("9223372036.854775807s", 2**63 - 1),
    ("-9223372036.854775808s", -(2**63))])
def test_duration_range_ends(text: str, ns: int) -> None:
    assert call("duration", text) == Duration(ns)


def test_duration_identity_and_no_overload() -> None:
    d = Duration(7)
    assert call("duration", d) is d
    assert "no such overload" in error_of("duration", 7)


# --------------------------------------------------------------------------- optionals


def test_optional_of_and_none() -> None:
    o = call("optional.of", None)
    assert type(o) is OptionalValue and o.has and o.value is None
    assert call("optional.none") is OptionalValue.NONE
    assert not call("optional.none").has


@pytest.mark.parametrize(
    "value",
    [None, False, 0, UInt(0), 0.0, -0.0, "", b"", [], (), {}, Duration(0),
     Timestamp(TIMESTAMP_MIN_SECONDS * NANOS), OptionalValue.NONE],
)
def test_of_non_zero_value_zero(value: Any) -> None:
    assert call("optional.ofNonZeroValue", value) == OptionalValue.NONE


@pytest.mark.parametrize("value", [True, 1, UInt(1), 0.5, "x", b"x", [0], {"": 0}, Duration(1),
                                   Timestamp(0), OptionalValue(0), INT_TYPE])
def test_of_non_zero_value_present(value: Any) -> None:
    o = call("optional.ofNonZeroValue", value)
    assert o.has and o.value is value


def test_has_value_value_or_or_value() -> None:
    some, none = OptionalValue(42), OptionalValue.NONE
    assert call("hasValue", some) is True
    assert call("hasValue", none) is False
    assert call("value", some) == 42
    assert "optional.none() dereference" in error_of("value", none)
    assert call("or", none, some) is some
    assert call("or", some, OptionalValue(1)) is some
    assert call("or", none, none) is none
    assert call("orValue", none, "d") == "d"
    assert call("orValue", some, "d") == 42
    for name, args in [("hasValue", (1,)), ("value", (1,)), ("or", (some, 1)),
                       ("orValue", (1, 2))]:
        assert "no such overload" in error_of(name, *args)


def test_unwrap() -> None:
    items = [OptionalValue(1), OptionalValue.NONE, OptionalValue(None)]
    assert call("optional.unwrap", items) == [1, None]
    assert call("unwrapOpt", tuple(items)) == [1, None]
    assert "no such overload" in error_of("optional.unwrap", [1])
    assert "no such overload" in error_of("unwrapOpt", "x")


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("size('πέντε') + 'abc'.size()", 8),
        ("int('42') + int(2.9)", 44),
        ("string(-4.5e-3)", "-0.0045"),
        ("string(timestamp('2009-02-13T23:31:30Z'))", "2009-02-13T23:31:30Z"),
        ("duration('1h2m3.5s') == duration('3723500ms')", True),
        ("optional.ofNonZeroValue('').or(optional.of(1)).value()", 1),
        ("type(1u) == uint", True),
        ("bool('TRUE') && !bool('f')", True),
    ],
)
def test_through_the_compiler(expr: str, expected: Any) -> None:
    got = compile_expression(expr, Environment(), check=False).evaluate({})
    assert got == expected and type(got) is type(expected)


def test_map_keys_compare_as_cel_numbers_and_bools_stay_apart() -> None:
    from policysched.cel.values import map_lookup

    m: dict[Any, Any] = {2: "two", 3.0: "three", True: "yes", "4": "four"}
    assert map_lookup(m, 2.0) == (True, "two")
    assert map_lookup(m, UInt(3)) == (True, "three")
    assert map_lookup(m, 4) == (False, None)
    assert map_lookup(m, 1) == (False, None)  # true is not 1 in CEL
    assert map_lookup(m, True) == (True, "yes")
    assert map_lookup({1: "one"}, True) == (False, None)
    assert map_lookup({1: "one"}, 1.0) == (True, "one")
