"""Our own small CEL syntax tree.

The parser produces it, the checker, the cost estimator and the compiler consume it.
Every node carries ``offset``: the character offset of the node in the expression text,
which the policy loader maps to ``file:line:col``.

Operators are ``Call`` nodes with cel-go's operator names (``_+_``, ``_&&_``, ``!_``,
``_?_:_``, ``_[_]``, ``@in`` ...). Macros are expanded by the parser into ``Macro`` nodes,
one kind per macro, so that the compiler can give each a tight implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Operator function names (cel-go conventions).
ADD = "_+_"
SUB = "_-_"
MUL = "_*_"
DIV = "_/_"
MOD = "_%_"
NEG = "-_"
NOT = "!_"
EQ = "_==_"
NE = "_!=_"
LT = "_<_"
LE = "_<=_"
GT = "_>_"
GE = "_>=_"
AND = "_&&_"
OR = "_||_"
COND = "_?_:_"
INDEX = "_[_]"
OPT_INDEX = "_[?_]"
IN = "@in"

OPERATORS = frozenset({ADD, SUB, MUL, DIV, MOD, NEG, NOT, EQ, NE, LT, LE, GT, GE, AND, OR,
                       COND, INDEX, OPT_INDEX, IN})

# Macro kinds.
ALL = "all"
EXISTS = "exists"
EXISTS_ONE = "exists_one"
MAP = "map"                    # list.map(x, expr) / map.map(k, expr)
MAP_FILTER = "map_filter"      # list.map(x, pred, expr)
FILTER = "filter"
BIND = "cel.bind"              # cel.bind(var, init, body)
OPT_MAP = "optMap"             # opt.optMap(v, expr)
OPT_FLAT_MAP = "optFlatMap"    # opt.optFlatMap(v, expr)
# two-variable comprehensions (cel-go ext): list.all(i, v, pred), map.exists(k, v, pred)...
TRANSFORM_LIST = "transformList"
TRANSFORM_MAP = "transformMap"
TRANSFORM_MAP_ENTRY = "transformMapEntry"
SORT_BY = "sortBy"             # list.sortBy(x, key) (cel-go ext lists)


@dataclass(frozen=True, slots=True)
class Node:
    offset: int


@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A constant; ``value`` is already a CEL runtime value (see ``values``)."""

    value: Any


@dataclass(frozen=True, slots=True)
class Ident(Node):
    """A (possibly dotted, for qualified names like ``math.abs``) identifier."""

    name: str


@dataclass(frozen=True, slots=True)
class Select(Node):
    """``operand.field``; ``test_only`` for ``has(operand.field)``; ``optional`` for ``.?``."""

    operand: Node
    field: str
    test_only: bool = False
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Call(Node):
    """A global call ``fn(args)`` (``target`` None) or a member call ``target.fn(args)``."""

    function: str
    args: tuple[Node, ...]
    target: Node | None = None


@dataclass(frozen=True, slots=True)
class CreateList(Node):
    elements: tuple[Node, ...]
    optional_indices: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class MapEntry:
    offset: int
    key: Node
    value: Node
    optional: bool = False


@dataclass(frozen=True, slots=True)
class CreateMap(Node):
    entries: tuple[MapEntry, ...]


@dataclass(frozen=True, slots=True)
class FieldInit:
    offset: int
    field: str
    value: Node
    optional: bool = False


@dataclass(frozen=True, slots=True)
class CreateStruct(Node):
    """``Type{field: value}`` — message construction (no message types are declared here)."""

    type_name: str
    fields: tuple[FieldInit, ...]


@dataclass(frozen=True, slots=True)
class Macro(Node):
    """An expanded macro.

    ``kind`` is one of the macro kinds above; ``target`` the receiver (None for
    ``cel.bind``); ``var``/``var2`` the bound variable names; ``args`` the remaining
    sub-expressions in source order (the predicate / transform, or for BIND the init
    then the body).
    """

    kind: str
    target: Node | None
    var: str
    var2: str | None
    args: tuple[Node, ...]


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-expressions of ``node``, in source order."""
    if isinstance(node, Select):
        return (node.operand,)
    if isinstance(node, Call):
        return ((node.target,) if node.target is not None else ()) + node.args
    if isinstance(node, CreateList):
        return node.elements
    if isinstance(node, CreateMap):
        out: list[Node] = []
        for e in node.entries:
            out += (e.key, e.value)
        return tuple(out)
    if isinstance(node, CreateStruct):
        return tuple(f.value for f in node.fields)
    if isinstance(node, Macro):
        return ((node.target,) if node.target is not None else ()) + node.args
    return ()


def walk(tree: Node) -> list[Node]:
    """``tree`` and every sub-expression in it, parents first."""
    out = [tree]
    for child in children(tree):
        out += walk(child)
    return out


def qualified_name(node: Node) -> str | None:
    """``a.b.c`` written as identifiers and selects → ``"a.b.c"``; anything else → None.

    Used to resolve namespaced functions (``math.abs(x)`` parses as a member call on the
    identifier ``math``) and qualified type names.
    """
    if isinstance(node, Ident):
        return node.name
    if isinstance(node, Select) and not node.test_only and not node.optional:
        prefix = qualified_name(node.operand)
        return None if prefix is None else f"{prefix}.{node.field}"
    return None
