"""Anonymised cluster files (``policysched snapshot --anonymise``): names, namespaces,
label keys and values replaced by tokens, consistently, so that the cluster schedules as
the original did.

One ``Anonymiser`` holds two mappings, each giving the same input the same token:

* values — object names, namespaces, label values, taint and toleration values, container
  names and scheduling gates share one mapping, because scheduling compares them with
  each other: a ``kubernetes.io/hostname`` label holds its node's name, a
  ``kubernetes.io/metadata.name`` label its namespace's, ``scheduling.x-k8s.io/pod-group``
  its PodGroup's, a ``matchFields`` term node names. A token is named after where its
  string was first met (``node-3``, ``namespace-1``, ``value-12``); objects are visited
  in file order, so a cluster file gives the same tokens every time. Integers are kept
  (node affinity's ``Gt``/``Lt`` compare them), and so are the empty string and the
  built-in PriorityClasses (``system-*``, whose values only they may have).
* label keys — ``key-1``…; the keys of Kubernetes' own domains (``kubernetes.io``,
  ``k8s.io``, ``x-k8s.io`` and their subdomains: ``kubernetes.io/hostname``,
  ``topology.kubernetes.io/zone``, ``scheduling.x-k8s.io/pod-group``…) and those given
  to ``keep_keys`` keep their names (their values are still replaced).

Each place that holds a name, a label or a selector is rewritten with them: metadata
(labels; annotations are free text: only those of kept keys stay, their values replaced as
label values — so ``keep_keys=["delay"]`` keeps the built-in ``delay`` policy's seconds),
owner references, a pod's node, nominated
node, priority class, node selector, node and pod (anti-)affinity terms (keys, values,
namespaces, namespace selectors, topology keys, match/mismatchLabelKeys), tolerations,
topology spread constraints, container names and images; a node's taints and images; the
selectors of Services, ReplicationControllers (and their template labels), ReplicaSets,
StatefulSets and PodDisruptionBudgets, a budget's disrupted pods; the storage objects'
references (a pod's volumes and claim names, a claim's class, volume and selector, a
volume's class, claimRef, CSI driver and handle, node affinity and disk names, a class's
provisioner and allowed topologies, a CSINode's drivers): CSI driver names share one token
whether a CSIDriver, a volume, a class's provisioner or a CSINode names them. A pod's
``ephemeral`` volume is written as a ``persistentVolumeClaim`` of its claim (whose name,
``<pod>-<volume>``, is replaced like any other). Images are replaced after
ImageLocality's normalisation (``:latest`` added to an untagged name), so a pod's image
still matches the node's. ``schedulerName`` is kept: it chooses the profile.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..model.disruption_budgets import POD_DISRUPTION_BUDGET
from ..model.volumes import (
    CSI_DRIVER,
    CSI_NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
)
from ..model.workloads import NAMESPACE, REPLICATION_CONTROLLER, SERVICE
from .memory import NODE, POD, PRIORITY_CLASS, SYSTEM_PRIORITY_CLASSES

KEPT_DOMAINS = ("kubernetes.io", "k8s.io", "x-k8s.io")
NODE_NAME_FIELD = "metadata.name"  # the one field a nodeSelectorTerm's matchFields has
VALUE = "value"
_INTEGER = re.compile(r"-?[0-9]+")


def well_known_key(key: str) -> bool:
    """Whether a label key belongs to a domain Kubernetes reserves for itself."""
    prefix, slash, _ = key.rpartition("/")
    return bool(slash) and any(prefix == d or prefix.endswith("." + d) for d in KEPT_DOMAINS)


def normalised_image(image: str) -> str:
    """An image name as ImageLocality compares it: ``:latest`` added when untagged."""
    return image if image.rfind(":") > image.rfind("/") else image + ":latest"


class Anonymiser:
    """Consistent replacement of names, label keys and values (see the module
    docstring). ``values`` and ``keys`` are the mappings so far (original → token)."""

    def __init__(self, keep_keys: Iterable[str] = ()) -> None:
        self.keep_keys = frozenset(keep_keys)
        self.values: dict[str, str] = {}
        self.keys: dict[str, str] = {}
        self.images: dict[str, str] = {}
        self._counters: Counter[str] = Counter()

    # -- the mappings ----------------------------------------------------------------------

    def value(self, text: str, kind: str = VALUE) -> str:
        """The token of a name or label value, named after ``kind`` when new."""
        if not text or _INTEGER.fullmatch(text):
            return text
        token = self.values.get(text)
        if token is None:
            token = self.values[text] = self._next(kind)
        return token

    def key(self, key: str) -> str:
        if not key or key in self.keep_keys or well_known_key(key):
            return key
        token = self.keys.get(key)
        if token is None:
            token = self.keys[key] = self._next("key")
        return token

    def image(self, image: str) -> str:
        name = normalised_image(image)
        token = self.images.get(name)
        if token is None:
            token = self.images[name] = self._next("image") + ":latest"
        return token

    def _next(self, kind: str) -> str:
        self._counters[kind] += 1
        return f"{kind}-{self._counters[kind]}"

    # -- objects -----------------------------------------------------------------------------

    def objects(self, objects: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Anonymised copies of ``objects`` (cluster-file objects), in the same order."""
        return [self.anonymised(obj) for obj in objects]

    def anonymised(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(dict(obj))
        kind = str(out.get("kind") or "")
        metadata = out.get("metadata")
        if isinstance(metadata, dict):
            self._metadata(kind, metadata)
        spec = out.get("spec")
        status = out.get("status")
        if kind == STORAGE_CLASS:
            self._storage_class(out)
        if not isinstance(spec, dict):
            return out
        if kind == POD:
            self._pod_spec(spec)
            self._pod_volumes(spec, str((obj.get("metadata") or {}).get("name") or ""))
        elif kind == PERSISTENT_VOLUME_CLAIM:
            self._names(spec, {"storageClassName": "storageclass",
                               "volumeName": "persistentvolume"})
            self._selector(spec.get("selector"))
        elif kind == PERSISTENT_VOLUME:
            self._persistent_volume(spec)
        elif kind == CSI_NODE:
            for driver in _dicts(spec.get("drivers")):
                self._names(driver, {"name": "csidriver", "nodeID": VALUE})
                if "topologyKeys" in driver:
                    driver["topologyKeys"] = self._keys(driver["topologyKeys"])
            if isinstance(status, dict) and status.get("nominatedNodeName"):
                status["nominatedNodeName"] = self.value(status["nominatedNodeName"], "node")
        elif kind == NODE:
            for taint in _dicts(spec.get("taints")):
                self._key_value(taint)
            if isinstance(status, dict):
                for image in _dicts(status.get("images")):
                    image["names"] = [self.image(n) for n in image.get("names") or ()]
        elif kind in (SERVICE, REPLICATION_CONTROLLER):
            spec["selector"] = self._labels(spec.get("selector"))
            template = (spec.get("template") or {}).get("metadata")
            if isinstance(template, dict) and "labels" in template:
                template["labels"] = self._labels(template["labels"])
        elif kind != CSI_DRIVER:  # ReplicaSet, StatefulSet, PodDisruptionBudget
            self._selector(spec.get("selector"))
            if kind == POD_DISRUPTION_BUDGET and isinstance(status, dict):
                disrupted = status.get("disruptedPods")
                if isinstance(disrupted, dict):
                    status["disruptedPods"] = {self.value(k, "pod"): v
                                               for k, v in disrupted.items()}
        return out

    def _metadata(self, kind: str, metadata: dict[str, Any]) -> None:
        name = metadata.get("name")
        if isinstance(name, str) and not (kind == PRIORITY_CLASS
                                          and name in SYSTEM_PRIORITY_CLASSES):
            metadata["name"] = self.value(name, kind.lower())
        if metadata.get("namespace"):
            metadata["namespace"] = self.value(metadata["namespace"], NAMESPACE.lower())
        if "labels" in metadata:
            metadata["labels"] = self._labels(metadata["labels"])
        annotations = metadata.pop("annotations", None)
        if isinstance(annotations, dict):  # free text: only the kept keys stay
            kept = {k: v for k, v in annotations.items() if self.key(k) == k}
            if kept:
                metadata["annotations"] = self._labels(kept)
        metadata.pop("generateName", None)
        for owner in _dicts(metadata.get("ownerReferences")):
            if isinstance(owner.get("name"), str):
                owner["name"] = self.value(owner["name"], str(owner.get("kind") or "").lower())

    def _labels(self, labels: Any) -> Any:
        if not isinstance(labels, dict):
            return labels
        return {self.key(k): self.value(v) if isinstance(v, str) else v
                for k, v in labels.items()}

    def _values(self, values: Any, kind: str = VALUE) -> Any:
        if not isinstance(values, list):
            return values
        return [self.value(v, kind) if isinstance(v, str) else v for v in values]

    def _keys(self, keys: Any) -> Any:
        if not isinstance(keys, list):
            return keys
        return [self.key(k) if isinstance(k, str) else k for k in keys]

    def _key_value(self, entry: dict[str, Any]) -> None:
        """A taint or a toleration: its key and value."""
        if isinstance(entry.get("key"), str):
            entry["key"] = self.key(entry["key"])
        if isinstance(entry.get("value"), str):
            entry["value"] = self.value(entry["value"])

    def _selector(self, selector: Any) -> None:
        """A ``metav1.LabelSelector``, in place."""
        if not isinstance(selector, dict):
            return
        if "matchLabels" in selector:
            selector["matchLabels"] = self._labels(selector["matchLabels"])
        for requirement in _dicts(selector.get("matchExpressions")):
            self._requirement(requirement)

    def _requirement(self, requirement: dict[str, Any], kind: str = VALUE) -> None:
        if isinstance(requirement.get("key"), str):
            requirement["key"] = self.key(requirement["key"])
        if "values" in requirement:
            requirement["values"] = self._values(requirement["values"], kind)

    def _node_selector_term(self, term: Any) -> None:
        if not isinstance(term, dict):
            return
        for requirement in _dicts(term.get("matchExpressions")):
            self._requirement(requirement)
        for requirement in _dicts(term.get("matchFields")):
            if requirement.get("key") == NODE_NAME_FIELD:
                requirement["values"] = self._values(requirement.get("values"), NODE.lower())

    def _pod_affinity_term(self, term: Any) -> None:
        if not isinstance(term, dict):
            return
        self._selector(term.get("labelSelector"))
        self._selector(term.get("namespaceSelector"))
        if "namespaces" in term:
            term["namespaces"] = self._values(term["namespaces"], NAMESPACE.lower())
        if isinstance(term.get("topologyKey"), str):
            term["topologyKey"] = self.key(term["topologyKey"])
        for field in ("matchLabelKeys", "mismatchLabelKeys"):
            if field in term:
                term[field] = self._keys(term[field])

    def _pod_spec(self, spec: dict[str, Any]) -> None:
        if spec.get("nodeName"):
            spec["nodeName"] = self.value(spec["nodeName"], NODE.lower())
        name = spec.get("priorityClassName")
        if name and name not in SYSTEM_PRIORITY_CLASSES:
            spec["priorityClassName"] = self.value(name, PRIORITY_CLASS.lower())
        if "nodeSelector" in spec:
            spec["nodeSelector"] = self._labels(spec["nodeSelector"])
        for toleration in _dicts(spec.get("tolerations")):
            self._key_value(toleration)
        for constraint in _dicts(spec.get("topologySpreadConstraints")):
            self._pod_affinity_term(constraint)  # topologyKey, labelSelector, matchLabelKeys
        for gate in _dicts(spec.get("schedulingGates")):
            if isinstance(gate.get("name"), str):
                gate["name"] = self.value(gate["name"], "gate")
        for field in ("containers", "initContainers"):
            for container in _dicts(spec.get(field)):
                if isinstance(container.get("name"), str):
                    container["name"] = self.value(container["name"], "container")
                if isinstance(container.get("image"), str):
                    container["image"] = self.image(container["image"])
        affinity = spec.get("affinity")
        if not isinstance(affinity, dict):
            return
        node = affinity.get("nodeAffinity")
        if isinstance(node, dict):
            required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
            if isinstance(required, dict):
                for term in _dicts(required.get("nodeSelectorTerms")):
                    self._node_selector_term(term)
            for preferred in _dicts(node.get("preferredDuringSchedulingIgnoredDuringExecution")):
                self._node_selector_term(preferred.get("preference"))
        for field in ("podAffinity", "podAntiAffinity"):
            rules = affinity.get(field)
            if not isinstance(rules, dict):
                continue
            for term in _dicts(rules.get("requiredDuringSchedulingIgnoredDuringExecution")):
                self._pod_affinity_term(term)
            for weighted in _dicts(rules.get("preferredDuringSchedulingIgnoredDuringExecution")):
                self._pod_affinity_term(weighted.get("podAffinityTerm"))


    # -- storage -------------------------------------------------------------------------------

    def _names(self, parent: dict[str, Any], fields: Mapping[str, str]) -> None:
        """Each of ``fields`` (field -> the kind its value names) that holds a string."""
        for field, kind in fields.items():
            if isinstance(parent.get(field), str) and parent[field]:
                parent[field] = self.value(parent[field], kind)

    def _disks(self, holder: dict[str, Any]) -> None:
        """The disks VolumeRestrictions compares, in a pod's or a volume's sources."""
        for source, fields in _DISK_FIELDS.items():
            disk = holder.get(source)
            if isinstance(disk, dict):
                self._names(disk, dict.fromkeys(fields, "disk"))
                if "monitors" in disk:
                    disk["monitors"] = self._values(disk["monitors"], "disk")

    def _pod_volumes(self, spec: dict[str, Any], pod_name: str) -> None:
        for volume in _dicts(spec.get("volumes")):
            name = volume.get("name")
            ephemeral = volume.pop("ephemeral", None)
            if ephemeral is not None and isinstance(name, str):
                volume["persistentVolumeClaim"] = {"claimName": f"{pod_name}-{name}"}
            self._names(volume, {"name": "volume"})
            claim = volume.get("persistentVolumeClaim")
            if isinstance(claim, dict):
                self._names(claim, {"claimName": "persistentvolumeclaim"})
            csi = volume.get("csi")
            if isinstance(csi, dict):
                self._names(csi, {"driver": "csidriver"})
            self._disks(volume)

    def _persistent_volume(self, spec: dict[str, Any]) -> None:
        self._names(spec, {"storageClassName": "storageclass"})
        claim_ref = spec.get("claimRef")
        if isinstance(claim_ref, dict):
            self._names(claim_ref, {"name": "persistentvolumeclaim",
                                    "namespace": NAMESPACE.lower()})
        csi = spec.get("csi")
        if isinstance(csi, dict):
            self._names(csi, {"driver": "csidriver", "volumeHandle": "disk"})
        required = (spec.get("nodeAffinity") or {}).get("required")
        if isinstance(required, dict):
            for term in _dicts(required.get("nodeSelectorTerms")):
                self._node_selector_term(term)
        self._disks(spec)

    def _storage_class(self, storage_class: dict[str, Any]) -> None:
        self._names(storage_class, {"provisioner": "csidriver"})
        for term in _dicts(storage_class.get("allowedTopologies")):
            for requirement in _dicts(term.get("matchLabelExpressions")):
                self._requirement(requirement)


# the fields naming a disk, per volume source (VolumeRestrictions' conflicts)
_DISK_FIELDS: Mapping[str, tuple[str, ...]] = {
    "gcePersistentDisk": ("pdName",),
    "awsElasticBlockStore": ("volumeID",),
    "rbd": ("image", "pool"),
    "iscsi": ("targetPortal", "iqn"),
}


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
