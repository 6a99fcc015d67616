"""``Transport``: the one Kubernetes API client of a policysched process — raw JSON over
persistent HTTP connections, for everything it sends and watches (informers, binds, status
patches, Events, the policy ConfigMap watch, the leader Lease).

One place for what every request shares:

* TLS, proxy and server settings: those of a ``kubernetes`` client configuration (the
  kubeconfig or in-cluster loaders fill it);
* auth: the configuration's credential headers, computed once and recomputed only when the
  credential can change (the configuration has a refresh hook — exec plugins and OIDC
  tokens with an expiry, in-cluster token files — at most every ``CREDENTIAL_RECHECK``
  seconds, and after a 401);
* the QPS/burst limiter (client-go's token bucket) and the reconnect backoff policy.

Connections: requests (``call``, ``send``) are exchanges carried out by libcurl
(``exchange.py``) on keep-alive connections, at most one per request in flight; writes
sent without waiting (``send_later``: the binds) are multiplexed by one thread, on HTTP/2
as streams of one connection; long watches (``open``) each get a urllib3 connection of
their own, streamed line by line and closed when the watch ends.
"""

from __future__ import annotations

import contextlib
import copy
import random
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import orjson
import urllib3

from . import kube_messages as km
from .exchange import ExchangeError, Exchanges, Multiplexer

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

JSON = "application/json"
REQUEST_TIMEOUT = (5.0, 30.0)  # (connect, read) seconds of an ordinary request
CREDENTIAL_RECHECK = 1.0  # seconds between asks to a refreshable credential
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 30.0
BACKOFF_RESET_AFTER = 60.0  # a watch that lived this long resets the backoff
SHORT_WATCH = 1.0  # a watch the server ended sooner, without an event, is followed by a backoff
STREAM_CONNECTIONS = 32  # closed watch connections kept for reuse (never more than watches)


