"""The cluster cache: API objects converted into what the engine and CEL need
(``PodInfo``, node views), per-node aggregates (``NodeInfo``), assumed pods, and the
per-cycle ``Snapshot``.

Typical use by the engine::

    for event in backend.drain_events():
        cache.apply(event)
    snapshot = cache.snapshot()          # nodes, node(name), pod_views(), node_views()
    assumed = cache.assume(pod, node)    # counted before the bind returns
    backend.bind(assumed, node)          # on BindError: cache.forget(assumed)
    cache.finish_binding(assumed)
"""

from __future__ import annotations

from ..model.objects import (
    POD_GROUP_LABEL,
    ObjectError,
    PodGroupSpec,
    PodInfo,
    PriorityClassSpec,
    format_timestamp,
    node_view,
    parse_timestamp,
    pod_info,
)
from .cache import Cache, CacheChange, CacheError, Snapshot
from .node_info import NodeInfo

__all__ = [
    "POD_GROUP_LABEL",
    "Cache",
    "CacheChange",
    "CacheError",
    "NodeInfo",
    "ObjectError",
    "PodGroupSpec",
    "PodInfo",
    "PriorityClassSpec",
    "Snapshot",
    "format_timestamp",
    "node_view",
    "parse_timestamp",
    "pod_info",
]
