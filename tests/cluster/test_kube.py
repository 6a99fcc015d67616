"""``KubeBackend`` and the ``SchedulingLoop`` against an in-process fake API server.

``FakeApiServer`` speaks just enough of the Kubernetes API over plain HTTP (lists with
pages, watches with history, bookmarks and 410 Gone, pods/binding, pods/status patches,
pods/eviction, Events) for the backend's real HTTP code paths to run; faults are injected
per test. The real API server is exercised by ``tests/e2e/test_kube_backend.py``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

kubernetes = pytest.importorskip("kubernetes")

from policysched.cluster import kube as kube_module  # noqa: E402
from policysched.cluster import kube_messages as km  # noqa: E402
from policysched.cluster.kube import (  # noqa: E402
    EVENT_SERIES_FINISH,
    EventRecorder,
    KubeBackend,
    TokenBucket,
    micro_time,
    truncate_note,
)
from policysched.cluster.transport import Backoff  # noqa: E402
from policysched.commands.loading import load_engine  # noqa: E402
from policysched.framework.backend import BackendError, BindError, BindRequest  # noqa: E402
from policysched.model.clock import SimulatedClock  # noqa: E402
from policysched.model.events import ClusterEvent  # noqa: E402
from policysched.model.objects import pod_info  # noqa: E402
from policysched.service.loop import SchedulingLoop  # noqa: E402
from policysched.service.observers import Attempt, RunObserver  # noqa: E402

from .polling import wait_for  # noqa: E402

CONTROLLER = "policysched"

# --------------------------------------------------------------------------- fake server

_PATH = re.compile(
    r"^/(?:api/v1|apis/(?P<group>[^/]+/[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<resource>[a-z]+)"
    r"(?:/(?P<name>[^/]+))?(?:/(?P<sub>[a-z]+))?$")


_NAMESPACED = ("pods", "podgroups", "events", "services", "replicationcontrollers",
               "replicasets", "statefulsets", "poddisruptionbudgets", "persistentvolumeclaims")


class FakeApiServer:
    """An in-memory API server for nodes, pods, podgroups, events, namespaces, the
    workloads that select pods, PodDisruptionBudgets and the storage objects."""

    def __init__(self, podgroups: bool = False, page_size: int | None = None) -> None:
        self.store: dict[str, dict[str, dict[str, Any]]] = {
            "nodes": {}, "pods": {}, "podgroups": {}, "events": {}, "namespaces": {},
            "services": {}, "replicationcontrollers": {}, "replicasets": {},
            "statefulsets": {}, "poddisruptionbudgets": {}, "priorityclasses": {},
            "persistentvolumeclaims": {}, "persistentvolumes": {}, "storageclasses": {},
            "csinodes": {}, "csidrivers": {}}
        self.podgroups = podgroups
        self.page_size = page_size
        self.rv = 100
        self.history: list[tuple[int, str, dict[str, Any]]] = []
        self.lock = threading.Condition()
        self.requests: list[tuple[str, str, Any]] = []
        self.faults: list[tuple[str, re.Pattern[str], int, dict[str, Any]]] = []
        self.expire_watches: set[str] = set()  # resources whose next watch gets 410
        self.compacted = 0  # watches from an older resourceVersion get 410
        self.closing = False
        self.generation = 0  # drop_watches() ends the watches of older generations
        self.watch_count: dict[str, int] = {}
        # resource → a watch of it ends after this many events (the apiserver's cacher
        # cutting a watcher too slow to read them)
        self.cut_watches_after: dict[str, int] = {}
        self.binding_gate: threading.Event | None = None  # set: binds wait for it to open
        self.binding_active = 0  # binding requests being served now
        self.binding_peak = 0
        self.down = False  # True: every request is dropped unanswered (a restarting server)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length)) if length else None

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                if server.down:
                    self.close_connection = True
                    return
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                body = self._body() if method in ("POST", "PATCH", "DELETE") else None
                server.requests.append((method, url.path, body))
                for fault in list(server.faults):
                    if fault[0] == method and fault[1].search(url.path):
                        server.faults.remove(fault)
                        self._send(fault[2], fault[3])
                        return
                if query.get("watch") == "true":
                    server.serve_watch(self, url.path, query)
                    return
                with server.binding(url.path):
                    status, out = server.handle(method, url.path, query, body,
                                                self.headers.get("Content-Type", ""))
                self._send(status, out)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    # -- life cycle -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> FakeApiServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        with self.lock:
            self.closing = True
            self.lock.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    def api_client(self) -> Any:
        configuration = kubernetes.client.Configuration()
        configuration.host = self.url
        configuration.api_key = {"BearerToken": "secret"}
        configuration.api_key_prefix = {"BearerToken": "Bearer"}
        return kubernetes.client.ApiClient(configuration)

    def fail(self, method: str, path: str, status: int, reason: str = "",
             message: str = "refused", causes: list[dict[str, Any]] | None = None) -> None:
        """The next ``method`` request whose path matches ``path`` gets ``status``."""
        body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": status,
                "reason": reason, "message": message, "details": {"causes": causes or []}}
        self.faults.append((method, re.compile(path), status, body))

    # -- objects ----------------------------------------------------------------------------

    @staticmethod
    def key(obj: dict[str, Any]) -> str:
        metadata = obj["metadata"]
        namespace = metadata.get("namespace")
        return f"{namespace}/{metadata['name']}" if namespace else metadata["name"]

    def _record(self, resource: str, kind: str, obj: dict[str, Any]) -> None:
        self.history.append((self.rv, resource, {"type": kind, "object": json.loads(
            json.dumps(obj))}))
        self.lock.notify_all()

    def put(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace an object (as a client would), emitting its watch event."""
        with self.lock:
            self.rv += 1
            obj = json.loads(json.dumps(obj))
            metadata = obj.setdefault("metadata", {})
            if resource in _NAMESPACED:
                metadata.setdefault("namespace", "default")
            key = self.key(obj)
            old = self.store[resource].get(key)
            metadata.setdefault("uid", old["metadata"]["uid"] if old else f"uid-{self.rv}")
            # kept by an update, as the API server does (a new one would make a heartbeat a
            # metadata change whenever two writes straddle a second)
            metadata.setdefault("creationTimestamp", old["metadata"]["creationTimestamp"] if old
                                else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            metadata["resourceVersion"] = str(self.rv)
            self.store[resource][key] = obj
            self._record(resource, "MODIFIED" if old else "ADDED", obj)
            return obj

    def delete(self, resource: str, key: str, *, silently: bool = False) -> None:
        """Delete an object; ``silently``: no watch event (as if it happened during an
        outage whose history was compacted)."""
        with self.lock:
            obj = self.store[resource].pop(key)
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            if silently:
                self.compacted = self.rv
            else:
                self._record(resource, "DELETED", obj)

    def get(self, resource: str, key: str) -> dict[str, Any] | None:
        with self.lock:
            return self.store[resource].get(key)

    @contextlib.contextmanager
    def binding(self, path: str) -> Iterator[None]:
        """Count concurrent binding requests; hold them while ``binding_gate`` is shut."""
        if not path.endswith("/binding"):
            yield
            return
        with self.lock:
            self.binding_active += 1
            self.binding_peak = max(self.binding_peak, self.binding_active)
        try:
            gate = self.binding_gate
            if gate is not None:
                gate.wait(10)
            yield
        finally:
            with self.lock:
                self.binding_active -= 1

    def drop_watches(self) -> None:
        """End every open watch (as a restarting API server would)."""
        with self.lock:
            self.generation += 1
            self.lock.notify_all()

    # -- request handling -------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, str], body: Any,
               content_type: str) -> tuple[int, Any]:
        if path.startswith("/apis/scheduling.x-k8s.io/v1alpha1"):
            if not self.podgroups:  # the CRD is not installed
                return 404, {"kind": "Status", "code": 404, "reason": "NotFound",
                             "message": "the server could not find the requested resource"}
            if path == "/apis/scheduling.x-k8s.io/v1alpha1":
                return 200, {"kind": "APIResourceList", "resources": [{"name": "podgroups"}]}
        match = _PATH.match(path)
        if match is None:
            return 404, {"code": 404, "message": f"no route {path}"}
        resource, ns, name, sub = (match["resource"], match["ns"], match["name"],
                                   match["sub"])
        with self.lock:
            if method == "GET" and name is None:
                return 200, self._list(resource, ns, query)
            key = f"{ns}/{name}" if ns else str(name)
            if method == "POST" and name is None:
                body["metadata"].setdefault("namespace", ns)
                if self.key(body) in self.store[resource]:
                    return 409, {"code": 409, "reason": "AlreadyExists", "message": "exists"}
                return 201, self.put(resource, body)
            current = self.store[resource].get(key)
            if current is None:
                return 404, {"code": 404, "reason": "NotFound",
                             "message": f'{resource} "{name}" not found'}
            uid = ((body or {}).get("metadata") or {}).get("uid")
            if sub == "binding":
                if uid and uid != current["metadata"]["uid"]:
                    return 409, {"code": 409, "reason": "Conflict",
                                 "message": "Precondition failed: UID in precondition"}
                if current["spec"].get("nodeName"):
                    return 409, {"code": 409, "reason": "Conflict", "message":
                                 f"pod {name} is already assigned to node "
                                 f"\"{current['spec']['nodeName']}\""}
                pod = json.loads(json.dumps(current))
                pod["spec"]["nodeName"] = body["target"]["name"]
                _set_condition(pod, {"type": "PodScheduled", "status": "True"})
                self.put(resource, pod)
                return 201, {"kind": "Status", "status": "Success", "code": 201}
            if sub == "eviction":
                self.delete(resource, key)
                return 201, {"kind": "Status", "status": "Success", "code": 201}
            if method == "DELETE":
                self.delete(resource, key)
                return 200, current
            if method == "PATCH":
                if uid and uid != current["metadata"]["uid"]:
                    return 422, {"code": 422, "reason": "Invalid", "message": "immutable",
                                 "details": {"causes": [{"field": "metadata.uid"}]}}
                version = ((body or {}).get("metadata") or {}).get("resourceVersion")
                if version and version != current["metadata"]["resourceVersion"]:
                    return 409, {"code": 409, "reason": "Conflict", "message":
                                 "the object has been modified; please apply your changes "
                                 "to the latest version and try again"}
                obj = json.loads(json.dumps(current))
                _patch(obj, body, strategic="strategic" in content_type)
                return 200, self.put(resource, obj)
            return 200, current

    def _list(self, resource: str, ns: str | None, query: dict[str, str]) -> dict[str, Any]:
        items = [o for o in self.store[resource].values()
                 if ns is None or o["metadata"].get("namespace") == ns]
        start = int(query.get("continue") or 0)
        metadata: dict[str, Any] = {"resourceVersion": str(self.rv)}
        if self.page_size:
            if start and query.get("continue", "").startswith("x"):
                raise AssertionError
            page = items[start:start + self.page_size]
            if start + self.page_size < len(items):
                metadata["continue"] = str(start + self.page_size)
            items = page
        return {"kind": "List", "metadata": metadata, "items": items}

    def serve_watch(self, handler: BaseHTTPRequestHandler, path: str,
                    query: dict[str, str]) -> None:
        match = _PATH.match(path)
        assert match is not None
        resource, ns = match["resource"], match["ns"]
        since = int(query.get("resourceVersion") or 0)
        assert query.get("allowWatchBookmarks") == "true"
        deadline = time.monotonic() + float(query.get("timeoutSeconds") or 60)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()

        def send(event: dict[str, Any]) -> None:
            data = json.dumps(event).encode() + b"\n"
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()

        cutting = False
        with self.lock:
            generation = self.generation
            self.watch_count[resource] = self.watch_count.get(resource, 0) + 1
            expired = resource in self.expire_watches or since < self.compacted
            self.expire_watches.discard(resource)
        try:
            if expired:
                send({"type": "ERROR", "object": {"kind": "Status", "code": 410,
                                                  "reason": "Expired", "message": "too old"}})
            else:
                position, sent = since, 0
                while time.monotonic() < deadline:
                    with self.lock:
                        cut = self.cut_watches_after.get(resource)
                        if cut is not None and sent >= cut:
                            cutting = True  # as the apiserver: the connection stays open
                            break
                        # a server going down ends every watch, also one that was
                        # accepted just before and missed drop_watches' generation
                        if self.closing or self.down or self.generation != generation:
                            break
                        due = [(rv, e) for rv, r, e in self.history
                               if r == resource and rv > position and (
                                   ns is None or e["object"]["metadata"].get("namespace") == ns)]
                        if not due:
                            self.lock.wait(0.05)
                            continue
                    for rv, event in due:
                        send(event)
                        position = rv
                    sent += len(due)
                    send({"type": "BOOKMARK", "object": {"kind": "Node", "metadata": {
                        "resourceVersion": str(position)}}})
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        handler.close_connection = not cutting


