"""The scheduling cycle, top-down: one pod from the queue to a bound node.

``Scheduler.schedule_one`` reads like kube-scheduler's ScheduleOne:

1. pop the best pending pod; build its ``CycleState`` against a cache snapshot;
2. match (each policy's ``spec.match``) → preFilter → filter (with node sampling) →
   postFilter (preemption) when nothing fits;
3. preScore → score → pick the highest total (ties at random) → the bind rules' target
   (another node must pass the filters), so that what follows uses the node bound to;
4. assume the pod on the node in the cache; reserve; permit (allow / deny / wait);
5. the binding cycle: preBind → bind → postBind. The preBind rules run here; the bind
   itself (with preBind's metadata patch) is handed to the backend
   (``start_bind``) and the cycle ends when its outcome comes back (``drain_binds``, also
   run by ``sync``): at once with a synchronous backend, later with ``KubeBackend``'s
   binding threads, while this thread schedules the next pods.

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from ..cache.cache import Cache, Snapshot
from ..cache.node_info import NodeInfo
from ..model.events import ClusterEvent
from ..model.objects import ObjectError, PodInfo
from ..policy.model import ExtensionPoint
from . import messages
from .backend import Backend, BackendError, BindOutcome, BindRequest
from .preemption import preempt
from .queue import ASSIGNED_POD_UPDATE, IN_FLIGHT, GateRejection, QueuedPod, SchedulingQueue
from .runtime import UNORDERED, CycleState, Framework
from .status import SUCCESS, Code, Status, error, unschedulable
from .vectorised import NodeEvaluator
from .waiting import WaitingPod, WaitingRoom

VECTORISED, SCALAR = "vectorised", "scalar"  # EngineSettings.evaluation
MIN_FEASIBLE_NODES = 100
_NO_ROWS = np.zeros(0, np.int64)
MIN_FEASIBLE_PERCENTAGE = 5
PREFILTER_EXCLUDED = "node is filtered out by the prefilter result"

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


@dataclass
class PodRecord:
    """What happened to one pod, for ``simulate`` and metrics."""

    key: str
    attempts: int = 0
    node: str | None = None
    bound_at: float | None = None
    message: str | None = None
    first_seen: float | None = None


@dataclass
class Decision:
    """The outcome of choosing a node: a node name, or a failure status and its message
    (``statuses``: the nodes that failed a filter, when none fits)."""

    node: str | None
    status: Status
    message: str = ""
    statuses: dict[str, Status] = field(default_factory=dict)


ExtensionPointObserver = Callable[[str, str, str, float], None]
"""Called with (profile, extension point, status code, seconds) after each point runs."""


@dataclass
class _Cycle:
    """How far one pod's attempt went, to roll it back if it raises: the point it was
    at, and once assumed the node and the state that reserve used."""

    qp: QueuedPod
    point: str = "QueueSort"
    fwk: Framework | None = None
    state: CycleState | None = None
    node: str | None = None


@dataclass(frozen=True)
class _Binding:
    """A binding cycle waiting for its bind's outcome."""

    request: BindRequest
    qp: QueuedPod
    fwk: Framework
    state: CycleState
    node: NodeInfo
    groups: tuple[str, ...]


