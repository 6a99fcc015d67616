"""A scheduling cycle leaves no reference cycles: the service paces full collections
(service/collector.py), so cyclic garbage would pile up between two of them; what a cycle
allocates must be freed by reference counting alone. Each case runs the default profile on
the in-memory cluster with ``gc.DEBUG_SAVEALL`` (what a collection finds unreachable is kept
in ``gc.garbage`` instead of freed) after a warm-up of the same work."""

from __future__ import annotations

import dataclasses
import gc
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.profiles import Engine
from policysched.framework.runtime import CycleState
from policysched.framework.scheduler import SCALAR, VECTORISED, Scheduler
from policysched.model.clock import SimulatedClock
from policysched.model.objects import format_timestamp, pod_info

PROFILE = "policysched"
START = 1_800_000_000
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


@cache
def engine() -> Engine:
    return load_engine([], None)


def node(name: str, zone: str, cpu: str = "4") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {ZONE: zone, HOSTNAME: name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str = "100m", priority: int = 0, labels: Mapping[str, str] = {},
        on: str = "", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"schedulerName": PROFILE, "priority": priority, "containers": [
        {"name": "c", "image": "app", "resources": {"requests": {"cpu": cpu}}}], **spec}
    status: dict[str, Any] = {}
    if on:
        body["nodeName"], status["phase"] = on, "Running"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": dict(labels),
                         "creationTimestamp": format_timestamp(START - 60)},
            "spec": body, "status": status}


def spreading(name: str) -> dict[str, Any]:
    return pod(name, labels={"color": "blue"}, topologySpreadConstraints=[{
        "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"color": "blue"}}}])


def anti_affine(name: str, color: str) -> dict[str, Any]:
    return pod(name, labels={"color": color}, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"color": color}},
            "topologyKey": HOSTNAME}]}})


def cluster(evaluation: str = VECTORISED) -> tuple[Scheduler, MemoryBackend]:
    """Three nodes in two zones."""
    objects = [node("n1", "a"), node("n2", "a"), node("n3", "b")]
    backend = MemoryBackend(objects, SimulatedClock(START))
    settings = dataclasses.replace(engine().settings, evaluation=evaluation)
    scheduler = Scheduler(backend, engine().frameworks, settings)
    scheduler.sync()
    return scheduler, backend


def run(scheduler: Scheduler) -> None:
    """Schedule until the queue has nothing due."""
    scheduler.sync()
    while scheduler.schedule_one():
        scheduler.sync()


def bound(backend: MemoryBackend, name: str) -> bool:
    found = backend.pod(f"default/{name}")
    return found is not None and bool(found["spec"].get("nodeName"))


def basic(scheduler: Scheduler, backend: MemoryBackend, round: int) -> None:
    names = [f"basic-{round}-{i}" for i in range(3)]
    for name in names:
        backend.add_object(pod(name))
    run(scheduler)
    assert all(bound(backend, name) for name in names)


def spread(scheduler: Scheduler, backend: MemoryBackend, round: int) -> None:
    names = [f"blue-{round}-{i}" for i in range(3)]
    for name in names:
        backend.add_object(spreading(name))
    run(scheduler)
    assert all(bound(backend, name) for name in names)


def anti_affinity(scheduler: Scheduler, backend: MemoryBackend, round: int) -> None:
    """Three pods of a color on three nodes, one per node: the fourth finds none."""
    names = [f"green-{round}-{i}" for i in range(4)]
    for name in names:
        backend.add_object(anti_affine(name, f"green-{round}"))
    run(scheduler)
    assert [bound(backend, name) for name in names] == [True, True, True, False]


def unschedulable(scheduler: Scheduler, backend: MemoryBackend, round: int) -> None:
    backend.add_object(pod(f"huge-{round}", cpu="64"))
    run(scheduler)
    assert backend.events[-1].reason == "FailedScheduling"


