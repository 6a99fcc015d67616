"""``policysched run``: the engine against a real cluster, in one scheduling thread.

The loop (``Runner.run_until``) is kube-scheduler's: wait until the informers have listed
everything, then repeat — apply the backend's events and bind outcomes (``sync``), release
what became due (``advance``), schedule pods while the queue has ready ones (applying
events between pods), then sleep until the next timer, the next event or the next bind
outcome, at most one second. Binds run on the backend's threads (``--parallel-binds`` at
most at once); on shutdown the loop waits for those in flight (``BIND_DRAIN_TIMEOUT``) and
finishes their cycles, on leadership loss it abandons them with the backend.

Extension hooks (for ``server.py``, ``metrics.py``, ``reload.py``, ``leader.py``)::

    runner = Runner(engine, make_backend, is_leader=elector.is_leader,
                    wrap_backend=lambda b: LeaderOnlyBackend(b, elector.is_leader, why))
    runner.add_observer(observer)      # a RunObserver: see its methods below
    threading.Thread(target=runner.run_until, args=(stop_event,)).start()
    runner.swap_policies(frameworks)   # from any thread; applied between two cycles
    runner.synced, runner.leading      # for /readyz
    runner.stop()                      # from any thread (or set stop_event)

* ``make_backend()`` returns a fresh, unstarted ``LiveBackend`` (a ``KubeBackend``); the
  runner starts one each time it becomes leader — a new leader rebuilds its cache from the
  API — and closes it when leadership is lost (binds not sent yet are abandoned; the pods
  stay pending for the next leader). Without ``is_leader`` it always leads.
* ``RunObserver`` callbacks run on the loop thread and must be quick; an observer that
  raises is logged and ignored. ``on_loop`` is called at least once a second (heartbeat).
* ``run()`` is what the CLI calls: it loads the configuration, builds the API client, the
  process's identity (the Lease holder with ``leader_elect``, and the reportingInstance of
  its Events), the ``/healthz``, ``/readyz`` and ``/metrics`` server (``server.py``), the
  policy sources' watch (``reload.py``: its initial set is the engine's, later changes are
  swapped in) and, with ``leader_elect``, the ``policysched.leader`` elector;
  SIGTERM/SIGINT stop it gracefully.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from .cluster import kube_messages as km
from .cluster.backend import (
    Backend,
    BindOutcome,
    BindRequest,
    ClusterEvent,
    ConditionStatus,
    EventType,
)
from .cluster.binder import DEFAULT_PARALLEL_BINDS
from .cluster.clock import Clock
from .framework import messages as engine_messages
from .framework.runner import Framework
from .framework.scheduler import EngineSettings, ExtensionPointObserver, Scheduler
from .inputs import Engine, UserError

if TYPE_CHECKING:
    from .cache.objects import PodGroupSpec, PodInfo

log = logging.getLogger(__name__)

LOOP_WAIT_CAP = 1.0  # seconds: the longest sleep between two loop iterations
MIN_WAIT = 0.002  # never spin: the shortest sleep when a timer is already due
LEADER_POLL = 0.1  # seconds between leadership checks while not leading
SYNC_LOG_EVERY = 10.0  # seconds between "waiting for informers" lines
ERROR_PAUSE = 0.5  # seconds to pause after a loop error
BIND_DRAIN_TIMEOUT = 5.0  # seconds a stopping loop waits for the binds in flight
BASE_CONNECTIONS = 16  # watches, the event writer, the loop, the lease, policy sources

SERVE_FAILED = "cannot serve /healthz, /readyz and /metrics on {address}: {reason}"

RESULT_SCHEDULED = "scheduled"
RESULT_UNSCHEDULABLE = "unschedulable"
RESULT_ERROR = "error"


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


@dataclass(frozen=True)
class Attempt:
    """The end of one scheduling attempt of one pod."""

    pod: str  # "namespace/name"
    profile: str  # the pod's schedulerName
    result: str  # RESULT_SCHEDULED, RESULT_UNSCHEDULABLE or RESULT_ERROR
    node: str | None  # where it was bound (scheduled only)
    message: str  # why not (unschedulable, error)
    attempts: int  # attempts so far, this one included
    duration: float  # seconds: the loop step that ended it (scheduling + binding)
    in_queue: float | None  # seconds since the pod entered the queue (scheduled: the SLI)


class RunObserver:
    """What the loop reports. Subclass and override what you need (all no-ops here)."""

    def on_leading(self, leading: bool) -> None:
        """Leadership changed (always True first when there is no leader election)."""

    def on_synced(self, seconds: float, nodes: int, pods: int) -> None:
        """A fresh cache finished its initial list, ``seconds`` after the backend started."""

    def on_attempt(self, attempt: Attempt) -> None:
        """A scheduling attempt ended."""

    def on_loop(self, scheduler: Scheduler | None) -> None:
        """Heartbeat, at least every LOOP_WAIT_CAP seconds; ``scheduler`` is None while not
        leading or not synced (e.g. read ``scheduler.queue.pending()``)."""

    def on_profiles(self, profiles: Sequence[str]) -> None:
        """A new policy set became active."""

    def on_error(self, error: BaseException) -> None:
        """The loop or the engine recovered from an unexpected error (a pod's cycle or an
        event that raised: the pod was requeued with an event, the others went on)."""


class LogObserver(RunObserver):
    """Logs each binding and each failure at info (kube-scheduler logs them at V(2))."""

    def on_attempt(self, attempt: Attempt) -> None:
        if attempt.result == RESULT_SCHEDULED:
            queued = (attempt.in_queue or 0.0) * 1000
            log.info(km.LOG_BOUND, attempt.pod, attempt.node, attempt.attempts, queued)
        else:
            log.info(km.LOG_FAILED, attempt.pod, attempt.attempts, attempt.result,
                     attempt.message)


@dataclass(frozen=True)
class _Ended:
    """An attempt that ended: ``started`` is when the loop step that handed its bind over
    began (perf_counter), None when it ended in the step that is being timed."""

    pod: PodInfo
    result: str
    node: str | None
    message: str
    started: float | None = None


class _Outcomes:
    """A ``Backend`` in front of the live one that notes how attempts end: a bind that
    succeeded (scheduled), a PodScheduled=False condition (unschedulable or error). An
    attempt whose bind ran in the background is timed from the step that started it."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.ended: list[_Ended] = []
        self.step_started = time.perf_counter()  # set by the runner before each step
        self._binds: dict[str, float] = {}  # pod key → step start, while its bind runs
        self._failed_binds: dict[str, float] = {}  # of the outcomes just drained

    @property
    def clock(self) -> Clock:
        return self.backend.clock

    def drain_events(self) -> list[ClusterEvent]:
        return self.backend.drain_events()

    def bind(self, pod: PodInfo, node_name: str) -> None:
        self.backend.bind(pod, node_name)
        self.ended.append(_Ended(pod, RESULT_SCHEDULED, node_name, ""))

    def start_bind(self, request: BindRequest) -> None:
        self._binds[request.pod.key] = self.step_started
        self.backend.start_bind(request)

    def drain_bind_outcomes(self) -> list[BindOutcome]:
        outcomes = self.backend.drain_bind_outcomes()
        self._failed_binds = {}
        for outcome in outcomes:
            pod = outcome.request.pod
            started = self._binds.pop(pod.key, None)
            if outcome.error is None:
                self.ended.append(_Ended(pod, RESULT_SCHEDULED, outcome.request.node_name, "",
                                         started))
            elif started is not None:
                self._failed_binds[pod.key] = started  # its condition follows at once
        return outcomes

    def evict(self, pod: PodInfo, message: str) -> None:
        self.backend.evict(pod, message)

    def patch_pod_metadata(self, pod: PodInfo, labels: Mapping[str, str | None],
                           annotations: Mapping[str, str | None]) -> None:
        self.backend.patch_pod_metadata(pod, labels, annotations)

    def set_nominated_node(self, pod: PodInfo, node_name: str | None) -> None:
        self.backend.set_nominated_node(pod, node_name)

    def record_event(self, pod: PodInfo, type: EventType, reason: str, message: str) -> None:
        self.backend.record_event(pod, type, reason, message)

    def set_pod_condition(self, pod: PodInfo, status: ConditionStatus, reason: str,
                          message: str) -> None:
        if status == "False":
            result = RESULT_UNSCHEDULABLE \
                if reason == engine_messages.CONDITION_UNSCHEDULABLE else RESULT_ERROR
            self.ended.append(_Ended(pod, result, None, message,
                                     self._failed_binds.pop(pod.key, None)))
        self.backend.set_pod_condition(pod, status, reason, message)

    def pod_groups(self) -> dict[str, PodGroupSpec]:
        return self.backend.pod_groups()