def _set_condition(obj: dict[str, Any], condition: dict[str, Any]) -> None:
    _merge_condition(obj.setdefault("status", {}).setdefault("conditions", []), condition)


def _merge_condition(conditions: list[dict[str, Any]], condition: dict[str, Any]) -> None:
    for i, c in enumerate(conditions):
        if c["type"] == condition["type"]:
            conditions[i] = {**c, **condition}
            return
    conditions.append(condition)


def _patch(obj: dict[str, Any], patch: dict[str, Any], strategic: bool) -> None:
    """A JSON merge patch; with ``strategic``, conditions merge by type."""
    for key, value in patch.items():
        if key == "conditions" and strategic:
            for condition in value:
                _merge_condition(obj.setdefault("conditions", []),
                                 {k: v for k, v in condition.items() if v is not None})
        elif value is None:
            obj.pop(key, None)
        elif isinstance(value, dict):
            if not isinstance(obj.get(key), dict):
                obj[key] = {}
            _patch(obj[key], value, strategic)
        else:
            obj[key] = value


# --------------------------------------------------------------------------- fixtures


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name}}, "spec": {},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str = "100m", scheduler: str = "policysched",
        annotations: dict[str, str] | None = None, node_name: str | None = None
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": scheduler, "containers": [
        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": "default", "annotations": annotations or {}},
            "spec": spec, "status": {"phase": "Pending"}}


@pytest.fixture()
def server() -> Iterator[FakeApiServer]:
    fake = FakeApiServer().start()
    yield fake
    fake.stop()


@pytest.fixture()
def backend(server: FakeApiServer) -> Iterator[KubeBackend]:
    live = KubeBackend(server.api_client(), reporting_instance="policysched-test")
    yield live
    live.close()


def collect(backend: KubeBackend, until: Callable[[list[ClusterEvent]], bool],
            timeout: float = 5.0) -> list[ClusterEvent]:
    """Events drained until ``until(all so far)`` holds."""
    events: list[ClusterEvent] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        backend.wait_for_events(0.05)
        events += backend.drain_events()
        if until(events):
            return events
    raise AssertionError(f"timed out; got {[(e.kind, e.resource) for e in events]}")


def summary(events: list[ClusterEvent]) -> list[tuple[str, str, str]]:
    return [(e.kind, e.resource, e.obj["metadata"]["name"]) for e in events]


def started(backend: KubeBackend) -> list[ClusterEvent]:
    backend.start()
    wait_for(backend.synced)
    return backend.drain_events()


def writes(server: FakeApiServer) -> int:
    """How many requests changed something (informers' GETs come and go)."""
    return sum(1 for method, _, _ in server.requests if method != "GET")


def changes(server: FakeApiServer) -> list[tuple[str, str, Any]]:
    """The requests that changed something, in order."""
    return [r for r in list(server.requests) if r[0] != "GET"]


def info(server: FakeApiServer, name: str) -> Any:
    obj = server.get("pods", f"default/{name}")
    assert obj is not None
    return pod_info(obj)


# --------------------------------------------------------------------------- rate limit


def test_token_bucket_is_shared_safely_by_threads() -> None:
    bucket = TokenBucket(qps=100, burst=5, clock=lambda: 0.0)
    delays: list[float] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(50):
            delay = bucket.reserve()
            with lock:
                delays.append(delay)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # every token reserved once: the burst, then one more 1/qps each
    assert sorted(delays) == pytest.approx([0.0] * 5 + [i / 100 for i in range(1, 396)])


