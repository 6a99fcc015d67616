import gc
import weakref
from collections.abc import Iterator

import pytest

from policysched.service.collector import YOUNG_THRESHOLD, GarbageCollector


class Node:
    """An object that can be in a reference cycle."""

    other: "Node | None" = None


@pytest.fixture
def collector() -> Iterator[GarbageCollector]:
    now = [0.0]
    collector = GarbageCollector(interval=60.0, clock=lambda: now[0])
    collector.now = now  # type: ignore[attr-defined]
    collector.configure()
    yield collector
    collector.restore()


def old_cycle() -> weakref.ref[Node]:
    """A reference cycle that became garbage after reaching the oldest generation."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    for _ in range(2):
        gc.collect(1)  # alive: promoted to the oldest generation
    return weakref.ref(a)


def test_allocations_no_longer_start_full_collections(collector: GarbageCollector) -> None:
    assert gc.get_threshold()[2] > 10**6
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD  # rarer young collections
    collector.restore()
    assert gc.get_threshold()[2] < 10**6  # CPython's schedule is back after restore
    assert gc.get_threshold()[0] < YOUNG_THRESHOLD


def test_a_full_collection_runs_on_the_interval_and_frees_cycles(
        collector: GarbageCollector) -> None:
    collector.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    garbage = old_cycle()
    gc.collect(1)
    assert garbage() is not None  # young collections do not walk it
    collector.now[0] = 59.0  # type: ignore[attr-defined]
    assert not collector.tick()
    collector.now[0] = 60.0  # type: ignore[attr-defined]
    assert collector.tick()
    assert garbage() is None
    assert collector.full_collections == 1
    assert not collector.tick()  # the next one is an interval later


def test_restore_unfreezes(collector: GarbageCollector) -> None:
    collector.freeze()
    collector.restore()
    assert gc.get_freeze_count() == 0
