"""Policies are untrusted input: crafted text must stay data, and nothing turns it into code."""

from __future__ import annotations

import ast as pyast
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import pytest

import policysched
from policysched.cel import CelCompileError, CelError, Environment, compile_expression
from policysched.cel import types as t

PAYLOADS = [
    '"); __import__("os").system("touch /tmp/pwned"); ("',
    "' + __import__('os').getcwd() + '",
    "\\\"; raise SystemExit #",
    "{}.__class__.__bases__[0].__subclasses__()",
    "lambda act: exec('1')",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_string_literals_stay_strings(payload: str) -> None:
    for quote in ('"""', "'''"):
        if quote[0] in (payload[0], payload[-1]):
            continue  # a raw string cannot end with its own quote character
        text = f"r{quote}{payload}{quote}"
        program = compile_expression(text, Environment())
        assert program.evaluate({}) == payload


@pytest.mark.parametrize("name", ["__import__", "__builtins__", "exec", "eval", "globals",
                                  "act", "self", "os"])
def test_python_names_are_not_cel_identifiers(name: str) -> None:
    with pytest.raises(CelCompileError, match="undeclared reference"):
        compile_expression(f"{name}('x')" if name != "act" else name, Environment())
    unchecked = compile_expression(name, Environment(), check=False)
    with pytest.raises(CelError):
        unchecked.evaluate({"pod": {}})


@pytest.mark.parametrize("field", ["__class__", "__dict__", "__globals__", "keys", "items"])
def test_field_selection_never_reaches_python_attributes(field: str) -> None:
    env = Environment(variables={"pod": t.MAP_STRING_DYN})
    program = compile_expression(f"pod.{field}", env)
    with pytest.raises(CelError, match="no such key"):
        program.evaluate({"pod": {"name": "x"}})
    assert compile_expression(f"has(pod.{field})", env).evaluate({"pod": {}}) is False


def test_package_never_calls_exec_eval_or_compile() -> None:
    """No code path of the product can turn text into Python code."""
    forbidden = {"exec", "eval", "compile", "__import__"}
    offenders = []
    for path in Path(policysched.__file__).parent.rglob("*.py"):
        tree = pyast.parse(path.read_text(), str(path))
        for node in pyast.walk(tree):
            if (isinstance(node, pyast.Call) and isinstance(node.func, pyast.Name)
                    and node.func.id in forbidden):
                offenders.append(f"{path}:{node.lineno}: {node.func.id}()")
    assert offenders == []


# Expressions at the parser's limits (MAX_NESTING, MAX_HEIGHT) whose compilation recurses.
AT_THE_LIMITS = {
    "not": "!" * 198 + "a",
    "negate": "-" * 198 + "i",
    "conditional": "a ? i : " * 198 + "i",
    "subtraction": " - ".join(["i"] * 199),
    "calls": "int(" * 99 + "i" + ")" * 99,
    "lists": "[" * 99 + "]" * 99,
    "optMap": "optional.of(1)" + ".optMap(v, v)" * 99,
    "comprehensions": "l.all(v, " * 99 + "true" + ")" * 99,
}
LIMITS_ENV = Environment(variables={"a": t.BOOL, "i": t.INT, "l": t.list_of(t.INT)})


def _stack_depth() -> int:
    frame: FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _with_headroom(frames: int, call: Callable[[], object]) -> object:
    """``call()`` run with only ``frames`` Python frames left before the recursion limit."""
    def dive(n: int) -> object:
        return call() if n <= 0 else dive(n - 1)
    return dive(sys.getrecursionlimit() - _stack_depth() - frames)


@pytest.mark.parametrize("name", sorted(AT_THE_LIMITS))
def test_compiling_never_raises_recursion_error_however_deep_the_caller(name: str) -> None:
    """Whatever stack the caller leaves, a compile succeeds or is a positioned error."""
    text = AT_THE_LIMITS[name]
    compile_expression(text, LIMITS_ENV)  # valid: at the limits, not beyond
    for frames in range(20, 900, 40):
        try:
            _with_headroom(frames, lambda: compile_expression(text, LIMITS_ENV))
        except CelCompileError as e:
            assert "nest" in e.message and 0 <= e.offset <= len(text)


def test_cost_estimate_saturates_like_kubernetes() -> None:
    env = Environment(variables={"l": t.list_of(t.INT)}, cost_limit=1_000_000)
    text = "l.all(a, " * 60 + "true" + ")" * 60  # 100^60 iterations
    with pytest.raises(CelCompileError) as info:
        compile_expression(text, env)
    assert info.value.message == (
        "estimated cost 18446744073709551615 exceeds the limit 1000000"
    )


@pytest.mark.parametrize("text", [
    "a" * 90_000,
    "pod." + "a" * 90_000,
    "a" * 90_000 + "(1)",
    "pod.name." + "a" * 90_000 + "()",
    "1 " + "a" * 90_000,
])
def test_a_huge_name_is_shortened_in_the_message(text: str) -> None:
    env = Environment(variables={"pod": t.Type("Pod")}, objects={"Pod": {"name": t.STRING}})
    with pytest.raises(CelCompileError) as info:
        compile_expression(text, env)
    assert "a" * 77 + "..." in info.value.message
    assert len(info.value.message) < 200


def test_a_call_with_thousands_of_arguments_has_a_short_message() -> None:
    with pytest.raises(CelCompileError) as info:
        compile_expression("max(" + ", ".join(["1"] * 30_000) + ")", Environment())
    message = info.value.message
    assert message.startswith("found no matching overload for 'max' applied to '(int, int, ")
    assert message.endswith("...'") and len(message) < 500