class Scheduler:
    def __init__(self, backend: Backend, profiles: Mapping[str, Framework],
                 settings: EngineSettings | None = None,
                 observe_extension_point: ExtensionPointObserver | None = None, *,
                 on_internal_error: Callable[[BaseException], None] | None = None,
                 park_repeated_errors: bool = False) -> None:
        """``on_internal_error`` is told of each unexpected exception the engine recovered
        from; ``park_repeated_errors`` (``simulate``) parks a pod whose Error repeats with
        nothing changed (see ``SchedulingQueue``) instead of retrying it with backoff."""
        self.backend = backend
        self.observe_extension_point = observe_extension_point
        self.on_internal_error = on_internal_error
        self.clock = backend.clock
        self.profiles = dict(profiles)
        self.settings = settings or EngineSettings()
        self.cache = Cache()
        self.waiting = WaitingRoom()
        self.counters: dict[str, float] = {}
        self.records: dict[str, PodRecord] = {}
        self.unserved: dict[str, str] = {}  # pending pods no profile serves → message
        self.nominated: dict[str, tuple[str, PodInfo]] = {}  # preemptor → (node, pod)
        self._binding: dict[str, _Binding] = {}  # pod key → its bind in flight
        self._cycle: _Cycle | None = None  # the attempt under way
        self._gate_errors: dict[str, str] = {}  # gated pod → the gate Error last reported
        self._sort_errors: dict[str, Status] = {}  # pod → its queueSort keys' Error
        self.rng = random.Random(self.settings.seed)
        self._next_start_node = 0
        self.evaluator = NodeEvaluator() if self.settings.evaluation == VECTORISED else None
        self.queue = SchedulingQueue(
            self.clock.now,
            less=self._less,
            sort_key=self._sort_key,
            pre_enqueue=self._gate,
            initial_backoff=self.settings.initial_backoff,
            max_backoff=self.settings.max_backoff,
            park_repeated_errors=park_repeated_errors,
        )

    def set_profiles(self, profiles: Mapping[str, Framework]) -> None:
        """Swap the compiled policy set (hot reload), between scheduling cycles. Pods keep
        their place in the queue; pods of a profile that no longer exists stay queued and
        are reported when popped."""
        self.profiles = dict(profiles)
        if self.evaluator is not None:
            self.evaluator.reset()

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

    # -- source → cache and queue ----------------------------------------------------------

    def sync(self) -> int:
        """Apply the backend's pending events, then finish the binding cycles whose bind
        ended; returns how many events and bind outcomes there were."""
        events = self.backend.drain_events()
        for event in events:
            try:
                self._apply(event)
            except Exception as e:  # one bad event must not cost the others
                log.exception(messages.LOG_EVENT_FAILED, event.kind, event.resource)
                self._tell(e)
        if events:
            self._recheck_waiting()
        return len(events) + self.drain_binds()

    def _apply(self, event: ClusterEvent) -> None:
        try:
            change = self.cache.apply(event)
        except ObjectError as e:
            self.unserved[str(event.obj.get("metadata", {}).get("name", "?"))] = str(e)
            return
        if event.resource == "Node":
            self.queue.move_all(f"Node{event.kind.title()}")
            return
        if event.resource != "Pod":
            return
        pod = change.pod
        key = change.old_pod.key if pod is None and change.old_pod else (pod.key if pod else "")
        if event.kind == "DELETED" or pod is None:
            self.nominated.pop(key, None)
            self._gate_errors.pop(key, None)
            self._sort_errors.pop(key, None)
            self.queue.delete(key)
            waiting = self.waiting.remove(key)
            if waiting is not None:
                self._roll_back(waiting.fwk, waiting.state, waiting.node)
            binding = self._binding.pop(key, None)
            if binding is not None:  # its cycle ends here; its outcome will be ignored
                self._roll_back(binding.fwk, binding.state, binding.node.name)
            self.waiting.forget_pod(key)
            self.queue.move_all("PodDelete")
            return
        if pod.node_name or pod.terminated:
            if key in self.queue and key not in self.queue.in_flight():
                self.queue.delete(key)
            old = change.old_pod
            if old is None or (old.node_name, old.terminated) != (pod.node_name, pod.terminated):
                self.queue.wake_parked(ASSIGNED_POD_UPDATE)
            return
        if pod.scheduler_name not in self.profiles:
            self.unserved[key] = messages.PROFILE_UNKNOWN.format(pod=key,
                                                                 name=pod.scheduler_name)
            return
        if self.cache.is_assumed(pod) or key in self.waiting:
            return
        record = self.records.setdefault(key, PodRecord(key))
        if record.first_seen is None:
            record.first_seen = self.clock.now()
        if key in self.queue:
            old = change.old_pod
            self.queue.update(pod, spec_changed=old is None or old.obj.get("spec") != pod.obj.get(
                "spec"))
        else:
            self.queue.add(pod)
            # a new pod can make others schedulable (a gang's last member, affinity)
            self.queue.move_all("PodAdd")

    def _gate(self, pod: PodInfo) -> GateRejection | None:
        """preEnqueue, as the queue's gate. A gate that fails keeps the pod out of activeQ
        (kube's PreEnqueue error) and is reported on the pod: a FailedScheduling event and
        condition, once per distinct error (the gate re-runs on every move)."""
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None or not fwk.has_rules(ExtensionPoint.PRE_ENQUEUE):
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
        if status.is_success:
            self._gate_errors.pop(pod.key, None)
            return None
        if status.code is Code.ERROR and self._gate_errors.get(pod.key) != status.message:
            self._gate_errors[pod.key] = status.message
            self._report(pod, status, status.message)
        return GateRejection(status.plugin or status.message, status.message)

    def cycle_state(self, pod: PodInfo, snapshot: Snapshot) -> CycleState:
        return CycleState(pod, int(self.clock.now()), snapshot.pod_views, snapshot.node_views,
                          snapshot.pods_with_affinity_views)

    # -- the scheduling cycle ----------------------------------------------------------------

    def schedule_one(self) -> bool:
        """Schedule the next pod of the queue; False when the queue had none ready."""
        qp = self.queue.pop()
        if qp is None:
            return False
        cycle = _Cycle(qp)
        self._guarded(cycle, partial(self._schedule, cycle))
        return True

    def _schedule(self, cycle: _Cycle) -> None:
        qp = cycle.qp
        pod = self.cache.pod(qp.key) or qp.pod
        if pod.node_name or self.cache.is_assumed(pod):
            self.queue.done(qp.key)  # bound meanwhile (by us or another scheduler)
            return
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None:  # its profile went away with a policy reload: keep it queued
            message = messages.PROFILE_UNKNOWN.format(pod=qp.key, name=pod.scheduler_name)
            self._fail(qp, unschedulable("", message), message)
            return
        record = self.records.setdefault(pod.key, PodRecord(pod.key))
        record.attempts += 1
        sort_error = self._sort_errors.get(pod.key)
        if sort_error is not None:  # its queueSort keys failed when it was queued
            self._fail(qp, sort_error, sort_error.message)
            return
        snapshot = self.cache.snapshot()
        state = cycle.state = self.cycle_state(pod, snapshot)
        cycle.fwk = fwk

        decision = self.decide(fwk, state, snapshot)
        if decision.node is None:
            status = decision.status
            # a rule's retryAfter counts from the cycle's `now` (whole seconds), not from
            # the end of the cycle
            retry_at = None if status.retry_after is None else state.now + status.retry_after
            self._fail(qp, status, decision.message, retry_at)
            return
        node = snapshot.node(decision.node)
        assert node is not None
        self.cache.assume(pod, node.name)
        cycle.node = node.name

        started = self._start("Reserve")
        status = fwk.run_reserve(state, node, self.counters)
        self._observe(fwk, "Reserve", status, started)
        if not status.is_success:
            self._roll_back(fwk, state, node.name)
            self._fail(qp, status, self._rejection_message(status))
            return

        started = self._start("Permit")
        status, gangs = fwk.run_permit(state, node)
        self._observe(fwk, "Permit", status, started)
        if status.is_rejection or status.code is Code.ERROR:
            self._roll_back(fwk, state, node.name)
            self._fail(qp, status, self._rejection_message(status))
            return
        if status.code is Code.WAIT:
            self._wait(qp, fwk, state, node, status, gangs)
            return
        self._binding_cycle(qp, fwk, state, node)

    def _start(self, point: str) -> float:
        """Note that the attempt under way reached ``point``; the time, for ``_observe``."""
        if self._cycle is not None:
            self._cycle.point = point
        return time.perf_counter()

    def _guarded(self, cycle: _Cycle, run: Callable[[], None]) -> None:
        """Run (part of) a pod's cycle; an unexpected exception aborts that pod's
        attempt only (``_abort``)."""
        outer, self._cycle = self._cycle, cycle
        try:
            run()
        except Exception as e:
            self._abort(cycle, e)
        finally:
            self._cycle = outer

    def _abort(self, cycle: _Cycle, exc: Exception) -> None:
        """After an unexpected exception in a pod's cycle: undo what the cycle did
        (reserved counters, the assumption, a permit wait), report it on the pod and
        requeue it with backoff. A pod whose bind was handed over or succeeded is left
        to that bind's outcome; one handed back already stays where it is."""
        qp = cycle.qp
        key = qp.key
        status = self._internal_error(key, cycle.point, exc)
        pod = self.cache.pod(key)
        if key in self._binding:
            return
        if pod is not None and self.cache.binding_finished(pod):  # bound: never undone
            self.queue.done(key)
            return
        waiting = self.waiting.remove(key)
        if waiting is not None:
            cycle = _waiting_cycle(waiting, cycle.point)
        if self.queue.get(key) is not qp or qp.queue != IN_FLIGHT:
            return  # deleted meanwhile, or already handed back
        if cycle.fwk is not None and cycle.state is not None and cycle.node is not None:
            try:
                self._roll_back(cycle.fwk, cycle.state, cycle.node)
            except Exception:
                log.exception(messages.LOG_ROLL_BACK_FAILED, key)
        if pod is not None and self.cache.is_assumed(pod):
            self.cache.forget(pod)
        self._fail(qp, status, status.message)

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
            if qp is None or key in self.waiting or key in self._binding:
                continue
            pod = self.cache.pod(key)
            if pod is not None and pod.node_name:
                self.queue.done(key)
                continue
            if pod is not None and self.cache.is_assumed(pod) \
                    and not self.cache.binding_finished(pod):
                self.cache.forget(pod)
            status = internal_error(messages.SCHEDULING_LOOP, exc)
            try:
                self._report(qp.pod if pod is None else pod, status, status.message)
            except Exception:
                log.exception(messages.LOG_REPORT_FAILED, key)
            self.queue.requeue(qp, error=True, error_message=status.message)
            recovered += 1
        return recovered

    def decide(self, fwk: Framework, state: CycleState, snapshot: Snapshot) -> Decision:
        """match → preFilter → filter → postFilter → score → the bind rules' target: the
        node for the pod, or why none."""
        nodes = snapshot.nodes
        total = len(nodes)
        started = self._start("PreFilter")
        status, names = fwk.check_matches(state), None
        if status.is_success:
            status, names = fwk.run_pre_filter(state)
        self._observe(fwk, "PreFilter", status, started)
        if status.code is Code.ERROR:
            return Decision(None, status, status.message)
        if not status.is_success:
            return self._pre_filter_rejected(fwk, state, nodes, status)
        if total == 0:
            return Decision(None, unschedulable("", messages.NO_NODES), messages.NO_NODES)
        statuses: dict[str, Status] = {}
        candidates = nodes
        if names is not None:
            candidates = [n for n in nodes if n.name in names]
            for n in nodes:
                if n.name not in names:
                    statuses[n.name] = unschedulable("", PREFILTER_EXCLUDED, unresolvable=True)
        started = self._start("Filter")
        if self.evaluator is not None:
            rows, failure = self._find_feasible_vectorised(
                fwk, state, snapshot, candidates, statuses)
        else:
            rows, failure = self._find_feasible(fwk, state, snapshot, candidates, statuses)
        self._observe(fwk, "Filter", failure or Status(), started)
        if failure is not None:
            return Decision(None, failure, failure.message, statuses)
        if not len(rows):
            return self._no_fit(fwk, state, nodes, statuses)
        if len(rows) == 1:
            return self._bind_target(fwk, state, snapshot, nodes[int(rows[0])], statuses)
        started = self._start("PreScore")
        status = fwk.run_pre_score(state)
        self._observe(fwk, "PreScore", status, started)
        if not status.is_success:
            return Decision(None, status, status.message, statuses)
        started = self._start("Score")
        if self.evaluator is not None:
            status, totals = self.evaluator.score(fwk, state, snapshot, rows)
        else:
            status, scalar_totals, _ = fwk.run_score(state, [nodes[r] for r in rows.tolist()])
            totals = np.array(scalar_totals, np.int64)
        self._observe(fwk, "Score", status, started)
        if not status.is_success:
            return Decision(None, status, status.message, statuses)
        chosen = nodes[self._select_host(rows, totals)]
        return self._bind_target(fwk, state, snapshot, chosen, statuses)

    def _bind_target(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
                     chosen: NodeInfo, statuses: dict[str, Status]) -> Decision:
        """The node the bind rules send the pod to, decided here, before reserve, so that
        the assumption, reserve, permit and preBind all use the node the pod is bound to.
        A target other than the chosen node must be a node of the snapshot that passes
        the filters (with this cycle's state and room promised to preemptors), else the
        pod is Unschedulable there, naming the bind rule and the filter's reason."""
        self._start("Bind")
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
            verdict = fwk.run_filter(state, node if not others else _with_pods(node, others))
            if verdict.is_success:
                return Decision(target, SUCCESS, statuses=statuses)
            if verdict.code is Code.ERROR:
                return Decision(None, verdict, verdict.message, statuses)
            reason = messages.BIND_TARGET_REJECTED.format(
                policy=rule.policy, rule=rule.name, node=target, reason=verdict.message)
            verdict = Status(verdict.code, (reason,), rule.qualified_name)
        return Decision(None, verdict, verdict.message, statuses)

    def _find_feasible(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
                       nodes: list[NodeInfo], statuses: dict[str, Status]
                       ) -> tuple[np.ndarray, Status | None]:
        """Filter nodes round-robin from where the last cycle stopped, until enough are
        feasible (kube-scheduler's numFeasibleNodesToFind); their snapshot rows."""
        if not nodes:
            return _NO_ROWS, None
        wanted = self._feasible_nodes_to_find(len(nodes))
        start = self._next_start_node % len(nodes)
        feasible: list[NodeInfo] = []
        processed = 0
        plan = fwk.filter_plan(state)
        nominated = self._nominated_by_node(state.pod)
        for i in range(len(nodes)):
            node = nodes[(start + i) % len(nodes)]
            processed += 1
            if node.name in nominated:  # room promised to preemptors counts as taken
                status = fwk.run_filter(state, _with_pods(node, nominated[node.name]),
                                        plan=plan)
            else:
                status = fwk.run_filter(state, node, plan=plan)
            if status.is_success:
                feasible.append(node)
                if len(feasible) >= wanted:
                    break
            elif status.code is Code.ERROR:
                return _NO_ROWS, status
            else:
                statuses[node.name] = status
        self._next_start_node = (start + processed) % len(nodes)
        return np.array([snapshot.index[n.name] for n in feasible], np.int64), None

    def _find_feasible_vectorised(
            self, fwk: Framework, state: CycleState, snapshot: Snapshot,
            nodes: list[NodeInfo], statuses: dict[str, Status]
    ) -> tuple[np.ndarray, Status | None]:
        """``_find_feasible`` with every node filtered at once: the same nodes in the same
        order (the first ``numFeasibleNodesToFind`` feasible from the round-robin start)."""
        assert self.evaluator is not None
        if not nodes:
            return _NO_ROWS, None
        first, errors, status_of = self.evaluator.filter(fwk, state, snapshot)
        if len(nodes) == len(snapshot.nodes):
            candidates = np.arange(len(nodes))
        else:
            candidates = np.fromiter((snapshot.index[n.name] for n in nodes), np.int64,
                                     len(nodes))
        wanted = self._feasible_nodes_to_find(len(nodes))
        start = self._next_start_node % len(nodes)
        order = np.roll(candidates, -start)
        overrides: dict[int, Status] = {}  # room promised to preemptors counts as taken
        nominated = self._nominated_by_node(state.pod)
        if nominated:
            plan = fwk.filter_plan(state)
            for name, others in nominated.items():
                node = snapshot.node(name)
                if node is not None:
                    overrides[snapshot.index[name]] = fwk.run_filter(
                        state, _with_pods(node, others), plan=plan)
        ok, failed = first[order] < 0, errors[order]
        for row, status in overrides.items():
            ok[order == row] = status.is_success
            failed[order == row] = status.code is Code.ERROR
        positions = np.flatnonzero(ok)
        processed = int(positions[wanted - 1]) + 1 if len(positions) >= wanted \
            else len(order)
        failures = np.flatnonzero(failed[:processed])
        if len(failures):
            row = int(order[failures[0]])
            return _NO_ROWS, overrides.get(row) or status_of(row)
        if not len(positions):
            for row in order.tolist():
                statuses[snapshot.nodes[row].name] = overrides.get(row) or status_of(row)
        self._next_start_node = (start + processed) % len(nodes)
        return order[positions[:wanted]], None

    def _nominated_by_node(self, pod: PodInfo) -> dict[str, list[PodInfo]]:
        """Pods nominated by preemption, of at least ``pod``'s priority, by node (kube's
        two-pass filter with nominated pods, simplified to the pass with them)."""
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
        """kube-scheduler still runs postFilter after an unresolvable preFilter rejection
        (every node has that status, so preemption cannot help, and says so)."""
        suffix = ""
        if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and nodes:
            result = preempt(fwk, state, nodes, {n.name: status for n in nodes})
            suffix = result.message
        return Decision(None, status, messages.fit_error(
            len(nodes), (), pre_filter_message=status.message, post_filter_message=suffix))

    def _no_fit(self, fwk: Framework, state: CycleState, nodes: list[NodeInfo],
                statuses: dict[str, Status]) -> Decision:
        """No feasible node: try preemption, then describe the failure as kube does."""
        reasons = [r for s in statuses.values() for r in s.reasons]
        started = self._start("PostFilter")
        result = preempt(fwk, state, nodes, statuses)
        self._observe(fwk, "PostFilter", result.status or Status(), started)
        if result.status is not None:
            return Decision(None, result.status, result.status.message, statuses)
        if result.candidate is not None:
            pod = state.pod
            for victim in result.candidate.victims:
                self.backend.evict(victim, messages.PREEMPTED.format(
                    uid=pod.uid, node=result.candidate.node))
            self.backend.set_nominated_node(pod, result.candidate.node)
            self.nominated[pod.key] = (result.candidate.node, pod)
        status = unschedulable("", messages.fit_error(len(nodes), reasons))
        return Decision(None, status, messages.fit_error(
            len(nodes), reasons, post_filter_message=result.message), statuses)

    def _select_host(self, rows: np.ndarray, totals: np.ndarray) -> int:
        """The row of the highest total; among equals, one chosen uniformly at random."""
        tied = np.flatnonzero(totals == totals.max()).tolist()
        return int(rows[tied[0] if len(tied) == 1 else self.rng.choice(tied)])

    # -- permit waiting -------------------------------------------------------------------------

    def _wait(self, qp: QueuedPod, fwk: Framework, state: CycleState, node: NodeInfo,
              status: Status, gangs: list[tuple[Any, str, int]]) -> None:
        now = self.clock.now()
        timeout = float(status.timeout or 0)
        waiting = WaitingPod(qp, fwk, state, node.name, now + timeout, timeout,
                             groups={group: minimum for _, group, minimum in gangs},
                             rule_wait=bool(status.reasons), reason=status.message)
        self.waiting.add(waiting)
        self._release_ready()

    def _recheck_waiting(self) -> None:
        """Re-evaluate ``onFalse: Wait`` rules (the cluster or clock moved) and time-outs."""
        for waiting in list(self.waiting.pods.values()):
            if waiting.rule_wait and waiting.key in self.waiting:
                self._guarded(_waiting_cycle(waiting, "Permit"),
                              partial(self._recheck_rules, waiting))
        self._expire_waiting()
        self._release_ready()

    def _recheck_rules(self, waiting: WaitingPod) -> None:
        node = self.cache.snapshot().node(waiting.node)
        if node is None:
            return
        status = waiting.fwk.run_waiting_rules(waiting.state, node)
        if status.is_success:
            waiting.rule_wait = False
        elif status.code is Code.ERROR:
            self._reject(waiting, status)

    def _release_ready(self) -> None:
        for waiting in list(self.waiting.pods.values()):
            if waiting.key in self.waiting and self.waiting.ready(waiting):
                self._guarded(_waiting_cycle(waiting, "PreBind"),
                              partial(self._release, waiting))

    def _release(self, waiting: WaitingPod) -> None:
        self.waiting.remove(waiting.key)
        node = self.cache.snapshot().node(waiting.node)
        if node is None:
            self._roll_back(waiting.fwk, waiting.state, waiting.node)
            self._fail(waiting.qp, error("", messages.BIND_FAILED.format(
                reason=f"node {waiting.node} is gone")), "")
            return
        self._binding_cycle(waiting.qp, waiting.fwk, waiting.state, node,
                            groups=tuple(waiting.groups))

    def _expire_waiting(self) -> None:
        now = self.clock.now()
        for waiting in self.waiting.expired(now):
            rejected = [waiting]
            for group in waiting.groups:  # a gang is rejected together
                rejected += [w for w in self.waiting.members(group) if w is not waiting]
            for pod in rejected:
                if pod.key not in self.waiting:
                    continue
                reason = messages.PERMIT_TIMEOUT.format(seconds=pod.timeout)
                if pod is not waiting and waiting.groups:
                    reason = messages.PERMIT_GROUP_REJECTED.format(
                        group=", ".join(waiting.groups), reason=reason)
                status = unschedulable(waiting.state.pod.key, reason)
                self._guarded(_waiting_cycle(pod, "Permit"),
                              partial(self._reject, pod, status))

    def _reject(self, waiting: WaitingPod, status: Status) -> None:
        """End a waiting pod's attempt with ``status``."""
        self.waiting.remove(waiting.key)
        self._roll_back(waiting.fwk, waiting.state, waiting.node)
        self._fail(waiting.qp, status, self._rejection_message(status))

    def next_wakeup(self) -> float | None:
        """The earliest time something becomes due (queue timers, permit time-outs)."""
        times = [t for t in (self.queue.next_wakeup(), self.waiting.next_deadline())
                 if t is not None]
        return min(times, default=None)

    def advance(self) -> None:
        """Time moved: release due queue timers and expire permit waits."""
        self.queue.flush()
        self._recheck_waiting()

    # -- the binding cycle ------------------------------------------------------------------

    def _binding_cycle(self, qp: QueuedPod, fwk: Framework, state: CycleState,
                       node: NodeInfo, groups: tuple[str, ...] = ()) -> None:
        """preBind rules, then hand the bind to ``node`` (the bind rules' target, chosen
        in ``decide``) to the backend (blocks while the backend has as many binds in
        flight as it allows)."""
        pod = state.pod
        started = self._start("PreBind")
        status, labels, annotations = fwk.run_pre_bind(state, node)
        self._observe(fwk, "PreBind", status, started)
        if not status.is_success:
            self._roll_back(fwk, state, node.name)
            self._fail(qp, status, self._rejection_message(status))
            return
        self._start("Bind")
        request = BindRequest(pod, node.name, labels, annotations)
        self.backend.start_bind(request)
        self._binding[pod.key] = _Binding(request, qp, fwk, state, node, groups)
        # an assumed member counts toward its gangs (kube's coscheduling counts them too)
        self.waiting.record_bound(groups, pod.key)
        self.drain_binds()

    @property
    def binds_in_flight(self) -> list[str]:
        """Keys of the pods whose bind was handed to the backend and has no outcome yet."""
        return list(self._binding)

    def drain_binds(self) -> int:
        """Finish the binding cycles whose bind ended (the backend's outcomes); returns
        how many outcomes there were."""
        outcomes = self.backend.drain_bind_outcomes()
        for outcome in outcomes:
            key = outcome.request.pod.key
            binding = self._binding.get(key)
            if binding is None or binding.request is not outcome.request:
                continue  # the pod was deleted meanwhile: its cycle already ended
            del self._binding[key]
            if outcome.error is None:  # bound: nothing that follows may undo it
                self.cache.finish_binding(outcome.request.pod)
            finish = self._bound if outcome.error is None else self._bind_failed
            self._guarded(_Cycle(binding.qp, "Bind", binding.fwk, binding.state,
                                 binding.node.name), partial(finish, binding, outcome))
        return len(outcomes)

    def _bound(self, binding: _Binding, outcome: BindOutcome) -> None:
        """The rest of the binding cycle after a successful bind: the pod's bookkeeping
        first (nothing after it can undo the bind), then postBind and Scheduled."""
        fwk, state, node = binding.fwk, binding.state, binding.node
        pod, target = state.pod, binding.request.node_name
        self.queue.done(pod.key)
        self.nominated.pop(pod.key, None)
        record = self.records.setdefault(pod.key, PodRecord(pod.key))
        record.node, record.bound_at, record.message = target, self.clock.now(), None
        self._observe_seconds(fwk, "Bind", Status(), outcome.seconds)
        started = self._start("PostBind")
        notes = fwk.run_post_bind(state, node)
        self._observe(fwk, "PostBind", Status(), started)
        for note in notes:
            self.backend.record_event(pod, "Normal", "PostBind", note)
        self.backend.record_event(pod, "Normal", messages.EVENT_SCHEDULED,
                                  messages.SCHEDULED.format(pod=pod.key, node=target))

    def _bind_failed(self, binding: _Binding, outcome: BindOutcome) -> None:
        """A failed bind (or preBind patch): roll back and requeue, as kube-scheduler's
        handleBindingCycleError."""
        status = error("", messages.BIND_FAILED.format(reason=outcome.error))
        self._observe_seconds(binding.fwk, "Bind", status, outcome.seconds)
        self.waiting.forget_pod(binding.state.pod.key)  # no longer counts toward its gangs
        self._roll_back(binding.fwk, binding.state, binding.node.name)
        self._fail(binding.qp, status, self._rejection_message(status))

    def _observe(self, fwk: Framework, point: str, status: Status, started: float) -> None:
        if self.observe_extension_point is not None:
            self.observe_extension_point(fwk.scheduler_name, point, status.code.value,
                                         time.perf_counter() - started)

    def _observe_seconds(self, fwk: Framework, point: str, status: Status,
                         seconds: float) -> None:
        if self.observe_extension_point is not None:
            self.observe_extension_point(fwk.scheduler_name, point, status.code.value, seconds)

    # -- failures -----------------------------------------------------------------------------

    def _roll_back(self, fwk: Framework, state: CycleState, node_name: str) -> None:
        """Unreserve (reverse order; the counters even when the node is gone) and forget
        the assumption."""
        node = self.cache.snapshot().node(node_name)
        for note in fwk.run_unreserve(state, node, self.counters):
            self.backend.record_event(state.pod, "Normal", "Unreserve", note)
        if self.cache.is_assumed(state.pod):
            self.cache.forget(state.pod)

    @staticmethod
    def _rejection_message(status: Status) -> str:
        """A rejection after a node was chosen (reserve, permit, preBind, bind) reads as a
        FitError over that one node, as in kube-scheduler."""
        if status.code is Code.ERROR:
            return status.message
        return messages.fit_error(1, status.reasons)

    def _fail(self, qp: QueuedPod, status: Status, message: str,
              retry_at: float | None = None) -> None:
        """kube-scheduler's handleSchedulingFailure: event, condition, requeue (not when
        the pod turned out bound meanwhile, e.g. by a bind reported as failed)."""
        pod = self.cache.pod(qp.key) or qp.pod
        message = message or status.message
        self._report(pod, status, message)
        if pod.node_name:
            self.queue.done(qp.key)
        else:
            is_error = status.code is Code.ERROR
            self.queue.requeue(qp, retry_after=status.retry_after, retry_at=retry_at,
                               error=is_error, error_message=message if is_error else None,
                               unschedulable_by=[status.plugin] if status.plugin else None)

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


def internal_error(point: str, exc: BaseException) -> Status:
    """The Error that reports an unexpected exception on a pod."""
    return error("", messages.INTERNAL_ERROR.format(
        point=point, error=f"{type(exc).__name__}: {exc}"))


def _waiting_cycle(waiting: WaitingPod, point: str) -> _Cycle:
    return _Cycle(waiting.qp, point, waiting.fwk, waiting.state, waiting.node)


def _with_pods(node: NodeInfo, pods: list[PodInfo]) -> NodeInfo:
    """A copy of ``node`` with ``pods`` counted on it as well."""
    copy = node.clone()
    for pod in pods:
        copy.add_pod(pod)
    return copy
