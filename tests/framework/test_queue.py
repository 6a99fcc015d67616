"""SchedulingQueue: kube-scheduler's queueing semantics under a simulated clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from policysched.framework.queue import (
    ACTIVE,
    BACKOFF,
    GATED,
    IN_FLIGHT,
    UNSCHEDULABLE,
    GateRejection,
    PreEnqueueResult,
    QueuedPod,
    SchedulingQueue,
)


@dataclass
class FakeClock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now

    def advance_to(self, when: float) -> None:
        assert when >= self.now, "time never goes back"
        self.now = when


@dataclass(frozen=True)
class Pod:
    key: str
    priority: int = 0
    labels: dict[str, str] = field(default_factory=dict, hash=False)


def by_priority(a: Any, b: Any) -> bool:
    return bool(a.priority > b.priority)


def make_queue(clock: FakeClock, **kwargs: Any) -> SchedulingQueue:
    return SchedulingQueue(clock, by_priority, **kwargs)


def fail(queue: SchedulingQueue, key: str, **requeue_args: Any) -> QueuedPod:
    """Pop ``key`` (it must be the head of activeQ) and requeue it as failed."""
    qp = queue.pop()
    assert qp is not None and qp.key == key
    queue.requeue(qp, **requeue_args)
    return qp


# ---------------------------------------------------------------- ordering


def test_pop_orders_by_less_and_breaks_ties_fifo() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("low-1", 1))
    queue.add(Pod("high-1", 10))
    clock.advance_to(101)
    queue.add(Pod("low-2", 1))
    queue.add(Pod("high-2", 10))
    queue.add(Pod("low-3", 1))
    order = []
    while (qp := queue.pop()) is not None:
        order.append(qp.key)
    assert order == ["high-1", "high-2", "low-1", "low-2", "low-3"]


def test_same_timestamp_ties_keep_insertion_order() -> None:
    queue = SchedulingQueue(FakeClock())  # no less: pure FIFO
    for name in ["c", "a", "b", "e", "d"]:
        queue.add(Pod(name))
    assert [queue.pop().key for _ in range(5)] == ["c", "a", "b", "e", "d"]  # type: ignore[union-attr]


def test_sort_key_orders_active_queue() -> None:
    queue = SchedulingQueue(FakeClock(), sort_key=lambda pod: (-pod.priority,))
    for name, priority in [("a", 1), ("b", 5), ("c", 5), ("d", 3)]:
        queue.add(Pod(name, priority))
    assert [queue.pop().key for _ in range(4)] == ["b", "c", "d", "a"]  # type: ignore[union-attr]


def test_sort_key_wins_over_less_and_less_decides_without_one() -> None:
    clock = FakeClock()
    keyed = SchedulingQueue(clock, by_priority, sort_key=lambda pod: (pod.priority,))
    unkeyed = SchedulingQueue(clock, by_priority, sort_key=lambda pod: None)
    for queue in (keyed, unkeyed):
        for name, priority in (("a", 1), ("b", 5), ("c", 3)):
            queue.add(Pod(name, priority))
    assert [keyed.pop().key for _ in range(3)] == ["a", "c", "b"]  # type: ignore[union-attr]
    assert [unkeyed.pop().key for _ in range(3)] == ["b", "c", "a"]  # type: ignore[union-attr]


def test_pop_counts_attempts_cycles_and_first_attempt_time() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    assert queue.pop() is None
    queue.add(Pod("p"))
    queue.add(Pod("q"))
    clock.advance_to(103)
    first = fail(queue, "p", error=True)
    assert (first.attempts, first.cycle, first.initial_attempt) == (1, 1, 103)
    clock.advance_to(110)
    queue.flush()
    second = queue.pop()
    assert second is not None and second.key == "q" and second.cycle == 2
    again = queue.pop()
    assert again is first
    assert (again.attempts, again.cycle, again.initial_attempt) == (2, 3, 103)
    assert queue.scheduling_cycle == 3


def test_update_of_active_pod_reorders_it() -> None:
    queue = make_queue(FakeClock())
    queue.add(Pod("a", 5))
    queue.add(Pod("b", 1))
    queue.update(Pod("b", 9), spec_changed=True)
    assert [queue.pop().key for _ in range(2)] == ["b", "a"]  # type: ignore[union-attr]
    assert queue.pop() is None  # the stale heap entry of "b" is not popped twice


# ---------------------------------------------------------------- backoff


def test_backoff_doubles_from_one_second_and_caps_at_ten() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("p"))
    waits = []
    for _ in range(6):
        qp = fail(queue, "p", error=True)
        assert qp.queue == BACKOFF
        failed_at = clock.now
        assert qp.backoff_until is not None
        waits.append(qp.backoff_until - failed_at)
        assert queue.next_wakeup() == qp.backoff_until
        clock.advance_to(qp.backoff_until - 0.001)
        queue.flush()
        assert queue.pop() is None, "still backing off"
        clock.advance_to(qp.backoff_until)
        assert queue.flush() == 1
        assert qp.queue == ACTIVE
    assert waits == [1, 2, 4, 8, 10, 10]
    assert [queue.backoff_duration(n) for n in range(1, 8)] == [1, 2, 4, 8, 10, 10, 10]


def test_custom_backoff_bounds() -> None:
    queue = SchedulingQueue(FakeClock(), initial_backoff=0.5, max_backoff=3.0)
    assert [queue.backoff_duration(n) for n in range(1, 6)] == [0.5, 1, 2, 3, 3]
    with pytest.raises(ValueError):
        SchedulingQueue(FakeClock(), initial_backoff=0)
    with pytest.raises(ValueError):
        SchedulingQueue(FakeClock(), initial_backoff=5, max_backoff=2)


# ---------------------------------------------------------------- retry_after


def test_retry_after_requeues_exactly_then_without_backoff() -> None:
    """The seed article's delay: rejected at t0 with retryAfter 15 s, popped again at
    t0 + 15 exactly (kube-scheduler took ~85 s)."""
    clock = FakeClock(1000.0)
    queue = make_queue(clock)
    queue.add(Pod("delayed"))
    qp = queue.pop()
    assert qp is not None
    assert queue.requeue(qp, retry_after=15.0, unschedulable_by=["delay/not-yet"]) == BACKOFF
    assert qp.retry_at == 1015.0 and qp.backoff_until is None
    assert qp.unschedulable_by == frozenset({"delay/not-yet"})
    assert queue.next_wakeup() == 1015.0
    assert queue.move_all("NodeAdd") == 0  # an event does not cut the rule's wait short
    clock.advance_to(1014.999)
    queue.flush()
    assert queue.pop() is None
    clock.advance_to(queue.next_wakeup())  # type: ignore[arg-type]
    queue.flush()
    again = queue.pop()
    assert again is qp and clock.now == 1015.0
    assert again.retry_at is None
    assert queue.incoming[(ACTIVE, "RetryAfterComplete")] == 1


def test_simulated_loop_binds_the_delayed_pod_at_fifteen_seconds() -> None:
    """A driver jumping the clock to next_wakeup binds the article's pod at 15 s."""
    clock = FakeClock(0.0)
    queue = make_queue(clock)
    created = {"busybox": 0.0}
    queue.add(Pod("busybox"))
    bound_at = None
    for _ in range(100):
        queue.flush()
        qp = queue.pop()
        if qp is None:
            wake = queue.next_wakeup()
            if wake is None:
                break
            clock.advance_to(wake)
            continue
        remaining = created[qp.key] + 15 - clock.now
        if remaining > 0:  # the delay preFilter rule rejects, saying when to retry
            queue.requeue(qp, retry_after=remaining)
        else:
            queue.done(qp.key)
            bound_at = clock.now
    assert bound_at == 15.0
    assert len(queue) == 0 and "busybox" not in queue


