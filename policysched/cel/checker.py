"""The static type checker for CEL expressions (cel-python has none).

``check(tree, env)`` infers a type for every node of the tree and reports, as
``CelCompileError``, what cel-go's checker reports: undeclared identifiers and functions
(``REFERENCE``), variables that exist only at other extension points (``REFERENCE``, with
the reason from ``env.unavailable``), calls that match no overload, unknown fields of
declared object types and ill-typed macros (``TYPE``), and string literals that a function
refuses whenever it runs: an invalid RE2 pattern, timestamp, duration, quantity, IP or CIDR
(``ARGUMENT``, as cel-go's literal validators). Each error is at the offset of the node
cel-go reports it at: the call's ``(``, the operator, the offending operand or literal.

Type inference follows cel-go: overload signatures with type parameters (``A``, ``B`` ...)
are instantiated with fresh type variables per call and unified with the argument types;
``dyn`` is assignable to and from anything; list and map literals join their element
types (mixed types give ``dyn``); ``null`` is assignable to nullable types (timestamps,
durations, optionals, objects, abstract types). Type variables still free at the end
become ``dyn``.

The walk over the tree is iterative (a stack of generators), so deep trees cannot raise
``RecursionError``; type sizes are bounded so that hostile expressions cannot make the
checker blow up.
"""

from __future__ import annotations

import difflib
from collections import ChainMap
from collections.abc import Generator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field

from . import ast
from .compatibility import FUNCTIONS, MACROS, TWO_VARIABLE_MACROS, KubernetesVersion
from .environment import Environment
from .errors import CelCompileError, CompileErrorKind, shown
from .library import Function, Overload
from .library.collections import SORT_BY_OVERLOADS
from .types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    ERROR,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    UINT,
    A,
    B,
    Type,
    list_of,
    map_of,
    optional_of,
    type_of_type,
)
from .values import (
    TYPE_IDENTIFIERS,
    CelError,
    Duration,
    OptionalValue,
    Timestamp,
    TypeValue,
    UInt,
)

__all__ = [
    "OPERATOR_OVERLOADS",
    "CheckResult",
    "check",
    "format_type",
    "is_assignable",
    "require_result",
]

# A type tree larger than this (counting every node of the expanded tree) is rejected:
# legitimate expressions stay far below, hostile ones could otherwise grow types
# exponentially (``cel.bind(a, {x: x}, cel.bind(b, {a: a}, ...))``).
MAX_TYPE_SIZE = 5000

BLOCK = "cel.block"  # the Macro kind of cel.block([slots...], body)

# cel-go's type conversion functions: with a constant argument, Kubernetes evaluates them
# when it plans the program (cel.OptOptimize), so a failing one is a compile error there.
_CONVERSIONS = frozenset({"bool", "bytes", "double", "duration", "dyn", "int", "string",
                          "timestamp", "type", "uint"})
# Functions whose constant pattern Kubernetes compiles when it plans the program (cel-go's
# and Kubernetes' regex optimisations), so ``s.matches(dyn('a**'))`` fails to compile too.
_PLANNED_PATTERNS = frozenset({"matches", "find", "findAll"})


@dataclass(frozen=True)
class CheckResult:
    """The result type of the expression and the type of every node, keyed by ``id(node)``.

    ``references`` maps ``id(node)`` of a ``Select``/``Ident`` that names a dotted variable
    (``a.b.c`` declared as one name) and of a ``Call`` that is a namespaced global function
    (``math.abs(x)``) to the resolved name. ``overloads`` maps ``id(call)`` to the ids of
    the overloads that may apply (several when arguments are ``dyn``). Nodes beneath a
    resolved qualified name are never evaluated; they are typed ``dyn``.
    """

    type: Type
    types: dict[int, Type]
    references: dict[int, str] = field(default_factory=dict)
    overloads: dict[int, tuple[str, ...]] = field(default_factory=dict)


# --------------------------------------------------------------------------------------
# Operator declarations (CEL spec / cel-go standard declarations).

_ORDERED = (BOOL, INT, UINT, DOUBLE, STRING, BYTES, TIMESTAMP, DURATION)
_NUMERIC = (INT, UINT, DOUBLE)


