"""The scheduling cycle: what is not covered by the YAML scenarios."""

from __future__ import annotations

import datetime
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from policysched.cache.node_info import NodeInfo
from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.profiles import Engine
from policysched.framework.queue import BACKOFF, GATED
from policysched.framework.runtime import CycleState
from policysched.framework.scheduler import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    AttemptEnd,
    Scheduler,
)
from policysched.framework.status import Status
from policysched.model.clock import SimulatedClock

from ..cache.objects_builder import make_node, make_pod
from . import POLICIES_ONLY, engine_with, run, start_at

START = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.UTC)


def objects() -> list[dict[str, Any]]:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-0"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "delayed", "namespace": "default", "uid": "u1",
                        "creationTimestamp": START.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "annotations": {"delay": "15"}},
           "spec": {"schedulerName": "policysched", "containers": [{"name": "c"}]}}
    return [node, pod]


class SlowClock(SimulatedClock):
    """Wall time moves while a cycle runs: each read is 0.3 s later than the one before."""

    def now(self) -> float:
        value = super().now()
        self.advance(0.3)
        return value


def test_retry_after_counts_from_the_cycles_now_not_from_when_it_ended() -> None:
    engine = load_engine([], None)
    clock = SlowClock(START.timestamp() + 0.7)  # the pod's `now` is the whole second
    scheduler = Scheduler(MemoryBackend(objects(), clock), engine.frameworks, engine.settings)
    scheduler.sync()
    assert scheduler.schedule_one()
    record = scheduler.records["default/delayed"]
    assert record.node is None and "delay not reached" in (record.message or "")
    # creation + 15 s exactly, though the cycle ended more than a second after it began
    assert scheduler.next_wakeup() == START.timestamp() + 15


# -- failures that used to be silent ---------------------------------------------------

def start(engine: Engine, *objects: dict[str, Any]) -> tuple[Scheduler, MemoryBackend]:
    return start_at(START.timestamp(), engine, *objects)


def pending(name: str, cpu: str = "1", **labels: str) -> dict[str, Any]:
    return make_pod(name, cpu=cpu, labels=labels or None, schedulerName="policysched")


def failures(backend: MemoryBackend, pod: str) -> list[str]:
    return [e.message for e in backend.events
            if e.pod == f"default/{pod}" and e.reason == "FailedScheduling"]


def test_a_failing_pre_enqueue_rule_is_reported_once_and_keeps_the_pod_gated(
        tmp_path: Path) -> None:
    engine = engine_with(tmp_path, """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: gate}
spec:
  preEnqueue:
  - name: rank
    expression: "int(pod.labels['rank']) > 0"
""")
    scheduler, backend = start(engine, make_node("n1"), pending("p", rank="high"))
    message = ("policy gate rule rank: spec.preEnqueue[0].expression "
               "`int(pod.labels['rank']) > 0`: type conversion error from 'string' to "
               "'int': 'high'")
    assert scheduler.queue.pending()[GATED] == 1 and backend.bindings == []
    record = scheduler.records["default/p"]
    assert (record.attempts, record.message) == (0, message)
    assert failures(backend, "p") == [message]
    condition = backend.conditions[-1]
    assert (condition.status, condition.reason, condition.message) == (
        "False", "SchedulerError", message)
    # the gate re-runs on every move and re-check: the error is not reported again
    backend.add_object(make_node("n2"))
    backend.clock.advance(5)  # type: ignore[attr-defined]
    scheduler.advance()
    run(scheduler)
    assert failures(backend, "p") == [message]
    # fixed: admitted and bound
    fixed = backend.pod("default/p")
    assert fixed is not None
    fixed["metadata"]["labels"]["rank"] = "1"
    backend.update_object(fixed)
    run(scheduler)
    assert [b.pod for b in backend.bindings] == ["default/p"]


def test_a_failing_victims_rule_is_an_error_not_no_victims(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: evict}
spec:
  postFilter:
  - name: lower-priority
    victims: "int(victim.labels['tier']) < 3"
