"""The storage objects kube-scheduler's volume plugins read (VolumeBinding, VolumeZone,
VolumeRestrictions, NodeVolumeLimits in Kubernetes v1.34): PersistentVolumeClaims,
PersistentVolumes, StorageClasses, CSINodes and CSIDrivers, parsed into frozen data with the
API server's defaults, and the pod's volume references.

Defaults, as the API server stores objects: a claim's and a volume's ``status.phase`` is
``Pending`` when unset, ``volumeMode`` ``Filesystem``; a StorageClass's
``volumeBindingMode`` is ``Immediate``; a CSIDriver's ``attachRequired`` is true. The
storage class of a claim or volume is the beta annotation
``volume.beta.kubernetes.io/storage-class`` when present, else ``spec.storageClassName``
(storagehelpers.GetPersistentVolumeClaimClass / GetPersistentVolumeClass). A CSINode's
volume limits are its drivers' ``allocatable.count`` (a driver without one has no limit).

NodeVolumeLimits counts a volume by its unique name ``driver/handle``: a claim bound to a
CSI volume counts that volume's handle; a claim not (yet) bound to a known volume counts
under its class's provisioner with a handle made of its namespace and name
(``csi_volume``). Volumes of in-tree plugins that CSI migration would translate are not
counted (deviation: no CSI translation library).

VolumeRestrictions reads a pod's inline disks (``Disk``: GCE persistent disks, AWS EBS
volumes, iSCSI and RBD volumes, the in-tree sources kube v1.34's isVolumeConflict still
compares) and, for ReadWriteOncePod claims, which nodes' pods use a claim (the cache's
index, kube's NodeInfo.PVCRefCounts summed over the nodes).

A malformed object raises ``ObjectError`` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final

from . import messages
from .objects import (
    ObjectError,
    _get_bool,
    _get_list,
    _get_map,
    _get_maps,
    _get_str,
    _get_string_map,
    _object_map,
    _required_str,
    _wrong_type,
    child_path,
    object_name,
    pod_key,
    resource_amount,
)
from .selectors import (
    IN,
    LabelSelector,
    NodeAffinity,
    NodeSelectorTerm,
    Requirement,
    SelectorError,
    label_selector,
)
from .selectors import required_node_affinity as _required_node_affinity

PERSISTENT_VOLUME_CLAIM: Final = "PersistentVolumeClaim"
PERSISTENT_VOLUME: Final = "PersistentVolume"
STORAGE_CLASS: Final = "StorageClass"
CSI_NODE: Final = "CSINode"
CSI_DRIVER: Final = "CSIDriver"
VOLUME_KINDS = (PERSISTENT_VOLUME_CLAIM, PERSISTENT_VOLUME, STORAGE_CLASS, CSI_NODE, CSI_DRIVER)
API_VERSIONS: Mapping[str, str] = {
    PERSISTENT_VOLUME_CLAIM: "v1",
    PERSISTENT_VOLUME: "v1",
    STORAGE_CLASS: "storage.k8s.io/v1",
    CSI_NODE: "storage.k8s.io/v1",
    CSI_DRIVER: "storage.k8s.io/v1",
}

STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"
BIND_COMPLETED_ANNOTATION = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER_ANNOTATION = "pv.kubernetes.io/bound-by-controller"
NO_PROVISIONER = "kubernetes.io/no-provisioner"  # a class that cannot provision
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
VOLUME_MODES = ("Filesystem", "Block")
IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)
AVAILABLE, BOUND = "Available", "Bound"  # PersistentVolume phases
PENDING = "Pending"
STORAGE = "storage"


@dataclass(frozen=True)
class ClaimInfo:
    """A PersistentVolumeClaim as the volume plugins read it."""

    namespace: str
    name: str
    storage_class: str
    access_modes: tuple[str, ...]
    requested_storage: int  # bytes; 0 when the claim requests none
    volume_name: str  # spec.volumeName: the volume it is bound (or being bound) to
    phase: str
    selected_node: str  # the volume.kubernetes.io/selected-node annotation
    volume_mode: str
    selector: LabelSelector | None  # spec.selector: which volumes it may bind to
    uid: str = ""
    deleting: bool = False  # metadata.deletionTimestamp is set
    bind_completed: bool = False  # the pv.kubernetes.io/bind-completed annotation
    controller_uid: str = ""  # the uid of its controller owner (an ephemeral claim's pod)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def bound(self) -> bool:
        """Fully bound, as kube's volume binder reads it (isPVCFullyBound): a volume name
        and the bind-completed annotation."""
        return bool(self.volume_name) and self.bind_completed


@dataclass(frozen=True)
class VolumeInfo:
    """A PersistentVolume as the volume plugins read it."""

    name: str
    labels: Mapping[str, str]  # VolumeZone reads the topology labels
    storage_class: str
    capacity: int  # capacity.storage in bytes
    access_modes: tuple[str, ...]
    volume_mode: str
    node_affinity: NodeAffinity | None  # spec.nodeAffinity.required; None when absent
    csi_driver: str  # spec.csi.driver; '' for another volume source
    volume_handle: str  # spec.csi.volumeHandle
    claim: str  # spec.claimRef as "namespace/name"; '' when unclaimed
    phase: str
    claim_uid: str = ""  # spec.claimRef.uid
    deleting: bool = False  # metadata.deletionTimestamp is set

    def bound_to(self, claim: ClaimInfo) -> bool:
        """Whether its claimRef names ``claim`` (and its uid, when the ref has one):
        IsVolumeBoundToClaim."""
        return self.claim == claim.key and (not self.claim_uid or self.claim_uid == claim.uid)


# a volume without node affinity is usable on every node (kube's CheckNodeAffinity)
EVERY_NODE = NodeAffinity((), None)


# the PersistentVolume labels VolumeZone reads (volumezone.topologyLabels)
TOPOLOGY_LABELS = ("failure-domain.beta.kubernetes.io/zone",
                   "failure-domain.beta.kubernetes.io/region",
                   "topology.kubernetes.io/zone", "topology.kubernetes.io/region")
ZONE_SEPARATOR = "__"  # volumehelpers' LabelMultiZoneDelimiter


def volume_topology(labels: Mapping[str, str]) -> dict[str, list[str]]:
    """VolumeZone's getPVTopologies: each topology label of a volume to its zones
    (volumehelpers.LabelZonesToSet: split on ``__``, spaces trimmed; a value with an empty
    zone does not parse and is left out)."""
    found = {}
    for key in TOPOLOGY_LABELS:
        if key in labels:
            zones = [z.strip() for z in labels[key].split(ZONE_SEPARATOR)]
            if all(zones):
                found[key] = sorted(set(zones))
    return found


@dataclass(frozen=True)
class TopologyRequirement:
    """One ``matchLabelExpressions`` entry of a StorageClass's allowed topology term: the
    node's label ``key`` must have one of ``values``."""

    key: str
    values: frozenset[str]


