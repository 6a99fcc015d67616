"""Preemption (framework/preemption.py and the scheduler's use of it) against kube-scheduler
v1.34's DefaultPreemption: the cases of its unit tests (plugins/defaultpreemption/
default_preemption_test.go: TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate,
TestPreempt, TestPodEligibleToPreemptOthers), with the default profile on the in-memory
cluster. Resources, priorities and expectations are kube's; its nanosecond start times are
seconds here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework import preemption
from policysched.framework.preemption import (
    Candidate,
    DryRun,
    PreemptionInputs,
    budget_groups,
    dry_run,
    preempt,
)
from policysched.framework.profiles import Engine
from policysched.framework.runtime import CycleState, Framework
from policysched.framework.scheduler import Scheduler
from policysched.framework.status import Code, Status
from policysched.model.clock import SimulatedClock
from policysched.model.objects import format_timestamp, pod_info

PROFILE = "policysched"
START = 1_800_000_000
CREATED = format_timestamp(START - 3600)
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
NODE_RES = {"cpu": "200m", "memory": "400"}  # TestPostFilter's nodeRes


@cache
def engine() -> Engine:
    return load_engine([], None)


def node(name: str, resources: Mapping[str, str] = VERY_LARGE, pods: str = "32",
         **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {**resources, "pods": pods}}}


def pod(name: str, priority: int = LOW, requests: Mapping[str, str] | None = None, *,
        on: str = "", start: int | None = None, labels: Mapping[str, str] | None = None,
        nominated: str = "", **spec: Any) -> dict[str, Any]:
    """A pod of the default profile; ``on`` binds it, ``start`` (seconds after the epoch
    of the test) is its status.startTime, ``nominated`` its status.nominatedNodeName."""
    container: dict[str, Any] = {"name": "c", "image": "app"}
    if requests:
        container["resources"] = {"requests": dict(requests)}
    body: dict[str, Any] = {"schedulerName": PROFILE, "priority": priority,
                            "containers": [container], **spec}
    status: dict[str, Any] = {}
    if on:
        body["nodeName"] = on
        status["phase"] = "Running"
    if start is not None:
        status["startTime"] = format_timestamp(START - 1000 + start)
    if nominated:
        status["nominatedNodeName"] = nominated
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": CREATED,
                         "labels": dict(labels or {})},
            "spec": body, "status": status}


def budget(name: str, allowed: int, disrupted: Sequence[str] = (), **labels: str
           ) -> dict[str, Any]:
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: CREATED for p in disrupted}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}}, "status": status}


def cluster(*objects: dict[str, Any]) -> tuple[Scheduler, MemoryBackend]:
    backend = MemoryBackend(list(objects), SimulatedClock(START))
    scheduler = Scheduler(backend, engine().frameworks, engine().settings)
    scheduler.sync()
    return scheduler, backend


def run(scheduler: Scheduler) -> None:
    """Schedule until nothing is due, moving the clock to each backoff's end."""
    clock = scheduler.clock
    assert isinstance(clock, SimulatedClock)
    for _ in range(20):
        scheduler.sync()
        while scheduler.schedule_one():
            scheduler.sync()
        wakeup = scheduler.next_wakeup()
        if wakeup is None or not any(scheduler.queue.pending().values()):
            return
        clock.advance_to(max(wakeup, clock.now()))
        scheduler.advance()


def attempt(*objects: dict[str, Any]) -> tuple[Scheduler, MemoryBackend]:
    """One scheduling attempt of the one pending pod."""
    scheduler, backend = cluster(*objects)
    assert scheduler.schedule_one()
    scheduler.sync()
    return scheduler, backend


def evicted(backend: MemoryBackend) -> set[str]:
    return {e.pod.split("/")[1] for e in backend.evictions}


def failure(backend: MemoryBackend, name: str) -> str:
    return [e.message for e in backend.events
            if e.pod == f"default/{name}" and e.reason == "FailedScheduling"][-1]


def cycle(scheduler: Scheduler, name: str) -> tuple[Framework, CycleState, dict[str, Status]]:
    """The framework, the cycle state and every node's filter verdict for pod ``name``,
    as the scheduling cycle computes them before postFilter."""
    fwk = scheduler.profiles[PROFILE]
    found = scheduler.cache.pod(f"default/{name}")
    assert found is not None
    snapshot = scheduler.cache.snapshot()
    state = scheduler.cycle_state(found, snapshot)
    assert fwk.check_matches(state).is_success and fwk.run_pre_filter(state).status.is_success
    return fwk, state, {n.name: fwk.run_filter(state, n) for n in snapshot.nodes}