def rule_error(scheduler: Scheduler, backend: MemoryBackend, round: int) -> None:
    """Selectors the policies' functions reject: a CEL error for the pod (kept in the
    cycle's parts and the node table's columns, raised again where read)."""
    bogus = {"matchExpressions": [{"key": "color", "operator": "Bogus"}]}
    anti, spreads = anti_affine(f"bad-anti-{round}", "red"), spreading(f"bad-spread-{round}")
    anti["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"] = bogus
    spreads["spec"]["topologySpreadConstraints"][0]["labelSelector"] = bogus
    backend.add_object(anti)
    backend.add_object(spreads)
    run(scheduler)
    assert [(e.reason, "Bogus" in e.message) for e in backend.events[-2:]] == [
        ("FailedScheduling", True)] * 2


def preemption(scheduler: Scheduler, backend: MemoryBackend, round: int) -> None:
    """A high-priority pod that fits on a full node once a low-priority pod is evicted."""
    full = f"full-{round}"
    backend.add_object(node(full, "b", cpu="1"))
    for i in range(2):
        backend.add_object(pod(f"low-{round}-{i}", cpu="500m", on=full))
    backend.add_object(pod(f"high-{round}", cpu="500m", priority=1000,
                           nodeSelector={HOSTNAME: full}))
    run(scheduler)
    assert [e.node for e in backend.evictions][round:] == [full]


def events(scheduler: Scheduler, backend: MemoryBackend, round: int) -> None:
    """Pods bound, then deleted; a node's labels updated: the cache and the queue take the
    events."""
    names = [f"gone-{round}-{i}" for i in range(2)]
    for name in names:
        backend.add_object(pod(name))
    run(scheduler)
    for name in names:
        backend.delete_object("Pod", name)
    updated = backend.get("Node", "n1")
    assert updated is not None
    updated["metadata"]["labels"]["round"] = str(round)
    backend.update_object(updated)
    run(scheduler)


Case = Callable[[Scheduler, MemoryBackend, int], None]
CASES: dict[str, Case] = {c.__name__: c for c in (
    basic, spread, anti_affinity, unschedulable, rule_error, preemption, events)}


@contextmanager
def saved_garbage() -> Iterator[list[Any]]:
    """What the collector finds unreachable while the block runs (kept, not freed)."""
    gc.collect()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    found: list[Any] = []
    try:
        yield found
        gc.collect()
        found += gc.garbage
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()


def ours(obj: Any) -> bool:
    """Whether ``obj`` is policysched's: an instance of its classes, or its function or
    method."""
    function = getattr(obj, "__func__", obj)
    module = getattr(function, "__module__", None) if callable(function) else None
    return f"{type(obj).__module__}.".startswith("policysched.") or \
        f"{module}.".startswith("policysched.")


def described(obj: Any) -> str:
    return getattr(obj, "__qualname__", None) or type(obj).__qualname__


@pytest.mark.parametrize("evaluation", [VECTORISED, SCALAR])
@pytest.mark.parametrize("case", CASES)
def test_a_cycle_leaves_no_reference_cycles(case: str, evaluation: str) -> None:
    scheduler, backend = cluster(evaluation)
    for round in range(2):  # the first run fills what is kept between cycles
        CASES[case](scheduler, backend, round)
    with saved_garbage() as garbage:
        CASES[case](scheduler, backend, 2)
    assert Counter(described(o) for o in garbage if ours(o)) == Counter()


def test_saved_garbage_sees_a_reference_cycle() -> None:
    """The check itself: a cycle of policysched objects is found."""
    with saved_garbage() as garbage:
        state = CycleState(pod_info(pod("p")), 0, list, list)
        state.parts["itself"] = state
        del state
    # (the pod's SpecParts live on: kept for its template, model.objects)
    assert Counter(described(o) for o in garbage if ours(o)) == {"CycleState": 1, "PodInfo": 1}
