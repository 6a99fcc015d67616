"""Cluster files: a cluster written as ordinary Kubernetes manifests in multi-document YAML
(also ``kind: List``), for ``policysched simulate`` and tests.

* ``Node``; ``Pod`` (with ``spec.nodeName``: running there; without: pending);
  ``PodGroup`` (``scheduling.x-k8s.io/v1alpha1``: ``spec.minMember``,
  ``spec.scheduleTimeoutSeconds``); ``PriorityClass`` (``spec.priorityClassName`` of pods
  is resolved into ``spec.priority``, ``globalDefault`` honoured); ``Namespace`` (its
  labels, for affinity terms' ``namespaceSelector``); ``Service``,
  ``ReplicationController``, ``ReplicaSet``, ``StatefulSet`` (their selectors, for
  kube-scheduler's DefaultSelector: ``model.workloads``); ``PodDisruptionBudget``
  (``policy/v1``: ``spec.selector``, ``status.disruptionsAllowed`` and
  ``status.disruptedPods``, which preemption reads: ``model.disruption_budgets``);
  ``PersistentVolumeClaim``, ``PersistentVolume`` (``v1``), ``StorageClass``, ``CSINode``,
  ``CSIDriver`` (``storage.k8s.io/v1``: what the volume plugins read: ``model.volumes``).
* A pending pod's ``status.nominatedNodeName`` nominates it to that node (an earlier
  preemption); a pod with ``metadata.deletionTimestamp`` is terminating (kube-scheduler does
  not schedule it; on a node, it counts there until it is gone).
* The namespace defaults to "default". A pod without ``metadata.creationTimestamp`` gets
  the file's latest one (or the Unix epoch); ``start_time`` is that latest time, where the
  simulated clock starts unless told otherwise.
* Every pod is created as the API server creates it (``memory.MemoryBackend``): its
  affinity terms' and spread constraints' ``matchLabelKeys`` / ``mismatchLabelKeys`` are
  merged into their selectors with its labels (``memory.merge_label_keys``), running pods
  included, so that their terms select what they select on a real cluster.

Every problem of the file is reported at once in a ``ClusterFileError``::

    document 3 (Pod default/web-1): spec.containers[0].resources.requests.cpu: invalid quantity '1.5.3Gi': ...
"""  # noqa: E501

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.disruption_budgets import API_VERSION as BUDGET_API_VERSION
from ..model.disruption_budgets import POD_DISRUPTION_BUDGET, disruption_budget
from ..model.objects import (
    DEFAULT_NAMESPACE,
    ObjectError,
    PriorityClassSpec,
    creation_timestamp,
    format_timestamp,
    node_view,
    object_name,
    pod_group_spec,
    pod_info,
    priority_class_spec,
    value_kind,
)
from ..model.volumes import API_VERSIONS as STORAGE_API_VERSIONS
from ..model.volumes import STORAGE_PARSERS, pod_volumes
from ..model.workloads import API_VERSIONS as SELECTING_OBJECT_API_VERSIONS
from ..model.workloads import NAMESPACE, namespace_info, workload
from ..policy.positions import FileText
from ..policy.yaml_documents import parse_documents
from . import messages
from .memory import NAMESPACED, NODE, POD, POD_GROUP, PRIORITY_CLASS, admit_priority

LIST = "List"
API_VERSIONS = {
    NODE: "v1",
    POD: "v1",
    POD_GROUP: "scheduling.x-k8s.io/v1alpha1",
    PRIORITY_CLASS: "scheduling.k8s.io/v1",
    **SELECTING_OBJECT_API_VERSIONS,  # Namespace and the workloads
    POD_DISRUPTION_BUDGET: BUDGET_API_VERSION,
    **STORAGE_API_VERSIONS,
    LIST: "v1",
}
_EXPECTED_KINDS = ", ".join(API_VERSIONS)