def dry(scheduler: Scheduler, name: str, offset: int = 0) -> DryRun:
    """DryRunPreemption over the nodes the filters reject as Unschedulable."""
    fwk, state, statuses = cycle(scheduler, name)
    rules = fwk.preemption_rules(state)
    assert not isinstance(rules, Status)
    snapshot = scheduler.cache.snapshot()
    potential = [n for n in snapshot.nodes if statuses[n.name].code is Code.UNSCHEDULABLE]
    return dry_run(fwk, state, rules[0], potential, PreemptionInputs(
        budgets=snapshot.disruption_budgets, offset=lambda n: offset))


def victims(candidate: Candidate | None) -> set[str]:
    assert candidate is not None
    return {v.name for v in candidate.victims}


# --------------------------------------------------------------------------- TestPostFilter
# The FailedScheduling text when no candidate is found: each node's reason (the filter that
# still fails once every lower-priority pod is gone, or no victims), absent nodes "not
# helpful". (Its preemption part: what comes before it is other code's.)

# kube v1.34's NodeResourcesFit rejects a pod asking more than a node's allocatable as
# unresolvable, so where kube's test starts from a node too small for the pod, the node here
# holds a higher-priority pod that stays.
def crowded(name: str) -> list[dict[str, Any]]:
    """A node where evicting the low-priority pod leaves too little cpu for a 300m pod."""
    return [node(name, NODE_RES), pod(f"{name}-high", HIGH, SMALL, on=name),
            pod(f"{name}-low", LOW, {"cpu": "50m"}, on=name)]


POST_FILTER = {
    "pod with tied priority is still unschedulable": (
        [node("node1", pods="1"), pod("p1", on="node1"), pod("p")],
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming "
        "pod."),
    "no candidate nodes found, no enough resource after removing low priority pods": (
        [*crowded("node1"), *crowded("node2"), pod("p", HIGH, {"cpu": "150m"})],
        "preemption: 0/2 nodes are available: 2 Insufficient cpu."),
    "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU "
    "resource": (
        [node("node1", pods="1"), *crowded("node2"), node("node3", pods="1"),
         pod("p1", HIGH, on="node1"), pod("p3", HIGH, on="node3"),
         pod("p", HIGH, {"cpu": "150m"})],
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims "
        "found for incoming pod."),
}


@pytest.mark.parametrize("case", list(POST_FILTER))
def test_the_reason_of_each_node_without_a_candidate(case: str) -> None:
    objects, expected = POST_FILTER[case]
    _, backend = attempt(*objects)
    assert failure(backend, "p").endswith(expected)
    assert not backend.evictions


def test_a_node_rejected_as_unresolvable_is_not_helped() -> None:
    """TestPostFilter "preemption should respect filteredNodesStatuses"."""
    tainted = node("node1", pods="1")
    tainted["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    _, backend = attempt(tainted, pod("p1", on="node1"), pod("p", HIGH))
    assert failure(backend, "p").endswith(
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_a_required_affinity_to_a_lower_priority_pod_cannot_be_preempted_for() -> None:
    """kube's dry run removes every lower-priority pod first: the pod's affinity target on
    node1 would be gone, so node1's reason is the affinity filter's (kube does not look
    for the victims the affinity needs: "not recommended"), not "no victims"."""
    target = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "hostname"}]}}
    _, backend = attempt(
        node("node1", hostname="node1"), node("node2", hostname="node2"),
        pod("web", LOW, VERY_LARGE, on="node1", labels={"app": "web"}),
        pod("p", HIGH, SMALL, labels={"app": "api"}, affinity=target))
    assert not backend.evictions
    assert failure(backend, "p").endswith(
        "preemption: 0/2 nodes are available: 1 Preemption is not helpful for scheduling, "
        "1 node(s) didn't match pod affinity rules.")


def test_a_node_that_needs_no_victim_is_kubes_dry_run_error() -> None:
    """TestDryRunPreemption "a pod that fits with no preemption": a node reported
    Unschedulable on which the pod fits with every pod back is no candidate; without any
    candidate kube's message is that error, and the nomination stays."""
    scheduler, _ = cluster(node("node1"), pod("low", LOW, SMALL, on="node1"),
                           pod("p", HIGH, SMALL))
    fwk, state, statuses = cycle(scheduler, "p")
    assert statuses["node1"].is_success
    found = preempt(fwk, state, scheduler.cache.snapshot().nodes,
                    {"node1": Status(Code.UNSCHEDULABLE, ("stale",))})
    assert (found.candidate, found.message, found.nomination) == (
        None, 'preemption: expected at least one victim pod on node "node1"', None)


# --------------------------------------------------------------------------- victims


