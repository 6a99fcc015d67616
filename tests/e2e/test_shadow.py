"""``policysched run --shadow`` beside the real kube-scheduler: kube-scheduler binds a burst
of pods, the shadow — under a ServiceAccount bound only to deploy/shadow/'s read-only roles —
judges each against its own decision, writes nothing, and reports on ``/shadow``, in
``policysched_shadow_decisions_total`` and in its report file; a shadow running a
deliberately different policy reports the differences it must."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import support
from .conftest import figure

pytestmark = pytest.mark.e2e

SHADOW_MANIFESTS = support.DEPLOY / "shadow"
SHADOW_ACCOUNT = "policysched-shadow"
KUBE_SCHEDULER = "default-scheduler"
BURST = 30
DRAINED_LABEL = "e2e.policysched.io/drained"
DRAINED_MESSAGE = "node is being drained"
JUDGE_TIMEOUT = 60.0
START_TIMEOUT = 120.0

# A deliberately different policy set: the default profile plus a filter that refuses
# nodes labelled drained (enabled in profile policysched through its selector label).
AVOID_DRAINED = f"""\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: avoid-drained
  labels:
    policysched.io/profile: policysched
spec:
  filter:
  - name: not-drained
    expression: "!('{DRAINED_LABEL}' in node.labels)"
    message: {DRAINED_MESSAGE}
"""


@dataclass
class ShadowProcess(support.SchedulerProcess):
    """``policysched run --shadow`` (no leader election: a shadow takes no Lease)."""

    report: Path = Path()

    def command(self) -> list[str]:
        return [*support.policysched_command(), "run", "--kubeconfig", str(self.kubeconfig),
                "--config", str(self.config), "--shadow", "--shadow-report",
                str(self.report), *self.extra_args]

    def judgments(self, namespace: str) -> dict[str, dict[str, Any]]:
        """The report's lines about ``namespace``'s pods, by pod name (the last one)."""
        found: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(FileNotFoundError):
            for line in self.report.read_text().splitlines():
                entry = json.loads(line)
                pod_namespace, _, name = entry["pod"].partition("/")
                if pod_namespace == namespace:
                    found[name] = entry
        return found

    def wait_judged(self, namespace: str, count: int) -> dict[str, dict[str, Any]]:
        self.wait(f"{count} judgments in {namespace}",
                  lambda: len(self.judgments(namespace)) >= count, JUDGE_TIMEOUT)
        return self.judgments(namespace)


def _kube_scheduler_pid(cluster_dir: Path) -> int | None:
    try:
        pid = int((cluster_dir / "kube-scheduler.pid").read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return None
    return pid


@pytest.fixture(scope="module")
def kube_scheduler(installed: support.Cluster) -> Iterator[None]:
    """The reference kube-scheduler (profile default-scheduler) on the suite's cluster,
    started with ``cluster.sh start-scheduler`` and stopped after this module (one that
    already runs there is used and left running)."""
    if _kube_scheduler_pid(installed.dir) is not None:
        yield
        return
    config = installed.dir / "shadow-kube-scheduler-config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(installed.kubeconfig), "qps": 5000,
                             "burst": 5000},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": KUBE_SCHEDULER}],
    }, sort_keys=False))
    done = subprocess.run([str(support.CLUSTER_SH), "start-scheduler", "--config", str(config)],
                          env=support.script_env(installed.dir), capture_output=True,
                          text=True, timeout=START_TIMEOUT, check=False)
    assert done.returncode == 0, f"cluster.sh start-scheduler failed:\n{done.stdout}{done.stderr}"
    try:
        yield
    finally:
        pid = _kube_scheduler_pid(installed.dir)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)


@pytest.fixture(scope="module")
def shadow_kubeconfig(installed: support.Cluster) -> Path:
    """A token of the policysched-shadow ServiceAccount, bound only to deploy/shadow/'s
    read-only ClusterRole and Role."""
    for name in ("serviceaccount.yaml", "clusterrole.yaml", "clusterrolebinding.yaml",
                 "role.yaml", "rolebinding.yaml"):
        support.apply_files(installed.api, name, directory=SHADOW_MANIFESTS)
    token = support.mint_token(installed.api, support.SYSTEM_NAMESPACE, SHADOW_ACCOUNT)
    return support.write_kubeconfig(
        installed.dir / "shadow-sa.kubeconfig", installed,
        f"system:serviceaccount:{support.SYSTEM_NAMESPACE}:{SHADOW_ACCOUNT}", token)


def _start_shadow(cluster: support.Cluster, kubeconfig: Path, name: str,
                  *extra: str) -> ShadowProcess:
    port = support.free_port()
    config = support.render_config(cluster.dir / f"{name}-config.yaml", port=port)
    report = cluster.dir / f"{name}.jsonl"
    report.unlink(missing_ok=True)
    process = ShadowProcess(name, cluster.dir, kubeconfig, config, port, tuple(extra),
                            report=report).start()
    process.wait_ready(lease=None)
    return process


@contextlib.contextmanager
def _running(process: ShadowProcess) -> Iterator[ShadowProcess]:
    try:
        yield process
    finally:
        process.stop()
    forbidden = process.forbidden()
    assert not forbidden, "the shadow attempted what it may not:\n" + "\n".join(forbidden[:20])


@pytest.fixture(scope="module")
def shadow(installed: support.Cluster, shadow_kubeconfig: Path,
           kube_scheduler: None) -> Iterator[ShadowProcess]:
    """The shadow with the deploy configuration's policy set (the default profile)."""
    with _running(_start_shadow(installed, shadow_kubeconfig, "shadow")) as process:
        yield process


