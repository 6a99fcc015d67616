"""What a rule reads that a cluster event can change: the facts of its queueing hints.

An unschedulable pod is retried when an event changes something one of its rejecting rules
reads (kube-scheduler's queueing hints, pkg/scheduler/framework/plugins/*/
``EventsToRegister``). ``rule_reads`` derives the ``Fact``s a rule depends on from its
compiled expressions: the variables, fields and functions they touch, with the policy's
``spec.variables`` and ``spec.aggregates`` they use counted in. The framework maps each
cluster event to the facts it changes (framework/event_handlers.py).

The analysis is conservative: whatever it cannot follow reads ``EVERY_FACT`` — a ``node``
(or list of nodes) used as a whole (compared, bound with ``cel.bind``, passed to a function
that is not known to read only its labels), ``variables`` or ``aggregates`` used as a
whole, a tree too deep to walk. The pod's own fields count for nothing (a change of the
pod is its own update, which always requeues it), but ``pod.podGroup``, which comes from
its PodGroup. Time (``now``) is no fact: a rule that depends on time says when with
``retryAfter``. Other pods' status is not tracked (``Fact.PODS`` changes with their
existence, node, phase, labels and spec).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import StrEnum

from ..cel import ast
from ..cel.types import Type
from .model import Aggregate, CelExpression, ExtensionPoint, Policy, Rule
from .variables import (
    AGGREGATE_TYPE,
    AGGREGATES,
    CLAIM_TYPE,
    NODE,
    NODE_AFFINITY_TYPE,
    NODE_PODS,
    NODE_TYPE,
    NODES,
    POD,
    POD_GROUP_PODS,
    POD_VOLUMES,
    PODS,
    PODS_WITH_AFFINITY,
    PREFERRED_NODE_AFFINITY_TYPE,
    VARIABLES,
    VOLUME_BINDER,
    VOLUME_BINDER_TYPE,
    WORKLOAD_SELECTOR,
)


class Fact(StrEnum):
    """Something of the cluster a rule may read and an event may change."""

    NODE_ADDED = "node added"  # a new node: every rule that reads a node
    NODE_DELETED = "node deleted"  # the node list (``nodes``, aggregates' domains)
    NODE_LABELS = "node labels"
    NODE_TAINTS = "node taints"  # spec.taints and spec.unschedulable, as kube's UpdateNodeTaint
    NODE_ALLOCATABLE = "node allocatable"
    NODE_ANNOTATIONS = "node annotations"
    NODE_OBJECT = "node object"  # anything of the Node object (raw fields, images)
    NODE_USAGE = "node usage"  # what the pods on a node request and the ports they use
    PODS = "pods"  # other pods: added, bound, deleted, finished, labels or spec changed
    POD_GROUPS = "pod groups"
    NAMESPACE_LABELS = "namespace labels"
    WORKLOADS = "workloads"  # Services and controllers (workloadSelector)
    # claims, volumes, classes, CSINodes, CSIDrivers (podVolumes, a node's CSI fields)
    STORAGE = "storage"


EVERY_FACT = frozenset(Fact)
NO_FACT: frozenset[Fact] = frozenset()

# the points whose rejections requeue by what their rules read; the others' rejections
# (reserve, permit, bind ...) depend on more than the cluster (counters, waits): every fact
HINTED_POINTS = (ExtensionPoint.PRE_ENQUEUE, ExtensionPoint.PRE_FILTER, ExtensionPoint.FILTER)

_NODE_FIELDS: Mapping[str, frozenset[Fact]] = {
    "name": NO_FACT,
    "labels": frozenset({Fact.NODE_LABELS}),
    "annotations": frozenset({Fact.NODE_ANNOTATIONS}),
    "taints": frozenset({Fact.NODE_TAINTS}),
    "unschedulable": frozenset({Fact.NODE_TAINTS}),
    "allocatable": frozenset({Fact.NODE_ALLOCATABLE}),
    "free": frozenset({Fact.NODE_ALLOCATABLE, Fact.NODE_USAGE}),
    "requested": frozenset({Fact.NODE_USAGE}),
    "nonZeroRequested": frozenset({Fact.NODE_USAGE}),
    "podCount": frozenset({Fact.NODE_USAGE}),
    "usedPorts": frozenset({Fact.NODE_USAGE}),
    "csiVolumeLimits": frozenset({Fact.STORAGE}),
    "attachedCSIVolumes": frozenset({Fact.NODE_USAGE, Fact.STORAGE}),
    "csiVolumes": frozenset({Fact.NODE_USAGE, Fact.STORAGE}),
    "usedDisks": frozenset({Fact.NODE_USAGE}),
    "usedClaims": frozenset({Fact.NODE_USAGE}),
}
_NODE_LIST = frozenset({Fact.NODE_ADDED, Fact.NODE_DELETED})
_POD_LISTS = frozenset({PODS, PODS_WITH_AFFINITY, POD_GROUP_PODS})
# functions that read only a node argument's labels (and its name, which never changes),
# by the type of their receiver
_LABEL_READERS: Mapping[str, Type] = {
    "matches": NODE_AFFINITY_TYPE,
    "score": PREFERRED_NODE_AFFINITY_TYPE,
    "count": AGGREGATE_TYPE,
    "onNode": AGGREGATE_TYPE,
    "bindings": VOLUME_BINDER_TYPE,
}
# what an aggregate reads besides its own expressions: the pods it counts (their labels,
# namespaces and nodes), the nodes' topology labels and taints, the namespaces' labels
_AGGREGATE = frozenset({Fact.PODS, Fact.NODE_ADDED, Fact.NODE_DELETED, Fact.NODE_LABELS,
                        Fact.NODE_TAINTS, Fact.NAMESPACE_LABELS})


class _Unknown(Exception):
    """The expression reads something the analysis cannot follow."""


def policy_reads(policy: Policy) -> dict[str, frozenset[Fact]]:
    """``policy/rule`` → the facts the rule reads, for the rules of ``HINTED_POINTS``."""
    variables: dict[str, frozenset[Fact]] = {}
    for variable in policy.variables:  # a variable reads only those declared before it
        variables[variable.name] = expression_reads(variable.expression, variables, {})
    aggregates = {a.name: _aggregate_reads(a, variables) for a in policy.aggregates}
    return {rule.qualified_name: rule_reads(rule, variables, aggregates)
            for point in HINTED_POINTS for rule in policy.rules_for(point)}


def rule_reads(rule: Rule, variables: Mapping[str, frozenset[Fact]],
               aggregates: Mapping[str, frozenset[Fact]]) -> frozenset[Fact]:
    """The facts every CEL field of ``rule`` reads, with ``variables`` and ``aggregates``
    (name → facts) of its policy."""
    out: set[Fact] = set()
    for expression in _expressions(rule):
        out |= expression_reads(expression, variables, aggregates)
    return frozenset(out)


def expression_reads(expression: CelExpression, variables: Mapping[str, frozenset[Fact]],
                     aggregates: Mapping[str, frozenset[Fact]]) -> frozenset[Fact]:
    program = expression.program
    walk = _Walk(program.types, variables, aggregates)
    tree = program.tree
    try:
        if walk.is_node(tree) or walk.is_node_list(tree):
            walk.node_source(tree, frozenset())  # a variable's nodes: followed where used
        else:
            walk.value(tree, frozenset())
    except (_Unknown, RecursionError):
        return EVERY_FACT
    return frozenset(walk.facts)


def _aggregate_reads(aggregate: Aggregate, variables: Mapping[str, frozenset[Fact]]
                     ) -> frozenset[Fact]:
    out = set(_AGGREGATE)
    for expression in (aggregate.for_each, aggregate.pods, aggregate.group_by,
                       aggregate.node_affinity, aggregate.node_taints, aggregate.node_labels,
                       aggregate.terms_of):
        if expression is not None:
            out |= expression_reads(expression, variables, {})
    return frozenset(out)


def _expressions(rule: Rule) -> Iterator[CelExpression]:
    for value in vars(rule).values():
        if isinstance(value, CelExpression):
            yield value
        elif isinstance(value, tuple | list):
            yield from (v for v in value if isinstance(v, CelExpression))
        elif isinstance(value, Mapping):
            yield from (v for v in value.values() if isinstance(v, CelExpression))


class _Walk:
    """Collects ``facts``; ``value(node)`` visits an expression whose value is used in a
    way the analysis does not follow (so a node there is read as a whole)."""

    def __init__(self, types: Mapping[int, Type], variables: Mapping[str, frozenset[Fact]],
                 aggregates: Mapping[str, frozenset[Fact]]) -> None:
        self.types = types
        self.variables = variables
        self.aggregates = aggregates
        self.facts: set[Fact] = set()

    def is_node(self, node: ast.Node) -> bool:
        return self.types.get(id(node)) == NODE_TYPE

    def is_node_list(self, node: ast.Node) -> bool:
        found = self.types.get(id(node))
        return found is not None and found.name == "list" and found.params == (NODE_TYPE,)

    def value(self, node: ast.Node, bound: frozenset[str]) -> None:
        if self.is_node(node) or self.is_node_list(node):
            raise _Unknown  # a node or nodes as a whole: compared, bound, passed on...
        if isinstance(node, ast.Ident):
            self.ident(node.name, bound)
        elif isinstance(node, ast.Select):
            self.select(node, bound)
        elif isinstance(node, ast.Call):
            self.call(node, bound)
        elif isinstance(node, ast.Macro):
            self.macro(node, bound)
        else:
            for child in ast.children(node):
                self.value(child, bound)

    def ident(self, name: str, bound: frozenset[str]) -> None:
        if name in bound:
            return
        if name in (VARIABLES, AGGREGATES):
            raise _Unknown
        if name == NODE_PODS:  # the pods of the node under consideration
            self.facts |= {Fact.PODS, Fact.NODE_ADDED}
        elif name in _POD_LISTS:
            self.facts.add(Fact.PODS)
        elif name == POD:
            self.facts.add(Fact.POD_GROUPS)  # its podGroup comes from its PodGroup
        elif name == WORKLOAD_SELECTOR:
            self.facts.add(Fact.WORKLOADS)
        elif name in (POD_VOLUMES, VOLUME_BINDER):
            self.facts.add(Fact.STORAGE)

    def select(self, node: ast.Select, bound: frozenset[str]) -> None:
        operand = node.operand
        if isinstance(operand, ast.Ident) and operand.name not in bound:
            if operand.name == VARIABLES:
                self.facts |= self.known(self.variables, node.field)
                return
            if operand.name == AGGREGATES:
                self.facts |= self.known(self.aggregates, node.field)
                return
            if operand.name == POD:
                if node.field == "podGroup":
                    self.facts.add(Fact.POD_GROUPS)
                return
        if node.field == "usedOnNodes" and self.types.get(id(operand)) == CLAIM_TYPE:
            self.facts.add(Fact.PODS)  # which pods use a claim: placed, deleted, finished
        if self.is_node(operand):
            found = _NODE_FIELDS.get(node.field)
            self.facts |= found if found is not None else {Fact.NODE_OBJECT}
            self.node_source(operand, bound)
            return
        self.value(operand, bound)

    def call(self, node: ast.Call, bound: frozenset[str]) -> None:
        receiver = self.types.get(id(node.target)) if node.target is not None else None
        reads_labels = (receiver is not None
                        and _LABEL_READERS.get(node.function) == receiver)
        if node.target is not None:
            if node.function == "size" and self.is_node_list(node.target):
                self.node_source(node.target, bound)
            else:
                self.value(node.target, bound)
        for arg in node.args:
            if reads_labels and self.is_node(arg):
                self.facts.add(Fact.NODE_LABELS)
                self.node_source(arg, bound)
            elif node.function == "size" and self.is_node_list(arg):
                self.node_source(arg, bound)
            elif (node.function == ast.INDEX and len(node.args) == 2
                  and arg is node.args[0] and self.is_node_list(arg)):
                raise _Unknown  # a node picked from a list, as a whole
            else:
                self.value(arg, bound)

    def macro(self, node: ast.Macro, bound: frozenset[str]) -> None:
        inner = bound | {node.var} | ({node.var2} if node.var2 else set())
        args = node.args
        if node.kind == ast.BIND:  # cel.bind(var, init, body): init is outside
            self.value(args[0], bound)
            args = args[1:]
        if node.target is not None:
            if self.is_node_list(node.target):
                self.node_source(node.target, bound)  # its elements: through the variable
            else:
                self.value(node.target, bound)
        for arg in args:
            self.value(arg, inner)

    def node_source(self, node: ast.Node, bound: frozenset[str]) -> None:
        """A node, or list of nodes, whose use is followed (fields read, labels matched,
        elements iterated): only where it comes from counts here."""
        if isinstance(node, ast.Ident):
            if node.name in bound:
                return  # a comprehension's element: its list counted where it was iterated
            self.facts |= {Fact.NODE_ADDED} if node.name == NODE else _NODE_LIST
            if node.name not in (NODE, NODES):
                raise _Unknown
            return
        if isinstance(node, ast.Macro) and node.kind in (ast.FILTER, ast.SORT_BY) \
                and node.target is not None:
            self.macro(node, bound)  # nodes.filter(n, ...): the list, and what n reads
            return
        if (isinstance(node, ast.Select) and isinstance(node.operand, ast.Ident)
                and node.operand.name == VARIABLES and VARIABLES not in bound):
            self.facts |= self.known(self.variables, node.field)  # a variable's nodes
            return
        if isinstance(node, ast.Call) and node.target is None and len(node.args) in (2, 3) \
                and node.function in (ast.COND, ast.ADD):  # c ? xs : ys, xs + ys
            if node.function == ast.COND:
                self.value(node.args[0], bound)
            for arg in node.args[-2:]:
                self.node_source(arg, bound)
            return
        raise _Unknown

    @staticmethod
    def known(table: Mapping[str, frozenset[Fact]], name: str) -> frozenset[Fact]:
        found = table.get(name)
        if found is None:
            raise _Unknown
        return found
