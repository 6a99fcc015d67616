"""The built-in policies scheduling real pods on a real API server (KWOK nodes), through
``policysched run`` with its ServiceAccount identity: the articles' scenarios (seeds 000-003:
the delay annotation, host ports, taints, node affinity, preemption, the FailedScheduling
event; gang scheduling is in test_gang.py). Each scenario has its own namespace; the three
cluster nodes are kwok-node-0/1/2 in zones a/b/c, 4 CPU each; a scenario that needs a node
to itself creates one and deletes it after.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from . import support
from .conftest import figure

pytestmark = pytest.mark.e2e

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
POOL = "e2e.policysched.io/pool"
BIND_TIMEOUT = 30.0  # seconds for a schedulable pod to be bound (normally well under 1 s)
REJECT_TIMEOUT = 30.0  # … for an unschedulable pod to get its PodScheduled=False condition


def _core(api: Any) -> Any:
    from kubernetes import client

    core: Any = client.CoreV1Api(api)
    return core


def _create(api: Any, namespace: str, manifest: dict[str, Any]) -> Any:
    return _core(api).create_namespaced_pod(namespace, manifest)


def _bound(api: Any, namespace: str, name: str, timeout: float = BIND_TIMEOUT) -> Any:
    return support.wait_for_pod(_core(api), namespace, name, support.is_bound, timeout,
                                "bound to a node")


def _rejected(api: Any, namespace: str, name: str, text: str,
              timeout: float = REJECT_TIMEOUT) -> Any:
    def check(pod: Any) -> bool:
        assert not pod.spec.node_name, f"{name} was bound to {pod.spec.node_name}"
        return support.unschedulable_with(text)(pod)

    return support.wait_for_pod(_core(api), namespace, name, check, timeout,
                                f"PodScheduled=False with {text!r}")


def _message(pod: Any) -> str:
    condition = support.scheduled_condition(pod)
    return str(condition.message if condition is not None else "")


def _node_of(api: Any, namespace: str, name: str) -> str | None:
    return _core(api).read_namespaced_pod(name, namespace).spec.node_name


# ------------------------------------------------------------------------------ seeds/000


def test_delay_annotation_binds_15s_after_creation(scheduler: support.SchedulerProcess,
                                                   admin_api: Any, namespace: str) -> None:
    """The article's delay preFilter: a pod annotated ``delay: "15"`` is held, then bound
    15 ± 1 s after its creationTimestamp (retryAfter requeues it exactly then)."""
    created = _create(admin_api, namespace, support.pod("delayed", annotations={"delay": "15"}))
    creation = created.metadata.creation_timestamp.timestamp()
    held = _rejected(admin_api, namespace, "delayed", "delay not reached")
    assert _message(held) == "0/3 nodes are available: delay not reached."
    bound = _bound(admin_api, namespace, "delayed", timeout=45)
    after = time.time() - creation
    figure("delay annotation 15 s: bound after creation", f"{after:.2f} s")
    assert 14.0 <= after <= 16.0, f"bound {after:.2f} s after creation, expected 15 ± 1 s"
    assert bound.spec.node_name in {"kwok-node-0", "kwok-node-1", "kwok-node-2"}


# ------------------------------------------------------------------------------ NodePorts


def test_host_port_conflict(scheduler: support.SchedulerProcess, admin_api: Any,
                            namespace: str) -> None:
    """Two pods asking for the same host port on the same node: the second stays pending
    with the NodePorts reason; another port on that node is fine."""
    on_node0 = {HOSTNAME: "kwok-node-0"}
    _create(admin_api, namespace, support.pod("port-a", host_port=30080, node_selector=on_node0))
    assert _bound(admin_api, namespace, "port-a").spec.node_name == "kwok-node-0"
    _create(admin_api, namespace, support.pod("port-b", host_port=30080, node_selector=on_node0))
    pending = _rejected(admin_api, namespace, "port-b",
                        "didn't have free ports for the requested pod ports")
    assert _message(pending) == (
        "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod "
        "ports, 2 node(s) didn't match Pod's node affinity/selector. no new claims to "
        "deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for "
        "incoming pod, 2 Preemption is not helpful for scheduling.")
    _create(admin_api, namespace, support.pod("port-c", host_port=30081, node_selector=on_node0))
    assert _bound(admin_api, namespace, "port-c").spec.node_name == "kwok-node-0"
    assert _node_of(admin_api, namespace, "port-b") is None


# ------------------------------------------------------------------------------ TaintToleration


def test_taints_and_tolerations(scheduler: support.SchedulerProcess, admin_api: Any,
                                namespace: str, make_node: Any) -> None:
    """A NoSchedule taint keeps every pod off a node but those tolerating it."""
    key = "e2e.policysched.io/dedicated"
    tainted = make_node(support.unique("e2e-tainted"), labels={POOL: namespace},
                        taints=[{"key": key, "value": namespace, "effect": "NoSchedule"}])
    toleration = [{"key": key, "operator": "Equal", "value": namespace,
                   "effect": "NoSchedule"}]
    in_pool = {POOL: namespace}
    _create(admin_api, namespace, support.pod("tolerating", node_selector=in_pool,
                                              tolerations=toleration))
    assert _bound(admin_api, namespace, "tolerating").spec.node_name == tainted
    _create(admin_api, namespace, support.pod("intolerant", node_selector=in_pool))
    pending = _rejected(admin_api, namespace, "intolerant", "had untolerated taint")
    assert _message(pending).startswith(
        "0/4 nodes are available: 1 node(s) had untolerated taint"), _message(pending)
    assert "3 node(s) didn't match Pod's node affinity/selector." in _message(pending)
    # Without a selector, pods go anywhere but the tainted node.
    for i in range(4):
        _create(admin_api, namespace, support.pod(f"free-{i}"))
    for i in range(4):
        assert _bound(admin_api, namespace, f"free-{i}").spec.node_name != tainted


# ------------------------------------------------------------------------------ NodeAffinity


def test_node_affinity(scheduler: support.SchedulerProcess, admin_api: Any,
                       namespace: str) -> None:
    """Required node affinity picks the zone; preferred affinity steers the score; an
    affinity no node satisfies leaves the pod pending with NodeAffinity's reason."""
    def affinity(kind: str, zone: str) -> dict[str, Any]:
        term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
        if kind == "required":
            return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [term]}}}
        return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": term}]}}

    _create(admin_api, namespace, support.pod("needs-b", affinity=affinity("required", "zone-b")))
    _create(admin_api, namespace, support.pod("likes-c", affinity=affinity("preferred", "zone-c")))
    _create(admin_api, namespace, support.pod("needs-z", affinity=affinity("required", "zone-z")))
    assert _bound(admin_api, namespace, "needs-b").spec.node_name == "kwok-node-1"
    assert _bound(admin_api, namespace, "likes-c").spec.node_name == "kwok-node-2"
    pending = _rejected(admin_api, namespace, "needs-z", "didn't match Pod's node affinity")
    assert _message(pending) == (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is "
        "not helpful for scheduling.")


