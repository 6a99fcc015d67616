"""A new policy goes live as docs/authoring.md says, with no change to the Deployment or the
configuration: ``policysched configmap examples/maintenance/maintenance.yaml | kubectl
apply -f -`` (the policy carries the label ``policysched.io/profile: policysched``, which
the shipped profile's ``policies.selector`` enables). Applied, pods follow it; edited, they
follow the edit; broken, the previous set stays and a PolicyRejected Event names file, line
and rule; deleted, it is gone. Each write → active time is measured on /metrics.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from . import support
from .conftest import figure

pytestmark = pytest.mark.e2e

EXAMPLE = support.REPO / "examples" / "maintenance" / "maintenance.yaml"
NS = support.SYSTEM_NAMESPACE
CONFIGMAP = "policysched-policy-maintenance"
KEY = "maintenance.yaml"
REASON = "node(s) being drained for maintenance"
EDITED = "node(s) in a maintenance window"
EXPRESSION = "expression: node.labels[?'example.com/maintenance'].orValue('') != 'drain'"
DRAINED = {"example.com/maintenance": "drain"}


def _core(api: Any) -> Any:
    from kubernetes import client

    core: Any = client.CoreV1Api(api)
    return core


def _manifest() -> dict[str, Any]:
    """What ``policysched configmap examples/maintenance/maintenance.yaml`` prints."""
    done = subprocess.run([*support.policysched_command(), "configmap", str(EXAMPLE)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    manifest: dict[str, Any] = yaml.safe_load(done.stdout)
    return manifest


def _timed(scheduler: support.SchedulerProcess, write: Callable[[], object],
           what: str) -> float:
    """Seconds from the end of ``write()`` until /metrics shows another active set."""
    before = support.active_policy_version(scheduler.metrics())
    write()
    written = time.monotonic()
    support.wait_for_policy_version(scheduler, lambda v: v != before, what)
    return time.monotonic() - written


def _drained_pod(api: Any, namespace: str, name: str) -> None:
    """A pod only the drained node can take (its nodeSelector)."""
    _core(api).create_namespaced_pod(namespace, support.pod(name, node_selector=DRAINED))


def _wait_unschedulable(api: Any, namespace: str, name: str, text: str) -> None:
    support.wait_for_pod(_core(api), namespace, name, support.unschedulable_with(text), 30,
                         f"{name} Unschedulable with {text!r}")


def _wait_bound(api: Any, namespace: str, name: str, node: str) -> None:
    pod = support.wait_for_pod(_core(api), namespace, name, support.is_bound, 30,
                               f"{name} bound")
    assert pod.spec.node_name == node


def test_a_policy_configmap_goes_live_follows_edits_survives_a_break_and_goes_away(
        scheduler: support.SchedulerProcess, admin_api: Any, namespace: str,
        make_node: Callable[..., str]) -> None:
    from kubernetes import client

    drained = make_node(support.unique("drained"), labels=DRAINED)
    _drained_pod(admin_api, namespace, "before")
    _wait_bound(admin_api, namespace, "before", drained)  # no such policy yet
    manifest = _manifest()
    text = manifest["data"][KEY]
    timings: dict[str, float] = {}
    try:
        # Applied: active without touching the Deployment; a new pod follows it.
        timings["apply"] = _timed(scheduler, lambda: support.apply(admin_api, [manifest]),
                                  "the new policy to become active")
        _drained_pod(admin_api, namespace, "blocked")
        _wait_unschedulable(admin_api, namespace, "blocked", REASON)

        # Edited: the pending pod is tried again under the edit.
        edited = text.replace(REASON, EDITED)
        timings["edit"] = _timed(scheduler, lambda: _core(admin_api).patch_namespaced_config_map(
            CONFIGMAP, NS, {"data": {KEY: edited}}), "the edit to become active")
        _wait_unschedulable(admin_api, namespace, "blocked", EDITED)

        # Broken: rejected with an Event at the file's line and the rule; the edit stays.
        active = support.active_policy_version(scheduler.metrics())
        line = edited.splitlines().index(next(x for x in edited.splitlines()
                                              if EXPRESSION in x)) + 1
        broken = _core(admin_api).patch_namespaced_config_map(
            CONFIGMAP, NS, {"data": {KEY: edited.replace(EXPRESSION, EXPRESSION + " &&")}})
        note = support.policy_rejected_note(admin_api, CONFIGMAP,
                                            str(broken.metadata.resource_version))
        assert note.startswith(f"{NS}/{CONFIGMAP}[{KEY}]:{line}:"), note
        assert "maintenance/not-draining" in note
        assert support.active_policy_version(scheduler.metrics()) == active
        _drained_pod(admin_api, namespace, "while-broken")
        _wait_unschedulable(admin_api, namespace, "while-broken", EDITED)

        # Deleted: gone, and the pods it kept pending are bound.
        timings["delete"] = _timed(scheduler, lambda: _core(admin_api).delete_namespaced_config_map(
            CONFIGMAP, NS), "the policy to be removed")
        for name in ("blocked", "while-broken"):
            _wait_bound(admin_api, namespace, name, drained)
    finally:
        try:
            _core(admin_api).delete_namespaced_config_map(CONFIGMAP, NS)
        except client.ApiException as e:
            if e.status != 404:
                raise
    figure("new policy ConfigMap: write → active (seen on /metrics, polled every 0.1 s)",
           ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in timings.items()))
    assert max(timings.values()) <= 5.0, timings  # the goal is < 1 s; CI machines are slow
