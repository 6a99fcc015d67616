"""Tier 3, vectorised evaluation: evaluate a split expression's remainder over all nodes at
once (docs/architecture.md#tier-3-vectorised-evaluation).

Values are a ``Scalar`` (one CEL value or error, the same on every node) or a column over
the nodes: a ``NumericColumn`` (a NumPy int64 / float64 / bool array) or a
``FactorisedColumn`` (a code per node into a list of distinct CEL values). Logical
operators, conditionals, comparisons and int/double arithmetic run as array operations;
``all``/``exists``, ``filter`` and ``map`` with a predicate over a pod-side list are
unrolled, and ``m[?k].orValue(d)`` is looked up per distinct map; anything else runs the
scalar compiler's closure once per *distinct* combination of its inputs (three zones →
three calls), so every library function keeps its exact semantics.

A node where a column operation could not decide (a CEL error on that node, an int64
overflow, a value of an unexpected type) is flagged in ``err``; the caller evaluates the
whole rule on those nodes with the scalar closure. The vectorised result is therefore
exactly the scalar one, node by node.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import ast
from .compiler import compile_tree
from .environment import Environment
from .operators import BINARY
from .partial import NODE_PART, POD_PART
from .types import Type
from .values import (
    IDENTITIES,
    INT64_MAX,
    INT64_MIN,
    CelError,
    detached,
    json_text,
    no_such_key,
)

Bools = np.ndarray


@dataclass(frozen=True)
class Scalar:
    """The same value (or ``error``) on every node."""

    value: Any = None
    error: CelError | None = None


@dataclass
class NumericColumn:
    """A column of ints, doubles or bools (``data.dtype`` int64 / float64 / bool)."""

    data: np.ndarray
    err: Bools | None = None


@dataclass
class FactorisedColumn:
    """A column of any CEL values: ``uniques[codes[i]]`` on node ``i`` (a ``CelError`` in
    ``uniques`` is an error on its nodes)."""

    codes: np.ndarray
    uniques: list[Any]
    err: Bools | None = None
    # ``per_unique``'s arrays, by key
    projections: dict[Hashable, np.ndarray] = field(default_factory=dict, compare=False,
                                                    repr=False)


Value = Scalar | NumericColumn | FactorisedColumn
Column = NumericColumn | FactorisedColumn


def freeze(value: Any) -> Any:
    """A hashable key, equal only for equal CEL values of the same type (``1``, ``1.0``
    and ``true`` differ). A list or map of plain JSON values is keyed by its JSON text
    (which tells those apart), unless it holds ``null``, which orjson also writes for NaN
    and infinities."""
    kind = type(value)
    if kind is dict or kind is list:
        text = json_text(value)
        if text is not None and b"null" not in text:
            return ("json", text)
    if kind is dict:
        return ("map", tuple((freeze(k), freeze(v)) for k, v in value.items()))
    if kind is list:
        return ("list", tuple(freeze(v) for v in value))
    if kind is CelError:
        return ("error", str(value))
    identity = IDENTITIES.get(kind)
    if identity is not None:
        return (kind.__name__, identity(value))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return (kind.__name__, value)


def column_of(values: list[Any]) -> Column:
    """The column holding ``values`` (CelError entries are errors)."""
    errors = _errors(values)
    err = errors if errors.any() else None
    array = _array(values)
    if array is not None:
        return NumericColumn(array, err)
    codes, uniques = factorise(values)
    return FactorisedColumn(codes, uniques, err)


def per_unique(column: FactorisedColumn, key: Hashable, project: Callable[[Any], Any],
               dtype: type) -> np.ndarray:
    """``project(u)`` of every distinct value of ``column``, as an array (index it with
    the codes), kept on the column under ``key``: a column patched in place only appends
    distinct values (``NodeTable``), so only those are projected on the next call."""
    found = column.projections.get(key)
    done = 0 if found is None else len(found)
    if found is None or done < len(column.uniques):
        more: np.ndarray = np.array([project(u) for u in column.uniques[done:]], dtype)
        found = column.projections[key] = more if found is None \
            else np.concatenate((found, more))
    return found


def _errors(values: list[Any]) -> Bools:
    return np.fromiter((type(v) is CelError for v in values), bool, len(values))


def _array(values: list[Any]) -> np.ndarray | None:
    """``values`` as an int64 / float64 / bool array when they (errors aside) are all of
    that one type; errors become 0 / false there."""
    kinds = {type(v) for v in values}
    kinds.discard(CelError)
    if len(kinds) != 1:
        return None
    (kind,) = kinds
    dtype = _DTYPES.get(kind)
    if dtype is None:
        return None
    filler = kind()
    try:
        return np.array([filler if type(v) is CelError else v for v in values], dtype=dtype)
    except OverflowError:  # an int beyond int64 (CEL has none, a raw view may): factorised
        return None


_DTYPES: dict[type, Any] = {int: np.int64, float: np.float64, bool: np.bool_}


def factorise(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    index: dict[Any, int] = {}
    uniques: list[Any] = []
    codes = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        key = freeze(v)
        code = index.get(key)
        if code is None:
            code = index[key] = len(uniques)
            uniques.append(v)
        codes[i] = code
    return codes, uniques


def _as_factorised(column: Column) -> FactorisedColumn:
    if isinstance(column, FactorisedColumn):
        return column
    uniques, codes = np.unique(column.data, return_inverse=True)
    return FactorisedColumn(codes.astype(np.int64), [v.item() for v in uniques], column.err)


def _err_or(*masks: Bools | None) -> Bools | None:
    out: Bools | None = None
    for m in masks:
        if m is not None:
            out = m if out is None else (out | m)
    return out


def _normalise(column: FactorisedColumn) -> Column:
    """``column`` as a NumericColumn when its distinct values are all plain ints, doubles
    or bools."""
    errors = _errors(column.uniques)
    err = _err_or(column.err, errors[column.codes]) if errors.any() else column.err
    table = _array(column.uniques)
    if table is not None:
        return NumericColumn(table[column.codes], err)
    return FactorisedColumn(column.codes, column.uniques, err)


@dataclass
class Remainder:
    """A split expression's remainder, ready to evaluate for many pods: the closures of
    its sub-expressions are compiled on first use and kept."""

    tree: ast.Node
    env: Environment
    types: Mapping[int, Type]
    _closures: dict[int, Callable[[Mapping[str, Any]], Any]] = field(default_factory=dict)
    _idents: dict[int, list[str]] = field(default_factory=dict)

    def idents(self, node: ast.Node) -> list[str]:
        """The identifiers ``node`` reads, sorted."""
        found = self._idents.get(id(node))
        if found is None:
            found = self._idents[id(node)] = sorted(_idents(node))
        return found

    def closure(self, node: ast.Node, bound: frozenset[str]) -> Callable[[Any], Any]:
        fn = self._closures.get(id(node))
        if fn is None:
            fn = self._closures[id(node)] = compile_tree(node, self.env, self.types, bound)
        return fn


class Evaluation:
    """One evaluation of a remainder over ``size`` nodes. ``pod_part(k)`` gives the value
    of ``@pK`` (raises CelError), ``node_part(k)`` the column ``@nK``."""

    def __init__(self, remainder: Remainder, size: int,
                 pod_part: Callable[[int], Any], node_part: Callable[[int], Column]) -> None:
        self.remainder = remainder
        self.size = size
        self._pod_part = pod_part
        self._node_part = node_part

    def run(self) -> Value:
        return self.eval(self.remainder.tree, {})

    # -- leaves -----------------------------------------------------------------------

    def ident(self, node: ast.Ident, local: Mapping[str, Value]) -> Value:
        name = node.name
        if name in local:
            return local[name]
        if name.startswith(POD_PART):
            try:
                return Scalar(self._pod_part(int(name[len(POD_PART):])))
            except CelError as e:
                return Scalar(error=detached(e))
        if name.startswith(NODE_PART):
            return self._node_part(int(name[len(NODE_PART):]))
        return self.generic(node, local)  # a type name used as a value

    # -- dispatch -----------------------------------------------------------------------

    def eval(self, node: ast.Node, local: Mapping[str, Value]) -> Value:
        if isinstance(node, ast.Literal):
            return Scalar(node.value)
        if isinstance(node, ast.Ident):
            return self.ident(node, local)
        if isinstance(node, ast.Call) and node.target is None:
            fn = node.function
            if fn in (ast.AND, ast.OR):
                return self.logical(node, local, fn == ast.OR)
            if fn == ast.NOT:
                return self.negate(self.eval(node.args[0], local), node, local)
            if fn == ast.COND:
                return self.conditional(node, local)
            if fn in _COMPARE or fn in _ARITHMETIC:
                left, right = (self.eval(a, local) for a in node.args)
                if isinstance(left, Scalar) and isinstance(right, Scalar):
                    return self.generic(node, local)
                out = _numeric(fn, left, right)
                if out is not None:
                    return out
                return self.apply(BINARY[fn], left, right)
            if fn in (ast.INDEX, ast.IN) and len(node.args) == 2:
                left, right = (self.eval(a, local) for a in node.args)
                found = _lookup(fn, left, right)
                return found if found is not None else self.generic(node, local)
        if isinstance(node, ast.Call):
            called = self.columns(node, local)
            if called is None and node.function == "orValue":
                called = self.lookup_or(node, local)
            if called is not None:
                return called
        if isinstance(node, ast.Macro) and node.kind in _UNROLLED \
                and node.target is not None and node.var2 is None:
            target = self.eval(node.target, local)
            if isinstance(target, Scalar) and type(target.value) in (list, dict):
                if node.kind in (ast.ALL, ast.EXISTS):
                    return self.quantifier(node, target.value, local)
                selected = self.selection(node, target.value, local)
                if selected is not None:
                    return selected
        if isinstance(node, ast.Macro) and node.kind == ast.BIND:
            init = self.eval(node.args[0], local)
            return self.eval(node.args[1], {**local, node.var: init})
        return self.generic(node, local)

    def columns(self, node: ast.Call, local: Mapping[str, Value]) -> Value | None:
        """A call to a function with a ``columns`` implementation, when it takes these
        arguments (None: evaluate it some other way)."""
        function = self.remainder.env.functions.get(node.function)
        if function is None or function.columns is None:
            return None
        operands = ((node.target,) if node.target is not None else ()) + node.args
        values = [self.eval(a, local) for a in operands]
        if all(isinstance(v, Scalar) for v in values):
            return None
        if any(isinstance(v, Scalar) and v.error is not None for v in values):
            return None
        result: Value | None = function.columns(self.size, *values)
        return result

    # -- logic ----------------------------------------------------------------------------

    def logical(self, node: ast.Call, local: Mapping[str, Value], decisive: bool) -> Value:
        left = self.eval(node.args[0], local)
        if isinstance(left, Scalar) and left.error is None:
            if left.value is decisive:
                return Scalar(decisive)
            if left.value is (not decisive):
                right = self.eval(node.args[1], local)
                return right if _is_bool(right) else self.generic(node, local)
        right = self.eval(node.args[1], local)
        if isinstance(left, Scalar) and isinstance(right, Scalar):
            return self.generic(node, local)
        lv, le = _bools(left, self.size)
        rv, re = _bools(right, self.size)
        # per node: the decisive value on either side wins; else both must be known
        l_decides = ~le & (lv == decisive)
        r_decides = ~re & (rv == decisive)
        decided = l_decides | r_decides
        # undecided nodes without an error have the other value on both sides
        value = decided if decisive else ~decided
        err = ~decided & (le | re)
        return NumericColumn(value, err if err.any() else None)

    def negate(self, operand: Value, node: ast.Call, local: Mapping[str, Value]) -> Value:
        if isinstance(operand, NumericColumn) and operand.data.dtype == np.bool_:
            return NumericColumn(~operand.data, operand.err)
        return self.generic(node, local)

    def conditional(self, node: ast.Call, local: Mapping[str, Value]) -> Value:
        cond = self.eval(node.args[0], local)
        if isinstance(cond, Scalar) and cond.error is None and type(cond.value) is bool:
            return self.eval(node.args[1 if cond.value else 2], local)
        if isinstance(cond, Scalar):
            return self.generic(node, local)
        then, other = self.eval(node.args[1], local), self.eval(node.args[2], local)
        cv, ce = _bools(cond, self.size)
        a, b = _broadcast(then, self.size), _broadcast(other, self.size)
        if a is None or b is None:
            return self.generic(node, local)
        if isinstance(a, NumericColumn) and isinstance(b, NumericColumn) \
                and a.data.dtype == b.data.dtype:
            err = ce | (cv & _mask(a.err, self.size)) | (~cv & _mask(b.err, self.size))
            return NumericColumn(np.where(cv, a.data, b.data), err if err.any() else None)
        fa, fb = _as_factorised(a), _as_factorised(b)
        offset = len(fa.uniques)
        codes = np.where(cv, fa.codes, fb.codes + offset)
        err = ce | (cv & _mask(fa.err, self.size)) | (~cv & _mask(fb.err, self.size))
        uniques = fa.uniques + fb.uniques
        return _normalise(FactorisedColumn(codes, uniques, err if err.any() else None))

    def quantifier(self, node: ast.Macro, items: Any, local: Mapping[str, Value]) -> Value:
        """``all``/``exists`` over a pod-side list or map: one column per element, folded
        with CEL's rules (a decisive element wins over errors of others)."""
        decisive = node.kind == ast.EXISTS
        if not items:  # no element: every node gets the same answer
            return Scalar(not decisive)
        decided = np.zeros(self.size, bool)
        erred = np.zeros(self.size, bool)
        values = [self.eval(node.args[0], {**local, node.var: Scalar(item)})
                  for item in list(items)]
        if all(isinstance(v, Scalar) for v in values):
            return self.generic(node, local)
        for value in values:
            v, e = _bools(value, self.size)
            decided |= ~e & (v == decisive)
            erred |= e
            if decided.all():
                break
        err = ~decided & erred
        result = decided if decisive else ~decided
        return NumericColumn(result, err if err.any() else None)

    def selection(self, node: ast.Macro, items: Any, local: Mapping[str, Value]
                  ) -> Value | None:
        """``filter`` / ``map`` with a predicate over a pod-side list or map: one bool
        column per element, its transform (``map``) a pod-side value; the kept elements of
        each node as a factorised column of lists. None: evaluate it some other way (a
        transform that depends on the node, too many elements)."""
        items = list(items)
        if not items or len(items) > MAX_UNROLLED:
            return None
        keeps: list[Value] = []
        kept: list[Scalar] = []
        for item in items:
            scope = {**local, node.var: Scalar(item)}
            keeps.append(self.eval(node.args[0], scope))
            value = Scalar(item) if node.kind == ast.FILTER else self.eval(node.args[1], scope)
            if not isinstance(value, Scalar):
                return None
            kept.append(value)
        if all(isinstance(k, Scalar) for k in keeps):
            return None
        codes = np.zeros(self.size, np.int64)
        err = np.zeros(self.size, bool)
        for bit, (keep, value) in enumerate(zip(keeps, kept, strict=True)):
            truth, erred = _bools(keep, self.size)
            chosen = truth & ~erred
            codes |= chosen.astype(np.int64) << bit
            err |= erred  # a predicate's error is the comprehension's, on that node
            if value.error is not None:
                err |= chosen  # so is a kept element's transform error
        distinct, inverse = np.unique(codes, return_inverse=True)
        uniques = [[kept[bit].value for bit in range(len(items)) if code >> bit & 1]
                   for code in distinct.tolist()]
        return FactorisedColumn(inverse.astype(np.int64).reshape(-1), uniques,
                                err if err.any() else None)

    def lookup_or(self, node: ast.Call, local: Mapping[str, Value]) -> Value | None:
        """``m[?k].orValue(d)`` with ``m`` a column of maps and ``k``, ``d`` pod-side
        values: the value or ``d`` per distinct map (None: evaluate it some other way)."""
        index = node.target
        if not (isinstance(index, ast.Call) and index.function == ast.OPT_INDEX
                and index.target is None and len(index.args) == 2 and len(node.args) == 1):
            return None
        maps, key = (self.eval(a, local) for a in index.args)
        default = self.eval(node.args[0], local)
        if not (isinstance(maps, FactorisedColumn) and isinstance(key, Scalar)
                and key.error is None and type(key.value) is str
                and isinstance(default, Scalar) and default.error is None):
            return None
        if not all(type(u) is dict or type(u) is CelError for u in maps.uniques):
            return None
        values = [u.get(key.value, default.value) if type(u) is dict else u
                  for u in maps.uniques]
        return _normalise(FactorisedColumn(maps.codes, values, maps.err))

    # -- anything else: once per distinct input -----------------------------------------------

    def apply(self, fn: Callable[..., Any], *operands: Value) -> Value:
        """``fn`` (an operator: every operand evaluated, an error in any is the result's) of
        the operands' values, once per distinct combination of them: list concatenation,
        string comparison... on columns the arrays do not handle."""
        for value in operands:
            if isinstance(value, Scalar) and value.error is not None:
                return Scalar(error=value.error)
        columns = [(i, _as_factorised(v)) for i, v in enumerate(operands)
                   if not isinstance(v, Scalar)]
        combined = columns[0][1].codes
        for _, column in columns[1:]:
            combined = combined * max(1, len(column.uniques)) + column.codes
        _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
        args = [v.value if isinstance(v, Scalar) else None for v in operands]
        results: list[Any] = []
        for row in first.tolist():
            for i, column in columns:
                args[i] = column.uniques[column.codes[row]]
            try:
                results.append(fn(*args))
            except CelError as e:
                results.append(detached(e))
        err = _err_or(*(c.err for _, c in columns))
        return _normalise(FactorisedColumn(inverse.astype(np.int64).reshape(-1), results, err))


    def generic(self, node: ast.Node, local: Mapping[str, Value]) -> Value:
        """``node``'s closure, run once per distinct combination of the columns it reads
        (pod-side parts and macro variables bound to one value are passed as they are)."""
        act = _PodParts(self._pod_part)  # pod-side parts are read when the closure does
        columns: list[tuple[str, Column]] = []
        for name in self.remainder.idents(node):
            if name in local:
                value = local[name]
            elif name.startswith(NODE_PART):
                value = self._node_part(int(name[len(NODE_PART):]))
            else:
                continue
            if isinstance(value, Scalar):
                if value.error is not None:
                    return _all_error(self.size)
                act[name] = value.value
            else:
                columns.append((name, value))
        bound = frozenset(n for n in local if not n.startswith("@"))
        fn = self.remainder.closure(node, bound)
        if not columns:
            try:
                return Scalar(fn(act))
            except CelError as e:
                return Scalar(error=detached(e))
        inputs = [(name, _as_factorised(c)) for name, c in columns]
        combined = inputs[0][1].codes
        for _, column in inputs[1:]:
            combined = combined * max(1, len(column.uniques)) + column.codes
        keys, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
        results: list[Any] = []
        for row in first:
            for name, column in inputs:
                act[name] = column.uniques[column.codes[row]]
            try:
                results.append(fn(act))
            except CelError as e:
                results.append(detached(e))
        err = _err_or(*(f.err for _, f in inputs))  # (a CelError value is flagged there)
        del keys
        return _normalise(FactorisedColumn(inverse.astype(np.int64).reshape(-1), results, err))


