"""The binding cycle (kube-scheduler's bindingCycle): preBind → the bind handed to the
backend → its outcome (bound: postBind, Scheduled; failed: roll back, requeue), and the way
out of permit's waiting room (released into the binding cycle, or rejected).

The scheduling cycle (``Scheduler``) hands a pod over with ``start`` once permit allowed it,
or with ``wait`` when permit said Wait. Binds complete before ``start_bind`` returns
(``MemoryBackend``) or later on the backend's threads (``KubeBackend``); ``drain`` finishes
the cycles whose bind ended, on the scheduling thread. How an attempt ends (bound, failed)
and the guard against unexpected exceptions belong to the scheduling cycle, reached through
``SchedulingCycle``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from ..cache.cache import Cache, Snapshot
from ..cache.node_info import NodeInfo
from ..model.objects import PodInfo
from . import messages
from .backend import Backend, BindOutcome, BindRequest, VolumeBindRequest
from .queue import QueuedPod
from .runtime import CycleState, Framework, PermitWait
from .status import Code, Status, error, unschedulable
from .waiting import WaitingPod, WaitingRoom, waiting_pod


@dataclass
class AttemptProgress:
    """How far one pod's attempt went, to end it if it raises: its queue entry, when it
    began (``time.perf_counter()``), the point it was at, and once assumed the framework,
    the state and the node that reserve used."""

    qp: QueuedPod
    started: float
    point: str = "QueueSort"
    fwk: Framework | None = None
    state: CycleState | None = None
    node: str | None = None


def waiting_progress(waiting: WaitingPod, point: str) -> AttemptProgress:
    """The progress of a pod waiting at permit, at ``point``."""
    return AttemptProgress(waiting.qp, waiting.started, point, waiting.fwk, waiting.state,
                           waiting.node)


def rejection_message(status: Status) -> str:
    """A rejection after a node was chosen (reserve, permit, preBind, bind) reads as a
    FitError over that one node, as in kube-scheduler."""
    if status.code is Code.ERROR:
        return status.message
    return messages.fit_error(1, status.reasons)


class SchedulingCycle(Protocol):
    """What the binding cycle uses of the scheduling cycle (``Scheduler``): its guard, its
    extension-point timing, and how an attempt ends."""

    def guarded(self, progress: AttemptProgress, run: Callable[[], None]) -> None:
        """Run part of a pod's attempt; an unexpected exception ends that attempt only."""
        ...

    def reach(self, point: str) -> float:
        """Note that the attempt under way reached ``point``; the time, to time it."""
        ...

    def observe(self, fwk: Framework, point: str, status: Status, seconds: float) -> None:
        """Report one run of an extension point."""
        ...

    def cycle_state(self, pod: PodInfo, snapshot: Snapshot) -> CycleState:
        """The state to evaluate ``pod``'s rules with, against ``snapshot``, now."""
        ...

    def roll_back(self, fwk: Framework, state: CycleState, node_name: str) -> None:
        """Unreserve and forget the assumption."""
        ...

    def fail(self, qp: QueuedPod, status: Status, message: str, *, started: float,
             retry_at: float | None = None) -> None:
        """End an attempt that failed: report it on the pod, requeue the pod."""
        ...

    def bound(self, pod: PodInfo, node: str, *, started: float,
              counters: Sequence[tuple[str, float]] = ()) -> None:
        """End an attempt whose bind succeeded."""
        ...

    def released(self, attempts: Sequence[QueuedPod]) -> None:
        """Pods assumed on a node were forgotten in their binding cycle, their attempts
        ended: the room they held is free again (kube's AssignedPodDelete)."""
        ...


@dataclass(frozen=True)
class _Binding:
    """A binding cycle waiting for its bind's outcome."""

    request: BindRequest
    qp: QueuedPod
    started: float  # when its attempt began
    fwk: Framework
    state: CycleState
    node: NodeInfo
    groups: tuple[str, ...]

    def progress(self, point: str) -> AttemptProgress:
        return AttemptProgress(self.qp, self.started, point, self.fwk, self.state,
                               self.node.name)


