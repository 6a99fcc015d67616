"""``BindPool``: binds on worker threads, bounded, one outcome per request."""

from __future__ import annotations

import threading
import time

import pytest

from policysched.cluster.binder import BindPool
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
