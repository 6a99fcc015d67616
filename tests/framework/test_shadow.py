"""The shadow scheduler: each pending pod of another scheduler decided against the cluster
just before that scheduler's outcome lands, judged, and nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.profiles import Engine
from policysched.framework.shadow import (
    AGREE,
    DIFFER,
    ERROR,
    HOLD_SECONDS,
    WOULD_BIND,
    WOULD_REJECT,
    Judgment,
    ReadOnlyBackend,
    ShadowScheduler,
    ShadowSettings,
    ShadowWriteError,
    Verdict,
    judge,
)
from policysched.model.clock import SimulatedClock

from ..cache.objects_builder import make_node, make_pod
from . import engine_with

KUBE = "default-scheduler"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine([], None)  # the built-in configuration: profile policysched


def shadow_of(engine: Engine, *objects: dict[str, Any], settings: ShadowSettings | None = None
              ) -> tuple[ShadowScheduler, MemoryBackend, list[Judgment]]:
    backend = MemoryBackend(list(objects), SimulatedClock(1_000_000.0))
    judgments: list[Judgment] = []
    shadow = ShadowScheduler(ReadOnlyBackend(backend), engine.frameworks, engine.settings,
                             shadow=settings or ShadowSettings(),
                             on_judgment=judgments.append)
    shadow.sync()
    return shadow, backend, judgments


def kube_pod(name: str, cpu: str, **extra: Any) -> dict[str, Any]:
    return make_pod(name, cpu=cpu, uid=f"uid-{name}", schedulerName=KUBE, **extra)


def bind(shadow: ShadowScheduler, backend: MemoryBackend, key: str, node: str) -> None:
    """The other scheduler binds ``key`` (as the API server would: an event follows)."""
    pod = shadow.cache.pod(key)
    assert pod is not None
    backend.bind(pod, node)


def test_a_binding_is_judged_against_the_cluster_just_before_it(engine: Engine) -> None:
    """p2 is decided after p1's binding (same batch of events) but before its own: only
    node b still has room for it, where, when first seen, both nodes were as good."""
    shadow, backend, judgments = shadow_of(
        engine, make_node("a", cpu="4"), make_node("b", cpu="4"),
        kube_pod("p1", "3"), kube_pod("p2", "3"))
    assert sorted(shadow.watched) == ["default/p1", "default/p2"]
    assert shadow.verdict(shadow.cache.pod("default/p2")).best == ("a", "b")  # type: ignore[arg-type]
    bind(shadow, backend, "default/p1", "a")
    bind(shadow, backend, "default/p2", "b")
    shadow.sync()
    assert [(j.pod, j.result, j.verdict.best, j.actual_node) for j in judgments] == [
        ("default/p1", AGREE, ("a", "b"), "a"),  # a tie: either node agrees
        ("default/p2", AGREE, ("b",), "b")]
    assert judgments[0].profile == "policysched" and judgments[0].scheduler_name == KUBE
    assert shadow.watched == []


def test_another_node_and_a_pod_the_shadow_would_not_bind_are_differences(
        engine: Engine) -> None:
    shadow, backend, judgments = shadow_of(
        engine, make_node("small", cpu="1"), make_node("big", cpu="4"),
        kube_pod("fits-big", "2"), kube_pod("fits-none", "5"))
    bind(shadow, backend, "default/fits-big", "small")  # over-committed: not what we'd do
    shadow.sync()
    bind(shadow, backend, "default/fits-none", "big")
    shadow.sync()
    first, second = judgments
    assert (first.result, first.verdict.node, first.actual_node) == (DIFFER, "big", "small")
    assert second.result == WOULD_REJECT
    message = ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
               "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
               "scheduling.")  # kube-scheduler's FailedScheduling text
    assert second.verdict.message == message
    assert second.as_dict()["shadow"] == {"rejected": message, "error": False}
    assert first.as_dict()["actual"] == {"node": "small"}


def test_a_rejection_by_the_other_scheduler_is_judged_once(engine: Engine) -> None:
    shadow, backend, judgments = shadow_of(
        engine, make_node("a", cpu="2"), kube_pod("huge", "3"), kube_pod("small", "1"))
    for key in ("default/huge", "default/small"):
        pod = shadow.cache.pod(key)
        assert pod is not None
        backend.set_pod_condition(pod, "False", "Unschedulable", "0/1 nodes are available")
    shadow.sync()
    pod = shadow.cache.pod("default/huge")
    assert pod is not None
    backend.set_pod_condition(pod, "False", "Unschedulable", "0/1 nodes are available: again")
    shadow.sync()
    assert [(j.pod, j.result, j.actual_message) for j in judgments] == [
        ("default/huge", AGREE, "0/1 nodes are available"),
        ("default/small", WOULD_BIND, "0/1 nodes are available")]
    bind(shadow, backend, "default/small", "a")  # bound later: judged again
    shadow.sync()
    assert (judgments[-1].pod, judgments[-1].result) == ("default/small", AGREE)
    assert judgments[-1].as_dict()["actual"] == {"node": "a"}


def test_pods_bound_when_first_seen_or_of_other_schedulers_are_not_judged(
        engine: Engine) -> None:
    shadow, backend, judgments = shadow_of(
        engine, make_node("a"), kube_pod("running", "1", nodeName="a"),
        make_pod("ours", cpu="1", uid="u-ours", schedulerName="policysched"))
    assert shadow.watched == []
    bind(shadow, backend, "default/ours", "a")
    shadow.sync()
    assert judgments == []


def test_a_pod_deleted_while_pending_is_forgotten(engine: Engine) -> None:
    shadow, backend, judgments = shadow_of(engine, make_node("a"), kube_pod("p", "1"))
    backend.delete_object("Pod", "p")
    shadow.sync()
    assert shadow.watched == [] and judgments == []


def test_preemption_is_computed_never_carried_out(engine: Engine) -> None:
    """A pod that only fits by preempting: its verdict names the victim; nothing is
    evicted, nominated, or reported on any pod."""
    shadow, backend, _ = shadow_of(
        engine, make_node("a", cpu="2"),
        kube_pod("low", "2", nodeName="a", priority=0),
        kube_pod("high", "2", priority=1000))
    verdict = shadow.verdict(shadow.cache.pod("default/high"))  # type: ignore[arg-type]
    assert verdict.node is None and verdict.victims == ("default/low",)
    assert verdict.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert backend.evictions == [] and backend.events == []
    assert backend.pod("default/high")["status"].get("nominatedNodeName") is None


def test_the_named_profile_judges_and_a_reload_keeps_the_shadowed_names(
        engine: Engine) -> None:
    shadow, _, _ = shadow_of(engine, make_node("a"),
                             settings=ShadowSettings(("other",), "policysched"))
    assert list(shadow.profiles) == ["other"]
    shadow.set_profiles(engine.frameworks)
    assert list(shadow.profiles) == ["other"]
    missing, _, _ = shadow_of(engine, make_node("a"), settings=ShadowSettings(profile="nope"))
    assert missing.profiles == {}


@pytest.mark.parametrize("call, args", [
    ("bind", ("pod", "a")), ("start_bind", ("request",)), ("evict", ("pod", "why")),
    ("patch_pod_metadata", ("pod", {}, {})), ("set_nominated_node", ("pod", "a")),
    ("record_event", ("pod", "Normal", "Scheduled", "x")),
    ("set_pod_condition", ("pod", "False", "Unschedulable", "x")),
])
def test_the_read_only_backend_refuses_every_write(call: str, args: tuple[Any, ...]) -> None:
    backend = ReadOnlyBackend(MemoryBackend([]))
    with pytest.raises(ShadowWriteError, match=f"^{call}: a shadow scheduler writes nothing"):
        getattr(backend, call)(*args)


def test_the_result_of_each_verdict_and_outcome() -> None:
    bound = Verdict("a", ("a", "b"))
    rejected = Verdict(None, message="no")
    assert [judge(bound, "b"), judge(bound, "c"), judge(bound, None), judge(rejected, "a"),
            judge(rejected, None), judge(Verdict(None, error=True), "a")] == [
        AGREE, DIFFER, WOULD_BIND, WOULD_REJECT, AGREE, ERROR]


def test_a_pod_is_not_judged_once_a_reload_dropped_the_shadows_profile(
        engine: Engine) -> None:
    shadow, backend, judgments = shadow_of(
        engine, make_node("a"), kube_pod("p", "1"),
        settings=ShadowSettings(profile="policysched-zones"))
    assert shadow.watched == ["default/p"]
    shadow.set_profiles({"policysched": engine.frameworks["policysched"]})
    bind(shadow, backend, "default/p", "a")
    shadow.sync()
    assert judgments == [] and shadow.watched == []


def test_bindings_that_land_out_of_order_are_judged_in_the_order_they_were_decided(
        engine: Engine) -> None:
    """The other scheduler decided p1 (to b, the emptier node) then p2 (then a tie), but
    p2's binding lands first: it is held until p1's, so that p2 is decided with p1 on b,
    as the other scheduler decided it — not against a cluster where b is still emptier."""
    shadow, backend, judgments = shadow_of(
        engine, make_node("a"), make_node("b"), kube_pod("busy", "1", nodeName="a"),
        kube_pod("p1", "1"), kube_pod("p2", "2"))
    bind(shadow, backend, "default/p2", "a")
    bind(shadow, backend, "default/p1", "b")
    shadow.sync()
    assert [(j.pod, j.result, j.verdict.best) for j in judgments] == [
        ("default/p1", AGREE, ("b",)), ("default/p2", AGREE, ("a", "b"))]


def test_a_held_binding_is_judged_at_its_deadline_when_the_earlier_pod_stays_pending(
        engine: Engine) -> None:
    shadow, backend, judgments = shadow_of(
        engine, make_node("a"), kube_pod("p1", "1"), kube_pod("p2", "1"))
    bind(shadow, backend, "default/p2", "a")
    shadow.sync()
    assert judgments == [] and shadow.next_wakeup() == 1_000_000.0 + HOLD_SECONDS
    backend.clock.advance(HOLD_SECONDS)  # type: ignore[attr-defined]
    shadow.advance()
    assert [(j.pod, j.result) for j in judgments] == [("default/p2", AGREE)]
    assert shadow.watched == ["default/p1"]


def test_a_pod_already_rejected_or_gated_holds_no_binding_back(engine: Engine) -> None:
    rejected = kube_pod("rejected", "1")
    rejected["status"] = {"conditions": [{"type": "PodScheduled", "status": "False",
                                          "reason": "Unschedulable", "message": "no"}]}
    gated = kube_pod("gated", "1", schedulingGates=[{"name": "example.com/wait"}])
    shadow, backend, judgments = shadow_of(engine, make_node("a"), rejected, gated,
                                           kube_pod("p", "1"))
    bind(shadow, backend, "default/p", "a")
    shadow.sync()
    assert [(j.pod, j.result) for j in judgments] == [("default/p", AGREE)]


AUDITED = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: trial
spec:
  enforcement: Audit
  preEnqueue:
  - name: hold
    expression: "false"
    message: held by the trial
  filter:
  - name: nowhere
    expression: "false"
    reason: node(s) refused by the trial
"""


def test_audited_rules_are_counted_and_write_nothing(tmp_path: Path) -> None:
    """A shadowed profile with audited rules: their findings reach ``on_audit`` (the
    metrics), no PolicyAudit event is attempted, and the verdict is the enforced one."""
    shadow, backend, judgments = shadow_of(engine_with(tmp_path, AUDITED),
                                           make_node("a", cpu="4"), kube_pod("p1", "1"))
    found: list[tuple[str, str]] = []
    shadow.on_audit = lambda _profile, finding: found.append((finding.rule, finding.result))
    bind(shadow, backend, "default/p1", "a")
    shadow.sync()
    assert [(j.pod, j.result) for j in judgments] == [("default/p1", AGREE)]
    assert {rule for rule, _ in found} >= {"trial/nowhere"}
    assert backend.events == []