# -- helpers ------------------------------------------------------------------------------

class _PodParts(dict[str, Any]):
    """An activation in which ``@pK`` is computed on first read (errors raise there, so
    CEL's error absorption by ``&&``/``||`` applies as in the scalar closure)."""

    def __init__(self, pod_part: Callable[[int], Any]) -> None:
        super().__init__()
        self._pod_part = pod_part

    def __missing__(self, name: str) -> Any:
        if not name.startswith(POD_PART):
            raise KeyError(name)
        value = self[name] = self._pod_part(int(name[len(POD_PART):]))
        return value


_UNROLLED = frozenset({ast.ALL, ast.EXISTS, ast.FILTER, ast.MAP_FILTER})
MAX_UNROLLED = 62  # elements of a filter / map unrolled: one bit each in an int64 code
_COMPARE = {ast.EQ: np.equal, ast.NE: np.not_equal, ast.LT: np.less,
            ast.LE: np.less_equal, ast.GT: np.greater, ast.GE: np.greater_equal}
_ARITHMETIC = {ast.ADD, ast.SUB, ast.MUL, ast.DIV, ast.MOD}


def _idents(node: ast.Node) -> set[str]:
    if isinstance(node, ast.Ident):
        return {node.name}
    out: set[str] = set()
    for child in ast.children(node):
        out |= _idents(child)
    return out


