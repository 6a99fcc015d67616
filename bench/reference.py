"""The reference tier of the engine benchmark: the engine with its CEL evaluated by cel-python.

``ReferenceEvaluator(frameworks).install()`` swaps the ``Program`` of every ``CelExpression``
of the loaded policies (``match``, ``spec.variables``, every rule field) for one that
evaluates the expression with cel-python 0.5.0's ``CompiledRunner`` (as shipped: no extension
functions registered; the same set-up as ``tests/cel/test_differential.py`` and
``bench/cel_micro.py``). Only this engine's objects change; ``policysched/`` is untouched. Run
the engine with ``EngineSettings(evaluation="scalar")`` so that every evaluation goes through
those programs.

Per evaluation:

1. the ``variables.<name>`` the expression reads are computed first (each by its own swapped
   program, so a variable is itself evaluated by cel-python when it can be); cel-python's
   ``CompiledRunner`` is not re-entrant, so it never runs nested;
2. the activation values the expression reads (``pod``, ``node``, ``nodePods``, ``pods``,
   ``nodes``, ``params``, ``now``, the variables, …) are converted to celpy types — objects
   that never change (pod views, node labels, raw metadata, variables' values, …) once, by
   identity; node views and ``nodePods`` lists, which preemption's what-ifs change in place
   (``requested``, ``free``, ``usedPorts``, ``podCount``), again whenever those parts change;
3. cel-python evaluates it; our compiled closure evaluates it too, and the engine continues
   with **our** value, so that every tier takes the same scheduling path (a value on which
   cel-python disagrees is counted in ``mismatches``; an error in both is our error).

Expressions cel-python cannot parse or transpile (optional syntax ``.?``, quoted fields, the
``min`` method its transpiler takes for a macro), and expressions whose evaluation fails in
cel-python where ours succeeds (``cel.bind``, ``lists.range``, ``transformMapEntry``,
``distinct``, ``flatten``, ``sum``, ``sort``, … are unknown to it), fall back to our closure —
the latter after that first failure, for the rest of the run.

Timing: ``excluded_seconds`` accumulates what a cel-python engine would not spend — the
conversions in both directions, our closure when cel-python's result is used, the failed
cel-python attempt that marked an expression unsupported — and the benchmark subtracts it
from the wall time of each scheduling cycle. What remains is the engine's own work, the
cel-python evaluations, and our closures for the fallback evaluations: a lower bound of the
cost of the engine on cel-python, the lower the more evaluations fell back (``Coverage``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import celpy
from celpy import celtypes

from policysched.cel import CelError, Program
from policysched.cel import ast as cel_ast
from policysched.cel.values import UInt
from policysched.framework.runtime import Framework
from policysched.policy.model import CelExpression, Policy

# node view fields that NodeInfo.add_pod / remove_pod change in place
_MUTABLE_NODE_FIELDS = frozenset({"requested", "free", "usedPorts", "podCount"})
_ALL = "*"  # the expression reads `variables` other than as variables.<name>


class Unconvertible(Exception):
    """A value with no celpy counterpart (the expression falls back to our closure)."""


# ----------------------------------------------------------------- what an expression reads


def _walk_refs(node: cel_ast.Node, bound: frozenset[str], names: set[str],
               variables: set[str]) -> None:
    if isinstance(node, cel_ast.Ident):
        if node.name not in bound:
            names.add(node.name.split(".")[0])
            if node.name == "variables":
                variables.add(_ALL)
        return
    if isinstance(node, cel_ast.Select) and isinstance(node.operand, cel_ast.Ident) \
            and node.operand.name == "variables" and "variables" not in bound:
        names.add("variables")
        variables.add(node.field)
        return
    if isinstance(node, cel_ast.Call) and node.function == cel_ast.INDEX \
            and isinstance(node.args[0], cel_ast.Ident) and node.args[0].name == "variables" \
            and isinstance(node.args[1], cel_ast.Literal) and isinstance(node.args[1].value, str) \
            and "variables" not in bound:
        names.add("variables")
        variables.add(node.args[1].value)
        return
    if isinstance(node, cel_ast.Macro):
        inner = bound | {node.var} | ({node.var2} if node.var2 else set())
        if node.target is not None:
            _walk_refs(node.target, bound, names, variables)
        if node.kind == cel_ast.BIND:  # cel.bind(var, init, body): init sees the outer scope
            _walk_refs(node.args[0], bound, names, variables)
            for arg in node.args[1:]:
                _walk_refs(arg, inner, names, variables)
            return
        for arg in node.args:
            _walk_refs(arg, inner, names, variables)
        return
    for child in cel_ast.children(node):
        _walk_refs(child, bound, names, variables)


def references(tree: cel_ast.Node) -> tuple[frozenset[str], frozenset[str]]:
    """The free identifiers ``tree`` reads (activation names such as ``pod``, ``nodes``, and
    function namespaces such as ``math``, which no activation binds), and the ``variables``
    it reads (``"*"``: it reads ``variables`` as a whole)."""
    names: set[str] = set()
    variables: set[str] = set()
    _walk_refs(tree, frozenset(), names, variables)
    return frozenset(names), frozenset(variables)


def expressions_of(policy: Policy) -> list[CelExpression]:
    """Every CelExpression of a compiled policy (match, variables, rule fields)."""
    out: list[CelExpression] = []

    def walk(obj: Any) -> None:
        if isinstance(obj, CelExpression):
            out.append(obj)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                if f.name != "document":  # the raw YAML
                    walk(getattr(obj, f.name))
        elif isinstance(obj, Mapping):
            for value in obj.values():
                walk(value)
        elif isinstance(obj, list | tuple):
            for value in obj:
                walk(value)

    walk(policy)
    return out


# --------------------------------------------------------------------------- value conversion


def same_value(ours: Any, theirs: Any) -> bool:
    """CEL equality with types kept apart (bool is not int, int is not uint, 1 is not 1.0)."""
    if ours is theirs:
        return True
    if isinstance(ours, bool) or isinstance(theirs, bool):
        return type(ours) is type(theirs) and ours == theirs
    if isinstance(ours, float) or isinstance(theirs, float):
        if not (isinstance(ours, float) and isinstance(theirs, float)):
            return False
        return ours == theirs or (math.isnan(ours) and math.isnan(theirs))
    if isinstance(ours, int) or isinstance(theirs, int):
        return isinstance(ours, int) and isinstance(theirs, int) and \
            isinstance(ours, UInt) == isinstance(theirs, UInt) and ours == theirs
    if isinstance(ours, list | tuple) or isinstance(theirs, list | tuple):
        return isinstance(ours, list | tuple) and isinstance(theirs, list | tuple) and \
            len(ours) == len(theirs) and all(map(same_value, ours, theirs))
    if isinstance(ours, Mapping) or isinstance(theirs, Mapping):
        return isinstance(ours, Mapping) and isinstance(theirs, Mapping) and \
            ours.keys() == theirs.keys() and all(same_value(v, theirs[k]) for k, v in ours.items())
    try:
        return bool(ours == theirs)
    except Exception:
        return False


class Converter:
    """Python values ↔ celpy values.

    Containers are converted once per object, by identity (the object is kept alive so that
    its id is not reused), and a celpy container that came from a Python one converts back to
    that very object. Node views and ``nodePods`` lists, which preemption's what-ifs change in
    place, are memoised with a signature of their mutable parts.
    """

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, Any]] = {}  # id(python) -> (python, celpy)
        self._back: dict[int, tuple[Any, Any]] = {}  # id(celpy) -> (celpy, python)
        self._signed: dict[int, tuple[Any, Any, Any]] = {}  # id -> (python, signature, celpy)

    def clear(self) -> None:
        self._memo.clear()
        self._back.clear()
        self._signed.clear()

    def remember(self, obj: Any, cel: Any) -> None:
        """``cel`` is the celpy value of ``obj`` (a result cel-python computed)."""
        if isinstance(obj, dict | list) and isinstance(cel, dict | list):
            self._memo[id(obj)] = (obj, cel)
            self._back[id(cel)] = (cel, obj)

    def __call__(self, value: Any) -> Any:
        kind = type(value)
        if kind is dict or kind is list:
            hit = self._memo.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
            cel = self._container(value)
            self.remember(value, cel)
            return cel
        return self._scalar(value)

    def _container(self, value: Any) -> Any:
        if isinstance(value, dict):
            return celtypes.MapType({self(k): self(v) for k, v in value.items()})
        return celtypes.ListType([self(v) for v in value])

    def _signed_memo(self, value: Any, signature: Any, build: Callable[[], Any]) -> Any:
        hit = self._signed.get(id(value))
        if hit is not None and hit[0] is value and hit[1] == signature:
            return hit[2]
        cel = build()
        self._signed[id(value)] = (value, signature, cel)
        self._back[id(cel)] = (cel, value)
        return cel

    def node(self, view: dict[str, Any]) -> Any:
        """A node view (``requested``, ``free``, ``usedPorts``, ``podCount`` change in
        place)."""
        signature = (view["podCount"], tuple(view["requested"].items()),
                     tuple(view["free"].items()),
                     tuple(tuple(p.items()) for p in view["usedPorts"]))
        return self._signed_memo(view, signature, lambda: celtypes.MapType({
            celtypes.StringType(k): (self._container(v) if k in _MUTABLE_NODE_FIELDS
                                     and isinstance(v, dict | list) else self(v))
            for k, v in view.items()}))

    def pod_list(self, views: list[Any]) -> Any:
        """A ``nodePods`` list (changes in place)."""
        return self._signed_memo(views, tuple(map(id, views)), lambda: self._container(views))

    def back(self, value: Any) -> Any:
        """cel-python's result types → ours (as tests/cel/test_differential.py converts)."""
        if isinstance(value, dict | list):
            known = self._back.get(id(value))
            if known is not None and known[0] is value:
                return known[1]
        if isinstance(value, celtypes.BoolType):
            return bool(value)
        if isinstance(value, celtypes.UintType):
            return UInt(int(value))
        if isinstance(value, celtypes.IntType):
            return int(value)
        if isinstance(value, celtypes.DoubleType):
            return float(value)
        if isinstance(value, celtypes.StringType):
            return str(value)
        if isinstance(value, celtypes.BytesType):
            return bytes(value)
        if isinstance(value, celtypes.ListType):
            return [self.back(x) for x in value]
        if isinstance(value, celtypes.MapType):
            return {self.back(k): self.back(x) for k, x in value.items()}
        return value

    @staticmethod
    def _scalar(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            return celtypes.BoolType(value)
        if isinstance(value, UInt):
            return celtypes.UintType(int(value))
        if isinstance(value, int):
            return celtypes.IntType(value)
        if isinstance(value, float):
            return celtypes.DoubleType(value)
        if isinstance(value, str):
            return celtypes.StringType(value)
        if isinstance(value, bytes):
            return celtypes.BytesType(value)
        if isinstance(value, dict):  # a dict subclass
            return celtypes.MapType({Converter._scalar(k): Converter._scalar(v)
                                     for k, v in value.items()})
        if isinstance(value, list | tuple):
            return celtypes.ListType([Converter._scalar(v) for v in value])
        raise Unconvertible(type(value).__name__)


# --------------------------------------------------------------------------- the evaluator


@dataclass
class ExpressionStats:
    policy: str
    field: str
    text: str
    supported: bool  # cel-python parsed and transpiled it
    why: str = ""  # why it falls back
    evaluations: int = 0
    in_celpy: int = 0  # evaluations whose cel-python result was used
    mismatches: int = 0
    ours_seconds: float = 0.0  # our closure's time on this expression (all evaluations)
    celpy_seconds: float = 0.0  # cel-python's time on the evaluations it ran


@dataclass
class Coverage:
    """How much of a reference run ran in cel-python."""

    expressions: int = 0  # distinct expressions evaluated
    expressions_in_celpy: int = 0  # ... of which at least one evaluation ran in cel-python
    evaluations: int = 0
    evaluations_in_celpy: int = 0
    mismatches: int = 0
    ours_seconds_covered: float = 0.0  # our time on the evaluations cel-python ran
    ours_seconds_fallback: float = 0.0  # our time on the evaluations that fell back
    celpy_seconds: float = 0.0  # cel-python's time on the evaluations it ran
    excluded_seconds: float = 0.0
    fallback_reasons: dict[str, int] = field(default_factory=dict)  # reason -> expressions
    mismatched: dict[str, int] = field(default_factory=dict)  # "policy field" -> evaluations

    @property
    def evaluation_share(self) -> float:
        return self.evaluations_in_celpy / self.evaluations if self.evaluations else 0.0

    @property
    def work_share(self) -> float:
        """The share of our CEL time spent on the evaluations cel-python ran: roughly the
        share of the CEL work that the reference figure prices at cel-python's speed."""
        total = self.ours_seconds_covered + self.ours_seconds_fallback
        return self.ours_seconds_covered / total if total else 0.0

    @property
    def slowdown(self) -> float:
        """cel-python's time ÷ ours on the evaluations cel-python ran."""
        return self.celpy_seconds / self.ours_seconds_covered \
            if self.ours_seconds_covered else math.nan


class ReferenceEvaluator:
    """Swaps the programs of an engine's policies for cel-python-backed ones."""

    def __init__(self, frameworks: Mapping[str, Framework]) -> None:
        self.environment = celpy.Environment(runner_class=celpy.CompiledRunner)
        self.convert = Converter()
        self.excluded_seconds = 0.0
        self._nested_seconds = 0.0  # total duration of the evaluations finished so far
        self.stats: dict[int, ExpressionStats] = {}
        self._originals: list[tuple[CelExpression, Program]] = []
        self._policies = _policies(frameworks)
        # cel-python logs every failed evaluation at ERROR level
        logging.getLogger("celpy").setLevel(logging.CRITICAL)

    def install(self) -> ReferenceEvaluator:
        seen: set[int] = set()
        for policy in self._policies:
            for expression in expressions_of(policy):
                if id(expression) in seen:
                    continue
                seen.add(id(expression))
                program = expression.program
                evaluate = self._reference(policy.name, expression, program)
                self._originals.append((expression, program))
                object.__setattr__(expression, "program",
                                   dataclasses.replace(program, evaluate=evaluate))
        return self

    def uninstall(self) -> None:
        for expression, program in self._originals:
            object.__setattr__(expression, "program", program)
        self._originals.clear()
        self.convert.clear()

    def coverage(self) -> Coverage:
        out = Coverage(excluded_seconds=self.excluded_seconds)
        for s in self.stats.values():
            if not s.evaluations:
                continue
            out.expressions += 1
            out.expressions_in_celpy += s.in_celpy > 0
            out.evaluations += s.evaluations
            out.evaluations_in_celpy += s.in_celpy
            out.mismatches += s.mismatches
            share = s.in_celpy / s.evaluations
            out.ours_seconds_covered += s.ours_seconds * share
            out.ours_seconds_fallback += s.ours_seconds * (1 - share)
            out.celpy_seconds += s.celpy_seconds
            if s.why:
                out.fallback_reasons[s.why] = out.fallback_reasons.get(s.why, 0) + 1
            if s.mismatches:
                out.mismatched[f"{s.policy} {s.field}"] = s.mismatches
        return out

    def reset_counters(self) -> None:
        """Forget the counts and times so far (e.g. of the set-up: queueing the pods); which
        expressions fall back is kept."""
        for s in self.stats.values():
            s.evaluations = s.in_celpy = s.mismatches = 0
            s.ours_seconds = s.celpy_seconds = 0.0
        self.excluded_seconds = 0.0

    def mismatched(self) -> list[ExpressionStats]:
        return [s for s in self.stats.values() if s.mismatches]

    # -- one expression -------------------------------------------------------------------

    def _reference(self, policy: str, expression: CelExpression, program: Program
                   ) -> Callable[[Mapping[str, Any]], Any]:
        stats = ExpressionStats(policy=policy, field=expression.field,
                                text=expression.text, supported=True)
        self.stats[id(expression)] = stats
        ours = program.evaluate
        names, variables = references(program.tree)
        runner: Any = None
        try:
            runner = self.environment.program(self.environment.compile(expression.text))
        except Exception as e:  # CELParseError, CELSyntaxError, transpiler failures
            stats.supported = False
            stats.why = f"cel-python cannot compile it ({type(e).__name__})"
        convert = self.convert
        perf = time.perf_counter

        def fallback(activation: Mapping[str, Any]) -> Any:
            stats.evaluations += 1
            nested_before = self._nested_seconds
            t0 = perf()
            try:
                return ours(activation)
            finally:
                # our closure may compute variables (other programs) as it reads them: count
                # only this expression's own time
                elapsed = perf() - t0
                stats.ours_seconds += elapsed - (self._nested_seconds - nested_before)
                self._nested_seconds = nested_before + elapsed

        def evaluate(activation: Mapping[str, Any]) -> Any:
            # the duration of every evaluation, for the exclusive time of the fallbacks
            # that trigger it (see fallback)
            nested_before = self._nested_seconds
            t0 = perf()
            try:
                return attempt(activation)
            finally:
                self._nested_seconds = nested_before + (perf() - t0)

        def attempt(activation: Mapping[str, Any]) -> Any:
            nonlocal runner
            if runner is None:
                return fallback(activation)
            # 1. what it reads: the variables, each by its own (swapped) program, and the
            #    cluster-wide lists, which the engine builds on first read (engine work)
            try:
                values = self._values(activation, names, variables)
            except CelError:
                # a variable it reads fails; ours may not need it (short-circuit): ours decides
                return fallback(activation)
            stats.evaluations += 1
            # 2. convert (excluded)
            t0 = perf()
            try:
                context = {name: self._convert(name, value) for name, value in values.items()}
            except Unconvertible as e:
                runner = None
                stats.why = f"a value cel-python cannot hold ({e})"
                self.excluded_seconds += perf() - t0
                stats.evaluations -= 1
                return fallback(activation)
            t1 = perf()
            # 3. cel-python (measured)
            failure: BaseException | None = None
            try:
                theirs = runner.evaluate(context)
            except Exception as e:
                failure, theirs = e, None
            t2 = perf()
            # 4. ours (excluded), compare
            ours_error: CelError | None = None
            value: Any = None
            try:
                value = ours(activation)
            except CelError as e:
                ours_error = e
            t3 = perf()
            stats.ours_seconds += t3 - t2
            excluded = (t1 - t0) + (t3 - t2)
            if failure is not None and ours_error is None:
                # cel-python cannot evaluate it (unknown function, macro, ...): fall back,
                # now and for the rest of the run; the failed attempt is excluded
                runner = None
                stats.why = f"cel-python fails evaluating it ({_reason(failure)})"
                excluded = (t1 - t0) + (t2 - t1)
            else:
                stats.in_celpy += 1
                stats.celpy_seconds += t2 - t1
                if failure is None and ours_error is None:
                    t4 = perf()
                    if not same_value(value, convert.back(theirs)):
                        stats.mismatches += 1
                    else:
                        convert.remember(value, theirs)
                    excluded += perf() - t4
                elif failure is None:  # cel-python has a value where we have an error
                    stats.mismatches += 1
            self.excluded_seconds += excluded
            if ours_error is not None:
                raise ours_error
            return value

        return evaluate

    @staticmethod
    def _values(activation: Mapping[str, Any], names: Iterable[str],
                variables: frozenset[str]) -> dict[str, Any]:
        """The activation values an expression reads (``variables``: only the ones it
        reads, computed now); raises CelError when one of those variables fails."""
        values: dict[str, Any] = {}
        for name in names:
            try:  # the engine's activations build cluster-wide lists on first read
                value = activation[name]
            except KeyError:
                continue  # not bound here (a function namespace, or an error cel-python
                # reports as we would)
            build = getattr(value, "build", None)  # an older runner's deferred list
            if build is not None and callable(build):
                value = build()
            if name == "variables":
                wanted: Iterable[str] = value._expressions if _ALL in variables else variables
                value = {v: value[v] for v in wanted}
            values[name] = value
        return values

    def _convert(self, name: str, value: Any) -> Any:
        if name == "variables":
            return celtypes.MapType({celtypes.StringType(k): self.convert(v)
                                     for k, v in value.items()})
        if name == "node":
            return self.convert.node(value)
        if name == "nodePods":
            return self.convert.pod_list(value)
        return self.convert(value)


def _policies(frameworks: Mapping[str, Framework]) -> list[Policy]:
    out: dict[int, Policy] = {}
    for fwk in frameworks.values():
        for instance in fwk.instances:
            out[id(instance.policy)] = instance.policy
        if fwk.queue_sort is not None:
            out[id(fwk.queue_sort.policy)] = fwk.queue_sort.policy
    return list(out.values())


def _reason(e: BaseException) -> str:
    """A short reason for a cel-python failure: the innermost message of its nested
    ``CELEvalError`` arguments (``unbound function 'distinct'``, ``no such member in mapping:
    'cel'``)."""
    args: Any = getattr(e, "args", ())
    while isinstance(args, tuple) and len(args) == 3 and isinstance(args[2], tuple) \
            and len(args[2]) == 3 and isinstance(args[2][0], str):
        args = args[2]
    if isinstance(args, tuple) and args and isinstance(args[0], str):
        if args[0] == "unbound function" and len(args) == 3 and args[2]:
            return f"unbound function {args[2][0]!r}"
        return args[0]
    return type(e).__name__


__all__ = ["Coverage", "ReferenceEvaluator", "expressions_of", "references"]
