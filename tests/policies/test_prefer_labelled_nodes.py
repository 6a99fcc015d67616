"""prefer-labelled-nodes: the custom score configured per profile."""

from __future__ import annotations

from .helpers import Cluster, Harness, node, pod

ZONE = "topology.kubernetes.io/zone"


def nodes() -> list[dict]:
    return [node("a", labels={ZONE: "zone-a", "policysched.io/preferred": ""}),
            node("b", labels={ZONE: "zone-b"}), node("c", labels={ZONE: "zone-c"})]


def test_default_params_prefer_the_label() -> None:
    assert Harness("prefer-labelled-nodes", pod(), Cluster(nodes())).raw_scores() == {
        "a": 100, "b": 0, "c": 0}


def test_profile_params_override() -> None:
    h = Harness("prefer-labelled-nodes", pod(), Cluster(nodes()),
                params={"labelKey": ZONE, "values": ["zone-b", "zone-c"]})
    assert h.raw_scores() == {"a": 0, "b": 100, "c": 100}
