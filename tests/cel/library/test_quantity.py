"""Unit tests of policysched.cel.library.quantity: the plain-number helpers of the scheduling
variables, and the CEL quantity library (expected values from Kubernetes' own
library/quantity_test.go and the library's documentation)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from policysched.cel import CelCompileError, Environment, compile_expression
from policysched.cel.library import quantity
from policysched.cel.library.quantity import is_negative_quantity, quantity_int
from policysched.cel.library.resource_quantity import Quantity, parse
from policysched.cel.types import INT, STRING
from policysched.cel.values import INT64_MAX, INT64_MIN, CelError

F = {f.name: f.impl for f in quantity.FUNCTIONS}


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("0", 0, 0),
        ("1", 1, 1000),
        ("-1", -1, -1000),
        ("+1", 1, 1000),
        ("500m", 0.5, 500),
        ("100m", 0.1, 100),
        ("1500m", 1.5, 1500),
        ("2000m", 2, 2000),
        ("1Ki", 1024, 1024000),
        ("1.5Gi", 1610612736, 1610612736000),
        ("1Mi", 1048576, 1048576000),
        ("128974848", 128974848, 128974848000),
        ("129e6", 129000000, 129000000000),
        ("1e3", 1000, 1000000),
        ("1E3", 1000, 1000000),
        ("1e-3", 0.001, 1),
        ("100k", 100000, 100000000),
        ("1M", 1000000, 1000000000),
        ("1E", 10**18, None),  # exa: too big in milli-units
        ("1Ei", 2**60, None),
        (".5", 0.5, 500),
        ("5.", 5, 5000),
        ("0.1", 0.1, 100),
        ("1m", 0.001, 1),
        ("0.1m", 0.0001, 1),  # MilliValue rounds up
        ("1n", 1e-9, 1),
        ("1u", 1e-6, 1),
        ("-0.5m", -0.0005, 0),  # ... towards +infinity
        ("-1.5m", -0.0015, -1),
        ("9223372036854775807", 2**63 - 1, None),
        ("9223372036854775808", 9.223372036854776e18, None),  # beyond int64: a double
        ("9223372036854775807m", 9223372036854775.807, 2**63 - 1),
    ],
)
def test_values(text: str, value: int | float, milli: int | None) -> None:
    # Value() as the cache counts it: rounded up, saturated at the int64 bounds
    assert quantity_int(text) == min(max(math.ceil(value), INT64_MIN), INT64_MAX)
    assert parse(text).approximate_float() == float(value)
    assert F["isQuantity"](text) is True
    if milli is None:
        with pytest.raises(CelError, match="int64"):
            F["quantityMilli"](text)
    else:
        assert F["quantityMilli"](text) == milli


@pytest.mark.parametrize(
    "text",
    ["", "1.5.3Gi", "1e", "1e3Mi", "1K", "1ki", "1mi", "1 ", " 1", "1_000", "0x10", "NaN",
     "inf", "-", ".", "\u0661", "1Gi ", "Gi", "1.5GiB", "12e99999", "1" * 300],
)
def test_invalid(text: str) -> None:
    with pytest.raises(ValueError, match="invalid quantity"):
        quantity_int(text)
    with pytest.raises(ValueError, match="invalid quantity"):
        quantity_int(text, milli=True)


def test_error_names_the_input() -> None:
    with pytest.raises(ValueError, match=r"1\.5\.3Gi"):
        quantity_int("1.5.3Gi")


def test_numbers_are_accepted_by_the_python_helper() -> None:
    assert quantity_int(3) == 3
    assert quantity_int(0.25) == 1  # rounded up, as Value()
    assert quantity_int(0.1, milli=True) == 100  # not 101: a float is read as its shortest text
    assert quantity_int(2, milli=True) == 2000
    with pytest.raises(ValueError):
        quantity_int(float("nan"))
    with pytest.raises(ValueError):
        quantity_int(True, milli=True)


def test_binary_suffixes_are_capped_at_int64_as_parse_quantity_does() -> None:
    # apimachinery's ParseQuantity caps a BinarySI quantity at 2^63-1: 8Ei reads 2^63-1
    assert quantity_int("8Ei") == quantity_int("16Ei") == INT64_MAX
    assert quantity_int("-8Ei") == -INT64_MAX  # capped, not saturated at INT64_MIN
    assert quantity_int("7Ei") == 7 * 2**60  # below the cap: exact
    assert is_negative_quantity("-8Ei") and not is_negative_quantity("8Ei")


# quantity -> (Value(), MilliValue()) as the cache counts them. Where kube-scheduler's int64
# accessors do not overflow this is their value (apimachinery v0.34.12, checked with Go);
# where they do (kube's value in the comment) it saturates at the int64 bounds instead.
@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("0", 0, 0),
        ("1n", 1, 1),
        ("1e-30", 1, 1),  # rounded up, as kube (which first rounds up to 1n)
        ("0.5", 1, 500),
        ("1.0000000000000000001", 2, 1001),
        ("1." + "0" * 240 + "1", 2, 1001),  # every digit counts, even the 243rd
        ("1Pi", 2**50, 2**50 * 1000),
        ("9223372036854775807m", 9223372036854776, INT64_MAX),
        ("9E", 9 * 10**18, INT64_MAX),  # kube MilliValue: 0
        ("7Ei", 7 * 2**60, INT64_MAX),  # kube MilliValue: -2^63
        ("8Ei", INT64_MAX, INT64_MAX),  # kube: 2^63-1 (capped), MilliValue -1000
        ("123456789012345678901234567890Ki", INT64_MAX, INT64_MAX),  # kube as 8Ei
        ("9223372036854775807", INT64_MAX, INT64_MAX),  # kube MilliValue: -1000
        ("9223372036854775808", INT64_MAX, INT64_MAX),  # kube Value: -2^63, MilliValue 0
        ("1e19", INT64_MAX, INT64_MAX),  # kube: 0, 0
        ("1e9999", INT64_MAX, INT64_MAX),  # kube: 0, 0
        ("-1e19", INT64_MIN, INT64_MIN),  # (the API server refuses negative amounts)
    ],
)
def test_quantity_int_is_kubes_value_saturated_at_int64(text: str, value: int,
                                                        milli: int) -> None:
    assert quantity_int(text) == value
    assert quantity_int(text, milli=True) == milli


def test_quantity_int_takes_numbers_and_refuses_what_is_no_quantity() -> None:
    assert quantity_int(2**70) == INT64_MAX and quantity_int(3, milli=True) == 3000
    assert quantity_int(0.1, milli=True) == 100
    with pytest.raises(ValueError, match="invalid quantity"):
        quantity_int("1.5.3Gi")


def test_negative_quantities() -> None:
    assert is_negative_quantity("-0.5m") and is_negative_quantity("-1")
    assert not is_negative_quantity("-0") and not is_negative_quantity("0.5m")


# --------------------------------------------------------------------------- CEL library


def run(expr: str, **variables: Any) -> Any:
    return compile_expression(expr, Environment()).evaluate(variables)


# Kubernetes' TestQuantity (k8s.io/apiserver/pkg/cel/library/quantity_test.go)
@pytest.mark.parametrize(("expr", "expected"), [
    ('isQuantity("20")', True),
    ('isQuantity("20M")', True),
    ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False),
    ('isQuantity("10Mm")', False),
    ('quantity("200M") == quantity("200M")', True),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    ('quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && '
     'quantity("0.002G") == quantity("2000k")', True),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0),
    ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
    # the library's documentation
    ('quantity("50000000G").isInteger()', True),
    ('quantity("50k").sub(20000).asApproximateFloat() == 30000.0', True),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20")', True),
    ('isQuantity("1.3G") && isQuantity("1.3Gi") && isQuantity("10000k")', True),
    ('isQuantity("1,3G") || isQuantity("200K") || isQuantity("Three")', False),
    # kubernetes.io's CEL page (values checked with Kubernetes 1.34's library)
    ('quantity("500000G").isInteger()', True),
    ('quantity("50Mi").compareTo(quantity("100Mi"))', -1),
    ('quantity("50.5Gi").asApproximateFloat()', 54223962112.0),
    ('quantity("9999999999999999999999999999999999999G").asApproximateFloat()',
     1.0000000000000001e+46),
    ('quantity("50k").add(quantity("20k")) == quantity("70k")', True),
    # sign is a global function in Kubernetes
    ('sign(quantity("-1n")) == -1 && sign(quantity("0Gi")) == 0 && sign(quantity("1")) == 1',
     True),
    ('type(quantity("1")) == kubernetes.Quantity', True),
    ('quantityMilli("250m") + quantityMilli("1") + quantityMilli("0.1m")', 1251),
])
def test_kubernetes_cases(expr: str, expected: Any) -> None:
    got = run(expr)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(("expr", "shown"), [
    ('quantity("12Mi")', "12Mi"), ("quantity('1.5Gi')", "1536Mi"), ("quantity('1000m')", "1"),
    ("quantity('50k').add(quantity('20k'))", "70k"),
])
def test_values_are_quantities_shown_canonically(expr: str, shown: str) -> None:
    got = run(expr)
    assert isinstance(got, Quantity) and str(got) == shown


@pytest.mark.parametrize(("expr", "s", "message"), [
    ("quantity(s)", "10Mo", "quantities must match the regular expression"),
    ("quantity(s)", "10Mm", "unable to parse quantity's suffix"),
    ("quantity(s).asInteger()", "9999999999999999999999999999999999999G",
     "cannot convert value to integer"),
    ("quantity(s).asInteger()", "1000m", "cannot convert value to integer"),
    ("quantityMilli(s)", "9E", "quantity in milli-units out of int64 range"),
])
def test_runtime_errors(expr: str, s: str, message: str) -> None:
    program = compile_expression(expr, Environment(variables={"s": STRING}))
    with pytest.raises(CelError) as info:
        program.evaluate({"s": s})
    assert message in info.value.message


@pytest.mark.parametrize(("expr", "message"), [
    ("isQuantity([1, 2, 3])", "found no matching overload for 'isQuantity' applied to"),
    ("quantity('1').sign()", "found no matching overload for 'sign' applied to "
                             "'kubernetes.Quantity.()'"),
    ("quantity('1').add(1.5)", "found no matching overload for 'add'"),
    ("quantity('1').compareTo(semver('1.0.0'))", "found no matching overload for 'compareTo'"),
    ("string(quantity('1'))", "found no matching overload for 'string'"),
    ("quantity('200K')", "invalid quantity argument: unable to parse quantity's suffix"),
])
def test_compile_errors(expr: str, message: str) -> None:
    with pytest.raises(CelCompileError) as info:
        compile_expression(expr, Environment())
    assert message in info.value.message


@pytest.mark.parametrize(("name", "args"), [
    ("quantity", (1,)), ("isQuantity", (b"1",)), ("quantityMilli", (None,)),
    ("sign", ("1",)), ("isInteger", (1,)), ("asInteger", (1.0,)),
    ("asApproximateFloat", ("1",)), ("add", (1, 1)), ("sub", (parse("1"), 1.5)),
])
def test_cel_functions_refuse_other_types_at_run_time(name: str, args: tuple[Any, ...]) -> None:
    with pytest.raises(CelError, match="no such overload"):
        F[name](*args)


def test_scheduling_variables_stay_numbers_compared_through_as_integer() -> None:
    expr = "memory > quantity('1Gi').asInteger() && cpu <= quantityMilli('2')"
    program = compile_expression(expr, Environment(variables={"memory": INT, "cpu": INT}))
    assert program.evaluate({"memory": 2**31, "cpu": 1500}) is True
    assert program.evaluate({"memory": 2**30, "cpu": 1500}) is False
