"""Permit's waiting room: pods that passed reserve and wait to be allowed to bind.

A pod waits on the permit rules that held it, each with its own time-out, as kube-scheduler's
waiting pod has a timer per pending permit plugin: ``onFalse: Wait`` rules (re-evaluated
whenever the cluster or the clock moves; allowed once true) and gang rules (allowed once
``minMember`` pods of the group have reached permit). It is released when every rule allowed
it, and rejected when the first pending rule's time-out passes; its gangs' waiting members are
rejected with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .queue import QueuedPod
from .runtime import CycleState, Framework, PermitWait


@dataclass(frozen=True)
class PendingRule:
    """A permit rule that has not allowed a waiting pod yet, and when its wait ends."""

    wait: PermitWait
    deadline: float


@dataclass(eq=False)
class WaitingPod:
    qp: QueuedPod
    fwk: Framework
    state: CycleState
    node: str
    pending: dict[str, PendingRule]  # policy/rule → its wait, until the rule allows the pod
    groups: dict[str, PermitWait] = field(default_factory=dict)  # gang name → its gang rule
    started: float = 0.0  # time.perf_counter() when its attempt began

    @property
    def key(self) -> str:
        return self.qp.key

    def first_deadline(self) -> PendingRule | None:
        """The pending rule whose wait ends first."""
        return min(self.pending.values(), key=lambda p: p.deadline, default=None)

    def allow(self, rule: str) -> None:
        self.pending.pop(rule, None)

    def waits_on_rules(self) -> list[str]:
        """The pending ``onFalse: Wait`` rules (not gangs)."""
        return [name for name, p in self.pending.items() if p.wait.group is None]


def waiting_pod(qp: QueuedPod, fwk: Framework, state: CycleState, node: str,
                waits: Iterable[PermitWait], now: float, started: float) -> WaitingPod:
    """A pod held by ``waits`` from ``now``."""
    waits = list(waits)
    return WaitingPod(qp, fwk, state, node,
                      pending={w.rule: PendingRule(w, now + w.timeout) for w in waits},
                      groups={w.group: w for w in waits if w.group is not None},
                      started=started)


class WaitingRoom:
    """Waiting pods by key, and the members of each gang that reached permit."""

    def __init__(self) -> None:
        self.pods: dict[str, WaitingPod] = {}
        self.bound_members: dict[str, set[str]] = {}  # gang -> keys of its bound pods

    def __len__(self) -> int:
        return len(self.pods)

    def __contains__(self, key: object) -> bool:
        return key in self.pods

    def add(self, pod: WaitingPod) -> None:
        self.pods[pod.key] = pod

    def remove(self, key: str) -> WaitingPod | None:
        return self.pods.pop(key, None)

    def members(self, group: str) -> list[WaitingPod]:
        return [w for w in self.pods.values() if group in w.groups]

    def siblings(self, pod: WaitingPod) -> list[WaitingPod]:
        """The other waiting members of ``pod``'s gangs."""
        return [w for w in self.pods.values()
                if w is not pod and any(group in w.groups for group in pod.groups)]

    def quorum(self, group: str, min_member: int) -> bool:
        """Whether ``min_member`` pods of ``group`` are waiting or already bound."""
        return len(self.members(group)) + len(self.bound_members.get(group, ())) >= min_member

    def allow_gangs(self, pod: WaitingPod) -> None:
        """The gang rules of ``pod`` whose gang has a quorum allow it, for good (kube's
        Allow: its timer stops)."""
        for name, pending in list(pod.pending.items()):
            wait = pending.wait
            if wait.group is not None and self.quorum(wait.group, wait.min_member):
                pod.allow(name)

    def record_bound(self, groups: Iterable[str], key: str) -> None:
        for group in groups:
            self.bound_members.setdefault(group, set()).add(key)

    def forget_pod(self, key: str) -> None:
        """A bound member went away: it no longer counts toward its gangs."""
        for members in self.bound_members.values():
            members.discard(key)

    def expired(self, now: float) -> list[tuple[WaitingPod, PermitWait]]:
        """The pods a rule's time-out rejects at ``now``, each with that rule's wait, the
        earliest first (the first of a gang is rejected for its time-out, the others with
        it)."""
        due: list[tuple[WaitingPod, PendingRule]] = []
        for pod in self.pods.values():
            first = pod.first_deadline()
            if first is not None and first.deadline <= now:
                due.append((pod, first))
        due.sort(key=lambda entry: entry[1].deadline)  # stable: ties keep arrival order
        return [(pod, first.wait) for pod, first in due]

    def next_deadline(self) -> float | None:
        deadlines = (p.first_deadline() for p in self.pods.values())
        return min((d.deadline for d in deadlines if d is not None), default=None)
