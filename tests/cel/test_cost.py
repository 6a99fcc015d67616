"""The worst-case cost estimator."""

from __future__ import annotations

import math
from typing import Any

import pytest

from policysched.cel import ast, checker, cost, parser
from policysched.cel.environment import Environment
from policysched.cel.library import Function, Overload, standard_library
from policysched.cel.types import DYN, INT, STRING, Type, list_of, map_of

POD = Type("Pod")
OBJECTS = {"Pod": {"name": STRING, "containers": list_of(DYN), "labels": map_of(STRING, STRING)}}


def cluster_env(**kw: Any) -> Environment:
    base: dict[str, Any] = {
        "variables": {"pods": list_of(POD), "pod": POD, "now": INT, "names": list_of(STRING),
                      "s": STRING, "node": DYN},
        "objects": OBJECTS,
        "size_hints": {"pods": 10_000},
    }
    base.update(kw)
    return Environment(**base)


def estimate(text: str, env: Environment | None = None) -> int:
    e = env if env is not None else cluster_env()
    tree = parser.parse(text)
    return cost.estimate(tree, e, checker.check(tree, e).types)


def test_nested_comprehension_over_pods_costs_far_more() -> None:
    quadratic = estimate("pods.all(p, pods.all(q, p.name != q.name))")
    linear = estimate("pods.exists(p, p.name == 'x')")
    assert linear >= 10_000  # one step per pod at least
    assert quadratic >= 10_000 * 10_000
    assert quadratic > 1000 * linear


def test_simple_expressions_cost_little() -> None:
    assert estimate("true") == 1
    assert 1 < estimate("now - 5 >= 15") <= 10
    assert estimate("pod.name == 'a' && now > 0") <= 10
    assert estimate("!(1 < 2) ? 1 : 2") <= 10


def test_size_hints_scale_comprehensions() -> None:
    text = "pods.exists(p, p.name == 'x')"
    small = estimate(text, cluster_env(size_hints={"pods": 10}))
    large = estimate(text, cluster_env(size_hints={"pods": 1000}))
    body = estimate("pod.name == 'x'") + cost.ITERATION_COST  # the per-pod step
    assert large - small == (1000 - 10) * body


def test_literal_range_sizes() -> None:
    three = estimate("[1, 2, 3].all(x, x > 0)")
    six = estimate("[1, 2, 3, 4, 5, 6].all(x, x > 0)")
    # the step: x (1) + 0 (1) + '>' (1) + iteration; the list: 1 + 1 per element + elements
    assert six - three == 3 * (3 + cost.ITERATION_COST) + 3 * 2


def test_unknown_collections_use_the_default_size() -> None:
    step = estimate("['a'].exists(n, n == 'x')") - estimate("['a']") - 1
    assert estimate("names.exists(n, n == 'x')") == 1 + 1 + cost.DEFAULT_COLLECTION_SIZE * step


def test_dotted_size_hint() -> None:
    plain = estimate("pod.containers.all(c, c.image != '')")
    hinted = estimate("pod.containers.all(c, c.image != '')",
                      cluster_env(size_hints={"pods": 10_000, "pod.containers": 5}))
    assert hinted < plain
    assert hinted < 50


def test_comprehension_element_sizes_flow_into_nested_ranges() -> None:
    # [[1..5], [1..5]]: the inner range has 5 elements, not the default
    nested = estimate("[[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]].all(l, l.all(x, x > 0))")
    assert nested < 100


def test_cost_per_size_functions_scale_with_their_first_argument() -> None:
    walk = Function("walk", (Overload("walk_string", (STRING,), INT, member=True),),
                    lambda s: 0, cost=3, cost_per_size=True)
    flat = Function("flat", (Overload("flat_string", (STRING,), INT, member=True),),
                    lambda s: 0, cost=7)
    e = Environment(variables={"s": STRING}, functions={"walk": walk, "flat": flat})
    text = "'" + "a" * 200 + "'"
    per_char = math.ceil(200 * cost.STRING_TRAVERSAL_FACTOR)
    assert estimate(f"{text}.walk()", e) == 3 * per_char + 1
    assert estimate(f"{text}.flat()", e) == 7 + 1
    unknown = math.ceil(cost.DEFAULT_STRING_SIZE * cost.STRING_TRAVERSAL_FACTOR)
    assert estimate("s.walk()", e) == 3 * unknown + 1


