"""The CEL function library: declarations for the checker, implementations for the compiler.

Every function is a ``Function``: its name as written in CEL (``size``, ``lowerAscii``,
``math.abs``, ``sets.contains``), its overload declarations (used by the static checker and
the cost estimator) and one Python implementation ``impl`` that receives the evaluated
arguments — the receiver first for member-style calls — checks their runtime types and
returns a CEL value or raises ``CelError`` (``no_such_overload`` when no overload matches).

Modules of this package each define ``FUNCTIONS: list[Function]``; ``standard_library()``
collects them. Operators (``_+_`` ...), macros and field selection are not here: they belong
to the compiler (``operators.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..types import Type


@dataclass(frozen=True, slots=True)
class Overload:
    """One signature. ``params`` includes the receiver first when ``member`` is true."""

    id: str
    params: tuple[Type, ...]
    result: Type
    member: bool = False
    varargs: bool = False  # the last param repeats (e.g. math.greatest(a, b, c...))


@dataclass(frozen=True, slots=True)
class Function:
    """A named CEL function.

    ``cost`` is the estimated cost of one call; when ``cost_per_size`` is true the cost is
    multiplied by the size of the first argument (strings, lists, maps), as Kubernetes does
    for functions that walk their input.

    ``literal_check`` validates, when the expression is checked, a string literal written as
    argument ``literal_arg`` (counting the receiver first): it raises ``CelError`` exactly
    when the call would fail at run time because of that argument (a bad regular expression,
    timestamp, quantity ...). This is what cel-go's regex / timestamp / duration literal
    validators do for Kubernetes.
    """

    name: str
    overloads: tuple[Overload, ...]
    impl: Callable[..., Any]
    cost: int = 1
    cost_per_size: bool = False
    doc: str = ""
    literal_check: Callable[[str], object] | None = None
    literal_arg: int = 0


def standard_library() -> dict[str, Function]:
    """All functions available to policies, by name."""
    from . import collections, core, encoders, math, network, quantity, regex, strings, time

    lib: dict[str, Function] = {}
    for module in (core, strings, regex, collections, math, encoders, time, quantity, network):
        for fn in module.FUNCTIONS:
            if fn.name in lib:
                raise ValueError(f"function {fn.name} declared twice")
            lib[fn.name] = fn
    return lib