def test_token_bucket_allows_a_burst_then_the_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(qps=10, burst=3, clock=lambda: now[0])
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() == pytest.approx(0.1)
    assert bucket.reserve() == pytest.approx(0.2)
    now[0] = 1.0  # ten tokens later, minus the two borrowed; capped at the burst
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert TokenBucket(qps=0, burst=1).reserve() == 0.0


def test_requests_are_rate_limited(server: FakeApiServer) -> None:
    live = KubeBackend(server.api_client(), qps=20, burst=1)
    start = time.monotonic()
    for _ in range(5):
        live.transport.call("GET", "/api/v1/nodes")
    assert time.monotonic() - start >= 0.18  # 4 waits of 50 ms


# --------------------------------------------------------------------------- informers


def test_initial_list_becomes_added_events_then_synced(server: FakeApiServer,
                                                       backend: KubeBackend) -> None:
    server.put("nodes", node("n1"))
    server.put("pods", pod("p1"))
    assert not backend.synced()
    events = started(backend)
    assert sorted(summary(events)) == [("ADDED", "Node", "n1"), ("ADDED", "Pod", "p1")]
    assert {e.obj["kind"] for e in events} == {"Node", "Pod"}  # list items get their kind
    assert backend.pod_groups() == {}
    assert not any(p.endswith("/podgroups") for _, p, _ in server.requests)


def test_lists_are_paged() -> None:
    server = FakeApiServer(page_size=2).start()
    try:
        for i in range(5):
            server.put("nodes", node(f"n{i}"))
        live = KubeBackend(server.api_client())
        events = started(live)
        assert sorted(summary(events)) == [("ADDED", "Node", f"n{i}") for i in range(5)]
        pages = [p for m, p, _ in server.requests if m == "GET" and p == "/api/v1/nodes"]
        assert len(pages) >= 3
        live.close()
    finally:
        server.stop()


def test_watch_events_follow_the_list(server: FakeApiServer, backend: KubeBackend) -> None:
    server.put("nodes", node("n1"))
    started(backend)
    server.put("pods", pod("p1"))
    server.put("nodes", node("n1", cpu="8"))
    server.delete("nodes", "n1")
    events = collect(backend, lambda es: len(es) >= 3)
    # each resource in order (two informers: no order between resources)
    nodes = [e for e in events if e.resource == "Node"]
    assert summary(nodes) == [("MODIFIED", "Node", "n1"), ("DELETED", "Node", "n1")]
    assert nodes[0].obj["status"]["allocatable"]["cpu"] == "8"
    assert ("ADDED", "Pod", "p1") in summary(events)


