"""Queueing hints: which cluster events move which unschedulable pods (kube-scheduler's
EventsToRegister and queueing hints of the default plugins, derived here from what the
rejecting rules read)."""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.commands.simulate import simulate
from policysched.framework.queue import BACKOFF, UNSCHEDULABLE
from policysched.framework.scheduler import Scheduler
from policysched.model.events import ClusterEvent

from ..cache.objects_builder import make_namespace, make_node, make_pod
from . import engine_with, run, start_at

START = 1_800_000_000.0


def pod(name: str, cpu: str = "1", node: str | None = None, **spec: Any) -> dict[str, Any]:
    return make_pod(name, cpu=cpu, node=node, schedulerName="policysched", **spec)


def start(*objects: dict[str, Any], tmp_path: Path | None = None, policy: str = ""
          ) -> tuple[Scheduler, MemoryBackend]:
    engine = engine_with(tmp_path, policy) if tmp_path else load_engine([], None)
    return start_at(START, engine, *objects)


def place(scheduler: Scheduler, name: str) -> str:
    """Where the pod is after the cluster's pending events are applied."""
    scheduler.sync()
    qp = scheduler.queue.get(f"default/{name}")
    assert qp is not None
    return qp.queue


def relabelled(obj: dict[str, Any], **labels: str) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    changed["metadata"].setdefault("labels", {}).update(labels)
    return changed


def test_a_pod_rejected_by_node_affinity_waits_for_node_labels_not_for_pods() -> None:
    node = make_node("n1")
    scheduler, backend = start(node, pod("other", node="n1"),
                               pod("ssd", nodeSelector={"disktype": "ssd"}))
    qp = scheduler.queue.get("default/ssd")
    assert qp is not None and qp.queue == UNSCHEDULABLE
    assert qp.unschedulable_by == {"node-affinity/node-selector-and-affinity"}
    backend.delete_object("Pod", "other", "default")
    assert place(scheduler, "ssd") == UNSCHEDULABLE  # a pod deleted: no help
    backend.add_object(pod("new", cpu="100"))  # a pending pod added: no help
    assert place(scheduler, "ssd") == UNSCHEDULABLE
    backend.update_object(relabelled(node, zone="a"))  # a label, but not the one
    assert place(scheduler, "ssd") == BACKOFF  # node labels changed: tried again
    scheduler.clock.advance_to(START + 10)  # type: ignore[attr-defined]
    scheduler.advance()
    run(scheduler)
    assert place(scheduler, "ssd") == UNSCHEDULABLE  # and rejected again
    backend.update_object(relabelled(node, zone="a", disktype="ssd"))
    assert place(scheduler, "ssd") == BACKOFF
    scheduler.clock.advance_to(START + 30)  # type: ignore[attr-defined]
    scheduler.advance()
    run(scheduler)
    assert {b.pod: b.node for b in backend.bindings}["default/ssd"] == "n1"


def test_a_pod_rejected_for_resources_waits_for_a_pod_to_go_not_for_labels() -> None:
    node = make_node("n1", cpu="2")
    scheduler, backend = start(node, pod("filler", cpu="2", node="n1"), pod("late"))
    qp = scheduler.queue.get("default/late")
    assert qp is not None and qp.unschedulable_by == {"node-resources-fit/fits-request"}
    backend.update_object(relabelled(node, zone="a"))
    assert place(scheduler, "late") == UNSCHEDULABLE  # labels: no help
    backend.add_object(pod("bound", cpu="0", node="n1"))  # more room taken: no help now...
    assert place(scheduler, "late") == UNSCHEDULABLE
    # ...but its 5-minute flush counts again (the room it reads changed)
    assert scheduler.queue.next_helpful_flush() is not None
    backend.delete_object("Pod", "filler", "default")
    assert place(scheduler, "late") == BACKOFF  # room given back: tried again


def test_a_node_added_moves_a_pod_a_node_filter_rejected() -> None:
    scheduler, backend = start(make_node("n1"), pod("ssd", nodeSelector={"disktype": "ssd"}))
    backend.add_object(relabelled(make_node("n2"), disktype="ssd"))
    assert place(scheduler, "ssd") == BACKOFF


def test_a_pod_rejected_by_pod_affinity_waits_for_pods() -> None:
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}},
         "topologyKey": "kubernetes.io/hostname"}]}}
    node = relabelled(make_node("n1"), **{"kubernetes.io/hostname": "n1"})
    scheduler, backend = start(node, pod("web", affinity=affinity))
    assert place(scheduler, "web") == UNSCHEDULABLE
    backend.update_object(relabelled(node, zone="a"))
    assert place(scheduler, "web") == BACKOFF  # its terms read node labels too
    scheduler.clock.advance_to(START + 10)  # type: ignore[attr-defined]
    scheduler.advance()
    run(scheduler)
    assert place(scheduler, "web") == UNSCHEDULABLE
    db = make_pod("db", cpu="1", node="n1", labels={"app": "db"})
    backend.add_object(db)  # a pod bound that its terms select
    assert place(scheduler, "web") == BACKOFF


UNKNOWN = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: whole}
spec:
  filter:
  - name: node-as-a-whole
    expression: "cel.bind(n, node, n.labels[?'ok'].orValue('') == 'yes')"
