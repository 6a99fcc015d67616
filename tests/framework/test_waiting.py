"""Permit's waiting room in the engine: time-outs that are expressions, a timer per rule,
gangs rejected together, and the room a rejected wait releases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.profiles import Engine
from policysched.framework.queue import UNSCHEDULABLE
from policysched.framework.scheduler import Scheduler

from ..cache.objects_builder import make_node, make_pod
from . import engine_with, run, start_at

START = 1_800_000_000.0
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
def start(engine: Engine, *objects: dict[str, Any]) -> tuple[Scheduler, MemoryBackend]:
    return start_at(START, engine, *objects)


def at(scheduler: Scheduler, seconds: float) -> None:
    """Move the clock to ``seconds`` after the start, then schedule what became ready."""
    scheduler.clock.advance_to(START + seconds)  # type: ignore[attr-defined]
    scheduler.advance()
    run(scheduler)


def pending(name: str, cpu: str = "1", *, group: str | None = None, **labels: str
            ) -> dict[str, Any]:
    if group is not None:
        labels[GROUP_LABEL] = group
    return make_pod(name, cpu=cpu, labels=labels or None, schedulerName="policysched")


def pod_group(name: str, min_member: int, timeout: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def failures(backend: MemoryBackend, pod: str) -> list[str]:
    return [e.message for e in backend.events
            if e.pod == f"default/{pod}" and e.reason == "FailedScheduling"]


def bound(backend: MemoryBackend) -> dict[str, str]:
    return {b.pod.removeprefix("default/"): b.node for b in backend.bindings}


HOLD = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: hold}
spec:
  permit:
  - name: until-open
    expression: "pod.labels[?'gate'].orValue('') == 'open'"
    onFalse: Wait
    timeoutSeconds: "int(pod.labels['wait'])"
"""


def test_a_timeout_expression_is_evaluated_per_pod(tmp_path: Path) -> None:
    """Each pod waits what its expression says, and is rejected in kube-scheduler's words
    (a Go duration, the plugin: the rule)."""
    scheduler, backend = start(engine_with(tmp_path, HOLD), make_node("n1"),
                               pending("short", wait="3"), pending("long", wait="90"))
    assert len(scheduler.waiting) == 2
    at(scheduler, 3)
    assert failures(backend, "short") == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at plugin "
        "hold/until-open."]
    assert failures(backend, "long") == [] and len(scheduler.waiting) == 1
    at(scheduler, 90)
    assert failures(backend, "long") == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1m30s at plugin "
        "hold/until-open."]


def test_a_timeout_is_cut_to_fifteen_minutes_and_none_left_times_out_at_once(
        tmp_path: Path) -> None:
    """kube-scheduler's maxTimeout (15 minutes); a wait of 0 or less has ended already."""
    scheduler, backend = start(engine_with(tmp_path, HOLD), make_node("n1"),
                               pending("forever", wait="86400"), pending("none", wait="-5"))
    scheduler.advance()
    assert failures(backend, "none") == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 0s at plugin "
        "hold/until-open."]
    assert scheduler.waiting.next_deadline() == START + 900
    at(scheduler, 900)
    assert failures(backend, "forever") == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 15m0s at plugin "
        "hold/until-open."]


def test_a_failing_timeout_is_an_error_unless_ignored(tmp_path: Path) -> None:
    ignoring = HOLD.replace("timeoutSeconds:", "failurePolicy: Ignore\n    timeoutSeconds:")
    scheduler, backend = start(engine_with(tmp_path, HOLD), make_node("n1"),
                               pending("bad", wait="soon"))
    assert len(scheduler.waiting) == 0 and bound(backend) == {}
    assert failures(backend, "bad") == [
        "policy hold rule until-open: spec.permit[0].timeoutSeconds "
        "`int(pod.labels['wait'])`: type conversion error from 'string' to 'int': 'soon'"]
    scheduler, backend = start(engine_with(tmp_path, ignoring), make_node("n1"),
                               pending("bad", wait="soon"))
    assert scheduler.next_wakeup() == START + 60  # the default wait


TWO_RULES = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: hold}
spec:
  permit:
  - name: warm-up
    expression: "now >= int(pod.labels['ready-at'])"
    onFalse: Wait
    timeoutSeconds: 5
  - name: gang
    group: "pod.labels['gang']"
    minMember: "2"
    timeoutSeconds: 60
"""


def test_each_rule_has_its_own_timer_and_stops_it_when_it_allows(tmp_path: Path) -> None:
    """As kube's waiting pod: a rule that allowed the pod no longer times it out."""
    ready_at = str(int(START) + 2)
    scheduler, backend = start(engine_with(tmp_path, TWO_RULES), make_node("n1"),
                               pending("first", gang="g", **{"ready-at": ready_at}))
    at(scheduler, 2)  # warm-up allows it; the gang still waits for its second member
    at(scheduler, 6)
    assert failures(backend, "first") == [] and len(scheduler.waiting) == 1
    backend.add_object(pending("second", gang="g", **{"ready-at": "0"}))
    run(scheduler)
    assert bound(backend) == {"first": "n1", "second": "n1"}


