"""``policysched snapshot`` on the real API server: nodes, a bound pod, pending pods, a
PodGroup, a PriorityClass and a Service created through the API, written to a cluster
file (also anonymised), and ``policysched simulate`` run on the file as it is.

The pending pods name a scheduler nobody runs here (``snapshot-e2e``), so that a
``policysched run`` of the session leaves them pending; the simulation serves that name
with the built-in configuration's profile.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import support

pytestmark = pytest.mark.e2e

SCHEDULER = "snapshot-e2e"
POD_GROUP = "scheduling.x-k8s.io/pod-group"
SNAPSHOT_TIMEOUT = 120.0


def _config(tmp_path: Path) -> Path:
    """The built-in configuration with its first profile serving ``SCHEDULER``."""
    builtin = (support.REPO / "policies" / "scheduler-config.yaml").read_text()
    text = builtin.replace('directories: ["."]',
                           f'directories: ["{support.REPO / "policies"}"]')
    text = text.replace("- schedulerName: policysched\n", f"- schedulerName: {SCHEDULER}\n", 1)
    path = tmp_path / "scheduler-config.yaml"
    path.write_text(text)
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*support.policysched_command(), *args], capture_output=True,
                          text=True, timeout=SNAPSHOT_TIMEOUT, check=False)


def _simulate(cluster_file: Path, config: Path) -> list[dict[str, Any]]:
    done = _run("simulate", "--cluster", str(cluster_file), "--config", str(config),
                "-o", "json")
    assert done.returncode == 0, done.stderr
    pods: list[dict[str, Any]] = json.loads(done.stdout)["pods"]
    return pods


def test_snapshot_of_a_live_cluster_simulates(
        installed: support.Cluster, admin_api: Any, namespace: str,
        make_node: Callable[..., str], make_priority_class: Callable[[str, int], str],
        tmp_path: Path) -> None:
    from kubernetes import client

    core: Any = client.CoreV1Api(admin_api)
    mine = {"e2e-snapshot": namespace}
    node_a = make_node(support.unique("snap-a"), cpu="2",
                       labels={**mine, "topology.kubernetes.io/zone": "snap-x"})
    node_b = make_node(support.unique("snap-b"), cpu="2",
                       labels={**mine, "topology.kubernetes.io/zone": "snap-y"},
                       taints=[{"key": "dedicated", "value": namespace,
                                "effect": "NoSchedule"}])
    high = make_priority_class(support.unique("snap-high"), 1000)
    client.CustomObjectsApi(admin_api).create_namespaced_custom_object(
        "scheduling.x-k8s.io", "v1alpha1", namespace, "podgroups",
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "gang"}, "spec": {"minMember": 2}})
    core.create_namespaced_service(namespace, {
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    toleration = [{"key": "dedicated", "operator": "Equal", "value": namespace,
                   "effect": "NoSchedule"}]
    running = support.pod("running", cpu="1", labels={"app": "web"})
    running["spec"]["nodeName"] = node_a
    pending = [
        support.pod("fits-a", scheduler_name=SCHEDULER, cpu="500m",
                    node_selector={"kubernetes.io/hostname": node_a}),
        support.pod("tolerant", scheduler_name=SCHEDULER, cpu="1", node_selector=mine,
                    tolerations=toleration, priority_class=high),
        support.pod("too-big", scheduler_name=SCHEDULER, cpu="1500m", node_selector=mine),
        *(support.pod(f"gang-{i}", scheduler_name=SCHEDULER, cpu="100m", node_selector=mine,
                      tolerations=toleration, labels={POD_GROUP: "gang"}) for i in range(2)),
    ]
    for manifest in (running, *pending):
        core.create_namespaced_pod(namespace, manifest)

    context = yaml.safe_load(installed.kubeconfig.read_text())["current-context"]
    snapshot = tmp_path / "cluster.yaml"
    done = _run("snapshot", "--kubeconfig", str(installed.kubeconfig), "--context", context,
                "-o", str(snapshot))
    assert done.returncode == 0, done.stderr
    assert "Node: " in done.stderr and f"wrote {snapshot}: " in done.stderr
    text = snapshot.read_text()
    assert "managedFields" not in text and "resourceVersion" not in text
    objects = list(yaml.safe_load_all(text))
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objects
             if o["metadata"].get("namespace") in (None, namespace)}
    assert {("Node", node_a), ("Node", node_b), ("PriorityClass", high),
            ("Namespace", namespace), ("PodGroup", "gang"), ("Service", "web"),
            ("Pod", "running"), ("Pod", "fits-a"), ("Pod", "gang-1")} <= kinds

    config = _config(tmp_path)
    outcome = {p["name"]: p for p in _simulate(snapshot, config)
               if p["namespace"] == namespace}
    assert {name: p["node"] for name, p in outcome.items()} == {
        "fits-a": node_a, "tolerant": node_b, "too-big": None, "gang-0": node_b,
        "gang-1": node_b}
    message = outcome["too-big"]["message"]
    assert "1 Insufficient cpu" in message and "1 node(s) had untolerated taint(s)" in message

    anonymised = tmp_path / "anonymised.yaml"
    done = _run("snapshot", "--kubeconfig", str(installed.kubeconfig), "--anonymise",
                "-o", str(anonymised))
    assert done.returncode == 0, done.stderr
    text = anonymised.read_text()
    for original in (namespace, node_a, node_b, high, "e2e-snapshot"):
        assert original not in text
    # the same cluster, names aside: every pod ends the same way (a message may name a
    # pod: compared for ours, which names none)
    plain = sorted((p["node"] is not None, p["attempts"]) for p in _simulate(snapshot, config))
    tokens = _simulate(anonymised, config)
    assert sorted((p["node"] is not None, p["attempts"]) for p in tokens) == plain
    assert message in [p["message"] for p in tokens]
