"""Worst-case cost estimate of a checked CEL expression, in the spirit of Kubernetes'
CEL cost estimator: one unit is roughly one cheap operation (a variable lookup, an integer
addition, one comparison).

* every node costs at least 1;
* a library function costs ``Function.cost``, multiplied by the estimated size of its
  argument ``Function.size_arg`` (the receiver of a member call first) when
  ``Function.cost_per_size`` is set;
* string and byte traversals (equality, ordering, concatenation, per-size functions) count
  ``STRING_TRAVERSAL_FACTOR`` per character, list traversals 1 per element;
* a comprehension (``all``, ``exists``, ``map``, ``filter``, ``sortBy`` ...) costs its range plus
  ``size(range) * (ITERATION_COST + cost of its body)``, so nested comprehensions multiply;
* ``&&`` and ``||`` count both operands, ``?:`` the condition plus the dearer branch.

Sizes come from literals (``[1, 2, 3]`` has 3 elements, ``'abc'`` 3 characters), from
``env.size_hints`` and otherwise from the conservative defaults below. A hint is keyed by

* a variable name: ``pods`` → 10000;
* a dotted path of fields selected from a variable: ``node.images``;
* an object type name and one of its fields: ``policysched.Pod.ports`` applies to
  ``pod.ports`` and equally to ``p.ports`` inside ``nodePods.all(p, ...)``.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass

from . import ast
from .environment import Environment
from .types import DYN, Type

__all__ = [
    "DEFAULT_COLLECTION_SIZE",
    "DEFAULT_STRING_SIZE",
    "ITERATION_COST",
    "MAX_COST",
    "STRING_TRAVERSAL_FACTOR",
    "estimate",
]

DEFAULT_COLLECTION_SIZE = 100
"""Assumed number of elements of a list or map whose size nothing tells us (labels,
containers, taints ... of one object). Cluster-wide lists (``pods``, ``nodes``) must be
given ``size_hints``."""

DEFAULT_STRING_SIZE = 1024
"""Assumed length in characters (or bytes) of a string whose length nothing tells us."""

ITERATION_COST = 1
"""Overhead of one step of a comprehension (binding the variable, accumulating)."""

STRING_TRAVERSAL_FACTOR = 0.1
"""Cost per character of walking a string or bytes value (as in Kubernetes)."""

MAX_COST = 2**64 - 1
"""The largest estimate reported (Kubernetes' estimates saturate at the uint64 maximum)."""


@dataclass(frozen=True, slots=True)
class _Size:
    """Estimated largest size of a value: elements of a list/map or characters of a
    string/bytes (``length`` None when unknown), and the size of its elements/values."""

    length: int | None = None
    elem: _Size | None = None


_UNKNOWN = _Size()
_SCALAR = _Size(1)

_Scope = Mapping[str, _Size]
_Visit = Generator[tuple[ast.Node, _Scope], tuple[int, _Size], tuple[int, _Size]]

_COMPREHENSIONS = frozenset({ast.ALL, ast.EXISTS, ast.EXISTS_ONE, ast.MAP, ast.MAP_FILTER,
                             ast.FILTER, ast.TRANSFORM_LIST, ast.TRANSFORM_MAP,
                             ast.TRANSFORM_MAP_ENTRY, ast.SORT_BY})
_ORDERING = frozenset({ast.LT, ast.LE, ast.GT, ast.GE})


def _is_text(t: Type) -> bool:
    return t.name in ("string", "bytes")


def _is_collection(t: Type) -> bool:
    return t.name in ("list", "map")


def _head(qualified: str) -> str:
    return qualified.split(".", 1)[0]


class _Estimator:
    def __init__(self, env: Environment, types: Mapping[int, Type]) -> None:
        self.env = env
        self.types = types

    def type_of(self, node: ast.Node) -> Type:
        return self.types.get(id(node), DYN)

    def units(self, node: ast.Node, size: _Size) -> int:
        """Traversal cost of the value of ``node``: elements, or characters times the factor."""
        t = self.type_of(node)
        if _is_text(t):
            chars = size.length if size.length is not None else DEFAULT_STRING_SIZE
            return max(1, math.ceil(chars * STRING_TRAVERSAL_FACTOR))
        if _is_collection(t):
            return max(1, size.length if size.length is not None else DEFAULT_COLLECTION_SIZE)
        if size.length is not None:
            return max(1, size.length)
        if t.name != "dyn" and not t.is_param:
            return 1  # a scalar (int, bool, timestamp ...)
        # dyn: could be a string or a list; take the dearer reading
        return max(DEFAULT_COLLECTION_SIZE,
                   math.ceil(DEFAULT_STRING_SIZE * STRING_TRAVERSAL_FACTOR))

    @staticmethod
    def range_size(size: _Size) -> int:
        return size.length if size.length is not None else DEFAULT_COLLECTION_SIZE

    def hinted(self, name: str) -> _Size | None:
        hint = self.env.size_hints.get(name)
        return None if hint is None else _Size(max(0, int(hint)))

    # -- driver ------------------------------------------------------------------------

    def run(self, root: ast.Node) -> int:
        stack: list[_Visit] = []
        gen = self.visit(root, {})
        value: tuple[int, _Size] | None = None
        while True:
            try:
                request = gen.send(value)  # type: ignore[arg-type]
            except StopIteration as stop:
                result: tuple[int, _Size] = stop.value
                if not stack:
                    return max(1, result[0])
                gen = stack.pop()
                value = result
                continue
            child, scope = request
            stack.append(gen)
            gen, value = self.visit(child, scope), None

    # -- nodes -------------------------------------------------------------------------

    def visit(self, node: ast.Node, scope: _Scope) -> _Visit:
        if isinstance(node, ast.Literal):
            v = node.value
            if isinstance(v, str | bytes | list | tuple | dict):
                return 1, _Size(len(v))
            return 1, _SCALAR
        if isinstance(node, ast.Ident):
            return 1, self.ident(node.name, scope)
        if isinstance(node, ast.Select):
            return (yield from self.select(node, scope))
        if isinstance(node, ast.Call):
            return (yield from self.call(node, scope))
        if isinstance(node, ast.CreateList):
            total, biggest = 1 + len(node.elements), 0
            for e in node.elements:
                c, s = yield e, scope
                total += c
                biggest = max(biggest, s.length or 0)
            return total, _Size(len(node.elements), _Size(biggest) if node.elements else None)
        if isinstance(node, ast.CreateMap):
            total, biggest = 1 + len(node.entries), 0
            for entry in node.entries:
                kc, _ = yield entry.key, scope
                vc, vs = yield entry.value, scope
                total += kc + vc
                biggest = max(biggest, vs.length or 0)
            return total, _Size(len(node.entries), _Size(biggest) if node.entries else None)
        if isinstance(node, ast.Macro):
            return (yield from self.macro(node, scope))
        total = 1
        for child in ast.children(node):
            c, _ = yield child, scope
            total += c
        return total, _UNKNOWN

    def ident(self, name: str, scope: _Scope) -> _Size:
        if name in scope:
            return scope[name]
        hinted = self.hinted(name.lstrip("."))
        return hinted if hinted is not None else _UNKNOWN

    def select(self, node: ast.Select, scope: _Scope) -> _Visit:
        qualified = ast.qualified_name(node) if not node.test_only else None
        if qualified is not None and not node.optional:
            name = qualified.lstrip(".")
            if (qualified.startswith(".") or _head(name) not in scope) and (
                    name in self.env.variables):
                return 1, self.hinted(name) or _UNKNOWN
        cost, size = yield node.operand, scope
        if node.test_only:
            return cost + 1, _SCALAR
        if qualified is not None:
            name = qualified.lstrip(".")
            if _head(name) not in scope:
                hinted = self.hinted(name)
                if hinted is not None:
                    return cost + 1, hinted
        t = self.type_of(node.operand)
        if t.name == "optional_type" and t.params:
            t = t.params[0]
        if t.name in self.env.objects:  # a hint for this field of this object type
            hinted = self.hinted(f"{t.name}.{node.field}")
            if hinted is not None:
                return cost + 1, hinted
        if t.name == "map" and size.elem is not None:
            return cost + 1, size.elem
        return cost + 1, _UNKNOWN

    def call(self, node: ast.Call, scope: _Scope) -> _Visit:
        fn = node.function
        args: tuple[ast.Node, ...] = node.args
        name = fn.lstrip(".")
        if node.target is not None:
            qualified = ast.qualified_name(node.target)
            full = None
            if qualified is not None:
                q = qualified.lstrip(".")
                candidate = f"{q}.{fn}"
                if (candidate in self.env.functions and _head(q) not in scope
                        and _head(q) not in self.env.variables):
                    full = candidate
            if full is not None:
                name = full
            else:
                args = (node.target, *node.args)
        results: list[tuple[int, _Size]] = []
        for a in args:
            results.append((yield a, scope))
        children = sum(c for c, _ in results)
        sizes = [s for _, s in results]

        if node.target is None and fn in ast.OPERATORS:
            return self.operator(node, fn, results)
        function = self.env.functions.get(name)
        own = 1
        if function is not None:
            own = function.cost
            at = function.size_arg
            if function.cost_per_size and at < len(args):
                own *= self.units(args[at], sizes[at])
        if name == "dyn" and len(sizes) == 1:
            return max(1, own) + children, sizes[0]  # the same value, only typed dyn
        return max(1, own) + children, _UNKNOWN

    def operator(self, node: ast.Call, fn: str, results: list[tuple[int, _Size]]) -> tuple[
            int, _Size]:
        args = node.args
        costs = [c for c, _ in results]
        sizes = [s for _, s in results]
        if fn == ast.COND and len(costs) == 3:
            then, other = sizes[1], sizes[2]
            size = _UNKNOWN if then.length is None or other.length is None else _Size(
                max(then.length, other.length), then.elem if then.elem is not None else other.elem)
            return 1 + costs[0] + max(costs[1], costs[2]), size
        own, size = 1, _UNKNOWN
        if fn in (ast.EQ, ast.NE) or fn in _ORDERING:
            if len(args) == 2 and (_is_text(self.type_of(args[0]))
                                   or _is_collection(self.type_of(args[0]))):
                own = min(self.units(args[0], sizes[0]), self.units(args[1], sizes[1]))
        elif fn == ast.ADD and len(args) == 2:
            t = self.type_of(node)
            if _is_text(t) or _is_collection(t):
                a, b = sizes
                n = None if a.length is None or b.length is None else a.length + b.length
                size = _Size(n, a.elem if a.elem is not None else b.elem)
                own = self.units(node, size)
        elif fn == ast.IN and len(args) == 2:
            if self.type_of(args[1]).name != "map":
                own = self.units(args[1], sizes[1])
        elif fn in (ast.INDEX, ast.OPT_INDEX) and sizes and sizes[0].elem is not None:
            size = sizes[0].elem
        return max(1, own) + sum(costs), size

    def macro(self, node: ast.Macro, scope: _Scope) -> _Visit:
        kind = node.kind
        if kind == ast.BIND:
            ic, isize = yield node.args[0], scope
            bc, bsize = yield node.args[1], {**scope, node.var: isize}
            return 1 + ic + bc, bsize
        if kind == "cel.block":  # slots then the body
            inner = dict(scope)
            total = 1
            *slots, body = node.args
            for i, slot in enumerate(slots):
                c, s = yield slot, dict(inner)
                total += c
                inner[f"@index{i}"] = s
                inner[f"@index{{{i}}}"] = s
            c, s = yield body, inner
            return total + c, s
        if node.target is None:
            total = 1
            for a in node.args:
                c, _ = yield a, scope
                total += c
            return total, _UNKNOWN
        tc, tsize = yield node.target, scope
        if kind in (ast.OPT_MAP, ast.OPT_FLAT_MAP):
            bc, bsize = yield node.args[0], {**scope, node.var: _UNKNOWN}
            return 1 + tc + bc, bsize
        elem = tsize.elem if tsize.elem is not None else _UNKNOWN
        is_map = self.type_of(node.target).name == "map"
        inner = dict(scope)
        if node.var2 is None:
            inner[node.var] = _UNKNOWN if is_map else elem
        else:
            inner[node.var] = _UNKNOWN if is_map else _SCALAR
            inner[node.var2] = elem
        body_cost = 0
        last = _UNKNOWN
        for a in node.args:
            c, last = yield a, inner
            body_cost += c
        n = self.range_size(tsize)
        cost = 1 + tc + n * (ITERATION_COST + body_cost)
        if kind in (ast.ALL, ast.EXISTS, ast.EXISTS_ONE):
            return cost, _SCALAR
        if kind == ast.FILTER:
            return cost, _Size(tsize.length, tsize.elem)
        if kind == ast.SORT_BY:  # the keys, then sorting them (as sort(): one unit each)
            return cost + n, _Size(tsize.length, tsize.elem)
        if kind in _COMPREHENSIONS:
            return cost, _Size(tsize.length, last if kind != ast.TRANSFORM_MAP_ENTRY else None)
        return cost, _UNKNOWN


def estimate(tree: ast.Node, env: Environment, types: Mapping[int, Type]) -> int:
    """The estimated worst-case cost of evaluating ``tree`` once (an int ≥ 1), saturating at
    ``MAX_COST`` as Kubernetes' estimator does (nested comprehensions multiply)."""
    return min(_Estimator(env, types).run(tree), MAX_COST)
