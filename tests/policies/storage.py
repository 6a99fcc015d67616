"""Storage objects and an engine harness for the volume policies' tests: the policy alone
in a profile, over an in-memory cluster of nodes, pods and storage objects (the cache
computes ``podVolumes`` and the nodes' volume fields as in a real run)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.runtime import Framework
from policysched.framework.scheduler import Scheduler
from policysched.framework.status import Code, Status
from policysched.model.clock import SimulatedClock

from ..cache.objects_builder import make_node, make_pod
from ..framework import POLICIES_ONLY
from .helpers import POLICIES

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def node(name: str, **labels: str) -> dict[str, Any]:
    obj = make_node(name)
    obj["metadata"]["labels"] = {HOSTNAME: name, **labels}
    return obj


def pod(name: str, *volumes: dict[str, Any], node: str | None = None,
        namespace: str = "default") -> dict[str, Any]:
    obj = make_pod(name, namespace=namespace, node=node, schedulerName="policysched")
    obj["spec"]["volumes"] = [{"name": f"v{i}", **v} for i, v in enumerate(volumes)]
    return obj


def uses(claim_name: str, read_only: bool = False) -> dict[str, Any]:
    """A ``persistentVolumeClaim`` volume."""
    return {"persistentVolumeClaim": {"claimName": claim_name, "readOnly": read_only}}


def ephemeral() -> dict[str, Any]:
    return {"ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}


def claim(name: str, *, volume: str = "", storage_class: str | None = None,
          modes: Sequence[str] = ("ReadWriteOnce",), namespace: str = "default"
          ) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes), "volumeName": volume,
                            "resources": {"requests": {"storage": "1Gi"}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def volume(name: str, *, driver: str = "", handle: str = "", labels: dict[str, str] | None = None
           ) -> dict[str, Any]:
    """A PersistentVolume: a CSI one when ``driver`` is given, else a hostPath one."""
    source: dict[str, Any] = ({"csi": {"driver": driver, "volumeHandle": handle or name}}
                              if driver else {"hostPath": {"path": f"/tmp/{name}"}})
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     **source}}


def storage_class(name: str, provisioner: str = "csi.example.com",
                  mode: str = "Immediate") -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}


def csi_node(name: str, **limits: int) -> dict[str, Any]:
    """A CSINode with a volume limit per driver (keyword: the driver with '_' for '.')."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": [{"name": d.replace("_", "."), "nodeID": name,
                                  "allocatable": {"count": n}} for d, n in limits.items()]}}


@dataclass
class Verdict:
    """One pod's preFilter status and each node's filter status (None: preFilter
    rejected it, the filters did not run)."""

    pre_filter: Status
    filters: dict[str, Status] | None

    def on(self, name: str) -> tuple[Code, str]:
        assert self.filters is not None, self.pre_filter
        status = self.filters[name]
        return status.code, status.message


class StorageCase:
    """``policy`` alone in a profile over an in-memory cluster of ``objects``."""

    def __init__(self, policy: str, objects: Sequence[dict[str, Any]]) -> None:
        engine = load_engine([str(POLICIES / f"{policy}.yaml")], POLICIES_ONLY)
        self.clock = SimulatedClock(0)
        self.backend = MemoryBackend(list(objects), self.clock)
        self.scheduler = Scheduler(self.backend, engine.frameworks, engine.settings)
        self.scheduler.sync()

    @property
    def framework(self) -> Framework:
        return self.scheduler.profiles["policysched"]

    def run(self) -> dict[str, str | None]:
        """Schedule until nothing is due within a minute (an unschedulable pod that no
        event moves waits five); pod key -> its node (None: unscheduled)."""
        s, end = self.scheduler, self.clock.now() + 60
        while True:
            while s.schedule_one():
                s.sync()
            wakeup = s.next_wakeup()
            if wakeup is None or wakeup > end:
                return {key: record.node for key, record in s.records.items()}
            self.clock.advance_to(max(wakeup, self.clock.now()))
            s.advance()

    def verdict(self, pod_key: str) -> Verdict:
        s = self.scheduler
        info = s.cache.pod(pod_key)
        assert info is not None, pod_key
        snapshot = s.cache.snapshot()
        state = s.cycle_state(info, snapshot)
        pre = self.framework.run_pre_filter(state).status
        if not pre.is_success:
            return Verdict(pre, None)
        return Verdict(pre, {n.name: self.framework.run_filter(state, n)
                             for n in snapshot.nodes})
