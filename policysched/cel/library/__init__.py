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

from . import (
    collections,
    comparisons,
    core,
    encoders,
    format,
    formatting,
    math,
    network,
    quantity,
    regex,
    semver,
    strings,
    time,
    url,
)
from .function import Function, Overload, member_overload

__all__ = ["Function", "Overload", "member_overload", "standard_library"]


def standard_library() -> dict[str, Function]:
    """All functions available to policies, by name."""
    lib: dict[str, Function] = {}
    for module in (core, strings, formatting, regex, collections, math, encoders, time,
                   quantity, semver, comparisons, network, url, format):
        for fn in module.FUNCTIONS:
            if fn.name in lib:
                raise ValueError(f"function {fn.name} declared twice")
            lib[fn.name] = fn
    return lib
