"""Hot reload in ``policysched run`` as deployed: its policies come from the ConfigMaps of
deploy/policies-configmap.yaml, read with the ServiceAccount's identity. A good edit of one
of them changes what the scheduler does; a bad edit is rejected with a PolicyRejected Event
naming the key and line, and the last good set keeps scheduling.

The component-level counterparts are in test_reload_leader.py (``Reloader`` in process, its
latency distribution over 12 changes; and the process-level two-replica test: only the
Lease holder binds, the survivor takes over), which this suite reuses rather than repeats.
"""

from __future__ import annotations

import time
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
RELOADS = "policysched_policy_reloads_total"
RELOAD_SECONDS = "policysched_policy_reload_duration_seconds"


def _core(api: Any) -> Any:
    from kubernetes import client

    core: Any = client.CoreV1Api(api)
    return core


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
    original = _core(admin_api).read_namespaced_config_map(CONFIGMAP, NS).data[KEY]
    assert MESSAGE in original and EXPRESSION in original
    before = scheduler.metrics()
    first_version = support.active_policy_version(before)
    assert first_version is not None, "no policysched_active_policy_set_info on /metrics"
    failures = support.metric_value(before, RELOADS, {"result": "failure"}) or 0.0
    count = support.metric_value(before, f"{RELOAD_SECONDS}_count") or 0.0
    total = support.metric_value(before, f"{RELOAD_SECONDS}_sum") or 0.0
    good = original.replace(MESSAGE, MESSAGE + " (reloaded)", 1)
    try:
        # A good change: active within a second, and the scheduler behaves accordingly.
        written = time.monotonic()
        _write(admin_api, good)
        good_version = support.wait_for_policy_version(
            scheduler, lambda v: v != first_version, "the good change to become active")
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
        note = support.policy_rejected_note(admin_api, CONFIGMAP, bad_version)
        assert note.startswith(f"{NS}/{CONFIGMAP}[{KEY}]:{line}:"), note
        rejected = scheduler.metrics()
        assert support.metric_value(rejected, RELOADS, {"result": "failure"}) == failures + 1
        assert support.active_policy_version(rejected) == good_version
        assert scheduler.get("/readyz")[0] == 200
        assert _pending_message(admin_api, namespace, "after-bad", "delay not reached") == \
            "0/3 nodes are available: delay not reached (reloaded)."
    finally:
        _write(admin_api, original)
    support.wait_for_policy_version(scheduler, lambda v: v == first_version,
                                    "the original set back")