def test_node_heartbeats_are_not_emitted(server: FakeApiServer, backend: KubeBackend) -> None:
    ready = node("n1")
    ready["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                      "lastHeartbeatTime": "2024-01-01T00:00:00Z"}]
    server.put("nodes", ready)
    started(backend)
    ready["status"]["conditions"][0]["lastHeartbeatTime"] = "2024-01-01T00:00:20Z"
    server.put("nodes", ready)
    wait_for(lambda: backend.nodes.suppressed == 1)
    assert backend.drain_events() == []
    stored = backend.nodes.get("n1")
    assert stored is not None  # the informer keeps the latest object all the same
    assert stored["status"]["conditions"][0]["lastHeartbeatTime"] == "2024-01-01T00:00:20Z"
    ready["status"]["conditions"][0]["status"] = "False"
    server.put("nodes", ready)
    events = collect(backend, lambda es: bool(es))
    assert summary(events) == [("MODIFIED", "Node", "n1")]


def test_wait_for_events_blocks_until_an_event_or_a_wake(
        server: FakeApiServer, backend: KubeBackend) -> None:
    started(backend)
    start = time.monotonic()
    assert backend.wait_for_events(0.2) is False
    assert time.monotonic() - start >= 0.15
    threading.Timer(0.05, backend.wake).start()
    start = time.monotonic()
    assert backend.wait_for_events(5) is False
    assert time.monotonic() - start < 2
    threading.Timer(0.05, lambda: server.put("pods", pod("late"))).start()
    assert backend.wait_for_events(5) is True


def test_gone_watch_relists_and_diffs_against_the_known_state(
        server: FakeApiServer, backend: KubeBackend) -> None:
    for name in ("n1", "n2", "n3"):
        server.put("nodes", node(name))
    server.put("pods", pod("p1"))
    started(backend)
    # an outage: changes whose watch events were compacted away
    server.delete("nodes", "n2", silently=True)
    with server.lock:
        obj = json.loads(json.dumps(server.store["nodes"]["n3"]))
    obj["metadata"].pop("resourceVersion")
    obj["status"]["allocatable"]["cpu"] = "1"
    server.put("nodes", obj)
    server.history.clear()
    server.put("nodes", node("n4"))
    server.history.clear()
    server.expire_watches.add("nodes")
    server.drop_watches()
    wait_for(lambda: backend.nodes.relists >= 1)
    events = collect(backend, lambda es: len(es) >= 3)
    assert sorted(summary(events)) == [("ADDED", "Node", "n4"), ("DELETED", "Node", "n2"),
                                       ("MODIFIED", "Node", "n3")]
    assert backend.nodes.get("n2") is None
    wait_for(lambda: backend.pods.relists >= 1)  # its history was compacted too
    time.sleep(0.1)
    assert backend.drain_events() == []  # an unchanged relist changes nothing


def test_relist_reports_a_recreated_object_as_deleted_then_added(
        server: FakeApiServer, backend: KubeBackend) -> None:
    server.put("pods", pod("p1"))
    first = started(backend)[0].obj["metadata"]["uid"]
    server.delete("pods", "default/p1", silently=True)
    server.put("pods", pod("p1"))
    server.history.clear()
    server.compacted = server.rv + 1
    server.drop_watches()
    events = collect(backend, lambda es: len(es) >= 2)
    assert summary(events) == [("DELETED", "Pod", "p1"), ("ADDED", "Pod", "p1")]
    assert events[0].obj["metadata"]["uid"] == first
    assert events[1].obj["metadata"]["uid"] != first


def test_watch_reconnects_after_a_server_error(server: FakeApiServer,
                                               backend: KubeBackend) -> None:
    started(backend)
    server.fail("GET", r"^/api/v1/pods$", 500, message="etcd is sad")
    # end the current watch: the next one (the failing request) backs off and retries
    server.drop_watches()
    server.put("pods", pod("p2"))
    events = collect(backend, lambda es: any(e.obj["metadata"]["name"] == "p2" for e in es),
                     timeout=10)
    assert ("ADDED", "Pod", "p2") in summary(events)


def test_a_watch_cut_after_events_resumes_at_once_and_an_empty_one_backs_off(
        server: FakeApiServer, backend: KubeBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """client-go's reflector: only a watch that ended within a second *without an event*
    is a "very short watch" followed by a backoff. The apiserver cuts a watcher that reads
    too slowly after it delivered events: resuming late would stall scheduling."""
    delays: list[float] = []

    class RecordedBackoff(Backoff):
        def next(self) -> float:
            delay = super().next()
            if threading.current_thread().name == "informer-Pod":
                delays.append(delay)
            return delay

    monkeypatch.setattr(kube_module, "Backoff", RecordedBackoff)
    started(backend)
    server.cut_watches_after["pods"] = 1
    for i in range(5):
        server.put("pods", pod(f"p{i}"))
        collect(backend, lambda es: bool(es))
    wait_for(lambda: server.watch_count["pods"] >= 6)  # each event ended a watch
    assert delays == []
    server.cut_watches_after["pods"] = 0  # ended before any event: backs off
    wait_for(lambda: len(delays) >= 2)
    assert delays[1] > delays[0]


def test_an_outage_is_logged_once_per_client_not_per_retry(
        server: FakeApiServer, backend: KubeBackend, caplog: pytest.LogCaptureFixture) -> None:
    """While the API server is down, the informers retry, events and status patches fail
    and binds fail: each client logs one warning when it loses the connection and one info
    line when it is back, and urllib3 adds none of its own per-request retry warnings."""
    caplog.set_level(logging.INFO)
    names = [f"p{i}" for i in range(3)]
    for name in names:
        server.put("pods", pod(name))
    server.put("nodes", node("n1"))
    started(backend)
    server.down = True
    server.drop_watches()
    for name in names:
        backend.record_event(info(server, name), "Warning", "FailedScheduling", "m")
        backend.set_pod_condition(info(server, name), "False", "Unschedulable", "m")
        with pytest.raises(BindError):
            backend.bind(info(server, name), "n1")
    wait_for(lambda: backend.events.failed == len(names), timeout=10)
    informers = [backend.nodes, backend.pods, *backend.selecting, backend.budgets,
                 *backend.storage]
    # every informer has met the outage (one whose watch was dropped retries after a delay)
    wait_for(lambda: all(i.connection.failing for i in informers), timeout=15)
    server.down = False
    server.put("pods", pod("after"))
    collect(backend, lambda es: any(e.obj["metadata"]["name"] == "after" for e in es),
            timeout=10)
    wait_for(lambda: not any(i.connection.failing for i in informers), timeout=15)
    backend.bind(info(server, "after"), "n1")
    backend.record_event(info(server, "after"), "Normal", "Scheduled", "m")
    backend.events.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    clients = (km.CONNECTION_INFORMER.format(resource="Node"),
               km.CONNECTION_INFORMER.format(resource="Pod"),
               *(km.CONNECTION_INFORMER.format(resource=i.name) for i in backend.selecting),
               km.CONNECTION_INFORMER.format(resource="PodDisruptionBudget"),
               *(km.CONNECTION_INFORMER.format(resource=i.name) for i in backend.storage),
               km.CONNECTION_EVENTS, km.CONNECTION_POD_WRITES)
    assert sorted(w.split(":")[0] for w in warnings) == sorted(clients), warnings
    assert all("lost connection to the API server" in w for w in warnings), warnings
    back = [r.getMessage() for r in caplog.records if "reconnected" in r.getMessage()]
    assert sorted(m.split(":")[0] for m in back) == sorted(clients), back


def test_pod_groups_are_watched_when_the_api_is_served() -> None:
    server = FakeApiServer(podgroups=True).start()
    try:
        server.put("podgroups", {"apiVersion": "scheduling.x-k8s.io/v1alpha1",
                                 "kind": "PodGroup", "metadata": {"name": "gang"},
                                 "spec": {"minMember": 3, "scheduleTimeoutSeconds": 30}})
        live = KubeBackend(server.api_client())
        events = started(live)
        assert ("ADDED", "PodGroup", "gang") in summary(events)
        groups = live.pod_groups()
        assert groups["default/gang"].min_member == 3
        assert groups["default/gang"].schedule_timeout_seconds == 30
        live.close()
    finally:
        server.stop()


def test_namespaces_and_workloads_are_watched(server: FakeApiServer,
                                              backend: KubeBackend) -> None:
    """Namespaces and the workloads of DefaultSelector are listed and watched like pods;
    updates that change nothing the scheduler reads of them (status, annotations) are
    not emitted."""
    server.put("namespaces", {"metadata": {"name": "shop", "labels": {"team": "a"}}})
    server.put("services", {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}})
    server.put("replicationcontrollers", {"metadata": {"name": "old"},
                                          "spec": {"selector": {"app": "old"}}})
    replica_set = {"metadata": {"name": "web-1"},
                   "spec": {"selector": {"matchLabels": {"app": "web"}}}}
    server.put("replicasets", replica_set)
    server.put("statefulsets", {"metadata": {"name": "db"},
                                "spec": {"selector": {"matchLabels": {"app": "db"}}}})
    events = started(backend)
    assert sorted(summary(events)) == [
        ("ADDED", "Namespace", "shop"), ("ADDED", "ReplicaSet", "web-1"),
        ("ADDED", "ReplicationController", "old"), ("ADDED", "Service", "web"),
        ("ADDED", "StatefulSet", "db")]
    assert {e.resource: e.obj["apiVersion"] for e in events} == {
        "Namespace": "v1", "Service": "v1", "ReplicationController": "v1",
        "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1"}
    server.put("replicasets", {**replica_set, "status": {"replicas": 3}})
    server.put("namespaces", {"metadata": {"name": "shop", "labels": {"team": "a"},
                                           "annotations": {"note": "x"}}})
    suppressed = [i for i in backend.selecting if i.name in ("ReplicaSet", "Namespace")]
    wait_for(lambda: all(i.suppressed == 1 for i in suppressed))
    assert backend.drain_events() == []
    server.put("namespaces", {"metadata": {"name": "shop", "labels": {"team": "b"}}})
    server.put("replicasets", {"metadata": {"name": "web-1"}, "spec": {
        "selector": {"matchLabels": {"app": "web", "rev": "2"}}}})
    server.delete("services", "default/web")
    events = collect(backend, lambda es: len(es) >= 3)
    assert sorted(summary(events)) == [
        ("DELETED", "Service", "web"), ("MODIFIED", "Namespace", "shop"),
        ("MODIFIED", "ReplicaSet", "web-1")]


def test_namespace_restricts_pods(server: FakeApiServer) -> None:
    server.put("pods", pod("mine"))
    other = pod("theirs")
    other["metadata"]["namespace"] = "other"
    server.put("pods", other)
    server.put("services", {"metadata": {"name": "mine", "namespace": "default"}})
    server.put("services", {"metadata": {"name": "theirs", "namespace": "other"}})
    server.put("namespaces", {"metadata": {"name": "other"}})
    live = KubeBackend(server.api_client(), namespace="default")
    events = started(live)
    assert [n for k, r, n in summary(events) if r == "Pod"] == ["mine"]
    assert [n for k, r, n in summary(events) if r == "Service"] == ["mine"]
    assert [n for k, r, n in summary(events) if r == "Namespace"] == ["other"]  # cluster-wide
    live.close()


# --------------------------------------------------------------------------- writes


def test_bind_posts_a_binding_with_the_uid(server: FakeApiServer,
                                           backend: KubeBackend) -> None:
    server.put("nodes", node("n1"))
    server.put("pods", pod("p1"))
    started(backend)
    p1 = info(server, "p1")
    backend.bind(p1, "n1")
    method, path, body = changes(server)[-1]
    assert (method, path) == ("POST", "/api/v1/namespaces/default/pods/p1/binding")
    assert body["metadata"] == {"name": "p1", "namespace": "default", "uid": p1.uid}
    assert body["target"] == {"apiVersion": "v1", "kind": "Node", "name": "n1"}
    events = collect(backend, lambda es: bool(es))
    assert events[0].kind == "MODIFIED" and events[0].obj["spec"]["nodeName"] == "n1"
    with pytest.raises(BindError, match='already assigned to node "n1"'):
        backend.bind(p1, "n1")


def test_bind_errors(server: FakeApiServer, backend: KubeBackend) -> None:
    server.put("nodes", node("n1"))
    server.put("pods", pod("p1"))
    server.put("pods", pod("p2"))
    started(backend)
    with pytest.raises(BindError, match='nodes "gone" not found'):
        backend.bind(info(server, "p1"), "gone")
    server.fail("POST", "binding", 409, "Conflict", "Precondition failed: UID")
    with pytest.raises(BindError, match="Precondition failed"):
        backend.bind(info(server, "p1"), "n1")
    server.fail("POST", "binding", 422, "Invalid", "bad binding")
    with pytest.raises(BindError, match="bad binding"):
        backend.bind(info(server, "p1"), "n1")
    server.fail("POST", "binding", 500, "InternalError", "etcd timeout")
    with pytest.raises(BindError, match="etcd timeout"):
        backend.bind(info(server, "p1"), "n1")
    p2 = info(server, "p2")
    server.delete("pods", "default/p2")
    wait_for(lambda: backend.pods.get("default/p2") is None)
    with pytest.raises(BindError, match='pods "p2" not found'):
        backend.bind(p2, "n1")


def test_start_bind_patches_then_binds_on_a_thread_and_wakes_the_loop(
        server: FakeApiServer, backend: KubeBackend) -> None:
    server.put("nodes", node("n1"))
    server.put("pods", pod("p1"))
    started(backend)
    p1 = info(server, "p1")
    server.binding_gate = threading.Event()
    request = BindRequest(p1, "n1", labels={"team": "a"})
    backend.start_bind(request)  # returns while the POST is held by the server
    wait_for(lambda: server.binding_active == 1)
    assert backend.drain_bind_outcomes() == []
    threading.Timer(0.2, server.binding_gate.set).start()
    began = time.monotonic()
    backend.wait_for_events(5)  # the outcome wakes the loop (or the bound pod's event)
    assert time.monotonic() - began < 2
    assert backend.wait_for_binds(5)
    (outcome,) = backend.drain_bind_outcomes()
    assert outcome.request is request and outcome.error is None and outcome.seconds > 0
    calls = [(m, p) for m, p, _ in changes(server)]
    assert calls == [("PATCH", "/api/v1/namespaces/default/pods/p1"),
                     ("POST", "/api/v1/namespaces/default/pods/p1/binding")]
    assert backend.stats.binds == 1


def test_start_bind_failures_are_outcomes(server: FakeApiServer,
                                          backend: KubeBackend) -> None:
    server.put("nodes", node("n1"))
    server.put("pods", pod("p1"))
    started(backend)
    server.fail("POST", "binding", 409, "Conflict", "Precondition failed: UID")
    backend.start_bind(BindRequest(info(server, "p1"), "n1"))
    backend.start_bind(BindRequest(info(server, "p1"), "gone"))
    assert backend.wait_for_binds(5)
    errors = sorted(str(o.error) for o in backend.drain_bind_outcomes())
    assert errors == ["Precondition failed: UID", 'nodes "gone" not found']


def test_parallel_binds_are_bounded(server: FakeApiServer) -> None:
    server.put("nodes", node("n1"))
    names = [f"p{i}" for i in range(5)]
    for name in names:
        server.put("pods", pod(name))
    live = KubeBackend(server.api_client(), parallel_binds=2)
    try:
        started(live)
        server.binding_gate = threading.Event()
        submitter = threading.Thread(target=lambda: [
            live.start_bind(BindRequest(info(server, n), "n1")) for n in names], daemon=True)
        submitter.start()
        wait_for(lambda: server.binding_active == 2)
        time.sleep(0.2)
        assert submitter.is_alive()  # the third hand-over waits for a slot
        assert live.binder.in_flight == 2 and server.binding_active == 2
        server.binding_gate.set()
        submitter.join(5)
        assert live.wait_for_binds(5)
        outcomes = live.drain_bind_outcomes()
        assert sorted(o.request.pod.name for o in outcomes) == names
        assert all(o.error is None for o in outcomes)
        assert server.binding_peak == 2 and live.binder.peak == 2
    finally:
        live.close()


def test_close_abandons_binds_not_sent(server: FakeApiServer, backend: KubeBackend) -> None:
    server.put("nodes", node("n1"))
    for name in ("p1", "p2", "p3"):
        server.put("pods", pod(name))
    started(backend)
    # one token now, the next in 10 s: two binds wait for the rate limiter
    stop = backend.transport.stop
    assert stop is not None
    backend.transport.limiter = TokenBucket(0.1, 1, sleep=stop.wait)
    for name in ("p1", "p2", "p3"):
        backend.start_bind(BindRequest(info(server, name), "n1"))
    wait_for(lambda: backend.stats.binds == 1)
    assert backend.binder.in_flight == 2
    began = time.monotonic()
    backend.close()
    assert time.monotonic() - began < 2  # token waits end at once
    outcomes = {o.request.pod.name: o.error for o in backend.drain_bind_outcomes()}
    assert outcomes["p1"] is None
    assert "closed" in str(outcomes["p2"]) and "closed" in str(outcomes["p3"])
    sent = [p for m, p, _ in changes(server) if p.endswith("/binding")]
    assert sent == ["/api/v1/namespaces/default/pods/p1/binding"]


def test_set_pod_condition_patches_status_once(server: FakeApiServer,
                                               backend: KubeBackend) -> None:
    server.put("pods", pod("p1"))
    started(backend)
    p1 = info(server, "p1")
    backend.set_pod_condition(p1, "False", "Unschedulable", "0/3 nodes are available")
    method, path, body = changes(server)[-1]
    assert (method, path) == ("PATCH", "/api/v1/namespaces/default/pods/p1/status")
    condition = body["status"]["conditions"][0]
    assert condition["type"] == "PodScheduled" and condition["status"] == "False"
    assert condition["reason"] == "Unschedulable"
    assert condition["message"] == "0/3 nodes are available"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", condition["lastTransitionTime"])
    # the pod as the informer saw it: a precondition (a failure never lands on a bound pod)
    assert body["metadata"] == {"uid": p1.uid, "resourceVersion": p1.obj["metadata"][
        "resourceVersion"]}
    collect(backend, lambda es: bool(es))
    count = writes(server)
    backend.set_pod_condition(p1, "False", "Unschedulable", "0/3 nodes are available")
    assert writes(server) == count  # unchanged: no request
    assert backend.stats.condition_skips == 1
    backend.set_pod_condition(p1, "False", "Unschedulable", "0/4 nodes are available")
    changed = changes(server)[-1][2]["status"]["conditions"][0]
    assert changed["lastTransitionTime"] == condition["lastTransitionTime"]  # same status


def test_writes_to_a_vanished_or_replaced_pod_raise(server: FakeApiServer,
                                                    backend: KubeBackend) -> None:
    server.put("pods", pod("p1"))
    started(backend)
    old = info(server, "p1")
    server.delete("pods", "default/p1")
    wait_for(lambda: backend.pods.get("default/p1") is None)
    with pytest.raises(BackendError, match="not found"):
        backend.set_pod_condition(old, "False", "Unschedulable", "m")
    server.put("pods", pod("p1"))
    wait_for(lambda: backend.pods.get("default/p1") is not None)
    with pytest.raises(BackendError, match="deleted and recreated"):
        backend.set_nominated_node(old, "n1")
    # the server's precondition catches what the informer has not seen yet
    fresh = info(server, "p1")
    server.fail("PATCH", "p1$", 422, "Invalid", "immutable", [{"field": "metadata.uid"}])
    with pytest.raises(BackendError, match="deleted and recreated"):
        backend.patch_pod_metadata(fresh, {"a": "b"}, {})


def test_status_patch_failures_are_logged_not_raised(server: FakeApiServer,
                                                     backend: KubeBackend) -> None:
    server.put("pods", pod("p1"))
    started(backend)
    server.fail("PATCH", "status", 403, "Forbidden", "no")
    backend.set_pod_condition(info(server, "p1"), "False", "Unschedulable", "m")
    server.fail("PATCH", "status", 503, "ServiceUnavailable", "busy")  # retried
    backend.set_pod_condition(info(server, "p1"), "False", "Unschedulable", "m2")
    stored = server.get("pods", "default/p1")
    assert stored is not None
    assert stored["status"]["conditions"][0]["message"] == "m2"


def _bind_in_server(server: FakeApiServer, name: str) -> None:
    """Bind a pod as the API server does (nodeName, PodScheduled=True)."""
    bound = json.loads(json.dumps(server.get("pods", f"default/{name}")))
    bound["spec"]["nodeName"] = "n1"
    _set_condition(bound, {"type": "PodScheduled", "status": "True"})
    server.put("pods", bound)


def test_a_failure_is_never_written_on_a_pod_bound_meanwhile(
        server: FakeApiServer, backend: KubeBackend) -> None:
    """A bind whose answer was lost (the API server died) is a failure for the engine, but
    the pod may be bound. p0: the informer saw the binding; p1: the informer lags (the API
    server is restarting) and only the server knows; p2 was only relabelled meanwhile.
    PodScheduled=False is written on p2's live version, never on a bound pod."""
    for name in ("p0", "p1", "p2"):
        server.put("pods", pod(name))
    started(backend)
    stale = {name: info(server, name) for name in ("p0", "p1", "p2")}
    _bind_in_server(server, "p0")
    wait_for(lambda: (backend.pods.get("default/p0") or {})["spec"].get("nodeName"))
    backend.pods.stop()  # from now on the informer's pods are stale
    _bind_in_server(server, "p1")
    relabelled = json.loads(json.dumps(server.get("pods", "default/p2")))
    relabelled["metadata"]["labels"] = {"team": "a"}
    server.put("pods", relabelled)
    for name in ("p0", "p1", "p2"):
        backend.set_pod_condition(stale[name], "False", "SchedulerError", "binding rejected")
    conditions = {name: (server.get("pods", f"default/{name}") or {})["status"]["conditions"]
                  for name in ("p0", "p1", "p2")}
    for name in ("p0", "p1"):
        assert [(c["status"], c.get("message")) for c in conditions[name]] == [("True", None)]
    assert [(c["status"], c["message"]) for c in conditions["p2"]] == [
        ("False", "binding rejected")]


def test_nominated_node_and_metadata_patches(server: FakeApiServer,
                                             backend: KubeBackend) -> None:
    server.put("pods", pod("p1"))
    started(backend)
    p1 = info(server, "p1")
    backend.set_nominated_node(p1, "n1")
    assert changes(server)[-1][2]["status"] == {"nominatedNodeName": "n1"}
    wait_for(lambda: (backend.pods.get("default/p1") or {}).get("status", {}).get(
        "nominatedNodeName") == "n1")
    count = writes(server)
    backend.set_nominated_node(p1, "n1")
    assert writes(server) == count
    backend.set_nominated_node(p1, None)
    assert changes(server)[-1][2]["status"] == {"nominatedNodeName": None}
    backend.patch_pod_metadata(p1, {"team": "a", "old": None}, {"note": "x"})
    method, path, body = changes(server)[-1]
    assert (method, path) == ("PATCH", "/api/v1/namespaces/default/pods/p1")
    assert body["metadata"] == {"uid": p1.uid, "labels": {"team": "a", "old": None},
                                "annotations": {"note": "x"}}
    stored = server.get("pods", "default/p1")
    assert stored is not None and stored["metadata"]["labels"] == {"team": "a"}


def test_evict_marks_then_deletes_the_pod_as_kube_scheduler(server: FakeApiServer,
                                                           backend: KubeBackend) -> None:
    """kube-scheduler's preemption: a DisruptionTarget condition, then a plain delete —
    never the Eviction API, which a PodDisruptionBudget could refuse."""
    server.put("pods", pod("victim", node_name="n1"))
    started(backend)
    victim = info(server, "victim")
    backend.evict(victim, "policysched: preempting to accommodate a higher priority pod")
    calls = [(m, p) for m, p, _ in changes(server)[-2:]]
    assert calls == [("PATCH", "/api/v1/namespaces/default/pods/victim/status"),
                     ("DELETE", "/api/v1/namespaces/default/pods/victim")]
    condition = changes(server)[-2][2]["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"],
            condition["message"]) == (
        "DisruptionTarget", "True", "PreemptionByScheduler",
        "policysched: preempting to accommodate a higher priority pod")
    assert changes(server)[-1][2]["preconditions"] == {"uid": victim.uid}
    assert server.get("pods", "default/victim") is None
    assert not any(p.endswith("/eviction") for _, p, _ in server.requests)