class ApiError(Exception):
    """A failed API request: ``status`` is the HTTP status (0: no response at all),
    ``reason`` the Status reason (NotFound, Conflict…), ``causes`` its details."""

    def __init__(self, status: int, message: str, reason: str = "",
                 causes: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason
        self.causes = causes or []

    @property
    def uid_mismatch(self) -> bool:
        """A 409/422 caused by our ``metadata.uid`` precondition: the pod was recreated."""
        if self.status == 409 and "UID in precondition" in self.message:
            return True
        return self.status == 422 and any(c.get("field") == "metadata.uid" for c in self.causes)


def status_error(status: int, raw: bytes) -> ApiError:
    """The ``ApiError`` of an error response (a ``Status`` object, or anything else)."""
    try:
        body = orjson.loads(raw) if raw else {}
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = str(body.get("message") or raw[:200].decode(errors="replace").strip()
                  or km.API_STATUS.format(status=status))
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    causes = [c for c in (details or {}).get("causes") or [] if isinstance(c, dict)]
    return ApiError(status, message, str(body.get("reason") or ""), causes)


# ------------------------------------------------------------------------------ policies


class TokenBucket:
    """client-go's token-bucket rate limiter: ``qps`` tokens per second, at most ``burst``
    saved; starts full. ``acquire()`` blocks until a token is free. qps <= 0: unlimited.
    Thread-safe: each caller reserves its own future token under a lock, then sleeps
    without it (client-go's ``Wait``)."""

    def __init__(self, qps: float, burst: int,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], object] = time.sleep) -> None:
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token; returns how long to wait before using it."""
        if self.qps <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def acquire(self) -> None:
        delay = self.reserve()
        if delay > 0:
            self._sleep(delay)


class Backoff:
    """Capped exponential backoff with jitter (client-go's reflector: 0.5 s .. 30 s), the
    reconnect policy of every watch and retrying client."""

    def __init__(self, initial: float = BACKOFF_INITIAL, cap: float = BACKOFF_MAX) -> None:
        self.initial = initial
        self.cap = cap
        self._next = initial

    def next(self) -> float:
        delay = self._next * (1 + random.random() * 0.5)
        self._next = min(self._next * 2, self.cap)
        return min(delay, self.cap)

    def reset(self) -> None:
        self._next = self.initial

    def after_watch(self, lived: float, delivered: bool) -> float:
        """The wait before watching again after a watch that the server ended, having
        lived ``lived`` seconds: a long one resets the backoff; a short one that delivered
        nothing backs off (client-go's "very short watch"), so a server or proxy that ends
        every watch at once is never polled in a tight loop."""
        if lived >= BACKOFF_RESET_AFTER:
            self.reset()
        elif lived < SHORT_WATCH and not delivered:
            return self.next()
        return 0.0


# ------------------------------------------------------------------------------ credentials


class Credentials:
    """The headers every request carries (the client's default headers, ``Accept`` and the
    credential's ``authorization``), by ``Content-Type``: built once, rebuilt when the
    credential may have changed. Thread-safe; the dicts returned are shared, never to be
    changed."""

    def __init__(self, api: ApiClient, clock: Callable[[], float] = time.monotonic) -> None:
        self.configuration = api.configuration
        self._defaults = {str(k): str(v) for k, v in (api.default_headers or {}).items()}
        self._clock = clock
        self._lock = threading.Lock()
        self._by_type: dict[str | None, dict[str, str]] = {}
        self._auth: dict[str, str] = {}
        self._stale = True  # read the credential before the next request
        self._next_check = 0.0
        self.reads = 0  # how many times the credential was read

    @property
    def refreshable(self) -> bool:
        """Whether the credential can change while the process runs."""
        return getattr(self.configuration, "refresh_api_key_hook", None) is not None

    def invalidate(self) -> None:
        """Read the credential again before the next request (the server refused it)."""
        self._stale = True

    def headers(self, content_type: str | None) -> dict[str, str]:
        if self._stale or (self.refreshable and self._clock() >= self._next_check):
            self._reload()
        found = self._by_type.get(content_type)
        if found is None:
            with self._lock:
                found = self._by_type[content_type] = self._build(content_type)
        return found

    def _reload(self) -> None:
        auth: dict[str, str] = {}
        for setting in (self.configuration.auth_settings() or {}).values():
            if setting.get("in") == "header" and setting.get("value"):
                auth[str(setting["key"])] = str(setting["value"])
        with self._lock:
            self.reads += 1
            self._stale = False
            self._next_check = self._clock() + CREDENTIAL_RECHECK
            if auth != self._auth or not self._by_type:
                self._auth = auth
                self._by_type = {}

    def _build(self, content_type: str | None) -> dict[str, str]:
        headers = dict(self._defaults)
        headers["Accept"] = JSON
        if content_type:
            headers["Content-Type"] = content_type
        headers.update(self._auth)
        return headers


# ------------------------------------------------------------------------------ transport


class _Connections:
    """A configuration's connections: libcurl handles for requests (``Exchanges``), and a
    urllib3 pool manager with one connection per watch."""

    def __init__(self, api: ApiClient) -> None:
        from kubernetes.client.rest import RESTClientObject

        configuration = copy.copy(api.configuration)  # the same TLS, proxy and sockets
        configuration.connection_pool_maxsize = STREAM_CONNECTIONS
        self.streams = RESTClientObject(configuration).pool_manager
        self.host = host = str(configuration.host).rstrip("/")
        self.streams_pool = self.streams.connection_from_url(host)
        # a plain-HTTP proxy needs the absolute URL; otherwise the target is a path
        url = urllib.parse.urlsplit(host)
        absolute = isinstance(self.streams, urllib3.ProxyManager) and url.scheme == "http"
        self.prefix = host if absolute else url.path
        self.exchanges = Exchanges(configuration)
        self.multiplexer = Multiplexer(configuration)

    def clear(self) -> None:
        self.streams.clear()
        self.exchanges.close()
        self.multiplexer.close()


class Transport:
    """Raw-JSON HTTP with an ``ApiClient``'s configuration (host, TLS, proxy, auth). No
    model objects: bodies are dicts in, dicts out. ``sharing`` gives a view with its own
    limiter or ``stop`` on the same connections and credentials. Once ``stop`` is set,
    requests fail before they are sent, and waits for a token end."""

    def __init__(self, api: ApiClient, limiter: TokenBucket,
                 stop: threading.Event | None = None, *,
                 _shared: tuple[_Connections, Credentials] | None = None) -> None:
        self.api = api
        self.limiter = limiter
        self.stop = stop
        self._connections, self.credentials = _shared or (_Connections(api),
                                                          Credentials(api))
        self.host = self._connections.host
        self._timeouts: dict[tuple[float, float], urllib3.Timeout] = {}

    def sharing(self, *, limiter: TokenBucket | None = None,
                stop: threading.Event | None = None) -> Transport:
        """This client's connections and credentials, with another limiter or stop."""
        return Transport(self.api, limiter or self.limiter, stop or self.stop,
                         _shared=(self._connections, self.credentials))

    def close(self) -> None:
        """Close every idle connection."""
        self._connections.clear()

    def _timeout(self, timeout: tuple[float, float]) -> urllib3.Timeout:
        found = self._timeouts.get(timeout)
        if found is None:
            found = self._timeouts[timeout] = urllib3.Timeout(connect=timeout[0],
                                                              read=timeout[1])
        return found

    def open(self, method: str, path: str, *, query: Mapping[str, Any] | None = None,
             timeout: tuple[float, float] = REQUEST_TIMEOUT) -> Any:
        """Start a watch (``query`` has ``watch=true``) on a connection of its own and
        return the urllib3 response, unread (to be streamed). Raises ``ApiError`` for an
        error status or no response."""
        target, _, headers = self._prepare(path, query, None, None)
        try:  # no urllib3 retries: each caller retries (and logs) in its own way
            response = self._connections.streams_pool.urlopen(
                method, self._connections.prefix + target, headers=headers, preload_content=False,
                timeout=self._timeout(timeout), retries=False, redirect=False,
                assert_same_host=False)
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise ApiError(0, km.API_UNREACHABLE.format(reason=e)) from None
        if response.status >= 300:
            try:
                raw = response.data
            except (urllib3.exceptions.HTTPError, OSError):
                raw = b""
            finally:
                response.release_conn()
            raise self._refused(response.status, raw)
        return response

    def call(self, method: str, path: str, *, query: Mapping[str, Any] | None = None,
             body: Any = None, content_type: str | None = None,
             timeout: tuple[float, float] = REQUEST_TIMEOUT) -> Any:
        """Send a request and return its decoded JSON body (None when empty)."""
        raw = self._exchange(method, path, query, body, content_type, timeout)
        return orjson.loads(raw) if raw else None

    def send(self, method: str, path: str, *, body: Any = None,
             content_type: str | None = None,
             timeout: tuple[float, float] = REQUEST_TIMEOUT) -> None:
        """Send a write whose answer is not needed (the body is read, not decoded)."""
        self._exchange(method, path, None, body, content_type, timeout)

    def send_later(self, method: str, path: str, done: Callable[[ApiError | None], None], *,
                   body: Any = None, content_type: str | None = None,
                   timeout: tuple[float, float] = REQUEST_TIMEOUT) -> None:
        """``send`` without waiting, neither for a token nor for the answer: ``done`` is
        called with None (sent and accepted) or the ``ApiError``, on the multiplexer's
        thread (or on this one when stopped)."""
        if self.stop is not None and self.stop.is_set():
            done(ApiError(0, km.CLIENT_STOPPED))
            return
        at = time.monotonic() + self.limiter.reserve()
        target, data, headers = self._request(path, None, body, content_type)
        stop = self.stop

        def answer(status: int, raw: bytes, error: ExchangeError | None) -> None:
            if error is not None:
                stopped = stop is not None and stop.is_set()
                done(ApiError(0, km.CLIENT_STOPPED if stopped
                              else km.API_UNREACHABLE.format(reason=error)))
            else:
                done(self._refused(status, raw) if status >= 300 else None)

        self._connections.multiplexer.submit(
            method, target, data, headers, timeout, answer, at=at,
            cancelled=None if stop is None else stop.is_set)

    def _exchange(self, method: str, path: str, query: Mapping[str, Any] | None, body: Any,
                  content_type: str | None, timeout: tuple[float, float]) -> bytes:
        target, data, headers = self._prepare(path, query, body, content_type)
        try:
            status, raw = self._connections.exchanges.exchange(method, target, data, headers,
                                                               timeout)
        except ExchangeError as e:
            raise ApiError(0, km.API_UNREACHABLE.format(reason=e)) from None
        if status >= 300:
            raise self._refused(status, raw)
        return raw

    def _prepare(self, path: str, query: Mapping[str, Any] | None, body: Any,
                 content_type: str | None) -> tuple[str, bytes | None, Mapping[str, str]]:
        """Wait for a token (``ApiError`` once stopped); the target (path and query),
        the encoded body and the headers of a request."""
        delay = self.limiter.reserve()
        if delay > 0:
            if self.stop is not None:
                self.stop.wait(delay)
            else:
                time.sleep(delay)
        if self.stop is not None and self.stop.is_set():
            raise ApiError(0, km.CLIENT_STOPPED)
        return self._request(path, query, body, content_type)

    def _request(self, path: str, query: Mapping[str, Any] | None, body: Any,
                 content_type: str | None) -> tuple[str, bytes | None, Mapping[str, str]]:
        """The target (path and query), the encoded body and the headers of a request."""
        data = None if body is None else orjson.dumps(body)
        if data is not None and content_type is None:
            content_type = JSON
        target = path
        if query:
            target += "?" + urllib.parse.urlencode(
                {k: v for k, v in query.items() if v is not None})
        return target, data, self.credentials.headers(content_type)

    def _refused(self, status: int, raw: bytes) -> ApiError:
        if status == 401:
            self.credentials.invalidate()
        return status_error(status, raw)


def lines(response: Any) -> Iterator[list[bytes]]:
    """The complete lines of a streamed response, one list per chunk received."""
    pending = b""
    for chunk in response.stream(65536, decode_content=True):
        if not chunk:
            continue
        pending += chunk
        if b"\n" not in pending:
            continue
        *complete, pending = pending.split(b"\n")
        yield [line for line in complete if line.strip()]
    if pending.strip():
        yield [pending]


def interrupt(response: Any) -> None:
    """Unblock a streaming read on ``response`` from another thread (urllib3's
    ``shutdown`` since 2.3, else ``close``)."""
    if response is None:
        return
    try:
        shutdown = getattr(response, "shutdown", None)
        if shutdown is not None:
            shutdown()
        else:
            response.close()
    except Exception:  # the connection is going away anyway
        pass


def end_stream(response: Any) -> None:
    """Close a watch's connection (never reused: what is left of the stream is unread)."""
    for close in (response.close, response.release_conn):
        with contextlib.suppress(Exception):  # the connection is going away anyway
            close()
