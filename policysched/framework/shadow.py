"""The shadow scheduler: the engine beside a scheduler that really binds, judging what it
would have decided for each pod, without ever writing to the cluster.

``ShadowScheduler`` serves the pods whose ``spec.schedulerName`` is one of
``ShadowSettings.scheduler_names`` (by default kube-scheduler's ``default-scheduler``) with
one profile of its own policy set (``ShadowSettings.profile``, else the first). It follows
the cluster like any scheduler (the same cache, events and queueing), but never pops its
queue: a pod seen pending is *watched*; when the event that resolves it arrives — its
``spec.nodeName`` set by the other scheduler's binding, or a PodScheduled=False condition
its rejection wrote — the shadow decides the pod first, against the cluster as it was just
before that event (the pod still pending, every earlier binding counted: the moment the
other scheduler decided it, as closely as the watch can tell), then applies the event and
reports a ``Judgment``. A pod already bound when first seen is not judged.

Bindings can land out of the order they were decided (kube-scheduler binds on goroutines):
a binding that arrives while a pod the other scheduler decided earlier — ahead of it in
kube-scheduler's queue order: higher priority, else seen first — is still pending, neither
bound nor rejected, is held back (with the pod's later events) until that pod's outcome
has landed, at most ``HOLD_SECONDS``; held bindings are then applied and judged in that
queue order. A pod gated by ``spec.schedulingGates`` is no one's predecessor.

The decision is the node choice (``Scheduler.decide``: match → preFilter → filter →
postFilter → score → the bind rules' target), after the pod's preEnqueue gate; reserve and
permit, which hold state across pods, are not run, and preemption is only computed (its
victims are reported, never evicted). A would-bind node agrees with the actual node when
the actual node is one of the nodes as good as it (the highest total score: both
schedulers break such ties at random).

Nothing is written: the engine runs on a ``ReadOnlyBackend``, which raises
``ShadowWriteError`` on any write call, and the shadow's paths make none (the reports a
failing preEnqueue gate would write on the pod are dropped).
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..model.clock import Clock
from ..model.events import ClusterEvent
from ..model.objects import ObjectError, PodGroupSpec, PodInfo, pod_key
from . import messages
from .backend import Backend, BindOutcome, BindRequest, VolumeBindRequest
from .preemption import Candidate
from .runtime import Framework
from .scheduler import (
    AttemptObserver,
    AuditObserver,
    EngineSettings,
    ExtensionPointObserver,
    Scheduler,
)
from .status import Code, Status

log = logging.getLogger(__name__)

KUBE_SCHEDULER_NAME: Final = "default-scheduler"

# A judgment's result (policysched_shadow_decisions_total{result})
AGREE: Final = "agree"  # the same node (or one as good), or both rejected the pod
DIFFER: Final = "differ"  # both bound it, to nodes the shadow does not rank equal
WOULD_REJECT: Final = "would_reject"  # bound by the other; the shadow would not bind it
WOULD_BIND: Final = "would_bind"  # rejected by the other; the shadow would bind it
ERROR: Final = "error"  # the shadow's decision was an Error (a rule's runtime error…)
RESULTS: Final = (AGREE, DIFFER, WOULD_REJECT, WOULD_BIND, ERROR)

POD_SCHEDULED: Final = "PodScheduled"
HOLD_SECONDS: Final = 2.0  # the longest a binding waits for an earlier-decided pod's outcome


class ShadowWriteError(RuntimeError):
    """A write attempted through a ``ReadOnlyBackend``: a bug of the shadow, never a
    cluster's answer (not a ``BackendError``: nothing catches it as one)."""