def test_evict_does_not_mark_a_pod_marked_already(server: FakeApiServer,
                                                  backend: KubeBackend) -> None:
    """kube patches the condition only when it changes (UpdatePodCondition)."""
    marked = pod("victim", node_name="n1")
    marked["status"] = {"conditions": [{
        "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
        "message": "m"}]}
    server.put("pods", marked)
    started(backend)
    backend.evict(info(server, "victim"), "m")
    assert [(m, p) for m, p, _ in changes(server)[-1:]] == [
        ("DELETE", "/api/v1/namespaces/default/pods/victim")]


def test_disruption_budgets_are_watched(server: FakeApiServer, backend: KubeBackend) -> None:
    """PodDisruptionBudgets are listed and watched; an update that changes nothing
    preemption reads (its minAvailable, its other status fields) is not emitted."""
    budget = {"metadata": {"name": "web"}, "spec": {
        "minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 2}}
    server.put("poddisruptionbudgets", budget)
    events = started(backend)
    assert summary(events) == [("ADDED", "PodDisruptionBudget", "web")]
    assert events[0].obj["apiVersion"] == "policy/v1"
    server.put("poddisruptionbudgets", {**budget, "status": {"disruptionsAllowed": 1,
                                                             "currentHealthy": 3}})
    wait_for(lambda: backend.budgets.suppressed == 1)
    server.put("poddisruptionbudgets", {**budget, "status": {"disruptionsAllowed": 0}})
    events = collect(backend, lambda es: len(es) >= 1)
    assert summary(events) == [("MODIFIED", "PodDisruptionBudget", "web")]


def test_storage_objects_are_watched(server: FakeApiServer, backend: KubeBackend) -> None:
    """PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes and CSIDrivers
    are listed and watched, with their apiVersions; an update that changes nothing the
    scheduler reads (a claim's status capacity, a volume's status message) is not emitted,
    a binding, a phase, a selected-node annotation or a driver's limit is; deletions are."""
    claim = {"metadata": {"name": "data"}, "spec": {"storageClassName": "csi"},
             "status": {"phase": "Pending"}}
    volume = {"metadata": {"name": "pv1"}, "spec": {
        "csi": {"driver": "d", "volumeHandle": "h"}}, "status": {"phase": "Available"}}
    csi_node = {"metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": "d", "nodeID": "n1", "allocatable": {"count": 1}}]}}
    for resource, obj in (("persistentvolumeclaims", claim), ("persistentvolumes", volume),
                          ("storageclasses", {"metadata": {"name": "csi"}, "provisioner": "d"}),
                          ("csinodes", csi_node),
                          ("csidrivers", {"metadata": {"name": "d"}, "spec": {}})):
        server.put(resource, obj)
    events = started(backend)
    assert sorted(summary(events)) == [
        ("ADDED", "CSIDriver", "d"), ("ADDED", "CSINode", "n1"),
        ("ADDED", "PersistentVolume", "pv1"), ("ADDED", "PersistentVolumeClaim", "data"),
        ("ADDED", "StorageClass", "csi")]
    assert {e.resource: e.obj["apiVersion"] for e in events} == {
        "PersistentVolumeClaim": "v1", "PersistentVolume": "v1",
        "StorageClass": "storage.k8s.io/v1", "CSINode": "storage.k8s.io/v1",
        "CSIDriver": "storage.k8s.io/v1"}
    claims, volumes = backend.storage[0], backend.storage[1]
    server.put("persistentvolumeclaims", {**claim, "status": {
        "phase": "Pending", "conditions": [{"type": "Resizing", "status": "True"}]}})
    server.put("persistentvolumes", {**volume, "status": {"phase": "Available",
                                                          "message": "m"}})
    wait_for(lambda: claims.suppressed == 1 and volumes.suppressed == 1)
    server.put("persistentvolumeclaims", {
        "metadata": {"name": "data", "annotations": {
            "volume.kubernetes.io/selected-node": "n1"}},
        "spec": {**claim["spec"], "volumeName": "pv1"}, "status": {"phase": "Bound"}})
    server.put("csinodes", {**csi_node, "spec": {"drivers": [
        {"name": "d", "nodeID": "n1", "allocatable": {"count": 2}}]}})
    server.delete("csidrivers", "d")
    events = collect(backend, lambda es: len(es) >= 3)
    assert sorted(summary(events)) == [
        ("DELETED", "CSIDriver", "d"), ("MODIFIED", "CSINode", "n1"),
        ("MODIFIED", "PersistentVolumeClaim", "data")]


