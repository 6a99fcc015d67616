"""zone-a-first: the contract's node-level example, verbatim
(docs/architecture.md#the-node-level-example)."""

from __future__ import annotations

from typing import Any

from policysched.policy import ExtensionPoint

from .helpers import Cluster, Harness, load, node, pod

ZONE = "topology.kubernetes.io/zone"


def test_document_is_the_design_contract() -> None:
    policy = load("zone-a-first")
    f: Any
    s: Any
    [f] = policy.rules_for(ExtensionPoint.FILTER)
    [s] = policy.rules_for(ExtensionPoint.SCORE)
    assert (f.name, f.expression.text, f.reason) == (
        "not-cordoned", "!node.unschedulable", "node(s) were unschedulable")
    assert (s.name, s.weight) == ("prefer-zone-a", 2)
    assert s.expression.text == "node.labels['topology.kubernetes.io/zone'] == 'zone-a' ? 100 : 0"


def test_filter_and_score() -> None:
    nodes = [node("a1", labels={ZONE: "zone-a"}),
             node("a2", labels={ZONE: "zone-a"}, unschedulable=True),
             node("b1", labels={ZONE: "zone-b"})]
    h = Harness("zone-a-first", pod(), Cluster(nodes))
    assert h.reasons() == {"a1": None, "a2": "node(s) were unschedulable", "b1": None}
    assert h.raw_scores() == {"a1": 100, "a2": 100, "b1": 0}
