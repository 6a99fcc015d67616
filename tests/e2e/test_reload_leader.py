"""Hot reload and leader election against the real local control plane.

(a) Policies in ConfigMaps are watched: each change becomes active (write → active latency
    measured, p50/p99 printed; the goal is p99 ≤ 1 s); an invalid change is rejected with a
    ``PolicyRejected`` Event on the ConfigMap and the last good set stays active.
(b) Two candidates on one Lease: never both leaders; when the leader stops renewing, the
    other takes over.

The module fixture starts ``deploy/local/cluster.sh up --nodes 3`` only when no cluster is
running, and stops only a cluster it started. Run with ``pytest -s -m e2e`` to see the
figures.
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policysched.leader import LeaderElectionSettings, LeaderElector
from policysched.metrics import SchedulerMetrics
from policysched.reload import (
    EVENT_REASON,
    POLICY_LABEL,
    ConfigMapSource,
    KubeEventRecorder,
    PolicyBundle,
    PolicySources,
    PolicySourceWatch,
    Reloader,
    label_selector_string,
)
from policysched.server import HealthChecks, HealthServer

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CLUSTER_SH = REPO / "deploy" / "local" / "cluster.sh"
KUBECONFIG = REPO / ".cluster" / "kubeconfig"
UP_TIMEOUT = 1800  # a first `up` builds the binaries
CHANGES = 12  # policy changes timed in (a)
LATENCY_GOAL = 1.0  # seconds, p99 write → active

POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: {name}
spec:
  filter:
  - name: not-cordoned
    expression: "{expression}"
"""
BAD_EXPRESSION = "node.unschedulable +"  # a CEL syntax error on line 8


def _cluster_running() -> bool:
    return subprocess.run([str(CLUSTER_SH), "status"], capture_output=True,
                          timeout=60).returncode == 0


@pytest.fixture(scope="module")
def api() -> Iterator[Any]:
    """An API client for the local cluster, started here only if it is not running."""
    kubernetes = pytest.importorskip("kubernetes")
    started = False
    if not _cluster_running():
        done = subprocess.run([str(CLUSTER_SH), "up", "--nodes", "3"], capture_output=True,
                              text=True, timeout=UP_TIMEOUT)
        if done.returncode != 0:
            pytest.skip(f"cannot start the local cluster: {done.stderr[-2000:]}")
        started = True
    client = kubernetes.config.new_client_from_config(config_file=str(KUBECONFIG))
    try:
        yield client
    finally:
        client.close()
        if started:
            subprocess.run([str(CLUSTER_SH), "down"], capture_output=True, timeout=120)


@pytest.fixture
def namespace(api: Any) -> Iterator[str]:
    from kubernetes import client

    core = client.CoreV1Api(api)
    name = f"policysched-e2e-{secrets.token_hex(3)}"
    core.create_namespace({"metadata": {"name": name}})
    try:
        yield name
    finally:
        core.delete_namespace(name)