@dataclass(frozen=True)
class ClusterFileProblem:
    """One problem of a cluster file: ``message`` is "field: reason"; ``document`` is
    1-based, ``item`` the index in a List's items; ``line`` where the object starts."""

    message: str
    document: int | None = None
    item: int | None = None
    kind: str | None = None
    name: str | None = None
    line: int | None = None

    @property
    def where(self) -> str:
        if self.document is None:
            return ""
        if self.item is None:
            where = messages.DOCUMENT_WHERE.format(number=self.document)
        else:
            where = messages.DOCUMENT_ITEM_WHERE.format(number=self.document, item=self.item)
        if self.kind and self.name:
            return messages.DOCUMENT_OBJECT.format(where=where, kind=self.kind, name=self.name)
        if self.kind:
            return messages.DOCUMENT_KIND.format(where=where, kind=self.kind)
        return where

    def __str__(self) -> str:
        if self.document is None:
            if self.line is None:
                return self.message
            return messages.YAML_PROBLEM.format(line=self.line, message=self.message)
        return f"{self.where}: {self.message}"


class ClusterFileError(Exception):
    """A cluster file that cannot be used, with every problem found."""

    def __init__(self, source: str, problems: Sequence[ClusterFileProblem]) -> None:
        self.source = source
        self.problems = list(problems)
        count = len(self.problems)
        header = messages.CLUSTER_FILE_HEADER.format(
            source=source,
            count=count,
            problems=messages.PROBLEM if count == 1 else messages.PROBLEMS,
        )
        super().__init__("\n  ".join([header, *map(str, self.problems)]))


@dataclass(frozen=True)
class _Entry:
    """One object of the file and where it was written."""

    obj: Any
    document: int
    item: int | None
    line: int

    def problem(self, message: str, kind: str | None = None, name: str | None = None) -> (
        ClusterFileProblem
    ):
        return ClusterFileProblem(message, self.document, self.item, kind, name, self.line)