def _all_error(size: int) -> NumericColumn:
    return NumericColumn(np.zeros(size, bool), np.ones(size, bool))


def _mask(err: Bools | None, size: int) -> Bools:
    return np.zeros(size, bool) if err is None else err


def _is_bool(value: Value) -> bool:
    if isinstance(value, Scalar):
        return value.error is None and type(value.value) is bool
    return isinstance(value, NumericColumn) and value.data.dtype == np.bool_


def _bools(value: Value, size: int) -> tuple[Bools, Bools]:
    """(values, error mask) of a bool-valued operand; anything not a bool is an error."""
    if isinstance(value, Scalar):
        ok = value.error is None and type(value.value) is bool
        return (np.full(size, bool(value.value) if ok else False),
                np.full(size, not ok))
    if isinstance(value, NumericColumn):
        if value.data.dtype == np.bool_:
            return value.data, _mask(value.err, size)
        return np.zeros(size, bool), np.ones(size, bool)
    flags = np.array([type(u) is bool for u in value.uniques], dtype=bool)
    truth = np.array([u is True for u in value.uniques], dtype=bool)
    return truth[value.codes], ~flags[value.codes] | _mask(value.err, size)


def _lookup(fn: str, left: Value, right: Value) -> Column | None:
    """``map[key]`` and ``key in container`` between string keys and maps or lists of one
    side and a pod-side value of the other, per distinct value (Python's ``in`` and ``[]``
    agree with CEL's there: a string equals nothing but the same string); None otherwise."""
    if fn == ast.INDEX and isinstance(left, FactorisedColumn) and isinstance(right, Scalar) \
            and right.error is None and type(right.value) is str:
        key = right.value
        if not all(type(u) is dict or type(u) is CelError for u in left.uniques):
            return None
        missing = no_such_key(key)
        values = [u.get(key, missing) if type(u) is dict else u for u in left.uniques]
        return _normalise(FactorisedColumn(left.codes, values, left.err))
    if fn != ast.IN:
        return None
    if isinstance(left, FactorisedColumn) and isinstance(right, Scalar) and right.error is None \
            and type(right.value) in (dict, list):
        container = right.value
        if not all(type(u) is str or type(u) is CelError for u in left.uniques):
            return None
        hits = [type(u) is str and u in container for u in left.uniques]
        return NumericColumn(np.array(hits, bool)[left.codes], left.err)
    if isinstance(left, Scalar) and left.error is None and type(left.value) is str \
            and isinstance(right, FactorisedColumn):
        key = left.value
        if not all(type(u) is dict or type(u) is CelError for u in right.uniques):
            return None
        hits = [type(u) is dict and key in u for u in right.uniques]
        return NumericColumn(np.array(hits, bool)[right.codes], right.err)
    return None


