"""The result of running an extension point: kube-scheduler's status codes and meaning."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Code(StrEnum):
    SUCCESS = "Success"
    ERROR = "Error"  # an internal or CEL evaluation error: the pod is retried with backoff
    UNSCHEDULABLE = "Unschedulable"  # may pass later; preemption may help
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"  # preemption cannot help
    WAIT = "Wait"  # permit: hold the pod
    SKIP = "Skip"  # preFilter/preScore: the policy's later rules do not apply to this pod


@dataclass(frozen=True, slots=True)
class Status:
    """``reasons`` are user-visible texts; ``plugin`` names ``policy/rule``;
    ``retry_after`` (seconds) asks the queue to retry exactly then."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    retry_after: float | None = None

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_rejection(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def error(plugin: str, message: str) -> Status:
    return Status(Code.ERROR, (message,), plugin)


def unschedulable(plugin: str, reason: str, *, unresolvable: bool = False,
                  retry_after: float | None = None) -> Status:
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
    return Status(code, (reason,), plugin, retry_after)
