"""``policysched simulate``: the engine on the in-process cluster with a simulated clock,
run to quiescence.

Time jumps from one due event to the next (a backoff expiring, a ``retryAfter``, a permit
time-out, the 5-minute flush of unschedulable pods), so a 15 s delay costs no wall time.
The run stops when nothing can change any more without an outside event: no pod is active,
backing off, waiting for a retry time or waiting at permit, and no unschedulable pod awaits
a flush that might help it (``SchedulingQueue.next_helpful_flush``: the cluster changed
since its latest attempt without moving it, as a bind does) — or when ``horizon``
simulated seconds have passed. A flush that changes nothing is not waited for, so the run
ends: a gang that times out, is flushed and times out again stops once nothing else moves.
A pod whose attempts fail with the same Error while nothing in the cluster changes is not
retried on every backoff: it waits for a change, as an unschedulable pod does, and is
reported unscheduled with that Error.

Progress (``on_progress``) counts the pending pods decided: bound, or given up for now
(unschedulable, gated or unserved: waiting for a change no other pending pod may bring).
A given-up pod that a cluster change sends back to the queue stays counted, so the count
never goes down; the last report, at the end of the run, is the total.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cache.cache import Snapshot
from ..cluster.memory import MemoryBackend
from ..framework.audit import AuditFinding
from ..framework.queue import ACTIVE, BACKOFF
from ..framework.runtime import CycleState, Framework
from ..framework.scheduler import Decision, EngineSettings, Scheduler
from ..model.clock import SimulatedClock
from ..model.objects import PodInfo

DEFAULT_HORIZON = 3600.0


@dataclass(frozen=True)
class PodOutcome:
    """Where a pending pod went: its node, when, after how many attempts, or its last
    FailedScheduling text; its ``status.nominatedNodeName`` at the end (an earlier
    preemption's node, kept once bound, as kube-scheduler leaves it) and the pods its
    preemptions evicted ("namespace/name", in order)."""

    namespace: str
    name: str
    node: str | None
    bound_at: float | None  # simulated seconds from the start
    attempts: int
    message: str | None
    nominated_node: str | None = None
    victims: tuple[str, ...] = ()
    audits: tuple[str, ...] = ()  # the latest finding of each audited rule, per point

    def as_json(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "name": self.name, "node": self.node,
                "boundAt": self.bound_at, "attempts": self.attempts, "message": self.message,
                "nominatedNodeName": self.nominated_node, "victims": list(self.victims),
                "audits": list(self.audits)}


@dataclass(frozen=True)
class SimulationProgress:
    decided: int  # pending pods bound or given up
    total: int  # pending pods at the start
    elapsed: float  # simulated seconds from the start


ProgressCallback = Callable[[SimulationProgress], None]

DecisionObserver = Callable[[Scheduler, Framework, CycleState, Snapshot, Decision], None]
"""Told of each scheduling cycle's decision, with the snapshot it was made against, before
the cycle acts on it (``explain`` looks at the cluster as it was then)."""


class _ObservedScheduler(Scheduler):
    """A scheduler that tells ``observer`` each decision it makes, and keeps the latest
    finding of each audited rule at each point, per pod."""

    observer: DecisionObserver | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.audits: dict[str, dict[tuple[str, str], str]] = {}

    def report_audits(self, pod: PodInfo, fwk: Framework,
                      findings: Sequence[AuditFinding]) -> None:
        super().report_audits(pod, fwk, findings)
        latest = self.audits.setdefault(pod.key, {})
        for finding in findings:
            latest[(finding.rule, finding.point.value)] = finding.text

    def decide(self, fwk: Framework, state: CycleState, snapshot: Snapshot) -> Decision:
        decision = super().decide(fwk, state, snapshot)
        if self.observer is not None:
            self.observer(self, fwk, state, snapshot, decision)
        return decision


@dataclass(frozen=True)
class Simulation:
    start: float
    end: float
    pods: tuple[PodOutcome, ...]
    scheduler: Scheduler
    backend: MemoryBackend

    def pod(self, key: str) -> PodOutcome | None:
        return next((p for p in self.pods if f"{p.namespace}/{p.name}" == key), None)


def simulate(objects: Sequence[Mapping[str, Any]], frameworks: Mapping[str, Framework],
             settings: EngineSettings, start: float, horizon: float = DEFAULT_HORIZON,
             on_progress: ProgressCallback | None = None,
             on_decision: DecisionObserver | None = None) -> Simulation:
    """Run to quiescence; ``on_progress`` is called after every scheduling cycle and time
    step, so it must be cheap (rate-limit any rendering); ``on_decision`` after every
    scheduling cycle's decision."""
    clock = SimulatedClock(start)
    backend = MemoryBackend([dict(o) for o in objects], clock)
    # a pod whose Error repeats with nothing changed waits for a change instead of being
    # retried with backoff until the horizon
    scheduler = _ObservedScheduler(backend, frameworks, settings, park_repeated_errors=True)
    scheduler.observer = on_decision
    scheduler.event_handlers.keep_deleted_records = True  # an evicted pod is still reported
    pending_at_start = _pending_keys(objects)
    total = len(pending_at_start)
    decided = 0

    def report() -> None:
        nonlocal decided
        if on_progress is not None:
            decided = max(decided, total - min(total, _undecided(scheduler)))
            on_progress(SimulationProgress(decided, total, clock.now() - start))

    while True:
        scheduler.sync()
        report()
        while scheduler.schedule_one():
            scheduler.sync()
            report()
        wakeup = scheduler.next_wakeup()
        pending = scheduler.queue.pending()
        busy = (pending[ACTIVE] or pending[BACKOFF] or len(scheduler.waiting)
                or scheduler.queue.next_helpful_flush() is not None)
        if wakeup is None or not busy or wakeup > start + horizon:
            break
        clock.advance_to(max(wakeup, clock.now()))
        scheduler.advance()
    if on_progress is not None:
        on_progress(SimulationProgress(total, total, clock.now() - start))
    return Simulation(start, clock.now(),
                      _outcomes(scheduler, backend, pending_at_start, start), scheduler,
                      backend)


def _undecided(scheduler: Scheduler) -> int:
    """Pods the run is still working on: ready to try, backing off, waiting at permit or
    for their bind."""
    pending = scheduler.queue.pending()
    return (pending[ACTIVE] + pending[BACKOFF] + len(scheduler.waiting)
            + len(scheduler.binds_in_flight))


def _pending_keys(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    keys = []
    for obj in objects:
        if obj.get("kind") != "Pod" or (obj.get("spec") or {}).get("nodeName"):
            continue
        metadata = obj.get("metadata") or {}
        keys.append(f"{metadata.get('namespace') or 'default'}/{metadata.get('name')}")
    return keys


def _outcomes(scheduler: _ObservedScheduler, backend: MemoryBackend, keys: Sequence[str],
              start: float) -> tuple[PodOutcome, ...]:
    out = []
    for key in keys:
        namespace, name = key.split("/", 1)
        record = scheduler.records.get(key)
        queued = scheduler.queue.get(key)  # a pod held by a preEnqueue gate says why
        gate = None if queued is None else queued.gate_message
        stored = backend.pod(key) or {}
        nominated = (stored.get("status") or {}).get("nominatedNodeName") or None
        audits = tuple(scheduler.audits.get(key, {}).values())
        if record is None:
            out.append(PodOutcome(namespace, name, None, None, 0,
                                  scheduler.unserved.get(key) or gate, nominated,
                                  audits=audits))
            continue
        bound_at = None if record.bound_at is None else record.bound_at - start
        out.append(PodOutcome(namespace, name, record.node, bound_at, record.attempts,
                              None if record.node is not None else record.message or gate,
                              nominated, tuple(record.victims), audits))
    return tuple(out)
