"""Node resource scores (``policy.resource_functions``): kube-scheduler's
resourceAllocationScorer with its three scorers, which resources count, errors for what
kube would refuse, and the vectorised implementation agreeing with the scalar one node by
node."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from policysched.cel import CelCompileError, CelError, compile_expression
from policysched.cel.values import INT64_MAX
from policysched.cel.vector import Scalar, column_of
from policysched.policy import variables as v
from policysched.policy.resource_functions import (
    balanced_allocation,
    is_scalar_resource,
    least_allocated,
    most_allocated,
)

GI = 1024**3
CPU_MEMORY = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def test_least_allocated_is_the_weighted_mean_of_what_is_left() -> None:
    alloc = {"cpu": 4000, "memory": 8 * GI, "pods": 110}
    # cpu (4000 - 1500) * 100 / 4000 = 62; memory (8 - 3) * 100 / 8 = 62
    assert least_allocated(alloc, {"cpu": 1000, "memory": 2 * GI}, {"cpu": 500, "memory": GI},
                           CPU_MEMORY) == 62
    weighted = [{"name": "cpu", "weight": 3}, {"name": "memory"}]  # no weight: 1
    # cpu over capacity scores 0 (x3), memory (8 - 1) * 100 / 8 = 87 -> 87 / 4 = 21
    assert least_allocated(alloc, {}, {"cpu": 8000, "memory": GI}, weighted) == 21


def test_most_allocated_caps_requested_at_allocatable() -> None:
    alloc = {"cpu": 4000, "memory": 8 * GI}
    assert most_allocated(alloc, {"cpu": 3500}, {"cpu": 1000, "memory": 2 * GI},
                          CPU_MEMORY) == (100 + 25) // 2


def test_which_resources_count_as_kube_counts_them() -> None:
    alloc = {"cpu": 1000, "memory": 1000, "pods": 10, "example.com/gpu": 4, "foo": 10}
    only = [{"name": "cpu"}]
    assert least_allocated(alloc, {}, {"cpu": 500}, only) == 50
    # an extended resource counts only when the pod requests it
    with_gpu = [*only, {"name": "example.com/gpu"}]
    assert least_allocated(alloc, {"example.com/gpu": 4}, {"cpu": 500}, with_gpu) == 50
    assert least_allocated(alloc, {"example.com/gpu": 3}, {"cpu": 500, "example.com/gpu": 1},
                           with_gpu) == 25
    # pods and a bare unknown name are never scored; a resource without allocatable neither
    for ignored in ("pods", "foo", "hugepages-2Mi", "memory"):
        assert least_allocated({**alloc, "memory": 0}, {}, {"cpu": 500, ignored: 1},
                               [*only, {"name": ignored}]) == 50
    assert least_allocated({}, {}, {"cpu": 500}, only) == 0  # nothing scored


@pytest.mark.parametrize(("name", "scalar"), [
    ("cpu", False), ("pods", False), ("foo", False), ("example.com/gpu", True),
    ("hugepages-2Mi", True), ("attachable-volumes-aws-ebs", True), ("kubernetes.io/x", True),
    ("requests.example.com/x", False), ("a/b/c", False), ("-bad.com/x", False)])
def test_scalar_resource_names(name: str, scalar: bool) -> None:
    assert is_scalar_resource(name) is scalar


def test_balanced_allocation_over_two_one_and_three_resources() -> None:
    alloc = {"cpu": 4000, "memory": 10000, "ephemeral-storage": 100}
    # fractions 0.5 and 0.2: std 0.15 -> int(85.0...)
    two = balanced_allocation(alloc, {"cpu": 1000}, {"cpu": 1000, "memory": 2000}, CPU_MEMORY)
    assert two == int((1 - abs((0.5 - 0.2) / 2)) * 100)
    assert balanced_allocation(alloc, {}, {"cpu": 1000}, [{"name": "cpu"}]) == 100
    three = [*CPU_MEMORY, {"name": "ephemeral-storage"}]
    fractions = [0.5, 0.2, 1.0]  # storage 150 / 100, capped at 1
    mean = sum(fractions) / 3
    std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / 3)
    assert balanced_allocation(alloc, {"ephemeral-storage": 50},
                               {"cpu": 2000, "memory": 2000, "ephemeral-storage": 100},
                               three) == int((1 - std) * 100)


def test_amounts_are_exact_where_kube_int64_would_overflow() -> None:
    huge = INT64_MAX
    alloc = {"cpu": 1000, "memory": huge}
    # memory: (2^63 - 1 - (2^62 - 1)) * 100 / (2^63 - 1) = 50 (kube's int64 product wraps)
    assert least_allocated(alloc, {"memory": 2**62 - 1}, {"cpu": 0},
                           [{"name": "memory"}]) == 50
    assert most_allocated(alloc, {"memory": huge}, {"memory": huge}, [{"name": "memory"}]) == 100


@pytest.mark.parametrize(("resources", "message"), [
    ("cpu", "resources must be a list of {name: string, weight: int}"),
    ([{"weight": 1}], "resources must be a list"),
    ([{"name": "cpu", "weight": 101}], "resource cpu: weight 101 is not in 1..100"),
    ([{"name": "cpu", "weight": -1}], "weight -1 is not in 1..100"),
])
def test_bad_resource_specs_are_cel_errors(resources: Any, message: str) -> None:
    with pytest.raises(CelError, match=message.replace("{", r"\{").replace(".", r"\.")):
        least_allocated({"cpu": 1}, {}, {}, resources)


def test_bad_amounts_are_cel_errors() -> None:
    with pytest.raises(CelError, match="mostAllocated: cpu: amount -1 is not a non-negative int"):
        most_allocated({"cpu": 10}, {"cpu": -1}, {}, CPU_MEMORY)
    with pytest.raises(CelError, match="no such overload"):
        balanced_allocation({"cpu": 10}, [], {}, CPU_MEMORY)


def test_typed_and_evaluated_in_policies() -> None:
    env = v.environment(v.SCORE)
    program = compile_expression(
        "leastAllocated(node.allocatable, node.nonZeroRequested, pod.nonZeroRequests, "
        "[{'name': 'cpu', 'weight': 1}])", env)  # a ResourceSpec literal mixes types
    activation = {"node": {"allocatable": {"cpu": 1000}, "nonZeroRequested": {"cpu": 250}},
                  "pod": {"nonZeroRequests": {"cpu": 250}}}
    assert program.evaluate(activation) == 50
    with pytest.raises(CelCompileError, match="no matching overload"):
        compile_expression("mostAllocated(node.labels, node.requested, pod.requests, [])", env)


def random_amounts(rng: random.Random, names: tuple[str, ...]) -> Any:
    if rng.random() < 0.03:
        return rng.choice(("not a map", {"cpu": -5}, {"cpu": "1"}))
    return {n: rng.choice((0, 1, 7, 1000, 2**40, INT64_MAX // 100 + 1, INT64_MAX - 3,
                           INT64_MAX)) for n in names if rng.random() < 0.8}


@pytest.mark.parametrize("function", ["leastAllocated", "mostAllocated", "balancedAllocation"])
@pytest.mark.parametrize("seed", range(8))
def test_columns_agree_with_the_scalar_function_node_by_node(function: str, seed: int) -> None:
    """Over columns of node amounts (with zeros, huge and invalid values) the vectorised
    implementation gives the scalar value on every node it does not flag, and flags only
    nodes the scalar function fails on or computes beyond int64."""
    rng = random.Random(seed)
    names = ("cpu", "memory", "ephemeral-storage", "example.com/gpu", "pods")
    fn = v.environment(v.SCORE).functions[function]
    assert fn.columns is not None
    allocs = [random_amounts(rng, names) for _ in range(5)]  # few distinct allocatables
    rows = 60
    alloc_rows = [rng.choice(allocs) for _ in range(rows)]
    requested_rows = [random_amounts(rng, names) for _ in range(rows)]
    for _ in range(10):
        pod = {n: rng.choice((0, 1, 500, 2**50)) for n in names if rng.random() < 0.7}
        resources = [{"name": n, "weight": rng.randint(0, 100)}
                     for n in rng.sample(names, rng.randint(0, 4))]
        got = fn.columns(rows, column_of(alloc_rows), column_of(requested_rows), Scalar(pod),
                         Scalar(resources))
        assert got is not None
        flagged = got.err.tolist() if got.err is not None else [False] * rows
        for row in range(rows):
            try:
                want = fn.impl(alloc_rows[row], requested_rows[row], pod, resources)
            except CelError:
                assert flagged[row]
                continue
            if not flagged[row]:
                assert int(got.data[row]) == want, (row, alloc_rows[row], requested_rows[row],
                                                    pod, resources)
            else:  # only beyond int64
                assert max(alloc_rows[row].values(), default=0) > INT64_MAX // 100 \
                    or max(requested_rows[row].values(), default=0) > INT64_MAX // 100


def test_columns_leave_a_bad_spec_or_pod_side_column_to_the_scalar_function() -> None:
    fn = v.environment(v.SCORE).functions["leastAllocated"]
    assert fn.columns is not None
    nodes = column_of([{"cpu": 1}, {"cpu": 2}])
    assert fn.columns(2, nodes, nodes, Scalar({}), Scalar("cpu")) is None
    assert fn.columns(2, nodes, nodes, nodes, Scalar(CPU_MEMORY)) is None