def test_reprieve_most_important_first_then_pick_later_start_when_priorities_are_equal() -> None:
    """TestDryRunPreemption "mixed priority pods are preempted, pick later StartTime one
    when priorities are equal": of two equal low-priority pods, the one started last goes."""
    scheduler, _ = cluster(
        node("node1"), node("node2"),
        pod("p1.1", LOW, SMALL, on="node1", start=5),
        pod("p1.2", LOW, SMALL, on="node1", start=4),
        pod("p1.3", MID, MEDIUM, on="node1", start=3),
        pod("p1.4", HIGH, SMALL, on="node1", start=2),
        pod("p2", HIGH, LARGE, on="node2", start=1),
        pod("p", HIGH, LARGE))
    found = dry(scheduler, "p")
    assert [(c.node, victims(c)) for c in found.candidates] == [("node1", {"p1.1", "p1.3"})]


def test_medium_priority_pod_is_preempted_but_lower_priority_one_stays_as_it_is_small() -> None:
    scheduler, _ = cluster(
        node("node1"), node("node2"),
        pod("p1.1", LOW, SMALL, on="node1"), pod("p1.2", MID, LARGE, on="node1"),
        pod("p2", MID, LARGE, on="node2"), pod("p", HIGH, LARGE))
    found = dry(scheduler, "p")
    assert [(c.node, victims(c)) for c in found.candidates] == [
        ("node1", {"p1.2"}), ("node2", {"p2"})]


def test_preemption_resolves_a_topology_spread_failure() -> None:
    """TestDryRunPreemption / TestPreempt "preemption to resolve pod topology spread filter
    failure": removing a victim lowers its domain's count (kube's RemovePod)."""
    def spread(key: str) -> dict[str, Any]:
        return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}

    foo = {"foo": ""}
    nodes = [node("node-a", hostname="node-a", zone="zone1"),
             node("node-b", hostname="node-b", zone="zone1"),
             node("node-x", hostname="node-x", zone="zone2")]
    preemptor = pod("p", HIGH, labels=foo,
                    topologySpreadConstraints=[spread("zone"), spread("hostname")])
    scheduler, _ = cluster(
        *nodes, pod("pod-a1", MID, on="node-a", labels=foo),
        pod("pod-a2", LOW, on="node-a", labels=foo), pod("pod-b1", LOW, on="node-b", labels=foo),
        pod("pod-x1", HIGH, on="node-x", labels=foo), pod("pod-x2", HIGH, on="node-x", labels=foo),
        preemptor)
    assert [(c.node, victims(c)) for c in dry(scheduler, "p").candidates] == [
        ("node-a", {"pod-a2"}), ("node-b", {"pod-b1"})]
    # TestPreempt: the high-priority pods of node-a stay; node-b's low one goes
    scheduler, backend = attempt(
        *nodes, pod("p-a1", HIGH, on="node-a", labels=foo),
        pod("p-a2", HIGH, on="node-a", labels=foo), pod("p-b1", LOW, on="node-b", labels=foo),
        pod("p-x1", HIGH, on="node-x", labels=foo), pod("p-x2", HIGH, on="node-x", labels=foo),
        preemptor)
    assert scheduler.nominated["default/p"][0] == "node-b" and evicted(backend) == {"p-b1"}


# --------------------------------------------------------------------------- budgets

BUDGETS = {
    # TestDryRunPreemption "preemption with violation of same pdb"
    "same budget": ([budget("pdb", 1, app="foo")], ["p1.1", "p1.2"], 1),
    # "... the victim doesn't belong to DisruptedPods"
    "another pod disrupted": ([budget("pdb", 1, ["p2"], app="foo")], ["p1.1", "p1.2"], 1),
    # "... the victim belongs to DisruptedPods"
    "the victim disrupted": ([budget("pdb", 1, ["p1.2"], app="foo")], ["p1.1", "p1.2"], 0),
    # "... the victim which belongs to DisruptedPods is treated as 'nonViolating'"
    "one of three disrupted": ([budget("pdb", 1, ["p1.3"], app="foo")],
                               ["p1.1", "p1.2", "p1.3"], 1),
}


@pytest.mark.parametrize("case", list(BUDGETS))
def test_budget_violations_are_counted(case: str) -> None:
    budgets, names, violations = BUDGETS[case]
    scheduler, _ = cluster(node("node1"), *budgets,
                           *(pod(n, MID, MEDIUM, on="node1", labels={"app": "foo"})
                             for n in names),
                           pod("p", HIGH, VERY_LARGE))
    [candidate] = dry(scheduler, "p").candidates
    assert (victims(candidate), candidate.budget_violations) == (set(names), violations)


def test_pods_whose_eviction_violates_a_budget_are_reprieved_first() -> None:
    """kube reprieves the budget-violating pods before the others: of two equal pods of
    which one may go, the one its budget protects stays (even though it comes first)."""
    _, backend = attempt(
        node("node1"), budget("pdb", 0, app="db"),
        pod("cache", LOW, MEDIUM, on="node1"), pod("db", LOW, MEDIUM, on="node1",
                                                   labels={"app": "db"}),
        pod("p", HIGH, LARGE))
    assert evicted(backend) == {"cache"}


