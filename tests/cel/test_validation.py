"""Unit tests of ``validation``: library validators see every call of their function, with
the checked types, after type checking."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from policysched.cel import CelCompileError, CompileErrorKind, Environment, ast, compile_expression
from policysched.cel import types as t
from policysched.cel.library import Function, Overload


def _environment(seen: list[tuple[int, str]]) -> Environment:
    def validator(call: ast.Call, type_of: Callable[[ast.Node], t.Type]) -> None:
        arg = call.args[0]
        seen.append((arg.offset, str(type_of(arg))))
        if isinstance(arg, ast.Literal) and arg.value == "bad":
            raise CelCompileError(CompileErrorKind.ARGUMENT, "bad argument", arg.offset)

    probe = Function("probe", (Overload("probe_dyn", (t.DYN,), t.BOOL),), lambda x: True,
                     validator=validator)
    functions = dict(Environment().functions)
    functions["probe"] = probe
    return Environment(variables={"xs": t.list_of(t.INT)}, functions=functions)


def test_every_call_is_shown_with_the_checked_types() -> None:
    seen: list[tuple[int, str]] = []
    env = _environment(seen)
    program = compile_expression("probe(xs) && xs.all(x, probe(x + 1)) && probe([1])", env)
    assert program.evaluate({"xs": [1]}) is True
    assert sorted(seen) == [(6, "list(int)"), (31, "int"), (46, "list(int)")]


def test_a_rejected_call_is_a_compile_error_at_its_position() -> None:
    with pytest.raises(CelCompileError) as info:
        compile_expression("1 < 2 || probe('bad')", _environment([]))
    assert (info.value.kind, info.value.message, info.value.offset) == (
        CompileErrorKind.ARGUMENT, "bad argument", 15)


def test_unchecked_expressions_are_not_validated() -> None:
    program = compile_expression("probe('bad')", _environment([]), check=False)
    assert program.evaluate({}) is True
