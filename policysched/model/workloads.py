"""The cluster objects kube-scheduler reads besides pods and nodes: Namespaces, whose labels
affinity terms' ``namespaceSelector`` select, and the workloads behind kube-scheduler's
``DefaultSelector`` (pkg/scheduler/framework/plugins/helper/spread.go), the selector by which
PodTopologySpread's system default constraints count a pod's siblings.

``default_selector`` follows Kubernetes v1.34, for a pod and the workloads of its own
namespace:

* every Service whose ``spec.selector`` selects the pod (each of its labels is the pod's)
  adds those labels; a Service without a selector selects nothing (an empty one too: the
  API server stores it as none);
* the pod's controller — its first ``ownerReferences`` entry with ``controller: true`` —
  when it is a ReplicationController (``v1``), ReplicaSet or StatefulSet (``apps/v1``) that
  exists: a ReplicationController adds its selector's labels (its value wins over a
  Service's for the same key, as ``labels.Merge``), a ReplicaSet or StatefulSet its label
  selector's requirements. Any other controller, or one not known, adds nothing.

The result is a ``metav1.LabelSelector`` as JSON — ``matchLabels`` (the labels, sorted) and
``matchExpressions`` (the requirements, in canonical order), both always present — or None
when nothing was added (kube-scheduler then gives the pod no default constraints).

Objects are read as the API server would have stored them; a malformed one raises
``ObjectError`` naming the field. A Service's or ReplicationController's selector must be
made of label keys and values; a ReplicationController without one gets its pod template's
labels (the API server's defaulting); a ReplicaSet's or StatefulSet's ``spec.selector`` is
required and must parse (kube-scheduler skips one that does not: the API server never
stores one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import messages
from .objects import (
    ObjectError,
    _get_map,
    _get_string_map,
    _object_map,
    child_path,
    object_name,
    pod_key,
    value_kind,
)
from .selectors import (
    Requirement,
    SelectorError,
    label_key_errors,
    label_selector,
    label_value_errors,
)

NAMESPACE = "Namespace"
SERVICE = "Service"
REPLICATION_CONTROLLER = "ReplicationController"
REPLICA_SET = "ReplicaSet"
STATEFUL_SET = "StatefulSet"
WORKLOAD_KINDS = (SERVICE, REPLICATION_CONTROLLER, REPLICA_SET, STATEFUL_SET)
API_VERSIONS: Mapping[str, str] = {
    NAMESPACE: "v1",
    SERVICE: "v1",
    REPLICATION_CONTROLLER: "v1",
    REPLICA_SET: "apps/v1",
    STATEFUL_SET: "apps/v1",
}
# the controllers DefaultSelector reads: (group, version, kind)
_CONTROLLERS = frozenset({("", "v1", REPLICATION_CONTROLLER), ("apps", "v1", REPLICA_SET),
                          ("apps", "v1", STATEFUL_SET)})

WorkloadKey = tuple[str, str]  # (kind, name), within a namespace


@dataclass(frozen=True)
class NamespaceInfo:
    """A Namespace: its name and labels."""

    name: str
    labels: Mapping[str, str]


@dataclass(frozen=True)
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet as ``DefaultSelector``
    reads it: the labels it adds (a Service's or RC's selector) or the requirements (a
    ReplicaSet's or StatefulSet's label selector)."""

    kind: str
    namespace: str
    name: str
    labels: Mapping[str, str]
    requirements: tuple[Requirement, ...] = ()

    @property
    def key(self) -> WorkloadKey:
        return self.kind, self.name

    def selects(self, labels: Mapping[str, str]) -> bool:
        """Whether this Service selects a pod with ``labels`` (a label set as a selector;
        an empty one selects nothing)."""
        return bool(self.labels) and all(
            labels.get(k) == v for k, v in self.labels.items())


def namespace_info(obj: dict[str, Any]) -> NamespaceInfo:
    """The ``NamespaceInfo`` of a Namespace object; raises ``ObjectError``."""
    metadata = _get_map(_object_map(obj), "metadata", "")
    return NamespaceInfo(object_name(obj), _get_string_map(metadata, "labels", "metadata"))