def test_budget_groups_follow_kubes_filter() -> None:
    """filterPodsWithPDBViolation: budgets count down in the pods' order; another
    namespace's budget, an empty selector and a pod without labels match nothing."""
    def info(name: str, namespace: str = "default", **labels: str) -> Any:
        obj = pod(name, labels=labels)
        obj["metadata"]["namespace"] = namespace
        return pod_info(obj)

    from policysched.model.disruption_budgets import disruption_budget
    budgets = [disruption_budget(budget("foo", 1, app="foo")),
               disruption_budget({**budget("all", 0), "spec": {"selector": {}}})]
    pods = [info("a", app="foo"), info("b", app="foo"), info("c", "other", app="foo"),
            info("d")]
    violating, others = budget_groups(pods, budgets)
    assert [p.name for p in violating] == ["b"]
    assert [p.name for p in others] == ["a", "c", "d"]


def test_fewest_budget_violations_win_before_priorities() -> None:
    """pickOneNodeForPreemption's first criterion: node2's victim has a higher priority,
    but node1's would violate its budget."""
    _, backend = attempt(
        node("node1"), node("node2"), budget("pdb", 0, app="foo"),
        pod("low", LOW, VERY_LARGE, on="node1", labels={"app": "foo"}),
        pod("mid", MID, VERY_LARGE, on="node2"), pod("p", HIGH, VERY_LARGE))
    assert evicted(backend) == {"mid"}


def test_the_search_looks_past_the_wanted_number_until_a_node_violates_no_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """TestDryRunPreemption "preemption looks past numCandidates until a non-PDB violating
    node is found" (at least 40 % of the nodes, at least 2): from offset 4, node5, node1
    (violating), node2 (violating: the list is full), node3 (violating none) — then stop."""
    monkeypatch.setattr(preemption, "MIN_CANDIDATE_NODES_PERCENTAGE", 40)
    monkeypatch.setattr(preemption, "MIN_CANDIDATE_NODES_ABSOLUTE", 2)
    foo = {"app": "foo"}
    scheduler, _ = cluster(
        *(node(f"node{i}") for i in range(1, 6)), budget("pdb", 0, app="foo"),
        pod("p1", MID, LARGE, on="node1", labels=foo), pod("p2", MID, LARGE, on="node2",
                                                           labels=foo),
        pod("p3", MID, LARGE, on="node3"), pod("p4", MID, LARGE, on="node4"),
        pod("p5", MID, LARGE, on="node5", labels=foo), pod("p", HIGH, LARGE))
    found = dry(scheduler, "p", offset=4)
    assert sorted((c.node, c.budget_violations) for c in found.candidates) == [
        ("node1", 1), ("node3", 0), ("node5", 1)]


@pytest.mark.parametrize(("very_high", "offset", "expected"), [
    # "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2"
    ((), 4, ["node1", "node5"]),
    # "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2"
    (("p2", "p5"), 4, ["node1", "node3"]),
    # "preemption offset across multiple scheduling cycles and wrap around"
    ((), 1, ["node2", "node3"]),
    ((), 3, ["node4", "node5"]),
])
def test_the_search_starts_at_the_offset_and_stops_at_the_wanted_number(
        monkeypatch: pytest.MonkeyPatch, very_high: tuple[str, ...], offset: int,
        expected: list[str]) -> None:
    monkeypatch.setattr(preemption, "MIN_CANDIDATE_NODES_PERCENTAGE", 40)
    monkeypatch.setattr(preemption, "MIN_CANDIDATE_NODES_ABSOLUTE", 1)
    scheduler, _ = cluster(
        *(node(f"node{i}") for i in range(1, 6)),
        *(pod(f"p{i}", VERY_HIGH if f"p{i}" in very_high else MID, LARGE, on=f"node{i}")
          for i in range(1, 6)),
        pod("p", HIGH, LARGE))
    assert sorted(c.node for c in dry(scheduler, "p", offset).candidates) == expected


def test_below_100_nodes_every_node_is_examined_and_no_offset_drawn() -> None:
    """With fewer than 100 candidate nodes kube examines them all: the random offset
    changes nothing, so none is drawn (the engine's random choices stay as they were)."""
    def no_offset(n: int) -> int:
        raise AssertionError("no offset wanted")

    scheduler, _ = cluster(*(node(f"node{i}") for i in range(1, 6)),
                           *(pod(f"p{i}", MID, LARGE, on=f"node{i}") for i in range(1, 6)),
                           pod("p", HIGH, LARGE))
    fwk, state, statuses = cycle(scheduler, "p")
    nodes = scheduler.cache.snapshot().nodes
    found = preempt(fwk, state, nodes, statuses, PreemptionInputs(offset=no_offset))
    assert found.candidate is not None and found.candidate.node == "node1"
    assert preemption.candidates_wanted(99) == 99
    assert preemption.candidates_wanted(150) == 100
    assert preemption.candidates_wanted(2000) == 200


