"""A policy in audit mode on the real control plane: a filter rule that would reject every
node lets the pod bind, and leaves a PolicyAudit Event on the pod and a sample of
``policysched_audit_findings_total`` on /metrics; switched to Enforce in its ConfigMap, it
decides (docs/authoring.md#audit-rules)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import support

pytestmark = pytest.mark.e2e

NS = support.SYSTEM_NAMESPACE
POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: {name}
  labels:
    policysched.io/profile: policysched
spec:
  enforcement: Audit
  match: "pod.labels[?'audit-e2e'].orValue('') == '{name}'"
  filter:
  - name: nowhere
    expression: "false"
    reason: node(s) refused by the trial
"""


def _core(api: Any) -> Any:
    from kubernetes import client

    core: Any = client.CoreV1Api(api)
    return core


def test_an_audited_filter_rejecting_every_node_lets_the_pod_bind_and_reports_it(
        scheduler: support.SchedulerProcess, admin_api: Any, namespace: str,
        tmp_path: Path) -> None:
    from kubernetes import client

    name = support.unique("trial")
    (tmp_path / f"{name}.yaml").write_text(POLICY.format(name=name))
    done = subprocess.run([*support.policysched_command(), "configmap",
                           str(tmp_path / f"{name}.yaml")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    manifest = yaml.safe_load(done.stdout)
    before = support.active_policy_version(scheduler.metrics())
    support.apply(admin_api, [manifest])
    try:
        support.wait_for_policy_version(scheduler, lambda v: v != before,
                                        "the audited policy to become active")
        _core(admin_api).create_namespaced_pod(
            namespace, support.pod("audited", labels={"audit-e2e": name}))
        pod = support.wait_for_pod(_core(admin_api), namespace, "audited", support.is_bound,
                                   30, "the audited pod bound")
        assert pod.spec.node_name
        event = support.wait_for_event(
            client.EventsV1Api(admin_api), namespace,
            lambda e: e.reason == "PolicyAudit" and e.regarding.name == "audited", 30,
            "a PolicyAudit event on the pod")
        assert event.type == "Warning"
        assert event.note.startswith(f"audit: {name}/nowhere would have rejected every "
                                     "feasible node (")
        assert event.note.endswith("node(s) refused by the trial; the pod would have been "
                                   "unschedulable")
        labels = {"profile": "policysched", "policy": name, "rule": "nowhere",
                  "extension_point": "filter", "reason": "Rejected"}
        found = support.metric_value(scheduler.metrics(),
                                     "policysched_audit_findings_total", labels)
        assert found is not None and found >= 1

        # one field, hot-reloaded: the same rule now decides
        key = next(iter(manifest["data"]))
        enforced = manifest["data"][key].replace("enforcement: Audit", "enforcement: Enforce")
        active = support.active_policy_version(scheduler.metrics())
        _core(admin_api).patch_namespaced_config_map(
            manifest["metadata"]["name"], NS, {"data": {key: enforced}})
        support.wait_for_policy_version(scheduler, lambda v: v != active,
                                        "the enforced policy to become active")
        _core(admin_api).create_namespaced_pod(
            namespace, support.pod("enforced", labels={"audit-e2e": name}))
        support.wait_for_pod(_core(admin_api), namespace, "enforced",
                             support.unschedulable_with("node(s) refused by the trial"), 30,
                             "the pod Unschedulable under the enforced rule")
    finally:
        try:
            _core(admin_api).delete_namespaced_config_map(manifest["metadata"]["name"], NS)
        except client.ApiException as e:
            if e.status != 404:
                raise
