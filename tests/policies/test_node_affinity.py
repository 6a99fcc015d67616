"""node-affinity: kube-scheduler's NodeAffinity filter (nodeSelector + required terms) and
preferred-terms score."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.model.selectors import required_node_affinity

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