@pytest.fixture(scope="module")
def different_shadow(installed: support.Cluster, shadow_kubeconfig: Path,
                     kube_scheduler: None) -> Iterator[ShadowProcess]:
    """A shadow whose profile also refuses nodes labelled drained."""
    policy = installed.dir / "avoid-drained.yaml"
    policy.write_text(AVOID_DRAINED)
    with _running(_start_shadow(installed, shadow_kubeconfig, "shadow-different",
                                "--policies", str(policy))) as process:
        yield process


def _create_burst(admin_api: Any, namespace: str, count: int,
                  make: Callable[[int], dict[str, Any]]) -> None:
    for i in range(count):
        pod = make(i)
        pod["metadata"]["namespace"] = namespace
        support.create(admin_api, pod)


def _wait_bound(admin_api: Any, namespace: str, count: int) -> dict[str, str]:
    """Until kube-scheduler bound ``count`` pods of ``namespace``: pod name → node."""
    with support.PodTracker(admin_api, namespace) as tracker:
        pods = tracker.wait_until(
            lambda pods: len(pods) >= count and all(support.is_bound(p) for p in pods.values()),
            JUDGE_TIMEOUT, f"kube-scheduler to bind {count} pods")
    return {name: p.spec.node_name for name, p in pods.items()}


def _our_events(admin_api: Any, namespace: str) -> list[str]:
    """Events in ``namespace`` that policysched reported (none, from a shadow)."""
    from kubernetes import client

    events: Any = client.EventsV1Api(admin_api)
    return [f"{e.reason}: {e.note}" for e in events.list_namespaced_event(namespace).items
            if (e.reporting_controller or "").startswith("policysched")]


def test_the_shadow_judges_a_burst_kube_scheduler_binds(
        admin_api: Any, namespace: str, shadow: ShadowProcess) -> None:
    _create_burst(admin_api, namespace, BURST, lambda i: support.pod(
        f"web-{i}", scheduler_name=KUBE_SCHEDULER, labels={"app": "web"}))
    placed = _wait_bound(admin_api, namespace, BURST)
    judged = shadow.wait_judged(namespace, BURST)
    assert sorted(judged) == sorted(placed)  # every pod, once each, and no other
    for name, entry in judged.items():
        assert entry["actual"] == {"node": placed[name]}
        assert entry["schedulerName"] == KUBE_SCHEDULER and entry["profile"] == "policysched"
        assert entry["result"] in ("agree", "differ"), entry  # the shadow binds each too
    agreed = sum(entry["result"] == "agree" for entry in judged.values())
    figure("shadow beside kube-scheduler: agreement on a burst of "
           f"{BURST} pods", f"{agreed}/{BURST}")
    # the same policies: all agree but for a pod whose binding kube-scheduler took longer
    # than the hold (2 s) to send, while later ones landed (docs/shadow.md)
    assert agreed >= BURST * 3 // 4
    status, body = shadow.get("/shadow")
    summary = json.loads(body)
    assert status == 200 and summary["judged"] >= BURST
    assert summary["results"]["agree"] >= agreed
    metrics = shadow.metrics()
    assert support.metric_value(metrics, "policysched_shadow_decisions_total",
                                {"result": "agree", "profile": "policysched"}) >= agreed
    assert _our_events(admin_api, namespace) == []


def test_a_different_policy_shows_its_differences(
        admin_api: Any, namespace: str, different_shadow: ShadowProcess,
        make_node: Callable[..., str]) -> None:
    """Pods kube-scheduler must bind to the drained node (their nodeSelector): the shadow
    would not bind them, for its filter's reason; other pods it places anywhere but the
    drained node."""
    drained = make_node(support.unique("drained"), labels={DRAINED_LABEL: "true"})
    _create_burst(admin_api, namespace, 6, lambda i: support.pod(
        f"pinned-{i}", scheduler_name=KUBE_SCHEDULER,
        node_selector={"kubernetes.io/hostname": drained}))
    _create_burst(admin_api, namespace, 12, lambda i: support.pod(
        f"free-{i}", scheduler_name=KUBE_SCHEDULER))
    placed = _wait_bound(admin_api, namespace, 18)
    judged = different_shadow.wait_judged(namespace, 18)
    for i in range(6):
        entry = judged[f"pinned-{i}"]
        assert entry["result"] == "would_reject", entry
        assert entry["actual"] == {"node": drained}
        assert f"1 {DRAINED_MESSAGE}" in entry["shadow"]["rejected"], entry
    for i in range(12):
        entry = judged[f"free-{i}"]
        assert entry["result"] in ("agree", "differ"), entry
        assert entry["shadow"]["node"] != drained
        if placed[f"free-{i}"] == drained:
            assert entry["result"] == "differ"
    summary = json.loads(different_shadow.get("/shadow")[1])
    assert summary["results"]["would_reject"] >= 6
    assert _our_events(admin_api, namespace) == []


@pytest.mark.parametrize("verb, resource, subresource", [
    ("create", "pods", "binding"), ("patch", "pods", "status"), ("patch", "pods", ""),
    ("delete", "pods", ""), ("create", "events", ""),
])
def test_the_shadow_account_cannot_write(installed: support.Cluster, shadow_kubeconfig: Path,
                                         verb: str, resource: str, subresource: str) -> None:
    from kubernetes import client

    api = support.client_for(shadow_kubeconfig)
    try:
        attributes = {"verb": verb, "resource": resource, "namespace": "default",
                      "group": "events.k8s.io" if resource == "events" else ""}
        if subresource:
            attributes["subresource"] = subresource
        review = client.AuthorizationV1Api(api).create_self_subject_access_review(
            {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
             "spec": {"resourceAttributes": attributes}})
    finally:
        api.close()
    assert review.status.allowed is False