def _broadcast(value: Value, size: int) -> Column | None:
    if not isinstance(value, Scalar):
        return value
    if value.error is not None:
        return None
    if _fits(value.value):
        return NumericColumn(np.full(size, value.value, dtype=_DTYPES[type(value.value)]))
    return FactorisedColumn(np.zeros(size, np.int64), [value.value])


def _numeric_operand(value: Value) -> tuple[Any, Bools | None, str] | None:
    """(array or Python number, error mask, kind 'int' / 'double' / 'bool')."""
    if isinstance(value, Scalar):
        if value.error is None and _fits(value.value):
            return value.value, None, type(value.value).__name__
        return None
    if isinstance(value, NumericColumn):
        return value.data, value.err, {np.dtype(np.int64): "int",
                                       np.dtype(np.float64): "float",
                                       np.dtype(np.bool_): "bool"}[value.data.dtype]
    return None


def _fits(value: Any) -> bool:
    """Whether ``value`` is an int in int64 range, a double or a bool (a NumPy scalar)."""
    kind = type(value)
    return kind in _DTYPES and (kind is not int or INT64_MIN <= value <= INT64_MAX)


def _numeric(fn: str, left: Value, right: Value) -> NumericColumn | None:
    """Comparison or arithmetic of two same-typed numeric operands, or None."""
    a, b = _numeric_operand(left), _numeric_operand(right)
    if a is None or b is None or a[2] != b[2]:
        return None
    (x, xe, kind), (y, ye, _) = a, b
    err = _err_or(xe, ye)
    compare = _COMPARE.get(fn)
    if compare is not None:
        if kind == "bool" and fn not in (ast.EQ, ast.NE):
            return None
        out = np.asarray(compare(x, y))
        if kind == "float" and fn not in (ast.EQ, ast.NE):
            nan = np.broadcast_to(np.isnan(x) | np.isnan(y), out.shape)
            if nan.any():  # NaN is not ordered: the scalar evaluation raises the error
                err = _err_or(err, np.array(nan))
        return NumericColumn(out, err)
    if kind == "bool":
        return None
    with np.errstate(all="ignore"):
        if kind == "float":
            if fn == ast.MOD:
                return None
            out = {ast.ADD: np.add, ast.SUB: np.subtract, ast.MUL: np.multiply,
                   ast.DIV: np.divide}[fn](x, y)
            return NumericColumn(np.asarray(out, dtype=np.float64), err)
        return _int_arithmetic(fn, np.asarray(x, np.int64), np.asarray(y, np.int64), err)


