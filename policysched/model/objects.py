"""API objects (plain JSON dicts, as the API server returns them) → what the engine and CEL
need: ``PodInfo`` with its CEL ``pod`` view, the CEL ``node`` view, ``PodGroupSpec``.

Views carry exactly the fields declared in ``policysched.policy.variables.OBJECT_TYPES``,
every one present: a missing API field takes its Kubernetes default (a pod without labels
has ``labels == {}``). Quantities become ints: cpu in millicores, everything else in base
units rounded up (as ``Quantity.MilliValue()`` / ``Quantity.Value()``), saturated at the int64
maximum, as are the pod's summed requests and limits (``model.resources``): no amount in a
view leaves int64.

A malformed object raises ``ObjectError`` naming the field
(``spec.containers[0].resources.requests.cpu``). The raw ``metadata``/``spec``/``status`` in
a view are the object's own dicts: views are read-only.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import orjson

from ..cel.library.quantity import is_negative_quantity, quantity_int
from . import messages, resources
from .resources import CPU, NON_ZERO_DEFAULTS, ContainerResources, PodResources, Resources

PODS = "pods"
DEFAULT_NAMESPACE = "default"
DEFAULT_SCHEDULER = "default-scheduler"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
PROTOCOLS = ("TCP", "UDP", "SCTP")
TERMINATED_PHASES = frozenset({"Succeeded", "Failed"})
# the condition kube-scheduler's preemption puts on a victim before deleting it
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort)


class ObjectError(ValueError):
    """A malformed API object: ``field`` is the path of the bad field
    (``spec.containers[0].resources.requests.cpu``), ``reason`` what is wrong with it."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


# --------------------------------------------------------------------------- field paths

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


@lru_cache(maxsize=4096)
def child_path(path: str, key: str | int) -> str:
    """``path`` extended by a key or index: ``spec.containers[0]``,
    ``metadata.labels["app.kubernetes.io/name"]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{path}["{escaped}"]'


def value_kind(value: Any) -> str:
    """How messages name the JSON type of ``value``: "a string", "a list"…"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _wrong_type(path: str, expected: str, value: Any) -> ObjectError:
    actual = value_kind(value)
    return ObjectError(path, messages.WRONG_TYPE.format(expected=expected, actual=actual))


