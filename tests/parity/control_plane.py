"""The oracle's cluster: a private local control plane (``deploy/local/cluster.sh up --nodes
0``, started with the e2e suite's helpers), kube-controller-manager with only the
PersistentVolume binder (which completes the bindings kube-scheduler's VolumeBinding starts
and binds a scenario's pre-bound claims), and the reference kube-scheduler on it, with the
default profile and its per-node final scores in its log (klog V(10) of schedule_one.go
only, through ``--vmodule``). ``with control_plane(dir) as plane:`` always stops every
process it started (``cluster.sh down``), also on an error or an interrupt.
"""

from __future__ import annotations

import contextlib
import http.client
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.e2e import support

KUBE_SCHEDULER_NAME = "default-scheduler"
START_TIMEOUT = 120.0  # seconds for kube-scheduler to start and sync its informers
# The V(10) lines "Plugin scored node for pod" and "Calculated node's final score for pod"
# are logged by pkg/scheduler/schedule_one.go (prioritizeNodes) only.
VMODULE = "schedule_one=10"


class OracleError(RuntimeError):
    """The control plane or kube-scheduler could not be run (the message says why)."""


@dataclass
class ControlPlane:
    """A running control plane with kube-scheduler; ``api`` is an admin ApiClient."""

    cluster: support.Cluster

    @property
    def api(self) -> Any:
        return self.cluster.api

    @property
    def kube_version(self) -> str:
        return self.cluster.env["KUBE_VERSION"]

    @property
    def scheduler_log(self) -> Path:
        return self.cluster.dir / "kube-scheduler.log"

    def scheduler_alive(self) -> bool:
        try:
            pid = int((self.cluster.dir / "kube-scheduler.pid").read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return False
        return str(self.cluster.dir).encode() in cmdline

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            text = self.scheduler_log.read_text(errors="replace")
            return "\n".join(text.splitlines()[-lines:])
        return ""


def kube_version() -> str:
    """The Kubernetes version cluster.sh builds (from deploy/local/kube/go.mod), without
    starting anything: what cached results are keyed by."""
    go_mod = support.REPO / "deploy" / "local" / "kube" / "go.mod"
    for line in go_mod.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "k8s.io/kubernetes":
            return parts[1]
    raise OracleError(f"no k8s.io/kubernetes requirement in {go_mod}")


def _start_scheduler(cluster: support.Cluster) -> None:
    config = cluster.dir / "parity-kube-scheduler-config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(cluster.kubeconfig), "qps": 5000,
                             "burst": 5000},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": KUBE_SCHEDULER_NAME}],
    }, sort_keys=False))
    # a second --config wins over cluster.sh's own
    done = subprocess.run([str(support.CLUSTER_SH), "start-scheduler", "--config", str(config),
                           f"--vmodule={VMODULE}", "--log-flush-frequency=100ms"],
                          env=support.script_env(cluster.dir), capture_output=True, text=True,
                          timeout=START_TIMEOUT, check=False)
    if done.returncode != 0:
        raise OracleError(f"cluster.sh start-scheduler failed (exit {done.returncode}):\n"
                          f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    cluster.env.update(support.read_cluster_env(cluster.dir))  # its port may be a new one
    _wait_ready(cluster)


def _wait_ready(cluster: support.Cluster) -> None:
    """Until kube-scheduler's /readyz (informers synced) answers 200."""
    port = int(cluster.env["SCHEDULER_PORT"])
    token = cluster.env["ADMIN_TOKEN"]
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5,
                                           context=ssl._create_unverified_context())
        try:
            conn.request("GET", "/readyz", headers={"Authorization": f"Bearer {token}"})
            if conn.getresponse().status == 200:
                return
        except (http.client.HTTPException, OSError):
            pass
        finally:
            conn.close()
        if time.monotonic() > deadline:
            raise OracleError(f"kube-scheduler not ready after {START_TIMEOUT:.0f} s")
        time.sleep(0.2)


@contextlib.contextmanager
def control_plane(cluster_dir: Path) -> Iterator[ControlPlane]:
    """A private control plane (no nodes: scenarios bring theirs) with kube-scheduler."""
    cluster, failures = support.start_private_cluster(cluster_dir, nodes=0)
    if cluster is None:
        raise OracleError("could not start the local control plane:\n" + "\n\n".join(failures))
    try:
        try:
            support.start_controller_manager(cluster)
        except support.ClusterError as e:
            raise OracleError(str(e)) from None
        _start_scheduler(cluster)
        yield ControlPlane(cluster)
    finally:
        cluster.api.close()
        support.stop_cluster(cluster_dir)
