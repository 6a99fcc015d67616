"""``KubeBackend``: the engine's ``Backend`` on a real Kubernetes API server.

Reads: one informer thread per resource (Nodes, Pods, Namespaces, Services,
ReplicationControllers, ReplicaSets, StatefulSets, PodDisruptionBudgets, the storage objects
— PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, CSIDrivers — and
PodGroups when the ``scheduling.x-k8s.io/v1alpha1`` API is served) lists, then watches from
the list's resourceVersion with bookmarks; a watch that expires (410 Gone) relists, and the
relist is diffed against the informer's last known state so that no change — deletions
included — is
missed. Other failures reconnect with capped exponential backoff. Responses are read as raw
JSON (never the client's model classes), decoded and encoded with orjson. Changes become
``ClusterEvent``s in one thread-safe queue: ``drain_events()`` returns them,
``wait_for_events()`` waits for them (or for bind outcomes), ``synced()`` says every initial
list was delivered.

Writes follow kube-scheduler: ``bind`` POSTs ``pods/binding`` with the pod's uid as a
precondition; ``start_bind`` starts binds (preBind's metadata patch, then the POST) without
waiting for them, at most ``parallel_binds`` at once, like kube-scheduler's binding
goroutines: their requests are multiplexed by the transport's one thread (``StartedBinds``),
and only binds that first wait for their volumes get a thread each (a ``BindPool``);
``drain_bind_outcomes()`` hands the outcomes back; ``set_pod_condition`` and
``set_nominated_node`` patch the ``status`` subresource (skipped when nothing changes; a
failure is never written on a bound pod, even one whose binding's answer was lost);
``evict`` marks the pod with a DisruptionTarget condition and deletes it, as
kube-scheduler's preemption does (not through the Eviction API); ``record_event`` writes
``events.k8s.io/v1`` Events from a background thread, with client-go's series aggregation.
Requests are rate limited like client-go (token bucket, ``qps``/``burst``, shared by every
thread of the backend — informers, binds, patches; Events have a bucket of their own, as
kube-scheduler's event client). Each client (an informer, the event writer, the pod writes)
logs a lost or failing connection once per change of state (``connection.ConnectionLog``),
never per retry.

All requests go through ``transport.Transport`` (the process's one client: keep-alive
connections, credentials, limiter). Usage: ``backend = KubeBackend(transport)`` (or an
``ApiClient``: the backend then opens connections of its own); ``backend.start()`` …
``backend.close()``.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import random
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import orjson

from ..framework.backend import (
    BackendError,
    BindError,
    BindOutcome,
    BindRequest,
    VolumeBindRequest,
    run_bind,
)
from ..model.clock import Clock, RealClock
from ..model.disruption_budgets import API_VERSION as BUDGET_API_VERSION
from ..model.disruption_budgets import POD_DISRUPTION_BUDGET
from ..model.events import (
    ClusterEvent,
    ConditionStatus,
    EventKind,
    EventType,
    Resource,
)
from ..model.objects import (
    DEFAULT_NAMESPACE,
    DISRUPTION_TARGET,
    PREEMPTION_BY_SCHEDULER,
    ObjectError,
    PodGroupSpec,
    PodInfo,
    format_timestamp,
    pod_group_spec,
)
from ..model.volumes import API_VERSIONS as STORAGE_API_VERSIONS
from ..model.volumes import (
    CSI_DRIVER,
    CSI_NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
)
from ..threads import Thread
from . import kube_messages as km
from . import messages
from .binder import DEFAULT_PARALLEL_BINDS, VOLUME_BINDS, BindPool, StartedBinds
from .connection import ConnectionLog, about_the_object, is_outage
from .transport import (
    REQUEST_TIMEOUT,
    ApiError,
    Backoff,
    TokenBucket,
    Transport,
    end_stream,
    interrupt,
)
from .transport import lines as response_lines
from .volume_writes import (
    bind_volume_to_claim,
    check_provision,
    check_static,
    select_node,
    wait_until_bound,
)

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

log = logging.getLogger(__name__)

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
POD_SCHEDULED = "PodScheduled"
PODGROUP_API = "/apis/scheduling.x-k8s.io/v1alpha1"

LIST_PAGE_SIZE = 500
LIST_TIMEOUT = (5.0, 120.0)
WATCH_TIMEOUT_RANGE = (300, 600)  # server-side timeoutSeconds, random like client-go
WATCH_READ_SLACK = 60.0  # client read timeout beyond the server's timeoutSeconds
NOTE_LENGTH_LIMIT = 1024  # events.k8s.io/v1 note limit (bytes), as kube truncates it
EVENT_QUEUE_SIZE = 4096
EVENT_SERIES_FINISH = 360.0  # client-go finishTime: an isomorphic event older starts anew
EVENT_CACHE_SIZE = 4096  # client-go maxLruCacheEntries: the series remembered at most
EVENT_SERIES_REFRESH = 1800.0  # client-go refreshTime: grown series counts are written
EVENT_RETRIES = 3
STATUS_RETRY_DELAYS = (0.01, 0.05, 0.25)  # kube's retry.DefaultBackoff for status patches
DEFAULT_QPS = 50.0  # kube-scheduler's clientConnection defaults
DEFAULT_BURST = 100


# ------------------------------------------------------------------------------ errors


class _Expired(Exception):
    """The watch's resourceVersion is too old (410 Gone): relist."""


# ------------------------------------------------------------------------------ informers


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


@dataclass(frozen=True)
class WatchedResource:
    """One resource an informer lists and watches. ``unchanged(old, new)`` says an update
    changes nothing the scheduler uses: it then updates the informer's state but is not
    emitted."""

    resource: Resource
    api_version: str
    path: str  # the collection, e.g. /api/v1/pods or /api/v1/namespaces/ns/pods
    namespaced: bool
    unchanged: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None


_RENEWED_METADATA = frozenset({"resourceVersion", "managedFields"})


