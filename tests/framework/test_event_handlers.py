"""Cluster events into the scheduler's state: what a deleted pod leaves behind (nothing)."""

from __future__ import annotations

import datetime
from typing import Any

from policysched.commands.loading import load_engine
from policysched.commands.simulate import simulate
from policysched.framework.scheduler import Scheduler
from policysched.model.events import ClusterEvent

from ..cache.objects_builder import make_node, make_pod
from . import run, start_at

START = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.UTC).timestamp()


def pod(name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    return make_pod(name, cpu=cpu, **{"schedulerName": "policysched", **spec})


def per_pod_state(scheduler: Scheduler) -> dict[str, object]:
    """Everything the scheduler keeps per pod, by name: all empty once every pod is gone."""
    return {
        "records": dict(scheduler.records),
        "unserved": dict(scheduler.unserved),
        "nominated": dict(scheduler.nominated),
        "queued": {name: count for name, count in scheduler.queue.pending().items() if count},
        "in flight": set(scheduler.queue.in_flight()),
        "waiting": dict(scheduler.waiting.pods),
        "binds in flight": set(scheduler.binds_in_flight),
    }


def test_a_deleted_pods_records_are_dropped_whatever_became_of_it() -> None:
    scheduler, backend = start_at(
        START, load_engine([], None), make_node("node-0", cpu="2"),
        pod("bound"), pod("too-big", cpu="8"), pod("other", schedulerName="someone-else"))
    # a pod the cache cannot read (only a real API server's watch can bring one)
    malformed = pod("malformed")
    malformed["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    scheduler.event_handlers.apply(ClusterEvent("ADDED", "Pod", malformed))
    assert set(scheduler.records) == {"default/bound", "default/too-big"}
    assert scheduler.records["default/bound"].node == "node-0"
    assert set(scheduler.unserved) == {"default/other", "default/malformed"}

    for name in ("bound", "too-big", "other"):
        backend.delete_object("Pod", name)
    scheduler.event_handlers.apply(ClusterEvent("DELETED", "Pod", malformed))
    run(scheduler)

    assert not any(per_pod_state(scheduler).values()), per_pod_state(scheduler)


def test_a_preemptors_nomination_and_record_go_with_it() -> None:
    scheduler, backend = start_at(
        START, load_engine([], None), make_node("node-0", cpu="2"),
        pod("low", cpu="2", priority=0))
    backend.add_object(pod("high", cpu="2", priority=100))
    run(scheduler)
    assert scheduler.records["default/high"].victims == ["default/low"]
    assert "default/low" not in scheduler.records  # the victim was deleted

    backend.delete_object("Pod", "high")
    run(scheduler)

    assert not any(per_pod_state(scheduler).values()), per_pod_state(scheduler)


def test_simulate_still_reports_a_pod_it_scheduled_and_a_later_pod_evicted() -> None:
    engine = load_engine([], None)
    simulation = simulate([make_node("node-0", cpu="2"), pod("low", cpu="2", priority=0)],
                          engine.frameworks, engine.settings, START)
    assert simulation.pod("default/low").node == "node-0"  # type: ignore[union-attr]
    backend, scheduler = simulation.backend, simulation.scheduler
    backend.add_object(pod("high", cpu="2", priority=100))
    run(scheduler)
    assert scheduler.records["default/high"].victims == ["default/low"]
    assert scheduler.records["default/low"].node == "node-0"  # kept: simulate reports it


def test_a_pod_recreated_under_the_same_name_starts_a_new_record() -> None:
    scheduler, backend = start_at(START, load_engine([], None), make_node("node-0", cpu="2"),
                                  pod("web", cpu="8"))
    assert scheduler.records["default/web"].attempts == 1
    backend.delete_object("Pod", "web")
    run(scheduler)
    backend.clock.advance(600)  # type: ignore[attr-defined]
    backend.add_object(pod("web"))
    run(scheduler)
    record = scheduler.records["default/web"]
    # its attempts and its time in the queue (the scheduling SLI) are the new pod's own
    assert (record.attempts, record.node) == (1, "node-0")
    assert record.first_seen == START + 600