@dataclass
class _Session:
    """One period of leadership: a fresh backend, its cache and queue."""

    backend: LiveBackend
    outcomes: _Outcomes
    scheduler: Scheduler
    started: float  # time.monotonic()
    synced: bool = False
    last_sync_log: float = 0.0


class Runner:
    """The scheduling loop on a live backend; see the module docstring."""

    def __init__(self, engine: Engine, make_backend: Callable[[], LiveBackend], *,
                 is_leader: Callable[[], bool] | None = None,
                 wrap_backend: Callable[[LiveBackend], Backend] | None = None,
                 observers: Iterable[RunObserver] = (),
                 observe_extension_point: ExtensionPointObserver | None = None) -> None:
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
        outcomes = _Outcomes(served)
        with self._lock:
            frameworks, settings = self.frameworks, self.settings
        scheduler = Scheduler(outcomes, frameworks, settings,
                              observe_extension_point=self.observe_extension_point,
                              on_internal_error=self._internal_error)
        session = _Session(backend, outcomes, scheduler, time.monotonic())
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
                self._timed(session, session.scheduler.drain_binds)
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
        self._timed(session, scheduler.sync)
        wakeup = scheduler.next_wakeup()
        if wakeup is not None and wakeup <= scheduler.clock.now():
            self._timed(session, scheduler.advance)
        while not self._stopping(stop) and self._still_leading():
            self._apply_swap()
            if not self._timed(session, scheduler.schedule_one):
                break
            self._timed(session, scheduler.sync)
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

    def _timed(self, session: _Session, step: Callable[[], Any]) -> Any:
        """Run one engine step; report the attempts that ended during it."""
        started = time.perf_counter()
        session.outcomes.step_started = started
        try:
            return step()
        finally:
            if session.outcomes.ended:
                self._report(session, started)

    def _report(self, session: _Session, step_started: float) -> None:
        scheduler = session.scheduler
        ended, session.outcomes.ended = session.outcomes.ended, []
        now, finished = scheduler.clock.now(), time.perf_counter()
        for end in ended:
            pod = end.pod
            record = scheduler.records.get(pod.key)
            first_seen = record.first_seen if record is not None else None
            started = step_started if end.started is None else end.started
            self._notify("on_attempt", Attempt(
                pod=pod.key, profile=pod.scheduler_name, result=end.result, node=end.node,
                message=end.message, attempts=record.attempts if record is not None else 1,
                duration=finished - started,
                in_queue=None if first_seen is None else max(0.0, now - first_seen)))

    def _heartbeat(self, scheduler: Scheduler) -> None:
        self._last_loop = time.monotonic()
        self._notify("on_loop", scheduler)

    def _notify(self, method: str, *args: Any) -> None:
        for observer in list(self.observers):
            try:
                getattr(observer, method)(*args)
            except Exception:
                log.exception(km.LOG_OBSERVER_FAILED, observer)