# --------------------------------------------------------------------------- the best node

SELECT_BEST = {
    "node with min highest priority pod is picked": ([
        ("node1", "p1.1", MID, MEDIUM, 0), ("node1", "p1.2", MID, LARGE, 0),
        ("node2", "p2.1", MID, MEDIUM, 0), ("node2", "p2.2", LOW, MEDIUM, 0),
        ("node3", "p3.1", LOW, MEDIUM, 0), ("node3", "p3.2", LOW, MEDIUM, 0)], "node3"),
    "when highest priorities are the same, minimum sum of priorities is picked": ([
        ("node1", "p1.1", MID, MEDIUM, 0), ("node1", "p1.2", MID, LARGE, 0),
        ("node2", "p2.1", MID, LARGE, 0), ("node2", "p2.2", LOW, MEDIUM, 0),
        ("node3", "p3.1", MID, MEDIUM, 0), ("node3", "p3.2", MID, MEDIUM, 0)], "node2"),
    "when highest priority and sum are the same, minimum number of pods is picked": ([
        ("node1", "p1.1", MID, SMALL, 0), ("node1", "p1.2", NEG, SMALL, 0),
        ("node1", "p1.3", MID, SMALL, 0), ("node1", "p1.4", NEG, SMALL, 0),
        ("node2", "p2.1", MID, LARGE, 0), ("node2", "p2.2", NEG, MEDIUM, 0),
        ("node3", "p3.1", MID, MEDIUM, 0), ("node3", "p3.2", NEG, SMALL, 0),
        ("node3", "p3.3", LOW, SMALL, 0)], "node2"),
    "sum of adjusted priorities is considered": ([
        ("node1", "p1.1", MID, SMALL, 0), ("node1", "p1.2", NEG, SMALL, 0),
        ("node1", "p1.3", NEG, SMALL, 0),
        ("node2", "p2.1", MID, LARGE, 0), ("node2", "p2.2", NEG, MEDIUM, 0),
        ("node3", "p3.1", MID, MEDIUM, 0), ("node3", "p3.2", NEG, SMALL, 0),
        ("node3", "p3.3", LOW, SMALL, 0)], "node2"),
    "same priority, same number of victims, different start time for each node's pod": ([
        ("node1", "p1.1", MID, MEDIUM, 2), ("node1", "p1.2", MID, MEDIUM, 2),
        ("node2", "p2.1", MID, MEDIUM, 3), ("node2", "p2.2", MID, MEDIUM, 3),
        ("node3", "p3.1", MID, MEDIUM, 1), ("node3", "p3.2", MID, MEDIUM, 1)], "node2"),
    "same priority, same number of victims, different start time for all pods": ([
        ("node1", "p1.1", MID, MEDIUM, 4), ("node1", "p1.2", MID, MEDIUM, 2),
        ("node2", "p2.1", MID, MEDIUM, 5), ("node2", "p2.2", MID, MEDIUM, 1),
        ("node3", "p3.1", MID, MEDIUM, 3), ("node3", "p3.2", MID, MEDIUM, 6)], "node3"),
    "different priority, same number of victims, different start time for all pods": ([
        ("node1", "p1.1", LOW, MEDIUM, 4), ("node1", "p1.2", MID, MEDIUM, 2),
        ("node2", "p2.1", MID, MEDIUM, 6), ("node2", "p2.2", LOW, MEDIUM, 1),
        ("node3", "p3.1", LOW, MEDIUM, 3), ("node3", "p3.2", MID, MEDIUM, 5)], "node2"),
}


@pytest.mark.parametrize("case", list(SELECT_BEST))
def test_the_best_candidate(case: str) -> None:
    """TestSelectBestCandidate: the preemptor needs a whole node (veryLargeRes)."""
    placed, expected = SELECT_BEST[case]
    scheduler, backend = attempt(
        node("node1"), node("node2"), node("node3"),
        *(pod(name, priority, requests, on=where, start=start)
          for where, name, priority, requests, start in placed),
        pod("p", HIGH, VERY_LARGE))
    assert scheduler.nominated["default/p"][0] == expected
    assert evicted(backend) == {name for where, name, *_ in placed if where == expected}


