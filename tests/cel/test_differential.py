"""Differential tests: our compiler against cel-python (the reference evaluator).

Two sources of cases: scheduling-style expressions over random pods and nodes, and the
conformance cases cel-python can run. Where cel-python gives the spec's answer we must
give the same answer.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

import celpy
import pytest
from celpy import celtypes

from policysched.cel import CelCompileError, CelError, Environment, compile_expression
from policysched.cel import types as t
from policysched.cel.values import UInt
from tests.cel.conformance import proto_free_cases, same_value, value_from_json

EXPRESSIONS = [
    "now - pod.creationTimestamp >= int(pod.annotations.delay)",
    "!node.unschedulable",
    "node.labels['topology.kubernetes.io/zone'] == 'zone-a' ? 100 : 0",
    "pod.requests.cpu <= node.free.cpu && pod.requests.memory <= node.free.memory",
    "(node.allocatable.cpu - node.requested.cpu) * 100 / node.allocatable.cpu",
    "node.taints.all(t, t.effect == 'PreferNoSchedule' || "
    "pod.tolerations.exists(x, x.key == t.key && x.effect == t.effect))",
    "node.labels.exists(k, k.endsWith('/worker')) || size(node.taints) > 1",
    "node.taints.filter(t, t.effect == 'NoSchedule').map(t, t.key)",
    "node.taints.exists_one(t, t.effect == 'NoExecute')",
    "'zone' in node.labels ? node.labels.zone : 'none'",
    "has(pod.annotations.delay) && int(pod.annotations.delay) % 7 == 3",
    "double(pod.requests.cpu) / double(node.allocatable.cpu) < 0.25",
    "node.name.startsWith('worker-') && node.name.contains('1')",
    "[pod.requests.cpu, node.free.cpu, 500].exists(v, v > 1000)",
    "{'a': pod.requests.cpu}.a + node.requested.cpu",
    "pod.name.matches('^web-[0-9]+$')",
    "node.podCount < 110 || node.unschedulable",
    "pod.priority > 1000 || (pod.priority >= 0 && now % 2 == 0)",
    "string(node.podCount) + '/' + string(node.allocatable.pods)",
    "-pod.priority < 0 && pod.priority / 3 > 10",
]

ENV = Environment(variables={"now": t.INT, "pod": t.MAP_STRING_DYN, "node": t.MAP_STRING_DYN},
                  version=None)  # cel-python is plain CEL: no Kubernetes checker rules


def random_pod(rng: random.Random) -> dict[str, Any]:
    annotations = {"delay": str(rng.randint(0, 40))} if rng.random() < 0.8 else {}
    return {
        "name": rng.choice(["web-1", "web-22", "db-3", "web-x"]),
        "creationTimestamp": 1000 + rng.randint(0, 30),
        "annotations": annotations,
        "requests": {"cpu": rng.choice([100, 250, 1500]), "memory": rng.randint(1, 8) << 28},
        "priority": rng.randint(-5, 2000),
        "tolerations": [
            {"key": k, "effect": e}
            for k, e in rng.sample([("a", "NoSchedule"), ("b", "NoExecute"),
                                    ("c", "NoSchedule")], rng.randint(0, 2))
        ],
    }


def random_node(rng: random.Random) -> dict[str, Any]:
    allocatable = {"cpu": rng.choice([1000, 4000]), "memory": 1 << 34, "pods": 110}
    requested = {"cpu": rng.randint(0, allocatable["cpu"]), "memory": rng.randint(0, 1 << 33),
                 "pods": rng.randint(0, 110)}
    labels = {"kubernetes.io/hostname": "n"}
    if rng.random() < 0.7:
        labels["topology.kubernetes.io/zone"] = rng.choice(["zone-a", "zone-b"])
    if rng.random() < 0.3:
        labels["node-role.kubernetes.io/worker"] = ""
    if rng.random() < 0.3:
        labels["zone"] = "z"
    return {
        "name": rng.choice(["worker-1", "worker-20", "master-0"]),
        "unschedulable": rng.random() < 0.2,
        "labels": labels,
        "taints": [{"key": k, "effect": e}
                   for k, e in rng.sample([("a", "NoSchedule"), ("b", "NoExecute"),
                                           ("d", "PreferNoSchedule")], rng.randint(0, 3))],
        "allocatable": allocatable,
        "requested": requested,
        "free": {k: allocatable[k] - requested[k] for k in allocatable},
        "podCount": requested["pods"],
    }


def from_celpy(v: Any) -> Any:
    """cel-python's result types → ours."""
    if isinstance(v, celtypes.BoolType):
        return bool(v)
    if isinstance(v, celtypes.UintType):
        return UInt(int(v))
    if isinstance(v, celtypes.IntType):
        return int(v)
    if isinstance(v, celtypes.DoubleType):
        return float(v)
    if isinstance(v, celtypes.StringType):
        return str(v)
    if isinstance(v, celtypes.BytesType):
        return bytes(v)
    if isinstance(v, celtypes.ListType):
        return [from_celpy(x) for x in v]
    if isinstance(v, celtypes.MapType):
        return {from_celpy(k): from_celpy(x) for k, x in v.items()}
    return v


@pytest.fixture(scope="module")
def reference() -> celpy.Environment:
    return celpy.Environment(runner_class=celpy.CompiledRunner)


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_scheduling_expressions_agree_with_cel_python(
        text: str, reference: celpy.Environment) -> None:
    ours = compile_expression(text, ENV)
    ref = reference.program(reference.compile(text))
    rng = random.Random(text)
    compared = 0
    for _ in range(60):
        act = {"now": 1000 + rng.randint(0, 60), "pod": random_pod(rng),
               "node": random_node(rng)}
        ref_act = {"now": celtypes.IntType(act["now"]), "pod": celpy.json_to_cel(act["pod"]),
                   "node": celpy.json_to_cel(act["node"])}
        try:
            want = ref.evaluate(ref_act)
        except Exception:
            want = None
        if want is None or isinstance(want, celpy.CELEvalError):
            # cel-python errs here; it is wrong on some CEL rules (e.g. `false && error`
            # must be false), so only check that we do not crash outside CEL's errors.
            with contextlib.suppress(CelError):
                ours.evaluate(act)
            continue
        got = ours.evaluate(act)
        assert same_value(got, from_celpy(want)), (text, act, got, want)
        compared += 1
    assert compared > 0


def test_conformance_cases_where_cel_python_is_right_agree(
        reference: celpy.Environment) -> None:
    """Where cel-python evaluates a conformance case to the spec's value, so do we."""
    checked = 0
    for case in proto_free_cases():
        raw = case.raw
        if "value" not in raw or raw.get("bindings") or raw.get("type_env"):
            continue
        want = value_from_json(raw["value"])
        try:
            ref = from_celpy(reference.program(reference.compile(raw["expr"])).evaluate({}))
        except Exception:
            continue
        if not same_value(ref, want):
            continue  # cel-python disagrees with the spec here; nothing to compare
        try:
            got = compile_expression(raw["expr"], Environment(), check=False).evaluate({})
        except (CelError, CelCompileError) as e:
            pytest.fail(f"{case.id}: cel-python gives {want!r}, we fail: {e}")
        assert same_value(got, want), f"{case.id}: cel-python gives {want!r}, we give {got!r}"
        checked += 1
    assert checked > 500
