"""The binding cycle with binds that end later (``KubeBackend``'s binding threads): the
engine hands a bind over, keeps scheduling, and finishes the cycle when the outcome comes
back — success (postBind, Scheduled) or failure (roll-back, requeue)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.profiles import Engine
from policysched.framework.queue import BACKOFF
from policysched.framework.scheduler import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    AttemptEnd,
    Scheduler,
)
from policysched.model.clock import SimulatedClock

from ..cache.objects_builder import make_node, make_pod
from . import POLICIES_ONLY, DeferredBackend, engine_with

PROFILE = "policysched"
STAMP_POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: stamp
spec:
  preBind:
  - name: node-label
    labels:
      policysched.io/node: node.name
"""


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine([], None)


def pending(name: str) -> dict[str, Any]:
    return make_pod(name, cpu="100m", schedulerName=PROFILE)


def start(engine: Engine, *pods: str, nodes: tuple[str, ...] = ("n1",)
          ) -> tuple[Scheduler, DeferredBackend, list[tuple[str, str, str, float]]]:
    backend = DeferredBackend([make_node(n) for n in nodes] + [pending(p) for p in pods])
    observed: list[tuple[str, str, str, float]] = []
    scheduler = Scheduler(backend, engine.frameworks, engine.settings,
                          observe_extension_point=lambda *a: observed.append(a))
    scheduler.sync()
    return scheduler, backend, observed


def reasons(backend: MemoryBackend) -> list[tuple[str, str, str]]:
    return [(e.pod, e.reason, e.message) for e in backend.events]


def test_the_cycle_ends_when_the_bind_succeeds(engine: Engine) -> None:
    scheduler, backend, observed = start(engine, "p")
    assert scheduler.schedule_one()
    (request,) = backend.started
    pod = scheduler.cache.pod("default/p")
    assert pod is not None and request.node_name == "n1"
    # handed over: assumed on its node, still in flight in the queue, nothing reported
    assert scheduler.binds_in_flight == ["default/p"]
    assert scheduler.cache.is_assumed(pod) and scheduler.cache.counted_node("default/p") == "n1"
    assert scheduler.queue.in_flight() == ["default/p"]
    assert backend.events == [] and backend.bindings == []
    assert not scheduler.schedule_one()  # never popped (or bound) a second time

    backend.finish(request)
    assert scheduler.drain_binds() == 1  # the outcome before the pod's bound event
    assert scheduler.cache.binding_finished(pod)
    assert reasons(backend) == [("default/p", "Scheduled",
                                 "Successfully assigned default/p to n1")]
    assert scheduler.binds_in_flight == [] and scheduler.queue.in_flight() == []
    record = scheduler.records["default/p"]
    assert (record.node, record.message) == ("n1", None)
    scheduler.sync()  # the bound event replaces the assumption
    assert not scheduler.cache.is_assumed(pod)
    assert scheduler.cache.counted_node("default/p") == "n1"
    assert [b.pod for b in backend.bindings] == ["default/p"]
    binds = [(p, s) for profile, p, s, _ in observed if p == "Bind"]
    assert binds == [("Bind", "Success")]


def test_scheduling_goes_on_while_binds_are_in_flight(engine: Engine) -> None:
    scheduler, backend, _ = start(engine, "a", "b", "c", nodes=("n1", "n2"))
    while scheduler.schedule_one():
        pass
    assert sorted(scheduler.binds_in_flight) == ["default/a", "default/b", "default/c"]
    assert len(backend.started) == 3
    for request in reversed(list(backend.started)):  # ending in any order
        backend.finish(request)
    assert scheduler.sync() > 3  # bound events and outcomes
    assert sorted(b.pod for b in backend.bindings) == ["default/a", "default/b", "default/c"]
    assert scheduler.binds_in_flight == [] and len(scheduler.queue) == 0


