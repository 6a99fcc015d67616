"""node-affinity: kube-scheduler's NodeAffinity filter (nodeSelector + required terms) and
preferred-terms score; the same verdicts and raw scores as the brute-force CEL policy it
replaces (reference/node-affinity.yaml) on random nodes and pods."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from policysched.cel import CelError
from policysched.model.selectors import required_node_affinity
from policysched.policy import Policy, load_policy_set
from tests.mutation import FuzzSettings

from .helpers import Cluster, Harness, kube_default_normalize, node, pod

REASON = "node(s) didn't match Pod's node affinity/selector"
ZONE = "topology.kubernetes.io/zone"


def nodes() -> list[dict[str, Any]]:
    return [node("a", labels={ZONE: "zone-a", "disk": "hdd", "cores": "8"}),
            node("b", labels={ZONE: "zone-b", "disk": "ssd", "cores": "16"}),
            node("c", labels={ZONE: "zone-c", "cores": "many"})]


def required(*terms: dict) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": list(terms)}}}


def fitting(**kw: Any) -> list[str]:
    h = Harness("node-affinity", pod(**kw), Cluster(nodes()))
    reasons = h.reasons()
    for name, reason in reasons.items():
        if reason is not None:
            assert reason == REASON
            rejection = h.filter(name)
            assert rejection is not None and rejection.unresolvable
    return [name for name, reason in reasons.items() if reason is None]


def expr(key: str, operator: str, *values: str) -> dict:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def test_no_constraints_fit_everywhere() -> None:
    assert fitting() == ["a", "b", "c"]


def test_node_selector() -> None:
    assert fitting(node_selector={"disk": "ssd"}) == ["b"]
    assert fitting(node_selector={"disk": "ssd", ZONE: "zone-a"}) == []


@pytest.mark.parametrize(("requirement", "expected"), [
    (expr(ZONE, "In", "zone-a", "zone-c"), ["a", "c"]),
    (expr(ZONE, "NotIn", "zone-a"), ["b", "c"]),
    (expr("disk", "NotIn", "ssd"), ["a", "c"]),  # c has no disk label: NotIn holds
    (expr("disk", "Exists"), ["a", "b"]),
    (expr("disk", "DoesNotExist"), ["c"]),
    (expr("cores", "Gt", "10"), ["b"]),  # "many" is not an integer: no match
    (expr("cores", "Lt", "10"), ["a"]),
    (expr("cores", "Gt", "x"), []),  # invalid value: the term matches nothing
    (expr("cores", "Gt", "1", "2"), []),
    (expr("disk", "Near", "ssd"), []),  # unknown operator
])
def test_match_expressions(requirement: dict, expected: list[str]) -> None:
    assert fitting(affinity=required({"matchExpressions": [requirement]})) == expected


def test_requirements_are_anded_terms_ored() -> None:
    anded = required({"matchExpressions": [expr("disk", "Exists"), expr(ZONE, "NotIn", "zone-a")]})
    assert fitting(affinity=anded) == ["b"]
    ored = required({"matchExpressions": [expr(ZONE, "In", "zone-a")]},
                    {"matchExpressions": [expr(ZONE, "In", "zone-c")]})
    assert fitting(affinity=ored) == ["a", "c"]


def test_empty_term_matches_nothing_and_selector_still_applies() -> None:
    assert fitting(affinity=required({})) == []
    either = required({}, {"matchExpressions": [expr("disk", "Exists")]})
    assert fitting(affinity=either) == ["a", "b"]
    assert fitting(node_selector={"disk": "hdd"},
                   affinity=required({"matchExpressions": [expr("disk", "Exists")]})) == ["a"]


def test_match_fields_metadata_name() -> None:
    assert fitting(affinity=required({"matchFields": [expr("metadata.name", "In", "b")]})) == ["b"]
    not_b = required({"matchFields": [expr("metadata.name", "NotIn", "b")]})
    assert fitting(affinity=not_b) == ["a", "c"]
    # exactly one value, and only metadata.name has a value
    two = required({"matchFields": [expr("metadata.name", "In", "a", "b")]})
    assert fitting(affinity=two) == []
    assert fitting(affinity=required({"matchFields": [expr("spec.x", "In", "a")]})) == []
    both = required({"matchExpressions": [expr("disk", "Exists")],
                     "matchFields": [expr("metadata.name", "In", "a")]})
    assert fitting(affinity=both) == ["a"]


def preferred(*weighted: tuple[int, list[dict]]) -> dict:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "preference": {"matchExpressions": reqs}} for w, reqs in weighted]}}


def test_preferred_terms_sum_their_weights_and_normalise_with_max() -> None:
    affinity = preferred((10, [expr("disk", "Exists")]), (30, [expr(ZONE, "In", "zone-b")]),
                         (5, [expr("cores", "Gt", "10")]))
    h = Harness("node-affinity", pod(affinity=affinity), Cluster(nodes()))
    assert h.pre_score()
    raw = h.raw_scores("preferred-terms")
    assert raw == {"a": 10, "b": 45, "c": 0}
    assert kube_default_normalize(raw, reverse=False) == {"a": 22, "b": 100, "c": 0}


def test_zero_weight_and_empty_preferences_are_skipped() -> None:
    affinity = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [expr("disk", "Exists")]}},
        {"weight": 7, "preference": {}}]}}
    h = Harness("node-affinity", pod(affinity=affinity), Cluster(nodes()))
    assert not h.pre_score()


def test_no_preferred_terms_skips_scoring() -> None:
    assert not Harness("node-affinity", pod(), Cluster(nodes())).pre_score()


@pytest.mark.parametrize("requirement", [
    expr(ZONE, "In", "zone-a", "zone-c"), expr("disk", "NotIn", "ssd"), expr("disk", "Exists"),
    expr("disk", "DoesNotExist"), expr("cores", "Gt", "10"), expr("cores", "Lt", "10"),
    expr("cores", "Gt", "x"), expr("cores", "Gt", "1", "2"), expr("disk", "Near", "ssd"),
])
def test_the_native_matcher_agrees(requirement: dict) -> None:
    """pod-topology-spread's nodeAffinityPolicy Honor uses model.selectors: it must mean what
    this filter means."""
    affinity = required({"matchExpressions": [requirement]})
    matcher = required_node_affinity({}, affinity)
    native = [n["name"] for n in nodes() if matcher.matches(n["labels"], n["name"])]
    assert native == fitting(affinity=affinity)


def test_gt_lt_take_any_int64() -> None:
    """kube parses Gt/Lt values and labels with strconv.ParseInt(s, 10, 64)."""
    big = [node("max", labels={"n": "9223372036854775807"}),
           node("past", labels={"n": "9223372036854775808"})]  # beyond int64: no match
    for operator, bound in (("Gt", "1000000000000000000"), ("Lt", "9223372036854775807")):
        affinity = required({"matchExpressions": [expr("n", operator, bound)]})
        reasons = Harness("node-affinity", pod(affinity=affinity), Cluster(big)).reasons()
        assert reasons == {"max": None if operator == "Gt" else REASON, "past": REASON}


def test_invalid_preferred_term_fails_pre_score() -> None:
    """kube-scheduler's PreScore returns the parse error (the pod fails with it)."""
    affinity = preferred((10, [expr("disk", "Exists")]), (5, [expr("cores", "Gt", "many")]))
    h = Harness("node-affinity", pod(affinity=affinity), Cluster(nodes()))
    with pytest.raises(CelError, match=r"invalid node affinity: .*\[1\]\.preference\."
                                       r"matchExpressions\[0\]\.values\[0\]"):
        h.pre_score()


