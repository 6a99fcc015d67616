"""``BindPool`` (binds on worker threads) and ``StartedBinds`` (binds that finish later,
on whichever thread): bounded, one outcome per request."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from policysched.cluster.binder import BindPool, StartedBinds
from policysched.framework.backend import BindError, BindOutcome, BindRequest
from policysched.model.objects import pod_info

from ..cache.objects_builder import make_pod
from .polling import wait_for


def request(name: str, node: str = "n1") -> BindRequest:
    return BindRequest(pod_info(make_pod(name, uid=f"uid-{name}")), node)


class GatedBinds:
    """A ``run`` for the pool that holds every bind until ``gate`` opens, counting how
    many run at once."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.threads: set[str] = set()

    def __call__(self, req: BindRequest) -> BindOutcome:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self.threads.add(threading.current_thread().name)
        self.gate.wait(5)
        with self.lock:
            self.running -= 1
        if req.node_name == "bad":
            return BindOutcome(req, BindError("refused"), 0.01)
        return BindOutcome(req, None, 0.01)


def test_binds_run_beside_the_caller_and_each_has_one_outcome() -> None:
    binds = GatedBinds()
    woken = threading.Semaphore(0)
    pool = BindPool(binds, size=4, notify=woken.release)
    requests = [request("a"), request("b", node="bad"), request("c")]
    for r in requests:
        pool.submit(r)  # returns at once: the binds wait behind the gate
    wait_for(lambda: binds.running == 3)
    assert pool.in_flight == 3 and pool.drain() == [] and not pool.has_outcomes()
    binds.gate.set()
    assert pool.wait_idle(5)
    for _ in requests:
        assert woken.acquire(timeout=5)  # one notification per outcome
    outcomes = pool.drain()
    assert sorted(o.request.pod.name for o in outcomes) == ["a", "b", "c"]
    assert all(o.request is r for r in requests for o in outcomes if o.request.pod == r.pod)
    errors = {o.request.pod.name: o.error for o in outcomes}
    assert errors["a"] is None and errors["c"] is None
    assert isinstance(errors["b"], BindError)
    assert pool.drain() == []
    assert binds.threads <= {f"binder-{i}" for i in range(4)}
    pool.close()


def test_submit_blocks_while_the_bound_is_reached() -> None:
    binds = GatedBinds()
    pool = BindPool(binds, size=2)
    pool.submit(request("a"))
    pool.submit(request("b"))
    third = threading.Thread(target=pool.submit, args=(request("c"),), daemon=True)
    third.start()
    time.sleep(0.2)
    assert third.is_alive()  # waiting for a slot
    assert binds.running == 2 and pool.in_flight == 2
    binds.gate.set()
    third.join(5)
    assert not third.is_alive()
    assert pool.wait_idle(5)
    assert len(pool.drain()) == 3
    assert binds.peak == 2 and pool.peak == 2
    pool.close()


def test_a_queueing_pool_never_blocks_the_submitter() -> None:
    """Binds that wait for their volumes: at most ``size`` run, the others queue, and the
    scheduling thread that submits them goes on."""
    binds = GatedBinds()
    pool = BindPool(binds, size=2, queues=True)
    started = time.monotonic()
    for name in "abcde":
        pool.submit(request(name))
    assert time.monotonic() - started < 1.0
    wait_for(lambda: binds.running == 2)
    assert pool.in_flight == 5
    binds.gate.set()
    assert pool.wait_idle(5)
    assert sorted(o.request.pod.name for o in pool.drain()) == list("abcde")
    assert binds.peak == 2
    pool.close()


def test_a_crashing_bind_is_a_failed_outcome() -> None:
    def crash(req: BindRequest) -> BindOutcome:
        raise RuntimeError("boom")

    pool = BindPool(crash, size=1)
    pool.submit(request("a"))
    assert pool.wait_idle(5)
    (outcome,) = pool.drain()
    assert isinstance(outcome.error, BindError)
    assert "default/a failed unexpectedly: boom" in str(outcome.error)
    pool.close()