def test_non_overlapping_lowest_high_priority_sum_and_number_of_pods() -> None:
    """TestSelectBestCandidate "non-overlapping lowest high priority, sum priorities, and
    number of pods" (a very-high-priority preemptor)."""
    placed = [("node1", "p1.1", MID, SMALL), ("node1", "p1.2", LOW, SMALL),
              ("node1", "p1.3", LOW, SMALL), ("node2", "p2.1", HIGH, LARGE),
              ("node3", "p3.1", MID, MEDIUM), ("node3", "p3.2", LOW, SMALL),
              ("node3", "p3.3", LOW, SMALL), ("node3", "p3.4", LOW, MEDIUM),
              ("node4", "p4.1", MID, MEDIUM), ("node4", "p4.2", MID, SMALL),
              ("node4", "p4.3", MID, SMALL), ("node4", "p4.4", NEG, SMALL)]
    scheduler, _ = attempt(*(node(f"node{i}") for i in range(1, 5)),
                           *(pod(name, priority, requests, on=where, start=0)
                             for where, name, priority, requests in placed),
                           pod("p", VERY_HIGH, VERY_LARGE))
    assert scheduler.nominated["default/p"][0] == "node1"


def tied(scheduler: Scheduler, name: str) -> dict[str, set[str]]:
    """The candidates preemption finds as good as its best for pod ``name``: node → victims."""
    fwk, state, statuses = cycle(scheduler, name)
    found = preempt(fwk, state, scheduler.cache.snapshot().nodes, statuses)
    assert found.candidate is not None and found.candidate in found.tied
    return {c.node: victims(c) for c in found.tied}


def test_candidates_tied_on_every_criterion_are_all_reported() -> None:
    """TestSelectBestCandidate "a pod that fits on both nodes when lower priority pods are
    preempted" (expected: either node): kube picks either, so both are reported with their
    victims; the nomination is the first in node order."""
    scheduler, _ = cluster(node("node1"), node("node2"), node("node3"),
                           pod("p1", MID, LARGE, on="node1", start=0),
                           pod("p2", MID, LARGE, on="node2", start=0),
                           pod("p3", HIGH, LARGE, on="node3", start=0), pod("p", HIGH, LARGE))
    assert tied(scheduler, "p") == {"node1": {"p1"}, "node2": {"p2"}}


@pytest.mark.parametrize("case", [c for c in SELECT_BEST if c.startswith("same priority")])
def test_a_later_criterion_breaks_the_tie(case: str) -> None:
    """Candidates equal on the first criteria but not on the start time: only the best is
    tied with itself."""
    placed, expected = SELECT_BEST[case]
    scheduler, _ = cluster(node("node1"), node("node2"), node("node3"),
                           *(pod(name, priority, requests, on=where, start=start)
                             for where, name, priority, requests, start in placed),
                           pod("p", HIGH, VERY_LARGE))
    assert tied(scheduler, "p") == {expected: {n for w, n, *_ in placed if w == expected}}


def test_the_decision_carries_the_tied_candidates() -> None:
    scheduler, _ = cluster(node("node1"), node("node2"),
                           pod("p1", MID, LARGE, on="node1", start=0),
                           pod("p2", MID, LARGE, on="node2", start=0), pod("p", HIGH, LARGE))
    fwk, state, _ = cycle(scheduler, "p")
    decision = scheduler.decide(fwk, state, scheduler.cache.snapshot())
    assert decision.nomination == "node1"
    assert {c.node: victims(c) for c in decision.tied} == {"node1": {"p1"}, "node2": {"p2"}}


def test_basic_preemption_then_the_pod_binds_to_its_nominated_node() -> None:
    """TestPreempt "basic preemption logic", then the retry."""
    scheduler, backend = attempt(
        node("node1"), node("node2"), node("node3"),
        pod("p1.1", LOW, SMALL, on="node1"), pod("p1.2", LOW, SMALL, on="node1"),
        pod("p2.1", HIGH, LARGE, on="node2"), pod("p3.1", MID, MEDIUM, on="node3"),
        pod("p", HIGH, VERY_LARGE, preemptionPolicy="PreemptLowerPriority"))
    assert evicted(backend) == {"p1.1", "p1.2"}
    stored = backend.pod("default/p")
    assert stored is not None and stored["status"]["nominatedNodeName"] == "node1"
    assert {e.pod: e.message for e in backend.events if e.reason == "Preempted"} == {
        f"default/{v}": f"Preempted by pod {stored['metadata']['uid']} on node node1"
        for v in ("p1.1", "p1.2")}
    condition = next(c for c in backend.conditions if c.type == "DisruptionTarget")
    assert (condition.reason, condition.message) == (
        "PreemptionByScheduler", "policysched: preempting to accommodate a higher priority pod")
    run(scheduler)
    assert scheduler.records["default/p"].node == "node1"
    assert scheduler.records["default/p"].victims == ["default/p1.1", "default/p1.2"]


