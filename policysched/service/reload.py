"""Hot reload: watch the policy sources, and swap in a new policy set when they change.

Sources (the configuration's ``policySources``): directories and files, polled every second
(mtime, size and inode of every ``*.yaml``/``*.yml``, so a ConfigMap volume's ``..data``
switch is seen too), and ConfigMaps selected by label in given namespaces, watched through
the API (default selector ``policysched.io/policy=true``).

On any change the *whole* set is rebuilt from every source — files through
``load_paths``, ConfigMaps through ``load_configmap`` — then validated, compiled and turned
into frameworks by ``profiles.build_frameworks``. A valid set whose content differs from
the active one is handed to the loop's ``swap`` (which applies it between two scheduling
cycles). An invalid one is rejected as a whole: the last good set stays active, each
diagnostic is logged as ``namespace/name[key]:line:col: message``, a ``Warning`` Event
(events.k8s.io/v1, reason ``PolicyRejected``) goes on each offending ConfigMap, and
``policysched_policy_reloads_total{result="failure"}`` counts it. While a source stays
invalid, later changes are rejected too (the set is only ever swapped whole); its Event is
not repeated for the same ConfigMap revision. The initial load has no last good set to
keep: when it is invalid, it is retried without the offending ConfigMaps, so that a restart
after a bad edit still schedules (with the valid sources; later changes are rejected until
the bad ones are fixed or deleted).

Policy input is bounded (``policyLimits`` of the configuration given to the reloader, see
``policy.limits``): a source beyond a limit is rejected like any invalid one, with a
positioned diagnostic. So is a reload whose compiling takes longer than
``compileTimeoutSeconds`` (checked before each expression; the initial load is not
bounded, as nothing is scheduled yet), and one that fails in any other way (RecursionError,
MemoryError, a bug): the reload thread never dies and the active set stays.

Latency is measured from the moment a change is observed (a ConfigMap's new
resourceVersion arrives on the watch; a poll sees a file change) to the moment ``swap``
returns, into ``policysched_policy_reload_duration_seconds``.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from ..cel.compatibility import DEFAULT_VERSION, KubernetesVersion
from ..cluster import kube_messages as km
from ..cluster.connection import ConnectionLog
from ..cluster.transport import ApiError, Backoff, Transport, end_stream, interrupt
from ..cluster.transport import lines as response_lines
from ..framework.profiles import ConfigurationError, build_frameworks
from ..framework.runtime import Framework
from ..framework.scheduler import EngineSettings
from ..policy import LoadResult, PolicySet, cel_version, load_configmap, load_paths
from ..policy.configmap_manifest import POLICY_LABEL
from ..policy.diagnostics import Diagnostic, DiagnosticKind
from ..policy.documents import LoadedDocument
from ..policy.limits import PolicyLimits
from ..policy.loader import yaml_files
from ..policy.messages import COMPILE_TIMEOUT
from ..policy.policy_set import CompiledDocument, build_policy_set, compile_document
from ..policy.sources import label_hint
from ..policy.yaml_documents import Path as PolicyPath
from .metrics import RELOAD_FAILURE, RELOAD_SUCCESS, SchedulerMetrics
from .worker import Worker

DEFAULT_LABEL_SELECTOR: Final[Mapping[str, Any]] = {"matchLabels": {POLICY_LABEL: "true"}}
POLL_INTERVAL: Final = 1.0  # seconds between directory scans
DEBOUNCE: Final = 0.02  # seconds to let a burst of changes settle before rebuilding
WATCH_TIMEOUT: Final = 240  # seconds a ConfigMap watch stays open before it is renewed
REQUEST_TIMEOUT: Final = 10.0
NOTE_LIMIT: Final = 1024  # events.k8s.io/v1 note: at most 1 kB
VERSION_LENGTH: Final = 12
REPORTED_LIMIT: Final = 4096  # rejection Events remembered, not to repeat them

EVENT_REASON: Final = "PolicyRejected"
NOT_ENABLED_REASON: Final = "PolicyNotEnabled"
EVENT_ACTION: Final = "Reload"
EVENT_TYPE: Final = "Warning"
REPORTING_CONTROLLER: Final = "policysched"

# User-visible texts.
REJECTED_LOG: Final = "policy change rejected, the active set ({active}) stays: {problem}"
STARTED_WITHOUT: Final = (
    "starting without the invalid policy ConfigMaps {configmaps}: every change is rejected "
    "until they are fixed or deleted")
NOT_ENABLED_NOTE: Final = (
    "{source}: policy {name} is loaded but enabled by no profile, so it does nothing: enable "
    "it in the configuration{label}")
ACTIVE_LOG: Final = "policy set {version} active: {policies} policies, profiles {profiles}"
NO_ACTIVE: Final = "none"
NOT_LOADED: Final = "policies not loaded yet"
NO_VALID_SET: Final = "no valid policy set: {reason}"
SOURCES_NOT_SYNCED: Final = "the policy ConfigMaps ({sources}) could not be listed in time"
SEVERAL_CONFIGURATIONS: Final = (
    "several SchedulerConfiguration documents found in the policy sources ({sources}); "
    "give one with --config")
CONFIGURATION_REJECTED: Final = "configuration: {message}"
BUILD_FAILED: Final = "cannot build the profiles: {error}"
LOAD_FAILED: Final = "cannot load the policies: {error}"
NOTE_JOIN: Final = "; "
NOTE_ELLIPSIS: Final = "…"
BAD_OPERATOR: Final = "unsupported label selector operator {operator!r}"

log = logging.getLogger(__name__)


# -- configuration -----------------------------------------------------------------------


def label_selector_string(selector: Mapping[str, Any] | None) -> str:
    """A ``LabelSelector`` (matchLabels / matchExpressions) as the API's query string."""
    selector = DEFAULT_LABEL_SELECTOR if selector is None else selector
    terms = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = ",".join(expression.get("values") or [])
        if operator == "In":
            terms.append(f"{key} in ({values})")
        elif operator == "NotIn":
            terms.append(f"{key} notin ({values})")
        elif operator == "Exists":
            terms.append(key)
        elif operator == "DoesNotExist":
            terms.append(f"!{key}")
        else:
            raise ValueError(BAD_OPERATOR.format(operator=operator))
    return ",".join(terms)