def test_a_failed_bind_rolls_back_and_requeues(engine: Engine) -> None:
    scheduler, backend, observed = start(engine, "p")
    scheduler.schedule_one()
    (request,) = backend.started
    backend.finish(request, error="etcd timeout")
    scheduler.sync()
    pod = scheduler.cache.pod("default/p")
    assert pod is not None and not scheduler.cache.is_assumed(pod)
    assert scheduler.cache.counted_node("default/p") is None  # the node's room is back
    assert reasons(backend) == [("default/p", "FailedScheduling",
                                 "binding rejected: etcd timeout")]
    condition = backend.conditions[-1]
    assert (condition.status, condition.reason) == ("False", "SchedulerError")
    assert scheduler.queue.pending()[BACKOFF] == 1 and scheduler.binds_in_flight == []
    assert [(p, s, t) for _, p, s, t in observed if p == "Bind"] == [("Bind", "Error", 0.25)]

    # the retry binds it, once
    wakeup = scheduler.next_wakeup()
    assert wakeup is not None
    backend.clock.advance_to(wakeup)  # type: ignore[attr-defined]
    scheduler.advance()
    assert scheduler.schedule_one()
    (retry,) = backend.started
    assert retry is not request
    backend.finish(retry)
    scheduler.sync()
    assert [b.pod for b in backend.bindings] == ["default/p"]
    assert scheduler.records["default/p"].attempts == 2
    assert scheduler.records["default/p"].node == "n1"


def test_an_attempt_is_reported_once_when_its_bind_ends(engine: Engine) -> None:
    backend = DeferredBackend([make_node("n1"), pending("p")])
    ended: list[AttemptEnd] = []
    scheduler = Scheduler(backend, engine.frameworks, engine.settings,
                          on_attempt_end=ended.append)
    scheduler.sync()
    before = time.perf_counter()
    scheduler.schedule_one()
    (request,) = backend.started
    assert ended == []  # handed over: the attempt goes on on the binding thread
    backend.finish(request, error="etcd timeout")
    scheduler.sync()
    (failed,) = ended
    assert (failed.pod.key, failed.profile, failed.result, failed.node, failed.message) == (
        "default/p", PROFILE, RESULT_ERROR, None, "binding rejected: etcd timeout")
    assert before <= failed.started <= time.perf_counter()  # from when it left the queue

    backend.clock.advance(20)  # type: ignore[attr-defined]
    scheduler.advance()
    scheduler.schedule_one()
    (retry,) = backend.started
    backend.finish(retry)
    scheduler.sync()
    scheduler.sync()  # the bound event: no second report
    assert [(e.result, e.node, e.message) for e in ended] == [
        (RESULT_ERROR, None, "binding rejected: etcd timeout"), (RESULT_SCHEDULED, "n1", "")]
    assert ended[1].started > failed.started


def test_a_conflicting_bind_never_binds_twice(engine: Engine) -> None:
    scheduler, backend, _ = start(engine, "p", nodes=("n1", "n2"))
    scheduler.schedule_one()
    (request,) = backend.started
    pod = scheduler.cache.pod("default/p")
    assert pod is not None
    other = "n2" if request.node_name == "n1" else "n1"
    backend.bind(pod, other)  # another scheduler was faster
    backend.finish(request)  # our bind: "already assigned"
    scheduler.sync()
    assert [(b.pod, b.node) for b in backend.bindings] == [("default/p", other)]
    assert scheduler.cache.counted_node("default/p") == other
    assert not scheduler.schedule_one()  # the requeued pod is bound: dropped, not retried
    assert "default/p" not in scheduler.queue
    assert not [e for e in backend.events if e.reason == "Scheduled"]


def test_a_pod_deleted_during_its_bind_is_forgotten(engine: Engine) -> None:
    scheduler, backend, _ = start(engine, "p")
    scheduler.schedule_one()
    (request,) = backend.started
    backend.delete_object("Pod", "p")
    scheduler.sync()
    assert scheduler.binds_in_flight == [] and "default/p" not in scheduler.queue
    assert scheduler.cache.counted_node("default/p") is None
    backend.finish(request)  # fails (the pod is gone): its cycle already ended
    scheduler.sync()
    assert backend.events == [] and "default/p" not in scheduler.queue


