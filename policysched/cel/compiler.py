"""Tier 1, scalar closures: the syntax tree → nested Python closures over plain values
(docs/architecture.md#tier-1-scalar-closures).

No expression text ever becomes Python source: every node turns into a closure built from
fixed Python code, with literals and names held as closure data. A compiled program is a
function ``evaluate(activation) -> value`` that raises ``CelError`` for CEL errors.

Bound variables of macros live in a fresh dict per comprehension evaluation that shadows the
activation. Comprehensions draw iterations from a runtime budget when the environment sets
``runtime_cost_limit``.
"""

from __future__ import annotations

import operator as pyoperator
from collections.abc import Callable, Mapping
from typing import Any

from . import ast, operators
from .environment import Environment
from .library import Function
from .library.collections import sort_by_keys
from .types import Type
from .values import (
    INT64_MAX,
    INT64_MIN,
    TYPE_IDENTIFIERS,
    CelError,
    CostLimitExceeded,
    OptionalValue,
    check_map_key,
    detached,
    map_lookup,
    no_such_key,
    no_such_overload,
)

Activation = Mapping[str, Any]
Evaluator = Callable[[Activation], Any]

BUDGET_KEY = "@budget"  # activation slot holding [remaining iterations]; not a CEL identifier


class _Scope:
    """Names bound by enclosing macros (they shadow declared variables)."""

    def __init__(self, names: frozenset[str] = frozenset()) -> None:
        self.names = names

    def bind(self, *names: str | None) -> _Scope:
        return _Scope(self.names | {n for n in names if n})


def compile_tree(tree: ast.Node, env: Environment, types: Mapping[int, Type],
                 bound: frozenset[str] = frozenset()) -> Evaluator:
    """Compile ``tree`` for ``env``; ``types`` (from the checker, possibly empty) lets the
    compiler pick specialised closures. ``bound`` names variables of enclosing macros
    (when ``tree`` is a part of a larger expression): they are read from the activation."""
    compiler = _Compiler(env, types)
    evaluate = compiler.compile(tree, _Scope(bound))
    if compiler.has_comprehension and env.runtime_cost_limit is not None:
        limit = env.runtime_cost_limit
        inner = evaluate

        def budgeted(act: Activation) -> Any:
            if isinstance(act, dict):  # our own activations: no copy, the entry is reset
                act[BUDGET_KEY] = [limit]
                return inner(act)
            scoped = dict(act)
            scoped[BUDGET_KEY] = [limit]
            return inner(scoped)

        return budgeted
    return evaluate