@dataclass(frozen=True)
class ConfigMapSource:
    namespace: str
    label_selector: str  # the query-string form

    @property
    def name(self) -> str:
        return f"{self.namespace}/{self.label_selector}"


@dataclass(frozen=True)
class PolicySources:
    """Where policies come from: the configuration's ``policySources`` (directories
    relative to the configuration file) plus paths given on the command line."""

    directories: tuple[str, ...] = ()
    configmaps: tuple[ConfigMapSource, ...] = ()


# -- the outcome of a rebuild --------------------------------------------------------------


@dataclass(frozen=True)
class PolicyBundle:
    """A validated, compiled policy set, ready to be swapped in whole."""

    version: str  # a hash of the policy documents and the configuration
    frameworks: Mapping[str, Framework]
    settings: EngineSettings
    policy_set: PolicySet
    configmaps: Mapping[str, str] = field(default_factory=dict)  # "ns/name" → resourceVersion
    observed_at: float | None = None  # when its earliest change was observed (monotonic)
    not_enabled: tuple[str, ...] = ()  # a warning for each policy no profile enables


@dataclass(frozen=True)
class Rejection:
    """Why a rebuilt set cannot be used: one positioned line per problem, and the lines
    that belong to each ConfigMap (by "namespace/name")."""

    problems: tuple[str, ...]
    by_configmap: Mapping[str, tuple[str, ...]]

    @property
    def summary(self) -> str:
        return NOTE_JOIN.join(self.problems)


Swap = Callable[[PolicyBundle], None]
"""The loop's hand-over: apply ``bundle.frameworks`` between two scheduling cycles."""


class ConfigMapRecorder(Protocol):
    """Where a Warning about a policy ConfigMap is reported on it (an Event)."""

    def warn(self, configmap: Mapping[str, Any], reason: str, note: str) -> None: ...


