"""``policysched run``: the process around the service loop. ``run()`` loads the
configuration, builds the API client and the process's identity (the Lease holder with
leader election, the reportingInstance of its Events), the ``/healthz``, ``/readyz`` and
``/metrics`` server, the policy sources' watch (its initial set is the engine's, later
changes are swapped in) and, with leader election, the elector; then runs the
``SchedulingLoop`` until SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

from kubernetes import client, config

from ..cluster import kube_messages as km
from ..cluster.binder import DEFAULT_PARALLEL_BINDS
from ..cluster.kube import DEFAULT_BURST, DEFAULT_QPS, KubeBackend
from ..cluster.transport import TokenBucket, Transport
from ..errors import UserError
from ..framework import messages as fm
from ..framework.backend import Backend
from ..framework.profiles import Engine
from ..framework.scheduler import Scheduler
from ..framework.shadow import ReadOnlyBackend, ShadowScheduler
from ..policy.sources import Sources, configuration_document, resolve_sources
from . import leader
from .collector import GarbageCollector
from .loop import LiveBackend, SchedulingLoop
from .metrics import MetricsObserver, SchedulerMetrics
from .observers import RunObserver
from .reload import (
    NO_VALID_SET,
    SOURCES_NOT_SYNCED,
    ConfigMapSource,
    KubeEventRecorder,
    PolicyBundle,
    PolicySources,
    PolicySourceWatch,
    Reloader,
    label_selector_string,
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
from .shadow import SHADOW_PATH, ShadowOptions, ShadowReport

log = logging.getLogger(__name__)

SHADOW_NO_LEADER = ("a shadow scheduler takes no Lease (it writes nothing to the cluster): "
                    "run it without --leader-elect")
LOG_SHADOWING = ("shadow mode: judging the pods of schedulerName %s with profile %s, binding "
                 "nothing, writing nothing to the cluster (report file: %s)")
SERVE_FAILED = "cannot serve /healthz, /readyz and /metrics on {address}: {reason}"
NO_NAMESPACE = (
    "policySources.configMaps[{index}] names no namespace and the scheduler's own is unknown "
    "(not in a pod): give its namespace, or set {env}")
POD_NAMESPACE_ENV = "POD_NAMESPACE"
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def api_client(kubeconfig: str | None, context: str | None = None) -> Any:
    """An ``ApiClient`` from the kubeconfig file, else the in-cluster config, else
    ``$KUBECONFIG`` (its configuration: host, TLS, credentials; ``Transport`` makes the
    connections); ``context`` chooses a kubeconfig context other than its current one (a
    kubeconfig is then needed). Raises ``UserError``."""
    configuration = client.Configuration()
    path = kubeconfig
    if path is None and context is not None:
        path = os.environ.get("KUBECONFIG") or None
        if path is None:
            raise UserError(km.NO_KUBECONFIG)
    if path is None:
        try:
            config.load_incluster_config(client_configuration=configuration)
        except config.ConfigException:
            path = os.environ.get("KUBECONFIG") or None
            if path is None:
                raise UserError(km.NO_KUBECONFIG) from None
    if path is not None:
        try:
            config.load_kube_config(config_file=path, context=context,
                                    client_configuration=configuration, persist_config=False)
        except (config.ConfigException, OSError, ValueError) as e:
            raise UserError(km.BAD_KUBECONFIG.format(path=path, reason=e)) from None
    # no urllib3 retries: each client retries in its own way and logs an outage once, where
    # urllib3 would warn three times per failed request
    configuration.retries = False
    return client.ApiClient(configuration)


def own_namespace(environ: Mapping[str, str] = os.environ,
                  service_account: Path = SERVICE_ACCOUNT_NAMESPACE) -> str | None:
    """The namespace this process runs in: ``$POD_NAMESPACE`` (deploy/ sets it from the
    pod's metadata), else its ServiceAccount's, else None (not in a pod)."""
    if environ.get(POD_NAMESPACE_ENV):
        return environ[POD_NAMESPACE_ENV]
    try:
        return service_account.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def watched_sources(sources: Sources, namespace: str | None) -> PolicySources:
    """What ``run`` watches: the files and directories the offline commands read, and the
    configuration's ConfigMap sources, listed and watched through the API (the schema
    allows only the selector operators the API knows) in their namespace, else in
    ``namespace`` (the scheduler's own). Raises ``UserError`` when neither is known."""
    configmaps = []
    for c in sources.configmaps:
        watched = c.namespace or namespace
        if watched is None:
            raise UserError(NO_NAMESPACE.format(index=c.index, env=POD_NAMESPACE_ENV))
        configmaps.append(ConfigMapSource(watched, label_selector_string(c.label_selector)))
    return PolicySources(sources.paths, tuple(configmaps))


def leader_elect_default(config_path: str | None) -> bool:
    """The configuration's ``leaderElection.leaderElect`` when it has that block, else
    False (one replica)."""
    spec = configuration_document(config_path).value.get("leaderElection")
    return bool(spec.get("leaderElect", True)) if isinstance(spec, dict) else False


def client_limits(configuration: Mapping[str, Any], qps: float | None,
                  burst: int | None) -> tuple[float, int]:
    """The API client's (qps, burst): the flags when given, else the configuration's
    ``clientConnection``, else kube-scheduler's defaults (50, 100)."""

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
        install_signal_handlers: bool = True, identity: str | None = None,
        shadow: ShadowOptions | None = None) -> int:
    """Schedule the cluster's pending pods until SIGTERM/SIGINT (or ``stop_event``);
    returns the exit code. Raises ``UserError`` for bad input. ``is_leader`` replaces the
    built-in leader election (``leader_elect`` is then ignored); ``identity`` defaults to
    ``default_identity()``. ``qps``/``burst`` (None: the configuration's
    ``clientConnection``, else kube-scheduler's 50 and 100) limit the API requests;
    ``parallel_binds`` bounds the binds in flight.

    The configuration is ``config_path``'s, else the built-in one; policies come from its
    ``policySources`` (without any: the built-in library) plus ``policy_paths``, resolved
    as the offline commands resolve them (``policy.sources``), watched and hot-reloaded;
    ``/healthz``, ``/readyz`` and ``/metrics`` are served on the configuration's
    ``healthzBindAddress``.

    With ``shadow``, the engine judges another scheduler's pods instead of scheduling
    (``framework.shadow``): it runs on a ``ReadOnlyBackend``, takes no Lease, writes no
    Event (not even on a rejected policy ConfigMap), and reports on ``/shadow``, in
    ``policysched_shadow_decisions_total`` and in the report file."""
    if shadow is not None and leader_elect and is_leader is None:
        raise UserError(SHADOW_NO_LEADER)
    resolved = resolve_sources(config_path, policy_paths)
    configuration = resolved.configuration
    rate, rate_burst = client_limits(configuration, qps, burst)
    address = str(configuration.get("healthzBindAddress") or DEFAULT_BIND_ADDRESS)
    metrics, checks = SchedulerMetrics(), HealthChecks()
    checks.readiness[INFORMERS_CHECK] = lambda: INFORMERS_NOT_SYNCED  # no loop yet
    try:
        server = HealthServer(address, metrics, checks)
    except ValueError as e:
        raise UserError(str(e)) from None
    api = api_client(kubeconfig)
    # the process's one client: informers, binds, patches, Events, policy ConfigMaps, Lease
    transport = Transport(api, TokenBucket(rate, rate_burst))
    identity = identity or default_identity()
    elector: Any = None
    wrap: Callable[[LiveBackend], Backend] | None = None
    lease: str | None = None  # "namespace/name", for leader_election_master_status
    namespace_of_pod = own_namespace()
    if leader_elect and is_leader is None:
        elector, wrap = _elector(transport, configuration, identity, namespace_of_pod)
        is_leader = elector.is_leader
        lease = f"{elector.settings.namespace}/{elector.settings.lease_name}"
    make_scheduler: Callable[..., Scheduler] = Scheduler
    report: ShadowReport | None = None
    loops: list[SchedulingLoop] = []  # the one built below, once the initial set is loaded

    def swap(bundle: PolicyBundle) -> None:
        loops[0].swap_policies(bundle.frameworks, bundle.settings)

    sources = watched_sources(resolved, namespace_of_pod)
    reloader = Reloader(sources.directories, configuration, swap, metrics=metrics,
                        recorder=None if shadow else KubeEventRecorder(transport, identity))
    checks.readiness[POLICIES_CHECK] = reloader.readiness
    watch = PolicySourceWatch(sources, reloader, transport)
    stop = stop_event if stop_event is not None else threading.Event()
    restore: dict[int, Any] = {}
    collector = GarbageCollector()
    try:
        if shadow is not None:  # opened here: closed below whatever fails after
            report = ShadowReport(metrics, shadow.report_path)
            server.pages[SHADOW_PATH] = report.page
            wrap = ReadOnlyBackend
            make_scheduler = partial(ShadowScheduler, shadow=shadow.settings,
                                     on_judgment=report.record)
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
        if shadow is not None:
            _check_shadow_profile(shadow, initial.frameworks)
        log.info(km.LOG_STARTING, ", ".join(initial.frameworks), api.configuration.host)
        def make_backend() -> LiveBackend:
            return KubeBackend(transport, qps=rate, burst=rate_burst, namespace=namespace,
                               parallel_binds=parallel_binds,
                               reporting_instance=identity)

        collector.configure()
        loop = SchedulingLoop(Engine(dict(initial.frameworks), initial.settings), make_backend,
                        is_leader=is_leader, wrap_backend=wrap,
                        observers=[MetricsObserver(metrics, lease), HealthObserver(checks),
                                   collector, *observers],
                        observe_extension_point=metrics.on_extension_point,
                        make_scheduler=make_scheduler)
        loops.append(loop)
        checks.readiness[INFORMERS_CHECK] = informers_check(loop)
        watch.follow()
        restore = _install_signals(loop, stop) if install_signal_handlers else {}
        if elector is not None:
            elector.start()
        loop.run_until(stop)
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
        collector.restore()
        if report is not None:
            report.close()
        transport.close()
        api.close()
    return 0