def _operator_table(cross_type_numeric: bool) -> dict[str, tuple[Overload, ...]]:
    """The operators; ``cross_type_numeric``: ordering across int, uint and double."""
    table: dict[str, list[Overload]] = {}

    def add(name: str, oid: str, params: tuple[Type, ...], result: Type) -> None:
        table.setdefault(name, []).append(Overload(oid, params, result))

    add(ast.NOT, "logical_not", (BOOL,), BOOL)
    add(ast.EQ, "equals", (A, A), BOOL)  # only between the same static types (or dyn)
    add(ast.NE, "not_equals", (A, A), BOOL)
    add(ast.NEG, "negate_int64", (INT,), INT)
    add(ast.NEG, "negate_double", (DOUBLE,), DOUBLE)
    add(ast.AND, "logical_and", (BOOL, BOOL), BOOL)
    add(ast.OR, "logical_or", (BOOL, BOOL), BOOL)
    add(ast.COND, "conditional", (BOOL, A, A), A)
    for op, name in ((ast.LT, "less"), (ast.LE, "less_equals"), (ast.GT, "greater"),
                     (ast.GE, "greater_equals")):
        for t in _ORDERED:
            add(op, f"{name}_{t.name}", (t, t), BOOL)
        for t1 in _NUMERIC:  # cross-type numeric comparisons
            for t2 in _NUMERIC:
                if t1 != t2 and cross_type_numeric:
                    add(op, f"{name}_{t1.name}_{t2.name}", (t1, t2), BOOL)
    for t in (INT, UINT, DOUBLE, STRING, BYTES):
        add(ast.ADD, f"add_{t.name}", (t, t), t)
    add(ast.ADD, "add_list", (list_of(A), list_of(A)), list_of(A))
    add(ast.ADD, "add_timestamp_duration", (TIMESTAMP, DURATION), TIMESTAMP)
    add(ast.ADD, "add_duration_timestamp", (DURATION, TIMESTAMP), TIMESTAMP)
    add(ast.ADD, "add_duration_duration", (DURATION, DURATION), DURATION)
    for t in _NUMERIC:
        add(ast.SUB, f"subtract_{t.name}", (t, t), t)
        add(ast.MUL, f"multiply_{t.name}", (t, t), t)
        add(ast.DIV, f"divide_{t.name}", (t, t), t)
    add(ast.SUB, "subtract_timestamp_timestamp", (TIMESTAMP, TIMESTAMP), DURATION)
    add(ast.SUB, "subtract_timestamp_duration", (TIMESTAMP, DURATION), TIMESTAMP)
    add(ast.SUB, "subtract_duration_duration", (DURATION, DURATION), DURATION)
    add(ast.MOD, "modulo_int", (INT, INT), INT)
    add(ast.MOD, "modulo_uint", (UINT, UINT), UINT)
    add(ast.INDEX, "index_list", (list_of(A), INT), A)
    add(ast.INDEX, "index_map", (map_of(A, B), A), B)
    add(ast.INDEX, "index_optional_list", (optional_of(list_of(A)), INT), optional_of(A))
    add(ast.INDEX, "index_optional_map", (optional_of(map_of(A, B)), A), optional_of(B))
    add(ast.OPT_INDEX, "optional_index_list", (list_of(A), INT), optional_of(A))
    add(ast.OPT_INDEX, "optional_index_map", (map_of(A, B), A), optional_of(B))
    add(ast.OPT_INDEX, "optional_index_optional_list", (optional_of(list_of(A)), INT),
        optional_of(A))
    add(ast.OPT_INDEX, "optional_index_optional_map", (optional_of(map_of(A, B)), A),
        optional_of(B))
    add(ast.IN, "in_list", (A, list_of(A)), BOOL)
    add(ast.IN, "in_map", (A, map_of(A, B)), BOOL)
    return {k: tuple(v) for k, v in table.items()}


OPERATOR_OVERLOADS: Mapping[str, tuple[Overload, ...]] = _operator_table(True)
_SAME_TYPE_OPERATORS: Mapping[str, tuple[Overload, ...]] = _operator_table(False)

# Type identifiers and the type they denote (``int`` is a value of type ``type(int)``).
_TYPE_IDENTS: dict[str, Type] = {
    "int": INT,
    "uint": UINT,
    "double": DOUBLE,
    "bool": BOOL,
    "string": STRING,
    "bytes": BYTES,
    "null_type": NULL,
    "list": list_of(DYN),
    "map": map_of(DYN, DYN),
    "type": Type("type"),
    "google.protobuf.Timestamp": TIMESTAMP,
    "google.protobuf.Duration": DURATION,
    "optional_type": optional_of(DYN),
}

# Types whose values can never be null (everything else accepts null, as in cel-go).
_NOT_NULLABLE = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map",
                           "type"})


# Types cel-go prints under another name than their declaration's.
_PRINTED_NAMES = {TIMESTAMP.name: "timestamp", DURATION.name: "duration", NULL.name: "null"}


def format_type(t: Type) -> str:
    """A type as cel-go prints it (``list(int)``, ``map(string, timestamp)``, ``null``)."""
    name = _PRINTED_NAMES.get(t.name, t.name) if not t.is_param else t.name
    if not t.params:
        return name
    return f"{name}({', '.join(format_type(p) for p in t.params)})"


# --------------------------------------------------------------------------------------
# Unification (after cel-go's checker/types.go).

Mapping_ = MutableMapping[str, Type]


def _is_dyn_or_error(t: Type) -> bool:
    return not t.is_param and (t.name == "dyn" or t.name == ERROR.name)


def _nullable(t: Type) -> bool:
    return t.name not in _NOT_NULLABLE


def _find(m: Mapping_, t: Type) -> Type | None:
    return m.get(t.name) if t.is_param else None


def _not_referenced_in(m: Mapping_, var: Type, within: Type) -> bool:
    """Occurs check: ``var`` does not appear in ``within`` (following substitutions)."""
    stack = [within]
    seen: set[str] = set()
    while stack:
        t = stack.pop()
        if t == var:
            return False
        if t.is_param:
            if t.name in seen:
                continue
            seen.add(t.name)
            sub = m.get(t.name)
            if sub is not None:
                stack.append(sub)
        else:
            stack.extend(t.params)
    return True