def configmap_key(configmap: Mapping[str, Any]) -> str:
    metadata = configmap.get("metadata") or {}
    return f"{metadata.get('namespace', '')}/{metadata.get('name', '')}"


def _resource_version(configmap: Mapping[str, Any]) -> str:
    return str((configmap.get("metadata") or {}).get("resourceVersion", ""))


def _truncate(note: str, limit: int = NOTE_LIMIT) -> str:
    data = note.encode()
    if len(data) <= limit:
        return note
    cut = data[: limit - len(NOTE_ELLIPSIS.encode())].decode(errors="ignore")
    return cut + NOTE_ELLIPSIS


# -- compiling, with a cache ------------------------------------------------------------------


class CompileTimeout(Exception):
    """Compiling took longer than its budget: it stopped before the expression at ``path``
    of ``document``."""

    def __init__(self, document: LoadedDocument, path: PolicyPath) -> None:
        super().__init__(document.source)
        self.document = document
        self.path = path


class CompileCache:
    """``build_policy_set`` that compiles only what changed: a document whose source text
    (file, or ConfigMap key) is unchanged since the last build reuses its compiled policy
    and its diagnostics. Compiling the built-in library takes about half a second; one
    changed ConfigMap should not cost that. Every document is compiled at the CEL
    compatibility ``version``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 version: KubernetesVersion = DEFAULT_VERSION) -> None:
        self.version = version
        self._entries: dict[tuple[str, str | None, int, str, str], CompiledDocument] = {}
        self._clock = clock

    def build(self, loaded: LoadResult, budget: float | None = None) -> PolicySet:
        """The policy set of ``loaded``. With a ``budget`` (seconds), compiling documents
        that are not in the cache stops once it is spent: ``CompileTimeout`` is raised
        before the next expression (the documents compiled stay cached for the next
        build)."""
        used: dict[tuple[str, str | None, int, str, str], CompiledDocument] = {}
        deadline = None if budget is None else self._clock() + budget

        def compile_cached(document: LoadedDocument) -> CompiledDocument:
            text = hashlib.sha256(document.yaml.text.encode()).hexdigest()
            key = (document.source, document.origin, document.yaml.number, document.kind, text)
            entry = used.get(key) or self._entries.get(key)
            if entry is None:
                def checkpoint(path: PolicyPath) -> None:
                    if deadline is not None and self._clock() > deadline:
                        self._entries.update(used)
                        raise CompileTimeout(document, path)

                checkpoint(())
                entry = compile_document(document, checkpoint,
                                         cel_version.for_document(document, self.version))
            used[key] = entry
            return entry

        policy_set = build_policy_set(loaded, compile_cached)
        self._entries = used  # forget what is no longer loaded
        return policy_set


# -- the reloader ------------------------------------------------------------------------------


class Reloader(Worker):
    """Keeps the loop's policy set in step with the sources. Watchers report changes with
    ``upsert_configmap`` / ``delete_configmap`` / ``replace_configmaps`` / ``changed``; a
    worker thread (``start``) rebuilds after each change; ``reload()`` does it inline."""

    thread_name = "policysched-reload"

    def __init__(self, directories: Sequence[str], configuration: Mapping[str, Any] | None,
                 swap: Swap, *, metrics: SchedulerMetrics | None = None,
                 recorder: ConfigMapRecorder | None = None, debounce: float = DEBOUNCE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.directories = tuple(directories)
        self.configuration = dict(configuration) if configuration is not None else None
        self.limits = PolicyLimits.from_configuration(configuration)
        self.swap = swap
        self.metrics = metrics
        self.recorder = recorder
        self.debounce = debounce
        self.clock = clock
        self.active: PolicyBundle | None = None
        self.last_rejection: Rejection | None = None
        self._configmaps: dict[str, dict[str, dict[str, Any]]] = {}  # source → key → object
        self._pending_since: float | None = None
        self._initial = True
        self._compiler = CompileCache(clock, cel_version.from_configuration(configuration))
        self._directory_cache: tuple[Signature, LoadResult] | None = None
        self._reported: set[tuple[str, str, str]] = set()  # (key, resourceVersion, note)
        self._lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self._dirty = threading.Event()

    # -- change notifications (any thread) ------------------------------------------------

    def changed(self, observed_at: float | None = None) -> None:
        """Something changed (a file): rebuild soon."""
        with self._lock:
            self._note_change(observed_at)

    def upsert_configmap(self, configmap: Mapping[str, Any], source: str = "",
                         observed_at: float | None = None) -> None:
        with self._lock:
            self._configmaps.setdefault(source, {})[configmap_key(configmap)] = dict(configmap)
            self._note_change(observed_at)

    def delete_configmap(self, configmap: Mapping[str, Any], source: str = "",
                         observed_at: float | None = None) -> None:
        with self._lock:
            if self._configmaps.get(source, {}).pop(configmap_key(configmap), None) is not None:
                self._note_change(observed_at)

    def replace_configmaps(self, configmaps: Iterable[Mapping[str, Any]], source: str = "",
                           observed_at: float | None = None) -> None:
        """A source's full list (after a (re)list): a change only if it differs."""
        fresh = {configmap_key(c): dict(c) for c in configmaps}
        with self._lock:
            old = self._configmaps.get(source, {})
            if {k: _resource_version(v) for k, v in old.items()} != {
                    k: _resource_version(v) for k, v in fresh.items()}:
                self._note_change(observed_at)
            self._configmaps[source] = fresh

    def _note_change(self, observed_at: float | None) -> None:
        at = self.clock() if observed_at is None else observed_at
        if self._pending_since is None or at < self._pending_since:
            self._pending_since = at
        self._dirty.set()

    def configmaps(self) -> list[dict[str, Any]]:
        """Every ConfigMap of every source, once each, by namespace/name."""
        with self._lock:
            merged = {k: v for objects in self._configmaps.values() for k, v in objects.items()}
        return [merged[k] for k in sorted(merged)]

    # -- building -------------------------------------------------------------------------

    def build(self, budget: float | None = None,
              excluding: frozenset[str] = frozenset()) -> PolicyBundle | Rejection:
        """Load every source now (but the ConfigMaps ``excluding`` names) and compile it,
        spending at most ``budget`` seconds on compiling: a bundle, or why not. Whatever
        goes wrong — a limit, a timeout, RecursionError, MemoryError, a bug — is a
        rejection, never an exception."""
        configmaps = [c for c in self.configmaps() if configmap_key(c) not in excluding]
        revisions = {configmap_key(c): _resource_version(c) for c in configmaps}
        try:
            return self._build(configmaps, revisions, budget)
        except CompileTimeout as e:
            message = self.limits.message(COMPILE_TIMEOUT, "compile_timeout_seconds")
            diagnostic = e.document.diagnostic(e.path, DiagnosticKind.LIMIT, message)
            return self._rejection([diagnostic], configmaps)
        except Exception as e:  # the active set stays whatever the new one does
            log.exception("loading the policies failed")
            problem = LOAD_FAILED.format(error=f"{type(e).__name__}: {e}")
            return self._blame_changed(problem, revisions)

    def _build(self, configmaps: Sequence[Mapping[str, Any]], revisions: Mapping[str, str],
               budget: float | None) -> PolicyBundle | Rejection:
        loaded = LoadResult()
        if self.directories:
            loaded.extend(self._directory_documents())
        for configmap in configmaps:
            loaded.extend(load_configmap(configmap, self.limits))
        policy_set = self._compiler.build(loaded, budget)
        if not policy_set.valid:
            return self._rejection(policy_set.errors, configmaps)
        configuration = self.configuration
        if configuration is None and policy_set.configurations:
            if len(policy_set.configurations) > 1:
                sources = ", ".join(c.source for c in policy_set.configurations)
                return self._blame_changed(
                    SEVERAL_CONFIGURATIONS.format(sources=sources), revisions)
            configuration = dict(policy_set.configurations[0].value)
        try:
            frameworks, settings = build_frameworks(policy_set.policies, configuration)
        except ConfigurationError as e:
            return self._blame_changed(CONFIGURATION_REJECTED.format(message=e), revisions)
        except Exception as e:  # a bug must not take the running set down
            log.exception("building frameworks failed")
            return self._blame_changed(BUILD_FAILED.format(error=e), revisions)
        version = policy_set_version(loaded, configuration)
        enabled = {i.name for framework in frameworks.values() for i in framework.instances}
        hint = label_hint(configuration or {})
        unused = tuple(NOT_ENABLED_NOTE.format(source=p.position, name=p.name, label=hint)
                       for p in policy_set.policies if p.name not in enabled)
        return PolicyBundle(version, frameworks, settings, policy_set, dict(revisions),
                            not_enabled=unused)

    def _directory_documents(self) -> LoadResult:
        """The directories' documents, read again only when a file changed (parsing the
        built-in library's YAML takes ~0.1 s, more than everything else of a reload)."""
        signature = directory_signature(self.directories)
        if self._directory_cache is None or self._directory_cache[0] != signature:
            self._directory_cache = (signature, load_paths(self.directories, self.limits))
        return self._directory_cache[1]

    def _rejection(self, diagnostics: Iterable[Diagnostic],
                   configmaps: Sequence[Mapping[str, Any]]) -> Rejection:
        prefixes = {configmap_key(c) + "[": configmap_key(c) for c in configmaps}
        problems: list[str] = []
        by_configmap: dict[str, list[str]] = {}
        for d in diagnostics:
            line = d.headline()
            problems.append(line)
            for prefix, key in prefixes.items():
                if d.path.startswith(prefix):
                    by_configmap.setdefault(key, []).append(line)
        return Rejection(tuple(problems), {k: tuple(v) for k, v in by_configmap.items()})

    def _blame_changed(self, problem: str, revisions: Mapping[str, str]) -> Rejection:
        """A problem with no position: blame the ConfigMaps changed since the active set."""
        previous = self.active.configmaps if self.active is not None else {}
        changed = [k for k, rv in revisions.items() if previous.get(k) != rv]
        return Rejection((problem,), {k: (problem,) for k in changed})

    # -- applying -------------------------------------------------------------------------

    def reload(self) -> PolicyBundle | Rejection | None:
        """Rebuild now: the bundle made active, the rejection, or None when nothing
        changed (the rebuilt set has the active version). The first call is the initial
        load: its bundle is returned, not handed to ``swap`` (the caller builds its engine
        from it), and it is not counted as a reload."""
        with self._reload_lock:
            with self._lock:
                observed_at, self._pending_since = self._pending_since, None
                self._dirty.clear()
            initial, self._initial = self._initial, False
            # The initial load compiles everything it is given (nothing is scheduled yet);
            # a reload shares the process with scheduling: its compiling is bounded.
            outcome = self.build(None if initial else self.limits.compile_timeout_seconds)
            if isinstance(outcome, Rejection):
                self._reject(outcome, initial)
                if not (initial and outcome.by_configmap):
                    return outcome
                # No earlier set to keep (a restart after a bad edit): start with the
                # sources that are valid rather than not at all; the bad ones are reported.
                without = self.build(excluding=frozenset(outcome.by_configmap))
                if isinstance(without, Rejection):
                    return outcome
                log.warning(STARTED_WITHOUT.format(
                    configmaps=", ".join(sorted(outcome.by_configmap))))
                outcome = without
            self.last_rejection = None
            if self.active is not None and outcome.version == self.active.version:
                self.active = dataclasses.replace(self.active, configmaps=outcome.configmaps)
                return None
            bundle = dataclasses.replace(outcome, observed_at=None if initial else observed_at)
            if not initial:
                self.swap(bundle)
            previous, self.active = self.active, bundle
            if self.metrics is not None:
                self.metrics.set_active_version(bundle.version)
                if not initial:
                    seconds = None if observed_at is None else self.clock() - observed_at
                    self.metrics.on_reload(RELOAD_SUCCESS, seconds)
            log.info(ACTIVE_LOG.format(version=bundle.version,
                                       policies=len(bundle.policy_set.policies),
                                       profiles=", ".join(bundle.frameworks)))
            self._report_not_enabled(bundle, previous)
            return bundle

    def _reject(self, rejection: Rejection, initial: bool) -> None:
        self.last_rejection = rejection
        active = self.active.version if self.active is not None else NO_ACTIVE
        for problem in rejection.problems:
            log.warning(REJECTED_LOG.format(active=active, problem=problem))
        if self.metrics is not None and not initial:
            self.metrics.on_reload(RELOAD_FAILURE)
        self._warn(EVENT_REASON, rejection.by_configmap)

    def _report_not_enabled(self, bundle: PolicyBundle, previous: PolicyBundle | None) -> None:
        """Each policy no profile enables: logged at the initial load; on a reload, when
        its ConfigMap changed, a warning and an Event on the ConfigMap (the shipped
        catalogue of policies, not enabled, is not reported again and again)."""
        if previous is None:
            for note in bundle.not_enabled:
                log.info(note)
            return
        by_configmap: dict[str, list[str]] = {}
        for key, revision in bundle.configmaps.items():
            if previous.configmaps.get(key) != revision:
                lines = [n for n in bundle.not_enabled if n.startswith(key + "[")]
                if lines:
                    by_configmap[key] = lines
        for lines in by_configmap.values():
            for note in lines:
                log.warning(note)
        self._warn(NOT_ENABLED_REASON, by_configmap)

    def _warn(self, reason: str, by_configmap: Mapping[str, Sequence[str]]) -> None:
        """A Warning Event with ``reason`` on each ConfigMap, once per revision and note."""
        if self.recorder is None:
            return
        objects = {configmap_key(c): c for c in self.configmaps()}
        for key, lines in by_configmap.items():
            configmap = objects.get(key)
            if configmap is None:
                continue
            note = _truncate(NOTE_JOIN.join(lines))
            mark = (key, _resource_version(configmap), note)
            if mark in self._reported:
                continue
            if len(self._reported) >= REPORTED_LIMIT:
                self._reported.clear()
            self._reported.add(mark)
            try:
                self.recorder.warn(configmap, reason, note)
            except Exception as e:  # the outcome stands even if the Event is lost
                log.warning("cannot record the %s event on ConfigMap %s: %s", reason, key, e)

    def readiness(self) -> str | None:
        """A /readyz check: fails until a valid set is active."""
        if self.active is not None:
            return None
        if self.last_rejection is not None:
            return NO_VALID_SET.format(reason=self.last_rejection.summary)
        return NOT_LOADED

    # -- the worker thread ----------------------------------------------------------------

    def _interrupt(self) -> None:
        self._dirty.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._dirty.wait()
            if self._stop.is_set():
                return
            if self.debounce > 0:
                self._stop.wait(self.debounce)
            try:
                self.reload()
            except Exception:
                log.exception("policy reload failed")


