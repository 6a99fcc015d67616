"""``BindPool``: binds carried out on worker threads, a bounded number at once, their
outcomes handed back to the scheduling thread — kube-scheduler's binding goroutines.

The scheduling thread ``submit``s ``BindRequest``s (blocking while ``size`` are in flight:
submitted, not finished, unless the pool ``queues`` them: then at most ``size`` run at once
and the others wait their turn, the submitter never does) and later ``drain``s the
``BindOutcome``s; every request has
exactly one outcome. ``notify`` is called (on a worker thread) after each outcome, so that a
waiting loop wakes up. ``close`` takes no more requests: those not started yet are
abandoned (their outcome says so), those running may finish (a bounded wait). The pool
knows nothing of HTTP: ``run`` carries out one request (``KubeBackend`` passes
``run_bind`` on itself).
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
# burst, a bind takes the apiserver 40-60 ms; 16 in flight capped scheduling at ~300 pods/s
# (bench/e2e.py: the scheduling thread waited in submit); 64 kept up with the creates
# (~500/s on 2 cores). The threads are started only as binds need them.
DEFAULT_PARALLEL_BINDS = 64
# binds that first wait for their volumes (up to VolumeBinding's bindTimeoutSeconds each)
# run apart, so that slow provisioning never holds the scheduling thread or the plain binds
VOLUME_BINDS = 64
WORKER_NAME = "binder-{index}"


class BindPool:
    """Runs ``run(request)`` on up to ``size`` daemon threads (started as needed).
    Thread-safe."""

    def __init__(self, run: Callable[[BindRequest], BindOutcome],
                 size: int = DEFAULT_PARALLEL_BINDS,
                 notify: Callable[[], None] = lambda: None, *, queues: bool = False) -> None:
        if size < 1:
            raise ValueError(messages.BAD_PARALLEL_BINDS.format(size=size))
        self.size = size
        self.queues = queues
        self._run = run
        self._notify = notify
        self._lock = threading.Lock()
        # two conditions on one lock, so that a bind wakes one worker, not every thread
        self._work_ready = threading.Condition(self._lock)  # workers: a request queued
        self._room = threading.Condition(self._lock)  # submit / wait_idle: a bind ended
        self._queue: deque[BindRequest] = deque()
        self._outcomes: list[BindOutcome] = []
        self._in_flight = 0
        self._idle = 0  # workers waiting for a request
        self._threads: list[threading.Thread] = []
        self._closed = False
        self.peak = 0  # the most binds in flight at once

    @property
    def in_flight(self) -> int:
        """Requests submitted whose outcome is not ready yet."""
        with self._lock:
            return self._in_flight

    def submit(self, request: BindRequest) -> None:
        """Queue a bind; blocks while ``size`` binds are in flight (unless the pool
        ``queues``). After ``close`` the request is abandoned at once."""
        with self._lock:
            while not self.queues and self._in_flight >= self.size and not self._closed:
                self._room.wait()
            if self._closed:
                self._outcomes.append(_abandoned(request))
            else:
                self._in_flight += 1
                self.peak = max(self.peak, self._in_flight)
                self._queue.append(request)
                if len(self._queue) > self._idle and len(self._threads) < self.size:
                    self._spawn()
                self._work_ready.notify()
                return
        self._notify()

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
            outcome = self._carry_out(request)
            with self._lock:
                self._outcomes.append(outcome)
                self._in_flight -= 1
                self._room.notify_all()
            self._notify()

    def _carry_out(self, request: BindRequest) -> BindOutcome:
        started = time.perf_counter()
        try:
            return self._run(request)
        except Exception as e:  # a bug must not lose the pod: its bind failed
            log.exception(messages.LOG_BIND_CRASHED, request.pod.key)
            return BindOutcome(request, BindError(messages.BIND_CRASHED.format(
                key=request.pod.key, reason=e)), time.perf_counter() - started)


def _abandoned(request: BindRequest) -> BindOutcome:
    return BindOutcome(request, BindError(messages.BIND_ABANDONED.format(
        key=request.pod.key, node=request.node_name)))
