"""node-name: kube-scheduler's NodeName filter."""

from __future__ import annotations

from .helpers import Cluster, Harness, node, pod

REASON = "node(s) didn't match the requested node name"


def test_no_node_name_fits_everywhere() -> None:
    h = Harness("node-name", pod(), Cluster([node("a"), node("b")]))
    assert h.reasons() == {"a": None, "b": None}


def test_node_name_fits_only_that_node() -> None:
    h = Harness("node-name", pod(node_name="b"), Cluster([node("a"), node("b")]))
    assert h.reasons() == {"a": REASON, "b": None}
    rejection = h.filter("a")
    assert rejection is not None and rejection.unresolvable