def _check_shadow_profile(shadow: ShadowOptions, profiles: Mapping[str, Any]) -> None:
    """The shadow's profile must be one of the initial set's (a later set without it
    judges nothing until one has it: a warning)."""
    name = shadow.settings.profile
    if name is not None and name not in profiles:
        raise UserError(fm.SHADOW_NO_PROFILE.format(profile=name, names=", ".join(profiles)))
    log.info(LOG_SHADOWING, ", ".join(shadow.settings.scheduler_names),
             name or next(iter(profiles), ""), shadow.report_path or "none")


def _elector(transport: Transport, configuration: Mapping[str, Any], identity: str,
             namespace: str | None) -> tuple[Any, Callable[[LiveBackend], Backend]]:
    """The ``policysched.service.leader`` elector and its leader-only backend wrapper; a
    Lease without a namespace is in ``namespace`` (the scheduler's own), else kube-system."""
    try:
        settings = leader.LeaderElectionSettings.from_configuration(
            configuration, namespace or leader.DEFAULT_NAMESPACE)
    except leader.LeaderElectionError as e:
        raise UserError(str(e)) from None
    # same connections and credentials; a limiter of its own, as kube-scheduler's
    # leader-election client: binds and patches never delay a renewal
    limits = transport.limiter
    elector = leader.LeaderElector.for_cluster(
        settings, transport.sharing(limiter=TokenBucket(limits.qps, limits.burst)),
        identity=identity, rejoin=True)

    def wrap(backend: LiveBackend) -> Backend:
        return leader.LeaderOnlyBackend(backend, elector.is_leader, elector.not_leader_message)

    return elector, wrap


def _install_signals(loop: SchedulingLoop, stop: threading.Event) -> dict[int, Any]:
    """SIGTERM and SIGINT stop the loop (only possible from the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, frame: FrameType | None) -> None:
        log.info(km.LOG_STOPPING, signal.Signals(signum).name)
        stop.set()
        loop.stop()

    previous: dict[int, Any] = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.getsignal(signum)
        signal.signal(signum, handler)
    return previous


def log_level(verbosity: int) -> int:
    """``-v N`` → a logging level: 0 info (lifecycle; a pod's attempt only if it erred);
    1-3 debug for policysched (each binding and failure too); 4 and more debug for every
    library too (HTTP requests)."""
    return logging.INFO if verbosity <= 0 else logging.DEBUG


def configure_logging(verbosity: int) -> None:
    """klog-like lines on stderr, at the level ``-v`` asks for."""
    logging.basicConfig(
        level=logging.DEBUG if verbosity >= 4 else logging.INFO,
        format="%(asctime)s.%(msecs)03d %(levelname).1s %(threadName)s %(name)s] %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S")
    logging.getLogger("policysched").setLevel(log_level(verbosity))
    if verbosity < 4:
        for noisy in ("urllib3", "kubernetes"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