class _Compiler:
    def __init__(self, env: Environment, types: Mapping[int, Type]) -> None:
        self.env = env
        self.types = types
        self.functions: Mapping[str, Function] = env.functions
        self.has_comprehension = False

    # -- dispatch ---------------------------------------------------------------------

    def compile(self, node: ast.Node, scope: _Scope) -> Evaluator:
        if isinstance(node, ast.Literal):
            value = node.value
            return lambda act: value
        if isinstance(node, ast.Ident):
            return self.ident(node, scope)
        if isinstance(node, ast.Select):
            return self.select(node, scope)
        if isinstance(node, ast.Call):
            return self.call(node, scope)
        if isinstance(node, ast.CreateList):
            return self.create_list(node, scope)
        if isinstance(node, ast.CreateMap):
            return self.create_map(node, scope)
        if isinstance(node, ast.Macro):
            return self.macro(node, scope)
        if isinstance(node, ast.CreateStruct):
            message = f"unknown type: {node.type_name}"
            return _raiser(message)
        raise TypeError(f"unexpected node {type(node).__name__}")

    # -- identifiers and selection ----------------------------------------------------

    def ident(self, node: ast.Ident, scope: _Scope) -> Evaluator:
        name = node.name.lstrip(".") if node.name.startswith(".") else node.name
        if name in scope.names:
            return _variable(name)
        if name not in self.env.variables and name in TYPE_IDENTIFIERS:
            type_value = TYPE_IDENTIFIERS[name]
            return lambda act: type_value
        return _variable(name)

    def select(self, node: ast.Select, scope: _Scope) -> Evaluator:
        qualified = ast.qualified_name(node)
        if qualified is not None:
            head = qualified.split(".", 1)[0]
            if head not in scope.names and qualified in self.env.variables:
                return _variable(qualified)
            if head not in scope.names and qualified in TYPE_IDENTIFIERS:
                type_value = TYPE_IDENTIFIERS[qualified]
                return lambda act: type_value
        path = _field_path(node)
        if path is not None and (path[0] in scope.names or not any(
                v.startswith(path[0] + ".") for v in self.env.variables)):
            return _select_path(*path)
        operand = self.compile(node.operand, scope)
        field = node.field
        if node.test_only:
            return _has_field(operand, field)
        if node.optional:
            return lambda act: operators.optional_index(operand(act), field)

        def select(act: Activation) -> Any:
            obj = operand(act)
            if type(obj) is dict:
                try:
                    return obj[field]
                except KeyError:
                    raise no_such_key(field) from None
            return _select_slow(obj, field)

        return select

    # -- calls --------------------------------------------------------------------------

    def call(self, node: ast.Call, scope: _Scope) -> Evaluator:
        fn = node.function
        if node.target is None:
            if fn == ast.AND:
                return _logical(self.compile(node.args[0], scope),
                                self.compile(node.args[1], scope), False, ast.AND)
            if fn == ast.OR:
                return _logical(self.compile(node.args[0], scope),
                                self.compile(node.args[1], scope), True, ast.OR)
            if fn == ast.COND:
                cond, then, other = (self.compile(a, scope) for a in node.args)
                return _conditional(cond, then, other)
            if fn in operators.BINARY and len(node.args) == 2:
                op = operators.BINARY[fn]
                left, right = node.args
                typed = self.typed_binary(fn, left, right, scope)
                if typed is not None:
                    return typed
                if isinstance(right, ast.Literal):
                    return _binary_constant(op, self.compile(left, scope), right.value)
                return _binary(op, self.compile(left, scope), self.compile(right, scope))
            if fn == ast.IN:
                item, container = (self.compile(a, scope) for a in node.args)
                return lambda act: operators.contains(container(act), item(act))
            if fn in operators.UNARY and len(node.args) == 1:
                return _unary(operators.UNARY[fn], self.compile(node.args[0], scope))
            return self.function_call(fn, node.args, scope, result=self.types.get(id(node)))
        qualified = ast.qualified_name(node.target)
        if qualified is not None:
            head = qualified.split(".", 1)[0]
            full = f"{qualified}.{fn}"
            if (head not in scope.names and head not in self.env.variables
                    and full in self.functions):
                return self.function_call(full, node.args, scope,
                                          result=self.types.get(id(node)))
        return self.function_call(fn, (node.target, *node.args), scope, member=True,
                                  result=self.types.get(id(node)))

    def typed_binary(self, fn: str, left: ast.Node, right: ast.Node,
                     scope: _Scope) -> Evaluator | None:
        """Arithmetic and comparisons whose operand types the checker proved to be the
        same primitive: plain Python operators, with CEL's int64 overflow check kept."""
        lt, rt = self.types.get(id(left)), self.types.get(id(right))
        if lt is None or lt != rt or lt.name not in _PLAIN_TYPES:
            return None
        if fn in _INT_ARITHMETIC and lt.name == "int":
            return _int_arithmetic(fn, self.compile(left, scope), self.compile(right, scope))
        compare = _PLAIN_COMPARISONS.get(fn)
        if compare is None:
            return None
        if lt.name == "double":
            compare = _DOUBLE_COMPARISONS.get(fn, compare)
        l_fn = self.compile(left, scope)
        if isinstance(right, ast.Literal):
            constant = right.value
            return lambda act: compare(l_fn(act), constant)
        r_fn = self.compile(right, scope)
        return lambda act: compare(l_fn(act), r_fn(act))

    def function_call(self, name: str, args: tuple[ast.Node, ...], scope: _Scope,
                      member: bool = False, result: Type | None = None) -> Evaluator:
        """A call; ``result`` is the type the checker gave it (None when unchecked)."""
        function = self.functions.get(name)
        compiled = [self.compile(a, scope) for a in args]
        if function is None:
            return _raiser(f"unbound function: {name}", compiled)
        if not _arity_matches(function, len(args), member):
            return _raiser(f"no such overload: {name} with {len(args)} argument(s)", compiled)
        if member and name in _LAZY_OPTIONAL_FALLBACKS and len(compiled) == 2:
            return _optional_fallback(compiled[0], compiled[1], or_value=name == "orValue")
        impl = function.impl
        if function.for_result is not None and result is not None:
            impl = function.for_result(result) or impl
        if len(args) == 2 and isinstance(args[1], ast.Literal):
            a0, c1 = compiled[0], args[1].value
            return lambda act: impl(a0(act), c1)
        if len(compiled) == 0:
            return lambda act: impl()
        if len(compiled) == 1:
            (a0,) = compiled
            return lambda act: impl(a0(act))
        if len(compiled) == 2:
            a0, a1 = compiled
            return lambda act: impl(a0(act), a1(act))
        if len(compiled) == 3:
            a0, a1, a2 = compiled
            return lambda act: impl(a0(act), a1(act), a2(act))
        return lambda act: impl(*[a(act) for a in compiled])

    # -- construction -----------------------------------------------------------------

    def create_list(self, node: ast.CreateList, scope: _Scope) -> Evaluator:
        elements = [self.compile(e, scope) for e in node.elements]
        if not node.optional_indices:
            if all(isinstance(e, ast.Literal) for e in node.elements):
                constant = [e.value for e in node.elements]  # type: ignore[attr-defined]
                return lambda act: list(constant)
            return lambda act: [e(act) for e in elements]
        optional = [i in node.optional_indices for i in range(len(elements))]

        def create(act: Activation) -> list[Any]:
            out = []
            for is_optional, element in zip(optional, elements, strict=True):
                value = element(act)
                if is_optional:
                    if type(value) is not OptionalValue:
                        raise CelError(f"optional element expected, found {value!r}")
                    if value.has:
                        out.append(value.value)
                else:
                    out.append(value)
            return out

        return create

    def create_map(self, node: ast.CreateMap, scope: _Scope) -> Evaluator:
        entries = [
            (self.compile(e.key, scope), self.compile(e.value, scope), e.optional)
            for e in node.entries
        ]
        reject_repeats = self.env.version is None  # the CEL specification's rule

        def create(act: Activation) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for key_fn, value_fn, is_optional in entries:
                key = check_map_key(key_fn(act))
                value = value_fn(act)
                if is_optional:
                    if type(value) is not OptionalValue:
                        raise CelError(f"optional entry expected, found {value!r}")
                    if not value.has:
                        if key in out and _held_key(out, key) is key:
                            del out[key]  # cel-go: an absent entry removes an earlier one
                        continue
                    value = value.value
                if reject_repeats and map_lookup(out, key)[0]:
                    raise CelError(f"Failed with repeated key: {_cel_key(key)}")
                if key in out and _held_key(out, key) is not key:
                    raise CelError(f"map keys {_cel_key(_held_key(out, key))} and "
                                   f"{_cel_key(key)} cannot be in one map here (Python "
                                   "compares them equal)")
                out[key] = value  # a repeated key: the last value wins, as in cel-go
            return out

        return create

    # -- macros -------------------------------------------------------------------------

    def macro(self, node: ast.Macro, scope: _Scope) -> Evaluator:
        kind = node.kind
        if kind == ast.BIND:
            init = self.compile(node.args[0], scope)
            body = self.compile(node.args[1], scope.bind(node.var))
            var = node.var

            def bind(act: Activation) -> Any:
                value = init(act)
                inner, saved = _frame(act, var)
                inner[var] = value
                try:
                    return body(inner)
                finally:
                    _restore(inner, saved)

            return bind
        if kind == "cel.block":
            return self.block(node, scope)
        assert node.target is not None
        target = self.compile(node.target, scope)
        inner_scope = scope.bind(node.var, node.var2)
        args = [self.compile(a, inner_scope) for a in node.args]
        if kind in (ast.OPT_MAP, ast.OPT_FLAT_MAP):
            return _optional_map(target, node.var, args[0], flat=kind == ast.OPT_FLAT_MAP)
        self.has_comprehension = True
        builder = _COMPREHENSIONS.get(kind)
        if builder is None:
            return _raiser(f"unsupported macro: {kind}")
        return builder(target, node.var, node.var2, args)

    def block(self, node: ast.Macro, scope: _Scope) -> Evaluator:
        """``cel.block([e0, e1, ...], body)``: slots ``@indexN`` evaluated lazily, once."""
        *slot_nodes, body_node = node.args
        names = [f"@index{i}" for i in range(len(slot_nodes))]
        slot_scope = scope
        slots: list[Evaluator] = []
        for name, slot in zip(names, slot_nodes, strict=True):
            slots.append(self.compile(slot, slot_scope))
            slot_scope = slot_scope.bind(name)
        body = self.compile(body_node, slot_scope)

        def block(act: Activation) -> Any:
            inner = _LazySlots(act)
            for name, slot in zip(names, slots, strict=True):
                inner.define(name, slot)
            return body(inner)

        return block


