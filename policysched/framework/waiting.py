"""Permit's waiting room: pods that passed reserve and wait to be allowed to bind.

A pod waits for two kinds of reasons: ``onFalse: Wait`` rules (re-evaluated whenever the
cluster or the clock moves) and gang rules (released when ``minMember`` pods of the group
have reached permit, rejected together when the first member's wait times out).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .queue import QueuedPod
from .runtime import CycleState, Framework


@dataclass(eq=False)
class WaitingPod:
    qp: QueuedPod
    fwk: Framework
    state: CycleState
    node: str
    deadline: float
    timeout: float
    groups: dict[str, int] = field(default_factory=dict)  # gang name -> minMember
    rule_wait: bool = False  # an onFalse: Wait rule has not passed yet
    reason: str = ""
    started: float = 0.0  # time.perf_counter() when its attempt began

    @property
    def key(self) -> str:
        return self.qp.key


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

    def quorum(self, group: str, min_member: int) -> bool:
        """Whether ``min_member`` pods of ``group`` are waiting or already bound."""
        return len(self.members(group)) + len(self.bound_members.get(group, ())) >= min_member

    def ready(self, pod: WaitingPod) -> bool:
        """Every reason for ``pod`` to wait is gone."""
        return not pod.rule_wait and all(self.quorum(g, n) for g, n in pod.groups.items())

    def record_bound(self, groups: Iterable[str], key: str) -> None:
        for group in groups:
            self.bound_members.setdefault(group, set()).add(key)

    def forget_pod(self, key: str) -> None:
        """A bound member went away: it no longer counts toward its gangs."""
        for members in self.bound_members.values():
            members.discard(key)

    def expired(self, now: float) -> list[WaitingPod]:
        return [w for w in self.pods.values() if w.deadline <= now]

    def next_deadline(self) -> float | None:
        return min((w.deadline for w in self.pods.values()), default=None)
