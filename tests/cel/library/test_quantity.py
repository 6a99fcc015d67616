"""Unit tests of policysched.cel.library.quantity (Kubernetes quantities as numbers)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cel import Environment, compile_expression
from policysched.cel.library import quantity
from policysched.cel.library.quantity import parse_quantity_milli, parse_quantity_value
from policysched.cel.values import CelError

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
    got = parse_quantity_value(text)
    assert got == value and type(got) is type(value)
    assert F["quantity"](text) == value
    assert F["isQuantity"](text) is True
    if milli is None:
        with pytest.raises(ValueError, match="int64"):
            parse_quantity_milli(text)
        with pytest.raises(CelError, match="int64"):
            F["quantityMilli"](text)
    else:
        assert parse_quantity_milli(text) == milli
        assert F["quantityMilli"](text) == milli


@pytest.mark.parametrize(
    "text",
    ["", "1.5.3Gi", "1e", "1e3Mi", "1K", "1ki", "1mi", "1 ", " 1", "1_000", "0x10", "NaN",
     "inf", "-", ".", "\u0661", "1Gi ", "Gi", "1.5GiB", "12e99999", "1" * 300],
)
def test_invalid(text: str) -> None:
    with pytest.raises(ValueError, match="invalid quantity"):
        parse_quantity_value(text)
    with pytest.raises(ValueError, match="invalid quantity"):
        parse_quantity_milli(text)
    with pytest.raises(CelError, match="invalid quantity"):
        F["quantity"](text)
    assert F["isQuantity"](text) is False


def test_error_names_the_input() -> None:
    with pytest.raises(ValueError, match=r"1\.5\.3Gi"):
        parse_quantity_value("1.5.3Gi")
    with pytest.raises(CelError, match="'12Kb'"):
        F["quantityMilli"]("12Kb")


def test_double_overflow() -> None:
    with pytest.raises(ValueError, match="range"):
        parse_quantity_value("1e9999")


def test_numbers_are_accepted_by_the_python_helpers() -> None:
    assert parse_quantity_value(3) == 3
    assert parse_quantity_value(2.0) == 2 and type(parse_quantity_value(2.0)) is int
    assert parse_quantity_value(0.25) == 0.25
    assert parse_quantity_milli(0.1) == 100  # not 101: floats are read as their shortest text
    assert parse_quantity_milli(2) == 2000
    with pytest.raises(ValueError):
        parse_quantity_value(float("nan"))
    with pytest.raises(ValueError):
        parse_quantity_milli(True)


@pytest.mark.parametrize("name", ["quantity", "quantityMilli", "isQuantity"])
@pytest.mark.parametrize("arg", [1, 1.5, None, b"1"])
def test_cel_functions_take_strings_only(name: str, arg: Any) -> None:
    with pytest.raises(CelError, match="no such overload"):
        F[name](arg)


def test_through_the_compiler() -> None:
    expr = "quantity('1.5Gi') == 1610612736 && quantityMilli('250m') == 250 && !isQuantity('x')"
    assert compile_expression(expr, Environment(), check=False).evaluate({}) is True
