"""Tier 2, partial evaluation: split an expression by what its parts depend on
(docs/architecture.md#tier-2-partial-evaluation).

A node-level rule (filter, score) reads pod-side variables (``pod``, ``params``,
``variables``, ``pods``, ...) and node-side ones (``node``, ``nodePods``). ``split``
replaces every *maximal* sub-expression that reads only pod-side variables by an identifier
``@pK`` (evaluated once per pod) and every maximal one that reads only node-side variables
(and ``params``) by ``@nK`` (evaluated once per node version, a column of the node table).
What is left, the *remainder*, combines them; it is what the vectorised evaluator runs over
all nodes at once. Identifiers starting with ``@`` cannot be written in CEL, so they never
clash with a policy's names. Parts that read a variable of an enclosing macro stay in the
remainder.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from . import ast

POD_PART = "@p"
NODE_PART = "@n"
SHARED = frozenset({"params"})  # constant per policy instance: on both sides


@dataclass(frozen=True)
class Split:
    """``remainder`` with ``@pK`` for ``pod_parts[K]`` and ``@nK`` for ``node_parts[K]``."""

    remainder: ast.Node
    pod_parts: tuple[ast.Node, ...]
    node_parts: tuple[ast.Node, ...]


def split(tree: ast.Node, roots: Iterable[str], node_roots: frozenset[str]) -> Split:
    """Split ``tree``: ``roots`` are the declared variables, ``node_roots`` those that
    belong to the node (every other declared one belongs to the pod)."""
    return _Splitter(frozenset(roots), node_roots).run(tree)


class _Splitter:
    def __init__(self, roots: frozenset[str], node_roots: frozenset[str]) -> None:
        self.roots = roots
        self.node_roots = node_roots
        self.pod_parts: list[ast.Node] = []
        self.node_parts: list[ast.Node] = []
        self.node_shapes: dict[Any, int] = {}

    def run(self, tree: ast.Node) -> Split:
        remainder = self.visit(tree, frozenset())
        return Split(remainder, tuple(self.pod_parts), tuple(self.node_parts))

    def visit(self, node: ast.Node, bound: frozenset[str]) -> ast.Node:
        names = free_names(node)
        if isinstance(node, ast.Ident) and not names & self.roots:
            return node  # a macro variable, or a namespace such as ``math`` in math.abs()
        if not names & bound and not isinstance(node, ast.Literal):
            deps = names & self.roots
            if not deps & self.node_roots:
                self.pod_parts.append(node)
                return ast.Ident(node.offset, f"{POD_PART}{len(self.pod_parts) - 1}")
            if deps <= self.node_roots | SHARED:
                key = shape(node)
                index = self.node_shapes.get(key)
                if index is None:
                    index = self.node_shapes[key] = len(self.node_parts)
                    self.node_parts.append(node)
                return ast.Ident(node.offset, f"{NODE_PART}{index}")
        return self.rebuild(node, bound)

    def rebuild(self, node: ast.Node, bound: frozenset[str]) -> ast.Node:
        """``node`` with its children split (macro bodies see the macro's variables)."""
        if isinstance(node, ast.Select):
            return replace(node, operand=self.visit(node.operand, bound))
        if isinstance(node, ast.Call):
            target = None if node.target is None else self.visit(node.target, bound)
            return replace(node, target=target,
                           args=tuple(self.visit(a, bound) for a in node.args))
        if isinstance(node, ast.CreateList):
            return replace(node, elements=tuple(self.visit(e, bound) for e in node.elements))
        if isinstance(node, ast.CreateMap):
            return replace(node, entries=tuple(
                replace(e, key=self.visit(e.key, bound), value=self.visit(e.value, bound))
                for e in node.entries))
        if isinstance(node, ast.Macro) and node.kind == ast.BIND:
            init, body = node.args
            return replace(node, args=(self.visit(init, bound),
                                       self.visit(body, bound | {node.var})))
        if isinstance(node, ast.Macro) and node.target is not None \
                and node.kind != "cel.block":
            inner = bound | {n for n in (node.var, node.var2) if n}
            return replace(node, target=self.visit(node.target, bound),
                           args=tuple(self.visit(a, inner) for a in node.args))
        return node  # a leaf, a struct, cel.block: kept whole


def free_names(node: ast.Node) -> frozenset[str]:
    """Identifiers ``node`` reads that it does not bind itself (declared variables, macro
    variables of enclosing expressions, namespaces of functions like ``math``)."""
    if isinstance(node, ast.Ident):
        return frozenset({node.name.lstrip(".").split(".", 1)[0]})
    if isinstance(node, ast.Macro):
        target = frozenset() if node.target is None else free_names(node.target)
        if node.kind == ast.BIND:
            init, body = node.args
            return target | free_names(init) | (free_names(body) - {node.var})
        inner: frozenset[str] = frozenset()
        for arg in node.args:
            inner |= free_names(arg)
        if node.kind == "cel.block":
            return target | frozenset(n for n in inner if not n.startswith("@index"))
        return target | (inner - {node.var, node.var2 or node.var})
    out: frozenset[str] = frozenset()
    for child in ast.children(node):
        out |= free_names(child)
    return out


def shape(node: ast.Node) -> Any:
    """A hashable description of ``node`` without source offsets: equal for the same
    expression written in two places."""
    if isinstance(node, ast.Literal):
        return ("lit", type(node.value).__name__, _hashable(node.value))
    if isinstance(node, ast.Ident):
        return ("id", node.name)
    if isinstance(node, ast.Select):
        return ("sel", shape(node.operand), node.field, node.test_only, node.optional)
    if isinstance(node, ast.Call):
        return ("call", node.function, None if node.target is None else shape(node.target),
                tuple(shape(a) for a in node.args))
    if isinstance(node, ast.CreateList):
        return ("list", tuple(shape(e) for e in node.elements),
                tuple(sorted(node.optional_indices)))
    if isinstance(node, ast.CreateMap):
        return ("map", tuple((shape(e.key), shape(e.value), e.optional)
                             for e in node.entries))
    if isinstance(node, ast.Macro):
        return ("macro", node.kind, None if node.target is None else shape(node.target),
                node.var, node.var2, tuple(shape(a) for a in node.args))
    return ("node", id(node))  # structs: never shared


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value