def _label_set(parent: dict[str, Any], key: str, path: str) -> dict[str, str]:
    """A map of label keys to label values, checked as the API server's ValidateLabels."""
    labels = _get_string_map(parent, key, path)
    here = child_path(path, key)
    for k, v in labels.items():
        if type(k) is not str:  # YAML allows other keys
            raise ObjectError(here, messages.SELECTOR_KEY_NOT_STRING.format(
                actual=value_kind(k)))
        errors = label_key_errors(k)
        if errors:
            raise ObjectError(here, messages.BAD_LABEL_KEY.format(
                key=k, reasons="; ".join(errors)))
        errors = label_value_errors(v)
        if errors:
            raise ObjectError(child_path(here, k), messages.BAD_LABEL_VALUE.format(
                value=v, reasons="; ".join(errors)))
    return labels


def workload(kind: str, obj: dict[str, Any]) -> Workload:
    """The ``Workload`` of an object of ``kind`` (one of ``WORKLOAD_KINDS``); raises
    ``ObjectError``."""
    namespace, _, name = pod_key(obj).partition("/")
    spec = _get_map(obj, "spec", "")
    if kind == SERVICE:
        return Workload(kind, namespace, name, _label_set(spec, "selector", "spec"))
    if kind == REPLICATION_CONTROLLER:
        labels = _label_set(spec, "selector", "spec")
        if not labels:  # defaulted to the pod template's labels
            template = _get_map(spec, "template", "spec")
            path = child_path("spec", "template")
            labels = _label_set(_get_map(template, "metadata", path), "labels",
                                child_path(path, "metadata"))
        return Workload(kind, namespace, name, labels)
    assert kind in (REPLICA_SET, STATEFUL_SET), kind
    path = child_path("spec", "selector")
    if spec.get("selector") is None:
        raise ObjectError(path, messages.FIELD_REQUIRED)
    try:
        selector = label_selector(spec["selector"])
    except SelectorError as e:
        raise ObjectError(path, str(e)) from None
    return Workload(kind, namespace, name, {}, selector.requirements or ())


def _group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: (group, version), None when it does not parse."""
    if api_version in ("", "/"):
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        group, _, version = api_version.partition("/")
        return group, version
    return None


def controller_key(owner_references: Iterable[Mapping[str, Any]]) -> WorkloadKey | None:
    """The (kind, name) of the pod's controller (``metav1.GetControllerOf``) when it is a
    kind ``DefaultSelector`` reads, else None."""
    for ref in owner_references:
        if ref.get("controller") is True:
            group_version = _group_version(ref.get("apiVersion") or "")
            kind, name = ref.get("kind") or "", ref.get("name") or ""
            if group_version is not None and (*group_version, kind) in _CONTROLLERS:
                return kind, name
            return None
    return None


def default_selector(labels: Mapping[str, str], owner_references: Iterable[Mapping[str, Any]],
                     workloads: Mapping[WorkloadKey, Workload]) -> dict[str, Any] | None:
    """kube-scheduler's ``DefaultSelector`` of a pod with ``labels`` and
    ``owner_references`` (its CEL view's), given the workloads of its namespace by key;
    None when it would be empty (see the module's docstring)."""
    match_labels: dict[str, str] = {}
    for found in workloads.values():
        if found.kind == SERVICE and found.selects(labels):
            match_labels.update(found.labels)
    requirements: tuple[Requirement, ...] = ()
    key = controller_key(owner_references)
    controller = workloads.get(key) if key is not None else None
    if controller is not None:
        match_labels.update(controller.labels)
        requirements = controller.requirements
    if not match_labels and not requirements:
        return None
    return {
        "matchLabels": dict(sorted(match_labels.items())),
        "matchExpressions": [{"key": r.key, "operator": r.operator, "values": list(r.values)}
                             for r in requirements],
    }
