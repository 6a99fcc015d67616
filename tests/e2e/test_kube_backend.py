"""``KubeBackend`` and ``policysched run`` against a real control plane.

The module starts its own private cluster (``CLUSTER_DIR=<tmp> deploy/local/cluster.sh up
--nodes 3``; ``down`` at the end), so it never meets the suite's session scheduler. It
creates pods, runs ``policysched run --kubeconfig <admin kubeconfig>`` (no ``--config``:
the built-in configuration, profile ``policysched``) as a subprocess, and checks bindings,
KWOK's Running pods, FailedScheduling Events and conditions, the ``delay`` annotation's
timing, node deletion, and — in process — the informer's relist after a 410 Gone.

Bind times come from a watch (an ``Informer`` in this process), so figures include the
watch's delivery. Run with ``-s`` to see them.
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from policysched.cluster.kube import (
    ApiError,
    Informer,
    KubeBackend,
    TokenBucket,
    Transport,
    WatchedResource,
)
from policysched.model.events import ClusterEvent

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CLUSTER_SH = REPO / "deploy" / "local" / "cluster.sh"
NAMESPACE = "kube-backend"
KWOK_NODES = {"kwok-node-0", "kwok-node-1", "kwok-node-2"}
UP_TIMEOUT = 2400.0  # a cold cache builds the binaries first
FIGURES: dict[str, str] = {}


def figure(name: str, value: str) -> None:
    FIGURES[name] = value
    print(f"\n[kube backend] {name}: {value}")


# --------------------------------------------------------------------------- the cluster


def _script(cluster_dir: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLUSTER_DIR": str(cluster_dir)}
    env.pop("KUBECONFIG", None)
    return subprocess.run([str(CLUSTER_SH), *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("kube-backend-cluster")
    started = time.monotonic()
    up = _script(directory, "up", "--nodes", "3", timeout=UP_TIMEOUT)
    if up.returncode != 0:
        _script(directory, "down", timeout=120)
        tail = "\n".join((up.stdout + up.stderr).splitlines()[-30:])
        pytest.fail(f"cluster.sh up failed ({up.returncode}):\n{tail}", pytrace=False)
    figure("cluster up (3 KWOK nodes)", f"{time.monotonic() - started:.1f} s")
    try:
        yield directory
    finally:
        _script(directory, "down", timeout=120)


@dataclass
class Api:
    """Raw JSON calls with the admin identity."""

    client: Any
    transport: Transport

    def get(self, path: str) -> Any:
        return self.transport.call("GET", path)

    def post(self, path: str, body: Any) -> Any:
        return self.transport.call("POST", path, body=body)

    def delete(self, path: str) -> Any:
        return self.transport.call("DELETE", path, body={"gracePeriodSeconds": 0})

    def pod(self, name: str) -> dict[str, Any]:
        return dict(self.get(f"/api/v1/namespaces/{NAMESPACE}/pods/{name}"))

    def create_pod(self, name: str, **kwargs: Any) -> float:
        """Create a pod; returns the time the API server answered."""
        self.post(f"/api/v1/namespaces/{NAMESPACE}/pods", pod(name, **kwargs))
        return time.time()

    def events(self, name: str) -> list[dict[str, Any]]:
        found = self.get(f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events")["items"]
        return [e for e in found if e["regarding"]["name"] == name]

    def wait_events(self, name: str, reason: str, timeout: float = 10) -> list[dict[str, Any]]:
        """The Events ``reason`` about pod ``name``, once there is one (they are written
        in the background)."""
        deadline = time.monotonic() + timeout
        while True:
            found = [e for e in self.events(name) if e["reason"] == reason]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.1)


@pytest.fixture(scope="module")
def api(cluster_dir: Path) -> Iterator[Api]:
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(cluster_dir / "kubeconfig"))
    handle = Api(client, Transport(client, TokenBucket(0, 1)))
    handle.post("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    yield handle
    client.close()


def pod(name: str, *, cpu: str = "100m", scheduler: str = "policysched",
        annotations: dict[str, str] | None = None,
        node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec,
            "metadata": {"name": name, "annotations": annotations or {}}}


def kwok_node(name: str, labels: dict[str, str]) -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {"kubernetes.io/hostname": name, **labels}},
            "spec": {}, "status": {"allocatable": resources, "capacity": resources}}


# --------------------------------------------------------------------------- pod times


@dataclass
class PodTimes:
    """When each pod of the namespace was first seen bound and Running (from a watch)."""

    bound: dict[str, float] = field(default_factory=dict)
    running: dict[str, float] = field(default_factory=dict)
    nodes: dict[str, str] = field(default_factory=dict)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def on_events(self, events: list[ClusterEvent]) -> None:
        now = time.time()
        with self.changed:
            for event in events:
                obj = event.obj
                name = obj["metadata"]["name"]
                node = (obj.get("spec") or {}).get("nodeName")
                if node and name not in self.bound:
                    self.bound[name] = now
                    self.nodes[name] = node
                if (obj.get("status") or {}).get("phase") == "Running":
                    self.running.setdefault(name, now)
            self.changed.notify_all()

    def wait(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not check():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out after {timeout:.0f} s: {what}")
                self.changed.wait(remaining)


@pytest.fixture(scope="module")
def times(api: Api) -> Iterator[PodTimes]:
    recorder = PodTimes()
    informer = Informer(api.transport, WatchedResource(
        "Pod", "v1", f"/api/v1/namespaces/{NAMESPACE}/pods", namespaced=True),
        recorder.on_events)
    informer.start()
    yield recorder
    informer.stop()


# --------------------------------------------------------------------------- the scheduler


@dataclass
class SchedulerRun:
    process: subprocess.Popen[bytes]
    log: Path
    started: float  # time.time() just before the process started

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def check_alive(self) -> None:
        code = self.process.poll()
        assert code is None, f"policysched exited ({code}):\n{self.log_text()[-3000:]}"


INITIAL = ("first-0", "first-1", "first-2")


@pytest.fixture(scope="module")
def scheduler(cluster_dir: Path, api: Api, times: PodTimes) -> Iterator[SchedulerRun]:
    """Pods first, then ``policysched run``: the first bind measures the start-up."""
    for name in INITIAL:
        api.create_pod(name)
    api.create_pod("foreign", scheduler="default-scheduler")
    log = cluster_dir / "policysched-kube-backend.log"
    command = [str(Path(sys.executable).parent / "policysched"), "run", "--kubeconfig",
               str(cluster_dir / "kubeconfig")]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("KUBECONFIG", None)
    with log.open("wb") as out:
        started = time.time()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   cwd=str(cluster_dir), start_new_session=True)
    # registered like the suite's scheduler: `cluster.sh down` stops it if we are interrupted
    pid_file = cluster_dir / "policysched-kube-backend.pid"
    pid_file.write_text(f"{process.pid}\n")
    run = SchedulerRun(process, log, started)
    try:
        yield run
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait(10)
        pid_file.unlink(missing_ok=True)
    text = run.log_text()
    assert code == 0, f"policysched exited {code} on SIGTERM:\n{text[-3000:]}"
    assert "stopping (SIGTERM)" in text and text.rstrip().endswith("stopped")
    assert "Traceback" not in text, text[-5000:]


# --------------------------------------------------------------------------- tests


def test_pods_are_bound_to_kwok_nodes_and_run(scheduler: SchedulerRun, api: Api,
                                              times: PodTimes) -> None:
    times.wait(lambda: all(n in times.running for n in INITIAL), 60,
               f"{INITIAL} Running\n{scheduler.log_text()[-3000:]}")
    scheduler.check_alive()
    first = min(times.bound[n] for n in INITIAL)
    figure("policysched run: process start → first bind", f"{first - scheduler.started:.2f} s")
    synced = re.search(r"informers synced in ([\d.]+)s", scheduler.log_text())
    assert synced is not None
    figure("informers: start → synced", f"{float(synced.group(1)) * 1000:.0f} ms")
    for name in INITIAL:
        stored = api.pod(name)
        assert stored["spec"]["nodeName"] in KWOK_NODES
        assert stored["status"]["phase"] == "Running"
        events = api.wait_events(name, "Scheduled")
        assert len(events) == 1
        event = events[0]
        assert (event["type"], event["action"], event["reportingController"]) == (
            "Normal", "Binding", "policysched")
        assert event["reportingInstance"].startswith("policysched-")
        assert event["note"] == (f"Successfully assigned {NAMESPACE}/{name} to "
                                 f"{stored['spec']['nodeName']}")
        assert re.fullmatch(r".*T.*\.\d{6}Z", event["eventTime"])
        assert event["regarding"]["uid"] == stored["metadata"]["uid"]
    # another scheduler's pod is left alone: not bound, no condition, no event
    foreign = api.pod("foreign")
    assert not foreign["spec"].get("nodeName")
    assert not foreign["status"].get("conditions")
    assert api.events("foreign") == []


def test_bind_latency(scheduler: SchedulerRun, api: Api, times: PodTimes) -> None:
    created = {}
    for i in range(30):
        name = f"burst-{i}"
        created[name] = api.create_pod(name, cpu="10m")
    times.wait(lambda: all(n in times.bound for n in created), 60, "30 pods bound")
    latencies = sorted((times.bound[n] - t) * 1000 for n, t in created.items())
    p50 = statistics.median(latencies)
    p95 = latencies[int(len(latencies) * 0.95) - 1]
    figure("bind latency, 30 pods created back to back (create answered → bound seen)",
           f"p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {latencies[-1]:.0f} ms")
    single = {}
    for i in range(10):
        name = f"single-{i}"
        single[name] = api.create_pod(name, cpu="10m")
        times.wait(lambda n=name: n in times.bound, 10, f"{name} bound")  # type: ignore[misc]
    one = sorted((times.bound[n] - t) * 1000 for n, t in single.items())
    figure("bind latency, one pod at a time", f"p50 {statistics.median(one):.0f} ms, "
           f"max {one[-1]:.0f} ms")
    assert statistics.median(one) < 500
    assert {times.nodes[n] for n in created} <= KWOK_NODES
    scheduler.check_alive()


def test_unschedulable_pod_gets_failed_scheduling(scheduler: SchedulerRun, api: Api) -> None:
    api.create_pod("huge", cpu="100")
    deadline = time.monotonic() + 30
    while True:
        failed = api.wait_events("huge", "FailedScheduling", timeout=0)
        conditions = api.pod("huge")["status"].get("conditions") or []
        if failed and conditions:
            break
        assert time.monotonic() < deadline, scheduler.log_text()[-3000:]
        time.sleep(0.2)
    event = failed[0]
    assert (event["type"], event["action"], event["reportingController"]) == (
        "Warning", "Scheduling", "policysched")
    assert event["note"].startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert "preemption: 0/3 nodes are available:" in event["note"]
    condition = next(c for c in conditions if c["type"] == "PodScheduled")
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert condition["message"] == event["note"]
    assert re.fullmatch(r".*T\d\d:\d\d:\d\dZ", condition["lastTransitionTime"])
    assert not api.pod("huge")["spec"].get("nodeName")


def test_delay_annotation_binds_after_fifteen_seconds(scheduler: SchedulerRun, api: Api,
                                                     times: PodTimes) -> None:
    created = api.create_pod("delayed", annotations={"delay": "15"})
    times.wait(lambda: "delayed" in times.bound, 25, "the delayed pod bound")
    waited = times.bound["delayed"] - created
    figure("delay=15 pod: created → bound", f"{waited:.2f} s")
    assert 14.0 <= waited <= 16.0
    failed = api.wait_events("delayed", "FailedScheduling")
    assert failed and failed[0]["note"] == "0/3 nodes are available: delay not reached."
    assert api.wait_events("delayed", "Scheduled")


def test_a_deleted_node_gets_no_more_pods(scheduler: SchedulerRun, api: Api,
                                          times: PodTimes) -> None:
    api.post("/api/v1/nodes", kwok_node("extra", {"pool": "extra"}))
    api.create_pod("on-extra", node_selector={"pool": "extra"})
    times.wait(lambda: "on-extra" in times.bound, 30, "a pod bound to the new node")
    assert times.nodes["on-extra"] == "extra"
    api.delete(f"/api/v1/namespaces/{NAMESPACE}/pods/on-extra")
    api.delete("/api/v1/nodes/extra")
    api.create_pod("after-delete", node_selector={"pool": "extra"})
    deadline = time.monotonic() + 20
    while True:
        conditions = api.pod("after-delete")["status"].get("conditions") or []
        if conditions:
            break
        assert time.monotonic() < deadline, scheduler.log_text()[-3000:]
        time.sleep(0.2)
    assert conditions[0]["reason"] == "Unschedulable"
    assert conditions[0]["message"].startswith("0/3 nodes are available: 3 node(s) didn't")
    assert "after-delete" not in times.bound


def test_informer_relists_after_410_and_reports_the_deletion(api: Api) -> None:
    """In process: the node watch is cut, a node is deleted during the "outage", and the
    API server answers the reconnecting watch with 410 Gone (injected): the relist must
    report the deletion."""
    api.post("/api/v1/nodes", kwok_node("doomed", {"pool": "doomed"}))
    backend = KubeBackend(api.client)
    outage = threading.Event()
    outage.set()
    expire = threading.Event()
    watching = threading.Event()
    opened = backend.transport.open

    def faulty_open(method: str, path: str, **kwargs: Any) -> Any:
        query = kwargs.get("query") or {}
        if path == "/api/v1/nodes" and query.get("watch") == "true":
            outage.wait(30)
            if expire.is_set():
                expire.clear()
                raise ApiError(410, "too old resource version", "Expired")
            response = opened(method, path, **kwargs)
            watching.set()
            return response
        return opened(method, path, **kwargs)

    backend.transport.open = faulty_open  # type: ignore[method-assign]
    backend.start()
    try:
        deadline = time.monotonic() + 20
        while not backend.synced():
            assert time.monotonic() < deadline
            backend.wait_for_events(0.1)
        listed = {e.obj["metadata"]["name"] for e in backend.drain_events()
                  if e.resource == "Node"}
        assert "doomed" in listed
        assert watching.wait(10)
        outage.clear()  # the next watch waits: nothing is watched from now on
        backend.nodes.interrupt()
        api.delete("/api/v1/nodes/doomed")
        time.sleep(0.5)
        assert not [e for e in backend.drain_events() if e.resource == "Node"
                    and e.kind == "DELETED"]  # nobody told the informer yet
        expire.set()
        started = time.monotonic()
        outage.set()
        events: list[ClusterEvent] = []
        while not any(e.kind == "DELETED" for e in events):
            assert time.monotonic() - started < 10, events
            backend.wait_for_events(0.1)
            events += [e for e in backend.drain_events() if e.resource == "Node"]
        took = (time.monotonic() - started) * 1000
        figure("410 Gone → relist → DELETED delivered", f"{took:.0f} ms")
        assert [(e.kind, e.obj["metadata"]["name"]) for e in events
                if e.kind == "DELETED"] == [("DELETED", "doomed")]
        assert backend.nodes.relists == 1
        assert backend.nodes.get("doomed") is None
        assert {n["metadata"]["name"] for n in backend.nodes.items()} == KWOK_NODES
    finally:
        backend.close()
