"""default-preemption: kube-scheduler's DefaultPreemption eligibility and victim rule."""

from __future__ import annotations

import pytest

from policysched.policy import ExtensionPoint

from .helpers import Cluster, Harness, node, pod

POST_FILTER = ExtensionPoint.POST_FILTER


def harness(the_pod: dict) -> Harness:
    return Harness("default-preemption", the_pod, Cluster([node("a")]))


@pytest.mark.parametrize(("spec", "eligible"), [
    ({}, True), ({"preemptionPolicy": "PreemptLowerPriority"}, True),
    ({"preemptionPolicy": "Never"}, False)])
def test_preemption_policy(spec: dict, eligible: bool) -> None:
    h = harness(pod(priority=100, spec=spec))
    assert h.evaluate(POST_FILTER, "lower-priority") is eligible
    assert h.message(POST_FILTER, "lower-priority") == "not eligible due to preemptionPolicy=Never."


@pytest.mark.parametrize(("victim", "allowed"),
                         [(99, True), (100, False), (101, False), (-5, True)])
def test_only_strictly_lower_priority_victims(victim: int, allowed: bool) -> None:
    h = harness(pod(priority=100))
    result = h.evaluate(POST_FILTER, "lower-priority", "victims", the_node="a",
                        victim=pod("v", priority=victim, node_name="a"))
    assert result is allowed