""")
    victim = make_pod("victim", cpu="4", node="n1", labels={"tier": "gold"})
    scheduler, backend = start(engine, make_node("n1"), victim,
                               make_pod("big", cpu="4", schedulerName="policysched",
                                        priority=100))
    assert scheduler.records["default/big"].message == (
        "policy evict rule lower-priority: spec.postFilter[0].victims "
        "`int(victim.labels['tier']) < 3`: type conversion error from 'string' to 'int': "
        "'gold'")
    assert backend.evictions == []


MATCH_POLICIES = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: strict}
spec:
  match: "'tier' in pod.labels && int(pod.labels['tier']) > 1"
  filter:
  - name: never
    expression: "false"
---
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: lenient}
spec:
  match: "int(pod.labels['level']) > 1"
  filter:
  - name: never
    expression: "false"
    failurePolicy: Ignore
"""


def test_a_failing_match_is_an_error_unless_every_rule_ignores_errors(
        tmp_path: Path) -> None:
    scheduler, backend = start(engine_with(tmp_path, MATCH_POLICIES), make_node("n1"),
                               pending("strict", tier="gold"), pending("lenient", level="x"))
    assert scheduler.records["default/strict"].message == (
        "policy strict: spec.match `'tier' in pod.labels && int(pod.labels['tier']) > 1`: "
        "type conversion error from 'string' to 'int': 'gold'")
    assert backend.conditions[0].reason == "SchedulerError"
    assert [b.pod for b in backend.bindings] == ["default/lenient"]  # `lenient` skipped


def test_a_failing_retry_after_is_an_error(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: later}
spec:
  preFilter:
  - name: wait
    expression: "false"
    retryAfter: "int(pod.labels['seconds'])"
""")
    scheduler, _ = start(engine, make_node("n1"), pending("p", seconds="soon"))
    assert scheduler.records["default/p"].message == (
        "policy later rule wait: spec.preFilter[0].retryAfter `int(pod.labels['seconds'])`: "
        "type conversion error from 'string' to 'int': 'soon'")
    assert scheduler.queue.pending()[BACKOFF] == 1


def test_an_error_quotes_a_long_multi_line_expression_on_one_short_line(
        tmp_path: Path) -> None:
    padding = " &&\n      ".join(["true"] * 60)
    engine = engine_with(tmp_path, f"""\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {{name: long}}
spec:
  filter:
  - name: f
    expression: |
      int(pod.labels['rank']) > 0 &&
      {padding}
""")
    _, backend = start(engine, make_node("n1"), pending("p", rank="high"))
    (message, *_) = failures(backend, "p")
    assert "\n" not in message and message.startswith(
        "policy long rule f: spec.filter[0].expression `int(pod.labels['rank']) > 0 && true &&")
    quoted = message.split("`")[1]
    assert len(quoted) == 160 and quoted.endswith("…")
    assert message.endswith("type conversion error from 'string' to 'int': 'high'")


def test_a_failing_sort_key_is_an_error_for_its_pod_only(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: ranked}
spec:
  queueSort:
  - name: by-rank
    keys: ["int(pod.labels['rank'])"]
""")
    scheduler, backend = start(engine, make_node("n1"), pending("bad", rank="x"),
                               pending("good", rank="1"))
    assert [b.pod for b in backend.bindings] == ["default/good"]
    assert scheduler.records["default/bad"].message == (
        "policy ranked rule by-rank: spec.queueSort[0].keys[0] `int(pod.labels['rank'])`: "
        "type conversion error from 'string' to 'int': 'x'")


