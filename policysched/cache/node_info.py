"""``NodeInfo``: one node with the pods counted on it, and its CEL ``node`` view kept up to
date incrementally as pods are added and removed.

``view["requested"]`` holds every resource of ``allocatable`` plus every resource some pod
on the node requests (a nonzero amount), with ``pods`` always present and equal to the number
of pods; ``view["free"]`` is ``allocatable - requested`` for each allocatable resource (it
goes negative on an overcommitted node). ``requested`` saturates at the int64 maximum (the
exact sum is kept in ``usage``), so that with ``allocatable`` in 0..2^63-1 every amount of the
view, ``free`` included, is an int64. ``view["nonZeroRequested"]`` is ``requested`` with
cpu and memory counted as kube-scheduler's ``NodeInfo.NonZeroRequested`` counts them (a
container without a cpu / memory request counts 100m / 200Mi; ``PodInfo.non_zero``): what
NodeResourcesFit's scoring reads. ``view["attachedCSIVolumes"]`` counts, per CSI driver,
the unique volumes the pods use (each reference-counted by the pods that use it:
NodeVolumeLimits' count), ``view["csiVolumes"]`` names them (unique name -> driver);
``view["csiVolumeLimits"]`` is the node's CSINode's, set by the cache. For
VolumeRestrictions, ``view["usedDisks"]`` lists the distinct inline disks of the pods
(``model.volumes.Disk``, reference-counted as ports are) and ``view["usedClaims"]`` counts
the pods' ``persistentVolumeClaim`` references per claim key (kube's PVCRefCounts).

A copy (``clone``) remembers what the pods it loses used, so that a pod added back without
its volumes (preemption's reprieve) counts them again.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cel.values import INT64_MAX
from ..model.objects import (
    PODS,
    HostPort,
    PodInfo,
    Resources,
    node_view,
)
from ..model.resources import NON_ZERO_DEFAULTS
from ..model.volumes import Disk, PodVolume

_generations = itertools.count(1)


def next_generation() -> int:
    """A number larger than every generation handed out before (process-wide), so that a
    generation identifies one state of one node even across node deletion and re-creation."""
    return next(_generations)


@dataclass(eq=False)
class NodeInfo:
    """A node and the pods counted on it (bound and assumed). ``pod_views`` is the CEL
    ``nodePods`` list; ``generation`` changes on every change, ``view_generation`` on
    every change of the view (all but a pod replaced by one counted alike:
    ``replace_pod``). Compared by identity."""

    name: str
    obj: dict[str, Any]
    view: dict[str, Any]
    pods: dict[str, PodInfo] = field(default_factory=dict)
    pod_views: list[dict[str, Any]] = field(default_factory=list)
    generation: int = field(default_factory=next_generation)
    view_generation: int = 0  # 0: ``generation``
    usage: Resources = field(default_factory=dict)  # summed pod requests, nonzero, no "pods"
    non_zero_usage: Resources = field(  # summed ``PodInfo.non_zero``: cpu and memory
        default_factory=lambda: dict.fromkeys(NON_ZERO_DEFAULTS, 0))
    port_counts: Counter[HostPort] = field(default_factory=Counter)
    # NodeVolumeLimits' count: the CSI volumes of the pods on the node, each unique volume
    # name -> its driver, with how many of the pods use it; and what each pod added
    csi_volumes: dict[str, str] = field(default_factory=dict)
    csi_volume_users: Counter[str] = field(default_factory=Counter)
    pod_csi_volumes: dict[str, Mapping[str, str]] = field(default_factory=dict)
    # VolumeRestrictions' inputs: the volumes of the pods with disks or claim references
    pod_volume_refs: dict[str, tuple[PodVolume, ...]] = field(default_factory=dict)
    disk_counts: Counter[Disk] = field(default_factory=Counter)
    # a copy's record of the volumes of the pods it no longer counts (None: not a copy)
    departed: dict[str, tuple[Mapping[str, str], tuple[PodVolume, ...]]] | None = None

    def __post_init__(self) -> None:
        self.view["csiVolumes"] = self.csi_volumes  # kept up to date with it
        self.view_generation = self.view_generation or self.generation

    @classmethod
    def of(cls, obj: dict[str, Any]) -> NodeInfo:
        """A NodeInfo with no pods for a Node object; raises ``ObjectError``."""
        view = node_view(obj)
        return cls(name=view["name"], obj=obj, view=view)

    @property
    def allocatable(self) -> Resources:
        return self.view["allocatable"]

    @property
    def requested(self) -> Resources:
        return self.view["requested"]

    @property
    def free(self) -> Resources:
        return self.view["free"]

    @property
    def pod_count(self) -> int:
        return len(self.pods)

    @property
    def used_ports(self) -> list[dict[str, Any]]:
        return self.view["usedPorts"]

    def add_pod(self, pod: PodInfo, csi_volumes: Mapping[str, str] | None = None,
                volumes: tuple[PodVolume, ...] | None = None) -> None:
        """Count ``pod`` on this node (replacing a pod with the same key), with the CSI
        volumes it uses (unique volume name -> driver; ``StorageObjects.attached_csi_volumes``)
        and its ``volumes`` (``model.volumes.pod_volumes``). On a copy, a pod added without
        either that the copy counted before counts what it used then."""
        if pod.key in self.pods:
            self.remove_pod(pod)
        self.pods[pod.key] = pod
        if csi_volumes is None and volumes is None and self.departed is not None:
            csi_volumes, volumes = self.departed.pop(pod.key, (None, None))
        if csi_volumes:
            self.pod_csi_volumes[pod.key] = csi_volumes
            attached = self.view["attachedCSIVolumes"]
            for unique, driver in csi_volumes.items():
                self.csi_volume_users[unique] += 1
                if self.csi_volume_users[unique] == 1:
                    self.csi_volumes[unique] = driver
                    attached[driver] = attached.get(driver, 0) + 1
        if volumes:
            self._add_volume_refs(pod.key, volumes)
        self.pod_views.append(pod.view)
        allocatable, requested, free = self.allocatable, self.requested, self.free
        for resource, amount in pod.requests.items():
            if resource == PODS or amount == 0:
                continue
            total = self.usage.get(resource, 0) + amount
            self.usage[resource] = total
            requested[resource] = min(total, INT64_MAX)
            if resource in allocatable:
                free[resource] = allocatable[resource] - requested[resource]
        for resource, amount in pod.non_zero.items():
            self.non_zero_usage[resource] += amount
        self._refresh_totals(allocatable, requested, free)
        for port in pod.host_ports:
            self.port_counts[port] += 1
            if self.port_counts[port] == 1:
                host_ip, protocol, host_port = port
                self.used_ports.append(
                    {"hostIP": host_ip, "protocol": protocol, "hostPort": host_port}
                )
        self.generation = self.view_generation = next_generation()

    def replace_pod(self, pod: PodInfo) -> bool:
        """Count ``pod`` in place of the pod with its key when that one has the same
        ``spec_parts`` (an update of its status or metadata, the bind of an assumed pod
        confirmed): nothing counted changes, so the view stays (``view_generation``) and
        ``nodePods`` has the new pod where it had the old. False (nothing done) otherwise."""
        counted = self.pods.get(pod.key)
        if counted is None or counted.spec_parts is not pod.spec_parts \
                or pod.spec_parts is None:
            return False
        self.pods[pod.key] = pod
        for i, view in enumerate(self.pod_views):
            if view is counted.view:
                self.pod_views[i] = pod.view
                break
        self.generation = next_generation()
        return True

    def remove_pod(self, pod: PodInfo) -> PodInfo | None:
        """Stop counting the pod with ``pod``'s key; returns the PodInfo that was counted
        (its requests are the ones subtracted), None when there was none."""
        counted = self.pods.pop(pod.key, None)
        if counted is None:
            return None
        csi_volumes = self.pod_csi_volumes.pop(pod.key, {})
        for unique in csi_volumes:
            self.csi_volume_users[unique] -= 1
            if not self.csi_volume_users[unique]:
                del self.csi_volume_users[unique]
                self._detach(self.csi_volumes.pop(unique))
        volumes = self._remove_volume_refs(pod.key)
        if self.departed is not None:
            self.departed[pod.key] = (csi_volumes, volumes)
        for i, view in enumerate(self.pod_views):
            if view is counted.view:
                del self.pod_views[i]
                break
        allocatable, requested, free = self.allocatable, self.requested, self.free
        for resource, amount in counted.requests.items():
            if resource == PODS or amount == 0:
                continue
            total = self.usage[resource] - amount
            if total:
                self.usage[resource] = total
                requested[resource] = min(total, INT64_MAX)
            else:
                del self.usage[resource]
                if resource in allocatable:
                    requested[resource] = 0
                else:
                    del requested[resource]
            if resource in allocatable:
                free[resource] = allocatable[resource] - requested[resource]
        for resource, amount in counted.non_zero.items():
            self.non_zero_usage[resource] -= amount
        self._refresh_totals(allocatable, requested, free)
        for port in counted.host_ports:
            self.port_counts[port] -= 1
            if self.port_counts[port] == 0:
                del self.port_counts[port]
                self._drop_port(port)
        self.generation = self.view_generation = next_generation()
        return counted

    def set_node(self, obj: dict[str, Any]) -> None:
        """The Node object changed: new labels, taints, allocatable…; pods stay.
        Raises ``ObjectError`` (and changes nothing) for a malformed object."""
        view = node_view(obj)
        allocatable = view["allocatable"]
        requested = dict.fromkeys(allocatable, 0)
        requested.update((r, min(total, INT64_MAX)) for r, total in self.usage.items())
        free = {r: allocatable[r] - requested[r] for r in allocatable}
        view["requested"], view["free"] = requested, free
        view["usedPorts"] = self.used_ports
        view["csiVolumeLimits"] = self.view["csiVolumeLimits"]
        for name in ("attachedCSIVolumes", "csiVolumes", "usedDisks", "usedClaims"):
            view[name] = self.view[name]
        self.name, self.obj, self.view = view["name"], obj, view
        self._refresh_totals(allocatable, requested, free)
        self.generation = self.view_generation = next_generation()

    def clone(self) -> NodeInfo:
        """An independent copy (same generation) whose counts can change without touching
        this one: for per-cycle snapshots and preemption what-ifs. Pods are shared."""
        view = dict(self.view)
        view["requested"] = dict(self.requested)
        view["free"] = dict(self.free)
        view["usedPorts"] = list(self.used_ports)
        view["attachedCSIVolumes"] = dict(view["attachedCSIVolumes"])
        csi_volumes = dict(self.csi_volumes)
        view["usedDisks"] = list(view["usedDisks"])
        view["usedClaims"] = dict(view["usedClaims"])
        return NodeInfo(
            name=self.name,
            obj=self.obj,
            view=view,
            pods=dict(self.pods),
            pod_views=list(self.pod_views),
            generation=self.generation,
            view_generation=self.view_generation,
            usage=dict(self.usage),
            non_zero_usage=dict(self.non_zero_usage),
            port_counts=Counter(self.port_counts),
            csi_volumes=csi_volumes,
            csi_volume_users=Counter(self.csi_volume_users),
            pod_csi_volumes=dict(self.pod_csi_volumes),
            pod_volume_refs=dict(self.pod_volume_refs),
            disk_counts=Counter(self.disk_counts),
            departed={},
        )

    def attached_csi_volumes(self) -> dict[str, int]:
        """The number of unique CSI volumes of the node's pods per driver."""
        return dict(self.view["attachedCSIVolumes"])

    def set_csi_limits(self, limits: Mapping[str, int]) -> None:
        """The node's CSINode changed: its volume limit per driver."""
        self.view["csiVolumeLimits"] = dict(limits)
        self.generation = self.view_generation = next_generation()

    def _add_volume_refs(self, key: str, volumes: tuple[PodVolume, ...]) -> None:
        """Count the pod's inline disks and claim references."""
        refs = tuple(v for v in volumes if v.disk is not None or v.claim_reference)
        if not refs:
            return
        self.pod_volume_refs[key] = refs
        claims = self.view["usedClaims"]
        namespace = key.partition("/")[0]
        for volume in refs:
            if volume.disk is not None:
                self.disk_counts[volume.disk] += 1
                if self.disk_counts[volume.disk] == 1:
                    self.view["usedDisks"].append(volume.disk.view())
            else:
                claim = f"{namespace}/{volume.claim}"
                claims[claim] = claims.get(claim, 0) + 1

    def _remove_volume_refs(self, key: str) -> tuple[PodVolume, ...]:
        """Stop counting the pod's inline disks and claim references; returns its volumes."""
        refs = self.pod_volume_refs.pop(key, ())
        claims = self.view["usedClaims"]
        namespace = key.partition("/")[0]
        for volume in refs:
            if volume.disk is not None:
                self.disk_counts[volume.disk] -= 1
                if not self.disk_counts[volume.disk]:
                    del self.disk_counts[volume.disk]
                    self.view["usedDisks"].remove(volume.disk.view())
            else:
                claim = f"{namespace}/{volume.claim}"
                claims[claim] -= 1
                if not claims[claim]:
                    del claims[claim]
        return refs

    def _detach(self, driver: str) -> None:
        attached = self.view["attachedCSIVolumes"]
        attached[driver] -= 1
        if not attached[driver]:
            del attached[driver]

    def _refresh_totals(self, allocatable: Resources, requested: Resources,
                        free: Resources) -> None:
        """The view's totals after a change: the pod count, and ``nonZeroRequested``."""
        count = len(self.pods)
        requested[PODS] = count
        if PODS in allocatable:
            free[PODS] = allocatable[PODS] - count
        self.view["podCount"] = count
        non_zero = dict(requested)
        for resource, total in self.non_zero_usage.items():
            non_zero[resource] = min(total, INT64_MAX)
        self.view["nonZeroRequested"] = non_zero

    def _drop_port(self, port: HostPort) -> None:
        host_ip, protocol, host_port = port
        used = self.used_ports
        for i, entry in enumerate(used):
            if (
                entry["hostPort"] == host_port
                and entry["protocol"] == protocol
                and entry["hostIP"] == host_ip
            ):
                del used[i]
                return