@dataclass(frozen=True)
class StorageClassInfo:
    """A StorageClass as the volume plugins read it. ``allowed_topologies``: terms (ORed)
    of requirements (ANDed); empty when the class allows every node."""

    name: str
    provisioner: str
    binding_mode: str
    allowed_topologies: tuple[tuple[TopologyRequirement, ...], ...]

    def allows(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` is in the class's allowed topologies
        (v1helper.MatchTopologySelectorTerms: ``topology`` on the labels alone)."""
        return self.topology.matches(labels, "")

    @cached_property
    def topology(self) -> NodeAffinity:
        """``allowed_topologies`` as a NodeAffinity (its terms ORed, each of In
        requirements): every node for a class without any."""
        if not self.allowed_topologies:
            return EVERY_NODE
        return NodeAffinity((), tuple(
            NodeSelectorTerm(LabelSelector(tuple(
                Requirement(r.key, IN, tuple(sorted(r.values))) for r in term)), ())
            for term in self.allowed_topologies))


@dataclass(frozen=True)
class CSINodeInfo:
    """A CSINode: the node's volume limit per CSI driver (drivers with an
    ``allocatable.count``)."""

    name: str
    limits: Mapping[str, int]


@dataclass(frozen=True)
class CSIDriverInfo:
    """A CSIDriver: whether its volumes are attached to nodes."""

    name: str
    attach_required: bool


GCE_PERSISTENT_DISK: Final = "gcePersistentDisk"
AWS_ELASTIC_BLOCK_STORE: Final = "awsElasticBlockStore"
ISCSI: Final = "iscsi"
RBD: Final = "rbd"
DISK_KINDS = (GCE_PERSISTENT_DISK, AWS_ELASTIC_BLOCK_STORE, ISCSI, RBD)
RBD_DEFAULT_POOL = "rbd"  # the API's default for rbd.pool


@dataclass(frozen=True)
class Disk:
    """An inline disk of a pod as VolumeRestrictions compares them (isVolumeConflict):
    ``kind`` (the volume source's field name), ``id`` (a GCE disk's ``pdName``, an EBS
    ``volumeID``, an iSCSI ``iqn``, an RBD ``pool/image``), ``read_only`` and, for RBD,
    the Ceph ``monitors``."""

    kind: str
    id: str
    read_only: bool
    monitors: tuple[str, ...] = ()

    def view(self) -> dict[str, Any]:
        """The CEL ``policysched.Disk``."""
        return {"kind": self.kind, "id": self.id, "readOnly": self.read_only,
                "monitors": list(self.monitors)}


@dataclass(frozen=True)
class PodVolume:
    """A volume of a pod that refers to a claim (``persistentVolumeClaim``, or
    ``ephemeral``, whose claim is ``<pod>-<volume>``), an inline CSI volume
    (``csi_driver`` set, no claim), or an inline disk (``disk`` set, no claim)."""

    name: str
    claim: str  # the claim's name in the pod's namespace; '' for an inline volume
    read_only: bool = False
    ephemeral: bool = False
    csi_driver: str = ""
    disk: Disk | None = None

    @property
    def claim_reference(self) -> bool:
        """A ``persistentVolumeClaim`` volume: what kube's PVCRefCounts count."""
        return bool(self.claim) and not self.ephemeral


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return _get_map(_object_map(obj), "metadata", "")


def _storage_class(obj: dict[str, Any], spec: dict[str, Any]) -> str:
    annotations = _get_string_map(_metadata(obj), "annotations", "metadata")
    if STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[STORAGE_CLASS_ANNOTATION]
    return _get_str(spec, "storageClassName", "spec")


def _choice(parent: dict[str, Any], key: str, path: str, choices: tuple[str, ...],
            default: str) -> str:
    value = _get_str(parent, key, path) or default
    if value not in choices:
        raise ObjectError(child_path(path, key), messages.UNSUPPORTED_VALUE.format(
            value=value, supported=", ".join(choices)))
    return value


def _access_modes(spec: dict[str, Any]) -> tuple[str, ...]:
    path = child_path("spec", "accessModes")
    modes = []
    for i, mode in enumerate(_get_list(spec, "accessModes", "spec")):
        if mode not in ACCESS_MODES:
            raise ObjectError(child_path(path, i), messages.UNSUPPORTED_VALUE.format(
                value=mode, supported=", ".join(ACCESS_MODES)))
        modes.append(mode)
    return tuple(modes)


def _storage(resources: dict[str, Any], path: str) -> int:
    quantity = resources.get(STORAGE)
    return 0 if quantity is None else resource_amount(STORAGE, quantity,
                                                      child_path(path, STORAGE))


def claim_info(obj: dict[str, Any]) -> ClaimInfo:
    """The ``ClaimInfo`` of a PersistentVolumeClaim; raises ``ObjectError``."""
    namespace, _, name = pod_key(obj).partition("/")
    annotations = _get_string_map(_metadata(obj), "annotations", "metadata")
    spec = _get_map(obj, "spec", "")
    status = _get_map(obj, "status", "")
    resources = _get_map(spec, "resources", "spec")
    requests_path = child_path(child_path("spec", "resources"), "requests")
    requested = _storage(_get_map(resources, "requests", child_path("spec", "resources")),
                         requests_path)
    selector = None
    if spec.get("selector") is not None:
        try:
            selector = label_selector(spec["selector"])
        except SelectorError as e:
            raise ObjectError(child_path("spec", "selector"), str(e)) from None
    metadata = _metadata(obj)
    return ClaimInfo(
        namespace, name, _storage_class(obj, spec), _access_modes(spec), requested,
        _get_str(spec, "volumeName", "spec"), _get_str(status, "phase", "status") or PENDING,
        annotations.get(SELECTED_NODE_ANNOTATION, ""),
        _choice(spec, "volumeMode", "spec", VOLUME_MODES, VOLUME_MODES[0]), selector,
        _get_str(metadata, "uid", "metadata"), bool(metadata.get("deletionTimestamp")),
        BIND_COMPLETED_ANNOTATION in annotations, _controller_uid(metadata))


def _controller_uid(metadata: dict[str, Any]) -> str:
    """The uid of the owner reference marked ``controller`` ('' when none)."""
    for _, ref in _get_maps(metadata, "ownerReferences", "metadata"):
        if ref.get("controller") is True:
            return str(ref.get("uid") or "")
    return ""


def _node_affinity(spec: dict[str, Any]) -> NodeAffinity | None:
    path = child_path("spec", "nodeAffinity")
    required = _get_map(_get_map(spec, "nodeAffinity", "spec"), "required", path)
    if not required:
        return None
    try:
        return _required_node_affinity({}, {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": required}})
    except SelectorError as e:
        raise ObjectError(child_path(path, "required"), str(e)) from None


def volume_info(obj: dict[str, Any]) -> VolumeInfo:
    """The ``VolumeInfo`` of a PersistentVolume; raises ``ObjectError``."""
    name = object_name(obj)
    labels = _get_string_map(_metadata(obj), "labels", "metadata")
    spec = _get_map(obj, "spec", "")
    status = _get_map(obj, "status", "")
    csi_path = child_path("spec", "csi")
    csi = _get_map(spec, "csi", "spec")
    driver = handle = ""
    if csi:
        driver = _required_str(csi, "driver", csi_path)
        handle = _required_str(csi, "volumeHandle", csi_path)
    claim_ref = _get_map(spec, "claimRef", "spec")
    claim = claim_uid = ""
    if claim_ref.get("name"):
        ref_path = child_path("spec", "claimRef")
        claim = (f"{_get_str(claim_ref, 'namespace', ref_path)}/"
                 f"{_get_str(claim_ref, 'name', ref_path)}")
        claim_uid = _get_str(claim_ref, "uid", ref_path)
    return VolumeInfo(
        name, labels, _storage_class(obj, spec), _storage(
            _get_map(spec, "capacity", "spec"), child_path("spec", "capacity")),
        _access_modes(spec), _choice(spec, "volumeMode", "spec", VOLUME_MODES, VOLUME_MODES[0]),
        _node_affinity(spec), driver, handle, claim,
        _get_str(status, "phase", "status") or PENDING, claim_uid,
        bool(_metadata(obj).get("deletionTimestamp")))


def storage_class_info(obj: dict[str, Any]) -> StorageClassInfo:
    """The ``StorageClassInfo`` of a StorageClass; raises ``ObjectError``."""
    name = object_name(obj)
    body = _object_map(obj)  # a StorageClass has its fields at the top level
    terms = []
    for term_path, term in _get_maps(body, "allowedTopologies", ""):
        requirements = []
        for p, requirement in _get_maps(term, "matchLabelExpressions", term_path):
            key = _required_str(requirement, "key", p)
            values = _get_list(requirement, "values", p)
            for i, value in enumerate(values):
                if not isinstance(value, str):
                    raise _wrong_type(child_path(child_path(p, "values"), i), "a string", value)
            requirements.append(TopologyRequirement(key, frozenset(values)))
        terms.append(tuple(requirements))
    return StorageClassInfo(
        name, _required_str(body, "provisioner", ""),
        _choice(body, "volumeBindingMode", "", BINDING_MODES, IMMEDIATE), tuple(terms))


def csi_node_info(obj: dict[str, Any]) -> CSINodeInfo:
    """The ``CSINodeInfo`` of a CSINode; raises ``ObjectError``."""
    name = object_name(obj)
    limits = {}
    for p, driver in _get_maps(_get_map(obj, "spec", ""), "drivers", "spec"):
        driver_name = _required_str(driver, "name", p)
        allocatable = _get_map(driver, "allocatable", p)
        count = allocatable.get("count")
        if count is not None:
            if isinstance(count, bool) or not isinstance(count, int):
                raise _wrong_type(child_path(child_path(p, "allocatable"), "count"),
                                  "an integer", count)
            limits[driver_name] = count
    return CSINodeInfo(name, limits)


def csi_driver_info(obj: dict[str, Any]) -> CSIDriverInfo:
    """The ``CSIDriverInfo`` of a CSIDriver; raises ``ObjectError``."""
    return CSIDriverInfo(object_name(obj), _get_bool(
        _get_map(obj, "spec", ""), "attachRequired", "spec", default=True))


def _disk(volume: dict[str, Any], path: str) -> Disk | None:
    """The inline disk of a volume, None for another source."""
    for kind in DISK_KINDS:
        if volume.get(kind) is None:
            continue
        source_path = child_path(path, kind)
        source = _get_map(volume, kind, path)
        read_only = _get_bool(source, "readOnly", source_path)
        if kind == GCE_PERSISTENT_DISK:
            return Disk(kind, _required_str(source, "pdName", source_path), read_only)
        if kind == AWS_ELASTIC_BLOCK_STORE:
            return Disk(kind, _required_str(source, "volumeID", source_path), read_only)
        if kind == ISCSI:
            return Disk(kind, _required_str(source, "iqn", source_path), read_only)
        monitors = _get_list(source, "monitors", source_path)
        for i, monitor in enumerate(monitors):
            if not isinstance(monitor, str):
                raise _wrong_type(child_path(child_path(source_path, "monitors"), i),
                                  "a string", monitor)
        pool = _get_str(source, "pool", source_path) or RBD_DEFAULT_POOL
        image = _required_str(source, "image", source_path)
        return Disk(kind, f"{pool}/{image}", read_only, tuple(monitors))
    return None


def pod_volumes(obj: dict[str, Any]) -> tuple[PodVolume, ...]:
    """The volumes of a pod that the volume plugins read (claims, ephemeral claims,
    inline CSI volumes, inline disks); () for a pod without any."""
    spec = _get_map(_object_map(obj), "spec", "")
    if not spec.get("volumes"):
        return ()
    pod_name = object_name(obj)
    found = []
    for p, volume in _get_maps(spec, "volumes", "spec"):
        name = _required_str(volume, "name", p)
        if volume.get("persistentVolumeClaim") is not None:
            source_path = child_path(p, "persistentVolumeClaim")
            source = _get_map(volume, "persistentVolumeClaim", p)
            found.append(PodVolume(name, _required_str(source, "claimName", source_path),
                                   _get_bool(source, "readOnly", source_path)))
        elif volume.get("ephemeral") is not None:
            found.append(PodVolume(name, f"{pod_name}-{name}", ephemeral=True))
        elif volume.get("csi") is not None:
            csi = _get_map(volume, "csi", p)
            found.append(PodVolume(name, "", _get_bool(csi, "readOnly", child_path(p, "csi")),
                                   csi_driver=_required_str(csi, "driver",
                                                            child_path(p, "csi"))))
        else:
            disk = _disk(volume, p)
            if disk is not None:
                found.append(PodVolume(name, "", disk.read_only, disk=disk))
    return tuple(found)


def csi_volume(claim: ClaimInfo, volumes: Mapping[str, VolumeInfo],
               classes: Mapping[str, StorageClassInfo]) -> tuple[str, str] | None:
    """The (driver, unique volume name) NodeVolumeLimits counts for ``claim``
    (getCSIDriverInfo): its bound CSI volume's, or, while it is not bound to a known
    volume, its class's provisioner with a handle of the claim's namespace and name; None
    when it counts under no CSI driver."""
    volume = volumes.get(claim.volume_name) if claim.volume_name else None
    if volume is not None:
        if not volume.csi_driver:
            return None
        return volume.csi_driver, f"{volume.csi_driver}/{volume.volume_handle}"
    storage_class = classes.get(claim.storage_class) if claim.storage_class else None
    if storage_class is None:
        return None
    driver = storage_class.provisioner
    return driver, f"{driver}/-{claim.namespace}/{claim.name}"


@dataclass(frozen=True)
class StorageObjects:
    """The storage objects of the cluster at one moment, by key: claims by
    "namespace/name", the others by name. Read-only."""

    claims: Mapping[str, ClaimInfo]
    volumes: Mapping[str, VolumeInfo]
    classes: Mapping[str, StorageClassInfo]
    csi_nodes: Mapping[str, CSINodeInfo]
    csi_drivers: Mapping[str, CSIDriverInfo]

    @cached_property
    def volumes_by_class(self) -> Mapping[str, tuple[VolumeInfo, ...]]:
        """The volumes of each storage class, by name (the volume binder's index: kube's
        assume cache lists PersistentVolumes by class)."""
        found: dict[str, list[VolumeInfo]] = {}
        for name in sorted(self.volumes):
            volume = self.volumes[name]
            found.setdefault(volume.storage_class, []).append(volume)
        return {c: tuple(v) for c, v in found.items()}

    def volume_views(self, namespace: str, volumes: tuple[PodVolume, ...],
                     claim_nodes: Callable[[str], tuple[str, ...]] = lambda key: ()
                     ) -> list[dict[str, Any]]:
        """The CEL views of a pod's ``volumes`` (``pod_volumes``) in its ``namespace``:
        each volume with its claim, the claim's bound PersistentVolume and its class, each
        an empty view (name '') when absent or not known; the CSI volume NodeVolumeLimits
        counts for it (``csi_volume``); its inline disk. ``claim_nodes`` gives, for a
        claim key, the nodes whose pods use it (the claim's ``usedOnNodes``)."""
        views = []
        for volume in volumes:
            key = f"{namespace}/{volume.claim}"
            claim = self.claims.get(key) if volume.claim else None
            bound = self.volumes.get(claim.volume_name) if claim and claim.volume_name else None
            storage_class = self.classes.get(claim.storage_class) if claim else None
            counted = (csi_volume(claim, self.volumes, self.classes)
                       if claim is not None else None)
            claim_view = _claim_view(claim)
            if claim is not None:
                claim_view["usedOnNodes"] = list(claim_nodes(key))
            views.append({
                "name": volume.name, "claimName": volume.claim, "readOnly": volume.read_only,
                "ephemeral": volume.ephemeral, "csiDriver": volume.csi_driver,
                "claim": claim_view, "persistentVolume": _volume_view(bound),
                "storageClass": _class_view(storage_class),
                "csiVolume": counted[1] if counted else "",
                "csiVolumeDriver": counted[0] if counted else "",
                "disk": volume.disk.view() if volume.disk is not None else _NO_DISK,
            })
        return views

    def attached_csi_volumes(self, namespace: str, volumes: tuple[PodVolume, ...]
                             ) -> dict[str, str]:
        """The CSI volumes NodeVolumeLimits counts for a pod's ``volumes``: unique volume
        name -> driver (claims through ``csi_volume``; a claim not known is not counted,
        as for the pods already on a node)."""
        found = {}
        for volume in volumes:
            claim = self.claims.get(f"{namespace}/{volume.claim}") if volume.claim else None
            if claim is None:
                continue
            counted = csi_volume(claim, self.volumes, self.classes)
            if counted is not None:
                found[counted[1]] = counted[0]
        return found


NO_STORAGE = StorageObjects({}, {}, {}, {}, {})


def _claim_view(claim: ClaimInfo | None) -> dict[str, Any]:
    if claim is None:
        return _NO_CLAIM
    return {"name": claim.name, "storageClassName": claim.storage_class,
            "accessModes": list(claim.access_modes), "requestedStorage": claim.requested_storage,
            "volumeName": claim.volume_name, "phase": claim.phase,
            "selectedNode": claim.selected_node, "volumeMode": claim.volume_mode,
            "usedOnNodes": [], "bound": claim.bound, "deleting": claim.deleting,
            "controllerUID": claim.controller_uid}


_NO_CLAIM: Final[dict[str, Any]] = {
    "name": "", "storageClassName": "", "accessModes": [], "requestedStorage": 0,
    "volumeName": "", "phase": "", "selectedNode": "", "volumeMode": "", "usedOnNodes": [],
    "bound": False, "deleting": False, "controllerUID": ""}
_NO_DISK: Final[dict[str, Any]] = {"kind": "", "id": "", "readOnly": False, "monitors": []}


def _volume_view(volume: VolumeInfo | None) -> dict[str, Any]:
    if volume is None:
        return _NO_VOLUME
    return {"name": volume.name, "labels": dict(volume.labels),
            "storageClassName": volume.storage_class, "capacity": volume.capacity,
            "accessModes": list(volume.access_modes), "volumeMode": volume.volume_mode,
            "nodeAffinity": volume.node_affinity or EVERY_NODE,
            "csiDriver": volume.csi_driver, "volumeHandle": volume.volume_handle,
            "claim": volume.claim, "phase": volume.phase,
            "topology": volume_topology(volume.labels)}


_NO_VOLUME: Final[dict[str, Any]] = {
    "name": "", "labels": {}, "storageClassName": "", "capacity": 0, "accessModes": [],
    "volumeMode": "", "nodeAffinity": EVERY_NODE, "csiDriver": "", "volumeHandle": "",
    "claim": "", "phase": "", "topology": {}}


def _class_view(storage_class: StorageClassInfo | None) -> dict[str, Any]:
    if storage_class is None:
        return _NO_CLASS
    return {"name": storage_class.name, "provisioner": storage_class.provisioner,
            "volumeBindingMode": storage_class.binding_mode,
            "allowedTopologies": storage_class.topology}


_NO_CLASS: Final[dict[str, Any]] = {"name": "", "provisioner": "", "volumeBindingMode": "",
                                    "allowedTopologies": EVERY_NODE}


STORAGE_PARSERS: Mapping[str, Callable[[dict[str, Any]], Any]] = {
    PERSISTENT_VOLUME_CLAIM: claim_info, PERSISTENT_VOLUME: volume_info,
    STORAGE_CLASS: storage_class_info, CSI_NODE: csi_node_info, CSI_DRIVER: csi_driver_info}
"""Each storage kind's parser (raises ``ObjectError``)."""