# ------------------------------------------------------------------------------ preemption


def test_preemption_of_a_lower_priority_pod(scheduler: support.SchedulerProcess,
                                            admin_api: Any, namespace: str, make_node: Any,
                                            make_priority_class: Any) -> None:
    """A 1-CPU node holds a low-priority pod; a high-priority pod that only fits there
    deletes it (a DisruptionTarget condition, then a delete, a Preempted event) and is bound
    in its place — though a PodDisruptionBudget allows no disruption of the victim: as
    kube-scheduler, preemption weighs budgets but does not go through the Eviction API,
    which would refuse."""
    small = make_node(support.unique("e2e-small"), cpu="1", labels={POOL: namespace})
    low = make_priority_class(support.unique("e2e-low"), 100)
    high = make_priority_class(support.unique("e2e-high"), 1000)
    in_pool = {POOL: namespace}
    from kubernetes import client

    client.PolicyV1Api(admin_api).create_namespaced_pod_disruption_budget(namespace, {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep-victim"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "victim"}}}})
    _create(admin_api, namespace, support.pod("victim", cpu="800m", priority_class=low,
                                              node_selector=in_pool, labels={"app": "victim"}))
    victim = _bound(admin_api, namespace, "victim")
    assert victim.spec.node_name == small
    started = time.monotonic()
    _create(admin_api, namespace, support.pod("preemptor", cpu="800m", priority_class=high,
                                              node_selector=in_pool))
    support.wait_for_deletion(_core(admin_api), namespace, "victim", uid=victim.metadata.uid,
                              timeout=BIND_TIMEOUT)
    preemptor = _bound(admin_api, namespace, "preemptor")
    figure("preemption: high-priority pod bound after", f"{time.monotonic() - started:.2f} s")
    assert preemptor.spec.node_name == small
    assert preemptor.status.nominated_node_name == small
    event = support.wait_for_event(
        client.EventsV1Api(admin_api), namespace,
        lambda e: e.reason == "Preempted" and e.regarding.name == "victim", BIND_TIMEOUT,
        "a Preempted event on the victim")
    assert event.type == "Normal"
    assert event.note == f"Preempted by pod {preemptor.metadata.uid} on node {small}"


# ------------------------------------------------------------------------------ Events


def test_failed_scheduling_event(scheduler: support.SchedulerProcess, admin_api: Any,
                                 namespace: str) -> None:
    """An unschedulable pod gets an events.k8s.io/v1 FailedScheduling Warning with
    kube-scheduler's text; a schedulable one a Scheduled event."""
    from kubernetes import client

    events = client.EventsV1Api(admin_api)
    too_big = _create(admin_api, namespace, support.pod("too-big", cpu="64"))
    expected = ("0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, "
                "preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
                "scheduling.")
    event = support.wait_for_event(
        events, namespace,
        lambda e: e.reason == "FailedScheduling" and e.regarding.name == "too-big",
        REJECT_TIMEOUT, "a FailedScheduling event")
    assert event.type == "Warning"
    assert event.note == expected
    assert event.action == "Scheduling"
    assert event.reporting_controller == "policysched"
    assert event.regarding.kind == "Pod" and event.regarding.uid == too_big.metadata.uid
    assert _message(_core(admin_api).read_namespaced_pod("too-big", namespace)) == expected

    _create(admin_api, namespace, support.pod("fits"))
    node = _bound(admin_api, namespace, "fits").spec.node_name
    scheduled = support.wait_for_event(
        events, namespace, lambda e: e.reason == "Scheduled" and e.regarding.name == "fits",
        BIND_TIMEOUT, "a Scheduled event")
    assert scheduled.type == "Normal"
    assert scheduled.note == f"Successfully assigned {namespace}/fits to {node}"