def load_cluster_file(path: str | Path) -> list[dict[str, Any]]:
    """The objects of the cluster file at ``path``; raises ``ClusterFileError``."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        message = messages.CANNOT_READ_FILE.format(reason=reason)
        raise ClusterFileError(source, [ClusterFileProblem(message)]) from None
    return parse_cluster(text, source)


def parse_cluster(text: str, source: str = "<cluster>") -> list[dict[str, Any]]:
    """The objects of a cluster file's text, in file order (List items in place),
    PriorityClasses included, pods' priorities resolved and creation times filled in;
    raises ``ClusterFileError`` listing every problem."""
    origin = FileText(source, text)
    documents, diagnostics = parse_documents(text, origin)
    problems = [ClusterFileProblem(d.message, line=d.line) for d in diagnostics]
    entries: list[_Entry] = []
    for doc in documents:
        number, line = doc.number + 1, doc.position(()).line
        value = doc.value
        if isinstance(value, dict) and value.get("kind") == LIST:
            items = value.get("items")
            if items is not None and not isinstance(items, list):
                entry = _Entry(value, number, None, line)
                actual = value_kind(items)
                problems.append(entry.problem(messages.LIST_ITEMS_NOT_LIST.format(actual=actual)))
                continue
            for i, item in enumerate(items or []):
                entries.append(_Entry(item, number, i, doc.position(("items", i)).line))
        else:
            entries.append(_Entry(value, number, None, line))
    return _checked(entries, problems, source)


def check_objects(objects: Sequence[Any], source: str = "<cluster>") -> list[dict[str, Any]]:
    """What ``parse_cluster`` makes of a cluster file holding ``objects``, one document
    each (in order), without writing or parsing the YAML: copies, completed; raises
    ``ClusterFileError`` listing every problem (document numbers are 1-based positions)."""
    entries = [_Entry(copy.deepcopy(obj), number, None, 0)
               for number, obj in enumerate(objects, start=1)]
    return _checked(entries, [], source)


def _checked(entries: list[_Entry], problems: list[ClusterFileProblem],
             source: str) -> list[dict[str, Any]]:
    checked, found = _check(entries)
    problems.extend(found)
    problems.extend(_complete(checked))
    if problems:
        problems.sort(key=_file_order)
        raise ClusterFileError(source, problems)
    return [entry.obj for entry in checked]


def _file_order(problem: ClusterFileProblem) -> tuple[int, int, int]:
    item = -1 if problem.item is None else problem.item
    return (problem.document or 0, item, problem.line or 0)


def start_time(objects: Iterable[dict[str, Any]]) -> int:
    """The latest ``metadata.creationTimestamp`` of ``objects`` (Unix seconds), 0 when none
    has one."""
    times = [t for t in map(creation_timestamp, objects) if t is not None]
    return max(times, default=0)


def _display_name(kind: str, obj: dict[str, Any]) -> str | None:
    try:
        name = object_name(obj)
    except ObjectError:
        return None
    if kind not in NAMESPACED:
        return name
    namespace = obj["metadata"].get("namespace")
    return f"{namespace if isinstance(namespace, str) and namespace else DEFAULT_NAMESPACE}/{name}"


def _check(entries: list[_Entry]) -> tuple[list[_Entry], list[ClusterFileProblem]]:
    """The entries that are valid objects (first of duplicates), and the problems."""
    problems: list[ClusterFileProblem] = []
    valid: list[_Entry] = []
    seen: dict[tuple[str, str], _Entry] = {}
    global_default: PriorityClassSpec | None = None
    for entry in entries:
        obj = entry.obj
        if not isinstance(obj, dict):
            actual = value_kind(obj)
            problems.append(entry.problem(messages.DOCUMENT_NOT_MAPPING.format(actual=actual)))
            continue
        kind = obj.get("kind")
        if not isinstance(kind, str) or not kind:
            problems.append(
                entry.problem(messages.DOCUMENT_NO_KIND.format(expected=_EXPECTED_KINDS))
            )
            continue
        name = _display_name(kind, obj)
        if kind not in API_VERSIONS or kind == LIST:
            message = messages.DOCUMENT_UNKNOWN_KIND.format(kind=kind, expected=_EXPECTED_KINDS)
            problems.append(entry.problem(message, kind, name))
            continue
        api_version = obj.get("apiVersion")
        if api_version is not None and api_version != API_VERSIONS[kind]:
            message = messages.DOCUMENT_WRONG_API_VERSION.format(
                kind=kind, expected=API_VERSIONS[kind], actual=api_version
            )
            problems.append(entry.problem(message, kind, name))
            continue
        try:
            creation_timestamp(obj)
            spec = _validate(kind, obj)
        except ObjectError as e:
            problems.append(entry.problem(str(e), kind, name))
            continue
        assert name is not None  # _validate checked metadata.name
        first = seen.get((kind, name))
        if first is not None:
            message = messages.DUPLICATE_OBJECT.format(
                kind=kind, name=name, first=first.problem("").where
            )
            problems.append(entry.problem(message, kind, name))
            continue
        if isinstance(spec, PriorityClassSpec) and spec.global_default:
            if global_default is not None:
                reason = messages.MULTIPLE_GLOBAL_DEFAULTS.format(other=global_default.name)
                problems.append(entry.problem(f"globalDefault: {reason}", kind, name))
                continue
            global_default = spec
        seen[(kind, name)] = entry
        valid.append(entry)
    return valid, problems


def _validate(kind: str, obj: dict[str, Any]) -> PriorityClassSpec | None:
    if kind == POD:
        pod_info(obj)
        pod_volumes(obj)
    elif kind == NODE:
        node_view(obj)
    elif kind == POD_GROUP:
        pod_group_spec(obj)
    elif kind == NAMESPACE:
        namespace_info(obj)
    elif kind == PRIORITY_CLASS:
        return priority_class_spec(obj)
    elif kind == POD_DISRUPTION_BUDGET:
        disruption_budget(obj)
    elif kind in STORAGE_PARSERS:
        STORAGE_PARSERS[kind](obj)
    else:
        workload(kind, obj)
    return None


def _complete(entries: list[_Entry]) -> list[ClusterFileProblem]:
    """Resolve pods' priorities and give pods without a creation time the latest one."""
    classes = {
        spec.name: spec
        for spec in (priority_class_spec(e.obj) for e in entries if e.obj["kind"] == PRIORITY_CLASS)
    }
    latest = format_timestamp(start_time(e.obj for e in entries))
    problems = []
    for entry in entries:
        obj = entry.obj
        if obj["kind"] != POD:
            continue
        try:
            admit_priority(obj, classes)
        except ObjectError as e:
            problems.append(entry.problem(str(e), POD, _display_name(POD, obj)))
        if creation_timestamp(obj) is None:
            obj.setdefault("metadata", {})["creationTimestamp"] = latest
    return problems
