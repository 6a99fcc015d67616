"""Binds carried out beside the scheduling thread, a bounded number at once, their outcomes
handed back to it — kube-scheduler's binding goroutines. Two carriers of one contract:

* ``BindPool``: each bind on a worker thread, ``run(request)`` waiting for its calls
  (``KubeBackend`` passes ``run_bind`` on itself: the binds that wait for volumes);
* ``StartedBinds``: ``start(request, finish)`` sends the bind's calls and returns, and
  ``finish(outcome)`` comes later from whichever thread got the answer (``KubeBackend``'s
  plain binds, multiplexed by its transport: no thread per bind).

The scheduling thread ``submit``s ``BindRequest``s (blocking while ``size`` are in flight:
submitted, not finished, unless a pool ``queues`` them: then at most ``size`` run at once
and the others wait their turn, the submitter never does) and later ``drain``s the
``BindOutcome``s; every request has exactly one outcome. ``notify`` is called after each
outcome, so that a waiting loop wakes up. ``close`` takes no more requests: those not
started yet are abandoned (their outcome says so), those running may finish (a bounded
wait). Neither knows anything of HTTP.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from ..framework.backend import BindError, BindOutcome, BindRequest
from ..threads import Thread
from . import messages

log = logging.getLogger(__name__)

# kube-scheduler starts a goroutine per bind, with no bound. While pods are created in a
# burst, the apiserver takes 60-200 ms to answer a bind; with 64 in flight the scheduling
# thread waited in submit a third of the time (bench/e2e.py at 1,000 nodes, py-spy); up to
# ~180 were in flight once it did not. A bind costs no thread (``StartedBinds``), so the
# bound is only a guard against an apiserver that stops answering.
DEFAULT_PARALLEL_BINDS = 256
# binds that first wait for their volumes (up to VolumeBinding's bindTimeoutSeconds each)
# run apart, so that slow provisioning never holds the scheduling thread or the plain binds
VOLUME_BINDS = 64
WORKER_NAME = "binder-{index}"


class Binds:
    """What both carriers share: the bound on binds in flight, the outcomes, ``notify``.
    Thread-safe."""

    def __init__(self, size: int, notify: Callable[[], None], queues: bool) -> None:
        if size < 1:
            raise ValueError(messages.BAD_PARALLEL_BINDS.format(size=size))
        self.size = size
        self.queues = queues
        self._notify = notify
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)  # submit / wait_idle: a bind ended
        self._outcomes: list[BindOutcome] = []
        self._in_flight = 0
        self._closed = False
        self.peak = 0  # the most binds in flight at once

    @property
    def in_flight(self) -> int:
        """Requests submitted whose outcome is not ready yet."""
        with self._lock:
            return self._in_flight

    def drain(self) -> list[BindOutcome]:
        """The outcomes since the last call, in completion order."""
        with self._lock:
            outcomes, self._outcomes = self._outcomes, []
            return outcomes

    def has_outcomes(self) -> bool:
        with self._lock:
            return bool(self._outcomes)

    def wait_idle(self, timeout: float | None) -> bool:
        """Wait until no bind is in flight (at most ``timeout`` seconds); returns whether
        none is."""
        with self._lock:
            return self._room.wait_for(lambda: self._in_flight == 0, timeout)

    def _admit(self, request: BindRequest) -> bool:
        """(Under the lock.) Count ``request`` in flight, once there is room; after
        ``close`` its outcome is abandoned instead (False)."""
        while not self.queues and self._in_flight >= self.size and not self._closed:
            self._room.wait()
        if self._closed:
            self._outcomes.append(_abandoned(request))
            return False
        self._in_flight += 1
        self.peak = max(self.peak, self._in_flight)
        return True

    def _finish(self, outcome: BindOutcome) -> None:
        with self._lock:
            self._outcomes.append(outcome)
            self._in_flight -= 1
            self._room.notify_all()
        self._notify()


class StartedBinds(Binds):
    """Binds carried out by ``start(request, finish)``, which returns once the bind is
    under way and has ``finish(outcome)`` called exactly once, then or later, on any
    thread; at most ``size`` at once (``submit`` blocks). Thread-safe."""

    def __init__(self, start: Callable[[BindRequest, Callable[[BindOutcome], None]], None],
                 size: int = DEFAULT_PARALLEL_BINDS,
                 notify: Callable[[], None] = lambda: None) -> None:
        super().__init__(size, notify, queues=False)
        self._start = start

    def submit(self, request: BindRequest) -> None:
        """Start a bind; blocks while ``size`` binds are in flight. After ``close`` the
        request is abandoned at once."""
        with self._lock:
            admitted = self._admit(request)
        if not admitted:
            self._notify()
            return
        finished = False

        def finish(outcome: BindOutcome) -> None:
            nonlocal finished
            finished = True
            self._finish(outcome)

        try:
            self._start(request, finish)
        except Exception as e:  # a bug must not lose the pod: its bind failed
            if not finished:
                self._finish(_crashed(request, e, 0.0))

    def close(self, timeout: float = 2.0) -> None:
        """Take no more requests; give those under way ``timeout`` seconds to end (a bind
        already sent cannot be taken back)."""
        with self._lock:
            self._closed = True
            self._room.notify_all()
        self.wait_idle(timeout)


class BindPool(Binds):
    """Runs ``run(request)`` on up to ``size`` daemon threads (started as needed).
    Thread-safe."""

    def __init__(self, run: Callable[[BindRequest], BindOutcome],
                 size: int = DEFAULT_PARALLEL_BINDS,
                 notify: Callable[[], None] = lambda: None, *, queues: bool = False) -> None:
        super().__init__(size, notify, queues)
        self._run = run
        # a second condition on the lock, so that a bind wakes one worker, not every thread
        self._work_ready = threading.Condition(self._lock)  # workers: a request queued
        self._queue: deque[BindRequest] = deque()
        self._idle = 0  # workers waiting for a request
        self._threads: list[threading.Thread] = []

    def submit(self, request: BindRequest) -> None:
        """Queue a bind; blocks while ``size`` binds are in flight (unless the pool
        ``queues``). After ``close`` the request is abandoned at once."""
        with self._lock:
            if self._admit(request):
                self._queue.append(request)
                if len(self._queue) > self._idle and len(self._threads) < self.size:
                    self._spawn()
                self._work_ready.notify()
                return
        self._notify()

    def close(self, timeout: float = 2.0) -> None:
        """Stop: abandon the requests not started, give the running ones ``timeout``
        seconds to end (a bind already sent cannot be taken back; the API server refuses a
        second bind of the same pod)."""
        with self._lock:
            self._closed = True
            abandoned = list(self._queue)
            self._queue.clear()
            self._in_flight -= len(abandoned)
            self._outcomes.extend(_abandoned(r) for r in abandoned)
            self._work_ready.notify_all()
            self._room.notify_all()
            threads = list(self._threads)
        deadline = time.monotonic() + timeout
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))
        if abandoned:
            self._notify()

    # -- workers ---------------------------------------------------------------------------

    def _spawn(self) -> None:
        thread = Thread(target=self._work, daemon=True,
                                  name=WORKER_NAME.format(index=len(self._threads)))
        self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._idle += 1
                    self._work_ready.wait()
                    self._idle -= 1
                if not self._queue:
                    return  # closed
                request = self._queue.popleft()
            self._finish(self._carry_out(request))

    def _carry_out(self, request: BindRequest) -> BindOutcome:
        started = time.perf_counter()
        try:
            return self._run(request)
        except Exception as e:  # a bug must not lose the pod: its bind failed
            return _crashed(request, e, time.perf_counter() - started)


def _crashed(request: BindRequest, e: Exception, seconds: float) -> BindOutcome:
    log.exception(messages.LOG_BIND_CRASHED, request.pod.key)
    return BindOutcome(request, BindError(messages.BIND_CRASHED.format(
        key=request.pod.key, reason=e)), seconds)


def _abandoned(request: BindRequest) -> BindOutcome:
    return BindOutcome(request, BindError(messages.BIND_ABANDONED.format(
        key=request.pod.key, node=request.node_name)))