class _LazySlots(dict[str, Any]):
    """An activation whose ``cel.block`` slots are computed on first use."""

    def __init__(self, act: Activation) -> None:
        super().__init__(act)
        self._pending: dict[str, Evaluator] = {}

    def define(self, name: str, slot: Evaluator) -> None:
        self._pending[name] = slot

    def __missing__(self, key: str) -> Any:
        slot = self._pending.pop(key, None)
        if slot is None:
            raise KeyError(key)
        value = slot(self)
        self[key] = value
        return value


# -- closure builders (module level so closures capture only what they need) -------------


def _held_key(m: dict[Any, Any], key: Any) -> Any:
    """The key of ``m`` equal to ``key``, or ``key`` itself when that one has the same CEL
    type: ``1``, ``1u`` and ``true`` are distinct CEL map keys but one Python dict key."""
    held = next(k for k in m if k == key)
    return key if type(held) is type(key) else held


def _cel_key(key: Any) -> str:
    return ("true" if key else "false") if type(key) is bool else repr(key)


def _raiser(message: str, evaluate_first: list[Evaluator] | None = None) -> Evaluator:
    def fail(act: Activation) -> Any:
        for arg in evaluate_first or ():
            arg(act)  # argument errors take precedence, as in cel-go
        raise CelError(message)

    return fail


