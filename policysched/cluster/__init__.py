"""Cluster backends. This package exports the contract the engine schedules through: the
``Backend`` protocol, its events and errors, and clocks. Implementations are imported from
their modules: ``policysched.cluster.memory`` (``MemoryBackend``, the in-process cluster)
and ``policysched.cluster.cluster_file`` (clusters written as manifests).

(Implementations use ``policysched.cache``, which uses this package's ``messages``; keeping
them out of this module keeps imports free of cycles.)
"""

from __future__ import annotations

from .backend import (
    Backend,
    BackendError,
    BindError,
    BindOutcome,
    BindRequest,
    ClusterEvent,
    ConditionStatus,
    EventKind,
    EventType,
    Resource,
    run_bind,
)
from .clock import Clock, RealClock, SimulatedClock

__all__ = [
    "Backend",
    "BackendError",
    "BindError",
    "BindOutcome",
    "BindRequest",
    "Clock",
    "ClusterEvent",
    "ConditionStatus",
    "EventKind",
    "EventType",
    "RealClock",
    "Resource",
    "SimulatedClock",
    "run_bind",
]