def test_no_preemption_with_preemption_policy_never() -> None:
    """TestPreempt "no preempting in pod"."""
    _, backend = attempt(
        node("node1"), pod("p1.1", LOW, SMALL, on="node1"), pod("p1.2", LOW, VERY_LARGE,
                                                                 on="node1"),
        pod("p", HIGH, VERY_LARGE, preemptionPolicy="Never"))
    assert not backend.evictions
    assert failure(backend, "p").endswith(
        "preemption: not eligible due to preemptionPolicy=Never.")


# --------------------------------------------------------------------------- nominated pods


def test_pods_nominated_to_a_node_count_in_its_victim_selection() -> None:
    """kube's SelectVictimsOnNode filters with the pods nominated to the node (of at least
    the pod's priority, RunFilterPluginsWithNominatedPods): "a" was nominated to node1 by
    its preemption; "b" (lower priority) cannot get node1's last pod evicted for room
    that "a" is promised — node1 stays Insufficient cpu, nothing more is evicted."""
    scheduler, backend = attempt(
        node("node1", {"cpu": "3", "memory": "1Gi"}),
        *(pod(f"low-{i}", LOW, {"cpu": "1"}, on="node1") for i in range(3)),
        pod("a", HIGH, {"cpu": "2"}))
    assert len(backend.evictions) == 2 and scheduler.nominated["default/a"][0] == "node1"
    backend.add_object(pod("b", MID, {"cpu": "2"}))
    scheduler.sync()
    b = scheduler.cache.pod("default/b")
    assert b is not None
    snapshot = scheduler.cache.snapshot()
    decision = scheduler.decide(scheduler.profiles[PROFILE], scheduler.cycle_state(b, snapshot),
                                snapshot)
    assert decision.node is None and len(backend.evictions) == 2
    assert decision.message.endswith("preemption: 0/1 nodes are available: 1 Insufficient cpu.")


def test_a_nomination_in_the_cluster_counts_and_its_node_is_tried_first() -> None:
    """A pending pod's status.nominatedNodeName (an earlier preemption) nominates it: a
    lower-priority pod may not take the room, and the pod itself goes to that node
    without the others being scored (kube's evaluateNominatedNode) — node2 is emptier."""
    nodes = [node("node1", {"cpu": "2", "memory": "1Gi"}),
             node("node2", {"cpu": "8", "memory": "1Gi"})]
    nominated = pod("a", HIGH, {"cpu": "2"}, nominated="node1")
    scheduler, _ = cluster(*nodes, nominated, pod("b", MID, {"cpu": "2"}))
    assert scheduler.nominated["default/a"][0] == "node1"
    fwk, _, statuses = cycle(scheduler, "b")
    assert statuses["node1"].is_success  # the filters alone: room on node1
    b = scheduler.cache.pod("default/b")
    assert b is not None
    snapshot = scheduler.cache.snapshot()
    assert scheduler.decide(fwk, scheduler.cycle_state(b, snapshot), snapshot).node == "node2"
    scheduler, _ = cluster(*nodes, nominated)
    run(scheduler)
    assert scheduler.records["default/a"].node == "node1"


def test_a_gated_pod_is_nominated_once_admitted() -> None:
    """kube's queue nominates an added pod when it enters activeQ: not while a
    schedulingGate holds it."""
    gated = pod("g", MID, nominated="node1", schedulingGates=[{"name": "hold"}])
    scheduler, backend = cluster(node("node1"), gated)
    assert "default/g" not in scheduler.nominated
    del gated["spec"]["schedulingGates"]
    backend.update_object(gated)
    scheduler.sync()
    assert scheduler.nominated["default/g"][0] == "node1"


def test_a_failure_without_candidates_clears_the_nomination_and_one_not_eligible_keeps_it(
        ) -> None:
    """kube's NominatingInfo: no candidate clears the pod's nominatedNodeName (in the
    engine and in its status); preemptionPolicy Never (not eligible) leaves it."""
    full = [node("node1", {"cpu": "1", "memory": "1Gi"}),
            pod("big", VERY_HIGH, {"cpu": "1"}, on="node1")]
    scheduler, backend = attempt(*full, pod("p", HIGH, {"cpu": "1"}, nominated="node1"))
    stored = backend.pod("default/p")
    assert stored is not None and "nominatedNodeName" not in stored["status"]
    assert "default/p" not in scheduler.nominated
    scheduler, backend = attempt(*full, pod("p", HIGH, {"cpu": "1"}, nominated="node1",
                                            preemptionPolicy="Never"))
    stored = backend.pod("default/p")
    assert stored is not None and stored["status"]["nominatedNodeName"] == "node1"
    assert scheduler.nominated["default/p"][0] == "node1"