# --------------------------------------------------------------------------- the reference

TEST = "tests/policies/test_node_affinity.py"
SETTINGS = FuzzSettings.from_environment()
REFERENCE = Path(__file__).resolve().parent / "reference" / "node-affinity.yaml"
CASES = 40  # each: 6 random nodes, 6 random pods

VALUES = {ZONE: ("zone-a", "zone-b", "zone-c"), "disk": ("hdd", "ssd"),
          "cores": ("0", "8", "16", "32", "123456789012345678", "many")}
NAMES = tuple(f"n{i}" for i in range(6))


@cache
def reference() -> Policy:
    [policy] = load_policy_set([REFERENCE]).policies
    return policy


def random_requirement(rng: random.Random) -> tuple[dict[str, Any], bool]:
    """A matchExpressions requirement and whether Kubernetes can parse it. Invalid ones are
    of the kinds the reference models (unknown operator, Gt/Lt without one integer); it
    treats others (a label key or value Kubernetes refuses, In/NotIn without values,
    Exists/DoesNotExist with values, Gt/Lt beyond 18 digits) unlike Kubernetes."""
    key = rng.choice(tuple(VALUES))
    if rng.random() < 0.1:
        return rng.choice((expr(key, "Near", "x"), expr("cores", "Gt", "many"),
                           expr("cores", "Lt", "1", "2"), expr("cores", "Gt"))), False
    operator = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
    if operator in ("In", "NotIn"):
        return expr(key, operator, *rng.sample(VALUES[key], rng.randint(1, 2))), True
    if operator in ("Exists", "DoesNotExist"):
        return expr(key, operator), True
    return expr("cores", operator, rng.choice(("0", "10", "16", "100"))), True