def test_non_positive_retry_after_falls_back_to_backoff() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("p"))
    qp = fail(queue, "p", retry_after=0.0)
    assert qp.queue == BACKOFF and qp.retry_at is None and qp.backoff_until == 101.0
    assert queue.pop() is None  # no hot loop at a frozen clock


def test_error_takes_precedence_over_retry_after() -> None:
    queue = make_queue(FakeClock())
    queue.add(Pod("p"))
    qp = fail(queue, "p", error=True, retry_after=60.0)
    assert qp.retry_at is None and queue.next_wakeup() == 101.0


# ---------------------------------------------------------------- unschedulable and moves


def test_failure_without_event_parks_pod_unschedulable_for_five_minutes() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("p"))
    qp = fail(queue, "p")
    assert qp.queue == UNSCHEDULABLE and qp.timestamp == 100.0
    assert queue.next_wakeup() == 400.0
    clock.advance_to(399.999)
    assert queue.flush() == 0 and qp.queue == UNSCHEDULABLE
    clock.advance_to(400.0)
    assert queue.flush() == 1 and qp.queue == ACTIVE  # backoff long expired
    assert queue.incoming[(ACTIVE, "UnschedulableTimeout")] == 1
    assert queue.next_wakeup() is None


def test_move_request_during_cycle_sends_failed_pod_to_backoff() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("p"))
    qp = queue.pop()
    assert qp is not None
    queue.move_all("NodeAdd")  # a node appeared while p was being scheduled
    assert queue.requeue(qp) == BACKOFF
    clock.advance_to(101.0)
    queue.flush()
    assert queue.pop() is qp