def _arity_matches(function: Function, count: int, member: bool) -> bool:
    """Whether some overload takes ``count`` arguments (receiver included) in this style.

    Unchecked programs reach here with any argument count; calling the implementation with
    the wrong count must be a CEL error, not a Python one.
    """
    for overload in function.overloads:
        if overload.member != member:
            continue
        n = len(overload.params)
        if count == n or (overload.varargs and count >= n - 1):
            return True
    return False


_LAZY_OPTIONAL_FALLBACKS = frozenset({"or", "orValue"})


def _optional_fallback(target: Evaluator, fallback: Evaluator, or_value: bool) -> Evaluator:
    """``opt.or(other)`` / ``opt.orValue(v)``: the fallback is evaluated only when needed."""

    def optional_or(act: Activation) -> Any:
        opt = target(act)
        if type(opt) is not OptionalValue:
            raise no_such_overload("orValue" if or_value else "or", opt)
        if opt.has:
            return opt.value if or_value else opt
        value = fallback(act)
        if not or_value and type(value) is not OptionalValue:
            raise no_such_overload("or", opt, value)
        return value

    return optional_or


def _variable(name: str) -> Evaluator:
    def lookup(act: Activation) -> Any:
        try:
            return act[name]
        except KeyError:
            raise CelError(f"undeclared reference to '{name}'") from None

    return lookup


def _select_slow(obj: Any, field: str) -> Any:
    if type(obj) is OptionalValue:
        return operators.optional_index(obj, field)
    raise no_such_overload(f".{field}", obj)


def _field_path(node: ast.Select) -> tuple[str, tuple[str, ...]] | None:
    """``var.f1.f2...`` made only of plain selects on an identifier → (var, fields)."""
    fields: list[str] = []
    current: ast.Node = node
    while isinstance(current, ast.Select):
        if current.test_only or current.optional:
            return None
        fields.append(current.field)
        current = current.operand
    if not isinstance(current, ast.Ident) or current.name.startswith(".") \
            or current.name in TYPE_IDENTIFIERS:
        return None
    return current.name, tuple(reversed(fields))


