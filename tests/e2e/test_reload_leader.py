"""Hot reload and leader election against the real local control plane.

(a) Policies in ConfigMaps are watched: each change becomes active (write → active latency
    measured, p50/p99 printed; the goal is p99 ≤ 1 s); an invalid change is rejected with a
    ``PolicyRejected`` Event on the ConfigMap and the last good set stays active.
(b) Two candidates on one Lease: never both leaders; when the leader stops renewing, the
    other takes over.

The module fixture uses the shared local cluster when it is running; otherwise it starts a
private one (``CLUSTER_DIR=<tmp> deploy/local/cluster.sh up --nodes 3``) and stops it after.
The figures go to the e2e terminal summary.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policysched.cluster.transport import TokenBucket, Transport
from policysched.resources import BUILTIN_POLICIES
from policysched.service.leader import LeaderElectionSettings, LeaderElector
from policysched.service.metrics import SchedulerMetrics
from policysched.service.reload import (
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
from policysched.service.server import HealthChecks, HealthServer

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CLUSTER_SH = REPO / "deploy" / "local" / "cluster.sh"
SHARED_CLUSTER_DIR = REPO / ".cluster"
UP_TIMEOUT = 3600  # a cold cache builds the binaries first
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


def _cluster_sh(cluster_dir: Path, *args: str, timeout: float = 120
                ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLUSTER_SH), *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "CLUSTER_DIR": str(cluster_dir)})


@dataclasses.dataclass(frozen=True)
class LocalCluster:
    api: Any
    kubeconfig: Path


@pytest.fixture(scope="module")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """The shared local cluster (``<repo>/.cluster``) when it is running: used, never
    stopped. Otherwise a private one (``CLUSTER_DIR`` in a temporary directory), started
    here and stopped after — nobody else's ``cluster.sh down`` can pull it away."""
    kubernetes = pytest.importorskip("kubernetes")
    started: Path | None = None
    kubeconfig = SHARED_CLUSTER_DIR / "kubeconfig"
    if _cluster_sh(SHARED_CLUSTER_DIR, "status").returncode != 0:
        started = tmp_path_factory.mktemp("cluster", numbered=True)
        done = _cluster_sh(started, "up", "--nodes", "3", timeout=UP_TIMEOUT)
        if done.returncode != 0:
            _cluster_sh(started, "down")
            pytest.fail(f"cannot start a local cluster: {done.stderr[-2000:]}", pytrace=False)
        kubeconfig = started / "kubeconfig"
    api = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
    try:
        yield LocalCluster(api, kubeconfig)
    finally:
        api.close()
        if started is not None:
            _cluster_sh(started, "down")


@pytest.fixture
def api(kube: LocalCluster) -> Any:
    return kube.api


@pytest.fixture
def namespace(api: Any) -> Iterator[str]:
    from kubernetes import client

    core = client.CoreV1Api(api)
    name = f"policysched-e2e-{secrets.token_hex(3)}"
    body: Any = {"metadata": {"name": name}}
    core.create_namespace(body)
    try:
        yield name
    finally:
        core.delete_namespace(name)


def _configmap(name: str, text: str) -> Any:  # the client takes plain dicts
    return {"metadata": {"name": name, "labels": {POLICY_LABEL: "true"}},
            "data": {"policy.yaml": text}}


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _figure(name: str, value: str) -> None:
    """Into the e2e terminal summary when the package's conftest keeps one, else printed."""
    try:
        from .conftest import figure
    except ImportError:
        print(f"\n{name}: {value}")
        return
    figure(name, value)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class Activations:
    """The loop's side of the hand-over, recording when each bundle arrived."""

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
    # The built-in library (20 policies, its configuration) from a directory, plus the
    # ConfigMaps of the namespace: each change rebuilds the whole set, as in production.
    reloader = Reloader([str(BUILTIN_POLICIES)], None, activations.swap, metrics=metrics,
                        recorder=KubeEventRecorder(_client(api), "e2e-reload"))
    sources = PolicySources(directories=(str(BUILTIN_POLICIES),),
                            configmaps=(ConfigMapSource(namespace, label_selector_string(None)),))
    watch = PolicySourceWatch(sources, reloader, _client(api))
    checks = HealthChecks()
    checks.readiness["policies"] = reloader.readiness
    server = HealthServer("127.0.0.1:0", metrics, checks)
    server.start()
    core.create_namespaced_config_map(namespace, _configmap(
        "base", POLICY.format(name="base", expression="!node.unschedulable")))
    try:
        assert isinstance(watch.start(sync_timeout=30), PolicyBundle)
        watch.follow()
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
        _figure(f"hot reload, ConfigMap write → active ({CHANGES} changes, built-in library "
                "loaded)", f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max "
                f"{max(latencies) * 1000:.0f} ms, mean {statistics.mean(latencies) * 1000:.0f} ms")
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


