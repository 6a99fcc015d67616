"""The scheduling cycle: what is not covered by the YAML scenarios."""

from __future__ import annotations

import datetime
from typing import Any

from policysched.cluster.clock import SimulatedClock
from policysched.cluster.memory import MemoryBackend
from policysched.framework.scheduler import Scheduler
from policysched.inputs import load_engine

START = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.UTC)


def objects() -> list[dict[str, Any]]:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-0"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "delayed", "namespace": "default", "uid": "u1",
                        "creationTimestamp": START.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "annotations": {"delay": "15"}},
           "spec": {"schedulerName": "policysched", "containers": [{"name": "c"}]}}
    return [node, pod]


class SlowClock(SimulatedClock):
    """Wall time moves while a cycle runs: each read is 0.3 s later than the one before."""

    def now(self) -> float:
        value = super().now()
        self.advance(0.3)
        return value


def test_retry_after_counts_from_the_cycles_now_not_from_when_it_ended() -> None:
    engine = load_engine([], None)
    clock = SlowClock(START.timestamp() + 0.7)  # the pod's `now` is the whole second
    scheduler = Scheduler(MemoryBackend(objects(), clock), engine.frameworks, engine.settings)
    scheduler.sync()
    assert scheduler.schedule_one()
    record = scheduler.records["default/delayed"]
    assert record.node is None and "delay not reached" in (record.message or "")
    # creation + 15 s exactly, though the cycle ended more than a second after it began
    assert scheduler.next_wakeup() == START.timestamp() + 15