def policy_set_version(loaded: LoadResult, configuration: Mapping[str, Any] | None) -> str:
    """A content hash: the same documents (in the same order) and configuration give the
    same version, whatever their comments, formatting or ConfigMap revisions."""
    content = [[d.kind, d.value] for d in loaded.documents]
    text = json.dumps([content, configuration], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:VERSION_LENGTH]


# -- directory polling --------------------------------------------------------------------


Signature = tuple[tuple[str, int, int, int], ...]


def directory_signature(paths: Sequence[str]) -> Signature:
    """What a change of any policy file under ``paths`` changes."""
    found: list[tuple[str, int, int, int]] = []
    for path in paths:
        files = yaml_files(path) if os.path.isdir(path) else [path]
        for file in files:
            try:
                st = os.stat(file)
            except OSError:
                found.append((file, -1, -1, -1))
                continue
            found.append((file, st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(found)


class DirectoryPoller(Worker):
    """Polls ``paths`` every ``interval`` seconds and calls ``changed(observed_at)``."""

    thread_name = "policysched-dirpoll"

    def __init__(self, paths: Sequence[str], changed: Callable[[float], None],
                 interval: float = POLL_INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.paths = tuple(paths)
        self.changed = changed
        self.interval = interval
        self.clock = clock
        self._signature = directory_signature(self.paths)

    def poll(self) -> bool:
        signature = directory_signature(self.paths)
        if signature == self._signature:
            return False
        self._signature = signature
        self.changed(self.clock())
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception:
                log.exception("polling %s failed", ", ".join(self.paths))


# -- ConfigMaps from the API ---------------------------------------------------------------


class ConfigMapWatcher(Worker):
    """List + watch the ConfigMaps of one source through the process's ``Transport``
    (raw JSON; the watch on a connection of its own); feeds the reloader. ``synced`` is set
    once the first list arrived. Failures reconnect with the transport's backoff policy."""

    def __init__(self, transport: Transport, source: ConfigMapSource, reloader: Reloader,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.transport = transport
        self.source = source
        self.reloader = reloader
        self.clock = clock
        self.path = f"/api/v1/namespaces/{source.namespace}/configmaps"
        self._response: Any = None
        self.synced = threading.Event()
        self.thread_name = f"policysched-cm-{source.namespace}"
        self.connection = ConnectionLog(km.CONNECTION_CONFIGMAPS.format(
            source=source.name), log)

    def _interrupt(self) -> None:
        interrupt(self._response)  # unblock the read in progress

    def _list(self) -> str:
        body = self.transport.call("GET", self.path, query={
            "labelSelector": self.source.label_selector or None},
            timeout=(REQUEST_TIMEOUT, REQUEST_TIMEOUT)) or {}
        items = [i for i in body.get("items") or [] if isinstance(i, dict)]
        for item in items:  # list items carry no namespace-less gaps, but be sure
            item.setdefault("metadata", {}).setdefault("namespace", self.source.namespace)
        self.reloader.replace_configmaps(items, self.source.name, self.clock())
        self.synced.set()
        return str((body.get("metadata") or {}).get("resourceVersion", ""))

    def _run(self) -> None:
        backoff = Backoff()
        resource_version: str | None = None
        while not self._stop.is_set():
            try:
                if resource_version is None:
                    resource_version = self._list()
                    self.connection.succeeded()
                    backoff.reset()
                started = time.monotonic()
                resource_version, delivered = self._follow(resource_version)
                self._stop.wait(backoff.after_watch(time.monotonic() - started, delivered))
            except Exception as e:
                if self._stop.is_set():
                    return
                resource_version = None
                if getattr(e, "status", None) != 410:  # 410 Gone: too old, just re-list
                    self.connection.failed(e)  # one line per outage, not per retry
                    self._stop.wait(backoff.next())

    def _follow(self, resource_version: str) -> tuple[str, bool]:
        """Watch from ``resource_version`` until the server closes; the last one seen, and
        whether the watch delivered any event."""
        response = self.transport.open("GET", self.path, query={
            "watch": "true", "labelSelector": self.source.label_selector or None,
            "resourceVersion": resource_version, "allowWatchBookmarks": "true",
            "timeoutSeconds": WATCH_TIMEOUT}, timeout=(REQUEST_TIMEOUT,
                                                       WATCH_TIMEOUT + REQUEST_TIMEOUT))
        self._response = response
        delivered = False
        try:
            for lines in response_lines(response):
                if self._stop.is_set():
                    break
                for line in lines:
                    resource_version = self._on_line(line, resource_version)
                    delivered = True
        finally:
            self._response = None
            end_stream(response)
        return resource_version, delivered

    def _on_line(self, line: bytes, resource_version: str) -> str:
        event = json.loads(line)
        if not isinstance(event, dict):
            return resource_version
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            raise ApiError(int(obj.get("code") or 0), str(obj.get("message") or obj))
        resource_version = _resource_version(obj) or resource_version
        observed = self.clock()
        if kind in ("ADDED", "MODIFIED"):
            self.reloader.upsert_configmap(obj, self.source.name, observed)
        elif kind == "DELETED":
            self.reloader.delete_configmap(obj, self.source.name, observed)
        return resource_version


class KubeEventRecorder:
    """``ConfigMapRecorder`` writing events.k8s.io/v1 Warning Events."""

    def __init__(self, transport: Transport, reporting_instance: str,
                 reporting_controller: str = REPORTING_CONTROLLER) -> None:
        self.transport = transport
        self.reporting_instance = reporting_instance
        self.reporting_controller = reporting_controller

    def warn(self, configmap: Mapping[str, Any], reason: str, note: str) -> None:
        body = warning_event(configmap, reason, note, self.reporting_controller,
                             self.reporting_instance)
        self.transport.send(
            "POST", f"/apis/events.k8s.io/v1/namespaces/{body['metadata']['namespace']}/events",
            body=body, timeout=(REQUEST_TIMEOUT, REQUEST_TIMEOUT))


def warning_event(configmap: Mapping[str, Any], reason: str, note: str, controller: str,
                  instance: str, now: datetime.datetime | None = None) -> dict[str, Any]:
    """The events.k8s.io/v1 Warning Event body regarding ``configmap``."""
    metadata = configmap.get("metadata") or {}
    now = now or datetime.datetime.now(datetime.UTC)
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {
            "name": f"{metadata.get('name', 'configmap')}.{time.time_ns():x}",
            "namespace": metadata.get("namespace", ""),
        },
        "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "reportingController": controller,
        "reportingInstance": instance,
        "action": EVENT_ACTION,
        "reason": reason,
        "type": EVENT_TYPE,
        "note": note,
        "regarding": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "namespace": metadata.get("namespace", ""),
            "name": metadata.get("name", ""),
            "uid": metadata.get("uid", ""),
            "resourceVersion": metadata.get("resourceVersion", ""),
        },
    }


# -- wiring ---------------------------------------------------------------------------------


class PolicySourceWatch:
    """Every watcher of a ``PolicySources`` around one ``Reloader``. ``start()`` waits for
    the ConfigMap lists and loads the initial set (returned: build the engine from it);
    ``follow()``
    then starts rebuilding on each change (changes seen in between are not lost: they are
    applied as soon as ``follow()`` runs). ``synced()`` is a /readyz input."""

    def __init__(self, sources: PolicySources, reloader: Reloader,
                 transport: Transport | None = None,
                 poll_interval: float = POLL_INTERVAL) -> None:
        self.sources = sources
        self.reloader = reloader
        self.watchers = [ConfigMapWatcher(transport, s, reloader) for s in sources.configmaps
                         ] if transport is not None else []
        self.poller = (DirectoryPoller(sources.directories, reloader.changed, poll_interval)
                       if sources.directories else None)

    def synced(self) -> bool:
        return all(w.synced.is_set() for w in self.watchers)

    def start(self, sync_timeout: float = 30.0) -> PolicyBundle | Rejection | None:
        """Start watching; the initial load's outcome, or None when the ConfigMap lists did
        not arrive within ``sync_timeout`` seconds (nothing loaded)."""
        for watcher in self.watchers:
            watcher.start()
        if self.poller is not None:
            self.poller.start()
        deadline = time.monotonic() + sync_timeout
        for watcher in self.watchers:
            watcher.synced.wait(max(0.0, deadline - time.monotonic()))
        return self.reloader.reload() if self.synced() else None

    def follow(self) -> None:
        """Rebuild after every change from now on (in the reloader's thread)."""
        self.reloader.start()

    def stop(self, timeout: float | None = 5.0) -> None:
        for watcher in self.watchers:
            watcher.stop(timeout)
        if self.poller is not None:
            self.poller.stop(timeout)
        self.reloader.stop(timeout)


__all__ = [
    "DEFAULT_LABEL_SELECTOR",
    "EVENT_REASON",
    "NOT_ENABLED_REASON",
    "POLICY_LABEL",
    "CompileCache",
    "CompileTimeout",
    "ConfigMapRecorder",
    "ConfigMapSource",
    "ConfigMapWatcher",
    "DirectoryPoller",
    "KubeEventRecorder",
    "PolicyBundle",
    "PolicySourceWatch",
    "PolicySources",
    "Rejection",
    "Reloader",
    "Swap",
    "directory_signature",
    "label_selector_string",
    "policy_set_version",
    "warning_event",
]