def test_a_gang_times_out_after_its_pod_groups_schedule_timeout() -> None:
    """Coscheduling: spec.scheduleTimeoutSeconds, else the plugin's 60 s; the first member
    whose wait ends is rejected in kube's words, the others by Unreserve."""
    engine = load_engine([], None)
    scheduler, backend = start(
        engine, make_node("n1", cpu="8"), pod_group("quick", 3, timeout=3),
        pod_group("slow", 3), pending("quick-0", group="quick"),
        pending("quick-1", group="quick"), pending("quick-2", cpu="64", group="quick"),
        pending("slow-0", group="slow"), pending("slow-1", group="slow"),
        pending("slow-2", cpu="64", group="slow"))
    assert len(scheduler.waiting) == 4
    at(scheduler, 3)
    assert failures(backend, "quick-0") == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at plugin "
        "coscheduling/gang."]
    assert failures(backend, "quick-1") == [
        "0/1 nodes are available: 1 rejection in Unreserve."]
    assert sorted(scheduler.waiting.pods) == ["default/slow-0", "default/slow-1"]
    qp = scheduler.queue.get("default/quick-1")
    assert qp is not None and qp.unschedulable_by == frozenset({"coscheduling/gang"})
    at(scheduler, 60)
    assert failures(backend, "slow-0")[-1] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin "
        "coscheduling/gang.")
    assert bound(backend) == {}


def test_the_room_a_timed_out_gang_held_goes_to_the_pods_it_kept_out() -> None:
    """kube's handleBindingCycleError: the forgotten assumptions are an AssignedPodDelete,
    which moves the pods tried while the room was held; they bind without waiting for the
    5-minute flush. The gang's own members and a pod tried before the room was taken stay."""
    engine = load_engine([], None)
    scheduler, backend = start(
        engine, make_node("n1", cpu="2"), pod_group("train", 3, timeout=3),
        pending("early", cpu="3"),  # tried first: the node was empty, and still too small
        pending("train-0", group="train"), pending("train-1", group="train"),
        pending("train-big", cpu="64", group="train"), pending("held", cpu="2"))
    assert len(scheduler.waiting) == 2
    [kept_out] = failures(backend, "held")
    assert kept_out.startswith("0/1 nodes are available: 1 Insufficient cpu."), kept_out
    at(scheduler, 3)
    assert bound(backend) == {"held": "n1"}
    for name in ("early", "train-0", "train-1", "train-big"):
        qp = scheduler.queue.get(f"default/{name}")
        assert qp is not None and qp.queue == UNSCHEDULABLE, name
    assert len(failures(backend, "early")) == 1  # not retried: nothing it saw changed


def test_a_deleted_waiting_member_takes_its_gang_with_it() -> None:
    """Deleting a waiting pod rejects it; Unreserve rejects its gang's other members at
    once (not at their time-out), and the room is free."""
    engine = load_engine([], None)
    scheduler, backend = start(
        engine, make_node("n1", cpu="2"), pod_group("train", 3),
        pending("train-0", group="train"), pending("train-1", group="train"),
        pending("train-2", cpu="64", group="train"), pending("held", cpu="2"))
    assert len(scheduler.waiting) == 2
    backend.delete_object("Pod", "train-0")
    at(scheduler, 1)  # held's backoff after its first attempt
    assert failures(backend, "train-1")[-1] == (
        "0/1 nodes are available: 1 rejection in Unreserve.")
    assert len(scheduler.waiting) == 0 and bound(backend) == {"held": "n1"}


def test_a_pod_group_created_later_moves_the_pods_it_denied() -> None:
    """Coscheduling's queueing hint: PodGroup Add/Update moves its pods."""
    engine = load_engine([], None)
    scheduler, backend = start(engine, make_node("n1"), pending("lone", group="late"))
    assert failures(backend, "lone") == [
        "0/1 nodes are available: 1 PodGroup not found."]
    backend.add_object(pod_group("late", 1))
    at(scheduler, 1)  # its backoff after its first attempt
    assert bound(backend) == {"lone": "n1"}


def test_of_a_gang_whose_time_is_up_the_first_to_time_out_is_rejected_for_it(
        tmp_path: Path) -> None:
    """Both waits ended when the clock is looked at (a late wake-up): the earliest one
    names the time-out, whatever the order the members arrived in."""
    gang = TWO_RULES.replace("minMember: \"2\"", "minMember: \"3\"").replace(
        "timeoutSeconds: 60", "timeoutSeconds: \"int(pod.labels['wait'])\"")
    scheduler, backend = start(engine_with(tmp_path, gang), make_node("n1"),
                               pending("patient", gang="g", wait="10", **{"ready-at": "0"}),
                               pending("hasty", gang="g", wait="3", **{"ready-at": "0"}))
    at(scheduler, 20)
    assert failures(backend, "hasty") == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at plugin "
        "hold/gang."]
    assert failures(backend, "patient") == ["0/1 nodes are available: 1 rejection in Unreserve."]