def _configmap(name: str, text: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {POLICY_LABEL: "true"}},
            "data": {"policy.yaml": text}}


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class Activations:
    """The runner's side of the hand-over, recording when each bundle arrived."""

    def __init__(self) -> None:
        self.bundles: list[tuple[float, PolicyBundle]] = []
        self.cond = threading.Condition()

    def swap(self, bundle: PolicyBundle) -> None:
        with self.cond:
            self.bundles.append((time.monotonic(), bundle))
            self.cond.notify_all()

    def wait_for(self, policy: str, timeout: float = 10.0) -> float:
        """When a bundle holding ``policy`` became active."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for at, bundle in self.bundles:
                    if bundle.policy_set.policy(policy) is not None:
                        return at
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"policy {policy} never became active")
                self.cond.wait(remaining)


def test_hot_reload_latency_and_rejection(api: Any, namespace: str) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)
    events = client.EventsV1Api(api)
    activations = Activations()
    metrics = SchedulerMetrics()
    reloader = Reloader([], None, activations.swap, metrics=metrics,
                        recorder=KubeEventRecorder(api, "e2e-reload"))
    sources = PolicySources(configmaps=(ConfigMapSource(namespace, label_selector_string(None)),))
    watch = PolicySourceWatch(sources, reloader, api)
    checks = HealthChecks()
    checks.readiness["policies"] = reloader.readiness
    server = HealthServer("127.0.0.1:0", metrics, checks)
    server.start()
    core.create_namespaced_config_map(namespace, _configmap(
        "base", POLICY.format(name="base", expression="!node.unschedulable")))
    try:
        assert isinstance(watch.start(sync_timeout=30), PolicyBundle)
        assert reloader.active is not None and reloader.active.policy_set.policy("base")
        assert _get(server.url + "/readyz")[0] == 200

        latencies: list[float] = []
        for i in range(CHANGES):
            body = _configmap("rolling", POLICY.format(name=f"rev-{i}",
                                                       expression="!node.unschedulable"))
            written = time.monotonic()
            if i == 0:
                core.create_namespaced_config_map(namespace, body)
            else:
                core.replace_namespaced_config_map("rolling", namespace, body)
            latencies.append(activations.wait_for(f"rev-{i}") - written)
        p50, p99 = _percentile(latencies, 0.5), _percentile(latencies, 0.99)
        print(f"\nhot reload write→active over {CHANGES} changes: p50 {p50 * 1000:.0f} ms, "
              f"p99 {p99 * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms "
              f"(mean {statistics.mean(latencies) * 1000:.0f} ms)")
        assert p99 <= LATENCY_GOAL

        good = reloader.active
        core.replace_namespaced_config_map("rolling", namespace, _configmap(
            "rolling", POLICY.format(name="broken", expression=BAD_EXPRESSION)))
        note = _wait_for_rejection_event(events, namespace, "rolling")
        assert note.startswith(f"{namespace}/rolling[policy.yaml]:8:"), note
        assert reloader.active is good  # the last good set stays active
        assert good.policy_set.policy(f"rev-{CHANGES - 1}") is not None
        assert activations.bundles[-1][1] is good
        status, text = _get(server.url + "/metrics")
        assert status == 200
        assert 'policysched_policy_reloads_total{result="failure"} 1.0' in text
        assert f'policysched_active_policy_set_info{{version="{good.version}"}} 1.0' in text
        assert f"policysched_policy_reload_duration_seconds_count {CHANGES}.0" in text
        assert _get(server.url + "/readyz")[0] == 200  # still serving the last good set
    finally:
        watch.stop()
        server.stop()


def _wait_for_rejection_event(events: Any, namespace: str, configmap: str,
                              timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in events.list_namespaced_event(namespace).items:
            if (event.reason == EVENT_REASON and event.type == "Warning"
                    and event.regarding.kind == "ConfigMap"
                    and event.regarding.name == configmap):
                return str(event.note)
        time.sleep(0.1)
    raise AssertionError(f"no {EVENT_REASON} event on ConfigMap {configmap}")


# -- (b) leader election ---------------------------------------------------------------------

FAST = LeaderElectionSettings(lease_duration=4, renew_deadline=3, retry_period=1)


def _leaders(electors: list[LeaderElector]) -> list[str]:
    return [e.identity for e in electors if e.is_leader()]


def _wait_for_leader(electors: list[LeaderElector], timeout: float) -> LeaderElector:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        leading = [e for e in electors if e.is_leader()]
        assert len(leading) <= 1, f"two leaders: {[e.identity for e in leading]}"
        if leading:
            return leading[0]
        time.sleep(0.05)
    raise AssertionError("no leader elected")


class _Unreachable:
    """Stands in for the Lease API of a replica that died: every call fails."""

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise OSError("connection refused")

        return fail


def test_two_candidates_one_leader_and_takeover(api: Any, namespace: str) -> None:
    settings = LeaderElectionSettings(
        lease_name="policysched-e2e", namespace=namespace, lease_duration=FAST.lease_duration,
        renew_deadline=FAST.renew_deadline, retry_period=FAST.retry_period)
    transitions: list[str] = []
    electors = [
        LeaderElector.for_cluster(settings, api, identity=f"replica-{i}",
                                  on_started_leading=lambda i=i: transitions.append(f"+{i}"),
                                  on_stopped_leading=lambda i=i: transitions.append(f"-{i}"))
        for i in range(2)]
    for elector in electors:
        elector.start()
    try:
        first = _wait_for_leader(electors, 10)
        other = next(e for e in electors if e is not first)
        for _ in range(30):  # 3 s: never both
            assert len(_leaders(electors)) == 1
            time.sleep(0.1)
        from kubernetes import client

        lease = client.CoordinationV1Api(api).read_namespaced_lease("policysched-e2e",
                                                                    namespace)
        assert lease.spec.holder_identity == first.identity

        # The leader "dies": its API calls fail from now on. It must stop leading within
        # renewDeadline; the other may only take over after leaseDuration.
        died = time.monotonic()
        first.lock.api_instance = _Unreachable()
        first.rejoin = False
        second = _wait_for_leader([first, other], FAST.lease_duration + 8)
        took_over = time.monotonic() - died
        assert second is other and not first.is_leader()
        print(f"\nleader takeover after the leader died: {took_over:.1f} s "
              f"(leaseDuration {FAST.lease_duration} s)")
        assert took_over <= FAST.lease_duration + 2 * FAST.retry_period + 2

        # A graceful stop releases the Lease: a new candidate takes over at once.
        third = LeaderElector.for_cluster(settings, api, identity="replica-2")
        third.start()
        electors.append(third)
        time.sleep(1.5)
        assert _leaders(electors) == [other.identity]
        stopped = time.monotonic()
        other.stop(5)
        _wait_for_leader(electors, 2 * FAST.retry_period + 2)
        print(f"takeover after a graceful stop (lease released): "
              f"{time.monotonic() - stopped:.1f} s")
        assert transitions[:2] == [f"+{electors.index(first)}", f"-{electors.index(first)}"]
    finally:
        for elector in electors:
            elector.stop(5)


def _json(data: Any) -> str:  # pragma: no cover - debugging aid
    return json.dumps(data, indent=2, default=str)


if os.environ.get("POLICYSCHED_E2E_DEBUG"):  # pragma: no cover
    import logging

    logging.basicConfig(level=logging.DEBUG)
