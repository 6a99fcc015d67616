"""Cluster events: one change of one object, as a watch reports it, and the literal types
of the API's event and condition fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

EventKind = Literal["ADDED", "MODIFIED", "DELETED"]
Resource = Literal["Node", "Pod", "PodGroup", "Namespace", "Service", "ReplicationController",
                   "ReplicaSet", "StatefulSet", "PodDisruptionBudget",
                   "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
                   "CSIDriver"]
EventType = Literal["Normal", "Warning"]
ConditionStatus = Literal["True", "False", "Unknown"]

@dataclass(frozen=True)
class ClusterEvent:
    """One change of one object, as a watch reports it. ``obj`` is the object after the
    change (for DELETED: its last state); it belongs to the receiver."""

    kind: EventKind
    resource: Resource
    obj: dict[str, Any]