def _less_specific(t1: Type, t2: Type) -> bool:
    """cel-go's isEqualOrLessSpecific."""
    if _is_dyn_or_error(t1) or t1.is_param:
        return True
    if _is_dyn_or_error(t2) or t2.is_param:
        return False
    if t1.name != t2.name or len(t1.params) != len(t2.params):
        return False
    if t1.name == "type":
        return True
    return all(_less_specific(p1, p2) for p1, p2 in zip(t1.params, t2.params, strict=True))


def _most_general(t1: Type, t2: Type) -> Type:
    if t1 == NULL:
        return t2
    if t2 == NULL:
        return t1
    return t1 if _less_specific(t1, t2) else t2


def _valid_substitution(m: Mapping_, t1: Type, t2: Type) -> tuple[bool, bool]:
    """Whether ``t1`` may stand for the type variable ``t2``; (valid, t2 had a binding)."""
    if t1 == t2:
        return True, True
    sub = _find(m, t2)
    if sub is not None:
        if t1 == sub:
            return True, True
        if _assignable(m, t1, sub):
            new = _most_general(t1, sub)
            if _not_referenced_in(m, t2, new):
                m[t2.name] = new
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        m[t2.name] = t1
        return True, False
    return False, False


def _assignable(m: Mapping_, t1: Type, t2: Type) -> bool:
    """Whether a value of type ``t1`` may be used where ``t2`` is expected, binding type
    variables of either side in ``m`` (which the caller discards on failure)."""
    if t2.is_param:
        valid, had_sub = _valid_substitution(m, t1, t2)
        if valid:
            return True
        if had_sub:
            return False
    if t1.is_param:
        valid, _ = _valid_substitution(m, t2, t1)
        return valid
    if _is_dyn_or_error(t1) or _is_dyn_or_error(t2):
        return True
    if t1.name == NULL.name and not t1.params:
        return _nullable(t2)
    if t2.name == NULL.name and not t2.params:
        return _nullable(t1)
    if t1.name != t2.name:
        return False
    if t1.name == "type":
        return True
    if len(t1.params) != len(t2.params):
        return False
    return all(_assignable(m, p1, p2) for p1, p2 in zip(t1.params, t2.params, strict=True))


def _try_assign(m: dict[str, Type], l1: Sequence[Type], l2: Sequence[Type]) -> bool:
    """Unify the lists pairwise; on success keep the new bindings in ``m``, on failure
    leave ``m`` untouched."""
    if len(l1) != len(l2):
        return False
    overlay: ChainMap[str, Type] = ChainMap({}, m)
    for t1, t2 in zip(l1, l2, strict=True):
        if not _assignable(overlay, t1, t2):
            return False
    m.update(overlay.maps[0])
    return True


def _substitute(m: Mapping_, t: Type, to_dyn: bool) -> Type:
    """Apply the substitutions of ``m`` to ``t``; free variables become dyn if ``to_dyn``."""
    memo: dict[int, Type] = {}
    active: set[str] = set()

    def sub(x: Type) -> Type:
        key = id(x)
        if key in memo:
            return memo[key]
        if x.is_param:
            bound = m.get(x.name)
            if bound is not None and x.name not in active:
                active.add(x.name)
                out = sub(bound)
                active.discard(x.name)
            else:
                out = DYN if to_dyn else x
        elif not x.params:
            out = x
        else:
            out = Type(x.name, tuple(sub(p) for p in x.params))
        memo[key] = out
        return out

    return sub(t)


def is_assignable(actual: Type, expected: Type) -> bool:
    """Whether a value of type ``actual`` fits where ``expected`` is required (dyn fits)."""
    return _try_assign({}, (actual,), (expected,))


def _type_size(t: Type) -> int:
    """Number of nodes of the expanded type tree (computed on the DAG)."""
    memo: dict[int, int] = {}
    order = [t]
    stack = [t]
    while stack:
        x = stack.pop()
        for p in x.params:
            if id(p) not in memo:
                memo[id(p)] = -1
                order.append(p)
                stack.append(p)
    sizes: dict[int, int] = {}
    for x in reversed(order):
        sizes[id(x)] = 1 + sum(sizes.get(id(p), 1) for p in x.params)
    return sizes[id(t)]


# --------------------------------------------------------------------------------------
# The checker.

_Scope = Mapping[str, Type]
_Visit = Generator[tuple[ast.Node, _Scope], Type, Type]


def _error(kind: CompileErrorKind, message: str, node: ast.Node | ast.MapEntry) -> CelCompileError:
    return CelCompileError(kind, message, node.offset)


