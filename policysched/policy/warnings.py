"""Warnings for map accesses that fail at run time on real objects.

The free-form maps of a pod or node (``labels``, ``annotations``, ``nodeSelector``,
``requests``, ``allocatable`` ... every map-typed field of ``policysched.Pod`` and
``policysched.Node``) hold only the keys the API object has: ``node.labels.spot`` fails with
"no such key" on every node without that label. Such an access with a literal key on the
pod or node itself (``pod``, ``node``, ``a``, ``b``, ``victim``) is reported unless it is
guarded on the same key:

- inside ``has(r.k)``, or read with optional syntax (``r[?'k']``, ``r.?k``);
- under ``'k' in r`` / ``has(r.k)`` by ``&&`` (either side: CEL's ``&&`` absorbs the error
  when the other side is false), by ``||`` when negated (``!('k' in r) || r.k == ...``),
  or in the branch of a conditional ``c ? ... : ...`` the condition decides;
- by the policy's ``spec.match`` (which every expression of the policy runs behind).

Keys the model always fills (``PRESENT_KEYS``: ``pod.nonZeroRequests['cpu']``,
``node.requested['pods']`` ...) need no guard.

Accesses through comprehension variables (``pods.all(p, p.labels.x)``) or with a computed
key (``node.labels[params.key]``) are not judged: their guards live outside the expression.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..cel import ast
from ..cel.types import INT, Type
from . import messages
from .variables import NODE_TYPE, OBJECT_TYPES, POD_TYPE

Key = tuple[str, str]
"""A guarded key: (receiver as written, e.g. ``node.labels``; the key)."""

FREE_FORM_MAPS: Mapping[str, frozenset[str]] = {
    name: frozenset(f for f, t in OBJECT_TYPES[name].items() if t.name == "map")
    for name in (POD_TYPE.name, NODE_TYPE.name)
}
# keys some of those maps always hold (the model fills them on every pod / node)
PRESENT_KEYS: Mapping[tuple[str, str], frozenset[str]] = {
    (POD_TYPE.name, "nonZeroRequests"): frozenset({"cpu", "memory"}),
    (NODE_TYPE.name, "requested"): frozenset({"pods"}),
    (NODE_TYPE.name, "nonZeroRequested"): frozenset({"cpu", "memory", "pods"}),
}
NOUNS = {"labels": "label", "annotations": "annotation", "nodeSelector": "nodeSelector key"}


@dataclass(frozen=True)
class UnguardedAccess:
    """``receiver.key`` read without a guard; ``offset`` is where the access starts."""

    offset: int
    receiver: str
    key: str
    index: bool          # written ``r['k']`` (else ``r.k``)
    value_type: Type

    @property
    def text(self) -> str:
        return f"{self.receiver}[{_quote(self.key)}]" if self.index else \
            f"{self.receiver}.{self.key}"

    def message(self) -> str:
        field = self.receiver.rsplit(".", 1)[-1]
        default = "0" if self.value_type == INT else "''"
        return messages.UNGUARDED_MAP_KEY.format(
            access=self.text, noun=NOUNS.get(field, "key"),
            guard=f"{_quote(self.key)} in {self.receiver}",
            optional=f"{self.receiver}[?{_quote(self.key)}].orValue({default})",
        )


def guards(tree: ast.Node) -> frozenset[Key]:
    """The keys known present wherever ``tree`` (a ``match``) evaluated to true."""
    return _facts(tree, True)


def unguarded_accesses(tree: ast.Node, types: Mapping[int, Type],
                       guarded: frozenset[Key] = frozenset()) -> list[UnguardedAccess]:
    """The free-form map reads of ``tree`` (checked, with the checker's ``types``) that no
    guard covers; ``guarded`` holds keys known present before evaluation (the match)."""
    try:
        return list(_Walk(types).visit(tree, guarded, frozenset()))
    except RecursionError:  # the tree's height is bounded; only near Python's own limit
        return []


class _Walk:
    def __init__(self, types: Mapping[int, Type]) -> None:
        self.types = types

    def visit(self, node: ast.Node, guarded: frozenset[Key], bound: frozenset[str]
              ) -> Iterator[UnguardedAccess]:
        access = self.access(node, bound)
        if access is not None and (access.receiver, access.key) not in guarded:
            yield access
        if isinstance(node, ast.Select) and node.test_only:
            return  # has(r.k) reads nothing
        if isinstance(node, ast.Call) and node.target is None and len(node.args) in (2, 3):
            yield from self.guarded_operands(node, guarded, bound)
            return
        if isinstance(node, ast.Macro):
            inner = bound | {node.var} | ({node.var2} if node.var2 else set())
            if node.target is not None:
                yield from self.visit(node.target, guarded, bound)
            args = node.args
            if node.kind == ast.BIND:  # cel.bind(var, init, body): init is outside
                yield from self.visit(args[0], guarded, bound)
                args = args[1:]
            for arg in args:
                yield from self.visit(arg, guarded, inner)
            return
        for child in ast.children(node):
            yield from self.visit(child, guarded, bound)

    def guarded_operands(self, call: ast.Call, guarded: frozenset[Key],
                         bound: frozenset[str]) -> Iterator[UnguardedAccess]:
        """The operands of ``&&``, ``||`` and ``?:`` with the guards their siblings give."""
        args = call.args
        if call.function == ast.AND:
            yield from self.visit(args[0], guarded | _facts(args[1], True), bound)
            yield from self.visit(args[1], guarded | _facts(args[0], True), bound)
        elif call.function == ast.OR:
            yield from self.visit(args[0], guarded | _facts(args[1], False), bound)
            yield from self.visit(args[1], guarded | _facts(args[0], False), bound)
        elif call.function == ast.COND:
            yield from self.visit(args[0], guarded, bound)
            yield from self.visit(args[1], guarded | _facts(args[0], True), bound)
            yield from self.visit(args[2], guarded | _facts(args[0], False), bound)
        else:
            for arg in args:
                yield from self.visit(arg, guarded, bound)

    def access(self, node: ast.Node, bound: frozenset[str]) -> UnguardedAccess | None:
        """``node`` as a plain read of a literal key of a free-form map, else None."""
        if isinstance(node, ast.Select) and not node.test_only and not node.optional:
            receiver, key, index = node.operand, node.field, False
        elif (isinstance(node, ast.Call) and node.function == ast.INDEX
              and node.target is None and len(node.args) == 2
              and isinstance(node.args[1], ast.Literal) and isinstance(node.args[1].value, str)):
            receiver, key, index = node.args[0], str(node.args[1].value), True
        else:
            return None
        name = self.free_form_map(receiver, bound)
        map_type = self.types.get(id(receiver))
        if name is None or map_type is None or not map_type.params:
            return None
        assert isinstance(receiver, ast.Select)
        owner = self.types[id(receiver.operand)].name
        if key in PRESENT_KEYS.get((owner, receiver.field), ()):
            return None
        root = receiver.operand if isinstance(receiver, ast.Select) else receiver
        return UnguardedAccess(root.offset, name, key, index, map_type.params[-1])

    def free_form_map(self, node: ast.Node, bound: frozenset[str]) -> str | None:
        """``pod.labels`` etc. (as written) when ``node`` is a free-form map of the pod or
        node under consideration, else None."""
        if not (isinstance(node, ast.Select) and not node.test_only and not node.optional
                and isinstance(node.operand, ast.Ident) and node.operand.name not in bound):
            return None
        owner = self.types.get(id(node.operand))
        if owner is None or node.field not in FREE_FORM_MAPS.get(owner.name, ()):
            return None
        return f"{node.operand.name}.{node.field}"


def _facts(node: ast.Node, outcome: bool) -> frozenset[Key]:
    """The keys known present when ``node`` evaluates to ``outcome``."""
    key = _presence_test(node)
    if key is not None:
        return frozenset({key}) if outcome else frozenset()
    if not isinstance(node, ast.Call) or node.target is not None:
        return frozenset()
    if node.function == ast.NOT and len(node.args) == 1:
        return _facts(node.args[0], not outcome)
    if node.function in (ast.AND, ast.OR) and len(node.args) == 2:
        left, right = (_facts(a, outcome) for a in node.args)
        # a && b true: both true; a || b false: both false. Otherwise only one is known.
        both = (node.function == ast.AND) == outcome
        return left | right if both else left & right
    return frozenset()


def _presence_test(node: ast.Node) -> Key | None:
    """``'k' in r`` or ``has(r.k)`` with ``r`` a plain ``x.field`` → (``x.field``, k)."""
    if isinstance(node, ast.Select) and node.test_only:
        receiver, key = _receiver_text(node.operand), node.field
        return None if receiver is None else (receiver, key)
    if (isinstance(node, ast.Call) and node.function == ast.IN and node.target is None
            and len(node.args) == 2 and isinstance(node.args[0], ast.Literal)
            and isinstance(node.args[0].value, str)):
        receiver = _receiver_text(node.args[1])
        return None if receiver is None else (receiver, str(node.args[0].value))
    return None


def _receiver_text(node: ast.Node) -> str | None:
    if isinstance(node, ast.Select) and isinstance(node.operand, ast.Ident):
        return ast.qualified_name(node)
    return None


def _quote(key: str) -> str:
    return "'" + key.replace("\\", "\\\\").replace("'", "\\'") + "'"
