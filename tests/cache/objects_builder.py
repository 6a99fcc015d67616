"""Small builders of API objects (plain dicts) for cache and cluster tests."""

from __future__ import annotations

from typing import Any


def make_pod(
    name: str,
    *,
    namespace: str = "default",
    cpu: str | None = None,
    memory: str | None = None,
    node: str | None = None,
    host_port: int | None = None,
    labels: dict[str, str] | None = None,
    uid: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: dict[str, Any] = {"name": "c", "image": "nginx"}
    if requests:
        container["resources"] = {"requests": requests}
    if host_port is not None:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    if uid:
        metadata["uid"] = uid
    pod_spec: dict[str, Any] = {"containers": [container], **spec}
    if node:
        pod_spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}


def make_node(
    name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110", **extra: str
) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **extra}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }


def make_namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": labels}}


def make_service(name: str, selector: dict[str, str] | None, *,
                 namespace: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {"ports": [{"port": 80}]}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def make_controller(kind: str, name: str, selector: Any, *,
                    namespace: str = "default") -> dict[str, Any]:
    """A ReplicationController (``selector``: a label map), ReplicaSet or StatefulSet
    (``selector``: a LabelSelector)."""
    api_version = "v1" if kind == "ReplicationController" else "apps/v1"
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 1, "selector": selector}, "status": {"replicas": 0}}


def controlled_by(pod: dict[str, Any], kind: str, name: str,
                  api_version: str | None = None, controller: bool = True) -> dict[str, Any]:
    """``pod`` with an ownerReference to its controller ``kind``/``name``."""
    if api_version is None:
        api_version = "v1" if kind == "ReplicationController" else "apps/v1"
    pod["metadata"].setdefault("ownerReferences", []).append(
        {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"{name}-uid",
         "controller": controller})
    return pod