class ReadOnlyBackend:
    """A ``Backend`` that reads through ``inner`` and refuses every write."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner

    @property
    def clock(self) -> Clock:
        return self.inner.clock

    def drain_events(self) -> list[ClusterEvent]:
        return self.inner.drain_events()

    def drain_bind_outcomes(self) -> list[BindOutcome]:
        return self.inner.drain_bind_outcomes()

    def pod_groups(self) -> dict[str, PodGroupSpec]:
        return self.inner.pod_groups()

    def _refuse(self, call: str) -> ShadowWriteError:
        return ShadowWriteError(messages.SHADOW_WRITE.format(call=call))

    def bind(self, pod: PodInfo, node_name: str) -> None:
        raise self._refuse("bind")

    def start_bind(self, request: BindRequest) -> None:
        raise self._refuse("start_bind")

    def bind_volumes(self, pod: PodInfo, volumes: VolumeBindRequest) -> None:
        raise self._refuse("bind_volumes")

    def evict(self, pod: PodInfo, message: str) -> None:
        raise self._refuse("evict")

    def patch_pod_metadata(self, pod: PodInfo, labels: Mapping[str, str | None],
                           annotations: Mapping[str, str | None]) -> None:
        raise self._refuse("patch_pod_metadata")

    def set_nominated_node(self, pod: PodInfo, node_name: str | None) -> None:
        raise self._refuse("set_nominated_node")

    def record_event(self, pod: PodInfo, type: Any, reason: str, message: str,
                     action: str | None = None) -> None:
        raise self._refuse("record_event")

    def set_pod_condition(self, pod: PodInfo, status: Any, reason: str,
                          message: str) -> None:
        raise self._refuse("set_pod_condition")


@dataclass(frozen=True)
class ShadowSettings:
    """Whose pods the shadow judges, and with which of its profiles (None: the first)."""

    scheduler_names: tuple[str, ...] = (KUBE_SCHEDULER_NAME,)
    profile: str | None = None


@dataclass(frozen=True)
class Verdict:
    """What the shadow would have done: bind to ``node`` (``best``: the nodes as good as
    it, it included), or not, with ``message`` (kube-scheduler's FailedScheduling text;
    ``victims``: the pods its preemption would have evicted)."""

    node: str | None
    best: tuple[str, ...] = ()
    message: str = ""
    error: bool = False
    victims: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judgment:
    """One pod's verdict against what the other scheduler did: bound it to
    ``actual_node``, or (None) rejected it with ``actual_message``."""

    pod: str  # "namespace/name"
    uid: str
    scheduler_name: str  # the other scheduler's
    profile: str  # the shadow's profile that decided
    verdict: Verdict
    actual_node: str | None
    actual_message: str
    result: str  # one of RESULTS
    at: float  # clock time of the judgment
    pending_seconds: float  # since the shadow first saw the pod pending

    def as_dict(self) -> dict[str, Any]:
        """The report's JSON object."""
        out: dict[str, Any] = {
            "pod": self.pod, "uid": self.uid, "schedulerName": self.scheduler_name,
            "profile": self.profile, "result": self.result, "at": round(self.at, 3),
            "pendingSeconds": round(self.pending_seconds, 3),
            "actual": ({"node": self.actual_node} if self.actual_node is not None
                       else {"rejected": self.actual_message}),
        }
        verdict = self.verdict
        if verdict.node is not None:
            out["shadow"] = {"node": verdict.node, "best": list(verdict.best)}
        else:
            out["shadow"] = {"rejected": verdict.message, "error": verdict.error}
            if verdict.victims:
                out["shadow"]["wouldEvict"] = list(verdict.victims)
        return out


def judge(verdict: Verdict, actual_node: str | None) -> str:
    """The result of ``verdict`` against the other scheduler's outcome (a node, or None
    when it rejected the pod)."""
    if verdict.error:
        return ERROR
    if actual_node is None:
        return AGREE if verdict.node is None else WOULD_BIND
    if verdict.node is None:
        return WOULD_REJECT
    return AGREE if actual_node in verdict.best else DIFFER


JudgmentObserver = Callable[[Judgment], None]


@dataclass
class _Watched:
    """A pending pod of another scheduler, waiting for its outcome; ``order``: its place
    in kube-scheduler's queue (higher priority first, then arrival) while the other
    scheduler has not decided it as far as the shadow knows (None: gated, rejected, or
    its binding is being applied)."""

    uid: str
    first_seen: float
    order: tuple[int, int] | None = None
    rejection_judged: bool = False


@dataclass
class _Held:
    """A pod's binding (and its later events) held back until its predecessors'
    outcomes land, or ``deadline``."""

    key: str
    order: tuple[int, int]
    deadline: float
    events: list[ClusterEvent]


@dataclass
class _Outcome:
    node: str | None
    message: str = ""