def _suggest(name: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _literal_type(value: object) -> Type:
    t = type(value)
    if t is bool:
        return BOOL
    if t is UInt:
        return UINT
    if t is int:
        return INT
    if t is float:
        return DOUBLE
    if t is str:
        return STRING
    if t is bytes:
        return BYTES
    if value is None:
        return NULL
    if t is Timestamp:
        return TIMESTAMP
    if t is Duration:
        return DURATION
    if isinstance(value, TypeValue):
        return type_of_type(_TYPE_IDENTS.get(value.name, Type(value.name)))
    if t is OptionalValue:
        return optional_of(DYN)
    if t is list or t is tuple:
        return list_of(DYN)
    if t is dict:
        return map_of(DYN, DYN)
    return DYN


def _type_identifier(name: str) -> Type | None:
    """The type of a type identifier (``int`` → ``type(int)``), or None."""
    if name in _TYPE_IDENTS:
        return type_of_type(_TYPE_IDENTS[name])
    if name in TYPE_IDENTIFIERS:  # library value types (net.IP ...) register themselves
        return type_of_type(Type(name))
    return None


def _head(qualified: str) -> str:
    return qualified.split(".", 1)[0]


class _Checker:
    def __init__(self, env: Environment) -> None:
        self.env = env
        self.m: dict[str, Type] = {}
        self.types: dict[int, Type] = {}
        self.references: dict[int, str] = {}
        self.overloads: dict[int, tuple[str, ...]] = {}
        self.counter = 0
        self.version = env.version
        self.operators = (_SAME_TYPE_OPERATORS if env.version is not None
                          and not env.version.cross_type_numeric_comparisons
                          else OPERATOR_OVERLOADS)

    # -- driver ------------------------------------------------------------------------

    def run(self, root: ast.Node) -> Type:
        """Visit the tree with an explicit stack of generators (no Python recursion)."""
        stack: list[tuple[_Visit, ast.Node]] = []
        node = root
        gen = self.visit(node, {})
        value: Type | None = None
        while True:
            try:
                request = gen.send(value)  # type: ignore[arg-type]
            except StopIteration as stop:
                result: Type = stop.value
                self._bound(result, node)
                self.types[id(node)] = result
                if not stack:
                    return result
                gen, node = stack.pop()
                value = result
                continue
            child, scope = request
            stack.append((gen, node))
            node, gen, value = child, self.visit(child, scope), None

    def _bound(self, t: Type, node: ast.Node) -> None:
        if t.params and _type_size(_substitute(self.m, t, False)) > MAX_TYPE_SIZE:
            raise _error(CompileErrorKind.TYPE, "expression type is too complex", node)

    def fresh(self) -> Type:
        self.counter += 1
        return Type(f"_var{self.counter}", is_param=True)

    def resolve(self, t: Type) -> Type:
        """Follow the substitutions of a type variable (shallowly)."""
        seen = 0
        while t.is_param and t.name in self.m and seen < 10_000:
            t = self.m[t.name]
            seen += 1
        return t

    def show(self, t: Type) -> str:
        return format_type(_substitute(self.m, t, True))

    def assign(self, actual: Type, expected: Type) -> bool:
        """Unify ``actual`` into ``expected``, keeping the bindings on success."""
        return _try_assign(self.m, (actual,), (expected,))

    def mark_dyn(self, node: ast.Node) -> None:
        """Type the sub-nodes of a resolved qualified name ``dyn`` (they are not evaluated)."""
        stack = [node]
        while stack:
            n = stack.pop()
            self.types[id(n)] = DYN
            stack.extend(ast.children(n))

    # -- dispatch ------------------------------------------------------------------------

    def visit(self, node: ast.Node, scope: _Scope) -> _Visit:
        if isinstance(node, ast.Literal):
            return _literal_type(node.value)
        if isinstance(node, ast.Ident):
            return self.ident(node, scope)
        if isinstance(node, ast.Select):
            return (yield from self.select(node, scope))
        if isinstance(node, ast.Call):
            return (yield from self.call(node, scope))
        if isinstance(node, ast.CreateList):
            return (yield from self.create_list(node, scope))
        if isinstance(node, ast.CreateMap):
            return (yield from self.create_map(node, scope))
        if isinstance(node, ast.CreateStruct):
            raise _error(CompileErrorKind.TYPE,
                         f"unknown type '{node.type_name}': message construction is not "
                         "supported (use a map literal)", node)
        if isinstance(node, ast.Macro):
            return (yield from self.macro(node, scope))
        raise _error(CompileErrorKind.SYNTAX, f"unexpected node {type(node).__name__}", node)

    # -- identifiers -------------------------------------------------------------------

    def variable(self, name: str) -> Type | None:
        t = self.env.variables.get(name)
        if t is None:
            return None
        return _substitute({}, t, True) if _has_param(t) else t

    def ident(self, node: ast.Ident, scope: _Scope) -> Type:
        name = node.name
        leading_dot = name.startswith(".")
        if leading_dot:
            name = name.lstrip(".")
        elif name in scope:
            return scope[name]
        t = self.variable(name)
        if t is not None:
            return t
        if "." in name:  # a dotted identifier: the longest declared prefix, then fields
            t = self.dotted(node, name, {} if leading_dot else scope)
            if t is not None:
                return t
        self.not_available(node, name)
        t = _type_identifier(name)
        if t is not None:
            return t
        candidates = [*self.env.variables, *scope]
        raise _error(CompileErrorKind.REFERENCE,
                     f"undeclared reference to '{shown(node.name)}'{_suggest(name, candidates)}",
                     node)

    def dotted(self, node: ast.Ident, name: str, scope: _Scope) -> Type | None:
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:i])
            t = scope.get(prefix) if prefix in scope else self.variable(prefix)
            if t is None:
                continue
            for f in parts[i:]:
                t = self.field_type(node, t, f)
            return t
        return None

    def not_available(self, node: ast.Node, name: str) -> None:
        reason = self.env.unavailable.get(name)
        if reason is None:
            return
        sep = " " if reason.startswith("in ") else ": "
        raise _error(CompileErrorKind.REFERENCE, f"'{name}' is not available{sep}{reason}", node)

    # -- selection ---------------------------------------------------------------------

    def select(self, node: ast.Select, scope: _Scope) -> _Visit:
        if not node.test_only and not node.optional:
            qualified = ast.qualified_name(node)
            if qualified is not None:
                leading_dot = qualified.startswith(".")
                name = qualified.lstrip(".")
                if leading_dot or _head(name) not in scope:
                    t = self.variable(name)
                    if t is None:
                        t = _type_identifier(name)
                    if t is not None:
                        self.mark_dyn(node.operand)
                        self.references[id(node)] = name
                        return t
        operand = yield node.operand, scope
        return self.select_type(node, operand)

    def select_type(self, node: ast.Select, operand: Type) -> Type:
        t = self.resolve(operand)
        if node.optional:
            self.require_optional_syntax(node, ".?")
            base = self.resolve(t.params[0]) if t.name == "optional_type" and t.params else t
            return optional_of(self.field_type(node, base, node.field))
        if t.name == "optional_type" and len(t.params) == 1 and not t.is_param:
            inner = self.field_type(node, self.resolve(t.params[0]), node.field)
            return BOOL if node.test_only else optional_of(inner)
        ft = self.field_type(node, t, node.field)
        return BOOL if node.test_only else ft

    def field_type(self, node: ast.Node, t: Type, name: str) -> Type:
        t = self.resolve(t)
        if t.is_param or _is_dyn_or_error(t):
            return DYN
        if t.name == "map" and len(t.params) == 2:
            return t.params[1]
        fields = self.env.objects.get(t.name)
        if fields is not None and not t.params:
            ft = fields.get(name)
            if ft is None:
                raise _error(CompileErrorKind.TYPE,
                             f"undefined field '{shown(name)}'{_suggest(name, list(fields))}",
                             node)
            return _substitute({}, ft, True) if _has_param(ft) else ft
        raise _error(CompileErrorKind.TYPE,
                     f"type '{self.show(t)}' does not support field selection", node)

    # -- calls -------------------------------------------------------------------------

    def call(self, node: ast.Call, scope: _Scope) -> _Visit:
        fn = node.function
        if node.target is None:
            if fn in (ast.AND, ast.OR):
                # every operand is a bool; as cel-go, a wrong one is reported where it is
                for arg in node.args:
                    t = yield arg, scope
                    if not self.assign(t, BOOL):
                        raise _error(CompileErrorKind.TYPE,
                                     f"expected type 'bool' but found '{self.show(t)}'", arg)
                self.overloads[id(node)] = ("logical_and" if fn == ast.AND else "logical_or",)
                return BOOL
            if fn == ast.OPT_INDEX:
                self.require_optional_syntax(node, "[?")
            overloads = self.operators.get(fn)
            name = fn
            if overloads is None:
                name = fn.lstrip(".")
                overloads = self.function_overloads(node, name, None)
            arg_types = []
            for arg in node.args:
                arg_types.append((yield arg, scope))
            result = self.resolve_overload(node, name, overloads, arg_types, None)
            self.check_literal(name, node.args)
            return result
        qualified = ast.qualified_name(node.target)
        if qualified is not None:
            leading_dot = qualified.startswith(".")
            q = qualified.lstrip(".")
            full = f"{q}.{fn}"
            if (full in self.env.functions and (leading_dot or _head(q) not in scope)
                    and _head(q) not in self.env.variables and q not in self.env.variables):
                self.mark_dyn(node.target)
                self.references[id(node)] = full
                overloads = self.function_overloads(node, full, None)
                arg_types = []
                for arg in node.args:
                    arg_types.append((yield arg, scope))
                result = self.resolve_overload(node, full, overloads, arg_types, None)
                self.check_literal(full, node.args)
                return result
        target = yield node.target, scope
        overloads = self.function_overloads(node, fn, target)
        arg_types = [target]
        for arg in node.args:
            arg_types.append((yield arg, scope))
        result = self.resolve_overload(node, fn, overloads, arg_types, target)
        self.check_literal(fn, (node.target, *node.args))
        return result

    def check_literal(self, name: str, args: Sequence[ast.Node]) -> None:
        """Reject a string literal argument that the function refuses whenever it runs
        (``matches(s, 'a**')``, ``timestamp('noon')``), at that literal; and a type
        conversion of any constant that fails (``int(1e19)``, ``timestamp(253402300800)``,
        ``uint(dyn(-1))``), which Kubernetes evaluates when it plans the program."""
        function = self.env.functions.get(name)
        if function is None:
            return
        if name in _CONVERSIONS and len(args) == 1:
            return self.check_constant_conversion(function, args[0])
        if function.literal_check is None:
            return
        i = function.literal_arg
        if i >= len(args):
            return
        arg = args[i]
        while (name in _PLANNED_PATTERNS and isinstance(arg, ast.Call) and arg.function == "dyn"
               and arg.target is None and len(arg.args) == 1):
            arg = arg.args[0]
        if not isinstance(arg, ast.Literal) or type(arg.value) is not str:
            return
        try:
            function.literal_check(arg.value)
        except CelError as e:
            raise _error(CompileErrorKind.ARGUMENT,
                         f"invalid {name} argument: {e.message}", arg) from None

    def check_constant_conversion(self, function: Function, arg: ast.Node) -> None:
        """A conversion of a literal, or of a conversion of ... a literal
        (``int(dyn(1e19))``)."""
        chain = []
        node = arg
        while (isinstance(node, ast.Call) and node.target is None and len(node.args) == 1
               and node.function in _CONVERSIONS and node.function in self.env.functions):
            chain.append(self.env.functions[node.function])
            node = node.args[0]
        if not isinstance(node, ast.Literal):
            return
        value = node.value
        try:
            for inner in reversed(chain):
                value = inner.impl(value)
            function.impl(value)
        except CelError as e:
            raise _error(CompileErrorKind.ARGUMENT,
                         f"invalid {function.name} argument: {e.message}", arg) from None

    def function_overloads(self, node: ast.Call, name: str,
                           target: Type | None) -> tuple[Overload, ...]:
        function = self.env.functions.get(name)
        if function is None:
            hint = _suggest(name, [f for f in self.env.functions if self.has_function(f)])
            raise _error(CompileErrorKind.REFERENCE,
                         f"undeclared reference to '{shown(name)}'{hint}",
                         node)
        if not self.has_function(name):
            raise _error(CompileErrorKind.REFERENCE, self.too_new(
                f"undeclared reference to '{name}'", FUNCTIONS[name]), node)
        return function.overloads

    def has_function(self, name: str) -> bool:
        return self.version is None or self.version.has_function(name)

    def too_new(self, message: str, introduced: KubernetesVersion) -> str:
        return (f"{message}: introduced in Kubernetes {introduced}, the CEL compatibility "
                f"version is {self.version}")

    def require_optional_syntax(self, node: ast.Node | ast.MapEntry, syntax: str) -> None:
        """Optional syntax exists from Kubernetes 1.28 (cel-go's OptionalTypes)."""
        if self.version is not None and not self.version.optional_syntax:
            raise _error(CompileErrorKind.SYNTAX, self.too_new(
                f"unsupported syntax '{syntax}'", MACROS["optMap"]), node)

    def require_macro(self, node: ast.Macro) -> None:
        name = node.kind
        if node.var2 is not None and name in (ast.ALL, ast.EXISTS, ast.EXISTS_ONE):
            name = TWO_VARIABLE_MACROS
        if self.version is not None and not self.version.has_macro(name):
            what = ("two-variable comprehension" if name == TWO_VARIABLE_MACROS
                    else f"macro '{name}'")
            raise _error(CompileErrorKind.REFERENCE,
                         self.too_new(f"unsupported {what}", MACROS[name]), node)

    def instantiate(self, ov: Overload) -> tuple[list[Type], Type]:
        if not _generic(ov):
            return list(ov.params), ov.result
        names: dict[str, Type] = {}

        def inst(t: Type) -> Type:
            if t.is_param:
                if t.name not in names:
                    names[t.name] = self.fresh()
                return names[t.name]
            if not t.params:
                return t
            return Type(t.name, tuple(inst(p) for p in t.params))

        return [inst(p) for p in ov.params], inst(ov.result)

    def resolve_overload(self, node: ast.Call | ast.Macro, name: str, overloads: Sequence[Overload],
                         arg_types: list[Type], target: Type | None) -> Type:
        member = target is not None
        result: Type | None = None
        matched: list[str] = []
        concrete_args = not any(_has_param(t) for t in arg_types)
        for ov in overloads:
            if ov.member != member:
                continue
            n = len(ov.params)
            if ov.varargs and n:
                if len(arg_types) < n:
                    continue
            elif len(arg_types) != n:
                continue
            params, res = self.instantiate(ov)
            if ov.varargs and n:
                params = params + [params[-1]] * (len(arg_types) - n)
            if concrete_args and not _generic(ov):
                # nothing to bind: no need for an undoable overlay
                if not all(_assignable(self.m, a, p)
                           for a, p in zip(arg_types, params, strict=True)):
                    continue
            elif not _try_assign(self.m, arg_types, params):
                continue
            matched.append(ov.id)
            fn_result = _substitute(self.m, res, False)
            if result is None:
                result = fn_result
            elif not _is_dyn_or_error(result) and fn_result != result:
                result = DYN
        if result is None:
            raise self.no_overload(node, name, arg_types, target)
        self.overloads[id(node)] = tuple(matched)
        return result

    def no_overload(self, node: ast.Call | ast.Macro, name: str, arg_types: list[Type],
                    target: Type | None) -> CelCompileError:
        if target is not None:
            rest = ", ".join(self.show(t) for t in arg_types[1:])
            applied = f"{self.show(target)}.({rest})"
        else:
            applied = "(" + ", ".join(self.show(t) for t in arg_types) + ")"
        return _error(CompileErrorKind.TYPE,
                      f"found no matching overload for '{shown(name)}' applied to "
                      f"'{shown(applied, 400)}'", node)

    # -- construction -----------------------------------------------------------------

    def join(self, previous: Type | None, current: Type) -> Type:
        if previous is None:
            return current
        if _try_assign(self.m, (previous,), (current,)):
            return _most_general(previous, current)
        return DYN

    def optional_value(self, t: Type, at: ast.Node | ast.MapEntry, what: str) -> Type:
        """The value type of an optional element/entry ``?x`` (``x`` must be optional)."""
        inner = self.fresh()
        if not self.assign(t, optional_of(inner)):
            raise _error(CompileErrorKind.TYPE,
                         f"optional {what} must be optional_type, found {self.show(t)}", at)
        return inner

    def create_list(self, node: ast.CreateList, scope: _Scope) -> _Visit:
        elem: Type | None = None
        for i, e in enumerate(node.elements):
            t = yield e, scope
            if i in node.optional_indices:
                self.require_optional_syntax(e, "?")
                t = self.optional_value(t, e, "list element")
            elem = self.join(elem, t)
        return list_of(elem if elem is not None else self.fresh())

    def create_map(self, node: ast.CreateMap, scope: _Scope) -> _Visit:
        key: Type | None = None
        value: Type | None = None
        for entry in node.entries:
            kt = yield entry.key, scope
            vt = yield entry.value, scope
            if entry.optional:
                self.require_optional_syntax(entry, "?")
                vt = self.optional_value(vt, entry.value, "map entry")
            key = self.join(key, kt)
            value = self.join(value, vt)
        return map_of(key if key is not None else self.fresh(),
                      value if value is not None else self.fresh())

    # -- macros ------------------------------------------------------------------------

    def range_vars(self, node: ast.Macro, t: Type) -> tuple[Type, Type, Type]:
        """For a comprehension over ``t``: (first var, second var, key type of a result map).

        One variable: list → element, map → key. Two variables: list → (index, element),
        map → (key, value)."""
        r = self.resolve(t)
        two = node.var2 is not None
        if r.name == "list" and len(r.params) == 1 and not r.is_param:
            return (INT, r.params[0], INT) if two else (r.params[0], DYN, INT)
        if r.name == "map" and len(r.params) == 2 and not r.is_param:
            return r.params[0], r.params[1], r.params[0]
        if r.is_param or _is_dyn_or_error(r):
            self.assign(DYN, r)
            return DYN, DYN, DYN
        where = node.target if node.target is not None else node
        raise _error(CompileErrorKind.TYPE,
                     f"expression of type '{self.show(t)}' cannot be the range of a "
                     "comprehension (must be list, map, or dynamic)", where)

    def require_bool(self, t: Type, node: ast.Node, kind: str) -> None:
        if not self.assign(t, BOOL):
            raise _error(CompileErrorKind.TYPE,
                         f"predicate of '{kind}' must evaluate to bool, found {self.show(t)}",
                         node)

    def macro(self, node: ast.Macro, scope: _Scope) -> _Visit:
        kind = node.kind
        self.require_macro(node)
        if kind == ast.BIND:
            init = yield node.args[0], scope
            return (yield node.args[1], {**scope, node.var: init})
        if kind == BLOCK:
            inner = dict(scope)
            *slots, body = node.args
            for i, slot in enumerate(slots):
                t = yield slot, dict(inner)
                inner[f"@index{i}"] = t
                inner[f"@index{{{i}}}"] = t
            return (yield body, inner)
        if node.target is None:
            raise _error(CompileErrorKind.SYNTAX, f"macro '{kind}' needs a receiver", node)
        target = yield node.target, scope
        if kind in (ast.OPT_MAP, ast.OPT_FLAT_MAP):
            return (yield from self.optional_macro(node, scope, target))
        v1, v2, key = self.range_vars(node, target)
        inner = {**scope, node.var: v1}
        if node.var2 is not None:
            inner[node.var2] = v2
        args = node.args
        if kind in (ast.ALL, ast.EXISTS, ast.EXISTS_ONE):
            pred = yield args[0], inner
            self.require_bool(pred, args[0], kind)
            return BOOL
        if kind == ast.FILTER:
            pred = yield args[0], inner
            self.require_bool(pred, args[0], kind)
            r = self.resolve(target)
            if r.name == "list" and r.params and not r.is_param:
                return list_of(r.params[0])
            return list_of(v1)
        if kind == ast.SORT_BY:
            key = yield args[0], inner
            return self.resolve_overload(node, "@sortByAssociatedKeys", SORT_BY_OVERLOADS,
                                         [target, list_of(key)], target)
        if kind in (ast.MAP, ast.MAP_FILTER, ast.TRANSFORM_LIST, ast.TRANSFORM_MAP,
                    ast.TRANSFORM_MAP_ENTRY):
            if len(args) == 2:
                pred = yield args[0], inner
                self.require_bool(pred, args[0], kind)
            if not args:
                raise _error(CompileErrorKind.SYNTAX, f"macro '{kind}' needs arguments", node)
            value = yield args[-1], inner
            if kind == ast.TRANSFORM_MAP:
                return map_of(key, value)
            if kind == ast.TRANSFORM_MAP_ENTRY:
                k, v = self.fresh(), self.fresh()
                if not self.assign(value, map_of(k, v)):
                    raise _error(CompileErrorKind.TYPE,
                                 f"transformMapEntry must produce a map, found "
                                 f"{self.show(value)}", args[-1])
                return map_of(k, v)
            return list_of(value)
        raise _error(CompileErrorKind.SYNTAX, f"unsupported macro '{kind}'", node)

    def optional_macro(self, node: ast.Macro, scope: _Scope, target: Type) -> _Visit:
        elem = self.fresh()
        if not self.assign(target, optional_of(elem)):
            raise _error(CompileErrorKind.TYPE,
                         f"{node.kind} requires an optional value, found {self.show(target)}",
                         node.target if node.target is not None else node)
        value = yield node.args[0], {**scope, node.var: elem}
        if node.kind == ast.OPT_MAP:
            return optional_of(value)
        inner = self.fresh()
        if not self.assign(value, optional_of(inner)):
            raise _error(CompileErrorKind.TYPE,
                         f"optFlatMap must produce an optional value, found {self.show(value)}",
                         node.args[0])
        return optional_of(inner)