class BindingCycle:
    """The binding cycles of one scheduler: its binds in flight and its waiting room."""

    def __init__(self, scheduling: SchedulingCycle, backend: Backend, cache: Cache,
                 waiting: WaitingRoom) -> None:
        self.scheduling = scheduling
        self.backend = backend
        self.cache = cache
        self.waiting = waiting
        self._in_flight: dict[str, _Binding] = {}  # pod key → its bind in flight

    # -- preBind → bind → postBind ----------------------------------------------------------

    def start(self, qp: QueuedPod, fwk: Framework, state: CycleState, node: NodeInfo, *,
              started: float, groups: tuple[str, ...] = ()) -> None:
        """preBind rules, then hand the bind to ``node`` (the bind rules' target, chosen
        in ``Scheduler.decide``) to the backend (blocks while the backend has as many binds
        in flight as it allows)."""
        pod = state.pod
        point_started = self.scheduling.reach("PreBind")
        status, labels, annotations = fwk.run_pre_bind(state, node)
        self.scheduling.observe(fwk, "PreBind", status, time.perf_counter() - point_started)
        if not status.is_success:
            self._failed(qp, fwk, state, node.name, status, started)
            return
        self.scheduling.reach("Bind")
        volumes = None
        if state.volume_bind_timeout is not None and state.reserved_volumes:
            volumes = VolumeBindRequest(tuple(state.reserved_volumes), state.volume_bind_timeout)
        request = BindRequest(pod, node.name, labels, annotations, volumes)
        state.release()  # kept until the outcome: only what the rest of the cycle needs
        self.backend.start_bind(request)
        self._in_flight[pod.key] = _Binding(request, qp, started, fwk, state, node, groups)
        # an assumed member counts toward its gangs (kube's coscheduling counts them too)
        self.waiting.record_bound(groups, pod.key)
        self.drain()

    @property
    def in_flight(self) -> list[str]:
        """Keys of the pods whose bind was handed to the backend and has no outcome yet."""
        return list(self._in_flight)

    def __contains__(self, key: object) -> bool:
        return key in self._in_flight

    def drain(self) -> int:
        """Finish the binding cycles whose bind ended (the backend's outcomes); returns
        how many outcomes there were."""
        outcomes = self.backend.drain_bind_outcomes()
        for outcome in outcomes:
            key = outcome.request.pod.key
            binding = self._in_flight.get(key)
            if binding is None or binding.request is not outcome.request:
                continue  # the pod was deleted meanwhile: its cycle already ended
            del self._in_flight[key]
            if outcome.error is None:  # bound: nothing that follows may undo it
                self.cache.finish_binding(outcome.request.pod)
            finish = self._bound if outcome.error is None else self._bind_failed
            self.scheduling.guarded(binding.progress("Bind"), partial(finish, binding, outcome))
        return len(outcomes)

    def _bound(self, binding: _Binding, outcome: BindOutcome) -> None:
        """The rest of the binding cycle after a successful bind: the attempt ends first
        (nothing after it can undo the bind), then postBind and Scheduled."""
        fwk, state, node = binding.fwk, binding.state, binding.node
        pod, target = state.pod, binding.request.node_name
        self.scheduling.bound(pod, target, started=binding.started,
                              counters=state.reserved_counters)
        self.scheduling.observe(fwk, "Bind", Status(), outcome.seconds)
        point_started = self.scheduling.reach("PostBind")
        notes = fwk.run_post_bind(state, node)
        # the volume bindings are complete: no unreserve can revert them any more
        self.cache.forget_volume_assumptions(pod.key)
        self.scheduling.observe(fwk, "PostBind", Status(), time.perf_counter() - point_started)
        for note in notes:
            self.backend.record_event(pod, "Normal", "PostBind", note)
        self.backend.record_event(pod, "Normal", messages.EVENT_SCHEDULED,
                                  messages.SCHEDULED.format(pod=pod.key, node=target))

    def _bind_failed(self, binding: _Binding, outcome: BindOutcome) -> None:
        """A failed bind (or preBind patch): roll back and requeue, as kube-scheduler's
        handleBindingCycleError."""
        status = error("", messages.BIND_FAILED.format(reason=outcome.error))
        self.scheduling.observe(binding.fwk, "Bind", status, outcome.seconds)
        self.waiting.forget_pod(binding.state.pod.key)  # no longer counts toward its gangs
        self._failed(binding.qp, binding.fwk, binding.state, binding.node.name, status,
                     binding.started)

    def _failed(self, qp: QueuedPod, fwk: Framework, state: CycleState, node_name: str,
                status: Status, started: float) -> None:
        """kube-scheduler's handleBindingCycleError: unreserve, forget the assumption, fail
        the attempt, and move the unschedulable pods the room it held may help."""
        self.scheduling.roll_back(fwk, state, node_name)
        self.scheduling.fail(qp, status, rejection_message(status), started=started)
        self.scheduling.released([qp])

    def drop(self, key: str) -> None:
        """The pod was deleted: end its permit wait (and its gangs' waiting members') or its
        binding cycle (rolled back; the outcome of its bind will be ignored); it no longer
        counts toward its gangs."""
        waiting = self.waiting.remove(key)
        if waiting is not None:
            self.scheduling.roll_back(waiting.fwk, waiting.state, waiting.node)
            self._end_waits(self._gang_rejections(waiting))  # its gangs go with it
        binding = self._in_flight.pop(key, None)
        if binding is not None:
            self.scheduling.roll_back(binding.fwk, binding.state, binding.node.name)
        self.waiting.forget_pod(key)

    # -- permit's waiting room --------------------------------------------------------------

    def wait(self, qp: QueuedPod, fwk: Framework, state: CycleState, node: NodeInfo,
             waits: Sequence[PermitWait], *, started: float) -> None:
        """Permit said Wait: the pod waits in the waiting room until every rule that held
        it allows it, or the first one's time-out rejects it."""
        now = self.backend.clock.now()
        self.waiting.add(waiting_pod(qp, fwk, state, node.name, waits, now, started))
        self._release_ready()

    def recheck_waiting(self) -> None:
        """Re-evaluate ``onFalse: Wait`` rules (the cluster or clock moved) and time-outs."""
        for waiting in list(self.waiting.pods.values()):
            if waiting.waits_on_rules() and waiting.key in self.waiting:
                self.scheduling.guarded(waiting_progress(waiting, "Permit"),
                                        partial(self._recheck_rules, waiting))
        self._expire_waiting()
        self._release_ready()

    def _recheck_rules(self, waiting: WaitingPod) -> None:
        """The waiting pod's false rules, on the cluster and at the time as they are now."""
        snapshot = self.cache.snapshot()
        node = snapshot.node(waiting.node)
        if node is None:
            return
        state = self.scheduling.cycle_state(waiting.state.pod, snapshot)
        status, passed = waiting.fwk.run_waiting_rules(state, node, waiting.waits_on_rules())
        if status.code is Code.ERROR:
            self._reject(waiting, status)
            return
        for rule in passed:
            waiting.allow(rule)

    def _release_ready(self) -> None:
        for waiting in list(self.waiting.pods.values()):
            if waiting.key not in self.waiting:
                continue
            self.waiting.allow_gangs(waiting)
            if not waiting.pending:
                self.scheduling.guarded(waiting_progress(waiting, "PreBind"),
                                        partial(self._release, waiting))

    def _release(self, waiting: WaitingPod) -> None:
        self.waiting.remove(waiting.key)
        node = self.cache.snapshot().node(waiting.node)
        if node is None:
            status = error("", messages.BIND_FAILED.format(reason=f"node {waiting.node} is gone"))
            self._failed(waiting.qp, waiting.fwk, waiting.state, waiting.node, status,
                         waiting.started)
            return
        self.start(waiting.qp, waiting.fwk, waiting.state, node, started=waiting.started,
                   groups=tuple(waiting.groups))

    def _expire_waiting(self) -> None:
        """A pending rule's time-out passed: the pod is rejected (kube's words), and its
        gangs' waiting members with it."""
        for waiting, wait in self.waiting.expired(self.backend.clock.now()):
            if waiting.key in self.waiting:
                reason = messages.PERMIT_TIMEOUT.format(
                    duration=messages.go_duration(wait.timeout), plugin=wait.rule)
                self._reject(waiting, unschedulable(wait.rule, reason))

    def reject_waiting(self, key: str, status: Status) -> None:
        """End the permit wait of pod ``key`` with ``status`` (a preemption victim)."""
        waiting = self.waiting.pods.get(key)
        if waiting is not None:
            self.scheduling.guarded(waiting_progress(waiting, "Permit"),
                                    partial(self._reject, waiting, status))

    def _reject(self, waiting: WaitingPod, status: Status) -> None:
        """End a waiting pod's attempt with ``status`` and, as scheduler-plugins'
        Coscheduling Unreserve does, the attempts of its gangs' waiting members; the room
        they held is free again."""
        self._end_waits([(waiting, status), *self._gang_rejections(waiting)])

    def _gang_rejections(self, waiting: WaitingPod) -> list[tuple[WaitingPod, Status]]:
        """The waiting members of ``waiting``'s gangs, each with its rejection (named after
        its own gang rule)."""
        out = []
        for sibling in self.waiting.siblings(waiting):
            rule = next(w.rule for g, w in sibling.groups.items() if g in waiting.groups)
            out.append((sibling, unschedulable(rule, messages.PERMIT_GANG_REJECTED)))
        return out

    def _end_waits(self, rejected: Sequence[tuple[WaitingPod, Status]]) -> None:
        """End these waits, each attempt with its status; then the room they held is free
        (one move of the unschedulable pods for them all, none of them moved)."""
        for pod, _ in rejected:
            self.waiting.remove(pod.key)
        for pod, status in rejected:
            self.scheduling.guarded(waiting_progress(pod, "Permit"),
                                    partial(self._end_waiting, pod, status))
        if rejected:
            self.scheduling.released([pod.qp for pod, _ in rejected])

    def _end_waiting(self, waiting: WaitingPod, status: Status) -> None:
        self.scheduling.roll_back(waiting.fwk, waiting.state, waiting.node)
        self.scheduling.fail(waiting.qp, status, rejection_message(status),
                             started=waiting.started)
