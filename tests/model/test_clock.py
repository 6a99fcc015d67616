from __future__ import annotations

import time

import pytest

from policysched.model.clock import Clock, RealClock, SimulatedClock


def test_simulated_clock_moves_only_forward() -> None:
    clock = SimulatedClock(100)
    assert clock.now() == 100
    clock.advance_to(150.5)
    clock.advance(0.5)
    assert clock.now() == 151
    clock.advance_to(151)  # staying put is fine
    with pytest.raises(ValueError, match="cannot go back"):
        clock.advance_to(150)
    assert clock.now() == 151


def test_real_clock_follows_the_system_time() -> None:
    clock: Clock = RealClock()
    before = time.time()
    assert before <= clock.now() <= time.time()