def test_pre_bind_patches_travel_with_the_bind(tmp_path: Path) -> None:
    (tmp_path / "stamp.yaml").write_text(STAMP_POLICY)
    scheduler, backend, _ = start(load_engine([str(tmp_path)], POLICIES_ONLY), "p")
    scheduler.schedule_one()
    (request,) = backend.started
    assert dict(request.labels) == {"policysched.io/node": "n1"}
    stored = backend.pod("default/p")
    assert stored is not None and "labels" not in stored["metadata"]  # not yet: with the bind
    backend.finish(request)
    scheduler.sync()
    stored = backend.pod("default/p")
    assert stored is not None
    assert stored["metadata"]["labels"] == {"policysched.io/node": "n1"}
    assert stored["spec"]["nodeName"] == "n1"


def test_an_in_process_backend_binds_within_the_cycle(engine: Engine) -> None:
    backend = MemoryBackend([make_node("n1"), pending("p")], SimulatedClock(0))
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    scheduler.sync()
    scheduler.schedule_one()
    assert scheduler.binds_in_flight == [] and [b.pod for b in backend.bindings] == ["default/p"]
    assert scheduler.records["default/p"].node == "n1"


STEER_POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: steer
spec:
  bind:
  - name: to-target
    target: pod.annotations['target']
  reserve:
  - name: per-node
    counter: node.name
    limit: "1000"
  preBind:
  - name: stamp
    labels:
      policysched.io/node: node.name
"""


def steered(tmp_path: Path) -> Engine:
    """node-resources-fit plus a bind rule sending each pod to its annotation's node."""
    (tmp_path / "steer.yaml").write_text(STEER_POLICY)
    fit = Path(__file__).resolve().parents[2] / "policies" / "node-resources-fit.yaml"
    (tmp_path / "fit.yaml").write_text(fit.read_text())
    return load_engine([str(tmp_path)], POLICIES_ONLY)


def steered_pod(name: str, target: str, cpu: str = "1") -> dict[str, Any]:
    pod = make_pod(name, cpu=cpu, schedulerName=PROFILE)
    pod["metadata"]["annotations"] = {"target": target}
    return pod


def run_all(scheduler: Scheduler) -> None:
    scheduler.sync()
    while scheduler.schedule_one():
        scheduler.sync()


def test_a_bind_target_must_pass_the_filters(tmp_path: Path) -> None:
    pods = [steered_pod(f"p{i}", "small") for i in range(40)]
    clock = SimulatedClock(0)
    backend = MemoryBackend([make_node("small", cpu="4"), make_node("big", cpu="64"), *pods],
                            clock)
    scheduler = Scheduler(backend, steered(tmp_path).frameworks)
    run_all(scheduler)
    assert [b.node for b in backend.bindings] == ["small"] * 4  # never over-committed
    unbound = [r for r in scheduler.records.values() if r.node is None]
    assert len(unbound) == 36
    assert {r.message for r in unbound} == {
        "policy steer rule to-target chose node small, which does not fit the pod: "
        "Insufficient cpu"}
    condition = backend.conditions[-1]
    assert (condition.status, condition.reason) == ("False", "Unschedulable")
    # the target passes again once room is made there
    backend.delete_object("Pod", "p0")
    clock.advance(20)  # past the failed pods' backoff
    scheduler.advance()
    run_all(scheduler)
    assert [b.node for b in backend.bindings] == ["small"] * 5


def test_a_bind_target_that_is_not_a_node_is_refused(tmp_path: Path) -> None:
    backend = MemoryBackend([make_node("n1"), steered_pod("p", "nowhere")], SimulatedClock(0))
    scheduler = Scheduler(backend, steered(tmp_path).frameworks)
    run_all(scheduler)
    assert backend.bindings == []
    assert scheduler.records["default/p"].message == (
        "policy steer rule to-target: spec.bind[0].target `pod.annotations['target']` "
        "chose node nowhere, which is not in the cluster")
    pod = scheduler.cache.pod("default/p")
    assert pod is not None and not scheduler.cache.is_assumed(pod)