def _int_arithmetic(fn: str, x: np.ndarray, y: np.ndarray, err: Bools | None) -> NumericColumn:
    """int64 arithmetic; overflow and division by zero are flagged as errors (the scalar
    evaluation of those nodes then raises CEL's error)."""
    if fn in (ast.ADD, ast.SUB):
        out = x + y if fn == ast.ADD else x - y
        signs = (x ^ out) & ((y if fn == ast.ADD else ~y) ^ out)
        bad = signs < 0
    elif fn == ast.MUL:
        out = x * y
        wide = x.astype(np.float64) * y.astype(np.float64)
        bad = (np.abs(wide) >= 2.0 ** 62) & ((x != 0) & (y != 0))
    else:
        zero = y == 0
        safe = np.where(zero, 1, y)
        bad = zero | (x == INT64_MIN) | (y == INT64_MIN)  # abs() overflows on INT64_MIN
        safe = np.where(bad, 1, safe)
        if fn == ast.DIV:
            q = np.abs(x) // np.abs(safe)
            out = np.where((x < 0) ^ (safe < 0), -q, q)
        else:
            out = np.fmod(x, safe)
    bad = np.broadcast_to(bad, np.broadcast(x, y).shape)
    if bad.any():
        err = _err_or(err, np.array(bad))
    return NumericColumn(np.asarray(out, dtype=np.int64), err)
