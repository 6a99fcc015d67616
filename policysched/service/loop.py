"""The service loop: the engine against a live cluster, in one scheduling thread.

``SchedulingLoop.run_until`` is kube-scheduler's loop: wait until the informers have listed
everything, then repeat — apply the backend's events and bind outcomes (``sync``), release
what became due (``advance``), schedule pods while the queue has ready ones (applying
events between pods), then sleep until the next timer, the next event or the next bind
outcome, at most one second. Binds run beside the loop, in the backend (``--parallel-binds`` at
most at once); on shutdown the loop waits for those in flight (``BIND_DRAIN_TIMEOUT``) and
finishes their cycles, on leadership loss it abandons them with the backend.

How ``main.run`` drives it::

    loop = SchedulingLoop(engine, make_backend, is_leader=elector.is_leader,
                          wrap_backend=lambda b: LeaderOnlyBackend(b, elector.is_leader, why))
    loop.add_observer(observer)      # a RunObserver (observers.py)
    threading.Thread(target=loop.run_until, args=(stop_event,)).start()
    loop.swap_policies(frameworks)   # from any thread; applied between two cycles
    loop.synced, loop.leading        # for /readyz
    loop.stop()                      # from any thread (or set stop_event)

* ``make_backend()`` returns a fresh, unstarted ``LiveBackend`` (a ``KubeBackend``); the
  loop starts one each time it becomes leader — a new leader rebuilds its cache from the
  API — and closes it when leadership is lost (binds not sent yet are abandoned; the pods
  stay pending for the next leader). Without ``is_leader`` it always leads.
* ``RunObserver`` callbacks run on the loop thread and must be quick; an observer that
  raises is logged and ignored. ``on_loop`` is called at least once a second (heartbeat);
  ``on_attempt`` as the engine reports each attempt's end (``Scheduler.on_attempt_end``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from ..cluster import kube_messages as km
from ..framework.backend import Backend
from ..framework.profiles import Engine
from ..framework.runtime import Framework
from ..framework.scheduler import AttemptEnd, EngineSettings, ExtensionPointObserver, Scheduler
from .observers import Attempt, LogObserver, RunObserver

log = logging.getLogger(__name__)

LOOP_WAIT_CAP = 1.0  # seconds: the longest sleep between two loop iterations
MIN_WAIT = 0.002  # never spin: the shortest sleep when a timer is already due
LEADER_POLL = 0.1  # seconds between leadership checks while not leading
SYNC_LOG_EVERY = 10.0  # seconds between "waiting for informers" lines
ERROR_PAUSE = 0.5  # seconds to pause after a loop error
BIND_DRAIN_TIMEOUT = 5.0  # seconds a stopping loop waits for the binds in flight


class LiveBackend(Backend, Protocol):
    """A ``Backend`` fed by a live cluster (``KubeBackend``)."""

    def start(self) -> None: ...

    def close(self, timeout: float = 2.0) -> None: ...

    def synced(self) -> bool: ...

    def wait_for_events(self, timeout: float | None) -> bool:
        """Block until events or bind outcomes are pending, ``wake()``, or ``timeout``."""
        ...

    def wait_for_binds(self, timeout: float | None) -> bool:
        """Block until no bind is in flight (or ``timeout``); whether none is."""
        ...

    def wake(self) -> None: ...


@dataclass
class _Session:
    """One period of leadership: a fresh backend, its cache and queue."""

    backend: LiveBackend
    scheduler: Scheduler
    started: float  # time.monotonic()
    synced: bool = False
    last_sync_log: float = 0.0


class SchedulingLoop:
    """The scheduling loop on a live backend; see the module docstring."""

    def __init__(self, engine: Engine, make_backend: Callable[[], LiveBackend], *,
                 is_leader: Callable[[], bool] | None = None,
                 wrap_backend: Callable[[LiveBackend], Backend] | None = None,
                 observers: Iterable[RunObserver] = (),
                 observe_extension_point: ExtensionPointObserver | None = None,
                 make_scheduler: Callable[..., Scheduler] = Scheduler) -> None:
        """``make_scheduler`` builds each period's engine, called as ``Scheduler`` is
        (a ``ShadowScheduler`` with its settings bound, for ``run --shadow``)."""
        self.make_scheduler = make_scheduler
        self.frameworks: dict[str, Framework] = dict(engine.frameworks)
        self.settings: EngineSettings = engine.settings
        self.make_backend = make_backend
        self.is_leader = is_leader
        self.wrap_backend = wrap_backend
        self.observe_extension_point = observe_extension_point
        self.observers: list[RunObserver] = [LogObserver(), *observers]
        self._session: _Session | None = None
        self._leading = False
        self._stop = threading.Event()
        self._swap: dict[str, Framework] | None = None
        self._lock = threading.Lock()
        self._last_loop = 0.0
        self.errors = 0

    # -- hooks -------------------------------------------------------------------------------

    @property
    def scheduler(self) -> Scheduler | None:
        """The engine of the current leadership period (None while not leading)."""
        session = self._session
        return session.scheduler if session is not None else None

    @property
    def backend(self) -> LiveBackend | None:
        session = self._session
        return session.backend if session is not None else None

    @property
    def leading(self) -> bool:
        return self._leading

    @property
    def synced(self) -> bool:
        """Leading with a cache that finished its initial list (ready to schedule)."""
        session = self._session
        return session is not None and session.synced

    def add_observer(self, observer: RunObserver) -> None:
        self.observers.append(observer)

    def swap_policies(self, frameworks: Mapping[str, Framework],
                      settings: EngineSettings | None = None) -> None:
        """Make ``frameworks`` the policy set (thread-safe). The running engine switches
        between two cycles (``Scheduler.set_profiles``); ``settings`` (queue backoff…) only
        take effect in the next leadership period."""
        with self._lock:
            self._swap = dict(frameworks)
            if settings is not None:
                self.settings = settings
        backend = self.backend
        if backend is not None:
            backend.wake()

    def stop(self) -> None:
        """Ask the loop to end (thread-safe); ``run_until`` then returns."""
        self._stop.set()
        backend = self.backend
        if backend is not None:
            backend.wake()

    # -- the loop ----------------------------------------------------------------------------

    def run_until(self, stop: threading.Event | None = None) -> None:
        """Schedule until ``stop`` is set or ``stop()`` is called; closes the backend."""
        try:
            while not self._stopping(stop):
                self._apply_swap()
                if not self._check_leadership():
                    self._notify("on_loop", None)
                    self._stop.wait(LEADER_POLL)
                    continue
                session = self._session or self._start_session()
                try:
                    self._step(session, stop)
                except Exception as e:  # a bug or an unexpected API answer: keep going
                    self._recover(session, e)
                    self._stop.wait(ERROR_PAUSE)
        finally:
            self._end_session(finish_binds=True)
            log.info(km.LOG_STOPPED)

    def _recover(self, session: _Session, error: Exception) -> None:
        """An exception escaped the engine: requeue the pods it left in flight (each with
        a FailedScheduling event), log it and count it; the loop goes on."""
        try:
            recovered = session.scheduler.recover_in_flight(error)
        except Exception:
            log.exception(km.LOG_RECOVERY_FAILED)
            recovered = 0
        log.error(km.LOG_CYCLE_ERROR, recovered, exc_info=error)
        self._internal_error(error)

    def _internal_error(self, error: BaseException) -> None:
        """Count an unexpected exception the engine or the loop recovered from."""
        self.errors += 1
        self._notify("on_error", error)

    def _attempt_ended(self, scheduler: Scheduler, end: AttemptEnd) -> None:
        self._notify("on_attempt", Attempt.of(end, scheduler))

    def _stopping(self, stop: threading.Event | None) -> bool:
        return self._stop.is_set() or (stop is not None and stop.is_set())

    def _check_leadership(self) -> bool:
        leading = True if self.is_leader is None else bool(self.is_leader())
        if leading != self._leading:
            self._leading = leading
            if not leading:
                log.info(km.LOG_NOT_LEADING)
                self._end_session()
            else:
                log.info(km.LOG_LEADING)
            self._notify("on_leading", leading)
        return leading

    def _start_session(self) -> _Session:
        backend = self.make_backend()
        served = self.wrap_backend(backend) if self.wrap_backend is not None else backend
        with self._lock:
            frameworks, settings = self.frameworks, self.settings
        scheduler: Scheduler = self.make_scheduler(served, frameworks, settings,
                              observe_extension_point=self.observe_extension_point,
                              on_internal_error=self._internal_error,
                              on_attempt_end=lambda end: self._attempt_ended(scheduler, end),
                              on_audit=partial(self._notify, "on_audit"))
        session = _Session(backend, scheduler, time.monotonic())
        backend.start()
        self._session = session
        return session

    def _end_session(self, finish_binds: bool = False) -> None:
        """Close the backend; with ``finish_binds`` (stopping while leading) first wait
        for the binds in flight and finish their cycles (Scheduled events, metrics)."""
        session, self._session = self._session, None
        if session is None:
            return
        try:
            if finish_binds and session.synced and session.scheduler.binds_in_flight:
                session.backend.wait_for_binds(BIND_DRAIN_TIMEOUT)
                session.scheduler.drain_binds()
        except Exception:
            log.exception(km.LOG_BIND_DRAIN_FAILED)
        finally:
            session.backend.close()

    def _apply_swap(self) -> None:
        with self._lock:
            swap, self._swap = self._swap, None
            if swap is not None:
                self.frameworks = swap
        if swap is None:
            return
        if self._session is not None:
            self._session.scheduler.set_profiles(swap)
        log.info(km.LOG_PROFILES_SWAPPED, ", ".join(swap))
        self._notify("on_profiles", list(swap))

    def _step(self, session: _Session, stop: threading.Event | None) -> None:
        """One loop iteration: sync, advance, schedule what is ready, then wait."""
        backend, scheduler = session.backend, session.scheduler
        if not session.synced and not self._finish_sync(session):
            return
        scheduler.sync()
        wakeup = scheduler.next_wakeup()
        if wakeup is not None and wakeup <= scheduler.clock.now():
            scheduler.advance()
        while not self._stopping(stop) and self._still_leading():
            self._apply_swap()
            if not scheduler.schedule_one():
                break
            scheduler.sync()
            if time.monotonic() - self._last_loop >= LOOP_WAIT_CAP:
                self._heartbeat(scheduler)
        self._heartbeat(scheduler)
        wakeup = scheduler.next_wakeup()
        timeout = LOOP_WAIT_CAP if wakeup is None else wakeup - scheduler.clock.now()
        backend.wait_for_events(min(max(timeout, MIN_WAIT), LOOP_WAIT_CAP))

    def _finish_sync(self, session: _Session) -> bool:
        """Before the first cycle: wait for the initial lists (events already applied)."""
        backend, scheduler = session.backend, session.scheduler
        if not backend.synced():
            scheduler.sync()
            now = time.monotonic()
            if now - session.last_sync_log >= SYNC_LOG_EVERY:
                session.last_sync_log = now
                log.info(km.LOG_WAITING_SYNC)
            self._notify("on_loop", None)
            self._last_loop = time.monotonic()
            backend.wait_for_events(0.05)
            return False
        scheduler.sync()
        session.synced = True
        seconds = time.monotonic() - session.started
        nodes, pods = len(scheduler.cache.nodes()), len(scheduler.cache.pods())
        log.info(km.LOG_SYNCED, seconds, nodes, pods)
        self._notify("on_synced", seconds, nodes, pods)
        return True

    def _still_leading(self) -> bool:
        """Checked before every cycle: a replica that lost the lease stops at once."""
        return self.is_leader is None or bool(self.is_leader())

    def _heartbeat(self, scheduler: Scheduler) -> None:
        self._last_loop = time.monotonic()
        self._notify("on_loop", scheduler)

    def _notify(self, method: str, *args: Any) -> None:
        for observer in list(self.observers):
            try:
                getattr(observer, method)(*args)
            except Exception:
                log.exception(km.LOG_OBSERVER_FAILED, observer)
