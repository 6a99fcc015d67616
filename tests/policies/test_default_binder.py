"""default-binder: bind to the chosen node."""

from __future__ import annotations

from policysched.policy import ExtensionPoint

from .helpers import Cluster, Harness, node, pod


def test_binds_to_the_chosen_node() -> None:
    h = Harness("default-binder", pod(), Cluster([node("a"), node("b")]))
    [rule] = h.rules(ExtensionPoint.BIND)
    assert rule.expression is None  # always applies
    assert h.evaluate(ExtensionPoint.BIND, "binding", "target", the_node="b") == "b"