def _select_path(name: str, fields: tuple[str, ...]) -> Evaluator:
    """A select chain on a variable in one closure: the common case (maps all the way
    down) is plain indexing; anything else takes the step-by-step path with CEL's errors."""

    def slow(act: Activation) -> Any:
        obj = _variable(name)(act)
        for field in fields:
            if type(obj) is dict:
                if field not in obj:
                    raise no_such_key(field)
                obj = obj[field]
            else:
                obj = _select_slow(obj, field)
        return obj

    if len(fields) == 1:
        (f0,) = fields

        def select1(act: Activation) -> Any:
            try:
                return act[name][f0]
            except (KeyError, TypeError):
                return slow(act)

        return select1
    if len(fields) == 2:
        f0, f1 = fields

        def select2(act: Activation) -> Any:
            try:
                return act[name][f0][f1]
            except (KeyError, TypeError):
                return slow(act)

        return select2

    def select_n(act: Activation) -> Any:
        try:
            obj = act[name]
            for field in fields:
                obj = obj[field]
            return obj
        except (KeyError, TypeError):
            return slow(act)

    return select_n


def _has_field(operand: Evaluator, field: str) -> Evaluator:
    def has(act: Activation) -> bool:
        obj = operand(act)
        if type(obj) is OptionalValue:
            if not obj.has:
                return False
            obj = obj.value
        if type(obj) is dict:
            return field in obj
        raise no_such_overload(f"has(.{field})", obj)

    return has


def _binary(op: Callable[[Any, Any], Any], left: Evaluator, right: Evaluator) -> Evaluator:
    return lambda act: op(left(act), right(act))


_PLAIN_TYPES = frozenset({"int", "string", "double", "bool"})
_PLAIN_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    ast.LT: pyoperator.lt, ast.LE: pyoperator.le, ast.GT: pyoperator.gt,
    ast.GE: pyoperator.ge, ast.EQ: pyoperator.eq, ast.NE: pyoperator.ne,
}
_INT_ARITHMETIC = frozenset({ast.ADD, ast.SUB, ast.MUL})


