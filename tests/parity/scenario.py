"""A parity scenario: the initial objects of a cluster (Namespaces, PriorityClasses,
PodDisruptionBudgets with their status, storage — StorageClasses, CSIDrivers,
PersistentVolumes and PersistentVolumeClaims with their status, CSINodes —, Nodes, pods
already bound) and the pending pods,
created one at a time in order — and its text as a cluster file (``policysched simulate
--cluster`` reads it: pending pods are the Pods without ``spec.nodeName``, in file order).

PodDisruptionBudgets go in the file as documents once cluster files accept them; until then
they are kept in a commented section (``PDB_SECTION``) that ``parse_scenario`` reads back,
so a saved file stays loadable and self-contained.

Names are unique per scenario (namespaces, nodes, priority classes and the cluster-scoped
storage objects — StorageClasses, CSIDrivers, PersistentVolumes — carry the scenario id),
so that one control plane runs scenarios one after another.

Start times, which preemption ranks victims by, are the scenario's on both sides: a bound
pod's ``status.startTime`` (``DEFAULT_START`` when it has none), and for a pending pod that
kube-scheduler bound, ``pending_start(index)`` — the oracle writes them into the API server
(``started``), the replay into its cluster files.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from policysched.cluster.cluster_file import API_VERSIONS

NAMESPACE, PRIORITY_CLASS, PDB, NODE, POD = (
    "Namespace", "PriorityClass", "PodDisruptionBudget", "Node", "Pod")
STORAGE_CLASS, CSI_DRIVER, PV, PVC, CSI_NODE = (
    "StorageClass", "CSIDriver", "PersistentVolume", "PersistentVolumeClaim", "CSINode")
STORAGE_KINDS = (STORAGE_CLASS, CSI_DRIVER, PV, PVC, CSI_NODE)
PDB_API_VERSION = "policy/v1"
PDBS_IN_CLUSTER_FILES = PDB in API_VERSIONS
# creation order: what an object refers to first (a claim's class and volume, a CSINode's
# node)
KIND_ORDER = (NAMESPACE, PRIORITY_CLASS, PDB, STORAGE_CLASS, CSI_DRIVER, PV, PVC, NODE, CSI_NODE,
              POD)
SCHEDULER_NAME = "policysched"  # the built-in configuration's default profile
ID_HEADER = "# parity-scenario: "
PDB_SECTION = "# parity: PodDisruptionBudgets (cluster files do not accept them yet):"
PDB_LINE = "#   "
# the way the oracle runs a scenario: part of the cache key, so that a change of it (2: start
# times written) makes the oracle run every scenario again
ORACLE_REVISION = 2
EPOCH = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
PENDING_START = 86_400  # seconds after EPOCH when the first pending pod kube bound started

Object = dict[str, Any]


@dataclass(frozen=True)
class Scenario:
    """A cluster and the pods to schedule in it, one after another (``pending``, each
    without ``spec.nodeName``, ``schedulerName: policysched``)."""

    id: str
    objects: tuple[Object, ...]
    pending: tuple[Object, ...]
    origin: str = ""  # "seed 3" or "cases/<file>"

    def canonical(self) -> str:
        """The scenario as compact, key-sorted JSON: what its results are keyed by."""
        return json.dumps({"id": self.id, "objects": list(self.objects),
                           "pending": list(self.pending)}, sort_keys=True,
                          separators=(",", ":"))

    def key(self, kube_version: str) -> str:
        """The cache key of kube's results: a hash of the canonical text and the version."""
        digest = hashlib.sha256(
            f"{self.canonical()}\n{kube_version}\n{ORACLE_REVISION}".encode())
        return digest.hexdigest()[:32]

    def of_kind(self, kind: str) -> list[Object]:
        return [o for o in self.objects if o["kind"] == kind]

    @property
    def nodes(self) -> list[Object]:
        return self.of_kind(NODE)

    @property
    def bound_pods(self) -> list[Object]:
        return self.of_kind(POD)

    def to_cluster_file(self, header: Sequence[str] = ()) -> str:
        return cluster_text([*self.objects, *self.pending], [f"{ID_HEADER}{self.id}", *header])


def timestamp(seconds: int) -> str:
    """``seconds`` after ``EPOCH`` as the API server writes a time."""
    return (EPOCH + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


DEFAULT_START = timestamp(0)


def pending_start(index: int) -> str:
    """When pending pod ``index`` started once kube-scheduler bound it: after every bound
    pod of the scenario, one minute after the pending pod before it."""
    return timestamp(PENDING_START + 60 * index)


def started(pod: Object, start: str | None = None) -> Object:
    """The pod with ``status.startTime``: ``start``, else its own, else ``DEFAULT_START``."""
    out = copy.deepcopy(pod)
    status = out.setdefault("status", {})
    status["startTime"] = start or status.get("startTime") or DEFAULT_START
    return out


def pod_key(pod: Object) -> str:
    metadata = pod["metadata"]
    return f"{metadata.get('namespace') or 'default'}/{metadata['name']}"


def ordered(objects: Iterable[Object]) -> list[Object]:
    """Objects in creation order: by kind (``KIND_ORDER``; bound pods before pending ones,
    pending pods in their own order), stable otherwise."""
    def rank(obj: Object) -> tuple[int, int]:
        kind = obj["kind"]
        pending = kind == POD and not (obj.get("spec") or {}).get("nodeName")
        return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER), int(pending))
    return sorted(objects, key=rank)


def _dump(obj: Object) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, width=100)


def cluster_text(objects: Iterable[Object], header: Sequence[str] = ()) -> str:
    """A cluster file of ``objects`` (in ``ordered`` order) under comment lines ``header``
    (each already starting with ``#``)."""
    documents, pdbs = [], []
    for obj in ordered(objects):
        if obj["kind"] == PDB and not PDBS_IN_CLUSTER_FILES:
            pdbs.append(obj)
        else:
            documents.append(_dump(obj))
    lines = [*header]
    if pdbs:
        lines.append(PDB_SECTION)
        for pdb in pdbs:
            lines.append(PDB_LINE + "---")
            lines += [PDB_LINE + line for line in _dump(pdb).splitlines()]
    head = "\n".join(lines) + "\n" if lines else ""
    return head + "---\n" + "---\n".join(documents)


def parse_scenario(text: str, default_id: str, origin: str = "") -> Scenario:
    """A scenario from a cluster file's text (its ``# parity-scenario:`` header names it,
    else ``default_id``), PodDisruptionBudgets of its commented section included."""
    scenario_id, pdb_lines, in_pdbs = default_id, [], False
    for line in text.splitlines():
        if line.startswith(ID_HEADER):
            scenario_id = line[len(ID_HEADER):].strip()
        elif line.startswith(PDB_SECTION):
            in_pdbs = True
        elif in_pdbs and line.startswith(PDB_LINE):
            pdb_lines.append(line[len(PDB_LINE):])
        elif in_pdbs:
            in_pdbs = False
    documents = [d for d in yaml.safe_load_all(text) if d]
    documents += [d for d in yaml.safe_load_all("\n".join(pdb_lines)) if d]
    objects, pending = [], []
    for obj in documents:
        if obj["kind"] == POD and not (obj.get("spec") or {}).get("nodeName"):
            pending.append(obj)
        else:
            objects.append(obj)
    return Scenario(scenario_id, tuple(ordered(objects)), tuple(pending), origin)


def load_scenario(path: Path) -> Scenario:
    return parse_scenario(path.read_text(), path.stem, f"cases/{path.name}")
