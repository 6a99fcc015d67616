"""``SchedulingLoop`` on an in-process cluster: it survives what goes wrong inside the
engine, and no pod is lost."""

from __future__ import annotations

import threading
from typing import Any

from policysched.cache.node_info import NodeInfo
from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.queue import BACKOFF
from policysched.framework.runtime import CycleState
from policysched.framework.scheduler import Scheduler
from policysched.model.clock import RealClock
from policysched.service.loop import SchedulingLoop

from ..cache.objects_builder import make_node, make_pod
from ..cluster.polling import wait_for


class LiveMemoryBackend(MemoryBackend):
    """A ``MemoryBackend`` with the calls of a live backend, on the wall clock."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        super().__init__(objects, RealClock())
        self._wake = threading.Event()

    def start(self) -> None:
        pass

    def close(self, timeout: float = 2.0) -> None:
        pass

    def synced(self) -> bool:
        return True

    def wait_for_events(self, timeout: float | None) -> bool:
        self._wake.wait(timeout)
        self._wake.clear()
        return True

    def wait_for_binds(self, timeout: float | None) -> bool:
        return True

    def wake(self) -> None:
        self._wake.set()


def test_the_loop_goes_on_when_one_pods_cycle_raises() -> None:
    engine = load_engine([], None)
    fwk = engine.frameworks["policysched"]
    original = fwk.run_permit

    def run_permit(state: CycleState, node: NodeInfo) -> Any:
        if state.pod.name == "p3":  # an engine bug that only this pod meets
            raise KeyError("poison")
        return original(state, node)

    fwk.run_permit = run_permit  # type: ignore[method-assign]
    pods = [make_pod(f"p{i}", cpu="100m", schedulerName="policysched") for i in range(20)]
    backend = LiveMemoryBackend([make_node("n1"), make_node("n2"), *pods])
    loop = SchedulingLoop(engine, lambda: backend)
    thread = threading.Thread(target=loop.run_until, daemon=True)
    thread.start()
    try:
        wait_for(lambda: len(backend.bindings) == 19, timeout=10.0)
        wait_for(lambda: any(e.pod == "default/p3" for e in backend.events), timeout=10.0)
        scheduler = loop.scheduler
        assert scheduler is not None
        qp = scheduler.queue.get("default/p3")
        assert qp is not None and qp.queue == BACKOFF  # requeued, retried after backoff
    finally:
        loop.stop()
        thread.join(5)
    assert not thread.is_alive()
    assert "default/p3" not in {b.pod for b in backend.bindings}
    events = [(e.reason, e.message) for e in backend.events if e.pod == "default/p3"]
    assert events[0] == ("FailedScheduling", "internal error at Permit: KeyError: 'poison'")
    assert loop.errors >= 1


def test_pods_left_in_flight_by_an_escaped_exception_are_requeued_with_an_event() -> None:
    engine = load_engine([], None)
    backend = MemoryBackend([make_node("n1"), make_pod("p", schedulerName="policysched")])
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    scheduler.sync()
    qp = scheduler.queue.pop()  # a cycle began, then something outside it raised
    assert qp is not None
    pod = scheduler.cache.pod("default/p")
    assert pod is not None
    scheduler.cache.assume(pod, "n1")
    assert scheduler.recover_in_flight(OSError("connection reset")) == 1
    assert [(e.reason, e.message) for e in backend.events] == [
        ("FailedScheduling",
         "internal error at the scheduling loop: OSError: connection reset")]
    assert scheduler.queue.pending()[BACKOFF] == 1 and not scheduler.cache.is_assumed(pod)