def test_close_abandons_binds_not_started_and_later_submissions() -> None:
    binds = GatedBinds()
    pool = BindPool(binds, size=1)
    pool.submit(request("running"))
    wait_for(lambda: binds.running == 1)
    waiting = threading.Thread(target=pool.submit, args=(request("queued"),), daemon=True)
    waiting.start()
    time.sleep(0.1)
    pool.close(timeout=0.1)  # the running bind is still behind the gate
    waiting.join(5)
    pool.submit(request("late"))
    abandoned = {o.request.pod.name: str(o.error) for o in pool.drain()}
    assert set(abandoned) == {"queued", "late"}
    assert "was abandoned" in abandoned["late"]
    binds.gate.set()  # a bind already under way still ends, with its own outcome
    wait_for(lambda: pool.in_flight == 0)
    (finished,) = pool.drain()
    assert finished.request.pod.name == "running" and finished.error is None


def test_the_bound_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        BindPool(lambda r: BindOutcome(r, None), size=0)
    with pytest.raises(ValueError, match="at least 1"):
        StartedBinds(lambda r, finish: None, size=0)


class HeldBinds:
    """A ``start`` for ``StartedBinds`` that keeps each bind's ``finish`` until
    ``finish_all``, which calls them from a thread of its own."""

    def __init__(self) -> None:
        self.held: list[tuple[BindRequest, Callable[[BindOutcome], None]]] = []
        self.started_on: set[str] = set()

    def __call__(self, req: BindRequest, finish: Callable[[BindOutcome], None]) -> None:
        if req.node_name == "crash":
            raise RuntimeError("boom")
        if req.node_name == "at-once":
            finish(BindOutcome(req, BindError("refused at once")))
            return
        self.started_on.add(threading.current_thread().name)
        self.held.append((req, finish))

    def finish_all(self) -> None:
        held, self.held = self.held, []

        def run() -> None:
            for req, finish in held:
                finish(BindOutcome(req, None, 0.01))

        thread = threading.Thread(target=run, name="answers")
        thread.start()
        thread.join(5)


def test_started_binds_are_bounded_and_each_has_one_outcome() -> None:
    binds = HeldBinds()
    woken = threading.Semaphore(0)
    started = StartedBinds(binds, size=2, notify=woken.release)
    started.submit(request("a"))
    started.submit(request("b"))
    assert started.in_flight == 2 and binds.started_on == {threading.current_thread().name}
    third = threading.Thread(target=started.submit, args=(request("c"),), daemon=True)
    third.start()
    time.sleep(0.2)
    assert third.is_alive() and len(binds.held) == 2  # waiting for room
    binds.finish_all()
    third.join(5)
    assert not third.is_alive() and len(binds.held) == 1
    binds.finish_all()
    assert started.wait_idle(5) and started.peak == 2
    for _ in range(3):
        assert woken.acquire(timeout=5)
    outcomes = started.drain()
    assert sorted(o.request.pod.name for o in outcomes) == ["a", "b", "c"]
    assert all(o.error is None for o in outcomes)


def test_a_started_bind_that_fails_at_once_or_crashes_is_one_failed_outcome() -> None:
    started = StartedBinds(HeldBinds(), size=1)
    started.submit(request("refused", node="at-once"))
    started.submit(request("crashing", node="crash"))  # room again: both have ended
    assert started.in_flight == 0
    errors = {o.request.pod.name: str(o.error) for o in started.drain()}
    assert errors == {"refused": "refused at once",
                      "crashing": errors["crashing"]}
    assert "default/crashing failed unexpectedly: boom" in errors["crashing"]


def test_closed_started_binds_wait_for_those_under_way_and_abandon_later_ones() -> None:
    binds = HeldBinds()
    started = StartedBinds(binds, size=2)
    started.submit(request("running"))
    before = time.monotonic()
    started.close(timeout=0.2)  # gives the bind under way its time, then returns
    assert time.monotonic() - before >= 0.2 and started.in_flight == 1
    started.submit(request("late"))
    (late,) = started.drain()
    assert late.request.pod.name == "late" and "was abandoned" in str(late.error)
    binds.finish_all()
    (finished,) = started.drain()
    assert finished.request.pod.name == "running" and finished.error is None