def test_reserve_permit_and_pre_bind_run_for_the_bind_target(tmp_path: Path) -> None:
    backend = DeferredBackend([make_node("chosen", cpu="64"), make_node("target", cpu="2"),
                               steered_pod("p", "target")])
    scheduler = Scheduler(backend, steered(tmp_path).frameworks)
    scheduler.sync()
    scheduler.schedule_one()
    (request,) = backend.started
    assert request.node_name == "target"
    assert scheduler.cache.counted_node("default/p") == "target"  # assumed where it binds
    assert scheduler.counters == {"steer/target": 1}
    assert dict(request.labels) == {"policysched.io/node": "target"}
    backend.finish(request, error="etcd timeout")  # rolled back where it was reserved
    scheduler.sync()
    assert scheduler.counters == {"steer/target": 0}
    assert scheduler.cache.counted_node("default/p") is None


ONE_PER_NODE = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: solo}
spec:
  reserve:
  - name: one-per-node
    counter: node.name
    limit: "1"
    message: the node already runs a solo pod
"""


@pytest.mark.parametrize("goes_away", ["deleted", "terminated"])
def test_a_bound_pods_counters_are_given_back_when_it_goes_away(
        tmp_path: Path, goes_away: str) -> None:
    (tmp_path / "solo.yaml").write_text(ONE_PER_NODE)
    engine = load_engine([str(tmp_path)], POLICIES_ONLY)
    clock = SimulatedClock(0)
    pods = [make_pod(name, schedulerName=PROFILE) for name in ("first", "second")]
    backend = MemoryBackend([make_node("n1"), *pods], clock)
    scheduler = Scheduler(backend, engine.frameworks)
    run_all(scheduler)
    assert [b.pod for b in backend.bindings] == ["default/first"]
    assert scheduler.counters == {"solo/n1": 1}
    assert scheduler.records["default/second"].message == (
        "0/1 nodes are available: 1 the node already runs a solo pod.")
    if goes_away == "deleted":
        backend.delete_object("Pod", "first")
    else:
        first = backend.pod("default/first")
        assert first is not None
        first["status"]["phase"] = "Succeeded"
        backend.update_object(first)
    clock.advance(20)  # past the second pod's backoff
    scheduler.sync()
    assert scheduler.counters == {"solo/n1": 0}
    scheduler.advance()
    run_all(scheduler)
    assert [b.pod for b in backend.bindings] == ["default/first", "default/second"]
    assert scheduler.counters == {"solo/n1": 1}


NOTE_POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: note
spec:
  variables:
  - name: app
    expression: pod.labels[?'app'].orValue('none')
  aggregates:
  - name: same
    pods: "{'labelSelector': {'matchLabels': {'app': variables.app}}}"
    groupBy: "'kubernetes.io/hostname'"
  postBind:
  - name: announce
    expression: "true"
    messageExpression: >-
      variables.app + ' joins ' + string(aggregates.same.total()) + ' pods'
"""


def test_a_bind_in_flight_keeps_no_scoring_data_and_post_bind_computes_again(
        tmp_path: Path) -> None:
    """The state a bind in flight keeps is released at hand-over (its per-node arrays);
    a postBind rule reading variables and aggregates gets the same values afterwards."""
    engine = engine_with(tmp_path, NOTE_POLICY)  # node-resources-fit filters and scores
    nodes = [make_node(name) for name in ("n1", "n2")]  # two: filtered and scored
    for node in nodes:
        node["metadata"]["labels"] = {"kubernetes.io/hostname": node["metadata"]["name"]}
    objects = [*nodes, make_pod("old", node="n1", labels={"app": "web"}),
               make_pod("p", labels={"app": "web"}, schedulerName=PROFILE)]
    backend = DeferredBackend(objects)
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    scheduler.sync()
    assert scheduler.schedule_one()
    (request,) = backend.started
    (binding,) = scheduler.binding_cycle._in_flight.values()
    assert binding.state.parts == {} and binding.state._bases == {}
    backend.finish(request)
    scheduler.drain_binds()
    assert ("default/p", "PostBind", "web joins 1 pods") in reasons(backend)