def test_failing_notifications_are_logged_once_and_change_nothing(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = engine_with(tmp_path, """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: notes}
spec:
  postBind:
  - name: announce
    expression: "int(pod.labels['n']) > 0"
    message: bound
""")
    with caplog.at_level(logging.WARNING, "policysched"):
        _, backend = start(engine, make_node("n1"), pending("a", n="x"), pending("b", n="x"))
    assert sorted(b.pod for b in backend.bindings) == ["default/a", "default/b"]
    warnings = [r.getMessage() for r in caplog.records if "notes" in r.getMessage()]
    assert len(warnings) == 1 and "spec.postBind[0].expression" in warnings[0]


def test_a_failing_wait_rule_rejects_the_waiting_pod_at_once(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: hold}
spec:
  permit:
  - name: until-ready
    expression: "nodePods.size() > 1 && int(pod.labels['ready']) > 0"
    onFalse: Wait
    timeoutSeconds: 600
""")
    scheduler, backend = start(engine, make_node("n1"), pending("p", ready="no"))
    assert len(scheduler.waiting) == 1  # false for now: waits
    backend.add_object(make_pod("other", node="n1"))  # now the rule fails to evaluate
    run(scheduler)
    assert len(scheduler.waiting) == 0 and backend.bindings == []
    assert scheduler.records["default/p"].message == (
        "policy hold rule until-ready: spec.permit[0].expression "
        "`nodePods.size() > 1 && int(pod.labels['ready']) > 0`: type conversion error from "
        "'string' to 'int': 'no'")
    assert scheduler.cache.counted_node("default/p") is None


# -- unexpected exceptions ------------------------------------------------------------


def poison_reserve(scheduler: Scheduler, poison: str) -> None:
    """Make reserve raise, like an engine bug would, for the pod named ``poison``."""
    fwk = scheduler.profiles["policysched"]
    original = fwk.run_reserve

    def run_reserve(state: CycleState, node: NodeInfo, counters: dict[str, float],
                    volumes: Any = None) -> Status:
        status = original(state, node, counters, volumes)  # takes the counters first
        if state.pod.name == poison:
            raise ZeroDivisionError("division by zero")
        return status

    fwk.run_reserve = run_reserve  # type: ignore[method-assign]


COUNTED = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: counted}
spec:
  reserve:
  - name: per-node
    counter: node.name
    limit: "100"
"""


def test_an_exception_in_one_pods_cycle_requeues_it_and_others_go_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = engine_with(tmp_path, COUNTED)
    pods = [pending(f"p{i}", cpu="100m") for i in range(20)]
    backend = MemoryBackend([make_node("n1"), make_node("n2"), *pods],
                            SimulatedClock(START.timestamp()))
    errors: list[BaseException] = []
    scheduler = Scheduler(backend, engine.frameworks, engine.settings,
                          on_internal_error=errors.append)
    poison_reserve(scheduler, "p7")
    with caplog.at_level(logging.ERROR, "policysched"):
        run(scheduler)
    assert len(backend.bindings) == 19 and "default/p7" not in {b.pod for b in
                                                                backend.bindings}
    message = "internal error at Reserve: ZeroDivisionError: division by zero"
    assert failures(backend, "p7") == [message]
    assert [c.reason for c in backend.conditions if c.pod == "default/p7"] == [
        "SchedulerError"]
    assert scheduler.queue.pending()[BACKOFF] == 1  # requeued with backoff
    pod = scheduler.cache.pod("default/p7")
    assert pod is not None and not scheduler.cache.is_assumed(pod)
    assert scheduler.cache.counted_node("default/p7") is None
    assert sum(scheduler.counters.values()) == 19  # its reserved counter given back
    assert len(errors) == 1 and "Traceback" in caplog.text


def test_an_exception_after_a_successful_bind_never_undoes_it(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, COUNTED)
    backend = MemoryBackend([make_node("n1"), pending("p")], SimulatedClock(0))
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    fwk = scheduler.profiles["policysched"]

    def run_post_bind(state: CycleState, node: NodeInfo) -> list[str]:
        raise RuntimeError("postBind broke")

    fwk.run_post_bind = run_post_bind  # type: ignore[method-assign]
    run(scheduler)
    assert [b.pod for b in backend.bindings] == ["default/p"]
    assert scheduler.records["default/p"].node == "n1"
    assert "default/p" not in scheduler.queue and scheduler.counters == {"counted/n1": 1}
    assert scheduler.cache.counted_node("default/p") == "n1"


# -- the engine's report of each attempt ----------------------------------------------


def test_each_attempt_ends_with_one_report(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, COUNTED)
    backend = MemoryBackend([make_node("n1"), pending("fits"), pending("huge", cpu="64"),
                             pending("poisoned")], SimulatedClock(START.timestamp()))
    ended: list[AttemptEnd] = []
    scheduler = Scheduler(backend, engine.frameworks, engine.settings,
                          on_attempt_end=ended.append)
    poison_reserve(scheduler, "poisoned")
    run(scheduler)
    by_pod = {e.pod.key: (e.profile, e.result, e.node, e.message) for e in ended}
    assert len(ended) == 3 and by_pod == {
        "default/fits": ("policysched", RESULT_SCHEDULED, "n1", ""),
        "default/huge": ("policysched", RESULT_UNSCHEDULABLE, None,
                         "0/1 nodes are available: 1 Insufficient cpu."),
        "default/poisoned": ("policysched", RESULT_ERROR, None,
                             "internal error at Reserve: ZeroDivisionError: division by zero"),
    }


def test_a_permit_wait_is_part_of_the_attempt_and_a_gate_is_not_one(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: hold}
spec:
  preEnqueue:
  - name: rank
    expression: "int(pod.labels['rank']) > 0"
  permit:
  - name: never
    expression: "false"
    onFalse: Wait
    timeoutSeconds: 30
""")
    backend = MemoryBackend([make_node("n1"), pending("held", rank="1"),
                             pending("gated", rank="high")], SimulatedClock(START.timestamp()))
    ended: list[AttemptEnd] = []
    scheduler = Scheduler(backend, engine.frameworks, engine.settings,
                          on_attempt_end=ended.append)
    run(scheduler)
    assert ended == [] and len(scheduler.waiting) == 1  # the gate's Error is no attempt
    assert failures(backend, "gated") != []
    waited_from = time.perf_counter()
    backend.clock.advance(31)  # type: ignore[attr-defined]
    scheduler.advance()
    (end,) = ended
    assert (end.pod.key, end.result, end.message) == (
        "default/held", RESULT_UNSCHEDULABLE,
        "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin "
        "hold/never.")
    assert end.started < waited_from  # timed from when it left the queue


def test_an_attempt_hook_that_raises_is_logged_and_changes_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    engine = load_engine([], None)
    backend = MemoryBackend([make_node("n1"), pending("a", cpu="100m"),
                             pending("b", cpu="100m")], SimulatedClock(0))

    def broken(end: AttemptEnd) -> None:
        raise RuntimeError("observer broke")

    scheduler = Scheduler(backend, engine.frameworks, engine.settings, on_attempt_end=broken)
    with caplog.at_level(logging.ERROR, "policysched"):
        run(scheduler)
    assert sorted(b.pod for b in backend.bindings) == ["default/a", "default/b"]
    assert caplog.text.count("on_attempt_end hook") == 2


def test_a_new_policy_set_retries_the_pods_the_old_one_left_unschedulable(
        tmp_path: Path) -> None:
    blocking = engine_with(tmp_path, """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: block}
spec:
  filter:
  - {name: nowhere, expression: "false", reason: blocked}
""")
    clock = SimulatedClock(START.timestamp())
    backend = MemoryBackend([make_node("n1", cpu="4"), pending("p")], clock)
    scheduler = Scheduler(backend, blocking.frameworks, blocking.settings)
    run(scheduler)
    clock.advance(60)  # backoff over; the pod waits for an event (5 min flush)
    run(scheduler)
    assert scheduler.records["default/p"].node is None
    assert failures(backend, "p") == ["0/1 nodes are available: 1 blocked."]
    (tmp_path / "test.yaml").unlink()  # the policy is deleted
    scheduler.set_profiles(load_engine([str(tmp_path)], POLICIES_ONLY).frameworks)
    run(scheduler)  # no cluster event: the swap alone moves the pod
    assert scheduler.records["default/p"].node == "n1"
