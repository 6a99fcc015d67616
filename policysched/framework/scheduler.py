"""The scheduling cycle, top-down: one pod from the queue to a bound node.

``Scheduler.schedule_one`` reads like kube-scheduler's ScheduleOne (schedule_one.go):

1. pop the best pending pod; build its ``CycleState`` against a cache snapshot;
2. match (each policy's ``spec.match``) → preFilter → filter (with node sampling) →
   postFilter (preemption) when nothing fits;
3. preScore → score → pick the highest total (ties at random) → the bind rules' target
   (another node must pass the filters), so that what follows uses the node bound to;
4. assume the pod on the node in the cache; reserve; permit (allow / deny / wait);
5. hand the pod to the binding cycle (binding_cycle.py: preBind → bind → postBind), or to
   permit's waiting room, which releases it into the binding cycle later.

The ``Scheduler`` owns the state these share: the cache, the queue (whose queueSort and
preEnqueue callbacks are here), the waiting room, the pods' records. The backend's events
reach the cache and the queue through ``sync`` (event_handlers.py), as do the outcomes of
binds. An attempt ends in ``bound`` or ``fail`` (or ``recover_in_flight``, the service
loop's last resort), which report it to ``on_attempt_end`` (an ``AttemptEnd``: scheduled,
unschedulable or error), binds that complete later on binding threads included.

Any failure after the assumption rolls back (unreserve in reverse order, forget the
assumption) and hands the pod back to the queue: a pod is always in exactly one place —
queue, waiting room, bind in flight, or bound — never lost, never bound twice. So does an
unexpected exception in a pod's cycle (a bug, an engine fault): it is logged, the pod gets
a FailedScheduling event naming the extension point and the exception, and is requeued
with backoff; other pods go on. The engine does not know its backend: events and bind
outcomes come in through ``sync()``, effects go out through the ``Backend`` calls.
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

import numpy as np

from ..cache.cache import Cache, Snapshot
from ..cache.node_info import NodeInfo
from ..cache.node_table import NodeTable
from ..model.events import ClusterEvent, EventType
from ..model.objects import PodInfo
from ..policy.model import ExtensionPoint
from . import audit, messages
from .aggregates import ClusterView
from .backend import Backend, BackendError
from .binding_cycle import AttemptProgress, BindingCycle, rejection_message, waiting_progress
from .evaluator import NO_ROWS, Evaluator, ScalarEvaluator, filter_with_nominated
from .event_handlers import POD_GONE, EventHandlers, PodRecord
from .post_filter import run_post_filter
from .preemption import Candidate, PreemptionInputs
from .queue import (
    ASSIGNED_POD_DELETE,
    IN_FLIGHT,
    POLICY_SET_CHANGE,
    GateRejection,
    QueuedPod,
    SchedulingQueue,
)
from .runtime import UNORDERED, CycleState, Framework, plugin_list
from .status import SUCCESS, Code, Status, error, unschedulable
from .vectorised import NodeEvaluator
from .waiting import WaitingRoom

VECTORISED, SCALAR = "vectorised", "scalar"  # EngineSettings.evaluation
MIN_FEASIBLE_NODES = 100
MIN_FEASIBLE_PERCENTAGE = 5

# How an attempt ended (AttemptEnd.result; kube-scheduler's schedule_attempts_total results)
RESULT_SCHEDULED: Final = "scheduled"
RESULT_UNSCHEDULABLE: Final = "unschedulable"
RESULT_ERROR: Final = "error"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EngineSettings:
    percentage_of_nodes_to_score: int = 0  # 0: kube-scheduler's adaptive percentage
    initial_backoff: float = 1.0
    max_backoff: float = 10.0
    seed: int = 0  # tie-breaking between equal scores
    # how node-level rules are evaluated: "vectorised" (columnar node table, partial
    # evaluation, equivalence cache) or "scalar" (one closure call per node and rule)
    evaluation: str = "vectorised"  # or SCALAR


@dataclass(frozen=True)
class Scoring:
    """A cycle's scores as the evaluator computed them (per scored row of ``nodes``), read
    by node name only when asked (the parity harness, in the cycle's observer): not on the
    hot path."""

    nodes: Sequence[NodeInfo]
    rows: np.ndarray
    totals: np.ndarray
    parts: Mapping[str, np.ndarray]

    def _names(self) -> list[str]:
        return [self.nodes[int(row)].name for row in self.rows]

    def totals_by_node(self) -> dict[str, float]:
        return {name: float(t) for name, t in zip(self._names(), self.totals, strict=True)}

    def parts_by_node(self) -> dict[str, dict[str, int]]:
        return {name: {policy: int(weighted[i]) for policy, weighted in self.parts.items()}
                for i, name in enumerate(self._names())}


@dataclass
class Decision:
    """The outcome of choosing a node: a node name, or a failure status and its message
    (``statuses``: the nodes that failed a filter, when none fits; ``scoring``: the
    scores, when two or more were feasible). On a failure, ``nomination`` is what becomes
    of the pod's nominated node (kube's NominatingInfo): a node to nominate, "" to clear
    it, None to leave it; ``tied``, the preemption candidates as good as the nominated one
    (it included: kube-scheduler nominates any of them)."""

    node: str | None
    status: Status
    message: str = ""
    statuses: dict[str, Status] = field(default_factory=dict)
    scoring: Scoring | None = None
    nomination: str | None = ""
    tied: tuple[Candidate, ...] = ()
    feasible: np.ndarray | None = None  # the rows the node was chosen among
    audits: tuple[audit.AuditFinding, ...] = ()  # what audited rules would have changed

    @property
    def rejected_by(self) -> frozenset[str]:
        """The rules (``policy/rule``) that rejected the pod — the failure's and each
        node's, as kube's UnschedulablePlugins —, for its queueing hints; none when one
        of them names no rule (what would help is not known)."""
        names = {s.plugin for s in self.statuses.values()}
        if self.status.plugin or not names:
            names.add(self.status.plugin)
        return frozenset() if "" in names else frozenset(names)

    @property
    def scores(self) -> dict[str, float]:
        """Each scored node's total."""
        return {} if self.scoring is None else self.scoring.totals_by_node()

    @property
    def policy_scores(self) -> dict[str, dict[str, int]]:
        """Each scored node's total in parts: node → score policy → weighted score, as
        kube-scheduler's V(10) "Plugin scored node"."""
        return {} if self.scoring is None else self.scoring.parts_by_node()