# ------------------------------------------------------------------------------ entry point


def api_client(kubeconfig: str | None, connections: int = BASE_CONNECTIONS) -> Any:
    """An ``ApiClient`` from the kubeconfig file, else the in-cluster config, else
    ``$KUBECONFIG``, keeping up to ``connections`` connections open. Raises
    ``UserError``."""
    from kubernetes import client, config

    configuration = client.Configuration()
    path = kubeconfig
    if path is None:
        try:
            config.load_incluster_config(client_configuration=configuration)
        except config.ConfigException:
            path = os.environ.get("KUBECONFIG") or None
            if path is None:
                raise UserError(km.NO_KUBECONFIG) from None
    if path is not None:
        try:
            config.load_kube_config(config_file=path, client_configuration=configuration,
                                    persist_config=False)
        except (config.ConfigException, OSError, ValueError) as e:
            raise UserError(km.BAD_KUBECONFIG.format(path=path, reason=e)) from None
    # the watches, the event writer, the loop, the lease and the binding threads: keep
    # their connections (urllib3 discards, and warns about, connections beyond the pool)
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize or 0,
                                                connections)
    # no urllib3 retries: each client retries in its own way and logs an outage once, where
    # urllib3 would warn three times per failed request
    configuration.retries = False
    return client.ApiClient(configuration)


def _configuration(config_path: str | None) -> dict[str, Any]:
    """The SchedulerConfiguration document of ``config_path`` ({} without one). Raises
    ``UserError`` when the file is invalid."""
    if config_path is None:
        return {}
    from .policy import load_policy_set, render_text

    policy_set = load_policy_set([config_path])
    if not policy_set.valid:
        raise UserError(render_text(policy_set.diagnostics, color=False))
    found = policy_set.configurations
    return dict(found[0].value) if found else {}


def leader_elect_default(config_path: str | None) -> bool:
    """The configuration's ``leaderElection.leaderElect`` when it has that block, else
    False (one replica)."""
    spec = _configuration(config_path).get("leaderElection")
    return bool(spec.get("leaderElect", True)) if isinstance(spec, dict) else False


def client_limits(configuration: Mapping[str, Any], qps: float | None,
                  burst: int | None) -> tuple[float, int]:
    """The API client's (qps, burst): the flags when given, else the configuration's
    ``clientConnection``, else kube-scheduler's defaults (50, 100)."""
    from .cluster.kube import DEFAULT_BURST, DEFAULT_QPS

    connection = configuration.get("clientConnection") or {}
    return (float(connection.get("qps", DEFAULT_QPS)) if qps is None else qps,
            int(connection.get("burst", DEFAULT_BURST)) if burst is None else burst)


def default_identity() -> str:
    """``policysched-<hostname>_<random>`` (client-go's ``hostname_uuid``, prefixed): this
    replica's Lease holder identity and the reportingInstance of its Events."""
    return f"{km.REPORTING_CONTROLLER}-{socket.gethostname()}_{secrets.token_hex(6)}"


def run(kubeconfig: str | None, config_path: str | None, policy_paths: Sequence[str],
        leader_elect: bool, *, qps: float | None = None, burst: int | None = None,
        parallel_binds: int = DEFAULT_PARALLEL_BINDS,
        namespace: str | None = None, stop_event: threading.Event | None = None,
        is_leader: Callable[[], bool] | None = None,
        observers: Iterable[RunObserver] = (),
        install_signal_handlers: bool = True, identity: str | None = None) -> int:
    """Schedule the cluster's pending pods until SIGTERM/SIGINT (or ``stop_event``);
    returns the exit code. Raises ``UserError`` for bad input. ``is_leader`` replaces the
    built-in leader election (``leader_elect`` is then ignored); ``identity`` defaults to
    ``default_identity()``. ``qps``/``burst`` (None: the configuration's
    ``clientConnection``, else kube-scheduler's 50 and 100) limit the API requests;
    ``parallel_binds`` bounds the binds in flight.

    Policies come from the configuration's ``policySources`` plus ``policy_paths`` (with
    neither: the built-in library), watched and hot-reloaded; ``/healthz``, ``/readyz`` and
    ``/metrics`` are served on the configuration's ``healthzBindAddress``."""
    from .cluster.kube import KubeBackend
    from .metrics import MetricsObserver, SchedulerMetrics
    from .profiles import BUILTIN_POLICIES
    from .reload import (
        NO_VALID_SET,
        SOURCES_NOT_SYNCED,
        KubeEventRecorder,
        PolicyBundle,
        PolicySources,
        PolicySourceWatch,
        Reloader,
    )
    from .server import (
        DEFAULT_BIND_ADDRESS,
        INFORMERS_CHECK,
        INFORMERS_NOT_SYNCED,
        POLICIES_CHECK,
        HealthChecks,
        HealthObserver,
        HealthServer,
        informers_check,
    )

    configuration = _configuration(config_path)
    rate, rate_burst = client_limits(configuration, qps, burst)
    address = str(configuration.get("healthzBindAddress") or DEFAULT_BIND_ADDRESS)
    metrics, checks = SchedulerMetrics(), HealthChecks()
    checks.readiness[INFORMERS_CHECK] = lambda: INFORMERS_NOT_SYNCED  # no runner yet
    try:
        server = HealthServer(address, metrics, checks)
    except ValueError as e:
        raise UserError(str(e)) from None
    api = api_client(kubeconfig, BASE_CONNECTIONS + parallel_binds)
    identity = identity or default_identity()
    elector: Any = None
    wrap: Callable[[LiveBackend], Backend] | None = None
    lease: str | None = None  # "namespace/name", for leader_election_master_status
    if leader_elect and is_leader is None:
        elector, wrap = _elector(api, configuration, identity)
        is_leader = elector.is_leader
        lease = f"{elector.settings.namespace}/{elector.settings.lease_name}"
    runners: list[Runner] = []  # the one built below, once the initial set is loaded

    def swap(bundle: PolicyBundle) -> None:
        runners[0].swap_policies(bundle.frameworks, bundle.settings)

    sources = PolicySources.from_configuration(
        configuration, config_path, extra_paths=policy_paths or (
            [] if configuration.get("policySources") else [str(BUILTIN_POLICIES)]))
    reloader = Reloader(sources.directories, configuration or None, swap, metrics=metrics,
                        recorder=KubeEventRecorder(api, identity))
    checks.readiness[POLICIES_CHECK] = reloader.readiness
    watch = PolicySourceWatch(sources, reloader, api)
    stop = stop_event if stop_event is not None else threading.Event()
    restore: dict[int, Any] = {}
    try:
        try:
            server.start()
        except OSError as e:
            raise UserError(SERVE_FAILED.format(address=address, reason=e)) from None
        initial = watch.start()
        if initial is None:
            raise UserError(SOURCES_NOT_SYNCED.format(
                sources=", ".join(s.name for s in sources.configmaps)))
        if not isinstance(initial, PolicyBundle):
            raise UserError(NO_VALID_SET.format(reason=initial.summary))
        log.info(km.LOG_STARTING, ", ".join(initial.frameworks), api.configuration.host)
        def make_backend() -> LiveBackend:
            return KubeBackend(api, qps=rate, burst=rate_burst, namespace=namespace,
                               parallel_binds=parallel_binds,
                               reporting_instance=identity)

        runner = Runner(Engine(dict(initial.frameworks), initial.settings), make_backend,
                        is_leader=is_leader, wrap_backend=wrap,
                        observers=[MetricsObserver(metrics, lease), HealthObserver(checks),
                                   *observers],
                        observe_extension_point=metrics.on_extension_point)
        runners.append(runner)
        checks.readiness[INFORMERS_CHECK] = informers_check(runner)
        watch.follow()
        restore = _install_signals(runner, stop) if install_signal_handlers else {}
        if elector is not None:
            elector.start()
        runner.run_until(stop)
    finally:
        stop.set()
        if elector is not None:
            elector.stop(timeout=5.0)
        for teardown in (watch.stop, server.stop):
            try:
                teardown()
            except Exception:
                log.exception(km.LOG_TEARDOWN_FAILED, teardown)
        for signum, handler in restore.items():
            signal.signal(signum, handler)
        api.close()
    return 0


