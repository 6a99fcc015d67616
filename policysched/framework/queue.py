"""The scheduling queue: kube-scheduler's activeQ, backoffQ and unschedulablePods, plus
preEnqueue-gated pods and exact retry times, driven by an injected clock.

Semantics follow pkg/scheduler/backend/queue/scheduling_queue.go:

* ``add`` runs the preEnqueue gate; admitted pods enter **activeQ** (ordered by queueSort,
  FIFO on ties), refused ones wait in **gated** until the gate opens.
* ``pop`` takes the best active pod, counts an attempt and starts a scheduling cycle.
* A failed attempt is handed back with ``requeue``: errors go to **backoffQ**; a cluster
  event seen while the pod was being scheduled that may help it (kube's in-flight events,
  judged when the attempt fails, by the rules that rejected it) sends it to backoffQ too,
  so no wake-up is lost; otherwise it parks in **unschedulable** until ``move_all`` (a
  cluster event that may help it: queueing hints, see ``move_all``) or
  ``max_unschedulable_duration`` (5 min) passes.
* Backoff is ``initial_backoff * 2**(attempts-1)`` capped at ``max_backoff`` (1 s .. 10 s),
  counted from the failure.
* With ``park_repeated_errors`` (``simulate``), an Error identical to the pod's previous
  one, with no cluster change (``move_all``) nor change of the pod since
  that one, parks the pod in **unschedulable** instead of backoffQ: its failure cannot
  change until something does, so it waits for a change (any ``move_all``, or the
  unschedulable time-out).

Where we go further than kube-scheduler: a rule may say *when* to retry (``retryAfter``);
``requeue(retry_after=...)`` then returns the pod to activeQ exactly at that time, with no
backoff added. The seed article's 15 s delay plugin bound after ~85 s because its rejected
pod sat in unschedulablePods until a flush; here it is retried at 15 s.

Time never passes inside the queue: ``flush()`` applies whatever became due at ``clock()``
and ``next_wakeup()`` says when the next thing becomes due. A simulator jumps its clock to
``next_wakeup()``; a real engine sleeps until then (or until an event arrives).

Thread safety: none. The queue is plain data; the engine must serialise every call (one
lock around the queue, or a single thread). The callables it is given (``clock``, ``less``,
``sort_key``, ``pre_enqueue``, ``key``) are called while the caller holds that lock, must be
deterministic for a given pod object and must not raise (convert evaluation errors first);
pod objects are treated as immutable — a changed pod is a new object passed to ``update``.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

ACTIVE = "active"
BACKOFF = "backoff"  # backoff timers and exact retry_at timers
UNSCHEDULABLE = "unschedulable"
GATED = "gated"
IN_FLIGHT = "in_flight"  # popped, its scheduling cycle not yet finished
PENDING_QUEUES = (ACTIVE, BACKOFF, UNSCHEDULABLE, GATED)

# Events counted in ``SchedulingQueue.incoming`` (kube's scheduler_queue_incoming_pods_total).
POD_ADD = "PodAdd"
POD_UPDATE = "PodUpdate"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
RETRY_AFTER_COMPLETE = "RetryAfterComplete"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
FORCE_ACTIVATE = "ForceActivate"
GATE_RECHECK = "GateRecheck"
ASSIGNED_POD_ADD = "AssignedPodAdd"  # a pod bound (or first seen bound)
ASSIGNED_POD_UPDATE = "AssignedPodUpdate"
UNSCHEDULED_POD_UPDATE = "UnscheduledPodUpdate"
POD_DELETE = "PodDelete"  # a pod deleted, or finished
ASSIGNED_POD_DELETE = "AssignedPodDelete"  # an assumed pod forgotten in its binding cycle
POLICY_SET_CHANGE = "PolicySetChange"  # hot reload: any pod may have become schedulable


@dataclass(frozen=True, slots=True)
class GateRejection:
    """A preEnqueue refusal. ``gated_by`` names ``policy/rule``. A gate whose answer depends
    on time should set ``retry_after`` (seconds, > 0): ``next_wakeup`` then includes the
    re-check, which periodic re-checks (not reported by ``next_wakeup``) cannot guarantee."""

    gated_by: str
    message: str = ""
    retry_after: float | None = None


PreEnqueueResult = str | GateRejection | None
"""``None`` admits the pod; a string refuses it (the string names the policy/rule and says
why, and is used as both ``gated_by`` and ``gate_message``); a ``GateRejection`` refuses it
with separate fields."""


@dataclass(eq=False)
class QueuedPod:
    """A pending pod and its queueing history. Compared by identity."""

    pod: Any
    key: str
    timestamp: float  # added, or last failed: FIFO tie-break and unschedulable timeout base
    attempts: int = 0  # pops so far
    initial_attempt: float | None = None  # time of the first pop (scheduling latency)
    cycle: int = 0  # scheduling cycle number of the latest pop
    backoff_until: float | None = None  # the latest failure's backoff expiry
    retry_at: float | None = None  # exact requeue time asked by a rule's retryAfter
    gated_by: str | None = None  # policy/rule of the refusing preEnqueue gate
    gate_message: str | None = None
    gate_recheck_at: float | None = None  # explicit re-check time asked by the gate
    # policy/rule names that rejected it (none: not known, e.g. after an Error)
    unschedulable_by: frozenset[str] = frozenset()
    last_error: str | None = None  # the latest attempt's Error message (None: no Error)
    changes_at_failure: int = 0  # cluster changes counted when its latest attempt failed
    queue: str = ""  # where it is now: one of PENDING_QUEUES or IN_FLIGHT
    _seq: int = field(default=0, init=False, repr=False)  # placement number (heap validity)
    _updated_in_cycle: bool = field(default=False, init=False, repr=False)
    _activated_in_cycle: bool = field(default=False, init=False, repr=False)


class _ActiveEntry:
    """An activeQ heap entry; it snapshots what it is ordered by, so later changes to the
    QueuedPod (a requeue rewrites ``timestamp``) cannot corrupt the heap."""

    __slots__ = ("key", "less", "pod", "rank", "seq", "timestamp")

    def __init__(self, qp: QueuedPod, less: Callable[[Any, Any], bool] | None,
                 rank: Any) -> None:
        self.key = qp.key
        self.seq = qp._seq
        self.pod = qp.pod
        self.timestamp = qp.timestamp
        self.less = less
        self.rank = rank

    def __lt__(self, other: _ActiveEntry) -> bool:
        if self.rank is not None and other.rank is not None:
            try:
                if self.rank < other.rank:
                    return True
                if other.rank < self.rank:
                    return False
            except TypeError:  # keys of different types: as if equal
                pass
        elif self.less is not None:
            if self.less(self.pod, other.pod):
                return True
            if self.less(other.pod, self.pod):
                return False
        return (self.timestamp, self.seq) < (other.timestamp, other.seq)


_Predicate = Callable[["QueuedPod"], bool]


def _key_attribute(pod: Any) -> str:
    return str(pod.key)


class SchedulingQueue:
    """Pending pods in four sub-queues (active, backoff, unschedulable, gated) plus the pods
    being scheduled (in flight). See the module docstring for the semantics.

    ``sort_key(pod)`` (computed once per placement, smaller first; None when it cannot
    say) or else ``less(a, b)`` (queueSort on pod objects) orders activeQ; with neither,
    activeQ is FIFO.
    ``pre_enqueue(pod)`` is the gate. Gated pods that gave no explicit retry time are
    re-checked by ``flush`` at most every ``gate_recheck_period`` seconds (kube's 1 s flush
    cadence; 0 = on every flush; None = only on ``move_all``/``update``/``activate``).
    """

    def __init__(
        self,
        clock: Callable[[], float],
        less: Callable[[Any, Any], bool] | None = None,
        pre_enqueue: Callable[[Any], PreEnqueueResult] | None = None,
        *,
        key: Callable[[Any], str] = _key_attribute,
        sort_key: Callable[[Any], Any] | None = None,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_unschedulable_duration: float = 300.0,
        gate_recheck_period: float | None = 1.0,
        park_repeated_errors: bool = False,
    ) -> None:
        if initial_backoff <= 0 or max_backoff < initial_backoff:
            raise ValueError("backoff durations must satisfy 0 < initial_backoff <= max_backoff")
        if max_unschedulable_duration <= 0:
            raise ValueError("max_unschedulable_duration must be positive")
        if gate_recheck_period is not None and gate_recheck_period < 0:
            raise ValueError("gate_recheck_period must be >= 0 or None")
        self._clock = clock
        self._less = less
        self._sort_key = sort_key
        self._pre_enqueue = pre_enqueue
        self._key = key
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_unschedulable_duration = max_unschedulable_duration
        self.gate_recheck_period = gate_recheck_period
        self.park_repeated_errors = park_repeated_errors

        self._index: dict[str, QueuedPod] = {}
        self._members: dict[str, dict[str, QueuedPod]] = {
            name: {} for name in (*PENDING_QUEUES, IN_FLIGHT)
        }
        self._active_heap: list[_ActiveEntry] = []
        self._backoff_heap: list[tuple[float, float, int, str]] = []  # wake, ts, seq, key
        self._unschedulable_heap: list[tuple[float, int, str]] = []  # deadline, seq, key
        self._gate_heap: list[tuple[float, int, str]] = []  # explicit re-check times
        self._gate_periodic_heap: list[tuple[float, int, str]] = []  # periodic re-checks
        self._placements = itertools.count(1)
        self._cycle = 0
        # move_all calls while pods were in flight: (cycle then, is_relevant, is_affected)
        self._in_flight_events: list[tuple[int, _Predicate | None, _Predicate | None]] = []
        self._changes = 0  # cluster changes so far (move_all)
        self._parked: dict[str, int] = {}  # parked for a repeated Error → placement number
        self.incoming: Counter[tuple[str, str]] = Counter()
        """(queue, event) → pods that entered that queue because of that event."""

    # ------------------------------------------------------------------ inspection

    @property
    def scheduling_cycle(self) -> int:
        """Number of the latest scheduling cycle (incremented by each ``pop``)."""
        return self._cycle

    def pending(self) -> dict[str, int]:
        """Pods per sub-queue; ``backoff`` includes pods waiting for a rule's retry time."""
        return {name: len(self._members[name]) for name in PENDING_QUEUES}

    def in_flight(self) -> list[str]:
        """Keys of popped pods whose cycle has not ended (no ``done``/``requeue`` yet)."""
        return list(self._members[IN_FLIGHT])

    def __len__(self) -> int:
        """Pending pods (in flight ones excluded)."""
        return sum(len(self._members[name]) for name in PENDING_QUEUES)

    def __contains__(self, key: object) -> bool:
        """Whether the queue knows the pod, pending or in flight."""
        return key in self._index

    def get(self, key: str) -> QueuedPod | None:
        return self._index.get(key)

    def queued_pods(self, queue: str | None = None) -> list[QueuedPod]:
        """The pods of one sub-queue (or all pending ones), in placement order, not queue
        order; for explain output and debugging."""
        names = PENDING_QUEUES if queue is None else (queue,)
        return [qp for name in names for qp in self._members[name].values()]

    def backoff_duration(self, attempts: int) -> float:
        """``initial_backoff * 2**(attempts-1)``, capped at ``max_backoff``."""
        duration = self.initial_backoff
        for _ in range(1, attempts):
            duration *= 2
            if duration >= self.max_backoff:
                return self.max_backoff
        return min(duration, self.max_backoff)

    # ------------------------------------------------------------------ pod lifecycle

    def add(self, pod: Any) -> None:
        """A new pending pod: admitted to activeQ or kept gated. Adding a key the queue
        already holds is an ``update`` with ``spec_changed=False``."""
        key = self._key(pod)
        if key in self._index:
            self.update(pod, spec_changed=False)
            return
        now = self._clock()
        qp = QueuedPod(pod=pod, key=key, timestamp=now)
        self._index[key] = qp
        self._admit(qp, now, POD_ADD)

    def update(self, pod: Any, *, spec_changed: bool) -> None:
        """The pod's object changed. Active and gated pods re-run the gate. With
        ``spec_changed`` (anything but status and bookkeeping metadata changed — the caller
        decides, as kube's isPodUpdated does; our own status patches must pass False), an
        unschedulable pod, or one waiting for a rule's retry time, moves to backoffQ if still
        backing off, else to activeQ; a pod in flight will go to backoffQ if its attempt
        fails. An unknown pod is added."""
        key = self._key(pod)
        qp = self._index.get(key)
        if qp is None:
            self.add(pod)
            return
        now = self._clock()
        qp.pod = pod
        if spec_changed:
            qp.last_error = None
        if qp.queue == IN_FLIGHT:
            qp._updated_in_cycle = qp._updated_in_cycle or spec_changed
        elif qp.queue in (ACTIVE, GATED):
            self._admit(qp, now, POD_UPDATE)
        elif spec_changed and (qp.queue == UNSCHEDULABLE or qp.retry_at is not None):
            qp.retry_at = None
            self._move_to_backoff_or_active(qp, now, POD_UPDATE)

    def delete(self, key: str) -> bool:
        """Forget the pod wherever it is; a later ``requeue`` of it is ignored."""
        qp = self._index.pop(key, None)
        self._parked.pop(key, None)
        if qp is None:
            return False
        self._members[qp.queue].pop(key, None)
        qp.queue = ""
        self._forget_in_flight_events()
        return True

    def pop(self) -> QueuedPod | None:
        """The best active pod, now in flight, or None when activeQ is empty."""
        active = self._members[ACTIVE]
        while self._active_heap:
            entry = heapq.heappop(self._active_heap)
            qp = active.get(entry.key)
            if qp is None or qp._seq != entry.seq:
                continue
            self._place(qp, IN_FLIGHT)
            self._cycle += 1
            qp.cycle = self._cycle
            qp.attempts += 1
            if qp.initial_attempt is None:
                qp.initial_attempt = self._clock()
            qp._updated_in_cycle = False
            qp._activated_in_cycle = False
            return qp
        return None

    def done(self, key: str) -> None:
        """The pod's cycle ended without a requeue (bound, or handed elsewhere): forget it."""
        qp = self._members[IN_FLIGHT].pop(key, None)
        if qp is not None:
            del self._index[key]
            qp.queue = ""
            self._forget_in_flight_events()

    def requeue(
        self,
        qp: QueuedPod,
        *,
        retry_after: float | None = None,
        retry_at: float | None = None,
        error: bool = False,
        error_message: str | None = None,
        unschedulable_by: Iterable[str] | None = None,
    ) -> str | None:
        """Hand back a pod whose attempt failed; returns the sub-queue it entered, or None
        if the pod is no longer in flight (deleted meanwhile, or already handed back).

        In order: ``error`` → backoffQ (unschedulable instead when parking repeated
        errors and ``error_message`` repeats the previous attempt's with nothing changed
        since); ``retry_at`` (an absolute time) or else
        ``retry_after`` > 0 → activeQ exactly then (now + retry_after), no backoff
        (``retry_after`` <= 0 → backoffQ, which guarantees progress without a hot loop);
        ``activate`` called during the cycle → activeQ; a ``move_all`` during the cycle
        whose ``is_relevant`` holds for the pod (now that ``unschedulable_by`` is set), or a
        spec update during the cycle → backoffQ; else unschedulable.
        ``unschedulable_by`` (policy/rule names) replaces ``qp.unschedulable_by`` if given;
        an Error clears it (an Error keeps no hint: any change may help).
        """
        if self._members[IN_FLIGHT].get(qp.key) is not qp:
            return None
        now = self._clock()
        if error:
            qp.unschedulable_by = frozenset()
        elif unschedulable_by is not None:
            qp.unschedulable_by = frozenset(unschedulable_by)
        qp.timestamp = now
        qp.retry_at = None
        qp.backoff_until = now + self.backoff_duration(qp.attempts)
        event = SCHEDULE_ATTEMPT_FAILURE
        repeated = (error and error_message is not None and qp.last_error == error_message
                    and qp.changes_at_failure == self._changes)
        qp.last_error = error_message if error else None
        qp.changes_at_failure = self._changes
        if repeated and self.park_repeated_errors:
            self._place_unschedulable(qp, event)
            self._parked[qp.key] = qp._seq
        elif error:
            self._place_backoff(qp, event)
        elif retry_at is not None:
            qp.backoff_until = None
            qp.retry_at = max(retry_at, now)
            self._place_backoff(qp, event)
        elif retry_after is not None:
            if retry_after > 0:
                qp.backoff_until = None
                qp.retry_at = now + retry_after
            self._place_backoff(qp, event)
        elif qp._activated_in_cycle:
            self._admit(qp, now, FORCE_ACTIVATE)
        elif qp._updated_in_cycle or self._in_flight_verdict(qp):
            self._place_backoff(qp, event)
        else:
            self._place_unschedulable(qp, event)
            if self._in_flight_verdict(qp, affected=True):  # its time-out counts, as in move_all
                qp.changes_at_failure -= 1
        self._forget_in_flight_events()
        return qp.queue

    # ------------------------------------------------------------------ events and time

    def move_all(self, event: str,
                 is_relevant: Callable[[QueuedPod], bool] | None = None,
                 *, is_affected: Callable[[QueuedPod], bool] | None = None) -> int:
        """A cluster event that may make pods schedulable (kube's queueing hints):
        unschedulable pods for which ``is_relevant`` holds (all when None) go to backoffQ
        if still backing off, else to activeQ, and so do pods parked for a repeated Error
        (any change ends "nothing changed"); relevant gated pods re-run the gate. The others
        stay. For those ``is_affected`` holds for, the event changed something they depend
        on that cannot help them now (a pod bound where a rule counts the room left): their
        unschedulable time-out may (``next_helpful_flush``); for the rest the event changed
        nothing they depend on. Pods waiting for a rule's retry time stay (the rule said
        when). Pods in flight are judged by ``is_relevant`` when their attempt fails (then
        backoffQ, not unschedulable). Returns how many pods moved."""
        now = self._clock()
        if self._members[IN_FLIGHT]:
            self._in_flight_events.append((self._cycle, is_relevant, is_affected))
        self._changes += 1
        moved = 0
        for qp in list(self._members[UNSCHEDULABLE].values()):
            if (is_relevant is None or self._parked.get(qp.key) == qp._seq
                    or is_relevant(qp)):
                self._parked.pop(qp.key, None)
                self._move_to_backoff_or_active(qp, now, event)
                moved += 1
            elif is_affected is None or not is_affected(qp):
                qp.changes_at_failure = self._changes
        for qp in list(self._members[GATED].values()):
            if (is_relevant is None or is_relevant(qp)) and self._admit(qp, now, event):
                moved += 1
        return moved

    def activate(self, keys: Iterable[str]) -> list[str]:
        """Move the given pods to activeQ now, through the gate, cancelling backoff and retry
        timers (permit/gang logic retrying siblings). A pod in flight goes to activeQ if its
        attempt fails. Returns the keys that entered activeQ."""
        now = self._clock()
        activated: list[str] = []
        for key in keys:
            qp = self._index.get(key)
            if qp is None or qp.queue == ACTIVE:
                continue
            if qp.queue == IN_FLIGHT:
                qp._activated_in_cycle = True
                continue
            qp.retry_at = None
            if self._admit(qp, now, FORCE_ACTIVATE):
                activated.append(key)
        return activated

    def flush(self) -> int:
        """Apply what is due at ``clock()``: expired backoff and retry timers → activeQ;
        pods unschedulable for ``max_unschedulable_duration`` → backoffQ or activeQ; gated pods
        whose re-check is due re-run the gate. Call it whenever time advanced. Returns how
        many pods moved. A deadline equal to ``clock()`` is due (kube's timeout test is a
        strict ``>``): a simulator jumping to ``next_wakeup()`` must make progress there."""
        now = self._clock()
        moved = 0
        backoff = self._members[BACKOFF]
        while self._backoff_heap:
            wake, _, seq, key = self._backoff_heap[0]
            qp = backoff.get(key)
            if qp is None or qp._seq != seq:
                heapq.heappop(self._backoff_heap)
                continue
            if wake > now:
                break
            event = BACKOFF_COMPLETE if qp.retry_at is None else RETRY_AFTER_COMPLETE
            qp.retry_at = None
            self._admit(qp, now, event)  # pushes elsewhere: heap[0] is still this entry
            heapq.heappop(self._backoff_heap)
            moved += 1

        unschedulable = self._members[UNSCHEDULABLE]
        while self._unschedulable_heap:
            deadline, seq, key = self._unschedulable_heap[0]
            qp = unschedulable.get(key)
            if qp is None or qp._seq != seq:
                heapq.heappop(self._unschedulable_heap)
                continue
            if deadline > now:
                break
            self._move_to_backoff_or_active(qp, now, UNSCHEDULABLE_TIMEOUT)
            heapq.heappop(self._unschedulable_heap)
            moved += 1

        due: list[QueuedPod] = []
        for heap in (self._gate_heap, self._gate_periodic_heap):
            while heap and heap[0][0] <= now:
                _, seq, key = heapq.heappop(heap)
                qp = self._members[GATED].get(key)
                if qp is not None and qp._seq == seq:
                    due.append(qp)
        for qp in due:  # re-gating pushes new entries: process after draining the heaps
            if qp.queue == GATED and self._admit(qp, now, GATE_RECHECK):
                moved += 1
        return moved

    def next_wakeup(self) -> float | None:
        """The earliest time at which ``flush`` will move something: a backoff or retry
        timer, an unschedulable timeout, or a gate's explicit re-check; None if nothing is
        timed. Right after ``flush`` it is later than ``clock()``; otherwise it may be in the
        past, meaning "flush now". Periodic gate re-checks are not reported, so that a pod
        gated for good does not keep a simulation awake."""
        times = [
            self._first_valid(self._backoff_heap, BACKOFF, seq_index=2, key_index=3),
            self._first_valid(self._unschedulable_heap, UNSCHEDULABLE),
            self._first_valid(self._gate_heap, GATED),
        ]
        known = [t for t in times if t is not None]
        return min(known) if known else None

    def next_helpful_flush(self) -> float | None:
        """The earliest unschedulable time-out of a pod that a cluster change since its
        latest attempt left where it was (``move_all``'s ``is_affected``), None if there is
        none. That flush might help: something the pod may depend on changed.
        For the other unschedulable pods nothing did, and the flush would retry them in
        vain (time alone does not count: a rule that depends on time says when with
        ``retryAfter``)."""
        deadlines = [qp.timestamp + self.max_unschedulable_duration
                     for qp in self._members[UNSCHEDULABLE].values()
                     if qp.changes_at_failure < self._changes]
        return min(deadlines, default=None)

    # ------------------------------------------------------------------ internals

    def _in_flight_verdict(self, qp: QueuedPod, *, affected: bool = False) -> bool:
        """Whether a ``move_all`` since ``qp`` was popped may help it (its
        ``is_relevant``, None meaning every pod), or with ``affected`` affected it."""
        for cycle, is_relevant, is_affected in self._in_flight_events:
            if cycle < qp.cycle:
                continue
            predicate = is_affected if affected else is_relevant
            if predicate is None:
                if not affected:
                    return True
            elif predicate(qp):
                return True
        return False

    def _forget_in_flight_events(self) -> None:
        """Drop the in-flight events no pod in flight can still be judged by."""
        events = self._in_flight_events
        if not events:
            return
        in_flight = self._members[IN_FLIGHT]
        if not in_flight:
            events.clear()
        elif len(events) > 2 * len(in_flight) + 64:
            oldest = min(qp.cycle for qp in in_flight.values())
            events[:] = [e for e in events if e[0] >= oldest]

    def _first_valid(self, heap: list[Any], queue: str, seq_index: int = 1,
                     key_index: int = 2) -> float | None:
        members = self._members[queue]
        while heap:
            top = heap[0]
            qp = members.get(top[key_index])
            if qp is not None and qp._seq == top[seq_index]:
                return float(top[0])
            heapq.heappop(heap)
        return None

    def _place(self, qp: QueuedPod, queue: str) -> None:
        """Move ``qp`` into ``queue``'s members with a fresh placement number, which makes
        every heap entry of its previous placement stale."""
        if qp.queue:
            self._members[qp.queue].pop(qp.key, None)
        qp.queue = queue
        qp._seq = next(self._placements)
        self._members[queue][qp.key] = qp

    def _admit(self, qp: QueuedPod, now: float, event: str) -> bool:
        """Run the gate: activeQ if admitted (True), else gated (False)."""
        verdict = self._pre_enqueue(qp.pod) if self._pre_enqueue is not None else None
        if verdict is None:
            qp.gated_by = qp.gate_message = None
            qp.gate_recheck_at = None
            self._place(qp, ACTIVE)
            rank = self._sort_key(qp.pod) if self._sort_key is not None else None
            heapq.heappush(self._active_heap, _ActiveEntry(qp, self._less, rank))
            self.incoming[(ACTIVE, event)] += 1
            self._compact(self._active_heap, ACTIVE)
            return True
        if isinstance(verdict, GateRejection):
            gated_by, message, retry = verdict.gated_by, verdict.message, verdict.retry_after
        else:
            gated_by, message, retry = verdict, verdict, None
        if qp.queue != GATED:
            self.incoming[(GATED, event)] += 1
        qp.gated_by, qp.gate_message = gated_by, message
        qp.gate_recheck_at = now + retry if retry is not None and retry > 0 else None
        self._place(qp, GATED)
        if qp.gate_recheck_at is not None:
            heapq.heappush(self._gate_heap, (qp.gate_recheck_at, qp._seq, qp.key))
            self._compact(self._gate_heap, GATED)
        elif self.gate_recheck_period is not None:
            entry = (now + self.gate_recheck_period, qp._seq, qp.key)
            heapq.heappush(self._gate_periodic_heap, entry)
            self._compact(self._gate_periodic_heap, GATED)
        return False

    def _place_backoff(self, qp: QueuedPod, event: str) -> None:
        """Into backoffQ, woken at ``retry_at`` if set, else at ``backoff_until``."""
        self._place(qp, BACKOFF)
        wake = qp.retry_at if qp.retry_at is not None else qp.backoff_until
        assert wake is not None, "a backoff pod has a timer"
        heapq.heappush(self._backoff_heap, (wake, qp.timestamp, qp._seq, qp.key))
        self.incoming[(BACKOFF, event)] += 1
        self._compact(self._backoff_heap, BACKOFF, seq_index=2, key_index=3)

    def _place_unschedulable(self, qp: QueuedPod, event: str) -> None:
        self._place(qp, UNSCHEDULABLE)
        deadline = qp.timestamp + self.max_unschedulable_duration
        heapq.heappush(self._unschedulable_heap, (deadline, qp._seq, qp.key))
        self.incoming[(UNSCHEDULABLE, event)] += 1
        self._compact(self._unschedulable_heap, UNSCHEDULABLE)

    def _move_to_backoff_or_active(self, qp: QueuedPod, now: float, event: str) -> None:
        if qp.backoff_until is not None and qp.backoff_until > now:
            self._place_backoff(qp, event)
        else:
            self._admit(qp, now, event)

    def _compact(self, heap: list[Any], queue: str, seq_index: int = 1,
                 key_index: int = 2) -> None:
        """Drop stale entries once they outnumber live ones (lazy deletion stays bounded)."""
        members = self._members[queue]
        if len(heap) <= 2 * len(members) + 64:
            return

        def live(entry: Any) -> bool:
            if isinstance(entry, _ActiveEntry):
                qp = members.get(entry.key)
                return qp is not None and qp._seq == entry.seq
            qp = members.get(entry[key_index])
            return qp is not None and qp._seq == entry[seq_index]

        heap[:] = [entry for entry in heap if live(entry)]
        heapq.heapify(heap)