def _as_map(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _wrong_type(path, "a mapping", value)
    return value


def _get_map(parent: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = parent.get(key)
    if type(value) is dict:
        return value
    return _as_map(value, child_path(path, key))


def _get_list(parent: dict[str, Any], key: str, path: str) -> list[Any]:
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _wrong_type(child_path(path, key), "a list", value)
    return value


def _get_str(parent: dict[str, Any], key: str, path: str, default: str = "") -> str:
    value = parent.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _wrong_type(child_path(path, key), "a string", value)
    return value


def _required_str(parent: dict[str, Any], key: str, path: str) -> str:
    value = _get_str(parent, key, path)
    if not value:
        reason = messages.FIELD_REQUIRED if parent.get(key) is None else messages.FIELD_EMPTY
        raise ObjectError(child_path(path, key), reason)
    return value


def _get_int(parent: dict[str, Any], key: str, path: str, default: int = 0) -> int:
    value = parent.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(child_path(path, key), "an integer", value)
    return value


def _get_bool(parent: dict[str, Any], key: str, path: str, default: bool = False) -> bool:
    value = parent.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _wrong_type(child_path(path, key), "a boolean", value)
    return value


def _get_string_map(parent: dict[str, Any], key: str, path: str) -> dict[str, str]:
    value = _get_map(parent, key, path)
    for k, v in value.items():
        if type(v) is not str:
            raise _wrong_type(child_path(child_path(path, key), k), "a string", v)
    return value


def _get_maps(parent: dict[str, Any], key: str, path: str) -> list[tuple[str, dict[str, Any]]]:
    """The items of a list of mappings, each with its path."""
    here = child_path(path, key)
    out = []
    for i, item in enumerate(_get_list(parent, key, path)):
        item_path = child_path(here, i)
        if not isinstance(item, dict):
            raise _wrong_type(item_path, "a mapping", item)
        out.append((item_path, item))
    return out


# --------------------------------------------------------------------------- timestamps

_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
)


def parse_timestamp(text: str) -> int:
    """Unix seconds (fractions dropped) of an RFC 3339 time such as
    ``2024-01-01T00:00:00Z``; raises ``ValueError``."""
    if not _RFC3339.match(text):
        raise ValueError(messages.BAD_TIMESTAMP.format(value=text))
    normalized = text[:-1] + "+00:00" if text[-1] in "Zz" else text
    try:
        parsed = datetime.fromisoformat(normalized.replace("t", "T"))
    except ValueError:
        raise ValueError(messages.BAD_TIMESTAMP.format(value=text)) from None
    return math.floor(parsed.timestamp())


def format_timestamp(seconds: float) -> str:
    """RFC 3339 in UTC with whole seconds, as Kubernetes writes ``metav1.Time``."""
    return _format_whole_seconds(math.floor(seconds))


@lru_cache(maxsize=64)  # the writes of one second share their timestamp
def _format_whole_seconds(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _get_timestamp(parent: dict[str, Any], key: str, path: str) -> int | None:
    text = _get_str(parent, key, path)
    if not text:
        return None
    try:
        return parse_timestamp(text)
    except ValueError as e:
        raise ObjectError(child_path(path, key), str(e)) from None


def creation_timestamp(obj: dict[str, Any]) -> int | None:
    """``metadata.creationTimestamp`` in Unix seconds, None when unset;
    raises ``ObjectError``."""
    metadata = _get_map(_as_map(obj, ""), "metadata", "")
    return _get_timestamp(metadata, "creationTimestamp", "metadata")


# --------------------------------------------------------------------------- resources


@lru_cache(maxsize=4096)
def _amount(is_cpu: bool, quantity: str | int | float) -> int:
    """The amount of one quantity, or ``ValueError`` with the reason (cached: clusters
    repeat the same few quantities). Never beyond int64 (see ``quantity_int``)."""
    if is_negative_quantity(quantity):  # the API server refuses them (even "-0.5m")
        raise ValueError(messages.NEGATIVE_QUANTITY.format(value=quantity))
    return quantity_int(quantity, milli=is_cpu)


def resource_amount(name: str, quantity: Any, path: str) -> int:
    """One quantity as the cache counts it: cpu in millicores, others in base units
    rounded up. ``path`` names the field in the ``ObjectError`` raised for a bad one."""
    if type(quantity) not in (str, int, float):
        raise _wrong_type(path, "a quantity (string or number)", quantity)
    try:
        return _amount(name == CPU, quantity)
    except ValueError as e:
        raise ObjectError(path, messages.BAD_QUANTITY.format(reason=e)) from None


def _get_resources(parent: dict[str, Any], key: str, path: str) -> Resources:
    quantities = _get_map(parent, key, path)
    if not quantities:
        return {}
    out = {}
    for name, quantity in quantities.items():
        if type(quantity) in (str, int, float):
            try:
                out[name] = _amount(name == CPU, quantity)
                continue
            except ValueError:
                pass
        resource_amount(name, quantity, child_path(child_path(path, key), name))  # raises
    return out


def _container_resources(container: dict[str, Any], path: str,
                         sidecar: bool = False) -> ContainerResources:
    """One container's requests and limits; a request defaults to its limit (API
    defaulting)."""
    resources = _get_map(container, "resources", path)
    here = child_path(path, "resources")
    limits = _get_resources(resources, "limits", here)
    requests = _get_resources(resources, "requests", here)
    return ContainerResources({**limits, **requests}, limits, sidecar)


def _is_sidecar(container: dict[str, Any], path: str) -> bool:
    """An init container that runs for the pod's lifetime (``restartPolicy: Always``)."""
    return _get_str(container, "restartPolicy", path) == "Always"


def pod_resources(spec: dict[str, Any], path: str = "spec") -> PodResources:
    """The requests and limits of a pod spec as kube-scheduler counts them
    (``model.resources``)."""
    containers = [_container_resources(c, p) for p, c in _get_maps(spec, "containers", path)]
    inits = [_container_resources(c, p, _is_sidecar(c, p))
             for p, c in _get_maps(spec, "initContainers", path)]
    pod_level = _get_map(spec, "resources", path)
    here = child_path(path, "resources")
    return resources.pod_resources(
        containers, inits, _get_resources(pod_level, "requests", here),
        _get_resources(pod_level, "limits", here), _get_resources(spec, "overhead", path))


# --------------------------------------------------------------------------- pods


@dataclass(frozen=True)
class PodGroupSpec:
    """A ``scheduling.x-k8s.io`` PodGroup: a gang of at least ``min_member`` pods, waiting at
    most ``schedule_timeout_seconds`` (None: the scheduler's default)."""

    key: str
    min_member: int
    schedule_timeout_seconds: int | None = None


@dataclass(eq=False)
class PodInfo:
    """A pod as the engine sees it: the raw object, its CEL ``pod`` view and the values the
    engine reads often. Compared by identity; treat as immutable."""

    key: str  # "namespace/name"
    uid: str
    obj: dict[str, Any]
    view: dict[str, Any]
    name: str
    namespace: str
    scheduler_name: str
    node_name: str  # "" when unbound
    priority: int
    creation: int  # Unix seconds
    requests: Resources
    limits: Resources
    non_zero: Resources  # cpu and memory as a node's NonZeroRequested counts the pod
    host_ports: tuple[HostPort, ...]
    group: str | None  # the pod-group label's value
    nominated_node: str  # status.nominatedNodeName
    deleting: bool  # metadata.deletionTimestamp is set
    terminated: bool  # phase Succeeded or Failed: no longer uses its node
    start_time: int | None = None  # status.startTime (Unix seconds), None before it started
    spec_parts: SpecParts | None = field(default=None, repr=False)  # reused by ``pod_info``

    @property
    def preempted(self) -> bool:
        """Terminating because kube-scheduler's preemption evicted it (kube's
        podTerminatingByPreemption): deleting, with a DisruptionTarget condition True whose
        reason is PreemptionByScheduler."""
        if not self.deleting:
            return False
        for condition in self.view["status"].get("conditions") or ():
            if isinstance(condition, dict) and condition.get("type") == DISRUPTION_TARGET:
                return (condition.get("status") == "True"
                        and condition.get("reason") == PREEMPTION_BY_SCHEDULER)
        return False

    @property
    def group_key(self) -> str | None:
        """"namespace/name" of the pod's PodGroup, None for a pod of no group."""
        return f"{self.namespace}/{self.group}" if self.group else None

    def with_pod_group(self, spec: PodGroupSpec | None) -> PodInfo:
        """A copy whose ``podGroup`` view reflects ``spec`` (None: the PodGroup is gone)."""
        groups = {spec.key: spec} if spec else None
        view = {**self.view, "podGroup": pod_group_view(self.namespace, self.group, groups)}
        return replace(self, view=view)

    def with_node(self, node_name: str) -> PodInfo:
        """A copy bound to ``node_name`` (an assumed pod), sharing everything else."""
        spec = {**self.view["spec"], "nodeName": node_name}
        obj = {**self.obj, "spec": spec}
        view = {**self.view, "spec": spec, "nodeName": node_name}
        return replace(self, obj=obj, view=view, node_name=node_name)


def _ports(spec: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """The ports of the containers that run for the pod's lifetime: its sidecars (init
    containers with restartPolicy Always), then its containers, as kube-scheduler's
    ``GetHostPorts`` lists them; with hostNetwork a port's hostPort defaults to its
    containerPort."""
    host_network = _get_bool(spec, "hostNetwork", path)
    running = [(p, c) for p, c in _get_maps(spec, "initContainers", path) if _is_sidecar(c, p)]
    running += _get_maps(spec, "containers", path)
    ports = []
    for container_path, container in running:
        for port_path, port in _get_maps(container, "ports", container_path):
            container_port = _get_int(port, "containerPort", port_path)
            if not 1 <= container_port <= 65535:
                field = child_path(port_path, "containerPort")
                if port.get("containerPort") is None:
                    raise ObjectError(field, messages.FIELD_REQUIRED)
                raise ObjectError(field, messages.BAD_PORT.format(value=container_port))
            default_host = container_port if host_network else 0
            host_port = _get_int(port, "hostPort", port_path, default_host)
            if not 0 <= host_port <= 65535:
                field = child_path(port_path, "hostPort")
                raise ObjectError(field, messages.BAD_HOST_PORT.format(value=host_port))
            protocol = _get_str(port, "protocol", port_path, "TCP")
            if protocol not in PROTOCOLS:
                field = child_path(port_path, "protocol")
                raise ObjectError(field, messages.BAD_PROTOCOL.format(value=protocol))
            ports.append({
                "containerPort": container_port,
                "hostPort": host_port,
                "protocol": protocol,
                "hostIP": _get_str(port, "hostIP", port_path),
            })
    return ports


def _tolerations(spec: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return [
        {
            "key": _get_str(t, "key", p),
            "operator": _get_str(t, "operator", p, "Equal"),
            "value": _get_str(t, "value", p),
            "effect": _get_str(t, "effect", p),
            "tolerationSeconds": _get_int(t, "tolerationSeconds", p),
        }
        for p, t in _get_maps(spec, "tolerations", path)
    ]


def _owner_references(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": _get_str(r, "apiVersion", p),
            "kind": _get_str(r, "kind", p),
            "name": _get_str(r, "name", p),
            "uid": _get_str(r, "uid", p),
            "controller": _get_bool(r, "controller", p),
        }
        for p, r in _get_maps(metadata, "ownerReferences", "metadata")
    ]


def _object_map(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ObjectError("", messages.OBJECT_NOT_MAPPING.format(actual=value_kind(obj)))
    return obj


def pod_group_view(
    namespace: str, group: str | None, pod_groups: Mapping[str, PodGroupSpec] | None
) -> dict[str, Any]:
    """The CEL ``pod.podGroup`` of a pod of ``namespace`` labelled with ``group``: the
    PodGroup's name, minMember and scheduleTimeoutSeconds (0 while the PodGroup object is
    unknown); name "" for a pod of no group."""
    if not group:
        return {"name": "", "minMember": 0, "scheduleTimeoutSeconds": 0}
    spec = pod_groups.get(f"{namespace}/{group}") if pod_groups else None
    return {
        "name": group,
        "minMember": spec.min_member if spec else 0,
        "scheduleTimeoutSeconds": (spec.schedule_timeout_seconds or 0) if spec else 0,
    }


def pod_info(
    obj: dict[str, Any], pod_groups: Mapping[str, PodGroupSpec] | None = None,
    previous: PodInfo | None = None,
) -> PodInfo:
    """The ``PodInfo`` of a Pod object; ``pod_groups`` (by "namespace/name") fill
    ``podGroup``. ``previous``: the same pod's ``PodInfo`` before this update, whose
    values read from ``spec`` are reused when ``spec`` changed in nothing but ``nodeName``
    (a bind, a status update). Raises ``ObjectError``."""
    obj = _object_map(obj)
    metadata = _get_map(obj, "metadata", "")
    spec = _get_map(obj, "spec", "")
    status = _get_map(obj, "status", "")
    name = _required_str(metadata, "name", "metadata")
    namespace = _get_str(metadata, "namespace", "metadata") or DEFAULT_NAMESPACE
    uid = _get_str(metadata, "uid", "metadata")
    labels = _get_string_map(metadata, "labels", "metadata")
    annotations = _get_string_map(metadata, "annotations", "metadata")
    creation = _get_timestamp(metadata, "creationTimestamp", "metadata") or 0
    node_name = _get_str(spec, "nodeName", "spec")
    if (previous is not None and previous.spec_parts is not None and previous.uid == uid
            and _same_spec(spec, previous.view["spec"])):
        parts = previous.spec_parts
    else:
        parts = _template_parts(spec)
    view = {
        "name": name,
        "namespace": namespace,
        "uid": uid,
        "labels": labels,
        "annotations": annotations,
        "creationTimestamp": creation,
        "priority": parts.priority,
        "requests": parts.amounts.requests,
        "nonZeroRequests": parts.amounts.non_zero_requests,
        "limits": parts.amounts.limits,
        "ports": parts.ports,
        "tolerations": parts.tolerations,
        "nodeSelector": parts.node_selector,
        "affinity": parts.affinity,
        "schedulerName": parts.scheduler_name,
        "nodeName": node_name,
        "ownerReferences": _owner_references(metadata),
        "podGroup": pod_group_view(namespace, labels.get(POD_GROUP_LABEL), pod_groups),
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }
    phase = _get_str(status, "phase", "status")
    return PodInfo(
        key=f"{namespace}/{name}",
        uid=uid,
        obj=obj,
        view=view,
        name=name,
        namespace=namespace,
        scheduler_name=parts.scheduler_name,
        node_name=node_name,
        priority=parts.priority,
        creation=creation,
        requests=parts.amounts.requests,
        limits=parts.amounts.limits,
        non_zero=parts.amounts.counted_non_zero,
        host_ports=parts.host_ports,
        group=labels.get(POD_GROUP_LABEL),
        nominated_node=_get_str(status, "nominatedNodeName", "status"),
        deleting=metadata.get("deletionTimestamp") is not None,
        terminated=phase in TERMINATED_PHASES,
        start_time=_get_timestamp(status, "startTime", "status"),
        spec_parts=parts,
    )


@dataclass(frozen=True, slots=True)
class SpecParts:
    """What ``pod_info`` reads from a pod's ``spec`` besides ``nodeName``."""

    priority: int
    amounts: PodResources
    ports: list[dict[str, Any]]
    host_ports: tuple[HostPort, ...]
    tolerations: list[dict[str, Any]]
    node_selector: dict[str, str]
    affinity: dict[str, Any]
    scheduler_name: str


SPEC_PARTS_KEPT = 512  # pod templates whose SpecParts are remembered (``_template_parts``)
_parts_by_spec: dict[bytes, SpecParts] = {}
_parts_lock = threading.Lock()  # caches of several schedulers (a shadow) parse at once


def _template_parts(spec: dict[str, Any]) -> SpecParts:
    """``_spec_parts``, shared by the pods of one template: the pods of a workload have
    the same spec (but ``nodeName``), parsed once while among the last ``SPEC_PARTS_KEPT``
    specs seen (the spec's JSON, exact, is the key; its parts are never changed)."""
    try:
        key = orjson.dumps({k: v for k, v in spec.items() if k != "nodeName"}
                           if "nodeName" in spec else spec)
    except TypeError:  # not JSON (an object built in-process): parsed each time
        return _spec_parts(spec)
    parts = _parts_by_spec.get(key)
    if parts is None:
        parts = _spec_parts(spec)
        with _parts_lock:
            if len(_parts_by_spec) >= SPEC_PARTS_KEPT:
                del _parts_by_spec[next(iter(_parts_by_spec))]  # the first kept
            _parts_by_spec[key] = parts
    return parts


def _spec_parts(spec: dict[str, Any]) -> SpecParts:
    priority = _get_int(spec, "priority", "spec")
    _get_str(spec, "priorityClassName", "spec")  # checked here, resolved by admission
    ports = _ports(spec, "spec")
    return SpecParts(
        priority=priority,
        amounts=pod_resources(spec),
        ports=ports,
        host_ports=tuple((p["hostIP"], p["protocol"], p["hostPort"])
                         for p in ports if p["hostPort"] > 0),
        tolerations=_tolerations(spec, "spec"),
        node_selector=_get_string_map(spec, "nodeSelector", "spec"),
        affinity=_get_map(spec, "affinity", "spec"),
        scheduler_name=_get_str(spec, "schedulerName", "spec") or DEFAULT_SCHEDULER,
    )


def _same_spec(spec: dict[str, Any], before: dict[str, Any]) -> bool:
    """Whether two pod specs are equal but for ``nodeName``."""
    if spec is before:
        return True
    if len(spec) - ("nodeName" in spec) != len(before) - ("nodeName" in before):
        return False
    return all(k == "nodeName" or before.get(k, _ABSENT) == v for k, v in spec.items())


_ABSENT = object()


def object_name(obj: dict[str, Any]) -> str:
    """``metadata.name``; raises ``ObjectError`` when it is missing."""
    return _required_str(_get_map(_object_map(obj), "metadata", ""), "name", "metadata")


def pod_key(obj: dict[str, Any]) -> str:
    """"namespace/name" of a namespaced object (namespace "default" when unset);
    raises ``ObjectError``."""
    metadata = _get_map(_object_map(obj), "metadata", "")
    name = _required_str(metadata, "name", "metadata")
    return f"{_get_str(metadata, 'namespace', 'metadata') or DEFAULT_NAMESPACE}/{name}"


def pod_group_spec(obj: dict[str, Any]) -> PodGroupSpec:
    """The ``PodGroupSpec`` of a PodGroup object; raises ``ObjectError``."""
    spec = _get_map(_object_map(obj), "spec", "")
    min_member = _get_int(spec, "minMember", "spec", 1)
    if min_member < 1:
        field = child_path("spec", "minMember")
        raise ObjectError(field, messages.BAD_MIN_MEMBER.format(value=min_member))
    timeout: int | None = None
    if spec.get("scheduleTimeoutSeconds") is not None:
        timeout = _get_int(spec, "scheduleTimeoutSeconds", "spec")
        if timeout < 0:
            field = child_path("spec", "scheduleTimeoutSeconds")
            raise ObjectError(field, messages.BAD_TIMEOUT.format(value=timeout))
    return PodGroupSpec(pod_key(obj), min_member, timeout)


@dataclass(frozen=True)
class PriorityClassSpec:
    """A ``scheduling.k8s.io`` PriorityClass: the ``value`` pods naming it get."""

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str | None = None


def priority_class_spec(obj: dict[str, Any]) -> PriorityClassSpec:
    """The ``PriorityClassSpec`` of a PriorityClass object; raises ``ObjectError``."""
    obj = _object_map(obj)
    name = object_name(obj)
    if obj.get("value") is None:
        raise ObjectError("value", messages.FIELD_REQUIRED)
    return PriorityClassSpec(
        name=name,
        value=_get_int(obj, "value", ""),
        global_default=_get_bool(obj, "globalDefault", ""),
        preemption_policy=_get_str(obj, "preemptionPolicy", "") or None,
    )


# --------------------------------------------------------------------------- nodes


def _taints(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "key": _required_str(t, "key", p),
            "value": _get_str(t, "value", p),
            "effect": _required_str(t, "effect", p),
        }
        for p, t in _get_maps(spec, "taints", "spec")
    ]


def _images(status: dict[str, Any]) -> dict[str, int]:
    images: dict[str, int] = {}
    for image_path, image in _get_maps(status, "images", "status"):
        size = _get_int(image, "sizeBytes", image_path)
        names_path = child_path(image_path, "names")
        for i, name in enumerate(_get_list(image, "names", image_path)):
            if not isinstance(name, str):
                raise _wrong_type(child_path(names_path, i), "a string", name)
            images[name] = size
    return images


def node_allocatable(status: dict[str, Any]) -> Resources:
    """``status.allocatable``, or ``status.capacity`` when a node reports no allocatable."""
    if status.get("allocatable") is not None:
        return _get_resources(status, "allocatable", "status")
    return _get_resources(status, "capacity", "status")


def node_view(obj: dict[str, Any]) -> dict[str, Any]:
    """The CEL ``node`` view of a Node object with nothing running on it (``requested`` all
    zero, ``free`` equal to ``allocatable``); raises ``ObjectError``."""
    obj = _object_map(obj)
    metadata = _get_map(obj, "metadata", "")
    spec = _get_map(obj, "spec", "")
    status = _get_map(obj, "status", "")
    allocatable = node_allocatable(status)
    requested = dict.fromkeys(allocatable, 0)
    requested[PODS] = 0
    non_zero = {**requested, **dict.fromkeys(NON_ZERO_DEFAULTS, 0)}
    return {
        "name": _required_str(metadata, "name", "metadata"),
        "labels": _get_string_map(metadata, "labels", "metadata"),
        "annotations": _get_string_map(metadata, "annotations", "metadata"),
        "taints": _taints(spec),
        "unschedulable": _get_bool(spec, "unschedulable", "spec"),
        "allocatable": allocatable,
        "requested": requested,
        "nonZeroRequested": non_zero,
        "free": dict(allocatable),
        "podCount": 0,
        "usedPorts": [],
        "images": _images(status),
        # from the node's CSINode and its pods' volumes (the cache fills them)
        "csiVolumeLimits": {},
        "attachedCSIVolumes": {},
        "csiVolumes": {},
        "usedDisks": [],
        "usedClaims": {},
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }
