"""Time as the scheduler sees it: real time when running against a cluster, simulated time
(advanced by the simulation driver) for ``policysched simulate`` and tests."""

from __future__ import annotations

import time
from typing import Protocol

from . import messages


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch."""
        ...


class RealClock:
    def now(self) -> float:
        return time.time()


class SimulatedClock:
    """A clock that only moves when told to, and never backwards."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        """Move to ``t``; raises ``ValueError`` when ``t`` is before now."""
        if t < self._now:
            raise ValueError(messages.CLOCK_BACKWARDS.format(now=self._now, target=t))
        self._now = float(t)

    def advance(self, seconds: float) -> None:
        self.advance_to(self._now + seconds)