class ShadowScheduler(Scheduler):
    """A ``Scheduler`` that judges another scheduler's pods (see the module)."""

    records_audit_events = False  # audit findings reach the metrics only
    def __init__(self, backend: Backend, profiles: Mapping[str, Framework],
                 settings: EngineSettings | None = None,
                 observe_extension_point: ExtensionPointObserver | None = None, *,
                 shadow: ShadowSettings, on_judgment: JudgmentObserver,
                 on_internal_error: Callable[[BaseException], None] | None = None,
                 on_attempt_end: AttemptObserver | None = None,
                 on_audit: AuditObserver | None = None) -> None:
        self.shadow = shadow
        self.on_judgment = on_judgment
        self._watched: dict[str, _Watched] = {}
        self._arrivals = itertools.count()
        # the unresolved watched pods' (order, key), lazily cleaned: the earliest predecessor
        self._queue_order: list[tuple[tuple[int, int], str]] = []
        self._held: dict[str, _Held] = {}
        self._victims: list[str] = []
        super().__init__(backend, self._served(profiles), settings, observe_extension_point,
                         on_internal_error=on_internal_error, on_attempt_end=on_attempt_end,
                         on_audit=on_audit)

    def _served(self, profiles: Mapping[str, Framework]) -> dict[str, Framework]:
        """The shadowed scheduler names, each served by the shadow's profile."""
        name = self.shadow.profile
        fwk = profiles.get(name) if name else next(iter(profiles.values()), None)
        if fwk is None:
            log.warning(messages.LOG_SHADOW_NO_PROFILE, messages.SHADOW_NO_PROFILE.format(
                profile=name, names=", ".join(profiles)))
            return {}
        return dict.fromkeys(self.shadow.scheduler_names, fwk)

    def set_profiles(self, profiles: Mapping[str, Framework]) -> None:
        super().set_profiles(self._served(profiles))

    @property
    def watched(self) -> list[str]:
        """The pending pods waiting for the other scheduler's outcome."""
        return list(self._watched)

    def schedule_one(self) -> bool:
        """Never: the shadow decides pods when their outcome arrives (``apply_event``)."""
        return False

    def sync(self) -> int:
        count = super().sync()
        self._release()
        return count

    def advance(self) -> None:
        super().advance()
        self._release()

    def next_wakeup(self) -> float | None:
        """The queue's and the permit waits' timers, and the earliest held binding's
        deadline."""
        times = [t for t in (super().next_wakeup(),
                             min((h.deadline for h in self._held.values()), default=None))
                 if t is not None]
        return min(times, default=None)

    def apply_event(self, event: ClusterEvent) -> None:
        """Apply ``event``, or hold it back when it binds a pod decided after another
        still pending (and then every later event of that pod); see the module."""
        key = _event_pod_key(event)
        if key is not None:
            held = self._held.get(key)
            if held is not None:
                held.events.append(event)
                return
            watched = self._watched.get(key)
            if (watched is not None and watched.order is not None
                    and _bound_node(watched, event) and self._predecessor(watched.order)):
                self._held[key] = _Held(key, watched.order,
                                        self.clock.now() + HOLD_SECONDS, [event])
                return
        self._apply(event, key)
        if self._held:
            self._release()

    def _predecessor(self, order: tuple[int, int]) -> bool:
        """Whether an unresolved watched pod comes before ``order`` in the queue."""
        heap = self._queue_order
        while heap:
            first, key = heap[0]
            watched = self._watched.get(key)
            if watched is not None and watched.order == first:
                return first < order
            heapq.heappop(heap)  # resolved, gone, or queued again since
        return False

    def _release(self) -> None:
        """Apply the held bindings (each with its pod's later events) whose predecessors
        all resolved, or whose deadline passed, in queue order."""
        while self._held:
            now = self.clock.now()
            ready = [h for h in sorted(self._held.values(), key=lambda h: h.order)
                     if h.deadline <= now or not self._predecessor(h.order)]
            if not ready:
                return
            held = ready[0]
            del self._held[held.key]
            watched = self._watched.get(held.key)
            if watched is not None:
                watched.order = None  # its outcome is being applied: no one's predecessor
            for event in held.events:
                self._apply(event, held.key)

    def _apply(self, event: ClusterEvent, key: str | None) -> None:
        """Apply ``event``; when it resolves a watched pod, decide the pod first (against
        the cluster before the event) and report the judgment after."""
        if key is None:
            super().apply_event(event)
            return
        watched = self._watched.get(key)
        before = self.cache.pod(key) if watched is not None else None
        outcome = (_outcome(before, watched, event) if before is not None
                   and watched is not None and event.kind != "DELETED" else None)
        verdict = (self.verdict(before) if outcome is not None and before is not None
                   and before.scheduler_name in self.profiles else None)
        super().apply_event(event)
        after = self.cache.pod(key)
        if event.kind == "DELETED" or after is None:
            self._watched.pop(key, None)
            return
        if watched is not None and verdict is not None and outcome is not None:
            self._judge(after, watched, verdict, outcome)
        if watched is not None and watched.uid != after.uid:
            watched = None  # recreated under the same name
            self._watched.pop(key, None)
        if after.node_name or after.terminated:
            self._watched.pop(key, None)
            return
        if watched is None and after.scheduler_name in self.profiles:
            watched = self._watched[key] = _Watched(after.uid, self.clock.now())
        if watched is not None:
            self._queue(key, watched, after)

    def _queue(self, key: str, watched: _Watched, pod: PodInfo) -> None:
        """Give a watched pod its place in the other scheduler's queue while it is
        neither gated nor rejected (a PodScheduled=False condition)."""
        if ((pod.obj.get("spec") or {}).get("schedulingGates")
                or _scheduled_condition(pod.obj).get("status") == "False"):
            watched.order = None
        elif watched.order is None:
            watched.order = (-pod.priority, next(self._arrivals))
            heapq.heappush(self._queue_order, (watched.order, key))

    def verdict(self, pod: PodInfo) -> Verdict:
        """What the shadow would decide for ``pod`` (of a served schedulerName) now: its
        preEnqueue gate, then the node choice. Never raises: an unexpected exception is an
        Error verdict."""
        fwk = self.profiles[pod.scheduler_name]
        self._victims = []
        try:
            gate = self._gate(pod)
            if gate is not None:
                return Verdict(None, message=gate.message or gate.gated_by)
            snapshot = self.cache.snapshot()
            decision = self.decide(fwk, self.cycle_state(pod, snapshot), snapshot)
            self.report_audits(pod, fwk, decision.audits)
        except Exception as e:
            return Verdict(None, message=self._internal_error(pod.key, "Shadow", e).message,
                           error=True)
        if decision.node is None:
            return Verdict(None, message=decision.message,
                           error=decision.status.code is Code.ERROR,
                           victims=tuple(self._victims))
        scores = decision.scores
        top = max(scores.values(), default=None)
        best = sorted(n for n, total in scores.items() if total == top)
        return Verdict(decision.node,
                       tuple(best) if decision.node in best else (decision.node,))

    def _judge(self, pod: PodInfo, watched: _Watched, verdict: Verdict,
               outcome: _Outcome) -> None:
        now = self.clock.now()
        fwk = self.profiles.get(pod.scheduler_name)
        judgment = Judgment(
            pod.key, pod.uid, pod.scheduler_name, fwk.scheduler_name if fwk else "",
            verdict, outcome.node, outcome.message, judge(verdict, outcome.node), now,
            max(0.0, now - watched.first_seen))
        if outcome.node is None:
            watched.rejection_judged = True
        try:
            self.on_judgment(judgment)
        except Exception:
            log.exception(messages.LOG_OBSERVER_FAILED)

    # -- what a scheduler would write, a shadow keeps to itself ------------------------------

    def _prepare_candidate(self, pod: PodInfo, candidate: Candidate) -> None:
        """Preemption's victims are noted for the verdict, never evicted."""
        self._victims.extend(victim.key for victim in candidate.victims)

    def _report(self, pod: PodInfo, status: Status, message: str) -> None:
        """A failure is the verdict's message, not an Event or a condition on the pod."""


