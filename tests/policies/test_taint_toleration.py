"""taint-toleration: kube-scheduler's TaintToleration filter and PreferNoSchedule score; the
same verdicts and raw scores as the brute-force CEL policy it replaces
(reference/taint-toleration.yaml) on random nodes and pods."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from policysched.framework.runtime import normalise
from policysched.policy import Normalization, Policy, load_policy_set
from tests.mutation import FuzzSettings

from .helpers import Cluster, Harness, kube_default_normalize, node, pod

REASON = "node(s) had untolerated taint(s)"


def verdict(taints: list[dict], tolerations: list[dict]) -> str | None:
    h = Harness("taint-toleration", pod(tolerations=tolerations),
                Cluster([node("a", taints=taints)]))
    rejection = h.filter("a")
    if rejection is not None:
        assert rejection.unresolvable
    return rejection.reason if rejection else None


GPU = {"key": "gpu", "value": "true", "effect": "NoSchedule"}


def test_untainted_node_fits() -> None:
    assert verdict([], []) is None


@pytest.mark.parametrize("effect", ["NoSchedule", "NoExecute"])
def test_untolerated_taint_rejects_with_v134_reason(effect: str) -> None:
    assert verdict([{**GPU, "effect": effect}], []) == REASON


def test_prefer_no_schedule_does_not_filter() -> None:
    assert verdict([{**GPU, "effect": "PreferNoSchedule"}], []) is None


@pytest.mark.parametrize("toleration", [
    {"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
    {"key": "gpu", "operator": "Equal", "value": "true"},
    {"key": "gpu", "operator": "", "value": "true"},
    {"key": "gpu", "operator": "Exists"},
    {"operator": "Exists"},
    {"operator": "Exists", "effect": "NoSchedule"},
])
def test_matching_tolerations(toleration: dict) -> None:
    assert verdict([GPU], [toleration]) is None


@pytest.mark.parametrize("toleration", [
    {"key": "gpu", "operator": "Equal", "value": "false"},
    {"key": "gpu", "operator": "Exists", "effect": "NoExecute"},
    {"key": "tpu", "operator": "Exists"},
    {"key": "gpu", "operator": "Lt", "value": "true"},
])
def test_non_matching_tolerations(toleration: dict) -> None:
    assert verdict([GPU], [toleration]) == REASON


def test_every_taint_must_be_tolerated() -> None:
    taints = [GPU, {"key": "zone", "value": "x", "effect": "NoExecute"}]
    assert verdict(taints, [{"key": "gpu", "operator": "Exists"}]) == REASON
    assert verdict(taints, [{"key": "gpu", "operator": "Exists"},
                            {"key": "zone", "operator": "Exists"}]) is None


def test_score_counts_untolerated_prefer_no_schedule_taints() -> None:
    prefer = [{"key": k, "value": "", "effect": "PreferNoSchedule"} for k in ("a", "b", "c")]
    nodes = [node("none"), node("one", taints=prefer[:1]), node("three", taints=prefer),
             node("hard", taints=[GPU])]
    h = Harness("taint-toleration", pod(tolerations=[{"key": "b", "operator": "Exists",
                                                     "effect": "PreferNoSchedule"},
                                                    {"key": "c", "operator": "Exists",
                                                     "effect": "NoSchedule"}]),
                Cluster(nodes))
    raw = h.raw_scores("prefer-no-schedule")
    # b is tolerated; c only for NoSchedule, so it still counts; hard taints are not scored
    assert raw == {"none": 0, "one": 1, "three": 2, "hard": 0}
    assert kube_default_normalize(raw, reverse=True) == {"none": 100, "one": 50, "three": 0,
                                                        "hard": 100}
    engine = normalise(list(raw.values()), Normalization.REVERSE)
    assert [int(x) for x in engine] == [100, 50, 0, 100]


def test_all_zero_scores_normalise_to_100() -> None:
    assert [int(x) for x in normalise([0, 0], Normalization.REVERSE)] == [100, 100]


def test_reverse_normalisation_rounds_as_kube() -> None:
    raw = {"a": 1, "b": 3}
    assert kube_default_normalize(raw, reverse=True) == {"a": 67, "b": 0}
    assert [int(x) for x in normalise([1, 3], Normalization.REVERSE)] == [67, 0]


# --------------------------------------------------------------------------- the reference

TEST = "tests/policies/test_taint_toleration.py"
SETTINGS = FuzzSettings.from_environment()
REFERENCE = Path(__file__).resolve().parent / "reference" / "taint-toleration.yaml"
CASES = 30  # each: 6 random nodes, 6 random pods

KEYS = ("gpu", "spot", "zone")
VALUES = ("", "true", "x")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@cache
def reference() -> Policy:
    [policy] = load_policy_set([REFERENCE]).policies
    return policy


def random_toleration(rng: random.Random) -> dict[str, Any]:
    toleration = {"key": rng.choice(("", *KEYS)), "operator": rng.choice(("", "Equal", "Exists",
                                                                         "Lt")),
                  "value": rng.choice(VALUES), "effect": rng.choice(("", *EFFECTS))}
    return {k: v for k, v in toleration.items() if v or rng.random() < 0.5}


def random_taint(rng: random.Random) -> dict[str, str]:
    return {"key": rng.choice(KEYS), "value": rng.choice(VALUES), "effect": rng.choice(EFFECTS)}


@pytest.mark.parametrize("case", SETTINGS.cases(CASES))
def test_same_verdicts_and_scores_as_the_reference(case: int) -> None:
    rng = SETTINGS.rng(TEST, case)
    cluster = Cluster([node(f"n{i}", taints=[random_taint(rng) for _ in range(rng.randint(0, 3))])
                       for i in range(6)])
    for _ in range(6):
        the_pod = pod(tolerations=[random_toleration(rng) for _ in range(rng.randint(0, 3))])
        new = Harness("taint-toleration", the_pod, cluster)
        old = Harness(reference(), the_pod, cluster)
        where = f"case {case} ({SETTINGS.reproduce(TEST, case)}): {the_pod['tolerations']}"
        assert new.reasons() == old.reasons(), where
        assert new.raw_scores() == old.raw_scores(), where