def test_library_functions_have_their_cost() -> None:
    e = cluster_env()
    assert estimate("s.contains('x')", e) > estimate("size(s)", e)


def test_quantity_and_semver_cost_as_in_kubernetes() -> None:
    # library/cost.go: parsing walks the string (0.1 per character), the methods and the
    # equality of two quantities or versions cost 1
    unknown = math.ceil(cost.DEFAULT_STRING_SIZE * cost.STRING_TRAVERSAL_FACTOR)
    for parse in ("quantity(s)", "isQuantity(s)", "semver(s)", "isSemver(s)",
                  "quantityMilli(s)"):
        assert estimate(parse) == unknown + 1, parse
    q = "quantity(s)"
    assert estimate(f"{q}.add({q}).isGreaterThan({q})") == 3 * (unknown + 1) + 2
    assert estimate(f"sign({q}) + {q}.asInteger()") == 2 * (unknown + 2) + 1
    assert estimate(f"{q} == {q}") == 2 * (unknown + 1) + 1
    assert estimate("semver(s, true).major() == 1") == unknown + 1 + 1 + 1 + 1 + 1


def test_ternary_counts_the_dearer_branch() -> None:
    dear = "pods.exists(p, p.name == 'x')"
    both = estimate(f"now > 0 ? {dear} : false")
    assert both == 1 + estimate("now > 0") + estimate(dear)


def test_list_membership_walks_the_list() -> None:
    assert estimate("'a' in names") >= cost.DEFAULT_COLLECTION_SIZE
    assert estimate("'a' in pod.labels") < 10


def test_bind_and_block() -> None:
    bound = estimate("cel.bind(xs, [1, 2, 3], xs.all(x, x > 0))")
    assert bound < 30
    block = estimate("cel.block([[1, 2, 3]], cel.index(0).all(x, x > 0))")
    assert block < 30


def test_unchecked_tree_and_unknown_functions_still_cost() -> None:
    tree = parser.parse("nosuch(a, b.c)")
    assert cost.estimate(tree, Environment(functions=standard_library()), {}) >= 4


def test_deep_tree_does_not_recurse() -> None:
    node: ast.Node = ast.Literal(0, 1)
    for i in range(5_000):
        node = ast.Call(i, ast.ADD, (node, ast.Literal(i, 1)))
    e = Environment()
    assert cost.estimate(node, e, checker.check(node, e).types) == 10_001


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_nesting_multiplies(depth: int) -> None:
    inner = "true"
    for i in range(depth):
        inner = f"pods.all(p{i}, {inner})"
    assert estimate(inner) >= 10_000 ** depth


def test_object_field_size_hint_applies_through_macro_variables() -> None:
    text = "pods.all(p, p.containers.all(c, c != ''))"
    plain = estimate(text)
    hinted = estimate(text, cluster_env(size_hints={"pods": 10_000, "Pod.containers": 4}))
    assert plain >= 10_000 * cost.DEFAULT_COLLECTION_SIZE
    assert hinted < 10_000 * 30


def test_compile_expression_rejects_over_the_cost_limit() -> None:
    from policysched.cel import CelCompileError, CompileErrorKind, compile_expression

    e = cluster_env(cost_limit=1_000_000)
    program = compile_expression("pods.exists(p, p.name == 'x')", e)
    assert 10_000 <= program.cost <= 1_000_000
    with pytest.raises(CelCompileError) as info:
        compile_expression("pods.all(p, pods.all(q, p.name != q.name))", e)
    assert info.value.kind == CompileErrorKind.COST