"""


@pytest.mark.parametrize("event", ["pod deleted", "pod added", "node labelled",
                                   "node annotated", "namespace labelled"])
def test_a_rule_whose_reads_are_not_known_is_moved_by_every_event(
        tmp_path: Path, event: str) -> None:
    node = make_node("n1")
    scheduler, backend = start(node, make_namespace("team"), pod("other", node="n1"),
                               pod("p"), tmp_path=tmp_path, policy=UNKNOWN)
    qp = scheduler.queue.get("default/p")
    assert qp is not None and qp.unschedulable_by == {"whole/node-as-a-whole"}
    if event == "pod deleted":
        backend.delete_object("Pod", "other", "default")
    elif event == "pod added":
        backend.add_object(pod("q", cpu="100"))
    elif event == "node labelled":
        backend.update_object(relabelled(node, zone="a"))
    elif event == "node annotated":
        backend.update_object({**node, "metadata": {"name": "n1", "annotations": {"a": "b"}}})
    else:
        backend.update_object(relabelled(make_namespace("team"), env="prod"))
    assert place(scheduler, "p") == BACKOFF


def test_a_bind_only_counts_for_a_rule_whose_reads_are_not_known(tmp_path: Path) -> None:
    """Binds are the most frequent event: as before queueing hints, they move no pod
    whose rules are not known to count pods, but its 5-minute flush then counts."""
    scheduler, backend = start(make_node("n1"), pod("p"), tmp_path=tmp_path, policy=UNKNOWN)
    assert scheduler.queue.next_helpful_flush() is None
    backend.add_object(pod("elsewhere", node="n1"))
    assert place(scheduler, "p") == UNSCHEDULABLE
    assert scheduler.queue.next_helpful_flush() == START + 300


def test_a_node_update_that_changes_nothing_moves_nothing(tmp_path: Path) -> None:
    node = make_node("n1")
    scheduler, backend = start(node, pod("p"), tmp_path=tmp_path, policy=UNKNOWN)
    backend.update_object(copy.deepcopy(node))  # a new resourceVersion only
    assert place(scheduler, "p") == UNSCHEDULABLE


def test_the_room_a_released_gang_held_moves_only_the_pods_room_may_help() -> None:
    """kube's handleBindingCycleError is an AssignedPodDelete: with queueing hints it
    moves the pods tried while the room was held that a pod's deletion may help."""
    group = "scheduling.x-k8s.io/pod-group"
    gang = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": "train", "namespace": "default"},
            "spec": {"minMember": 3, "scheduleTimeoutSeconds": 3}}
    members = [make_pod(f"train-{i}", cpu=cpu, labels={group: "train"},
                        schedulerName="policysched") for i, cpu in enumerate(("1", "1", "64"))]
    scheduler, backend = start(make_node("n1", cpu="2"), gang, *members, pod("held", cpu="2"),
                               pod("ssd", nodeSelector={"disktype": "ssd"}))
    assert len(scheduler.waiting) == 2
    assert place(scheduler, "ssd") == UNSCHEDULABLE
    scheduler.clock.advance_to(START + 3)  # type: ignore[attr-defined]
    scheduler.advance()  # the gang times out: its room is released
    assert place(scheduler, "held") != UNSCHEDULABLE
    assert place(scheduler, "ssd") == UNSCHEDULABLE  # room on nodes cannot help it
    run(scheduler)
    assert {b.pod: b.node for b in backend.bindings} == {"default/held": "n1"}

# -- what a deleted pod leaves behind (nothing) ----------------------------------------------

RECORDS_START = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.UTC).timestamp()


def served_pod(name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
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
        RECORDS_START, load_engine([], None), make_node("node-0", cpu="2"),
        served_pod("bound"), served_pod("too-big", cpu="8"),
        served_pod("other", schedulerName="someone-else"))
    # a pod the cache cannot read (only a real API server's watch can bring one)
    malformed = served_pod("malformed")
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
        RECORDS_START, load_engine([], None), make_node("node-0", cpu="2"),
        served_pod("low", cpu="2", priority=0))
    backend.add_object(served_pod("high", cpu="2", priority=100))
    run(scheduler)
    assert scheduler.records["default/high"].victims == ["default/low"]
    assert "default/low" not in scheduler.records  # the victim was deleted

    backend.delete_object("Pod", "high")
    run(scheduler)

    assert not any(per_pod_state(scheduler).values()), per_pod_state(scheduler)


def test_simulate_still_reports_a_pod_it_scheduled_and_a_later_pod_evicted() -> None:
    engine = load_engine([], None)
    simulation = simulate([make_node("node-0", cpu="2"),
                           served_pod("low", cpu="2", priority=0)],
                          engine.frameworks, engine.settings, RECORDS_START)
    assert simulation.pod("default/low").node == "node-0"  # type: ignore[union-attr]
    backend, scheduler = simulation.backend, simulation.scheduler
    backend.add_object(served_pod("high", cpu="2", priority=100))
    run(scheduler)
    assert scheduler.records["default/high"].victims == ["default/low"]
    assert scheduler.records["default/low"].node == "node-0"  # kept: simulate reports it


def test_a_pod_recreated_under_the_same_name_starts_a_new_record() -> None:
    scheduler, backend = start_at(RECORDS_START, load_engine([], None),
                                  make_node("node-0", cpu="2"), served_pod("web", cpu="8"))
    assert scheduler.records["default/web"].attempts == 1
    backend.delete_object("Pod", "web")
    run(scheduler)
    backend.clock.advance(600)  # type: ignore[attr-defined]
    backend.add_object(served_pod("web"))
    run(scheduler)
    record = scheduler.records["default/web"]
    # its attempts and its time in the queue (the scheduling SLI) are the new pod's own
    assert (record.attempts, record.node) == (1, "node-0")
    assert record.first_seen == RECORDS_START + 600
