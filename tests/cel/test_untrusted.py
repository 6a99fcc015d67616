"""Policies are untrusted input: crafted text must stay data, and nothing turns it into code."""

from __future__ import annotations

import ast as pyast
from pathlib import Path

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
