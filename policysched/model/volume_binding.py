"""kube-scheduler's volume binder (plugins/volumebinding/binder.go, Kubernetes v1.34) on the
storage objects of one snapshot: which PersistentVolume each of a pod's unbound
WaitForFirstConsumer claims would bind to on a node, which claims would be provisioned there,
and whether the claims already bound admit the node (``find_pod_volumes``); and what reserve
assumes of it (``VolumeAssumption``).

FindPodVolumes, step by step:

* bound claims (``ClaimInfo.bound``: a volume name and the bind-completed annotation), in the
  pod's order: the first whose volume is not known sets ``missing_volumes``, the first whose
  volume's node affinity rejects the node sets ``bound_conflict`` (checkBoundClaims stops at
  the first of either);
* unbound claims of a WaitForFirstConsumer class without a volume name: one whose
  selected-node annotation names another node makes the node fail at once (all of them
  ``unmatched``); those that name this node are provisioned; the others, smallest request
  first, each take the smallest matching volume of their class (FindMatchingVolume: a volume
  pre-bound to the claim first — when its node affinity rejects the node, nothing —, else an
  Available one, not being deleted, not chosen for another claim of the pod, with enough
  capacity, the same volume mode and class, the claim's selector, node affinity and access
  modes); a claim without one is provisioned when its class has a provisioner (not '' nor
  ``kubernetes.io/no-provisioner``) whose allowed topologies admit the node, else it is
  ``unmatched``.

Claims that are missing, immediate or of an unknown class are preFilter's (the policy's) to
reject; here they are left out. CSIStorageCapacity is not modelled: provisioning never lacks
room. Volumes are the snapshot's, assumed bindings included (``Cache``): a volume another
pod's reserve assumed has a claim and is not available.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .volumes import (
    AVAILABLE,
    NO_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimInfo,
    PodVolume,
    StorageObjects,
    VolumeInfo,
)

MAX_UTILIZATION = 100


@dataclass(frozen=True)
class PodVolumes:
    """What ``find_pod_volumes`` found for one pod on one node."""

    static: tuple[tuple[ClaimInfo, VolumeInfo], ...] = ()  # claim -> the volume it takes
    provisions: tuple[ClaimInfo, ...] = ()
    unmatched: tuple[str, ...] = ()  # claim names
    bound_conflict: bool = False
    missing_volumes: bool = False

    def view(self) -> dict[str, Any]:
        """The CEL ``policysched.VolumeBindings``."""
        return {
            "static": [{"claimName": c.name, "volumeName": v.name,
                        "storageClassName": v.storage_class,
                        "requested": c.requested_storage, "capacity": v.capacity}
                       for c, v in self.static],
            "provisions": [{"claimName": c.name, "storageClassName": c.storage_class,
                            "requested": c.requested_storage} for c in self.provisions],
            "unmatched": list(self.unmatched),
            "boundConflict": self.bound_conflict,
            "missingVolumes": self.missing_volumes,
            "classUtilization": self.class_utilization(),
        }

    def class_utilization(self) -> dict[str, int]:
        """Per class of the static bindings, the requested storage in percent of the
        volumes' capacity (scorer.go: 100 when the capacity is 0 or exceeded)."""
        sums: dict[str, list[int]] = {}
        for claim, volume in self.static:
            found = sums.setdefault(volume.storage_class, [0, 0])
            found[0] += claim.requested_storage
            found[1] += volume.capacity
        return {name: MAX_UTILIZATION if capacity == 0 or requested > capacity
                else requested * MAX_UTILIZATION // capacity
                for name, (requested, capacity) in sums.items()}


