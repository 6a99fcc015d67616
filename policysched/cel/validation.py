"""Compile-time validators of library calls, run after type checking (cel-go's AST
validators, which Kubernetes enables): each call of a function that has a
``Function.validator`` is shown to it with the checked types (``'%d'.format(['a'])`` is a
compile error, as in Kubernetes)."""

from __future__ import annotations

from . import ast
from .checker import CheckResult
from .environment import Environment
from .types import DYN, Type


def validate(tree: ast.Node, env: Environment, checked: CheckResult) -> None:
    """Raise ``CelCompileError`` for the first call in ``tree`` a validator rejects."""
    validators = {name: f.validator for name, f in env.functions.items()
                  if f.validator is not None}
    if not validators:
        return

    def type_of(node: ast.Node) -> Type:
        return checked.types.get(id(node), DYN)

    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call):
            validator = validators.get(node.function)
            if validator is not None:
                validator(node, type_of)
        pending.extend(reversed(ast.children(node)))