def test_move_request_before_cycle_does_not_count() -> None:
    queue = make_queue(FakeClock())
    queue.add(Pod("p"))
    queue.move_all("NodeAdd")
    qp = queue.pop()
    assert qp is not None
    assert queue.requeue(qp) == UNSCHEDULABLE


def test_move_request_during_a_later_cycle_still_counts() -> None:
    queue = make_queue(FakeClock())
    queue.add(Pod("p", 5))
    queue.add(Pod("q", 1))
    p = queue.pop()
    q = queue.pop()
    assert p is not None and q is not None
    queue.move_all("PodDelete")
    assert queue.requeue(p) == BACKOFF
    assert queue.requeue(q) == BACKOFF


def test_move_all_sends_backing_off_pods_to_backoff_and_others_to_active() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("old"))
    fail(queue, "old")
    clock.advance_to(150.0)
    queue.add(Pod("new"))
    new = fail(queue, "new")
    clock.advance_to(150.5)  # new still backing off (1 s), old's backoff long over
    assert queue.move_all("NodeUpdate") == 2
    assert queue.get("old").queue == ACTIVE  # type: ignore[union-attr]
    assert new.queue == BACKOFF
    assert queue.next_wakeup() == 151.0
    assert queue.incoming[(BACKOFF, "NodeUpdate")] == 1


def test_move_all_only_moves_relevant_pods() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("cpu", 2))
    queue.add(Pod("taint", 1))
    fail(queue, "cpu", unschedulable_by=["fit/cpu"])
    fail(queue, "taint", unschedulable_by=["taints/untolerated"])
    clock.advance_to(102.0)  # both backoffs over
    moved = queue.move_all("PodDelete", lambda qp: "fit/cpu" in qp.unschedulable_by)
    assert moved == 1
    assert queue.get("cpu").queue == ACTIVE  # type: ignore[union-attr]
    assert queue.get("taint").queue == UNSCHEDULABLE  # type: ignore[union-attr]


def test_update_of_unschedulable_pod_moves_it_only_when_spec_changed() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("p"))
    qp = fail(queue, "p")
    queue.update(Pod("p", labels={"status": "patched"}), spec_changed=False)
    assert qp.queue == UNSCHEDULABLE
    assert qp.pod.labels == {"status": "patched"}
    queue.update(Pod("p", 3), spec_changed=True)
    assert qp.queue == BACKOFF  # still within its 1 s backoff
    clock.advance_to(101.0)
    queue.flush()
    assert qp.queue == ACTIVE and qp.pod.priority == 3