def test_events_are_written_like_kube_scheduler(server: FakeApiServer,
                                                backend: KubeBackend) -> None:
    server.put("pods", pod("p1"))
    started(backend)
    p1 = info(server, "p1")
    backend.record_event(p1, "Warning", "FailedScheduling", "0/3 nodes are available")
    backend.record_event(p1, "Normal", "Scheduled", "Successfully assigned default/p1 to n1")
    backend.events.close()
    posted = [b for m, p, b in server.requests if m == "POST" and p.endswith("/events")]
    assert [p["reason"] for p in posted] == ["FailedScheduling", "Scheduled"]
    failed, scheduled = posted
    assert failed["apiVersion"] == "events.k8s.io/v1"
    assert failed["metadata"]["namespace"] == "default"
    assert re.fullmatch(r"p1\.[0-9a-f]+", failed["metadata"]["name"])
    assert (failed["type"], failed["action"], failed["note"]) == (
        "Warning", "Scheduling", "0/3 nodes are available")
    assert (scheduled["type"], scheduled["action"]) == ("Normal", "Binding")
    assert failed["reportingController"] == CONTROLLER
    assert failed["reportingInstance"] == "policysched-test"
    assert failed["regarding"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
                                   "name": "p1", "uid": p1.uid,
                                   "resourceVersion": p1.obj["metadata"]["resourceVersion"]}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", failed["eventTime"])