def random_term(rng: random.Random) -> tuple[dict[str, Any], bool]:
    """A node selector term (possibly empty) and whether Kubernetes can parse it."""
    term: dict[str, Any] = {}
    valid = True
    if rng.random() < 0.8:
        requirements = [random_requirement(rng) for _ in range(rng.randint(0, 3))]
        term["matchExpressions"] = [r for r, _ in requirements]
        valid = all(ok for _, ok in requirements)
    if rng.random() < 0.25:
        fields = []
        for _ in range(rng.randint(1, 2)):
            values = [rng.choice(NAMES)] if rng.random() < 0.9 else ["n0", "n1"]
            operator = rng.choice(("In", "NotIn")) if rng.random() < 0.9 else "Exists"
            key = rng.choice(("metadata.name", "metadata.name", "spec.x"))
            fields.append(expr(key, operator, *values))
            valid = valid and len(values) == 1 and operator != "Exists"
        term["matchFields"] = fields
    return term, valid


def random_pod(rng: random.Random) -> tuple[dict[str, Any], bool]:
    """A pod with a random nodeSelector and node affinity, and whether its preferred terms
    can all be parsed (those that count: weight not 0)."""
    selector = {k: rng.choice(VALUES[k]) for k in rng.sample(tuple(VALUES), rng.choice((0, 0, 1)))}
    node_affinity: dict[str, Any] = {}
    if rng.random() < 0.5:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [random_term(rng)[0] for _ in range(rng.randint(0, 3))]}
    preferred_valid = True
    if rng.random() < 0.6:
        weighted = []
        for _ in range(rng.randint(0, 4)):
            term, valid = random_term(rng)
            weight = rng.choice((0, 1, 7, 7, 100, 100))
            preferred_valid = preferred_valid and (valid or weight == 0)
            weighted.append({"weight": weight, "preference": term})
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = weighted
    affinity = {"nodeAffinity": node_affinity} if node_affinity else None
    return pod(node_selector=selector, affinity=affinity), preferred_valid


def random_node(rng: random.Random, name: str) -> dict[str, Any]:
    return node(name, labels={k: rng.choice(v) for k, v in VALUES.items() if rng.random() < 0.7})


@pytest.mark.parametrize("case", SETTINGS.cases(CASES))
def test_same_verdicts_and_scores_as_the_reference(case: int) -> None:
    rng = SETTINGS.rng(TEST, case)
    cluster = Cluster([random_node(rng, name) for name in NAMES])
    for _ in range(6):
        the_pod, preferred_valid = random_pod(rng)
        new = Harness("node-affinity", the_pod, cluster)
        old = Harness(reference(), the_pod, cluster)
        where = f"case {case} ({SETTINGS.reproduce(TEST, case)}): pod {the_pod['spec']}"
        assert new.reasons() == old.reasons(), where
        if not preferred_valid:  # the reference scores such terms 0; kube fails the pod
            with pytest.raises(CelError, match="invalid node affinity"):
                new.pre_score()
            continue
        assert new.pre_score() == old.pre_score(), where
        assert new.raw_scores() == old.raw_scores(), where