def test_update_during_cycle_sends_failed_pod_to_backoff() -> None:
    queue = make_queue(FakeClock())
    queue.add(Pod("p"))
    qp = queue.pop()
    assert qp is not None
    queue.update(Pod("p", 1), spec_changed=True)
    assert qp.queue == IN_FLIGHT and qp.pod.priority == 1
    assert queue.requeue(qp) == BACKOFF


def test_spec_update_cancels_a_retry_timer() -> None:
    queue = make_queue(FakeClock())
    queue.add(Pod("p"))
    qp = fail(queue, "p", retry_after=15.0)
    queue.update(Pod("p", 1), spec_changed=False)
    assert qp.retry_at == 115.0
    queue.update(Pod("p", 2), spec_changed=True)
    assert qp.queue == ACTIVE and qp.retry_at is None


def test_unknown_update_adds_and_known_add_updates() -> None:
    queue = make_queue(FakeClock())
    queue.update(Pod("p"), spec_changed=True)
    assert queue.get("p").queue == ACTIVE  # type: ignore[union-attr]
    queue.add(Pod("p", 4))
    assert len(queue) == 1 and queue.get("p").pod.priority == 4  # type: ignore[union-attr]


# ---------------------------------------------------------------- activate


def test_activate_moves_waiting_pods_now() -> None:
    queue = make_queue(FakeClock())
    for name in ("a", "b", "c"):
        queue.add(Pod(name))
    fail(queue, "a")
    fail(queue, "b", error=True)
    fail(queue, "c", retry_after=30.0)
    assert sorted(queue.activate(["a", "b", "c", "missing"])) == ["a", "b", "c"]
    assert queue.pending()[ACTIVE] == 3
    assert queue.get("c").retry_at is None  # type: ignore[union-attr]
    assert queue.next_wakeup() is None
    assert queue.activate(["a"]) == []  # already active


def test_activate_during_cycle_returns_failed_pod_to_active() -> None:
    queue = make_queue(FakeClock())
    queue.add(Pod("sibling"))
    qp = queue.pop()
    assert qp is not None
    assert queue.activate(["sibling"]) == []
    assert queue.requeue(qp) == ACTIVE
    assert queue.pop() is qp


# ---------------------------------------------------------------- preEnqueue gates


def test_gated_pod_waits_and_is_admitted_when_gate_opens_on_flush() -> None:
    clock = FakeClock(0.0)

    def not_before_ten(pod: Any) -> PreEnqueueResult:
        return None if clock.now >= 10 else "delay/not-before: wait until t=10"

    queue = make_queue(clock, pre_enqueue=not_before_ten)
    queue.add(Pod("p"))
    qp = queue.get("p")
    assert qp is not None and qp.queue == GATED
    assert qp.gated_by == "delay/not-before: wait until t=10"
    assert queue.pending() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 1}
    assert queue.pop() is None
    assert queue.next_wakeup() is None  # periodic re-checks are not reported
    clock.advance_to(9.5)
    queue.flush()
    assert qp.queue == GATED
    clock.advance_to(10.0)
    assert queue.flush() == 0  # re-checked at 9.5: the next periodic re-check is at 10.5
    clock.advance_to(10.5)
    assert queue.flush() == 1
    assert qp.queue == ACTIVE and qp.gated_by is None and qp.gate_message is None
    assert queue.pop() is qp


def test_zero_recheck_period_rechecks_gates_on_every_flush() -> None:
    clock = FakeClock(0.0)
    queue = make_queue(clock, pre_enqueue=lambda pod: None if clock.now >= 10 else "d/r",
                       gate_recheck_period=0.0)
    queue.add(Pod("p"))
    clock.advance_to(9.99)
    assert queue.flush() == 0
    clock.advance_to(10.0)
    assert queue.flush() == 1


