"""The generator's storage theme: volumes added to some generated scenarios (a share of the
non-preemption ones, chosen by a random stream of their own, so that the scenarios without
storage — and their cached results — stay as they were).

What it adds, after kube's volume plugins' inputs:

* a CSIDriver and CSINodes with an attach limit for it on some nodes; bound pods using
  claims pre-bound to CSI volumes, which count against those limits (NodeVolumeLimits);
* claims pre-bound to volumes with node affinity (a node or a zone) or with zone labels
  (VolumeBinding, VolumeZone), some of them ReadWriteOncePod and in use by a bound pod
  (VolumeRestrictions);
* static volumes of a WaitForFirstConsumer class without a provisioner (capacities, access
  modes, a label some claims select, node affinity) and claims of that class for pending
  pods; claims of a WaitForFirstConsumer class with a provisioner and allowedTopologies;
  unbound claims of an Immediate class; claims that do not exist (VolumeBinding);
* GCE PD and EBS disks on bound pods, which pending pods may mount too (VolumeRestrictions).

Every volume of an Immediate class is pre-bound, so the PV binder binds nothing by itself.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from .scenario import CSI_DRIVER, CSI_NODE, PV, PVC, STORAGE_CLASS, Object
from .storage import NO_PROVISIONER, WAIT_FOR_FIRST_CONSUMER, bound_claim, bound_volume

STORAGE_SHARE = 0.2  # of the scenarios of the themes below
THEMES = ("resources", "affinity", "spread", "taints", "ports", "images", "mixed")
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
RWO, RWOP, RWX = "ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"
VOLUME_SIZES = ("1Gi", "2Gi", "5Gi", "10Gi")
CLAIM_SIZES = ("1Gi", "2Gi", "4Gi")
# a pending pod's volume: kind → weight
PENDING_KINDS = {"none": 4, "bound": 3, "csi": 2, "wffc": 4, "provision": 1, "rwop-in-use": 1,
                 "immediate": 1, "missing": 1, "disk": 1}


def wants_storage(seed: int, index: int, theme: str) -> random.Random | None:
    """The storage theme's random stream for scenario ``index`` of ``seed``, when it gets
    storage (None otherwise)."""
    rng = random.Random(f"parity-storage-{seed}-{index}")
    return rng if theme in THEMES and rng.random() < STORAGE_SHARE else None


@dataclass
class _Storage:
    rng: random.Random
    sid: str
    nodes: list[Object]
    objects: list[Object] = field(default_factory=list)
    claims: int = 0
    volumes: int = 0

    @property
    def driver(self) -> str:
        return f"{self.sid}.csi.example.com"

    def cls(self, suffix: str) -> str:
        return f"{self.sid}-{suffix}"

    def volume(self, size: str, storage_class: str, modes: tuple[str, ...] = (RWO,),
               affinity: Object | None = None, labels: dict[str, str] | None = None,
               csi: bool = False) -> Object:
        name = f"{self.sid}-pv{self.volumes}"
        self.volumes += 1
        spec: Object = {"capacity": {"storage": size}, "accessModes": list(modes),
                        "persistentVolumeReclaimPolicy": "Retain",
                        "storageClassName": storage_class}
        if csi:
            spec["csi"] = {"driver": self.driver, "volumeHandle": f"h-{name}"}
        else:
            spec["hostPath"] = {"path": f"/tmp/{name}"}
        if affinity:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [affinity]}]}}
        metadata: Object = {"name": name}
        if labels:
            metadata["labels"] = labels
        pv: Object = {"apiVersion": "v1", "kind": PV, "metadata": metadata, "spec": spec,
                      "status": {"phase": "Available"}}
        self.objects.append(pv)
        return pv

    def claim(self, namespace: str, size: str, storage_class: str,
              modes: tuple[str, ...] = (RWO,), volume: Object | None = None,
              selector: dict[str, str] | None = None) -> str:
        name = f"claim{self.claims}"
        self.claims += 1
        spec: Object = {"accessModes": list(modes), "resources": {"requests": {"storage": size}},
                        "storageClassName": storage_class}
        if selector:
            spec["selector"] = {"matchLabels": selector}
        claim: Object = {"apiVersion": "v1", "kind": PVC,
                         "metadata": {"name": name, "namespace": namespace}, "spec": spec,
                         "status": {"phase": "Pending"}}
        if volume is not None:
            at = next(i for i, o in enumerate(self.objects) if o is volume)
            self.objects[at] = bound_volume(volume, claim, by_controller=False)
            claim = bound_claim(claim, volume, by_controller=False)
        self.objects.append(claim)
        return name

    def placement(self) -> Object:
        """A volume's node affinity requirement: a node's name or a zone of the nodes."""
        rng = self.rng
        zones = sorted({n["metadata"]["labels"][ZONE] for n in self.nodes
                        if ZONE in n["metadata"]["labels"]})
        if zones and rng.random() < 0.5:
            return {"key": ZONE, "operator": "In", "values": [rng.choice(zones)]}
        return {"key": HOSTNAME, "operator": "In",
                "values": [rng.choice(self.nodes)["metadata"]["name"]]}

    def zone_labels(self) -> dict[str, str]:
        zones = sorted({n["metadata"]["labels"][ZONE] for n in self.nodes
                        if ZONE in n["metadata"]["labels"]}) or ["zone-a"]
        picked = self.rng.sample(zones, self.rng.randint(1, len(zones)))
        return {ZONE: "__".join(sorted(picked))}


def add_storage(rng: random.Random, sid: str, nodes: list[Object], bound: list[Object],
                pending: list[Object]) -> list[Object]:
    """Storage objects for the scenario, the pods' volumes added to ``bound`` and
    ``pending`` (changed in place)."""
    st = _Storage(rng, sid, nodes)
    wffc, imm, prov = st.cls("wffc"), st.cls("imm"), st.cls("prov")
    st.objects += [
        _storage_class(wffc, NO_PROVISIONER, WAIT_FOR_FIRST_CONSUMER),
        _storage_class(imm, NO_PROVISIONER, "Immediate"),
        _storage_class(prov, st.driver, WAIT_FOR_FIRST_CONSUMER, st.zone_labels()[ZONE]),
        {"apiVersion": "storage.k8s.io/v1", "kind": CSI_DRIVER,
         "metadata": {"name": st.driver}, "spec": {"attachRequired": True}}]
    for node in rng.sample(nodes, rng.randint(1, len(nodes))):
        name = node["metadata"]["name"]
        st.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": CSI_NODE,
                           "metadata": {"name": name},
                           "spec": {"drivers": [{"name": st.driver, "nodeID": name,
                                                 "allocatable": {"count": rng.randint(1, 3)}}]}})
    for _ in range(rng.randint(2, 5)):  # static volumes for WaitForFirstConsumer claims
        modes = rng.choice(((RWO,), (RWO,), (RWO, RWX), (RWOP,)))
        labels = {"tier": "gold"} if rng.random() < 0.3 else None
        st.volume(rng.choice(VOLUME_SIZES), wffc, modes, st.placement(), labels)
    in_use: list[tuple[str, str]] = []  # (namespace, claim) of bound pods, RWOP
    disks: list[Object] = []
    for pod in bound:
        if rng.random() < 0.35:
            ns = pod["metadata"]["namespace"]
            rwop = rng.random() < 0.3
            modes = (RWOP,) if rwop else (RWO,)
            volume = st.volume("1Gi", imm, modes, csi=True)
            name = st.claim(ns, "1Gi", imm, modes, volume)
            _mount(pod, name)
            if rwop:
                in_use.append((ns, name))
        elif rng.random() < 0.1:
            disk = rng.choice(({"gcePersistentDisk": {"pdName": f"{sid}-pd"}},
                               {"awsElasticBlockStore": {"volumeID": f"{sid}-ebs"}}))
            _mount_source(pod, disk)
            disks.append(disk)
    kinds, weights = zip(*PENDING_KINDS.items(), strict=True)
    for pod in pending:
        kind = rng.choices(kinds, weights)[0]
        ns = pod["metadata"]["namespace"]
        if kind == "bound":
            if rng.random() < 0.5:
                volume = st.volume("1Gi", imm, affinity=st.placement())
            else:
                volume = st.volume("1Gi", imm, labels=st.zone_labels())
            _mount(pod, st.claim(ns, "1Gi", imm, volume=volume))
        elif kind == "csi":
            for _ in range(rng.randint(1, 2)):
                volume = st.volume("1Gi", imm, csi=True)
                _mount(pod, st.claim(ns, "1Gi", imm, volume=volume))
        elif kind == "wffc":
            modes = rng.choice(((RWO,), (RWO,), (RWX,), (RWOP,)))
            selector = {"tier": "gold"} if rng.random() < 0.2 else None
            _mount(pod, st.claim(ns, rng.choice(CLAIM_SIZES), wffc, modes, selector=selector))
        elif kind == "provision":
            _mount(pod, st.claim(ns, "1Gi", prov))
        elif kind == "rwop-in-use" and in_use:
            ns, name = rng.choice(in_use)
            pod["metadata"]["namespace"] = ns
            _mount(pod, name)
        elif kind == "immediate":
            _mount(pod, st.claim(ns, "100Gi", imm))
        elif kind == "missing":
            _mount(pod, "no-such-claim")
        elif kind == "disk" and disks:
            _mount_source(pod, dict(rng.choice(disks)))
    return st.objects


def _storage_class(name: str, provisioner: str, mode: str, zones: str = "") -> Object:
    obj: Object = {"apiVersion": "storage.k8s.io/v1", "kind": STORAGE_CLASS,
                   "metadata": {"name": name}, "provisioner": provisioner,
                   "volumeBindingMode": mode}
    if zones:
        obj["allowedTopologies"] = [{"matchLabelExpressions": [
            {"key": ZONE, "values": zones.split("__")}]}]
    return obj


def _mount(pod: Object, claim: str) -> None:
    _mount_source(pod, {"persistentVolumeClaim": {"claimName": claim}})


def _mount_source(pod: Object, source: dict[str, Any]) -> None:
    volumes = pod["spec"].setdefault("volumes", [])
    volumes.append({"name": f"v{len(volumes)}", **source})
