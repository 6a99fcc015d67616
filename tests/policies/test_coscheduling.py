"""coscheduling: scheduler-plugins' Coscheduling (PreFilter sibling count, gang permit)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.policy import ExtensionPoint

from .helpers import Cluster, Harness, node, pod

LABEL = "scheduling.x-k8s.io/pod-group"
PERMIT = ExtensionPoint.PERMIT


def member(name: str, group: str = "train", min_member: int = 3, exists: bool = True,
           **kw: Any) -> dict[str, Any]:
    pod_group = {"name": group, "minMember": min_member if exists else 0,
                 "scheduleTimeoutSeconds": 0}
    return pod(name, labels={LABEL: group}, pod_group=pod_group, **kw)


def harness(the_pod: dict, others: list[dict]) -> Harness:
    return Harness("coscheduling", the_pod, Cluster([node("a")]), all_pods=[the_pod, *others])


def test_only_labelled_pods_match() -> None:
    assert harness(member("m0"), []).matches()
    assert not Harness("coscheduling", pod()).matches()


def test_enough_siblings_pass_pre_filter() -> None:
    siblings = [member("m1"), member("m2", node_name="a")]  # bound members count too
    assert harness(member("m0"), siblings).pre_filter() is None


def test_too_few_siblings_are_rejected_with_scheduler_plugins_message() -> None:
    others = [member("m1"), member("x0", group="other"), member("m9", namespace="prod")]
    rejection = harness(member("m0"), others).pre_filter()
    assert rejection is not None and rejection.unresolvable
    assert rejection.reason == ("pre-filter pod m0 cannot find enough sibling pods, "
                                "current pods number: 2, minMember of group: 3")


def test_pod_group_that_does_not_exist_passes_pre_filter_and_is_denied_at_permit() -> None:
    h = harness(member("m0", exists=False), [])
    assert h.pre_filter() is None
    assert h.evaluate(PERMIT, "pod-group-exists", the_node="a") is False
    assert h.message(PERMIT, "pod-group-exists") == "PodGroup not found"


def test_gang_permit_rule() -> None:
    h = harness(member("m0", min_member=4), [])
    assert h.evaluate(PERMIT, "pod-group-exists", the_node="a") is True
    assert h.evaluate(PERMIT, "gang", "group", the_node="a") == "train"
    assert h.evaluate(PERMIT, "gang", "min_member", the_node="a") == 4


@pytest.mark.parametrize(("timeout", "wait"), [(0, 60), (3, 3), (600, 600)])
def test_the_wait_is_the_pod_groups_schedule_timeout_else_the_plugin_default(
        timeout: int, wait: int) -> None:
    """util.GetWaitTimeDuration: spec.scheduleTimeoutSeconds when set (not 0), else
    permitWaitingTimeSeconds (CoschedulingArgs' default 60)."""
    the_pod = member("m0")
    the_pod["podGroup"]["scheduleTimeoutSeconds"] = timeout
    h = harness(the_pod, [])
    assert h.evaluate(PERMIT, "gang", "timeout_seconds", the_node="a") == wait
