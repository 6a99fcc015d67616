"""The shape of a library function: ``Function`` (a name, overload declarations, one
implementation) and its ``Overload`` signatures."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import ast
from ..types import Type


@dataclass(frozen=True, slots=True)
class Overload:
    """One signature. ``params`` includes the receiver first when ``member`` is true."""

    id: str
    params: tuple[Type, ...]
    result: Type
    member: bool = False
    varargs: bool = False  # the last param repeats (e.g. math.greatest(a, b, c...))


def member_overload(oid: str, params: tuple[Type, ...], result: Type) -> Overload:
    """An overload called as a method (``receiver.f(...)``); ``params`` starts with the
    receiver."""
    return Overload(oid, params, result, member=True)


@dataclass(frozen=True, slots=True)
class Function:
    """A named CEL function.

    ``cost`` is the estimated cost of one call; when ``cost_per_size`` is true the cost is
    multiplied by the size of argument ``size_arg`` (counting the receiver first; strings,
    lists, maps), as Kubernetes does for functions that walk their input.

    ``literal_check`` validates, when the expression is checked, a string literal written as
    argument ``literal_arg`` (counting the receiver first): it raises ``CelError`` exactly
    when the call would fail at run time because of that argument (a bad regular expression,
    timestamp, quantity ...). This is what cel-go's regex / timestamp / duration literal
    validators do for Kubernetes.

    ``validator`` is a compile-time check of a call (cel-go's AST validators, which
    Kubernetes enables): after type checking it receives the call and the checked type of
    any node, and raises ``CelCompileError`` for a call Kubernetes rejects
    (``'%d'.format(['a'])``).

    ``columns`` lets the vectorised tier evaluate a call whose inputs differ on every node
    (a lookup by ``node``) with array operations instead of one call per node.

    ``for_result`` picks the implementation of a call from the type the checker gave its
    result (Kubernetes' overload per element type: ``sum()`` of an empty ``list(double)``
    is ``0.0``); it returns None to keep ``impl``.

    ``doc`` says what the function does and ``examples`` are CEL expressions calling it:
    docs/reference.md is generated from them (``commands.reference``), and tests compile
    and evaluate every example.
    """

    name: str
    overloads: tuple[Overload, ...]
    impl: Callable[..., Any]
    cost: int = 1
    cost_per_size: bool = False
    size_arg: int = 0
    doc: str = ""
    literal_check: Callable[[str], object] | None = None
    literal_arg: int = 0
    validator: Callable[[ast.Call, Callable[[ast.Node], Type]], None] | None = None
    # tier 3: the call over all nodes at once, given its arguments (receiver first) as
    # ``cel.vector`` values; returns a column, or None to fall back to ``impl`` per
    # distinct input. Must agree with ``impl`` node by node.
    columns: Callable[..., Any] | None = None
    examples: tuple[str, ...] = ()
    for_result: Callable[[Type], Callable[..., Any] | None] | None = None