def find_pod_volumes(storage: StorageObjects, namespace: str,
                     volumes: tuple[PodVolume, ...], node_name: str,
                     node_labels: Mapping[str, str]) -> PodVolumes:
    """kube's FindPodVolumes for the pod's ``volumes`` on a node (see the module)."""
    claims = [c for c in (storage.claims.get(f"{namespace}/{v.claim}")
                          for v in volumes if v.claim) if c is not None]
    bound_conflict = missing = False
    for claim in claims:
        if not claim.bound:
            continue
        volume = storage.volumes.get(claim.volume_name)
        if volume is None:
            missing = True
            break
        if not _admits(volume, node_labels):
            bound_conflict = True
            break
    delayed = [c for c in claims if not c.bound and not c.volume_name
               and _binding_mode(storage, c) == WAIT_FOR_FIRST_CONSUMER]
    if any(c.selected_node and c.selected_node != node_name for c in delayed):
        return PodVolumes(unmatched=tuple(c.name for c in delayed),
                          bound_conflict=bound_conflict, missing_volumes=missing)
    to_provision = [c for c in delayed if c.selected_node]
    static: list[tuple[ClaimInfo, VolumeInfo]] = []
    chosen: set[str] = set()
    for claim in sorted((c for c in delayed if not c.selected_node),
                        key=lambda c: c.requested_storage):
        volume = find_matching_volume(
            claim, storage.volumes_by_class.get(claim.storage_class, ()), node_labels, chosen)
        if volume is None:
            to_provision.append(claim)
        else:
            chosen.add(volume.name)
            static.append((claim, volume))
    provisions, unmatched = [], []
    for claim in to_provision:
        storage_class = storage.classes.get(claim.storage_class)
        if storage_class is None or storage_class.provisioner in ("", NO_PROVISIONER) \
                or not storage_class.allows(node_labels):
            unmatched.append(claim.name)
        else:
            provisions.append(claim)
    return PodVolumes(tuple(static), tuple(provisions), tuple(unmatched), bound_conflict,
                      missing)


def _binding_mode(storage: StorageObjects, claim: ClaimInfo) -> str:
    storage_class = storage.classes.get(claim.storage_class) if claim.storage_class else None
    return storage_class.binding_mode if storage_class is not None else ""


def _admits(volume: VolumeInfo, node_labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: the volume's required node affinity on a node with these labels
    (kube matches a node made of the labels alone)."""
    return volume.node_affinity is None or volume.node_affinity.matches(node_labels, "")


def find_matching_volume(claim: ClaimInfo, volumes: tuple[VolumeInfo, ...],
                         node_labels: Mapping[str, str], excluded: set[str]
                         ) -> VolumeInfo | None:
    """FindMatchingVolume (delayed binding, on a node): the volume pre-bound to ``claim``
    (None when it rejects the node), else the smallest available match (see the module)."""
    smallest: VolumeInfo | None = None
    for volume in volumes:
        if volume.name in excluded:
            continue
        pre_bound = volume.bound_to(claim)
        if volume.claim and not pre_bound:
            continue
        if volume.capacity < claim.requested_storage or volume.volume_mode != claim.volume_mode \
                or volume.deleting:
            continue
        admits = _admits(volume, node_labels)
        if pre_bound:
            return volume if admits else None
        if volume.phase != AVAILABLE:
            continue
        if claim.selector is not None and not claim.selector.matches(volume.labels):
            continue
        if volume.storage_class != claim.storage_class or not admits:
            continue
        if not set(claim.access_modes) <= set(volume.access_modes):
            continue
        if smallest is None or smallest.capacity > volume.capacity:
            smallest = volume
    return smallest


@dataclass
class VolumeBinder:
    """``volumeBinder``: the pod's claims in one cycle's snapshot; ``bindings(node)`` is
    ``find_pod_volumes`` on that node, computed once per node."""

    storage: StorageObjects
    namespace: str
    volumes: tuple[PodVolume, ...]
    _found: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def bindings(self, node: Mapping[str, Any]) -> dict[str, Any]:
        name, labels = node["name"], node["labels"]
        found = self._found.get(name)
        if found is None:
            found = self._found[name] = find_pod_volumes(
                self.storage, self.namespace, self.volumes, name, labels).view()
        return found


@dataclass(frozen=True)
class VolumeAssumption:
    """What reserve assumed for a pod on ``node``: ``static`` (claim name, volume name)
    bindings and the claims to ``provision`` there, in the pod's ``namespace``."""

    namespace: str
    node: str
    static: tuple[tuple[str, str], ...] = ()
    provisions: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.static or self.provisions)
