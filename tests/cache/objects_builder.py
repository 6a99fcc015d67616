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