def test_periodic_gate_recheck_is_rate_limited() -> None:
    clock = FakeClock(0.0)
    calls: list[float] = []

    def closed(pod: Any) -> PreEnqueueResult:
        calls.append(clock.now)
        return "gates/closed"

    queue = make_queue(clock, pre_enqueue=closed, gate_recheck_period=5.0)
    queue.add(Pod("p"))
    for t in (1.0, 2.0, 4.9, 5.0, 6.0, 10.0):
        clock.advance_to(t)
        queue.flush()
    assert calls == [0.0, 5.0, 10.0]


def test_gate_retry_after_is_reported_by_next_wakeup() -> None:
    clock = FakeClock(0.0)

    def quota(pod: Any) -> PreEnqueueResult:
        if clock.now < 15:
            return GateRejection("quota/window", "quota window closed", retry_after=15 - clock.now)
        return None

    queue = make_queue(clock, pre_enqueue=quota, gate_recheck_period=None)
    queue.add(Pod("p"))
    qp = queue.get("p")
    assert qp is not None
    assert (qp.gated_by, qp.gate_message, qp.gate_recheck_at) == (
        "quota/window", "quota window closed", 15.0)
    assert queue.next_wakeup() == 15.0
    clock.advance_to(15.0)
    queue.flush()
    assert queue.pop() is qp


def test_gated_pod_admitted_on_move_when_its_gate_opens() -> None:
    clock = FakeClock()
    ready: set[str] = set()
    queue = make_queue(clock, pre_enqueue=lambda pod: None if pod.key in ready else "gang/quorum",
                       gate_recheck_period=None)
    queue.add(Pod("a"))
    queue.add(Pod("b"))
    ready.add("a")
    assert queue.move_all("PodAdd", lambda qp: qp.key != "b") == 1
    assert queue.get("a").queue == ACTIVE  # type: ignore[union-attr]
    assert queue.get("b").queue == GATED  # type: ignore[union-attr]
    assert queue.incoming[(GATED, "PodAdd")] == 2  # counted once each, on add


def test_gate_rechecked_on_update_and_when_leaving_backoff() -> None:
    clock = FakeClock()
    queue = make_queue(clock, pre_enqueue=lambda pod: "gates/x" if pod.labels.get("gate") else None)
    queue.add(Pod("p", labels={"gate": "yes"}))
    assert queue.get("p").queue == GATED  # type: ignore[union-attr]
    queue.update(Pod("p"), spec_changed=True)
    assert queue.get("p").queue == ACTIVE  # type: ignore[union-attr]
    qp = fail(queue, "p", error=True)
    queue.update(Pod("p", labels={"gate": "yes"}), spec_changed=True)
    assert qp.queue == BACKOFF  # backoff pods keep waiting; the gate runs on the way out
    clock.advance_to(101.0)
    queue.flush()
    assert qp.queue == GATED


# ---------------------------------------------------------------- next_wakeup


def test_next_wakeup_is_the_earliest_timer_and_follows_deletes() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    assert queue.next_wakeup() is None
    for name in ("unsched", "retry", "backoff"):
        queue.add(Pod(name))
    fail(queue, "unsched")  # deadline 400
    fail(queue, "retry", retry_after=20.0)  # 120
    clock.advance_to(105.0)
    queue.flush()
    fail(queue, "backoff", error=True)  # 106
    assert queue.next_wakeup() == 106.0
    queue.delete("backoff")
    assert queue.next_wakeup() == 120.0
    clock.advance_to(120.0)
    queue.flush()
    assert queue.next_wakeup() == 400.0
    assert queue.pop().key == "retry"  # type: ignore[union-attr]
    queue.delete("unsched")
    assert queue.next_wakeup() is None


