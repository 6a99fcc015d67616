"""Operators at their edges: errors and texts as cel-go v0.26 (Kubernetes 1.34) gives them."""

from __future__ import annotations

import pytest

from policysched.cel import CelError, compile_expression
from policysched.cel.environment import Environment
from policysched.cel.types import INT, UINT
from policysched.cel.values import UInt

ENV = Environment(variables={"x": INT, "y": INT, "u": UINT, "v": UINT})
INT64_MIN = -(2**63)


@pytest.mark.parametrize(("text", "values", "message"), [
    ("x / y", {"x": INT64_MIN, "y": -1}, "integer overflow"),
    ("x % y", {"x": INT64_MIN, "y": -1}, "integer overflow"),  # was 0
    ("x + y", {"x": 2**63 - 1, "y": 1}, "integer overflow"),
    ("-x", {"x": INT64_MIN}, "integer overflow"),
    ("x / y", {"x": 1, "y": 0}, "division by zero"),
    ("x % y", {"x": 1, "y": 0}, "modulus by zero"),
    ("u - v", {"u": 5, "v": 6}, "unsigned integer overflow"),
    ("u / v", {"u": 5, "v": 0}, "division by zero"),
    ("[x, y].sum()", {"x": 2**63 - 1, "y": 1}, "integer overflow"),
    ("int(double(x) * 4.0)", {"x": 2**62}, "integer overflow"),
    ("uint(x)", {"x": -1}, "unsigned integer overflow"),
    ("duration(string(x) + 's') + duration('1s')", {"x": 9223372036}, "integer overflow"),
    ("timestamp(x)", {"x": 253402300800}, "timestamp overflow"),
    ("timestamp(x) + duration('1s')", {"x": 253402300799}, "timestamp overflow"),
    # NaN is not ordered (cel-go): every ordering of a NaN is an error, not false
    ("double(x) / double(y) < 1.0", {"x": 0, "y": 0}, "NaN values cannot be ordered"),
    ("1.0 >= double(x) / double(y)", {"x": 0, "y": 0}, "NaN values cannot be ordered"),
    ("x <= double(x) / double(y)", {"x": 0, "y": 0}, "NaN values cannot be ordered"),
    ("dyn(double(x) / double(y)) > dyn(u)", {"x": 0, "y": 0, "u": 1},
     "NaN values cannot be ordered"),
])
def test_runtime_errors_have_cel_go_texts(text: str, values: dict[str, int],
                                          message: str) -> None:
    program = compile_expression(text, ENV)
    act = {k: UInt(v) if k in "uv" else v for k, v in values.items()}
    with pytest.raises(CelError) as info:
        program.evaluate(act)
    assert info.value.message == message


@pytest.mark.parametrize(("text", "want"), [
    ("double(x) / double(y) == double(x) / double(y)", False),  # equality stays defined
    ("double(x) / double(y) != 1.0", True),
    ("[double(x) / double(y), 1.0].max() != 1.0", True),       # max/min: the first wins
    ("[1.0, double(x) / double(y)].min() == 1.0", True),
    ("[1.0, double(x) / double(y)].isSorted()", True),
])
def test_nan_outside_ordering_operators(text: str, want: bool) -> None:
    assert compile_expression(text, ENV).evaluate({"x": 0, "y": 0}) is want


@pytest.mark.parametrize(("text", "want"), [
    # a double and an integer are equal as cel-go compares them: the integer as a double
    ("dyn(9223372036854775807) == dyn(9.223372036854775807e18)", True),
    ("dyn(18446744073709551615u) == dyn(1.8446744073709552e19)", True),
    ("dyn(9007199254740993) == dyn(9007199254740992.0)", True),
    ("dyn(1.8446744073709552e19) == dyn(9223372036854775807)", False),  # out of int64
    ("dyn(-1.0) == dyn(18446744073709551615u)", False),
    ("dyn(-9.223372036854775808e18) == dyn(-9223372036854775808)", True),
    ("dyn(0.0/0.0) != dyn(0)", True),
    ("dyn([9007199254740993]) == dyn([9007199254740992.0])", True),
])
def test_numeric_equality_across_types(text: str, want: bool) -> None:
    assert compile_expression(text, ENV).evaluate({}) is want