@dataclass(frozen=True)
class AttemptEnd:
    """How one scheduling attempt of one pod ended, as the engine reports it: bound to
    ``node`` (``RESULT_SCHEDULED``), or not, with ``message`` (``RESULT_UNSCHEDULABLE``,
    ``RESULT_ERROR``). ``started`` is ``time.perf_counter()`` when the attempt began (the
    pod left the queue): its duration includes a permit wait and the bind, as kube's."""

    pod: PodInfo
    profile: str  # the pod's schedulerName
    result: str
    node: str | None
    message: str
    started: float


ExtensionPointObserver = Callable[[str, str, str, float], None]
"""Called with (profile, extension point, status code, seconds) after each point runs."""

AttemptObserver = Callable[[AttemptEnd], None]
"""Called when an attempt ends, on the engine's thread (it must be quick)."""

AuditObserver = Callable[[str, audit.AuditFinding], None]
"""Called with (profile, finding) for each finding of an audited rule, on the engine's
thread (it must be quick)."""


class Scheduler:
    """One scheduler over one backend: its cache, queue and waiting room, the scheduling
    cycle, and the binding cycle and event handlers it delegates to (see the module)."""

    # PolicyAudit events on the pods (a shadow, which writes nothing, counts findings only)
    records_audit_events = True

    def __init__(self, backend: Backend, profiles: Mapping[str, Framework],
                 settings: EngineSettings | None = None,
                 observe_extension_point: ExtensionPointObserver | None = None, *,
                 on_internal_error: Callable[[BaseException], None] | None = None,
                 on_attempt_end: AttemptObserver | None = None,
                 on_audit: AuditObserver | None = None,
                 park_repeated_errors: bool = False) -> None:
        """``on_internal_error`` is told of each unexpected exception the engine recovered
        from; ``on_attempt_end`` of each attempt's end; ``on_audit`` of each finding of an
        audited rule (framework/audit.py); ``park_repeated_errors``
        (``simulate``) parks a pod whose Error repeats with nothing changed (see
        ``SchedulingQueue``) instead of retrying it with backoff."""
        self.backend = backend
        self.observe_extension_point = observe_extension_point
        self.on_internal_error = on_internal_error
        self.on_attempt_end = on_attempt_end
        self.on_audit = on_audit
        self.audit_events = audit.AuditEvents()
        self.clock = backend.clock
        self.profiles: dict[str, Framework] = dict(profiles)
        self.settings = settings or EngineSettings()
        self.cache = Cache()
        self.waiting = WaitingRoom()
        self.counters: dict[str, float] = {}
        self._held_counters: dict[str, list[tuple[str, float]]] = {}  # bound pod → its counters
        self.records: dict[str, PodRecord] = {}
        self.unserved: dict[str, str] = {}  # pending pods no profile serves → message
        self.nominated: dict[str, tuple[str, PodInfo]] = {}  # preemptor → (node, pod)
        self._cycle: AttemptProgress | None = None  # the attempt under way
        self._gate_errors: dict[str, str] = {}  # gated pod → the gate Error last reported
        self._sort_errors: dict[str, Status] = {}  # pod → its queueSort keys' Error
        self.rng = random.Random(self.settings.seed)
        self._next_start_node = 0
        self.table = NodeTable()  # per-node columns: the vectorised tier's and aggregates'
        self.evaluator: Evaluator = (NodeEvaluator(self.table)
                                     if self.settings.evaluation == VECTORISED
                                     else ScalarEvaluator())
        self.queue = SchedulingQueue(
            self.clock.now,
            less=self._less,
            sort_key=self._sort_key,
            pre_enqueue=self._gate,
            initial_backoff=self.settings.initial_backoff,
            max_backoff=self.settings.max_backoff,
            park_repeated_errors=park_repeated_errors,
        )
        self.binding_cycle = BindingCycle(self, backend, self.cache, self.waiting)
        self.event_handlers = EventHandlers(
            self.cache, self.queue, self.waiting, self.binding_cycle, self.profiles,
            self.records, self.unserved, self.clock, forget_pod=self._forget_pod,
            nominated=self.nominated)

    def set_profiles(self, profiles: Mapping[str, Framework]) -> None:
        """Swap the compiled policy set (hot reload), between scheduling cycles. Pods keep
        their place in the queue; the unschedulable ones are moved to be tried again (a
        rule that rejected them may be gone or changed) and gated ones re-run preEnqueue;
        pods of a profile that no longer exists stay queued and are reported when popped."""
        swapped = dict(profiles)
        self.profiles.clear()  # in place: the event handlers share it
        self.profiles.update(swapped)
        self.evaluator.reset()
        self.table.clear()
        self.queue.move_all(POLICY_SET_CHANGE)

    # -- the queue's callbacks: queueSort, preEnqueue ----------------------------------------

    def _sorter(self) -> Framework | None:
        """The profile whose queueSort orders the queue: every profile shares the first
        profile's queueSort, as in kube-scheduler (which requires all to use the same)."""
        return next(iter(self.profiles.values()), None)

    def _sort_key(self, pod: PodInfo) -> tuple[Any, ...] | None:
        """queueSort ``keys``, computed when the pod enters activeQ (None when the
        queueSort orders pods with ``less``). A key that failed is ``UNORDERED`` and its
        Error kept for the pod's next attempt, which it ends (``schedule_one``)."""
        sorter = self._sorter()
        if sorter is None:
            return (-pod.priority, pod.creation)
        try:
            keys, status = sorter.sort_key(pod, int(self.clock.now()))
        except Exception as e:  # a queue callback must not raise
            keys, status = (UNORDERED,), self._internal_error(pod.key, "QueueSort", e)
        if status.is_success:
            self._sort_errors.pop(pod.key, None)
        else:
            self._sort_errors[pod.key] = status
        return keys

    def _less(self, a: PodInfo, b: PodInfo) -> bool:
        """queueSort ``less``, for pods without sort keys."""
        sorter = self._sorter()
        if sorter is None:
            return (-a.priority, a.creation) < (-b.priority, b.creation)
        try:
            return sorter.less(a, b, int(self.clock.now()))
        except Exception as e:  # a queue callback must not raise: as if equal
            self._internal_error(a.key, "QueueSort", e)
            return False

    def _gate(self, pod: PodInfo) -> GateRejection | None:
        """preEnqueue, as the queue's gate (run when an event adds, updates or moves the
        pod). A gate that fails keeps the pod out of activeQ (kube's PreEnqueue error) and
        is reported on the pod: a FailedScheduling event and condition, once per distinct
        error (the gate re-runs on every move)."""
        fwk = self.profiles.get(pod.scheduler_name)
        audited = fwk is not None and ExtensionPoint.PRE_ENQUEUE in fwk.audited
        if fwk is None or not (audited or fwk.has_rules(ExtensionPoint.PRE_ENQUEUE)):
            self._gate_errors.pop(pod.key, None)
            return None
        # the gate sees only pod-level variables: no snapshot unless it reads the cluster
        state = CycleState(
            pod, int(self.clock.now()), lambda: self.cache.snapshot().pod_views(),
            lambda: self.cache.snapshot().node_views(),
            lambda: self.cache.snapshot().pods_with_affinity_views())
        try:
            status = fwk.pre_enqueue(state)
        except Exception as e:  # a queue callback must not raise
            status = self._internal_error(pod.key, "PreEnqueue", e)
        if audited:
            self.report_audits(pod, fwk, self._audit(pod, "PreEnqueue",
                                                     partial(audit.pre_enqueue, fwk, state)))
        if status.is_success:
            self._gate_errors.pop(pod.key, None)
            return None
        if status.code is Code.ERROR and self._gate_errors.get(pod.key) != status.message:
            self._gate_errors[pod.key] = status.message
            self._report(pod, status, status.message)
        return GateRejection(status.plugin or status.message, status.message)

    def _forget_pod(self, key: str) -> None:
        """A pod that went away (deleted, or terminated): its nomination and the errors
        kept for it go, and the reserve counters it held since its bind are given back."""
        self.nominated.pop(key, None)
        self.audit_events.forget(key)
        self._gate_errors.pop(key, None)
        self._sort_errors.pop(key, None)
        for name, amount in reversed(self._held_counters.pop(key, ())):
            self.counters[name] = self.counters.get(name, 0) - amount

    # -- source → cache and queue; time -----------------------------------------------------

    def sync(self) -> int:
        """Apply the backend's pending events, then finish the binding cycles whose bind
        ended; returns how many events and bind outcomes there were."""
        events = self.backend.drain_events()
        for event in events:
            try:
                self.apply_event(event)
            except Exception as e:  # one bad event must not cost the others
                log.exception(messages.LOG_EVENT_FAILED, event.kind, event.resource)
                self._tell(e)
        if events:
            self.binding_cycle.recheck_waiting()
        return len(events) + self.drain_binds()

    def apply_event(self, event: ClusterEvent) -> None:
        """One cluster event into the cache and the queue (``EventHandlers.apply``)."""
        self.event_handlers.apply(event)

    def drain_binds(self) -> int:
        """Finish the binding cycles whose bind ended (the backend's outcomes); returns
        how many outcomes there were."""
        return self.binding_cycle.drain()

    @property
    def binds_in_flight(self) -> list[str]:
        """Keys of the pods whose bind was handed to the backend and has no outcome yet."""
        return self.binding_cycle.in_flight

    def next_wakeup(self) -> float | None:
        """The earliest time something becomes due (queue timers, permit time-outs)."""
        times = [t for t in (self.queue.next_wakeup(), self.waiting.next_deadline())
                 if t is not None]
        return min(times, default=None)

    def advance(self) -> None:
        """Time moved: release due queue timers and expire permit waits."""
        self.queue.flush()
        self.binding_cycle.recheck_waiting()

    def cycle_state(self, pod: PodInfo, snapshot: Snapshot) -> CycleState:
        return CycleState(pod, int(self.clock.now()), snapshot.pod_views, snapshot.node_views,
                          snapshot.pods_with_affinity_views,
                          cluster=ClusterView(snapshot, self.table))

    # -- the scheduling cycle ----------------------------------------------------------------

    def schedule_one(self) -> bool:
        """Schedule the next pod of the queue; False when the queue had none ready."""
        qp = self.queue.pop()
        if qp is None:
            return False
        cycle = AttemptProgress(qp, time.perf_counter())
        self.guarded(cycle, partial(self._schedule, cycle))
        return True

    def _schedule(self, cycle: AttemptProgress) -> None:
        qp, started = cycle.qp, cycle.started
        pod = self.cache.pod(qp.key) or qp.pod
        if pod.node_name or self.cache.is_assumed(pod):
            self.queue.done(qp.key)  # bound meanwhile (by us or another scheduler)
            return
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None:  # its profile went away with a policy reload: keep it queued
            message = messages.PROFILE_UNKNOWN.format(pod=qp.key, name=pod.scheduler_name)
            self.fail(qp, unschedulable("", message), message, started=started)
            return
        record = self.records.setdefault(pod.key, PodRecord(pod.key))
        if pod.deleting:  # kube's skipPodSchedule: not requeued; an update adds it again
            record.message = messages.SKIP_DELETING.format(pod=pod.key)
            self.backend.record_event(pod, "Warning", messages.EVENT_FAILED_SCHEDULING,
                                      record.message)
            self.queue.done(qp.key)
            return
        record.attempts += 1
        sort_error = self._sort_errors.get(pod.key)
        if sort_error is not None:  # its queueSort keys failed when it was queued
            self.fail(qp, sort_error, sort_error.message, started=started)
            return
        snapshot = self.cache.snapshot()
        state = cycle.state = self.cycle_state(pod, snapshot)
        cycle.fwk = fwk

        decision = self.decide(fwk, state, snapshot)
        if decision.audits:
            self.report_audits(pod, fwk, decision.audits)
        if decision.node is None:
            status = decision.status
            # a rule's retryAfter counts from the cycle's `now` (whole seconds), not from
            # the end of the cycle
            retry_at = None if status.retry_after is None else state.now + status.retry_after
            self.fail(qp, status, decision.message, started=started, retry_at=retry_at,
                      nomination=decision.nomination, rejected_by=decision.rejected_by)
            return
        node = snapshot.node(decision.node)
        assert node is not None
        self.cache.assume(pod, node.name)
        self.nominated.pop(pod.key, None)  # kube: an assumed pod is nominated no more
        cycle.node = node.name

        point_started = self.reach("Reserve")
        status = fwk.run_reserve(state, node, self.counters, self.cache)
        self._observe(fwk, "Reserve", status, point_started)
        if not status.is_success:
            self.roll_back(fwk, state, node.name)
            self.fail(qp, status, rejection_message(status), started=started)
            return

        point_started = self.reach("Permit")
        status, waits = fwk.run_permit(state, node)
        self._observe(fwk, "Permit", status, point_started)
        if ExtensionPoint.PERMIT in fwk.audited and (status.is_success
                                                      or status.code is Code.WAIT):
            self.report_audits(pod, fwk, self._audit(pod, "Permit",
                                                     partial(audit.permit, fwk, state, node)))
        if status.is_rejection or status.code is Code.ERROR:
            self.roll_back(fwk, state, node.name)
            self.fail(qp, status, rejection_message(status), started=started)
            return
        if status.code is Code.WAIT:
            self.binding_cycle.wait(qp, fwk, state, node, waits, started=started)
            return
        self.binding_cycle.start(qp, fwk, state, node, started=started)

    def decide(self, fwk: Framework, state: CycleState, snapshot: Snapshot) -> Decision:
        """match → preFilter → filter → postFilter → score → the bind rules' target: the
        node for the pod, or why none (kube-scheduler's schedulePod); then, when the
        profile has audited rules, what they would have changed (``Decision.audits``)."""
        decision = self._decide(fwk, state, snapshot)
        if fwk.audited:
            scoring = decision.scoring
            decided = audit.Decided(decision.feasible, decision.node,
                                    None if scoring is None else scoring.totals)
            decision.audits = tuple(self._audit(state.pod, "Filter", partial(
                audit.decision, fwk, self.evaluator, state, snapshot, decided,
                self._nominated_by_node(state.pod))))
        return decision

    def _decide(self, fwk: Framework, state: CycleState, snapshot: Snapshot) -> Decision:
        nodes = snapshot.nodes
        total = len(nodes)
        if total == 0:  # before preFilter, as kube's ErrNoNodesAvailable
            status = unschedulable("", messages.NO_NODES, unresolvable=True)
            return Decision(None, status, messages.NO_NODES)
        started = self.reach("PreFilter")
        status, names, narrowed_by = fwk.check_matches(state), None, frozenset[str]()
        if status.is_success:
            pre_filter = fwk.run_pre_filter(state)
            status, names, narrowed_by = (pre_filter.status, pre_filter.node_names,
                                          pre_filter.narrowed_by)
        self._observe(fwk, "PreFilter", status, started)
        if status.code is Code.ERROR:
            return Decision(None, status, status.message)
        if not status.is_success:
            return self._pre_filter_rejected(fwk, state, nodes, status)
        nominated = self._nominated_node(fwk, state, snapshot)
        if nominated is not None:
            decision = self._bind_target(fwk, state, snapshot, nominated, {})
            decision.feasible = np.array([snapshot.index[nominated.name]], np.int64)
            return decision
        statuses: dict[str, Status] = {}
        candidates = nodes
        if names is not None:
            candidates = [n for n in nodes if n.name in names]
            excluded = unschedulable("", messages.PRE_FILTER_EXCLUDED.format(
                plugins=plugin_list(narrowed_by)), unresolvable=True)
            for n in nodes:
                if n.name not in names:
                    statuses[n.name] = excluded
        started = self.reach("Filter")
        rows, failure = self._find_feasible(fwk, state, snapshot, candidates, statuses)
        self._observe(fwk, "Filter", failure or Status(), started)
        if failure is not None:
            return Decision(None, failure, failure.message, statuses)
        if not len(rows):
            return self._no_fit(fwk, state, nodes, statuses)
        if len(rows) == 1:
            decision = self._bind_target(fwk, state, snapshot, nodes[int(rows[0])], statuses)
            decision.feasible = rows
            return decision
        if state.cluster is not None:
            state.cluster.scored = rows
        started = self.reach("PreScore")
        status = fwk.run_pre_score(state)
        self._observe(fwk, "PreScore", status, started)
        if not status.is_success:
            return Decision(None, status, status.message, statuses)
        started = self.reach("Score")
        status, totals, parts = self.evaluator.score(fwk, state, snapshot, rows)
        self._observe(fwk, "Score", status, started)
        if not status.is_success:
            return Decision(None, status, status.message, statuses)
        chosen = nodes[self._select_host(rows, totals)]
        decision = self._bind_target(fwk, state, snapshot, chosen, statuses)
        decision.scoring = Scoring(nodes, rows, totals, parts)
        decision.feasible = rows
        return decision

    def _bind_target(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
                     chosen: NodeInfo, statuses: dict[str, Status]) -> Decision:
        """The node the bind rules send the pod to, decided here, before reserve, so that
        the assumption, reserve, permit and preBind all use the node the pod is bound to.
        A target other than the chosen node must be a node of the snapshot that passes
        the filters (with this cycle's state and room promised to preemptors), else the
        pod is Unschedulable there, naming the bind rule and the filter's reason."""
        self.reach("Bind")
        status, target, rule = fwk.bind_target(state, chosen)
        if not status.is_success:
            return Decision(None, status, status.message, statuses)
        if target == chosen.name:
            return Decision(target, SUCCESS, statuses=statuses)
        assert rule is not None and rule.target is not None
        node = snapshot.node(target)
        if node is None:
            reason = messages.BIND_TARGET_UNKNOWN.format(
                policy=rule.policy, rule=rule.name, field=rule.target.field,
                text=rule.target.summary, node=target)
            verdict = unschedulable(rule.qualified_name, reason)
        else:
            others = self._nominated_by_node(state.pod).get(target)
            verdict = filter_with_nominated(fwk, state, node, others)
            if verdict.is_success:
                return Decision(target, SUCCESS, statuses=statuses)
            if verdict.code is Code.ERROR:
                return Decision(None, verdict, verdict.message, statuses)
            reason = messages.BIND_TARGET_REJECTED.format(
                policy=rule.policy, rule=rule.name, node=target, reason=verdict.message)
            verdict = Status(verdict.code, (reason,), rule.qualified_name)
        return Decision(None, verdict, verdict.message, statuses)

    def _nominated_node(self, fwk: Framework, state: CycleState, snapshot: Snapshot
                        ) -> NodeInfo | None:
        """kube's evaluateNominatedNode: the node in the pod's ``status.nominatedNodeName``
        (set by an earlier preemption), when it passes the filters — then chosen without
        scoring the others; None otherwise (an Error there: the full search reports it)."""
        node = snapshot.node(state.pod.nominated_node) if state.pod.nominated_node else None
        if node is None:
            return None
        others = self._nominated_by_node(state.pod).get(node.name)
        return node if filter_with_nominated(fwk, state, node, others).is_success else None

    def _find_feasible(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
                       nodes: list[NodeInfo], statuses: dict[str, Status]
                       ) -> tuple[np.ndarray, Status | None]:
        """Filter nodes round-robin from where the last cycle stopped, until enough are
        feasible (kube-scheduler's numFeasibleNodesToFind); their snapshot rows."""
        if not nodes:
            return NO_ROWS, None
        if len(nodes) == len(snapshot.nodes):
            candidates = np.arange(len(nodes))
        else:
            candidates = np.fromiter((snapshot.index[n.name] for n in nodes), np.int64,
                                     len(nodes))
        start = self._next_start_node % len(nodes)
        found = self.evaluator.find_feasible(
            fwk, state, snapshot, np.concatenate((candidates[start:], candidates[:start])),
            self._feasible_nodes_to_find(len(nodes)), self._nominated_by_node(state.pod),
            statuses)
        if found.failure is not None:
            return NO_ROWS, found.failure
        self._next_start_node = (start + found.processed) % len(nodes)
        return found.rows, None

    def _nominated_by_node(self, pod: PodInfo) -> dict[str, list[PodInfo]]:
        """Pods nominated to a node (by preemption), of at least ``pod``'s priority, by
        node: counted there by the filters (``filter_with_nominated``)."""
        out: dict[str, list[PodInfo]] = {}
        for key, (node, other) in self.nominated.items():
            if key != pod.key and other.priority >= pod.priority:
                out.setdefault(node, []).append(other.with_node(node))
        return out

    def _feasible_nodes_to_find(self, count: int) -> int:
        if count < MIN_FEASIBLE_NODES:
            return count
        percentage = self.settings.percentage_of_nodes_to_score
        if percentage <= 0:
            percentage = max(50 - count // 125, MIN_FEASIBLE_PERCENTAGE)
        return max(count * percentage // 100, MIN_FEASIBLE_NODES)

    def _pre_filter_rejected(self, fwk: Framework, state: CycleState, nodes: list[NodeInfo],
                             status: Status) -> Decision:
        """After an unresolvable preFilter rejection kube-scheduler still runs postFilter,
        every node having the rejection's status (so preemption cannot help, and says so).
        After a resolvable one, postFilter is not run here (kube would try preemption)."""
        suffix, nomination = "", None
        if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            outcome = run_post_filter(fwk, state, nodes, {n.name: status for n in nodes},
                                      self._preemption_inputs(state))
            if outcome.status is not None:
                return Decision(None, outcome.status, outcome.status.message, nomination=None)
            suffix, nomination = outcome.message, outcome.nomination
        return Decision(None, status, messages.fit_error(
            len(nodes), (), pre_filter_message=status.message, post_filter_message=suffix),
            nomination=nomination)

    def _no_fit(self, fwk: Framework, state: CycleState, nodes: list[NodeInfo],
                statuses: dict[str, Status]) -> Decision:
        """No feasible node: run postFilter (preemption), then describe the failure as
        kube does."""
        reasons = [r for s in statuses.values() for r in s.reasons]
        started = self.reach("PostFilter")
        outcome = run_post_filter(fwk, state, nodes, statuses, self._preemption_inputs(state))
        self._observe(fwk, "PostFilter", outcome.status or Status(), started)
        if outcome.status is not None:
            return Decision(None, outcome.status, outcome.status.message, statuses,
                            nomination=None)
        if outcome.candidate is not None:
            self._prepare_candidate(state.pod, outcome.candidate)
        status = unschedulable("", messages.fit_error(len(nodes), reasons))
        return Decision(None, status, messages.fit_error(
            len(nodes), reasons, post_filter_message=outcome.message), statuses,
            nomination=outcome.nomination, tied=outcome.tied)

    def _preemption_inputs(self, state: CycleState) -> PreemptionInputs:
        """What preemption reads besides the cycle: the pods nominated to each node, the
        budgets, the random offset of the candidate search."""
        snapshot = state.cluster.snapshot if state.cluster is not None else None
        return PreemptionInputs(
            self._nominated_by_node(state.pod),
            snapshot.disruption_budgets if snapshot is not None else (),
            self.rng.randrange)

    def _prepare_candidate(self, pod: PodInfo, candidate: Candidate) -> None:
        """kube's prepareCandidate: the victims are evicted (one waiting at permit is
        rejected instead), and the lower-priority pods nominated to the node lose their
        nomination (they may no longer fit there). A failed eviction is logged, as kube's
        asynchronous preemption does; the pod is retried anyway."""
        for victim in candidate.victims:
            if victim.key in self.waiting:
                self.binding_cycle.reject_waiting(
                    victim.key, unschedulable("", messages.PREEMPTED_WAITING))
            else:
                try:
                    self.backend.evict(victim, messages.PREEMPTED_CONDITION.format(
                        scheduler=pod.scheduler_name))
                except BackendError as e:
                    log.warning(messages.LOG_EVICTION_FAILED, victim.key, pod.key, e)
                    continue
            self.backend.record_event(victim, "Normal", messages.EVENT_PREEMPTED,
                                      messages.PREEMPTED.format(uid=pod.uid,
                                                                node=candidate.node))
            self.records.setdefault(pod.key, PodRecord(pod.key)).victims.append(victim.key)
        for node, other in list(self.nominated.values()):
            if node == candidate.node and other.priority < pod.priority:
                with contextlib.suppress(BackendError):  # gone: nothing to clear
                    self.backend.set_nominated_node(other, None)

    def _select_host(self, rows: np.ndarray, totals: np.ndarray) -> int:
        """The row of the highest total; among equals, one chosen uniformly at random."""
        tied = np.flatnonzero(totals == totals.max()).tolist()
        return int(rows[tied[0] if len(tied) == 1 else self.rng.choice(tied)])

    # -- an attempt: its points, its guard, its end ----------------------------------------

    def reach(self, point: str) -> float:
        """Note that the attempt under way reached ``point``; the time, for ``_observe``."""
        if self._cycle is not None:
            self._cycle.point = point
        return time.perf_counter()

    def _observe(self, fwk: Framework, point: str, status: Status, started: float) -> None:
        self.observe(fwk, point, status, time.perf_counter() - started)

    def observe(self, fwk: Framework, point: str, status: Status, seconds: float) -> None:
        """Report one run of an extension point to ``observe_extension_point``."""
        if self.observe_extension_point is not None:
            self.observe_extension_point(fwk.scheduler_name, point, status.code.value, seconds)

    def guarded(self, cycle: AttemptProgress, run: Callable[[], None]) -> None:
        """Run (part of) a pod's cycle; an unexpected exception aborts that pod's
        attempt only (``_abort``)."""
        outer, self._cycle = self._cycle, cycle
        try:
            run()
        except Exception as e:
            self._abort(cycle, e)
        finally:
            self._cycle = outer

    def _abort(self, cycle: AttemptProgress, exc: Exception) -> None:
        """After an unexpected exception in a pod's cycle: undo what the cycle did
        (reserved counters, the assumption, a permit wait), report it on the pod and
        requeue it with backoff. A pod whose bind was handed over or succeeded is left
        to that bind's outcome; one handed back already stays where it is."""
        qp = cycle.qp
        key = qp.key
        status = self._internal_error(key, cycle.point, exc)
        pod = self.cache.pod(key)
        if key in self.binding_cycle:
            return
        if pod is not None and self.cache.binding_finished(pod):  # bound: never undone
            self.queue.done(key)
            return
        waiting = self.waiting.remove(key)
        if waiting is not None:
            cycle = waiting_progress(waiting, cycle.point)
        if self.queue.get(key) is not qp or qp.queue != IN_FLIGHT:
            return  # deleted meanwhile, or already handed back
        if cycle.fwk is not None and cycle.state is not None and cycle.node is not None:
            try:
                self.roll_back(cycle.fwk, cycle.state, cycle.node)
            except Exception:
                log.exception(messages.LOG_ROLL_BACK_FAILED, key)
        if pod is not None and self.cache.is_assumed(pod):
            self.cache.forget(pod)
        self.fail(qp, status, status.message, started=cycle.started)

    def _internal_error(self, key: str, point: str, exc: Exception) -> Status:
        """Log an unexpected exception met while scheduling pod ``key`` and tell
        ``on_internal_error``; the Error status that reports it on the pod."""
        log.exception(messages.LOG_INTERNAL_ERROR, key, point)
        self._tell(exc)
        return internal_error(point, exc)

    def _tell(self, exc: Exception) -> None:
        if self.on_internal_error is not None:
            try:
                self.on_internal_error(exc)
            except Exception:
                log.exception(messages.LOG_OBSERVER_FAILED)

    def recover_in_flight(self, exc: Exception) -> int:
        """After an exception escaped the engine (the loop caught it): hand back the pods
        it left in flight — not those waiting at permit, nor those whose bind is under
        way: their outcome ends their cycle — forgetting their unbound assumptions,
        each with a FailedScheduling event; returns how many. No pod is lost."""
        recovered = 0
        for key in self.queue.in_flight():
            qp = self.queue.get(key)
            if qp is None or key in self.waiting or key in self.binding_cycle:
                continue
            pod = self.cache.pod(key)
            if pod is not None and pod.node_name:
                self.queue.done(key)
                continue
            if pod is not None and self.cache.is_assumed(pod) \
                    and not self.cache.binding_finished(pod):
                self.cache.forget(pod)
            status = internal_error(messages.SCHEDULING_LOOP, exc)
            pod = qp.pod if pod is None else pod
            try:
                self._report(pod, status, status.message)
            except Exception:
                log.exception(messages.LOG_REPORT_FAILED, key)
            self.queue.requeue(qp, error=True, error_message=status.message)
            # when the attempt began is lost with it: timed from now
            self._attempt_ended(pod, RESULT_ERROR, None, status.message, time.perf_counter())
            recovered += 1
        return recovered

    def report_audits(self, pod: PodInfo, fwk: Framework,
                      findings: Sequence[audit.AuditFinding]) -> None:
        """Each finding to ``on_audit`` (the metrics); and those not recorded lately
        (``AuditEvents``) as PolicyAudit events on the pod: one per extension point and
        event type, with the action ``Audit<Point>`` — an Events API series folds events
        of one type, reason and action on one pod into the first one's note, so the
        findings of one point share an event and those of different points do not."""
        now = self.clock.now()
        due: dict[tuple[ExtensionPoint, EventType], list[str]] = {}
        for finding in findings:
            if self.on_audit is not None:
                try:
                    self.on_audit(fwk.scheduler_name, finding)
                except Exception:
                    log.exception(messages.LOG_AUDIT_OBSERVER_FAILED)
            if self.records_audit_events and self.audit_events.due(pod.key, finding, now):
                due.setdefault((finding.point, finding.event_type), []).append(finding.text)
        for (point, event_type), texts in due.items():
            self.backend.record_event(
                pod, event_type, messages.EVENT_POLICY_AUDIT,
                messages.AUDIT_FINDINGS_JOINED.join(texts),
                messages.AUDIT_ACTION.format(point=point.value[0].upper() + point.value[1:]))

    def _audit(self, pod: PodInfo, point: str,
               run: Callable[[], list[audit.AuditFinding]]) -> list[audit.AuditFinding]:
        """``run``'s findings. An unexpected exception in it (an engine fault) is logged
        and told, and there are no findings: it never fails the pod, as the audited rules
        decide nothing."""
        try:
            return run()
        except Exception as e:
            log.exception(messages.LOG_AUDIT_FAILED, pod.key, point)
            self._tell(e)
            return []

    def roll_back(self, fwk: Framework, state: CycleState, node_name: str) -> None:
        """Unreserve (reverse order; the counters even when the node is gone) and forget
        the assumption."""
        node = self.cache.snapshot().node(node_name)
        for note in fwk.run_unreserve(state, node, self.counters, self.cache):
            self.backend.record_event(state.pod, "Normal", "Unreserve", note)
        if self.cache.is_assumed(state.pod):
            self.cache.forget(state.pod)

    def fail(self, qp: QueuedPod, status: Status, message: str, *, started: float,
             retry_at: float | None = None, nomination: str | None = "",
             rejected_by: frozenset[str] | None = None) -> None:
        """kube-scheduler's handleSchedulingFailure: event, condition, the nominated node
        (``nomination``: a node to nominate, "" to clear — kube's default on a failure —,
        None to leave it), requeue (not when the pod turned out bound meanwhile, e.g. by a
        bind reported as failed) with the rules that rejected it (``rejected_by``, else the
        status's); the attempt ends unschedulable, or error for an Error."""
        pod = self.cache.pod(qp.key) or qp.pod
        message = message or status.message
        self._report(pod, status, message)
        if nomination is not None and not pod.node_name:
            self._nominate(pod, nomination)
        is_error = status.code is Code.ERROR
        if pod.node_name:
            self.queue.done(qp.key)
        else:
            if rejected_by is None:
                rejected_by = frozenset({status.plugin} if status.plugin else ())
            self.queue.requeue(qp, retry_after=status.retry_after, retry_at=retry_at,
                               error=is_error, error_message=message if is_error else None,
                               unschedulable_by=rejected_by)
        self._attempt_ended(pod, RESULT_ERROR if is_error else RESULT_UNSCHEDULABLE, None,
                            message, started)

    def _nominate(self, pod: PodInfo, node: str) -> None:
        """Nominate ``pod`` to ``node`` ("": no node), in the engine and in its status."""
        if node:
            self.nominated[pod.key] = (node, pod)
        else:
            self.nominated.pop(pod.key, None)
        if pod.nominated_node != node:
            with contextlib.suppress(BackendError):  # deleted meanwhile: its event follows
                self.backend.set_nominated_node(pod, node or None)

    def released(self, attempts: Sequence[QueuedPod]) -> None:
        """Pods assumed on a node were forgotten in their binding cycle (a permit wait
        rejected, a failed preBind or bind), their attempts ended: kube-scheduler's
        handleBindingCycleError treats it as an assigned pod's deletion and moves the
        unschedulable pods that event may help, not these pods. Here they are the pods
        tried while the room was held (an attempt begun after the first of these pods was
        assumed) whose rules read what a pod's deletion changes (queueing hints); for the
        others the cluster is as they saw it."""
        keys = {qp.key for qp in attempts}
        held_since = min((qp.cycle for qp in attempts), default=0)
        helped = self.event_handlers.helped_by(POD_GONE)
        self.queue.move_all(ASSIGNED_POD_DELETE, lambda qp: qp.cycle > held_since
                            and qp.key not in keys and helped(qp))

    def bound(self, pod: PodInfo, node: str, *, started: float,
              counters: Sequence[tuple[str, float]] = ()) -> None:
        """An attempt whose bind succeeded ends (before postBind, as in kube-scheduler):
        the pod leaves the queue and its nomination, its record notes the node, and the
        reserve ``counters`` it took stay held until it goes away (``_forget_pod``)."""
        if counters:
            self._held_counters[pod.key] = list(counters)
        self.queue.done(pod.key)
        self.nominated.pop(pod.key, None)
        record = self.records.setdefault(pod.key, PodRecord(pod.key))
        record.node, record.bound_at, record.message = node, self.clock.now(), None
        self._attempt_ended(pod, RESULT_SCHEDULED, node, "", started)

    def _report(self, pod: PodInfo, status: Status, message: str) -> None:
        """A failure on the pod: FailedScheduling event, PodScheduled=False condition (its
        reason SchedulerError for an Error, else Unschedulable), the record's message."""
        self.backend.record_event(pod, "Warning", messages.EVENT_FAILED_SCHEDULING, message)
        # a pod deleted meanwhile (its event not applied yet): that event dequeues it
        with contextlib.suppress(BackendError):
            self.backend.set_pod_condition(
                pod, "False", messages.CONDITION_SCHEDULER_ERROR
                if status.code is Code.ERROR else messages.CONDITION_UNSCHEDULABLE, message)
        self.records.setdefault(pod.key, PodRecord(pod.key)).message = message

    def _attempt_ended(self, pod: PodInfo, result: str, node: str | None, message: str,
                       started: float) -> None:
        """Tell ``on_attempt_end``; a hook that raises is logged, the cycle goes on."""
        if self.on_attempt_end is None:
            return
        try:
            self.on_attempt_end(AttemptEnd(pod, pod.scheduler_name, result, node, message,
                                           started))
        except Exception:
            log.exception(messages.LOG_ATTEMPT_OBSERVER_FAILED)


def internal_error(point: str, exc: BaseException) -> Status:
    """The Error that reports an unexpected exception on a pod."""
    return error("", messages.INTERNAL_ERROR.format(
        point=point, error=f"{type(exc).__name__}: {exc}"))