def test_next_wakeup_after_flush_is_in_the_future() -> None:
    clock = FakeClock(0.0)
    queue = make_queue(clock)
    for i in range(20):
        queue.add(Pod(f"p{i}", i))
    t = 0.0
    for i in range(20):
        qp = queue.pop()
        assert qp is not None
        queue.requeue(qp, error=i % 3 == 0, retry_after=None if i % 3 else 7.0)
        t += 0.25
        clock.advance_to(t)
        queue.flush()
        wake = queue.next_wakeup()
        assert wake is None or wake > clock.now


# ---------------------------------------------------------------- delete, done, requeue guards


@pytest.mark.parametrize("where", [ACTIVE, BACKOFF, UNSCHEDULABLE, GATED, IN_FLIGHT])
def test_delete_from_each_sub_queue(where: str) -> None:
    clock = FakeClock()
    gate_open = where != GATED
    queue = make_queue(clock, pre_enqueue=lambda pod: None if gate_open else "gates/closed")
    queue.add(Pod("p"))
    qp = queue.get("p")
    assert qp is not None
    if where in (BACKOFF, UNSCHEDULABLE, IN_FLIGHT):
        qp = queue.pop()
        assert qp is not None
        if where != IN_FLIGHT:
            queue.requeue(qp, error=where == BACKOFF)
    assert qp.queue == where
    assert queue.delete("p")
    assert "p" not in queue and queue.get("p") is None and len(queue) == 0
    assert sum(queue.pending().values()) == 0 and queue.in_flight() == []
    assert not queue.delete("p")
    assert queue.requeue(qp) is None  # a pod deleted during its cycle is not resurrected
    clock.advance_to(1000.0)
    queue.flush()
    assert queue.pop() is None and queue.next_wakeup() is None


def test_done_forgets_and_double_requeue_is_ignored() -> None:
    queue = make_queue(FakeClock())
    queue.add(Pod("p"))
    queue.add(Pod("q"))
    p = queue.pop()
    q = queue.pop()
    assert p is not None and q is not None
    assert "p" in queue and queue.in_flight() == ["p", "q"] and len(queue) == 0
    queue.done("p")
    assert "p" not in queue and queue.requeue(p) is None
    assert queue.requeue(q) == UNSCHEDULABLE
    assert queue.requeue(q) is None


def test_heaps_stay_bounded_under_churn() -> None:
    clock = FakeClock(0.0)
    queue = make_queue(clock)
    for i in range(500):
        queue.add(Pod("p", i % 7))  # same key: updates re-push the active entry
        queue.update(Pod("p", i % 5), spec_changed=True)
    assert len(queue._active_heap) <= 2 * len(queue) + 65
    assert queue.pop() is not None and queue.pop() is None


# ---------------------------------------------------------------- repeated errors


def place(queue: SchedulingQueue, key: str) -> str:
    qp = queue.get(key)
    assert qp is not None
    return qp.queue


def test_a_repeated_error_with_nothing_changed_parks_the_pod() -> None:
    clock = FakeClock()
    queue = make_queue(clock, park_repeated_errors=True)
    queue.add(Pod("a"))
    fail(queue, "a", error=True, error_message="policy p rule r: boom")
    assert place(queue, "a") == BACKOFF  # the first: retried
    clock.advance_to(clock.now + 1)
    queue.flush()
    fail(queue, "a", error=True, error_message="policy p rule r: boom")
    assert place(queue, "a") == UNSCHEDULABLE
    assert queue.next_wakeup() == clock.now + 300  # only the unschedulable time-out


def test_a_cluster_change_or_another_error_retries_a_repeated_error() -> None:
    clock = FakeClock()
    queue = make_queue(clock, park_repeated_errors=True)
    queue.add(Pod("a"))
    fail(queue, "a", error=True, error_message="boom")
    clock.advance_to(clock.now + 1)
    queue.flush()
    queue.move_all("NodeAdd")  # something changed since the first error
    fail(queue, "a", error=True, error_message="boom")
    assert place(queue, "a") == BACKOFF
    clock.advance_to(clock.now + 2)
    queue.flush()
    fail(queue, "a", error=True, error_message="another")
    assert place(queue, "a") == BACKOFF
    clock.advance_to(clock.now + 4)
    queue.flush()
    fail(queue, "a", error=True, error_message="another")
    assert place(queue, "a") == UNSCHEDULABLE
    # a pod was bound: any change retries a parked Error, whatever the predicate says
    assert queue.move_all("AssignedPodAdd", lambda qp: False) == 1
    assert place(queue, "a") == BACKOFF


