"""CEL for scheduling policies: parse → check → estimate cost → compile to closures.

Public API::

    program = compile_expression("now - pod.creationTimestamp >= 15", env)
    program.evaluate({"now": 100, "pod": {...}})   # -> True, or raises CelError

No expression text ever becomes Python source: the compiler builds nested closures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import ast, checker, compiler, cost, parser, validation
from .environment import Environment
from .errors import CelCompileError, CompileErrorKind
from .types import DYN, Type
from .values import CelError, CostLimitExceeded

__all__ = [
    "CelCompileError",
    "CelError",
    "CompileErrorKind",
    "CostLimitExceeded",
    "Environment",
    "Program",
    "compile_expression",
]


@dataclass(frozen=True)
class Program:
    """A compiled expression: ``evaluate(activation)`` returns a CEL value or raises
    ``CelError``. ``type`` is the checked result type (``dyn`` when unchecked) and ``cost``
    the estimated worst-case cost."""

    source: str
    tree: ast.Node
    type: Type
    cost: int
    evaluate: Callable[[Mapping[str, Any]], Any]
    types: Mapping[int, Type] = field(default_factory=dict, repr=False, compare=False)
    env: Environment | None = field(default=None, repr=False, compare=False)


def compile_expression(
    text: str,
    env: Environment,
    *,
    check: bool = True,
    expected: tuple[Type, ...] | None = None,
) -> Program:
    """Compile ``text`` for ``env``.

    With ``check`` (the default) undeclared references, overload and type errors and the
    cost limit are reported as ``CelCompileError``; ``expected`` lists acceptable result
    types (e.g. ``(BOOL,)`` for a filter). Without ``check`` only syntax is verified and
    unknown names fail at evaluation time (the CEL conformance suite needs both modes).
    """
    tree = parser.parse(text)
    result_type = DYN
    estimated = 0
    types: Mapping[int, Type] = {}
    if check:
        checked = checker.check(tree, env)
        result_type, types = checked.type, checked.types
        validation.validate(tree, env, checked)
        if expected is not None:
            checker.require_result(tree, result_type, expected)
        estimated = cost.estimate(tree, env, types)
        if env.cost_limit is not None and estimated > env.cost_limit:
            raise CelCompileError(
                CompileErrorKind.COST,
                f"estimated cost {estimated} exceeds the limit {env.cost_limit}",
                tree.offset,
            )
    try:
        evaluate = compiler.compile_tree(tree, env, types)
    except RecursionError:
        # The tree's height is bounded (parser.MAX_HEIGHT), so this only happens when the
        # caller itself runs close to Python's recursion limit: still an error, not a crash.
        raise CelCompileError(CompileErrorKind.SYNTAX, "expression nests too deeply",
                              tree.offset) from None
    return Program(text, tree, result_type, estimated, evaluate, types, env)
