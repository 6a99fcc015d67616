"""framework/post_filter.py: postFilter's rules run as kube-scheduler's PostFilter plugins,
and what they say ends the FailedScheduling text (RunPostFilterPlugins: reasons joined in
plugin order, dropped on a nomination, one UnschedulableAndUnresolvable status alone)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.scheduler import Scheduler
from policysched.model.clock import SimulatedClock

from ..cache.objects_builder import make_node, make_pod
from . import POLICIES_ONLY

FIT = Path(__file__).resolve().parents[2] / "policies" / "node-resources-fit.yaml"
PREEMPTION = Path(__file__).resolve().parents[2] / "policies" / "default-preemption.yaml"
DRA = Path(__file__).resolve().parents[2] / "policies" / "dynamic-resources.yaml"


def report(name: str, message: str, *, expression: str = "false", unresolvable: bool = False
           ) -> str:
    """A policy with one postFilter rule without victims."""
    return f"""\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: {name}
spec:
  postFilter:
  - name: says
    expression: "{expression}"
    message: {message}
    unresolvable: {str(unresolvable).lower()}
"""


def failures(tmp_path: Path, policies: list[str], *objects: dict[str, Any]
             ) -> tuple[list[str], MemoryBackend]:
    """The FailedScheduling messages of pod ``p`` with these policies, in this order (files
    are loaded by name: a-…, b-…), after node-resources-fit."""
    for i, text in enumerate(policies):
        (tmp_path / f"{chr(ord('b') + i)}.yaml").write_text(text)
    (tmp_path / "a-fit.yaml").write_text(FIT.read_text())
    engine = load_engine([str(tmp_path)], POLICIES_ONLY)
    backend = MemoryBackend(list(objects), SimulatedClock(1_700_000_000))
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    scheduler.sync()
    while scheduler.schedule_one():
        scheduler.sync()
    return [e.message for e in backend.events
            if e.pod == "default/p" and e.reason == "FailedScheduling"], backend


def big_pod(**spec: Any) -> dict[str, Any]:
    return make_pod("p", cpu="3", schedulerName="policysched", **spec)


def test_reports_are_joined_in_rule_order_around_preemptions(tmp_path: Path) -> None:
    same_priority = make_pod("other", cpu="2", node="n")
    messages, _ = failures(
        tmp_path, [report("one", "first"), PREEMPTION.read_text(), report("two", "last")],
        make_node("n", cpu="4"), same_priority, big_pod())
    assert messages[0] == (
        "0/1 nodes are available: 1 Insufficient cpu. first, preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod., last")


def test_a_rule_whose_expression_is_true_says_nothing(tmp_path: Path) -> None:
    messages, _ = failures(tmp_path, [report("one", "ignored", expression="true")],
                           make_node("n", cpu="2"), big_pod())
    assert messages[0] == "0/1 nodes are available: 1 Insufficient cpu."


def test_a_nomination_drops_every_report(tmp_path: Path) -> None:
    # kube v1.34.12: "0/3 nodes are available: 3 Insufficient cpu." before binding the
    # preemptor, DynamicResources' reason dropped with DefaultPreemption's Success
    low = make_pod("low", cpu="2", node="n", priority=0)
    messages, backend = failures(tmp_path, [DRA.read_text(), PREEMPTION.read_text()],
                                 make_node("n", cpu="4"), low, big_pod(priority=100))
    assert messages[0] == "0/1 nodes are available: 1 Insufficient cpu."
    assert [e.pod for e in backend.evictions] == ["default/low"]


def test_an_unresolvable_report_alone_ends_post_filter(tmp_path: Path) -> None:
    low = make_pod("low", cpu="2", node="n", priority=0)
    messages, backend = failures(
        tmp_path, [report("one", "dropped"), report("two", "the end", unresolvable=True),
                   PREEMPTION.read_text()],
        make_node("n", cpu="4"), low, big_pod(priority=100))
    assert messages[0] == "0/1 nodes are available: 1 Insufficient cpu. the end"
    assert backend.evictions == []  # preemption, after it, did not run


def test_dynamic_resources_says_not_found_when_pre_filter_stopped_before_it(
        tmp_path: Path) -> None:
    """kube's DynamicResources PostFilter reads its PreFilter state: missing when an earlier
    plugin's PreFilter rejected the pod as unresolvable (v1.34.12: "0/3 nodes are available:
    pod affinity terms conflict. not found")."""
    stop = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: a-stop
spec:
  preFilter:
  - name: never
    expression: "false"
    message: stopped here
    unresolvable: true
"""
    messages, _ = failures(tmp_path, [stop, DRA.read_text(), PREEMPTION.read_text()],
                           make_node("n"), big_pod())
    assert messages[0] == "0/1 nodes are available: stopped here. not found"


def test_pre_filter_ran_is_false_for_the_policies_after_an_unresolvable_rejection(
        tmp_path: Path) -> None:
    stop = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: c-reject
spec:
  preFilter:
  - name: never
    expression: "false"
    message: rejected
    unresolvable: true
"""
    # each reports when preFilter did not get to it
    before = report("b-before", "before skipped", expression="preFilterRan")
    after = report("d-after", "after skipped", expression="preFilterRan")
    messages, _ = failures(tmp_path, [before, stop, after], make_node("n"), big_pod())
    assert messages[0] == "0/1 nodes are available: rejected. after skipped"


def test_no_post_filter_after_a_resolvable_pre_filter_rejection(tmp_path: Path) -> None:
    wait = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: c-wait
spec:
  preFilter:
  - name: later
    expression: "false"
    message: not yet
"""
    low = make_pod("low", cpu="2", node="n", priority=0)
    messages, backend = failures(tmp_path, [report("b-says", "said"), wait,
                                            PREEMPTION.read_text()],
                                 make_node("n"), low, big_pod(priority=100))
    assert messages[0] == "0/1 nodes are available: not yet."
    assert backend.evictions == [] and backend.pod("default/p")["status"].get(
        "nominatedNodeName") is None