_GENERIC: dict[int, tuple[Overload, bool]] = {}


def _generic(ov: Overload) -> bool:
    """Whether the signature of ``ov`` mentions type parameters (cached)."""
    cached = _GENERIC.get(id(ov))
    if cached is not None and cached[0] is ov:
        return cached[1]
    generic = any(_has_param(p) for p in ov.params) or _has_param(ov.result)
    if len(_GENERIC) > 100_000:
        _GENERIC.clear()
    _GENERIC[id(ov)] = (ov, generic)
    return generic


def _has_param(t: Type) -> bool:
    stack = [t]
    while stack:
        x = stack.pop()
        if x.is_param:
            return True
        stack.extend(x.params)
    return False


# --------------------------------------------------------------------------------------
# Homogeneous aggregate literals (cel-go's ValidateHomogeneousAggregateLiterals, which
# Kubernetes enables at every version).

def _check_homogeneous(tree: ast.Node, types: Mapping[int, Type],
                       exempt_functions: frozenset[str]) -> None:
    """Reject a list literal whose elements, or a map literal whose keys or values, do not
    all have the same static type (``[1, 'a']``, ``[1, dyn(2)]``, ``[1, null]``), at the
    first element that differs from the first one (the value of an optional element
    ``?x`` counts). Types are the final ones: ``[[1], []]`` is ``list(list(int))``.
    Literals anywhere inside a call of ``exempt_functions`` are not checked."""
    mismatches: list[CelCompileError] = []

    def compare(first: Type | None, t: Type, at: ast.Node) -> Type:
        if first is not None and first != t:
            mismatches.append(_error(
                CompileErrorKind.TYPE,
                f"expected type '{format_type(first)}' but found '{format_type(t)}'", at))
        return t if first is None else first

    def element(node: ast.Node, optional: bool) -> Type:
        t = types.get(id(node), DYN)
        return t.params[0] if optional and t.name == "optional_type" and t.params else t

    stack: list[tuple[ast.Node, bool]] = [(tree, False)]
    while stack:
        node, exempt = stack.pop()
        if isinstance(node, ast.Call) and node.function in exempt_functions:
            exempt = True
        if isinstance(node, ast.CreateList) and not exempt:
            first: Type | None = None
            for i, e in enumerate(node.elements):
                t = element(e, i in node.optional_indices)
                if first is not None and first != t:
                    compare(first, t, e)
                    break
                first = t
        elif isinstance(node, ast.CreateMap) and not exempt:
            key: Type | None = None
            value: Type | None = None
            for entry in node.entries:
                key = compare(key, element(entry.key, False), entry.key)
                value = compare(value, element(entry.value, entry.optional), entry.value)
        stack.extend((child, exempt) for child in ast.children(node))
    if mismatches:
        raise min(mismatches, key=lambda e: e.offset)