def _event_pod_key(event: ClusterEvent) -> str | None:
    """The "namespace/name" of a Pod event's object; None for other objects (or a pod
    without a readable key)."""
    if event.resource != "Pod":
        return None
    try:
        return pod_key(event.obj)
    except ObjectError:
        return None


def _bound_node(watched: _Watched, event: ClusterEvent) -> str:
    """The node ``event`` binds the watched pod to ("" when it does not bind it)."""
    obj = event.obj
    if event.kind == "DELETED" or str((obj.get("metadata") or {}).get("uid", "")) \
            != watched.uid:
        return ""
    return str((obj.get("spec") or {}).get("nodeName") or "")


def _outcome(before: PodInfo, watched: _Watched, event: ClusterEvent) -> _Outcome | None:
    """What ``event`` says the other scheduler did with the watched pod: bound it (its
    ``spec.nodeName`` appears), or rejected it (a PodScheduled=False condition, judged once
    per pod); None when neither (or it is another pod under the same name)."""
    obj = event.obj
    if str((obj.get("metadata") or {}).get("uid", "")) != watched.uid:
        return None
    node = _bound_node(watched, event)
    if node:
        return _Outcome(node)
    if watched.rejection_judged:
        return None
    condition = _scheduled_condition(obj)
    if condition.get("status") != "False" or condition == _scheduled_condition(before.obj):
        return None
    return _Outcome(None, str(condition.get("message") or condition.get("reason") or ""))


def _scheduled_condition(obj: dict[str, Any]) -> dict[str, Any]:
    """The PodScheduled condition's status, reason and message ({} without one)."""
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") == POD_SCHEDULED:
            return {k: condition.get(k) for k in ("status", "reason", "message")}
    return {}


def shadow_settings(scheduler_names: Sequence[str], profile: str | None) -> ShadowSettings:
    """``ShadowSettings`` from the command line (no names: kube-scheduler's)."""
    return ShadowSettings(tuple(scheduler_names) or (KUBE_SCHEDULER_NAME,), profile)