def _nan_checked(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """``compare`` on doubles, where ordering a NaN is an error (cel-go) and not false."""

    def ordered(a: Any, b: Any) -> bool:
        if compare(a, b):
            return True
        if a != a or b != b:
            raise CelError(operators.NAN_ORDER)
        return False

    return ordered


_DOUBLE_COMPARISONS = {fn: _nan_checked(_PLAIN_COMPARISONS[fn])
                       for fn in (ast.LT, ast.LE, ast.GT, ast.GE)}


def _int_arithmetic(fn: str, left: Evaluator, right: Evaluator) -> Evaluator:
    """``+``, ``-``, ``*`` on values the checker typed int; only the range is checked."""
    op = {ast.ADD: pyoperator.add, ast.SUB: pyoperator.sub, ast.MUL: pyoperator.mul}[fn]

    def int_op(act: Activation) -> Any:
        a, b = left(act), right(act)
        if type(a) is int and type(b) is int:
            r = op(a, b)
            if INT64_MIN <= r <= INT64_MAX:
                return r
            raise CelError(operators.OVERFLOW)
        return operators.BINARY[fn](a, b)  # not ints after all (dyn data): the generic path

    return int_op


def _binary_constant(op: Callable[[Any, Any], Any], left: Evaluator, right: Any) -> Evaluator:
    return lambda act: op(left(act), right)


def _unary(op: Callable[[Any], Any], operand: Evaluator) -> Evaluator:
    return lambda act: op(operand(act))


def _logical(left: Evaluator, right: Evaluator, decisive: bool, name: str) -> Evaluator:
    """``&&`` (``decisive`` False) and ``||`` (``decisive`` True) with CEL's commutative
    error absorption: the decisive value on either side wins over an error on the other."""
    other = not decisive

    def logical(act: Activation) -> Any:
        try:
            lv = left(act)
        except CelError as e:
            error: CelError = detached(e)  # kept, then raised as a copy: see detached
        else:
            if lv is decisive:
                return decisive
            if lv is other:
                rv = right(act)
                if rv is True or rv is False:
                    return rv
                raise no_such_overload(name, lv, rv)
            error = no_such_overload(name, lv)
        try:
            rv = right(act)
        except CelError:
            raise detached(error) from None
        if rv is decisive:
            return decisive
        raise detached(error)

    return logical


def _conditional(cond: Evaluator, then: Evaluator, other: Evaluator) -> Evaluator:
    def conditional(act: Activation) -> Any:
        c = cond(act)
        if c is True:
            return then(act)
        if c is False:
            return other(act)
        raise no_such_overload(ast.COND, c)

    return conditional


def _optional_map(target: Evaluator, var: str, body: Evaluator, flat: bool) -> Evaluator:
    def optional_map(act: Activation) -> Any:
        opt = target(act)
        if type(opt) is not OptionalValue:
            raise no_such_overload("optMap", opt)
        if not opt.has:
            return opt
        inner, saved = _frame(act, var)
        inner[var] = opt.value
        try:
            result = body(inner)
        finally:
            _restore(inner, saved)
        if flat:
            if type(result) is not OptionalValue:
                raise no_such_overload("optFlatMap", result)
            return result
        return OptionalValue(result)

    return optional_map


# -- comprehensions ----------------------------------------------------------------------


_MISSING = object()


def _frame(act: Activation, *names: str | None) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """The dict in which to bind ``names``: the activation itself when it is a dict (the
    previous values are saved for ``_restore``: no copy per evaluation), else a copy."""
    if isinstance(act, dict):
        return act, [(n, act.get(n, _MISSING)) for n in names if n]
    return dict(act), []


def _restore(inner: dict[str, Any], saved: list[tuple[str, Any]]) -> None:
    for name, value in saved:
        if value is _MISSING:
            inner.pop(name, None)
        else:
            inner[name] = value


def _scoped(loop: Callable[[Activation, dict[str, Any]], Any], var: str,
            var2: str | None) -> Evaluator:
    """A comprehension whose variables are bound in the activation for its duration."""

    def scoped(act: Activation) -> Any:
        inner, saved = _frame(act, var, var2)
        try:
            return loop(act, inner)
        finally:
            _restore(inner, saved)

    if var2:
        return scoped

    def scoped_one(act: Activation) -> Any:  # the common case, without the generic frame
        if type(act) is not dict:
            return scoped(act)
        previous = act.get(var, _MISSING)
        try:
            return loop(act, act)
        finally:
            if previous is _MISSING:
                act.pop(var, None)
            else:
                act[var] = previous

    return scoped_one


def _spend(act: Activation, n: int) -> None:
    budget = act.get(BUDGET_KEY)
    if budget is not None:
        budget[0] -= n
        if budget[0] < 0:
            raise CostLimitExceeded("runtime cost budget exceeded")


def _items(value: Any, var2: str | None) -> Any:
    """The iteration range (a sized iterable): list elements / map keys; (index, elem) /
    (key, value) pairs for two-variable comprehensions. CEL values are immutable, so the
    range is the value itself, not a copy."""
    t = type(value)
    if t is list or t is tuple or t is dict:
        if var2:
            return list(enumerate(value)) if t is not dict else list(value.items())
        return value
    raise no_such_overload("comprehension range", value)


def _bind_item(inner: dict[str, Any], var: str, var2: str | None, item: Any) -> None:
    if var2:
        inner[var], inner[var2] = item
    else:
        inner[var] = item


Builder = Callable[[Evaluator, str, "str | None", list[Evaluator]], Evaluator]


def _quantifier(want: bool) -> Builder:
    """``all`` (want False: stop at the first false) and ``exists`` (stop at the first true);
    errors are absorbed when a decisive element exists."""

    def build(target: Evaluator, var: str, var2: str | None, args: list[Evaluator]) -> Evaluator:
        (predicate,) = args

        def quantifier(act: Activation, inner: dict[str, Any]) -> bool:
            items = _items(target(act), var2)
            _spend(act, len(items))
            error: CelError | None = None
            for item in items:
                if var2:
                    inner[var], inner[var2] = item
                else:
                    inner[var] = item
                try:
                    result = predicate(inner)
                except CelError as e:
                    if isinstance(e, CostLimitExceeded):
                        raise
                    error = error or detached(e)  # kept, then raised as a copy
                    continue
                if result is want:
                    return want
                if result is not (not want):
                    error = error or no_such_overload("predicate", result)
            if error is not None:
                raise detached(error)
            return not want

        return _scoped(quantifier, var, var2)

    return build


def _exists_one(target: Evaluator, var: str, var2: str | None,
                args: list[Evaluator]) -> Evaluator:
    (predicate,) = args

    def exists_one(act: Activation, inner: dict[str, Any]) -> bool:
        items = _items(target(act), var2)
        _spend(act, len(items))
        count = 0
        for item in items:
            _bind_item(inner, var, var2, item)
            result = predicate(inner)
            if result is True:
                count += 1
            elif result is not False:
                raise no_such_overload("exists_one", result)
        return count == 1

    return _scoped(exists_one, var, var2)


def _map(target: Evaluator, var: str, var2: str | None, args: list[Evaluator]) -> Evaluator:
    (transform,) = args

    def map_(act: Activation, inner: dict[str, Any]) -> list[Any]:
        items = _items(target(act), var2)
        _spend(act, len(items))
        out = []
        for item in items:
            _bind_item(inner, var, var2, item)
            out.append(transform(inner))
        return out

    return _scoped(map_, var, var2)


def _filter_then(keep_item: bool) -> Builder:
    """``filter`` (keeps the element itself) and ``map(x, p, t)`` (keeps ``t``)."""

    def build(target: Evaluator, var: str, var2: str | None, args: list[Evaluator]) -> Evaluator:
        predicate = args[0]
        transform = None if keep_item else args[1]

        def filter_(act: Activation, inner: dict[str, Any]) -> list[Any]:
            items = _items(target(act), var2)
            _spend(act, len(items))
            out = []
            for item in items:
                _bind_item(inner, var, var2, item)
                keep = predicate(inner)
                if keep is True:
                    out.append(item if transform is None else transform(inner))
                elif keep is not False:
                    raise no_such_overload("filter", keep)
            return out

        return _scoped(filter_, var, var2)

    return build


def _transform(kind: str) -> Builder:
    """Two-variable ``transformList`` / ``transformMap`` / ``transformMapEntry``, with an
    optional filter as the first of two arguments."""

    def build(target: Evaluator, var: str, var2: str | None, args: list[Evaluator]) -> Evaluator:
        predicate = args[0] if len(args) == 2 else None
        transform = args[-1]

        def transform_(act: Activation, inner: dict[str, Any]) -> Any:
            source = target(act)
            items = _items(source, var2 or "_")
            _spend(act, len(items))
            out_list: list[Any] = []
            out_map: dict[Any, Any] = {}
            for item in items:
                _bind_item(inner, var, var2 or "_", item)
                if predicate is not None:
                    keep = predicate(inner)
                    if keep is False:
                        continue
                    if keep is not True:
                        raise no_such_overload(kind, keep)
                value = transform(inner)
                if kind == ast.TRANSFORM_LIST:
                    out_list.append(value)
                elif kind == ast.TRANSFORM_MAP:
                    out_map[item[0]] = value
                else:
                    if type(value) is not dict:
                        raise no_such_overload(kind, value)
                    for k, v in value.items():
                        if map_lookup(out_map, k)[0]:
                            raise CelError(f"insert failed: key {k} already exists")
                        out_map[k] = v
            return out_list if kind == ast.TRANSFORM_LIST else out_map

        return _scoped(transform_, var, var2)

    return build


def _sort_by(target: Evaluator, var: str, var2: str | None, args: list[Evaluator]) -> Evaluator:
    """``list.sortBy(x, key)``: cel-go maps the list to its keys, then sorts by them."""
    (key,) = args

    def sort_by(act: Activation, inner: dict[str, Any]) -> list[Any]:
        source = target(act)
        items = _items(source, None)
        _spend(act, len(items))
        keys = []
        for item in items:
            inner[var] = item
            keys.append(key(inner))
        return sort_by_keys(source, keys)

    return _scoped(sort_by, var, var2)


_COMPREHENSIONS: dict[str, Builder] = {
    ast.ALL: _quantifier(False),
    ast.EXISTS: _quantifier(True),
    ast.EXISTS_ONE: _exists_one,
    ast.MAP: _map,
    ast.MAP_FILTER: _filter_then(keep_item=False),
    ast.FILTER: _filter_then(keep_item=True),
    ast.TRANSFORM_LIST: _transform(ast.TRANSFORM_LIST),
    ast.TRANSFORM_MAP: _transform(ast.TRANSFORM_MAP),
    ast.TRANSFORM_MAP_ENTRY: _transform(ast.TRANSFORM_MAP_ENTRY),
    ast.SORT_BY: _sort_by,
}