def node_heartbeat_only(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a Node update only renewed what its kubelet (or KWOK) refreshes every few
    seconds — condition heartbeat times — as kube-scheduler ignores such updates (its
    queue reacts to allocatable, labels, taints, conditions, unschedulable changes)."""
    if old.get("spec") != new.get("spec") or old.keys() != new.keys():
        return False
    old_meta, new_meta = _metadata(old), _metadata(new)
    if any(old_meta.get(k) != new_meta.get(k)
           for k in old_meta.keys() | new_meta.keys() if k not in _RENEWED_METADATA):
        return False
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    for key in old_status.keys() | new_status.keys():
        if key == "conditions":
            if _without_heartbeats(old_status.get(key)) != _without_heartbeats(
                    new_status.get(key)):
                return False
        elif old_status.get(key) != new_status.get(key):
            return False
    return True


def _field(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def namespace_labels_unchanged(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a Namespace update left its labels (all the scheduler reads of it) alone."""
    return _field(old, "metadata", "labels") == _field(new, "metadata", "labels")


_SELECTOR_FIELDS = (("spec", "selector"), ("spec", "template", "metadata", "labels"))


def selector_unchanged(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a Service, ReplicationController, ReplicaSet or StatefulSet update left its
    selector (and the template labels an RC's selector defaults to) alone: a workload's
    status updates (replica counts) are not emitted."""
    return all(_field(old, *path) == _field(new, *path) for path in _SELECTOR_FIELDS)


_BUDGET_FIELDS = (("spec", "selector"), ("status", "disruptionsAllowed"),
                  ("status", "disruptedPods"))


def budget_unchanged(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a PodDisruptionBudget update left what preemption reads of it alone (its
    selector, allowed disruptions and disrupted pods)."""
    return all(_field(old, *path) == _field(new, *path) for path in _BUDGET_FIELDS)


def _paths_unchanged(*paths: tuple[str, ...]) -> Callable[[dict[str, Any], dict[str, Any]],
                                                          bool]:
    """An ``unchanged`` predicate: whether an update left the fields at ``paths`` alone."""
    def unchanged(old: dict[str, Any], new: dict[str, Any]) -> bool:
        return all(_field(old, *path) == _field(new, *path) for path in paths)
    return unchanged


# What the volume plugins (and the binding of claims) read of the storage objects: a claim's
# or volume's spec, annotations (storage class, selected node, bind-completed), phase and
# deletion; a volume's labels (VolumeZone); a class's fields; CSINodes' and CSIDrivers' spec.
# Status-only updates (a claim's capacity and conditions, a volume's message) are noise.
_STORAGE_METADATA = (("metadata", "annotations"), ("metadata", "deletionTimestamp"))
claim_unchanged = _paths_unchanged(("spec",), ("status", "phase"), *_STORAGE_METADATA)
volume_unchanged = _paths_unchanged(("spec",), ("status", "phase"), ("metadata", "labels"),
                                    *_STORAGE_METADATA)
storage_class_unchanged = _paths_unchanged(
    ("provisioner",), ("volumeBindingMode",), ("allowedTopologies",), ("parameters",),
    ("metadata", "annotations"))
spec_unchanged = _paths_unchanged(("spec",))


def _without_heartbeats(conditions: Any) -> Any:
    if not isinstance(conditions, list):
        return conditions
    return [{k: v for k, v in c.items() if k != "lastHeartbeatTime"}
            if isinstance(c, dict) else c for c in conditions]


def list_objects(transport: Transport, path: str, *, page_size: int = LIST_PAGE_SIZE,
                 stopped: Callable[[], bool] = lambda: False,
                 on_page: Callable[[int], None] | None = None
                 ) -> tuple[list[dict[str, Any]], str]:
    """Every object of the collection ``path``, listed in pages of ``page_size``
    (``limit``/``continue``; an expired continue token lists again from the start), and
    the list's resourceVersion. ``on_page`` is told how many objects were read so far
    after each page that more pages follow; once ``stopped()``, the next page is not
    asked for. Raises ``ApiError``."""
    while True:
        items: list[dict[str, Any]] = []
        token: str | None = None
        try:
            while True:
                page = transport.call("GET", path,
                                      query={"limit": page_size, "continue": token},
                                      timeout=LIST_TIMEOUT) or {}
                items.extend(i for i in page.get("items") or [] if isinstance(i, dict))
                metadata = page.get("metadata") or {}
                token = metadata.get("continue") or None
                if token is None:
                    return items, str(metadata.get("resourceVersion") or "")
                if on_page is not None:
                    on_page(len(items))
                if stopped():
                    raise ApiError(0, km.CLIENT_STOPPED)
        except ApiError as e:
            if e.status != 410 or token is None:
                raise
            # the continue token expired: list again from the start


@dataclass
class _Known:
    resource_version: str
    uid: str
    obj: dict[str, Any]


class Informer:
    """List then watch one resource in a daemon thread, keeping the last known state of
    every object and emitting what changed. Thread-safe reads: ``get``, ``items``."""

    def __init__(self, transport: Transport, spec: WatchedResource,
                 emit: Callable[[list[ClusterEvent]], None],
                 watch_timeout: Callable[[], float] = lambda: random.uniform(*WATCH_TIMEOUT_RANGE)
                 ) -> None:
        self.transport = transport
        self.spec = spec
        self._emit = emit
        self._watch_timeout = watch_timeout  # seconds each watch asks the server for
        self._state: dict[str, _Known] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._response: Any = None
        self._interrupted = False
        self._thread: threading.Thread | None = None
        self.relists = 0  # lists after the first (410 Gone, errors)
        self.suppressed = 0  # updates not emitted (``WatchedResource.unchanged``)
        self.resource_version = ""
        self.connection = ConnectionLog(km.CONNECTION_INFORMER.format(resource=self.name), log)

    @property
    def name(self) -> str:
        return self.spec.resource

    def start(self) -> None:
        self._thread = Thread(target=self._run, name=f"informer-{self.name}",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 2.0) -> None:
        self._stop.set()
        self.interrupt()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def interrupt(self) -> None:
        """End the watch in progress: the informer watches again from the last
        resourceVersion (or, after ``stop()``, ends)."""
        self._interrupted = True  # a watch being opened ends as soon as it is
        interrupt(self._response)

    def synced(self) -> bool:
        return self._synced.is_set()

    def mark_synced(self) -> None:
        self._synced.set()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            known = self._state.get(key)
        return None if known is None else known.obj

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return [k.obj for k in self._state.values()]

    def __len__(self) -> int:
        return len(self._state)

    # -- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        backoff = Backoff()
        resource_version: str | None = None  # None: list first
        while not self._stop.is_set():
            try:
                if resource_version is None:
                    resource_version = self._list_and_replace()
                    backoff.reset()
                started = time.monotonic()
                resource_version, interrupted, events = self._watch(resource_version)
                # one that delivered events (a slow watcher the server cut) resumes at once
                self._stop.wait(backoff.after_watch(time.monotonic() - started,
                                                    bool(events) or interrupted))
            except _Expired:
                log.info(km.LOG_WATCH_EXPIRED, self.name, resource_version)
                resource_version = None
            except ApiError as e:
                if self._stop.is_set():
                    break
                if e.status == 410:
                    log.info(km.LOG_WATCH_EXPIRED, self.name, resource_version)
                    resource_version = None
                    continue
                self.connection.failed(e)
                if e.status not in (0, 429, 500, 502, 503, 504):
                    resource_version = None  # forbidden, not found…: start over with a list
                self._stop.wait(backoff.next())
            except Exception:  # a bug must not end the informer silently
                if self._stop.is_set():
                    break
                log.exception(km.LOG_INFORMER_CRASHED, self.name)
                resource_version = None
                self._stop.wait(backoff.next())

    def _list(self) -> tuple[list[dict[str, Any]], str]:
        """Every object (paged), and the list's resourceVersion."""
        return list_objects(self.transport, self.spec.path, stopped=self._stop.is_set)

    def _list_and_replace(self) -> str:
        items, resource_version = self._list()
        self.connection.succeeded()
        events = self._replace(items)
        if self._synced.is_set():
            self.relists += 1
        log.debug(km.LOG_LISTED, self.name, len(items), resource_version, len(events))
        self.resource_version = resource_version
        self._emit(events)
        self._synced.set()
        return resource_version

    def _replace(self, items: list[dict[str, Any]]) -> list[ClusterEvent]:
        """Install a full list; the events that turn the old state into it (deletions
        first; a name reused by a new object is a deletion and an addition)."""
        resource = self.spec.resource
        state: dict[str, _Known] = {}
        changes: list[ClusterEvent] = []
        with self._lock:
            old_state = self._state
            for obj in items:
                self._complete(obj)
                key, known = self._known(obj)
                state[key] = known
                old = old_state.get(key)
                if old is None:
                    changes.append(ClusterEvent("ADDED", resource, obj))
                elif old.uid != known.uid:
                    changes.append(ClusterEvent("DELETED", resource, old.obj))
                    changes.append(ClusterEvent("ADDED", resource, obj))
                elif old.resource_version != known.resource_version:
                    if self._unchanged(old.obj, obj):
                        continue
                    changes.append(ClusterEvent("MODIFIED", resource, obj))
            deleted = [ClusterEvent("DELETED", resource, old.obj)
                       for key, old in old_state.items() if key not in state]
            self._state = state
        return deleted + changes

    def _watch(self, resource_version: str) -> tuple[str, bool, int]:
        """Watch from ``resource_version`` until the server ends the watch; returns the
        last resourceVersion seen, whether ``interrupt()`` ended it and how many events
        (bookmarks too) it delivered. Raises ``_Expired`` or ``ApiError``."""
        timeout = int(self._watch_timeout())
        query = {"watch": "true", "resourceVersion": resource_version,
                 "allowWatchBookmarks": "true", "timeoutSeconds": timeout}
        response = self.transport.open("GET", self.spec.path, query=query,
                                       timeout=(REQUEST_TIMEOUT[0], timeout + WATCH_READ_SLACK))
        self.connection.succeeded()
        self._response = response
        delivered = 0
        try:
            if self._stop.is_set() or self._interrupted:
                return resource_version, True, delivered
            for lines in response_lines(response):
                if self._interrupted or self._stop.is_set():
                    # a read may outlive the socket's shutdown: what came after is replayed
                    return resource_version, True, delivered
                events: list[ClusterEvent] = []
                try:
                    for line in lines:
                        resource_version = self._on_line(line, resource_version, events)
                finally:
                    if events:
                        self._emit(events)
                delivered += len(lines)
                self.resource_version = resource_version
        except _Expired:
            raise
        except Exception as e:
            if self._stop.is_set() or self._interrupted:
                return resource_version, True, delivered
            if isinstance(e, ApiError):
                raise
            raise ApiError(0, km.API_UNREACHABLE.format(reason=e)) from None
        finally:
            self._response = None
            interrupted, self._interrupted = self._interrupted, False
            end_stream(response)
        return resource_version, interrupted, delivered

    def _on_line(self, line: bytes, resource_version: str,
                 events: list[ClusterEvent]) -> str:
        try:
            event = orjson.loads(line)
            kind = event["type"]
            obj = event["object"]
        except (ValueError, KeyError, TypeError):
            log.warning(km.LOG_BAD_WATCH_LINE, self.name, line[:200])
            return resource_version
        if not isinstance(obj, dict):
            return resource_version
        if kind == "BOOKMARK":
            return str(_metadata(obj).get("resourceVersion") or resource_version)
        if kind == "ERROR":
            code = obj.get("code")
            if code == 410:
                raise _Expired()
            raise ApiError(int(code or 0), str(obj.get("message") or obj),
                           str(obj.get("reason") or ""))
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            return resource_version
        self._complete(obj)
        key, known = self._known(obj)
        resource = self.spec.resource
        with self._lock:
            old = self._state.get(key)
            if kind == "DELETED":
                self._state.pop(key, None)
                events.append(ClusterEvent("DELETED", resource, obj))
            else:
                if old is not None and old.uid != known.uid:
                    events.append(ClusterEvent("DELETED", resource, old.obj))
                    old = None
                self._state[key] = known
                if old is not None and self._unchanged(old.obj, obj):
                    return known.resource_version or resource_version
                change: EventKind = "ADDED" if old is None else "MODIFIED"
                events.append(ClusterEvent(change, resource, obj))
        return known.resource_version or resource_version

    def _unchanged(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        unchanged = self.spec.unchanged
        if unchanged is None or not unchanged(old, new):
            return False
        self.suppressed += 1
        return True

    def _complete(self, obj: dict[str, Any]) -> None:
        """List items carry no kind/apiVersion: add them, as a watch event has them."""
        obj.setdefault("kind", self.spec.resource)
        obj.setdefault("apiVersion", self.spec.api_version)

    def _known(self, obj: dict[str, Any]) -> tuple[str, _Known]:
        metadata = _metadata(obj)
        name = str(metadata.get("name") or "")
        key = f"{metadata.get('namespace') or DEFAULT_NAMESPACE}/{name}" \
            if self.spec.namespaced else name
        return key, _Known(str(metadata.get("resourceVersion") or ""),
                           str(metadata.get("uid") or ""), obj)


# ------------------------------------------------------------------------------ events


def micro_time(seconds: float) -> str:
    """``metav1.MicroTime`` text: RFC 3339 in UTC with microseconds."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def truncate_note(note: str) -> str:
    """kube-scheduler's truncateMessage: at most NOTE_LENGTH_LIMIT bytes, " ..." ending a
    cut note."""
    encoded = note.encode()
    if len(encoded) <= NOTE_LENGTH_LIMIT:
        return note
    keep = NOTE_LENGTH_LIMIT - len(km.NOTE_TRUNCATED_SUFFIX)
    return encoded[:keep].decode(errors="ignore") + km.NOTE_TRUNCATED_SUFFIX


@dataclass
class _Series:
    """One recorded Event and its isomorphic repeats (client-go's eventCache entry)."""

    body: dict[str, Any]
    last_seen: float
    count: int = 1
    written_count: int = 1


@dataclass(frozen=True)
class _EventWrite:
    series: _Series
    create: bool  # True: POST the event; False: PATCH its series


class EventRecorder:
    """Writes Events from a daemon thread so that the scheduling loop never waits for them.
    Isomorphic events (same type, action, reason, controller, regarding object at the same
    resourceVersion) within EVENT_SERIES_FINISH seconds become one Event with a ``series``
    count, as client-go's events broadcaster does: the first is created, the second patches
    the series (count 2), later counts are written when the series ends, every
    EVENT_SERIES_REFRESH seconds, and on close. Failures are logged, never raised."""

    def __init__(self, transport: Transport, clock: Clock, controller: str,
                 instance: str) -> None:
        self.transport = transport
        self.clock = clock
        self.controller = controller
        self.instance = instance
        # least recently seen first: the ended series are a prefix
        self._series: OrderedDict[tuple[str, ...], _Series] = OrderedDict()
        self._lock = threading.Lock()
        self._queue: queue.Queue[_EventWrite | None] = queue.Queue(EVENT_QUEUE_SIZE)
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self.written = 0
        self.failed = 0
        self.connection = ConnectionLog(km.CONNECTION_EVENTS, log)

    def start(self) -> None:
        self._thread = Thread(target=self._run, name="event-recorder", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 2.0) -> None:
        """Write what is queued (for at most ``timeout`` seconds), then stop."""
        if self._thread is None:
            return
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=timeout)
        self._thread.join(timeout)
        self._thread = None

    def record(self, pod: PodInfo, type: EventType, reason: str, action: str,
               note: str) -> None:
        now = self.clock.now()
        # client-go's isomorphic key: the regarding reference includes resourceVersion
        key = (type, action, reason, pod.namespace, pod.name, pod.uid,
               str(_metadata(pod.obj).get("resourceVersion") or ""))
        with self._lock:
            series = self._series.get(key)
            if series is not None and now - series.last_seen > EVENT_SERIES_FINISH:
                del self._series[key]
                series = None
            if series is None:
                body = self._event(pod, type, reason, action, note, now)
                series = self._series[key] = _Series(body, now)
                writes = [_EventWrite(series, create=True)]
            else:
                series.count += 1
                series.last_seen = now
                self._series.move_to_end(key)
                if series.count != 2:
                    return  # written when the series ends, by a refresh, or on close
                writes = [_EventWrite(series, create=False)]
            writes += self._expire(now)
        for write in writes:
            self._put(write)

    def _put(self, write: _EventWrite) -> None:
        try:
            self._queue.put_nowait(write)
        except queue.Full:
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                log.warning(km.LOG_EVENTS_DROPPED, self.dropped)

    def _event(self, pod: PodInfo, type: str, reason: str, action: str, note: str,
               now: float) -> dict[str, Any]:
        name = f"{pod.name}.{time.time_ns():x}"
        if len(name) > 253:
            name = f"{pod.uid or pod.name[:200]}.{time.time_ns():x}"
        regarding = {"apiVersion": "v1", "kind": "Pod", "namespace": pod.namespace,
                     "name": pod.name, "uid": pod.uid}
        resource_version = _metadata(pod.obj).get("resourceVersion")
        if resource_version:
            regarding["resourceVersion"] = str(resource_version)
        return {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": pod.namespace},
            "eventTime": micro_time(now),
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "regarding": regarding,
            "note": truncate_note(note),
            "type": type,
        }

    def _expire(self, now: float) -> list[_EventWrite]:
        """Forget the ended series, and the least recently seen beyond EVENT_CACHE_SIZE
        (client-go's LRU bound; their grown counts are returned, to be written): O(1)
        amortised per event. Under the lock."""
        evicted = []
        while self._series:
            key, series = next(iter(self._series.items()))
            if now - series.last_seen <= EVENT_SERIES_FINISH \
                    and len(self._series) <= EVENT_CACHE_SIZE:
                break
            del self._series[key]
            if series.count > series.written_count \
                    and now - series.last_seen <= EVENT_SERIES_FINISH:
                evicted.append(_EventWrite(series, create=False))
        return evicted

    def _run(self) -> None:
        now = time.monotonic()
        next_finish, next_refresh = now + EVENT_SERIES_FINISH, now + EVENT_SERIES_REFRESH
        while True:
            try:
                write = self._queue.get(
                    timeout=max(0.0, min(next_finish, next_refresh) - time.monotonic()))
            except queue.Empty:
                write = _FLUSH
            if write is None:  # close(): everything queued before it is written
                self._flush()
                return
            if write is not _FLUSH:
                self._write(write)
            now = time.monotonic()
            if now >= next_refresh:
                self._flush()
                next_refresh = now + EVENT_SERIES_REFRESH
            if now >= next_finish:
                self._flush(ended_only=True)
                next_finish = now + EVENT_SERIES_FINISH

    def _flush(self, ended_only: bool = False) -> None:
        """Write the series whose count grew since last written (client-go's
        refreshExistingEventSeries). ``ended_only``: only those not repeated for
        EVENT_SERIES_FINISH seconds, and forget every ended entry (its finishSeries)."""
        now = self.clock.now()
        with self._lock:
            grown = [_EventWrite(s, create=False) for s in self._series.values()
                     if s.count > s.written_count
                     and (not ended_only or now - s.last_seen > EVENT_SERIES_FINISH)]
            if ended_only:
                grown += self._expire(now)
        for write in grown:
            self._write(write)

    def _write(self, write: _EventWrite) -> None:
        series = write.series
        with self._lock:
            body = dict(series.body)
            count = series.count
            if count > 1:
                body["series"] = {"count": count, "lastObservedTime": micro_time(series.last_seen)}
        metadata = body["metadata"]
        path = f"/apis/events.k8s.io/v1/namespaces/{metadata['namespace']}/events"
        for attempt in range(EVENT_RETRIES):
            try:
                if write.create or count == 1:
                    self.transport.send("POST", path, body=body)
                else:
                    try:
                        self.transport.send(
                            "PATCH", f"{path}/{metadata['name']}",
                            body={"series": body["series"]}, content_type=STRATEGIC_MERGE_PATCH)
                    except ApiError as e:
                        if e.status != 404:
                            raise
                        self.transport.send("POST", path, body=body)  # it expired: anew
                series.written_count = max(series.written_count, count)
                self.written += 1
                self.connection.succeeded()
                return
            except ApiError as e:
                if e.status == 409 and write.create:
                    return  # the same name already exists: written before
                concerns_event = about_the_object(e)
                if not concerns_event:  # logged once per change, not per event
                    self.connection.failed(e)
                if not is_outage(e) or attempt == EVENT_RETRIES - 1:
                    self.failed += 1
                    regarding = body["regarding"]
                    log.log(logging.WARNING if concerns_event else logging.DEBUG,
                            km.LOG_EVENT_FAILED, body["type"], body["reason"],
                            f"{regarding['namespace']}/{regarding['name']}", e)
                    return
                time.sleep(0.2 * (attempt + 1))


_FLUSH = cast(_EventWrite, object())  # a queue marker: time to flush grown series


# ------------------------------------------------------------------------------ backend


@dataclass
class BackendStats:
    """Counters for tests and metrics."""

    binds: int = 0
    bind_errors: int = 0
    condition_patches: int = 0
    condition_skips: int = 0
    started_at: float = 0.0
    synced_at: float | None = None


class KubeBackend:
    """The ``Backend`` on a Kubernetes API server (see the module docstring). ``namespace``
    restricts Pods, PodGroups and workloads (Services, ReplicationControllers, ReplicaSets,
    StatefulSets) to one namespace; Nodes and Namespaces are always cluster-wide; at most
    ``parallel_binds`` binds are in flight. ``start()`` starts the informers; ``close()``
    stops them, abandons binds not yet sent and flushes Events."""

    def __init__(self, client: ApiClient | Transport, clock: Clock | None = None,
                 qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST,
                 namespace: str | None = None, *,
                 parallel_binds: int = DEFAULT_PARALLEL_BINDS,
                 reporting_controller: str = km.REPORTING_CONTROLLER,
                 reporting_instance: str | None = None) -> None:
        self._clock: Clock = clock if clock is not None else RealClock()
        self.namespace = namespace
        self._stop = threading.Event()
        self._owned: Transport | None = None  # connections this backend opened itself
        if not isinstance(client, Transport):
            client = self._owned = Transport(client, TokenBucket(qps, burst))
        self.api = client.api
        # the process's limiter and connections; requests fail once this backend is closed
        self.transport = client.sharing(stop=self._stop)
        instance = reporting_instance or km.REPORTING_INSTANCE.format(
            controller=reporting_controller, hostname=socket.gethostname())
        # Events have a limiter of their own, as kube-scheduler's event client
        self.events = EventRecorder(client.sharing(limiter=TokenBucket(qps, burst)),
                                    self._clock, reporting_controller, instance)
        self.stats = BackendStats()
        self._stats_lock = threading.Lock()  # binds run on the pool's threads
        self.writes = ConnectionLog(km.CONNECTION_POD_WRITES, log)  # binds, status patches
        self._pending: list[ClusterEvent] = []
        self._cond = threading.Condition()
        self._woken = False
        self.binder = StartedBinds(self._start_bind, parallel_binds, notify=self.wake)
        self.volume_binder = BindPool(lambda request: run_bind(self, request), VOLUME_BINDS,
                                      notify=self.wake, queues=True)
        scope = f"/namespaces/{namespace}" if namespace else ""
        self.nodes = Informer(self.transport, WatchedResource(
            "Node", "v1", "/api/v1/nodes", namespaced=False, unchanged=node_heartbeat_only),
            self._emit)
        self.pods = Informer(self.transport, WatchedResource(
            "Pod", "v1", f"/api/v1{scope}/pods", namespaced=True), self._emit)
        # what affinity terms' namespaceSelector and kube's DefaultSelector read
        self.selecting = [Informer(self.transport, spec, self._emit) for spec in (
            WatchedResource("Namespace", "v1", "/api/v1/namespaces", namespaced=False,
                            unchanged=namespace_labels_unchanged),
            WatchedResource("Service", "v1", f"/api/v1{scope}/services", namespaced=True,
                            unchanged=selector_unchanged),
            WatchedResource("ReplicationController", "v1",
                            f"/api/v1{scope}/replicationcontrollers", namespaced=True,
                            unchanged=selector_unchanged),
            WatchedResource("ReplicaSet", "apps/v1", f"/apis/apps/v1{scope}/replicasets",
                            namespaced=True, unchanged=selector_unchanged),
            WatchedResource("StatefulSet", "apps/v1", f"/apis/apps/v1{scope}/statefulsets",
                            namespaced=True, unchanged=selector_unchanged))]
        # preemption weighs the PodDisruptionBudgets of its victims
        self.budgets = Informer(self.transport, WatchedResource(
            POD_DISRUPTION_BUDGET, BUDGET_API_VERSION,
            f"/apis/{BUDGET_API_VERSION}{scope}/poddisruptionbudgets", namespaced=True,
            unchanged=budget_unchanged), self._emit)
        # the volume plugins read claims, volumes, classes, CSINodes and CSIDrivers
        storage_api = f"/apis/{STORAGE_API_VERSIONS[STORAGE_CLASS]}"
        self.storage = [Informer(self.transport, spec, self._emit) for spec in (
            WatchedResource(PERSISTENT_VOLUME_CLAIM, "v1",
                            f"/api/v1{scope}/persistentvolumeclaims", namespaced=True,
                            unchanged=claim_unchanged),
            WatchedResource(PERSISTENT_VOLUME, "v1", "/api/v1/persistentvolumes",
                            namespaced=False, unchanged=volume_unchanged),
            WatchedResource(STORAGE_CLASS, STORAGE_API_VERSIONS[STORAGE_CLASS],
                            f"{storage_api}/storageclasses", namespaced=False,
                            unchanged=storage_class_unchanged),
            WatchedResource(CSI_NODE, STORAGE_API_VERSIONS[CSI_NODE], f"{storage_api}/csinodes",
                            namespaced=False, unchanged=spec_unchanged),
            WatchedResource(CSI_DRIVER, STORAGE_API_VERSIONS[CSI_DRIVER],
                            f"{storage_api}/csidrivers", namespaced=False,
                            unchanged=spec_unchanged))]
        self.pod_group_informer = Informer(self.transport, WatchedResource(
            "PodGroup", "scheduling.x-k8s.io/v1alpha1", f"{PODGROUP_API}{scope}/podgroups",
            namespaced=True), self._emit)
        self._discovery: threading.Thread | None = None
        self._started = False

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start the informers and the event writer (idempotent)."""
        if self._started:
            return
        self._started = True
        self.stats.started_at = time.monotonic()
        self.events.start()
        self.nodes.start()
        self.pods.start()
        for informer in self.selecting:
            informer.start()
        self.budgets.start()
        for informer in self.storage:
            informer.start()
        self._discovery = Thread(target=self._discover_pod_groups,
                                           name="podgroup-discovery", daemon=True)
        self._discovery.start()

    def close(self, timeout: float = 2.0) -> None:
        """Stop watching and binding, and write the Events still queued (at most
        ``timeout`` s each). Binds not sent yet are abandoned (their outcome says so);
        call ``wait_for_binds`` first to let them finish."""
        for informer in self._informers():
            informer.stop(timeout)
        self._stop.set()  # requests not sent yet (binds waiting for a token) now fail
        self.binder.close(timeout)
        self.volume_binder.close(timeout)
        self.events.close(timeout)
        if self._owned is not None:
            self._owned.close()
        self.wake()

    def _informers(self) -> list[Informer]:
        return [self.nodes, self.pods, *self.selecting, self.budgets, *self.storage,
                self.pod_group_informer]

    def __enter__(self) -> KubeBackend:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _discover_pod_groups(self) -> None:
        """Watch PodGroups only if the API serves them (the CRD is installed)."""
        backoff = Backoff()
        connection = ConnectionLog(km.CONNECTION_DISCOVERY, log)
        while not self._stop.is_set():
            try:
                found = self.transport.call("GET", PODGROUP_API) or {}
            except ApiError as e:
                if self._stop.is_set():
                    return
                if e.status == 404:
                    log.info(km.LOG_PODGROUPS_ABSENT)
                    self.pod_group_informer.mark_synced()
                    return
                connection.failed(e)
                self._stop.wait(backoff.next())
                continue
            connection.succeeded()
            if any(r.get("name") == "podgroups" for r in found.get("resources") or []):
                log.info(km.LOG_PODGROUPS_PRESENT)
                self.pod_group_informer.start()
            else:
                log.info(km.LOG_PODGROUPS_ABSENT)
                self.pod_group_informer.mark_synced()
            return

    def synced(self) -> bool:
        """Every initial list has been delivered (as events not necessarily drained yet)."""
        done = all(i.synced() for i in self._informers())
        if done and self.stats.synced_at is None:
            self.stats.synced_at = time.monotonic()
        return done

    # -- the event queue ---------------------------------------------------------------------

    def _emit(self, events: list[ClusterEvent]) -> None:
        if not events:
            return
        with self._cond:
            self._pending.extend(events)
            self._cond.notify_all()

    def wait_for_events(self, timeout: float | None) -> bool:
        """Block until events are pending, a bind ends, ``wake()`` is called or ``timeout``
        seconds pass; returns whether events are pending."""
        with self._cond:
            if (not self._pending and not self._woken and not self.binder.has_outcomes()
                    and not self.volume_binder.has_outcomes()):
                self._cond.wait(timeout)
            self._woken = False
            return bool(self._pending)

    def wake(self) -> None:
        """Make a ``wait_for_events`` in progress (or the next one) return at once."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    # -- Backend --------------------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        return self._clock

    def drain_events(self) -> list[ClusterEvent]:
        with self._cond:
            events, self._pending = self._pending, []
            return events

    def pod_groups(self) -> dict[str, PodGroupSpec]:
        groups: dict[str, PodGroupSpec] = {}
        for obj in self.pod_group_informer.items():
            try:
                spec = pod_group_spec(obj)
            except ObjectError:
                continue
            groups[spec.key] = spec
        return groups

    def start_bind(self, request: BindRequest) -> None:
        (self.binder if request.volumes is None else self.volume_binder).submit(request)

    def drain_bind_outcomes(self) -> list[BindOutcome]:
        return self.binder.drain() + self.volume_binder.drain()

    def wait_for_binds(self, timeout: float | None) -> bool:
        """Wait until no bind is in flight (at most ``timeout`` s); returns whether none
        is."""
        deadline = None if timeout is None else time.monotonic() + timeout
        return self.binder.wait_idle(timeout) and self.volume_binder.wait_idle(
            None if deadline is None else max(0.0, deadline - time.monotonic()))

    def bind(self, pod: PodInfo, node_name: str) -> None:
        path, body = self._binding(pod, node_name)
        started = self.writes.clock()
        try:
            self.transport.send("POST", path, body=body)
        except ApiError as e:
            raise self._bind_refused(pod, e) from None
        self._bound(started)

    def _start_bind(self, request: BindRequest, finish: Callable[[BindOutcome], None]
                    ) -> None:
        """``run_bind`` without a thread (the binds of ``StartedBinds``, no volumes):
        the metadata patch, when preBind asked for one, then the bind, each sent with the
        transport's ``send_later`` and the next step taken in its answer."""
        pod = request.pod
        started = time.perf_counter()

        def end(error: BackendError | None) -> None:
            finish(BindOutcome(request, error, time.perf_counter() - started))

        def bind() -> None:
            nonlocal started
            started = time.perf_counter()
            try:
                path, body = self._binding(pod, request.node_name)
            except BindError as e:
                end(e)
                return
            sent = self.writes.clock()

            def answered(error: ApiError | None) -> None:
                if error is not None:
                    end(self._bind_refused(pod, error))
                else:
                    self._bound(sent)
                    end(None)

            self.transport.send_later("POST", path, answered, body=body)

        if not request.labels and not request.annotations:
            bind()
            return
        try:
            path, body = self._metadata_patch(pod, request.labels, request.annotations)
        except BackendError as e:
            end(e)
            return

        def patched(error: ApiError | None) -> None:
            if error is not None:
                end(self._write_refused(pod, error))
            else:
                bind()

        self.transport.send_later("PATCH", path, patched, body=body, content_type=MERGE_PATCH)

    def _binding(self, pod: PodInfo, node_name: str) -> tuple[str, dict[str, Any]]:
        """The path and body of ``pod``'s Binding to ``node_name``; ``BindError`` when the
        informers know the bind cannot succeed (the pod or the node is gone)."""
        self._live_pod(pod, BindError)
        if self.nodes.synced() and self.nodes.get(node_name) is None:
            raise BindError(messages.NODE_NOT_FOUND.format(name=node_name))
        return f"{self._pod_path(pod)}/binding", {
            "apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}

    def _bind_refused(self, pod: PodInfo, e: ApiError) -> BindError:
        with self._stats_lock:
            self.stats.bind_errors += 1
        if not about_the_object(e):  # the pod's FailedScheduling says why; the log once
            self.writes.failed(e)
        if e.status == 404:
            return BindError(messages.POD_NOT_FOUND.format(name=pod.name,
                                                           namespace=pod.namespace))
        return BindError(e.message)

    def _bound(self, started: float) -> None:
        self.writes.succeeded(started)
        with self._stats_lock:
            self.stats.binds += 1

    def bind_volumes(self, pod: PodInfo, volumes: VolumeBindRequest) -> None:
        """kube's BindPodVolumes: update each volume (claimRef) and each claim to provision
        (selected node) on the live objects, then read the claims every second until the
        PersistentVolume controller has bound them all, or the time-out passes."""
        self._live_pod(pod, BindError)
        static: list[tuple[str, str]] = []  # (claim path, volume path)
        provisions: list[tuple[str, str]] = []  # (claim path, node)
        try:
            for assumption in volumes.assumptions:
                base = f"/api/v1/namespaces/{assumption.namespace}/persistentvolumeclaims"
                for claim_name, volume_name in assumption.static:
                    claim_path = f"{base}/{claim_name}"
                    volume_path = f"/api/v1/persistentvolumes/{volume_name}"
                    claim = self.transport.call("GET", claim_path) or {}
                    changed = bind_volume_to_claim(
                        self.transport.call("GET", volume_path) or {}, claim)
                    if changed is not None:
                        self.transport.send("PUT", volume_path, body=changed)
                    static.append((claim_path, volume_path))
                for claim_name in assumption.provisions:
                    claim_path = f"{base}/{claim_name}"
                    changed = select_node(self.transport.call("GET", claim_path) or {},
                                          assumption.node)
                    if changed is not None:
                        self.transport.send("PUT", claim_path, body=changed)
                    provisions.append((claim_path, assumption.node))
        except ApiError as e:
            raise BindError(e.message) from None

        def bound() -> bool:
            try:
                done = True
                for claim_path, volume_path in static:
                    done = check_static(self.transport.call("GET", volume_path) or {},
                                        self.transport.call("GET", claim_path) or {}) and done
                for claim_path, node in provisions:
                    done = check_provision(self.transport.call("GET", claim_path) or {},
                                           node) and done
                return done
            except ApiError as e:
                if e.status == 404:
                    raise BindError(e.message) from None
                return False  # kube retries reads on the next poll

        def pause(seconds: float) -> None:
            if self._stop.wait(seconds):  # closed: the bind is abandoned
                raise BindError(messages.BIND_ABANDONED.format(key=pod.key, node=pod.node_name))

        wait_until_bound(bound, volumes.timeout, time.monotonic, pause)

    def evict(self, pod: PodInfo, message: str) -> None:
        """kube-scheduler's preemption: a DisruptionTarget condition (unless the pod has
        it already), then a delete — not the Eviction API: a victim is deleted whatever
        its PodDisruptionBudgets say (preemption weighed them when choosing it)."""
        current = self._live_pod(pod, BackendError)
        condition = {"type": DISRUPTION_TARGET, "status": "True",
                     "reason": PREEMPTION_BY_SCHEDULER, "message": message}
        present = next((c for c in (current.get("status") or {}).get("conditions") or ()
                        if isinstance(c, dict) and c.get("type") == DISRUPTION_TARGET), None)
        try:
            if present is None or any(present.get(k) != v for k, v in condition.items()):
                condition["lastTransitionTime"] = format_timestamp(self._clock.now())
                self.transport.send(
                    "PATCH", f"{self._pod_path(pod)}/status",
                    content_type=STRATEGIC_MERGE_PATCH,
                    body={"metadata": {"uid": pod.uid} if pod.uid else {},
                          "status": {"conditions": [condition]}})
            self.transport.send("DELETE", self._pod_path(pod), body={
                "apiVersion": "v1", "kind": "DeleteOptions",
                "preconditions": {"uid": pod.uid} if pod.uid else None})
        except ApiError as e:
            self._raise_if_gone(pod, e)
            raise BackendError(e.message) from None

    def patch_pod_metadata(self, pod: PodInfo, labels: Mapping[str, str | None],
                           annotations: Mapping[str, str | None]) -> None:
        if not labels and not annotations:
            return
        path, body = self._metadata_patch(pod, labels, annotations)
        try:
            self.transport.send("PATCH", path, body=body, content_type=MERGE_PATCH)
        except ApiError as e:
            raise self._write_refused(pod, e) from None

    def _metadata_patch(self, pod: PodInfo, labels: Mapping[str, str | None],
                        annotations: Mapping[str, str | None]) -> tuple[str, dict[str, Any]]:
        """The path and merge patch of ``patch_pod_metadata``; ``BackendError`` when the
        pod is gone."""
        self._live_pod(pod, BackendError)
        metadata: dict[str, Any] = {"uid": pod.uid} if pod.uid else {}
        if labels:
            metadata["labels"] = dict(labels)
        if annotations:
            metadata["annotations"] = dict(annotations)
        return self._pod_path(pod), {"metadata": metadata}

    def set_nominated_node(self, pod: PodInfo, node_name: str | None) -> None:
        current = self._live_pod(pod, BackendError)
        status = current.get("status") or {}
        if (status.get("nominatedNodeName") or None) == (node_name or None):
            return
        body = {"metadata": {"uid": pod.uid} if pod.uid else {},
                "status": {"nominatedNodeName": node_name or None}}
        self._patch_status(pod, body, MERGE_PATCH, km.LOG_NOMINATION_FAILED)

    def record_event(self, pod: PodInfo, type: EventType, reason: str, message: str,
                     action: str | None = None) -> None:
        try:
            action = action or km.EVENT_ACTIONS.get(reason, km.DEFAULT_EVENT_ACTION)
            self.events.record(pod, type, reason, action, message)
        except Exception as e:  # an event is never worth failing a cycle for
            log.warning(km.LOG_EVENT_FAILED, type, reason, pod.key, e)

    def set_pod_condition(self, pod: PodInfo, status: ConditionStatus, reason: str,
                          message: str) -> None:
        current = self._live_pod(pod, BackendError)
        node = (current.get("spec") or {}).get("nodeName")
        if status != "True" and node:  # bound, though the binding's answer was lost
            log.info(km.LOG_CONDITION_ON_BOUND, pod.key, node)
            return
        conditions = (current.get("status") or {}).get("conditions") or []
        old = next((c for c in conditions
                    if isinstance(c, dict) and c.get("type") == POD_SCHEDULED), None)
        if old is not None and (old.get("status"), old.get("reason") or "",
                                old.get("message") or "") == (status, reason, message):
            self.stats.condition_skips += 1
            return
        transition = old.get("lastTransitionTime") if old is not None and \
            old.get("status") == status else None
        condition: dict[str, Any] = {
            "type": POD_SCHEDULED, "status": status, "reason": reason or None,
            "message": message or None, "lastProbeTime": None,
            "lastTransitionTime": transition or format_timestamp(self._clock.now())}
        generation = _metadata(current).get("generation")
        if isinstance(generation, int):
            condition["observedGeneration"] = generation
        metadata: dict[str, Any] = {"uid": pod.uid} if pod.uid else {}
        resource_version = _metadata(current).get("resourceVersion")
        if status != "True" and resource_version:
            # on the pod as the informer saw it, unbound: never on one bound meanwhile
            metadata["resourceVersion"] = str(resource_version)
        body = {"metadata": metadata, "status": {"conditions": [condition]}}
        self.stats.condition_patches += 1
        self._patch_status(pod, body, STRATEGIC_MERGE_PATCH, km.LOG_CONDITION_FAILED)

    # -- helpers ---------------------------------------------------------------------------

    def _pod_path(self, pod: PodInfo) -> str:
        return f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"

    def _live_pod(self, pod: PodInfo, error: type[BackendError]) -> dict[str, Any]:
        """The informer's latest object of ``pod``; raises ``error`` when the pod is gone or
        was recreated (the informer saw it, so asking the server would say the same)."""
        current = self.pods.get(pod.key)
        if current is None:
            raise error(messages.POD_NOT_FOUND.format(name=pod.name, namespace=pod.namespace))
        uid = str(_metadata(current).get("uid") or "")
        if pod.uid and uid and uid != pod.uid:
            raise error(messages.POD_REPLACED.format(key=pod.key, expected=pod.uid, actual=uid))
        return current

    def _raise_if_gone(self, pod: PodInfo, e: ApiError) -> None:
        if e.status == 404 or e.uid_mismatch:
            raise self._write_refused(pod, e) from None

    def _write_refused(self, pod: PodInfo, e: ApiError) -> BackendError:
        """The error of a refused write to ``pod``: says so when the pod is gone or was
        replaced, else the server's message."""
        if e.status == 404:
            return BackendError(messages.POD_NOT_FOUND.format(name=pod.name,
                                                              namespace=pod.namespace))
        if e.uid_mismatch:
            return BackendError(messages.POD_REPLACED.format(key=pod.key, expected=pod.uid,
                                                             actual="?"))
        return BackendError(e.message)

    def _patch_status(self, pod: PodInfo, body: dict[str, Any], content_type: str,
                      failure: str) -> None:
        """Patch ``pods/status`` with kube's retries; raises only when the pod is gone. A
        ``metadata.resourceVersion`` in ``body`` is a precondition: on a conflict the patch
        is retried on the live pod unless that pod is bound."""
        for attempt, delay in enumerate((*STATUS_RETRY_DELAYS, None)):
            started = self.writes.clock()
            try:
                self.transport.send("PATCH", f"{self._pod_path(pod)}/status", body=body,
                                    content_type=content_type)
                self.writes.succeeded(started)
                return
            except ApiError as e:
                self._raise_if_gone(pod, e)
                if e.status == 409 and "resourceVersion" in body["metadata"]:
                    if not self._refresh_if_unbound(pod, body):
                        return
                    if delay is not None:
                        continue
                concerns_pod = about_the_object(e)
                if not concerns_pod:  # logged once per change, not per pod
                    self.writes.failed(e)
                if delay is None or e.status not in (0, 500, 503):
                    log.log(logging.WARNING if concerns_pod else logging.DEBUG, failure,
                            pod.key, e)
                    return
                time.sleep(delay * (1 + 0.1 * random.random()) if attempt else delay)

    def _refresh_if_unbound(self, pod: PodInfo, body: dict[str, Any]) -> bool:
        """After a conflict on ``body``'s resourceVersion: whether the live pod is still
        unbound (``body`` then carries its resourceVersion). False when it is bound or
        cannot be read; raises ``BackendError`` when it is gone or was recreated."""
        try:
            live = self.transport.call("GET", self._pod_path(pod)) or {}
        except ApiError as e:
            self._raise_if_gone(pod, e)
            log.debug(km.LOG_CONDITION_FAILED, pod.key, e)
            return False
        uid = str(_metadata(live).get("uid") or "")
        if pod.uid and uid and uid != pod.uid:
            raise BackendError(messages.POD_REPLACED.format(key=pod.key, expected=pod.uid,
                                                            actual=uid))
        node = (live.get("spec") or {}).get("nodeName")
        if node:
            log.info(km.LOG_CONDITION_ON_BOUND, pod.key, node)
            return False
        body["metadata"]["resourceVersion"] = str(_metadata(live).get("resourceVersion") or "")
        return True


if TYPE_CHECKING:  # KubeBackend implements the contract
    from ..framework.backend import Backend

    _CONFORMS: type[Backend] = KubeBackend
