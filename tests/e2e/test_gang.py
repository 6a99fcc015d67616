"""Gang scheduling (seeds/003, the built-in ``coscheduling`` policy) on the real API server
(KWOK nodes) through ``policysched run``: PodGroups of the minimal CRD
(tests/e2e/podgroup-crd.yaml) bound together, and a gang that times out after its
PodGroup's ``scheduleTimeoutSeconds`` releasing the room it held to the pod it kept out.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from . import support
from .conftest import figure
from .test_scheduling import POOL, _bound, _create, _message, _node_of, _rejected

pytestmark = pytest.mark.e2e

POD_GROUP = "scheduling.x-k8s.io/pod-group"
PERMIT_WAITS = "scheduler_framework_extension_point_duration_seconds_count"
WAIT_LABELS = {"extension_point": "Permit", "status": "Wait", "profile": "policysched"}
FLUSH = 300.0  # seconds: kube-scheduler's podMaxInUnschedulablePodsDuration


def _pod_group(api: Any, namespace: str, name: str, min_member: int,
               timeout: int | None = None) -> None:
    from kubernetes import client

    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    client.CustomObjectsApi(api).create_namespaced_custom_object(
        "scheduling.x-k8s.io", "v1alpha1", namespace, "podgroups",
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": name}, "spec": spec})


def _permit_waits(scheduler: support.SchedulerProcess) -> float:
    """How many times permit held a pod so far (the Permit/Wait extension-point count)."""
    return support.metric_value(scheduler.metrics(), PERMIT_WAITS, WAIT_LABELS) or 0.0


def test_gang_binds_only_when_all_members_exist(scheduler: support.SchedulerProcess,
                                                admin_api: Any, namespace: str) -> None:
    """A PodGroup of minMember 3: two members wait (pre-filter: not enough siblings), the
    third makes all three bind together."""
    _pod_group(admin_api, namespace, "gang", 3)
    member = {POD_GROUP: "gang"}
    for i in range(2):
        _create(admin_api, namespace, support.pod(f"gang-{i}", labels=member))
    # (the first attempt of gang-1 may still count 1 sibling; a retry sees both)
    held = _rejected(admin_api, namespace, "gang-1", "current pods number: 2")
    assert _message(held).startswith(
        "0/3 nodes are available: pre-filter pod gang-1 cannot find enough sibling pods, "
        "current pods number: 2, minMember of group: 3."), _message(held)
    assert _node_of(admin_api, namespace, "gang-0") is None
    _create(admin_api, namespace, support.pod("gang-2", labels=member))
    bound_at = []
    for i in range(3):
        _bound(admin_api, namespace, f"gang-{i}")
        bound_at.append(time.monotonic())
    figure("gang of 3: members bound within", f"{max(bound_at) - min(bound_at):.2f} s")


def test_a_timed_out_gang_releases_the_room_to_the_pod_it_kept_out(
        scheduler: support.SchedulerProcess, admin_api: Any, namespace: str,
        make_node: Any) -> None:
    """A node of 2 CPUs; a gang of 3 with scheduleTimeoutSeconds 5, one member too big for
    any node: the other two hold the node's CPUs at permit, so a 2-CPU pod does not fit.
    After 5 s the gang is rejected (kube-scheduler's and scheduler-plugins' texts), its
    reservations are released, and the pod kept out binds at once — not at the 5-minute
    flush of unschedulable pods."""
    make_node(support.unique("e2e-gang"), cpu="2", labels={POOL: namespace})
    in_pool = {POOL: namespace}
    timeout = 5
    _pod_group(admin_api, namespace, "train", 3, timeout=timeout)
    member = {POD_GROUP: "train"}
    waits = _permit_waits(scheduler)
    _create(admin_api, namespace, support.pod("train-big", labels=member, cpu="64"))
    for i in range(2):
        _create(admin_api, namespace, support.pod(f"train-{i}", labels=member, cpu="1",
                                                  node_selector=in_pool))
    # the gang's time-out runs from its first member's wait (the other may come a backoff
    # later: its first attempt may have counted too few siblings)
    scheduler.wait("a member waiting at permit",
                   lambda: _permit_waits(scheduler) >= waits + 1, 30.0)
    waiting_since = time.monotonic()
    scheduler.wait("the two members that fit waiting at permit",
                   lambda: _permit_waits(scheduler) >= waits + 2, 30.0)
    _create(admin_api, namespace, support.pod("held", cpu="2", node_selector=in_pool))
    _rejected(admin_api, namespace, "held", "Insufficient cpu")
    held = _bound(admin_api, namespace, "held", timeout=timeout + 30.0)
    after = time.monotonic() - waiting_since
    figure(f"gang time-out ({timeout} s): the pod it kept out bound after", f"{after:.1f} s")
    assert timeout - 1.0 <= after < timeout + 15.0 < FLUSH
    assert held.spec.node_name.startswith("e2e-gang")
    messages = sorted(_message(_rejected(admin_api, namespace, f"train-{i}", "0/1 nodes"))
                      for i in range(2))
    assert messages == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin "
        "coscheduling/gang.",
        "0/1 nodes are available: 1 rejection in Unreserve."], messages
    assert all(_node_of(admin_api, namespace, f"train-{i}") is None for i in range(2))