def _client(api: Any) -> Transport:
    """The process's one client (``policysched run`` makes one) on ``api``'s settings."""
    return Transport(api, TokenBucket(0, 1))


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
        LeaderElector.for_cluster(settings, _client(api), identity=f"replica-{i}",
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
        assert lease.spec is not None and lease.spec.holder_identity == first.identity

        # The leader "dies": its API calls fail from now on. It must stop leading within
        # renewDeadline; the other may only take over after leaseDuration.
        died = time.monotonic()
        first.lock.transport = _Unreachable()
        first.rejoin = False
        while first.is_leader():
            assert time.monotonic() - died <= FAST.renew_deadline + 0.5
            time.sleep(0.05)
        lost = time.monotonic() - died
        second = _wait_for_leader([first, other], FAST.lease_duration + 8)
        took_over = time.monotonic() - died
        assert second is other and not first.is_leader()
        _figure(f"leader election: a dead leader stops leading (renewDeadline "
                f"{FAST.renew_deadline} s)", f"{lost:.1f} s")
        _figure(f"leader election: takeover after the leader died (leaseDuration "
                f"{FAST.lease_duration} s)", f"{took_over:.1f} s")
        assert took_over <= FAST.lease_duration + 2 * FAST.retry_period + 2

        # A graceful stop releases the Lease: a new candidate takes over at once.
        third = LeaderElector.for_cluster(settings, _client(api), identity="replica-2")
        third.start()
        electors.append(third)
        time.sleep(1.5)
        assert _leaders(electors) == [other.identity]
        stopped = time.monotonic()
        other.stop(5)
        _wait_for_leader(electors, 2 * FAST.retry_period + 2)
        _figure("leader election: takeover after a graceful stop (lease released)",
                f"{time.monotonic() - stopped:.1f} s")
        assert transitions[:2] == [f"+{electors.index(first)}", f"-{electors.index(first)}"]
    finally:
        for elector in electors:
            elector.stop(5)


# -- (b) two scheduler replicas ---------------------------------------------------------------
#
# Each replica is a ``policysched run`` process: leader election, metrics, /healthz and hot
# reload as deployed. Each has an identity of its own (``policysched-<host>_<random>``): the
# Lease holder and the reportingInstance of its Events, so the test can tell which replica
# bound each pod.

REPLICA_CONFIG = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulerConfiguration
profiles:
- schedulerName: {scheduler}
healthzBindAddress: 127.0.0.1:{port}
leaderElection:
  leaderElect: true
  leaseName: policysched-e2e
  namespace: {namespace}
  leaseDurationSeconds: {lease}
  renewDeadlineSeconds: {renew}
  retryPeriodSeconds: {retry}
policySources:
  configMaps:
  - namespace: {namespace}
"""
PODS_PER_PHASE = 6


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclasses.dataclass
class Replica:
    name: str
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def metric(self, line_start: str) -> float | None:
        status, text = _get(self.url + "/metrics")
        assert status == 200
        for line in text.splitlines():
            if line.startswith(line_start + " "):
                return float(line.rsplit(" ", 1)[1])
        return None


def _start_replica(name: str, kubeconfig: Path, scheduler: str, namespace: str,
                   directory: Path) -> Replica:
    port = _free_port()
    config = directory / f"{name}.yaml"
    config.write_text(REPLICA_CONFIG.format(
        scheduler=scheduler, port=port, namespace=namespace, lease=FAST.lease_duration,
        renew=FAST.renew_deadline, retry=FAST.retry_period))
    log = directory / f"{name}.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("KUBECONFIG", None)
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "policysched"), "run", "--kubeconfig",
         str(kubeconfig), "--config", str(config), "--namespace", namespace],
        stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=directory, env=env)
    return Replica(name, process, f"http://127.0.0.1:{port}", log)


def _wait(condition: Any, timeout: float, what: str, replicas: list[Replica]) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    logs = "\n".join(f"--- {r.name}\n{r.log.read_text()[-3000:]}" for r in replicas)
    raise AssertionError(f"timed out waiting for {what}\n{logs}")


def _pod(name: str, scheduler: str) -> Any:
    return {"metadata": {"name": name}, "spec": {
        "schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "c", "image": "fake", "resources": {
            "requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def _bound(core: Any, namespace: str, names: list[str]) -> bool:
    pods = {p.metadata.name: p for p in core.list_namespaced_pod(namespace).items}
    return all(n in pods and pods[n].spec.node_name for n in names)


def _binders(events: Any, namespace: str, names: list[str]) -> dict[str, str] | None:
    """pod → reportingInstance of its Scheduled event (None until every pod has one)."""
    found = {e.regarding.name: e.reporting_instance
             for e in events.list_namespaced_event(namespace).items
             if e.reason == "Scheduled" and e.regarding.name in names}
    return found if len(found) == len(names) else None


def test_two_replicas_only_the_leader_binds_and_a_survivor_takes_over(
        kube: LocalCluster, namespace: str, tmp_path: Path) -> None:
    from kubernetes import client

    core = client.CoreV1Api(kube.api)
    events = client.EventsV1Api(kube.api)
    leases = client.CoordinationV1Api(kube.api)
    scheduler = f"e2e-{secrets.token_hex(3)}"
    core.create_namespaced_config_map(namespace, _configmap(
        "policies", POLICY.format(name="not-cordoned", expression="!node.unschedulable")))
    replicas = [_start_replica(f"replica-{i}", kube.kubeconfig, scheduler, namespace, tmp_path)
                for i in range(2)]
    lease_label = f'leader_election_master_status{{name="{namespace}/policysched-e2e"}}'
    try:
        def holder() -> str | None:
            try:
                lease = leases.read_namespaced_lease("policysched-e2e", namespace)
            except client.ApiException:
                return None
            return (lease.spec.holder_identity if lease.spec is not None else None) or None

        def leading() -> Replica | None:
            if any(r.process.poll() is not None for r in replicas):
                return None
            try:
                if any(_get(r.url + "/metrics")[0] != 200 for r in replicas):
                    return None
            except urllib.error.URLError:  # not serving yet
                return None
            found = [r for r in replicas if r.metric(lease_label) == 1]
            assert len(found) <= 1, "two replicas report leading"
            return found[0] if found else None

        leader = _wait(leading, 30, "a leader", replicas)
        standby = next(r for r in replicas if r is not leader)
        leader_id = _wait(holder, 10, "the Lease holder", replicas)
        assert leader_id.startswith("policysched-")
        _wait(lambda: all(_get(r.url + "/readyz")[0] == 200 for r in replicas), 30,
              "both replicas ready", replicas)

        first = [f"first-{i}" for i in range(PODS_PER_PHASE)]
        for name in first:
            core.create_namespaced_pod(namespace, _pod(name, scheduler))
        _wait(lambda: _bound(core, namespace, first), 30, "the first pods bound", replicas)
        binders = _wait(lambda: _binders(events, namespace, first), 15,
                        "Scheduled events of the first pods", replicas)
        print(f"\nphase 1 bindings by reportingInstance: {binders}")
        assert set(binders.values()) == {leader_id}  # the Lease holder's identity
        scheduled = (f'scheduler_schedule_attempts_total{{profile="{scheduler}",'
                     'result="scheduled"}')
        assert (leader.metric(scheduled) or 0) >= PODS_PER_PHASE
        assert standby.metric(scheduled) is None
        assert leader.metric(lease_label) == 1 and standby.metric(lease_label) == 0

        killed = time.monotonic()
        leader.process.kill()  # SIGKILL: no release, the standby waits for the lease to expire
        leader.process.wait(10)
        second = [f"second-{i}" for i in range(PODS_PER_PHASE)]
        for name in second:
            core.create_namespaced_pod(namespace, _pod(name, scheduler))
        _wait(lambda: _bound(core, namespace, second), FAST.lease_duration + 30,
              "the second pods bound by the survivor", replicas)
        took_over = time.monotonic() - killed
        binders = _wait(lambda: _binders(events, namespace, second), 15,
                        "Scheduled events of the second pods", replicas)
        _figure(f"two replicas: leader SIGKILLed → {PODS_PER_PHASE} new pods bound by the "
                f"survivor (leaseDuration {FAST.lease_duration} s)", f"{took_over:.1f} s")
        survivor_id = holder()
        assert survivor_id is not None and survivor_id != leader_id
        assert set(binders.values()) == {survivor_id}
        assert standby.metric(lease_label) == 1

        standby.process.terminate()
        assert standby.process.wait(15) == 0
    finally:
        for replica in replicas:
            if replica.process.poll() is None:
                replica.process.kill()
                replica.process.wait(10)
