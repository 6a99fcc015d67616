#!/usr/bin/env python3
"""Tiny stdlib-only Kubernetes API helper used by deploy/local/cluster.sh.

It reads the connection settings written by ``cluster.sh up`` from
``$CLUSTER_DIR/cluster.env`` (APISERVER_URL, ADMIN_TOKEN, CA_CERT) and talks to
the apiserver with http.client (one keep-alive TLS connection per thread).

Subcommands:
  create-nodes N [--start K]   create kwok-node-K..kwok-node-(K+N-1) from node-template.json
  wait-nodes-ready N [--timeout S]
                               wait until N nodes labelled type=kwok report Ready=True
  smoke [--timeout S]          prove the fake cluster works: nodes Ready, a Pod with
                               spec.nodeName becomes Running, a Pod bound via the
                               pods/binding subresource becomes Running (then cleans up)
  smoke-scheduler [--timeout S]
                               a Pod without nodeName is scheduled by a running scheduler
                               (default-scheduler) and becomes Running
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import os
import ssl
import string
import sys
import threading
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
ZONES = ("zone-a", "zone-b", "zone-c")


def load_env(cluster_dir: Path) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in (cluster_dir / "cluster.env").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        env[k] = v.strip("'\"")
    return env


class Api:
    def __init__(self, url: str, token: str, ca: str) -> None:
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 443
        self.token = token
        self.ctx = ssl.create_default_context(cafile=ca)
        self.local = threading.local()

    def _conn(self) -> http.client.HTTPSConnection:
        c = getattr(self.local, "conn", None)
        if c is None:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
            self.local.conn = c
        return c

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        for attempt in range(3):
            c = self._conn()
            try:
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                raw = r.read()
                return r.status, (json.loads(raw) if raw else {})
            except (http.client.HTTPException, OSError):
                c.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.2)
        raise AssertionError("unreachable")

    def must(
        self, method: str, path: str, body: object | None = None, ok: tuple[int, ...] = (200, 201)
    ) -> dict:
        status, obj = self.call(method, path, body)
        if status not in ok:
            raise SystemExit(f"{method} {path}: HTTP {status}: {obj.get('message', obj)}")
        return obj


def node_ready(node: dict) -> bool:
    for c in node.get("status", {}).get("conditions", []) or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def create_nodes(api: Api, n: int, start: int) -> None:
    tmpl = string.Template((HERE / "node-template.json").read_text())

    def one(i: int) -> int:
        name = f"kwok-node-{i}"
        body = json.loads(tmpl.substitute(NAME=name, ZONE=ZONES[i % len(ZONES)]))
        status, obj = api.call("POST", "/api/v1/nodes", body)
        if status == 409:  # already exists: idempotent
            return 0
        if status != 201:
            raise SystemExit(f"create node {name}: HTTP {status}: {obj.get('message', obj)}")
        return 1

    workers = max(1, min(8, n))
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        created = sum(ex.map(one, range(start, start + n)))
    print(f"nodes: {created} created, {n - created} already existed")


def wait_nodes_ready(api: Api, n: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    ready = 0
    while time.monotonic() < deadline:
        obj = api.must("GET", "/api/v1/nodes?labelSelector=type%3Dkwok")
        ready = sum(1 for node in obj.get("items", []) if node_ready(node))
        if ready >= n:
            print(f"nodes: {ready} Ready")
            return
        time.sleep(0.5)
    raise SystemExit(f"timed out: only {ready}/{n} kwok nodes Ready after {timeout:.0f}s")


def pod_body(name: str, node: str | None = None, scheduler: str | None = None) -> dict:
    spec: dict = {
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
            }
        ],
    }
    if node:
        spec["nodeName"] = node
    if scheduler:
        spec["schedulerName"] = scheduler
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def wait_pod(api: Api, name: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    pod: dict = {}
    while time.monotonic() < deadline:
        pod = api.must("GET", f"/api/v1/namespaces/default/pods/{name}")
        if pod.get("status", {}).get("phase") == "Running":
            return pod
        time.sleep(0.2)
    raise SystemExit(
        f"pod {name} not Running after {timeout:.0f}s: {json.dumps(pod.get('status', {}))}"
    )


def delete_pods(api: Api, names: list[str], timeout: float) -> None:
    for name in names:
        api.call("DELETE", f"/api/v1/namespaces/default/pods/{name}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [
            n for n in names if api.call("GET", f"/api/v1/namespaces/default/pods/{n}")[0] != 404
        ]
        if not left:
            print(f"  deleted test pods {names} (kwok finished graceful deletion)")
            return
        time.sleep(0.2)
    raise SystemExit(f"pods {left} still present {timeout:.0f}s after delete")


def smoke(api: Api, timeout: float) -> None:
    t0 = time.monotonic()
    nodes = api.must("GET", "/api/v1/nodes?labelSelector=type%3Dkwok")["items"]
    if not nodes:
        raise SystemExit("no kwok nodes")
    for node in nodes:
        md, alloc = node["metadata"], node["status"]["allocatable"]
        lease = api.must(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{md['name']}"
        )
        print(
            f"  node {md['name']}: Ready={node_ready(node)}"
            f" zone={md['labels'].get('topology.kubernetes.io/zone')}"
            f" cpu={alloc['cpu']} mem={alloc['memory']} pods={alloc['pods']}"
            f" taints={node['spec'].get('taints', [])}"
            f" lease.renewTime={lease['spec'].get('renewTime')}"
        )
        if not node_ready(node):
            raise SystemExit(f"node {md['name']} not Ready")
        if node["spec"].get("taints"):
            raise SystemExit(f"node {md['name']} has taints {node['spec']['taints']}")
    n0, n1 = nodes[0]["metadata"]["name"], nodes[-1]["metadata"]["name"]

    # 1. Pod created with spec.nodeName already set.
    api.must("POST", "/api/v1/namespaces/default/pods", pod_body("smoke-nodename", node=n0))
    pod = wait_pod(api, "smoke-nodename", timeout)
    print(
        f"  pod smoke-nodename (spec.nodeName={n0}): phase={pod['status']['phase']}"
        f" podIP={pod['status'].get('podIP')}"
    )

    # 2. Pod left unscheduled (no scheduler has this name), then bound via pods/binding.
    api.must(
        "POST", "/api/v1/namespaces/default/pods", pod_body("smoke-binding", scheduler="nobody")
    )
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "smoke-binding", "namespace": "default"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": n1},
    }
    api.must("POST", "/api/v1/namespaces/default/pods/smoke-binding/binding", binding)
    pod = wait_pod(api, "smoke-binding", timeout)
    print(
        f"  pod smoke-binding (bound via pods/binding to {n1}):"
        f" nodeName={pod['spec'].get('nodeName')} "
        f"phase={pod['status']['phase']} podIP={pod['status'].get('podIP')}"
    )
    delete_pods(api, ["smoke-nodename", "smoke-binding"], timeout)
    print(f"smoke: OK ({time.monotonic() - t0:.1f}s)")


def smoke_scheduler(api: Api, timeout: float) -> None:
    t0 = time.monotonic()
    api.must("POST", "/api/v1/namespaces/default/pods", pod_body("smoke-scheduler"))
    pod = wait_pod(api, "smoke-scheduler", timeout)
    print(
        f"  pod smoke-scheduler scheduled by default-scheduler to {pod['spec'].get('nodeName')}:"
        f" phase={pod['status']['phase']}"
    )
    delete_pods(api, ["smoke-scheduler"], timeout)
    print(f"smoke-scheduler: OK ({time.monotonic() - t0:.1f}s)")


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--cluster-dir",
        default=os.environ.get("CLUSTER_DIR") or str(HERE.parent.parent / ".cluster"),
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("create-nodes")
    c.add_argument("n", type=int)
    c.add_argument("--start", type=int, default=0)
    w = sub.add_parser("wait-nodes-ready")
    w.add_argument("n", type=int)
    w.add_argument("--timeout", type=float, default=120)
    s = sub.add_parser("smoke")
    s.add_argument("--timeout", type=float, default=60)
    ss = sub.add_parser("smoke-scheduler")
    ss.add_argument("--timeout", type=float, default=60)
    a = p.parse_args()

    env = load_env(Path(a.cluster_dir))
    api = Api(env["APISERVER_URL"], env["ADMIN_TOKEN"], env["CA_CERT"])
    if a.cmd == "create-nodes":
        create_nodes(api, a.n, a.start)
    elif a.cmd == "wait-nodes-ready":
        wait_nodes_ready(api, a.n, a.timeout)
    elif a.cmd == "smoke":
        smoke(api, a.timeout)
    elif a.cmd == "smoke-scheduler":
        smoke_scheduler(api, a.timeout)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
