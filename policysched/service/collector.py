"""``GarbageCollector``: when Python's cyclic garbage collector walks the scheduler's heap.

CPython runs a full collection each time the objects that survived the young collections
grow by a quarter. A scheduler's heap is its cluster — every node and pod, parsed — so each
full collection walks all of it, and a busy scheduler allocates enough to start one every
few seconds: perf put the collector at about a fifth of policysched's CPU at 1,000 nodes,
more with more pods. So, in ``policysched run``:

* ``configure()``: a young collection every ``YOUNG_THRESHOLD`` net allocations instead
  of CPython's 700. A cycle allocates thousands of short-lived objects; at 700, young
  collections met them alive and promoted them, and every tenth (a middle collection)
  walked those survivors again. Scheduling 10,000 pods at 5,000 nodes: 203 young and 18
  middle collections, 141 ms with pauses of up to 18 ms; at 50,000, 2 young ones, 9 ms.
  Full collections are no longer started by allocations;
* ``freeze()`` after the initial sync: what exists then (modules, compiled policies, the
  listed cluster) moves to the permanent generation, which no collection walks;
* ``tick()`` runs a full collection at most every ``interval`` seconds, so reference
  cycles are still freed, off the allocation path.

As a ``RunObserver`` of the loop, it freezes on ``on_synced`` and ticks on ``on_loop`` (the
loop's heartbeat, between cycles).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

from ..framework.scheduler import Scheduler
from .observers import RunObserver

FULL_COLLECTION_INTERVAL = 60.0  # seconds between two full collections
YOUNG_THRESHOLD = 50_000  # net allocations between two young collections
_NEVER = 1 << 30  # a gen2 threshold that allocations never reach


class GarbageCollector(RunObserver):
    """The process's collector schedule (the ``gc`` module's state is process-wide)."""

    def __init__(self, interval: float = FULL_COLLECTION_INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self.full_collections = 0
        self._last = clock()
        self._thresholds: tuple[int, int, int] | None = None

    def configure(self) -> None:
        """Young collections every ``YOUNG_THRESHOLD`` allocations (at least), full
        collections only from ``tick()``."""
        self._thresholds = young, middle, _ = gc.get_threshold()
        gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, _NEVER)

    def restore(self) -> None:
        """CPython's schedule back (the frozen objects are collectable again)."""
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None
        gc.unfreeze()

    def freeze(self) -> None:
        """Collect, then keep what survives out of every later collection."""
        gc.collect()
        gc.freeze()
        self._last = self.clock()

    def tick(self) -> bool:
        """A full collection if the last one is ``interval`` seconds old; returns whether
        one ran."""
        now = self.clock()
        if now - self._last < self.interval:
            return False
        gc.collect()
        self.full_collections += 1
        self._last = self.clock()
        return True

    def on_synced(self, seconds: float, nodes: int, pods: int) -> None:
        self.freeze()

    def on_loop(self, scheduler: Scheduler | None) -> None:
        self.tick()


__all__ = ["FULL_COLLECTION_INTERVAL", "YOUNG_THRESHOLD", "GarbageCollector"]
