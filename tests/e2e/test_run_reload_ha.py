"""``policysched run`` as deployed: policies hot-reloaded from the ConfigMaps of
deploy/policies-configmap.yaml, and two replicas on one Lease of which only one binds.

These are the process-level counterparts of test_reload_leader.py (which drives
``Reloader`` and ``LeaderElector`` in process and measures their latency distribution): here
the ServiceAccount-run scheduler must *behave* differently after a ConfigMap edit, keep the
last good set after a bad one, and two real processes must never both bind.
"""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from . import support
from .conftest import figure

pytestmark = pytest.mark.e2e

NS = support.SYSTEM_NAMESPACE
CONFIGMAP = "policysched-policy-delay"
KEY = "delay.yaml"
MESSAGE = "message: delay not reached"
EXPRESSION = "expression: now - pod.creationTimestamp >= int(pod.annotations.delay)"
ACTIVE_SET = "policysched_active_policy_set_info"
RELOADS = "policysched_policy_reloads_total"
RELOAD_SECONDS = "policysched_policy_reload_duration_seconds"
RELOAD_TIMEOUT = 15.0  # seconds for a change to become active (the goal is < 1 s)


def _core(api: Any) -> Any:
    from kubernetes import client

    core: Any = client.CoreV1Api(api)
    return core


def _active_version(metrics: str) -> str | None:
    for labels in support.metric_labels(metrics, ACTIVE_SET):
        if support.metric_value(metrics, ACTIVE_SET, labels) == 1.0:
            return labels.get("version")
    return None


def _wait_for_version(scheduler: support.SchedulerProcess, check: Any, what: str) -> str:
    found: list[str] = []

    def changed() -> bool:
        version = _active_version(scheduler.metrics())
        if version is not None and check(version):
            found.append(version)
            return True
        return False

    scheduler.wait(what, changed, RELOAD_TIMEOUT)
    return found[0]


def _write(api: Any, text: str) -> str:
    """Set the delay policy's ConfigMap key; the ConfigMap's new resourceVersion."""
    patched = _core(api).patch_namespaced_config_map(CONFIGMAP, NS, {"data": {KEY: text}})
    return str(patched.metadata.resource_version)


def _pending_message(api: Any, namespace: str, name: str, text: str) -> str:
    _core(api).create_namespaced_pod(namespace, support.pod(name, annotations={"delay": "3600"}))
    pod = support.wait_for_pod(_core(api), namespace, name, support.unschedulable_with(text),
                               30, f"PodScheduled=False with {text!r}")
    return str(support.scheduled_condition(pod).message)


def test_hot_reload_applies_a_good_change_and_keeps_it_over_a_bad_one(
        scheduler: support.SchedulerProcess, admin_api: Any, namespace: str) -> None:
    from kubernetes import client

    original = _core(admin_api).read_namespaced_config_map(CONFIGMAP, NS).data[KEY]
    assert MESSAGE in original and EXPRESSION in original
    before = scheduler.metrics()
    first_version = _active_version(before)
    assert first_version is not None, "no policysched_active_policy_set_info on /metrics"
    failures = support.metric_value(before, RELOADS, {"result": "failure"}) or 0.0
    count = support.metric_value(before, f"{RELOAD_SECONDS}_count") or 0.0
    total = support.metric_value(before, f"{RELOAD_SECONDS}_sum") or 0.0
    good = original.replace(MESSAGE, MESSAGE + " (reloaded)", 1)
    try:
        # A good change: active within a second, and the scheduler behaves accordingly.
        written = time.monotonic()
        _write(admin_api, good)
        good_version = _wait_for_version(scheduler, lambda v: v != first_version,
                                         "the good change to become active")
        latency = time.monotonic() - written
        after = scheduler.metrics()
        in_process = ((support.metric_value(after, f"{RELOAD_SECONDS}_sum") or 0.0) - total) / \
            max(1.0, (support.metric_value(after, f"{RELOAD_SECONDS}_count") or 0.0) - count)
        figure("hot reload: ConfigMap write → new set active (seen on /metrics)",
               f"{latency * 1000:.0f} ms (in process, change observed → active: "
               f"{in_process * 1000:.0f} ms)")
        assert latency <= 5.0
        assert _pending_message(admin_api, namespace, "after-good", "delay not reached") == \
            "0/3 nodes are available: delay not reached (reloaded)."

        # A bad change: rejected with an Event naming the key and line; the last good set
        # stays active and keeps scheduling.
        line = good.splitlines().index(
            next(x for x in good.splitlines() if EXPRESSION in x)) + 1
        bad_version = _write(admin_api, good.replace(EXPRESSION, EXPRESSION + " &&", 1))
        event = support.wait_for_event(
            client.EventsV1Api(admin_api), NS,
            lambda e: (e.reason == "PolicyRejected" and e.regarding.name == CONFIGMAP
                       and e.regarding.resource_version == bad_version),
            RELOAD_TIMEOUT, "a PolicyRejected event on the ConfigMap")
        assert event.type == "Warning"
        assert (event.note or "").startswith(f"{NS}/{CONFIGMAP}[{KEY}]:{line}:"), event.note
        rejected = scheduler.metrics()
        assert support.metric_value(rejected, RELOADS, {"result": "failure"}) == failures + 1
        assert _active_version(rejected) == good_version
        assert scheduler.get("/readyz")[0] == 200
        assert _pending_message(admin_api, namespace, "after-bad", "delay not reached") == \
            "0/3 nodes are available: delay not reached (reloaded)."
    finally:
        _write(admin_api, original)
    _wait_for_version(scheduler, lambda v: v == first_version, "the original set back")