# --------------------------------------------------------------------------------------
# Public API.


def check(tree: ast.Node, env: Environment) -> CheckResult:
    """Type-check ``tree``; raise ``CelCompileError`` (REFERENCE or TYPE) on the first
    problem, at the offending node's offset."""
    checker = _Checker(env)
    try:
        result = checker.run(tree)
        m = checker.m
        types = {k: _substitute(m, t, True) for k, t in checker.types.items()}
        result = _substitute(m, result, True)
        if env.version is not None:
            _check_homogeneous(tree, types, env.heterogeneous_literals_in)
    except RecursionError:  # a type nested beyond reason; the tree walk itself is iterative
        raise CelCompileError(CompileErrorKind.TYPE, "expression is nested too deeply",
                              tree.offset) from None
    return CheckResult(result, types, checker.references, checker.overloads)


def require_result(tree: ast.Node, result_type: Type, expected: Sequence[Type]) -> None:
    """Raise a TYPE error unless ``result_type`` fits one of ``expected`` (dyn fits all)."""
    if any(is_assignable(result_type, e) for e in expected):
        return
    want = " or ".join(format_type(e) for e in expected) or "nothing"
    raise CelCompileError(
        CompileErrorKind.TYPE,
        f"expression must evaluate to {want}, found {format_type(result_type)}",
        tree.offset,
    )