def test_repeated_events_become_a_series(server: FakeApiServer,
                                         backend: KubeBackend) -> None:
    server.put("pods", pod("p1"))
    started(backend)
    p1 = info(server, "p1")
    for i in range(4):
        backend.record_event(p1, "Warning", "FailedScheduling", f"attempt {i}")
    backend.events.close()
    sent = [(m, b) for m, p, b in server.requests if "/events" in p]
    # a create, then series patches (the count written is the latest at write time)
    assert [m for m, _ in sent][:2] == ["POST", "PATCH"] and len(sent) <= 3
    assert sent[0][1]["note"] == "attempt 0"
    assert sent[-1][1]["series"]["count"] == 4
    stored = next(iter(server.store["events"].values()))
    assert stored["series"]["count"] == 4


def test_events_of_another_action_are_not_folded_into_a_series(
        server: FakeApiServer, backend: KubeBackend) -> None:
    """Audit findings of two points (actions AuditFilter, AuditPermit) on one pod are two
    Events, each with its note: a series folds only events of one type, reason and
    action."""
    server.put("pods", pod("p1"))
    started(backend)
    p1 = info(server, "p1")
    backend.record_event(p1, "Warning", "PolicyAudit", "audit: t/f would have ...",
                         "AuditFilter")
    backend.record_event(p1, "Warning", "PolicyAudit", "audit: t/p would have ...",
                         "AuditPermit")
    backend.events.close()
    posted = [b for m, p, b in server.requests if m == "POST" and p.endswith("/events")]
    assert [(p["action"], p["note"]) for p in posted] == [
        ("AuditFilter", "audit: t/f would have ..."), ("AuditPermit", "audit: t/p would have ...")]


