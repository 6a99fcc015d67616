"""scheduling-gates: kube-scheduler's SchedulingGates preEnqueue."""

from __future__ import annotations

from policysched.policy import ExtensionPoint

from .helpers import Harness, pod

PRE_ENQUEUE = ExtensionPoint.PRE_ENQUEUE


def test_ungated_pod_enters_the_queue() -> None:
    assert Harness("scheduling-gates", pod()).evaluate(PRE_ENQUEUE, "no-gates") is True
    empty = pod(spec={"schedulingGates": []})
    assert Harness("scheduling-gates", empty).evaluate(PRE_ENQUEUE, "no-gates") is True


def test_gated_pod_waits_with_kubes_message() -> None:
    gated = pod(spec={"schedulingGates": [{"name": "example.com/quota"}, {"name": "b"}]})
    h = Harness("scheduling-gates", gated)
    assert h.evaluate(PRE_ENQUEUE, "no-gates") is False
    assert h.message(PRE_ENQUEUE, "no-gates") == \
        "waiting for scheduling gates: [example.com/quota b]"