def _elector(api: Any, configuration: Mapping[str, Any], identity: str
             ) -> tuple[Any, Callable[[LiveBackend], Backend]]:
    """The ``policysched.leader`` elector and its leader-only backend wrapper."""
    try:
        from . import leader
    except ImportError:
        log.error(km.LOG_NO_LEADER_MODULE)
        raise UserError(km.LEADER_UNAVAILABLE) from None
    try:
        settings = leader.LeaderElectionSettings.from_configuration(configuration)
    except leader.LeaderElectionError as e:
        raise UserError(str(e)) from None
    elector = leader.LeaderElector.for_cluster(settings, api, identity=identity, rejoin=True)

    def wrap(backend: LiveBackend) -> Backend:
        return leader.LeaderOnlyBackend(backend, elector.is_leader, elector.not_leader_message)

    return elector, wrap


def _install_signals(runner: Runner, stop: threading.Event) -> dict[int, Any]:
    """SIGTERM and SIGINT stop the runner (only possible from the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, frame: FrameType | None) -> None:
        log.info(km.LOG_STOPPING, signal.Signals(signum).name)
        stop.set()
        runner.stop()

    previous: dict[int, Any] = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.getsignal(signum)
        signal.signal(signum, handler)
    return previous


def log_level(verbosity: int) -> int:
    """``-v N`` → a logging level: 0 info (bindings, failures, lifecycle); 1-3 debug for
    policysched; 4 and more debug for every library too (HTTP requests)."""
    return logging.INFO if verbosity <= 0 else logging.DEBUG


def configure_logging(verbosity: int) -> None:
    """klog-like lines on stderr, at the level ``-v`` asks for."""
    logging.basicConfig(
        level=logging.DEBUG if verbosity >= 4 else logging.INFO,
        format="%(asctime)s.%(msecs)03d %(levelname).1s %(threadName)s %(name)s] %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S")
    logging.getLogger("policysched").setLevel(log_level(verbosity))
    if verbosity < 4:
        for noisy in ("urllib3", "kubernetes", "leaderelection"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


__all__ = [
    "Attempt",
    "LiveBackend",
    "LogObserver",
    "RunObserver",
    "Runner",
    "api_client",
    "client_limits",
    "configure_logging",
    "default_identity",
    "leader_elect_default",
    "log_level",
    "run",
]