def test_lower_priority_pods_nominated_to_the_chosen_node_lose_their_nomination() -> None:
    """prepareCandidate clears the nominatedNodeName of the lower-priority pods nominated
    to the node it frees for a higher-priority one."""
    scheduler, backend = cluster(node("node1", {"cpu": "1", "memory": "1Gi"}),
                                 pod("low", LOW, {"cpu": "1"}, on="node1"),
                                 pod("mid", MID, {"cpu": "1"}, nominated="node1"),
                                 pod("p", HIGH, {"cpu": "1"}))
    assert scheduler.nominated["default/mid"][0] == "node1"
    assert scheduler.schedule_one()  # p, first in the queue
    scheduler.sync()
    assert evicted(backend) == {"low"}
    stored = backend.pod("default/mid")
    assert stored is not None and "nominatedNodeName" not in stored["status"]
    assert "default/mid" not in scheduler.nominated


# --------------------------------------------------------------------------- terminating


def terminating(name: str, preempted: bool, **kwargs: Any) -> dict[str, Any]:
    obj = pod(name, **kwargs)
    obj["metadata"]["deletionTimestamp"] = CREATED
    if preempted:
        obj["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                        "reason": "PreemptionByScheduler"}]
    return obj


def test_a_victim_terminating_on_the_nominated_node_makes_the_pod_wait() -> None:
    """TestPodEligibleToPreemptOthers: a pod being deleted by an earlier preemption on
    the pod's nominated node: not eligible (no second round of evictions); a pod merely
    terminating does not count."""
    node1 = node("node1", {"cpu": "1", "memory": "1Gi"})
    preemptor = pod("p", HIGH, {"cpu": "1"}, nominated="node1")
    _, backend = attempt(node1, terminating("v", True, priority=LOW, requests={"cpu": "1"},
                                            on="node1"), preemptor)
    assert not backend.evictions
    assert failure(backend, "p").endswith(
        "preemption: not eligible due to a terminating pod on the nominated node.")
    _, backend = attempt(node1, terminating("v", False, priority=LOW, requests={"cpu": "1"},
                                            on="node1"), preemptor)
    assert evicted(backend) == {"v"}


def test_a_nominated_node_rejected_as_unresolvable_does_not_hold_preemption_back() -> None:
    """TestPodEligibleToPreemptOthers "Pod with nominated node": its node now rejects it
    as unresolvable (a taint), so the terminating victim there does not matter."""
    tainted = node("node1", {"cpu": "1", "memory": "1Gi"})
    tainted["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    other = node("node2", {"cpu": "1", "memory": "1Gi"})
    _, backend = attempt(tainted, other,
                         terminating("v", True, priority=LOW, requests={"cpu": "1"}, on="node1"),
                         pod("w", LOW, {"cpu": "1"}, on="node2"),
                         pod("p", HIGH, {"cpu": "1"}, nominated="node1"))
    assert evicted(backend) == {"w"}


def test_a_pending_pod_being_deleted_is_not_scheduled() -> None:
    """kube's skipPodSchedule: a FailedScheduling event, no attempt, not requeued."""
    scheduler, backend = attempt(node("node1"), terminating("gone", False))
    assert scheduler.records["default/gone"].attempts == 0
    assert [e.message for e in backend.events] == ["skip schedule deleting pod: default/gone"]
    assert not backend.bindings and not scheduler.schedule_one()


# --------------------------------------------------------------------------- waiting pods

WAIT = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: hold, labels: {policysched.io/profile: policysched}}
spec:
  match: "'hold' in pod.labels"
  permit:
  - name: hold
    expression: "false"
    onFalse: Wait
    timeoutSeconds: 600
"""


def test_a_victim_waiting_at_permit_is_rejected_not_deleted(tmp_path: Any) -> None:
    """kube's PreemptPod: a waiting pod is rejected ("preempted") and goes back to the
    queue; it is not deleted."""
    (tmp_path / "hold.yaml").write_text(WAIT)
    held = load_engine([str(tmp_path)], None)
    backend = MemoryBackend([node("node1", {"cpu": "1", "memory": "1Gi"}),
                             pod("waiting", LOW, {"cpu": "1"}, labels={"hold": "yes"})],
                            SimulatedClock(START))
    scheduler = Scheduler(backend, held.frameworks, held.settings)
    scheduler.sync()
    assert scheduler.schedule_one() and "default/waiting" in scheduler.waiting
    backend.add_object(pod("p", HIGH, {"cpu": "1"}))
    scheduler.sync()
    assert scheduler.schedule_one()
    assert "default/waiting" not in scheduler.waiting and not backend.evictions
    assert backend.pod("default/waiting") is not None
    assert failure(backend, "waiting") == "0/1 nodes are available: 1 preempted."
    assert scheduler.records["default/p"].victims == ["default/waiting"]