class _EventSink:
    """Records the Event writes of an ``EventRecorder`` (a stand-in for its transport)."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, Any]] = []

    def send(self, method: str, path: str, *, body: Any = None, **kwargs: Any) -> None:
        self.writes.append((method, body))


def test_event_series_follow_client_go_isomorphism_and_write_schedule() -> None:
    sink, clock = _EventSink(), SimulatedClock(1000)
    transport: Any = sink
    recorder = EventRecorder(transport, clock, CONTROLLER, "me")

    def record(resource_version: str, note: str) -> None:
        obj = pod("p1")
        obj["metadata"].update(uid="u1", resourceVersion=resource_version)
        recorder.record(pod_info(obj), "Warning", "FailedScheduling", "Scheduling", note)
        while not recorder._queue.empty():
            recorder._write(recorder._queue.get_nowait())

    record("7", "first")
    record("8", "the pod changed: a new Event, not a series")
    assert [m for m, _ in sink.writes] == ["POST", "POST"]
    for _ in range(3):
        clock.advance(10)
        record("8", "again")
    # the second isomorphic event patches the series at once; later counts wait
    assert [m for m, _ in sink.writes] == ["POST", "POST", "PATCH"]
    assert sink.writes[-1][1]["series"]["count"] == 2
    clock.advance(EVENT_SERIES_FINISH - 1)
    recorder._flush(ended_only=True)  # not ended yet: nothing written
    assert len(sink.writes) == 3
    clock.advance(2)
    recorder._flush(ended_only=True)  # ended: its final count, then forgotten
    assert [m for m, _ in sink.writes][3:] == ["PATCH"]
    assert sink.writes[-1][1]["series"]["count"] == 4
    record("8", "anew")
    assert sink.writes[-1][0] == "POST" and sink.writes[-1][1]["note"] == "anew"


def test_remembered_event_series_are_bounded_least_recently_seen_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kube_module, "EVENT_CACHE_SIZE", 3)
    sink, clock = _EventSink(), SimulatedClock(1000)
    transport: Any = sink
    recorder = EventRecorder(transport, clock, CONTROLLER, "me")

    def record(name: str) -> None:
        obj = pod(name)
        obj["metadata"].update(uid=name, resourceVersion="1")
        recorder.record(pod_info(obj), "Warning", "FailedScheduling", "Scheduling", name)
        while not recorder._queue.empty():
            recorder._write(recorder._queue.get_nowait())

    for name in ("a", "a", "a", "b", "c", "a", "d"):  # a: count 4, written 2
        clock.advance(1)
        record(name)
    # "d" makes four: "b", the least recently seen (not "a", repeated since), is forgotten
    assert [key[4] for key in recorder._series] == ["c", "a", "d"]
    for name in ("e", "f"):
        record(name)
    # "a" forgotten too: its grown count written first, as when a series ends
    assert [key[4] for key in recorder._series] == ["d", "e", "f"]
    patches = [body["series"]["count"] for method, body in sink.writes if method == "PATCH"]
    assert patches == [2, 4]
    clock.advance(EVENT_SERIES_FINISH + 1)
    record("g")  # the ended ones go whatever the size
    assert [key[4] for key in recorder._series] == ["g"]


def test_event_failures_never_raise(server: FakeApiServer, backend: KubeBackend) -> None:
    server.put("pods", pod("p1"))
    started(backend)
    server.fail("POST", "events", 403, "Forbidden", "no events for you")
    backend.record_event(info(server, "p1"), "Normal", "Scheduled", "m")
    backend.events.close()
    assert backend.events.failed == 1


def test_notes_are_truncated_and_times_have_microseconds() -> None:
    assert truncate_note("short") == "short"
    long = truncate_note("x" * 2000)
    assert len(long.encode()) == 1024 and long.endswith(" ...")
    assert micro_time(1.5) == "1970-01-01T00:00:01.500000Z"


# --------------------------------------------------------------------------- loop


@pytest.fixture(scope="module")
def engine() -> Any:
    return load_engine([], None)


class Recorder(RunObserver):
    def __init__(self) -> None:
        self.attempts: list[Attempt] = []
        self.leading: list[bool] = []
        self.synced = 0
        self.loops = 0

    def on_attempt(self, attempt: Attempt) -> None:
        self.attempts.append(attempt)

    def on_leading(self, leading: bool) -> None:
        self.leading.append(leading)

    def on_synced(self, seconds: float, nodes: int, pods: int) -> None:
        self.synced += 1

    def on_loop(self, scheduler: Any) -> None:
        self.loops += 1


def start_loop(loop: SchedulingLoop) -> threading.Thread:
    thread = threading.Thread(target=loop.run_until, daemon=True)
    thread.start()
    return thread


def test_runner_binds_pods_and_reports_failures(server: FakeApiServer, engine: Any) -> None:
    for name in ("n1", "n2"):
        server.put("nodes", node(name))
    server.put("pods", pod("fits"))
    server.put("pods", pod("huge", cpu="64"))
    server.put("pods", pod("foreign", scheduler="default-scheduler"))
    recorder = Recorder()
    loop = SchedulingLoop(engine, lambda: KubeBackend(server.api_client()), observers=[recorder])
    thread = start_loop(loop)
    try:
        wait_for(lambda: len(recorder.attempts) >= 2)
        by_pod = {a.pod: a for a in recorder.attempts}
        assert by_pod["default/fits"].result == "scheduled"
        assert by_pod["default/fits"].node in ("n1", "n2")
        assert by_pod["default/huge"].result == "unschedulable"
        assert "Insufficient cpu" in by_pod["default/huge"].message
        stored = server.get("pods", "default/fits")
        assert stored is not None and stored["spec"]["nodeName"] in ("n1", "n2")
        foreign = server.get("pods", "default/foreign")
        assert foreign is not None and "nodeName" not in foreign["spec"]
        huge = server.get("pods", "default/huge")
        assert huge is not None
        assert huge["status"]["conditions"][0]["reason"] == "Unschedulable"
        # a pod created later is bound through the watch
        server.put("pods", pod("late"))
        wait_for(lambda: (server.get("pods", "default/late") or {}).get("spec", {}).get(
            "nodeName"))
        assert recorder.synced == 1 and recorder.leading == [True]
        assert loop.synced and loop.leading
    finally:
        loop.stop()
        thread.join(5)
    assert not thread.is_alive()
    assert loop.backend is None


def test_runner_honours_retry_after(server: FakeApiServer, engine: Any) -> None:
    server.put("nodes", node("n1"))
    # long enough that the first attempt comes before it ends on a busy machine
    server.put("pods", pod("delayed", annotations={"delay": "4"}))
    created = time.time()
    recorder = Recorder()
    loop = SchedulingLoop(engine, lambda: KubeBackend(server.api_client()), observers=[recorder])
    thread = start_loop(loop)
    try:
        bound = wait_for(lambda: next((a for a in recorder.attempts
                                       if a.result == "scheduled"), None), timeout=8)
        # creationTimestamp has whole seconds: the delay ends 3..4 s after creation
        assert 2.9 <= time.time() - created <= 5.0
        assert bound.attempts == 2
    finally:
        loop.stop()
        thread.join(5)


def test_runner_schedules_only_while_leading(server: FakeApiServer, engine: Any) -> None:
    server.put("nodes", node("n1"))
    leader = threading.Event()
    backends: list[KubeBackend] = []

    def make() -> KubeBackend:
        backends.append(KubeBackend(server.api_client()))
        return backends[-1]

    recorder = Recorder()
    loop = SchedulingLoop(engine, make, is_leader=leader.is_set, observers=[recorder])
    thread = start_loop(loop)
    try:
        server.put("pods", pod("p1"))
        time.sleep(0.7)
        assert not backends and recorder.attempts == []  # a follower has no cache
        leader.set()
        wait_for(lambda: recorder.attempts)
        leader.clear()
        wait_for(lambda: loop.backend is None)
        server.put("pods", pod("p2"))
        time.sleep(0.7)
        assert len(recorder.attempts) == 1
        leader.set()  # a new leader: a fresh backend lists everything again
        wait_for(lambda: len(recorder.attempts) == 2)
        assert len(backends) == 2 and recorder.leading == [True, False, True]
        assert recorder.synced == 2
    finally:
        loop.stop()
        thread.join(5)


def test_runner_swaps_policies_between_cycles(server: FakeApiServer, engine: Any) -> None:
    server.put("nodes", node("n1"))
    loop = SchedulingLoop(engine, lambda: KubeBackend(server.api_client()))
    thread = start_loop(loop)
    try:
        wait_for(lambda: loop.synced)
        renamed = {"other": engine.frameworks["policysched"]}
        loop.swap_policies(renamed)
        wait_for(lambda: loop.scheduler is not None and set(loop.scheduler.profiles) ==
                 {"other"})
        server.put("pods", pod("p1", scheduler="other"))
        wait_for(lambda: (server.get("pods", "default/p1") or {}).get("spec", {}).get(
            "nodeName"))
    finally:
        loop.stop()
        thread.join(5)


def test_runner_recovers_a_pod_when_a_write_raises(server: FakeApiServer,
                                                   engine: Any) -> None:
    server.put("nodes", node("n1"))
    loop = SchedulingLoop(engine, lambda: KubeBackend(server.api_client()))
    thread = start_loop(loop)
    try:
        wait_for(lambda: loop.synced)
        scheduler = loop.scheduler
        assert scheduler is not None
        original = scheduler.backend.start_bind
        calls = []

        def exploding(request: Any) -> None:
            calls.append(request.pod.key)
            if len(calls) == 1:
                raise RuntimeError("boom")
            original(request)

        scheduler.backend.start_bind = exploding  # type: ignore[method-assign]
        server.put("pods", pod("p1"))
        wait_for(lambda: (server.get("pods", "default/p1") or {}).get("spec", {}).get(
            "nodeName"), timeout=8)
        assert calls == ["default/p1", "default/p1"] and loop.errors == 1
    finally:
        loop.stop()
        thread.join(5)


def test_runner_finishes_the_binds_in_flight_when_stopped(server: FakeApiServer,
                                                          engine: Any) -> None:
    server.put("nodes", node("n1"))
    server.binding_gate = threading.Event()
    recorder = Recorder()
    loop = SchedulingLoop(engine, lambda: KubeBackend(server.api_client()), observers=[recorder])
    thread = start_loop(loop)
    names = ["default/p1", "default/p2", "default/p3"]
    try:
        wait_for(lambda: loop.synced)
        for key in names:
            server.put("pods", pod(key.split("/")[1]))
        wait_for(lambda: server.binding_active == 3)  # scheduled on, binds all in flight
        scheduler = loop.scheduler
        assert scheduler is not None and sorted(scheduler.binds_in_flight) == names
        assert recorder.attempts == []
        loop.stop()
        time.sleep(0.3)
        assert thread.is_alive()  # waiting for the binds
        server.binding_gate.set()
        thread.join(5)
    finally:
        server.binding_gate.set()
        loop.stop()
        thread.join(5)
    assert not thread.is_alive()
    scheduled = [a for a in recorder.attempts if a.result == "scheduled"]
    assert sorted(a.pod for a in scheduled) == names
    assert all(a.duration >= 0.3 for a in scheduled)  # timed from the hand-over to the end
    events = [b["regarding"]["name"] for m, p, b in list(server.requests)
              if m == "POST" and p.endswith("/events") and b["reason"] == "Scheduled"]
    assert sorted(events) == ["p1", "p2", "p3"]


# --------------------------------------------------------------------------- run()

RUN_POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: {name}
spec:
  filter:
  - name: not-cordoned
    expression: "!node.unschedulable"
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as e:
        return int(e.code), e.read().decode()


def test_run_serves_metrics_and_health_and_hot_reloads(server: FakeApiServer,
                                                       tmp_path: Any) -> None:
    from policysched.service.main import run

    port = _free_port()
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "a.yaml").write_text(RUN_POLICY.format(name="first"))
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: policysched.io/v1alpha1\nkind: SchedulerConfiguration\n"
                      f"healthzBindAddress: 127.0.0.1:{port}\n"
                      "policySources:\n  directories: [policies]\n"
                      "profiles:\n- schedulerName: policysched\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": server.url}}],
        "users": [{"name": "fake", "user": {"token": "secret"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}]}))
    server.put("nodes", node("n1"))
    server.put("pods", pod("p1"))
    stop = threading.Event()
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(run(
        str(kubeconfig), str(config), [], False, stop_event=stop,
        install_signal_handlers=False, identity="policysched-replica-1")), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: (server.get("pods", "default/p1") or {}).get("spec", {}).get(
            "nodeName"), timeout=10)
        assert _http(url + "/healthz") == (200, "ok\n")
        wait_for(lambda: _http(url + "/readyz")[0] == 200)
        text = wait_for(lambda: next(  # the attempt is reported just after the bind
            (t for _, t in [_http(url + "/metrics")] if 'scheduler_schedule_attempts_total{'
             'profile="policysched",result="scheduled"} 1.0' in t), None))
        assert ('scheduler_framework_extension_point_duration_seconds_count{'
                'extension_point="Filter",profile="policysched",status="Success"}') in text
        scheduled = wait_for(lambda: next(
            (b for m, p, b in server.requests if m == "POST" and p.endswith("/events")
             and b["reason"] == "Scheduled"), None))
        assert scheduled["reportingInstance"] == "policysched-replica-1"

        (policies / "b.yaml").write_text(RUN_POLICY.format(name="second"))
        wait_for(lambda: 'policysched_policy_reloads_total{result="success"} 1.0'
                 in _http(url + "/metrics")[1], timeout=10)
    finally:
        stop.set()
        thread.join(10)
    assert codes == [0]
    with pytest.raises(OSError):
        _http(url + "/healthz")


def test_client_limits_come_from_flags_then_configuration_then_defaults() -> None:
    from policysched.service.main import client_limits

    assert client_limits({}, None, None) == (50.0, 100)  # kube-scheduler's clientConnection
    configured = {"clientConnection": {"qps": 200, "burst": 400}}
    assert client_limits(configured, None, None) == (200.0, 400)
    assert client_limits(configured, 5, None) == (5, 400)
    assert client_limits({"clientConnection": {"burst": 7}}, None, 9) == (50.0, 9)