# ------------------------------------------------------------------------------ replicas


BOUND = re.compile(r"\bbound (?P<pod>\S+) to (?P<node>\S+) \(attempt")
HA_PROFILE = "policysched-ha"
FAST_LEASE = (4, 3, 1)  # leaseDuration, renewDeadline, retryPeriod (seconds)


def _bound_by(replica: support.SchedulerProcess, namespace: str) -> list[str]:
    return [m.group("pod").split("/", 1)[1] for m in BOUND.finditer(replica.log_text())
            if m.group("pod").startswith(namespace + "/")]


def _replica(name: str, cluster: support.Cluster, kubeconfig: Path,
             lease: str) -> support.SchedulerProcess:
    port = support.free_port()
    config = support.render_config(cluster.dir / f"{name}-config.yaml", port=port,
                                   lease_name=lease, scheduler_name=HA_PROFILE,
                                   lease_seconds=FAST_LEASE)
    return support.SchedulerProcess(name, cluster.dir, kubeconfig, config, port)


def _create_and_bind(api: Any, namespace: str, names: list[str],
                     binder: support.SchedulerProcess) -> None:
    """Create the pods, wait until they are bound, and until ``binder`` logged binding
    them (its log line may come a moment after the watch saw the binding)."""
    for name in names:
        _core(api).create_namespaced_pod(namespace, support.pod(name, cpu="10m",
                                                                scheduler_name=HA_PROFILE))
    for name in names:
        support.wait_for_pod(_core(api), namespace, name, support.is_bound, 30, "bound")
    binder.wait(f"log lines binding {names}",
                lambda: set(names) <= set(_bound_by(binder, namespace)), 10)


def _scheduled_by(api: Any, namespace: str, names: list[str]) -> set[str]:
    """The reportingInstance of the Scheduled events of ``names`` (once each has one)."""
    from kubernetes import client

    events: Any = client.EventsV1Api(api)
    instances: dict[str, str] = {}
    for name in names:
        def scheduled(e: Any, pod: str = name) -> bool:
            return bool(e.reason == "Scheduled" and e.regarding.name == pod)

        event = support.wait_for_event(events, namespace, scheduled, 30,
                                       f"a Scheduled event for {name}")
        instances[name] = str(event.reporting_instance)
    return set(instances.values())


def test_two_replicas_only_the_leader_binds_and_the_other_takes_over(
        installed: support.Cluster, sa_kubeconfig: Path, admin_api: Any,
        namespace: str) -> None:
    """Two `policysched run --leader-elect` processes (profile policysched-ha, a Lease of
    their own with 4/3/1 s timings): the standby never binds; when the leader is killed
    (SIGKILL: no release) the standby takes over after the lease expires."""
    from kubernetes import client

    lease = support.unique("policysched-ha")
    lease_key = f"{NS}/{lease}"
    first = _replica("replica-a", installed, sa_kubeconfig, lease)
    second = _replica("replica-b", installed, sa_kubeconfig, lease)
    coordination: Any = client.CoordinationV1Api(admin_api)
    try:
        first.start().wait_ready(lease=lease_key)
        second.start().wait_ready(lease=None)
        assert second.leading(lease_key) is False
        holder = coordination.read_namespaced_lease(lease, NS).spec.holder_identity

        batch = [f"ha-{i}" for i in range(10)]
        _create_and_bind(admin_api, namespace, batch, first)
        assert _scheduled_by(admin_api, namespace, batch) == {holder}
        assert support.stays(
            lambda: not (first.leading(lease_key) and second.leading(lease_key)), 2.0)
        assert sorted(_bound_by(first, namespace)) == sorted(batch)
        assert _bound_by(second, namespace) == []
        standby = second.metrics()
        assert not support.metric_value(standby, support.ATTEMPTS_METRIC,
                                        {"profile": HA_PROFILE, "result": "scheduled"})

        killed = time.monotonic()
        first.stop(signal.SIGKILL)
        second.wait_ready(lease=lease_key, timeout=30)
        took = time.monotonic() - killed
        lease_seconds, _, retry = FAST_LEASE
        figure("two replicas: takeover after the leader was killed",
               f"{took:.1f} s (leaseDuration {lease_seconds} s)")
        assert took <= lease_seconds + 2 * retry + 5
        new_holder = coordination.read_namespaced_lease(lease, NS).spec.holder_identity
        assert new_holder not in (holder, "", None)

        later = [f"ha-{i}" for i in range(10, 15)]
        _create_and_bind(admin_api, namespace, later, second)
        assert _scheduled_by(admin_api, namespace, later) == {new_holder}
        assert sorted(_bound_by(second, namespace)) == sorted(later)
        assert sorted(_bound_by(first, namespace)) == sorted(batch)
        for replica in (first, second):
            assert "binding rejected" not in replica.log_text(), replica.log_tail()
            assert not replica.forbidden(), replica.forbidden()
    finally:
        second.stop()
        first.stop()
