"""The vectorised evaluator against the scalar closures, node by node: on random node
values, every node the evaluator decides (not flagged ``err``) has the scalar result, and
the flagged ones are exactly those where the scalar closure raises or could not be decided
by array operations."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from policysched.cel import CelError, Environment, compile_expression
from policysched.cel.compiler import compile_tree
from policysched.cel.library import standard_library
from policysched.cel.partial import split
from policysched.cel.types import DYN
from policysched.cel.values import INT64_MAX, INT64_MIN
from policysched.cel.vector import (
    Column,
    Evaluation,
    FactorisedColumn,
    NumericColumn,
    Remainder,
    Scalar,
    column_of,
    per_unique,
)

ENV = Environment(variables={"pod": DYN, "node": DYN})
F_QUANTITY = standard_library()["quantity"].impl
NODE = frozenset({"node"})

EXPRESSIONS = [
    "node.a + pod.x",
    "node.a - pod.x * node.b",
    "node.a * pod.x",
    "node.a / node.b",
    "node.a % (node.b - pod.x)",
    "-node.a < pod.x",
    "node.a / node.b > 1 || node.a < 0",
    "node.a > pod.x && node.b < pod.x",
    "pod.flag ? node.a : node.b",
    "node.flag ? node.a : pod.x",
    "node.flag ? node.s : 'other'",
    "node.s == pod.s || node.s.startsWith('b')",
    "node.s in pod.list",
    "pod.list.exists(v, v == node.s)",
    "pod.list.all(v, v != node.s || node.a > 0)",
    "cel.bind(t, node.a + 1, t * t > pod.x)",
    "node.d / double(pod.x) > 0.5",
    "node.m.k > pod.x",
    "has(node.m.k) && node.m.k > pod.x",
    "node.flag == pod.flag",
    "!node.flag || pod.x / node.a > 0",
    "int(node.d) + pod.x",
    "pod.key in node.m",
    "node.m[pod.key] > 1",
    "node.s in pod.map || node.s in pod.list",
    "node.s in pod.map ? pod.map[node.s] : 0",
    # filter / map with a predicate over a pod-side list, unrolled
    "pod.list.filter(v, v != node.s)",
    "pod.list.map(v, v != node.s, v + '!')",
    "pod.list.map(v, node.a / node.b > 0, v)",  # the predicate errs on some nodes
    "pod.list.map(v, v == node.s, string(pod.x / (pod.x - pod.x)))",  # so does a transform
    "pod.map.filter(k, pod.map[k] > node.a).size() > 0",
    # an optional lookup with a default, per distinct map
    "node.m[?pod.key].orValue(-1) > pod.x",
    "node.m[?'k'].orValue(pod.x) + 1",
    # operators on values the arrays do not hold: once per distinct combination
    "(node.flag ? ['a'] : []) + pod.list",
    "(node.flag ? ['a'] : []) + pod.list.filter(v, v != node.s)",
    "node.s + pod.s == 'ab'",
    "node.s < pod.s",
    # opaque values (kubernetes.Quantity / Semver) in columns: once per distinct value, and
    # values CEL calls equal ('1' and '1000m') are not merged where functions differ on them
    "quantity(node.q).add(quantity(pod.q)).isInteger()",
    "quantity(node.q).isInteger() || pod.flag",
    "quantity(node.q).asApproximateFloat() > node.d",
    "sign(quantity(node.q)) == pod.x || quantity(node.q).isGreaterThan(quantity(pod.q))",
    "quantity(node.q) == quantity(pod.q)",
    "semver(node.v, true).compareTo(semver(pod.v)) + pod.x",
    "[semver(node.v, true), semver(pod.v)].exists(v, v.minor() > node.a)",
    # Kubernetes library types and the sortBy macro, on node values
    "url('https://' + node.s + ':8' + string(pod.x) + '/').getPort()",
    "format.dns1123Label().validate(node.s + pod.s).hasValue()",
    "format.named(pod.s == 'a' ? 'uuid' : 'byte').value().validate(node.s)",
    "pod.list.sortBy(v, v == node.s ? '' : v)",
    "[node.a, pod.x, node.b].sortBy(v, -v)[0]",
    "node.d <= 0.25 || node.d >= double(pod.x)",
]


# ints no CEL arithmetic yields, but a raw view may hold (an API object's field the cache
# passes through as it is): columns and operands beyond int64 must not break NumPy
BEYOND_INT64 = (INT64_MAX + 1, INT64_MIN - 1, 10**30)


def random_node(rng: random.Random, beyond: bool = False) -> dict[str, Any]:
    extreme = rng.random() < 0.1
    extremes = (INT64_MAX, INT64_MIN, -1) + (BEYOND_INT64 if beyond else ())
    return {
        "a": rng.choice(extremes) if extreme else rng.randint(-5, 5),
        "b": rng.randint(-2, 2),
        "d": rng.choice((0.0, 0.25, 1.5, -2.0, math.nan)),  # NaN is not ordered: an error
        "s": rng.choice(("a", "b", "c", "bb")),
        "flag": rng.random() < 0.5,
        "m": {"k": rng.randint(0, 3)} if rng.random() < 0.7 else {},
        "q": rng.choice(("1", "1000m", "1.0", "1.5Gi", "1536Mi", "-2k", "bad")),
        "v": rng.choice(("1.2.0", "v1.2", "1.2.0+build", "1.3.0-rc.1", "x")),
    }


def evaluate(text: str, pod: dict[str, Any], nodes: list[dict[str, Any]]) -> tuple[Any, ...]:
    program = compile_expression(text, ENV, check=False)
    parts = split(program.tree, {"pod", "node"}, NODE)
    pod_closures = [compile_tree(p, ENV, {}) for p in parts.pod_parts]
    node_closures = [compile_tree(p, ENV, {}) for p in parts.node_parts]

    def pod_part(k: int) -> Any:
        return pod_closures[k]({"pod": pod})

    def node_part(k: int) -> Column:
        values: list[Any] = []
        for n in nodes:
            try:
                values.append(node_closures[k]({"node": n}))
            except CelError as e:
                values.append(e)
        return column_of(values)

    result = Evaluation(Remainder(parts.remainder, ENV, {}), len(nodes), pod_part,
                        node_part).run()
    return result, program


@pytest.mark.parametrize("beyond", [False, True], ids=["int64", "beyond-int64"])
@pytest.mark.parametrize("text", EXPRESSIONS)
def test_each_decided_node_has_the_scalar_value(text: str, beyond: bool) -> None:
    rng = random.Random(text)
    decided = 0
    for _ in range(20):
        x = rng.choice(BEYOND_INT64) if beyond and rng.random() < 0.2 else rng.randint(-3, 3)
        pod = {"x": x, "flag": rng.random() < 0.5,
               "s": rng.choice(("a", "b")), "list": rng.sample(["a", "b", "c"], 2),
               "key": rng.choice(("k", "z")), "map": {"a": 1, rng.choice("bc"): 2},
               "q": rng.choice(("0", "1", "500m")), "v": "1.2.0"}
        nodes = [random_node(rng, beyond) for _ in range(25)]
        result, program = evaluate(text, pod, nodes)
        for i, node in enumerate(nodes):
            try:
                want: Any = program.evaluate({"pod": pod, "node": node})
            except CelError:
                want = CelError
            got = _at(result, i)
            if got is _UNDECIDED:
                continue
            decided += 1
            assert got == want and type(got) is type(want), (text, pod, node, got, want)
    assert decided > 0


_UNDECIDED = object()


def _at(result: Any, i: int) -> Any:
    if isinstance(result, Scalar):
        return CelError if result.error is not None else result.value
    if result.err is not None and result.err[i]:
        return _UNDECIDED
    if isinstance(result, NumericColumn):
        value = result.data[i]
        return value.item() if not isinstance(value, np.bool_) else bool(value)
    value = result.uniques[result.codes[i]]
    return CelError if isinstance(value, CelError) else value


def test_equal_quantities_that_functions_tell_apart_stay_apart_in_a_column() -> None:
    # quantity('1000m') == quantity('1'), but only '1' is an integer (Kubernetes' AsInt64)
    nodes = [{"q": "1000m"}, {"q": "1"}, {"q": "1.0"}, {"q": "1000m"}]
    result, _ = evaluate("quantity(node.q).isInteger() == pod.flag", {"flag": True}, nodes)
    assert [_at(result, i) for i in range(4)] == [False, True, False, False]
    column = column_of([F_QUANTITY(n["q"]) for n in nodes])
    assert [str(column.uniques[c]) for c in column.codes] == ["1", "1", "1", "1"]
    assert len(column.uniques) == 3  # 1000m (int64Amount, scale -3), 1, 1.0 (scale -1)


def test_a_list_of_reasons_is_computed_with_columns_not_per_node(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the shape of NodeResourcesFit's reasons: a node-side condition's list joined with a
    # map over the pod's resources reading the node's maps with defaults; nothing may run
    # a closure per node (the distinct lists are few, the nodes' maps all differ)
    text = ("(node.n > 2 ? ['crowded'] : []) + pod.map.map(r, pod.map[r] > 0 && "
            "pod.map[r] > node.m[?r].orValue(0), 'short of ' + r)")
    per_node: list[str] = []
    generic = Evaluation.generic

    def counted(self: Evaluation, node: Any, local: Any) -> Any:
        found = generic(self, node, local)
        if not isinstance(found, Scalar):
            per_node.append(str(node))
        return found

    monkeypatch.setattr(Evaluation, "generic", counted)
    rng = random.Random(5)
    nodes = [{"n": rng.randint(0, 4), "m": {"a": rng.randint(0, 9), "b": rng.randint(0, 9)}}
             for _ in range(50)]
    pod = {"map": {"a": 4, "b": 0, "c": 1}}
    result, program = evaluate(text, pod, nodes)
    assert per_node == []
    assert [_at(result, i) for i in range(len(nodes))] == [
        program.evaluate({"pod": pod, "node": n}) for n in nodes]


def test_per_unique_projects_only_the_distinct_values_added_since() -> None:
    column = column_of([{"cpu": 1}, {"cpu": 2}, {"cpu": 1}])
    assert isinstance(column, FactorisedColumn)
    seen: list[Any] = []

    def cpu(m: Any) -> int:
        seen.append(m)
        return int(m["cpu"])

    assert per_unique(column, "cpu", cpu, np.int64)[column.codes].tolist() == [1, 2, 1]
    column.uniques.append({"cpu": 7})  # as NodeTable patches a row in place
    column.codes[2] = 2
    assert per_unique(column, "cpu", cpu, np.int64)[column.codes].tolist() == [1, 2, 7]
    assert seen == [{"cpu": 1}, {"cpu": 2}, {"cpu": 7}]
    assert per_unique(column, "other", lambda m: 0, np.int64).tolist() == [0, 0, 0]