def test_repeated_errors_are_retried_with_backoff_unless_parking() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("a"))
    for _ in range(3):
        fail(queue, "a", error=True, error_message="boom")
        assert place(queue, "a") == BACKOFF
        clock.advance_to(clock.now + 10)
        queue.flush()


def test_a_flush_helps_only_a_pod_a_change_left_in_place() -> None:
    """A bind moves no pod rejected for the room left on nodes, yet changed what its rule
    reads: its flush is worth waiting for. A pod nothing changed for since its attempt
    would fail the same."""
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("a"))
    fail(queue, "a")
    assert place(queue, "a") == UNSCHEDULABLE and queue.next_helpful_flush() is None
    clock.advance_to(110.0)
    # a pod was bound since: not relevant, but affected
    assert queue.move_all("AssignedPodAdd", lambda qp: False, is_affected=lambda qp: True) == 0
    assert place(queue, "a") == UNSCHEDULABLE
    queue.add(Pod("b"))
    fail(queue, "b")  # tried after that change
    assert queue.next_helpful_flush() == 400.0  # a's, not b's
    clock.advance_to(400.0)
    queue.flush()
    fail(queue, "a")
    assert queue.next_helpful_flush() is None  # retried since: nothing changed after


def test_an_event_a_pod_is_not_concerned_by_is_no_change_it_missed() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("held", 1))
    queue.add(Pod("other"))
    fail(queue, "held")
    fail(queue, "other")
    moved = queue.move_all("AssignedPodDelete", lambda qp: qp.key == "held")
    assert moved == 1 and place(queue, "other") == UNSCHEDULABLE
    assert queue.next_helpful_flush() is None


def test_an_event_during_the_cycle_sends_the_pod_to_backoff_only_if_it_may_help() -> None:
    """kube's in-flight events: judged when the attempt fails, by its rejecting rules."""
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("a"))
    queue.add(Pod("b"))
    a = queue.pop()
    b = queue.pop()
    assert a is not None and b is not None
    queue.move_all("PodDelete", lambda qp: "fit/cpu" in qp.unschedulable_by)
    assert queue.requeue(a, unschedulable_by=["affinity/labels"]) == UNSCHEDULABLE
    assert queue.requeue(b, unschedulable_by=["fit/cpu"]) == BACKOFF
    queue.add(Pod("c"))
    c = queue.pop()
    assert c is not None
    assert queue.requeue(c, unschedulable_by=["fit/cpu"]) == UNSCHEDULABLE  # popped after
    assert not queue._in_flight_events  # forgotten once no pod is in flight


def test_an_error_clears_the_rules_that_rejected_the_pod() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("a"))
    qp = fail(queue, "a", unschedulable_by=["affinity/labels"])
    assert qp.unschedulable_by == {"affinity/labels"}
    clock.advance_to(clock.now + 10)
    queue.move_all("NodeUpdate")
    queue.flush()
    qp = fail(queue, "a", error=True, error_message="boom")
    assert qp.unschedulable_by == frozenset()


def test_an_event_during_the_cycle_that_only_affects_the_pod_counts_for_its_flush() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add(Pod("a"))
    a = queue.pop()
    assert a is not None
    queue.move_all("AssignedPodAdd", lambda qp: False, is_affected=lambda qp: True)
    assert queue.requeue(a, unschedulable_by=["fit/cpu"]) == UNSCHEDULABLE
    assert queue.next_helpful_flush() == clock.now + 300
