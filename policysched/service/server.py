"""The health and metrics endpoint: ``/healthz``, ``/readyz`` and ``/metrics`` over HTTP.

A stdlib ``ThreadingHTTPServer`` in a daemon thread, bound to the configuration's
``healthzBindAddress`` (``0.0.0.0:10259`` by default, as kube-scheduler's secure port;
plain HTTP here). Bodies follow kube's health endpoints: ``ok``, or one ``[+]name ok`` /
``[-]name failed: reason`` line per check and a final ``<endpoint> check failed`` line with
status 503.

* ``/healthz`` — alive: the run loop ticked ``heartbeat()`` within ``heartbeat_timeout``
  seconds, and every liveness check passes.
* ``/readyz`` — ready to schedule: every readiness check passes (the loop adds "informers
  synced" and "policy set valid").
* ``/metrics`` — the Prometheus text exposition of the process's ``SchedulerMetrics``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final, Protocol

from ..framework.scheduler import Scheduler
from ..threads import Thread
from .metrics import CONTENT_TYPE, SchedulerMetrics
from .observers import RunObserver

Check = Callable[[], str | None]
"""A health check: None when fine, else the reason it fails (shown in the body)."""

DEFAULT_BIND_ADDRESS: Final = "0.0.0.0:10259"
DEFAULT_HEARTBEAT_TIMEOUT: Final = 30.0  # seconds without a loop tick before /healthz fails

HEALTHZ: Final = "/healthz"
READYZ: Final = "/readyz"
METRICS: Final = "/metrics"
TEXT_PLAIN: Final = "text/plain; charset=utf-8"

# User-visible texts.
OK: Final = "ok"
CHECK_OK: Final = "[+]{name} ok"
CHECK_FAILED: Final = "[-]{name} failed: {reason}"
ENDPOINT_FAILED: Final = "{endpoint} check failed"
HEARTBEAT_CHECK: Final = "loop"
HEARTBEAT_STALE: Final = "the scheduling loop has not run for {seconds:.0f}s (limit {limit:.0f}s)"
INFORMERS_CHECK: Final = "informers"
INFORMERS_NOT_SYNCED: Final = "the informers have not synced yet"
POLICIES_CHECK: Final = "policies"
NOT_FOUND: Final = "404 page not found"
BAD_ADDRESS: Final = "invalid bind address {address!r}: expected host:port"

log = logging.getLogger(__name__)


def parse_bind_address(address: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port``; an empty host is every interface) → (host, port)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(BAD_ADDRESS.format(address=address))
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host or "0.0.0.0", int(port)


@dataclass
class HealthChecks:
    """Named liveness and readiness checks and the loop's heartbeat. Thread-safe: the loop
    ticks, the server's threads read."""

    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT
    clock: Callable[[], float] = time.monotonic
    liveness: dict[str, Check] = field(default_factory=dict)
    readiness: dict[str, Check] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._last_tick = self.clock()
        self.liveness.setdefault(HEARTBEAT_CHECK, self._heartbeat_check)

    def heartbeat(self) -> None:
        """The run loop is alive (call at least every few seconds, even when idle)."""
        self._last_tick = self.clock()

    def _heartbeat_check(self) -> str | None:
        idle = self.clock() - self._last_tick
        if idle <= self.heartbeat_timeout:
            return None
        return HEARTBEAT_STALE.format(seconds=idle, limit=self.heartbeat_timeout)

    def evaluate(self, checks: dict[str, Check]) -> tuple[bool, list[str]]:
        """(all passed, one line per check). A check that raises fails with its error."""
        lines: list[str] = []
        passed = True
        for name, check in list(checks.items()):
            try:
                reason = check()
            except Exception as e:  # a broken check must not take the endpoint down
                reason = f"{type(e).__name__}: {e}"
            if reason is None:
                lines.append(CHECK_OK.format(name=name))
            else:
                passed = False
                lines.append(CHECK_FAILED.format(name=name, reason=reason))
        return passed, lines


class LoopState(Protocol):
    """What readiness needs of the ``SchedulingLoop``."""

    @property
    def leading(self) -> bool: ...

    @property
    def synced(self) -> bool: ...


def informers_check(loop: LoopState) -> Check:
    """Ready once the leader's informers listed everything; a standby replica (not leading,
    no informers) is ready."""

    def check() -> str | None:
        return None if loop.synced or not loop.leading else INFORMERS_NOT_SYNCED

    return check


class HealthObserver(RunObserver):
    """Ticks the heartbeat on every loop iteration (the loop calls ``on_loop`` at least
    once a second)."""

    def __init__(self, checks: HealthChecks) -> None:
        self.checks = checks

    def on_loop(self, scheduler: Scheduler | None) -> None:
        self.checks.heartbeat()


class HealthServer:
    """Serves the endpoints in a daemon thread; ``start()`` binds, ``stop()`` closes."""

    def __init__(self, address: str, metrics: SchedulerMetrics,
                 checks: HealthChecks | None = None) -> None:
        self.address = parse_bind_address(address)
        self.metrics = metrics
        self.checks = checks if checks is not None else HealthChecks()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        # further GET routes → (status, content type, body), e.g. a shadow's /shadow
        self.pages: dict[str, Callable[[], tuple[int, str, bytes]]] = {}

    @property
    def port(self) -> int:
        """The bound port (the real one when the address asked for port 0)."""
        if self._httpd is None:
            return self.address[1]
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.address[0]}:{self.port}"

    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer(self.address, handler)
        self._httpd.daemon_threads = True
        self._thread = Thread(target=self._httpd.serve_forever,
                                        name="policysched-health", daemon=True)
        self._thread.start()
        log.info("serving %s, %s and %s on %s", HEALTHZ, READYZ, METRICS, self.url)

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = None

    def respond(self, path: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for a GET of ``path``."""
        route, _, _query = path.partition("?")
        route = route.rstrip("/") or "/"
        page = self.pages.get(route)
        if page is not None:
            return page()
        if route == METRICS:
            return HTTPStatus.OK, CONTENT_TYPE, self.metrics.exposition()
        if route in (HEALTHZ, READYZ):
            checks = self.checks.liveness if route == HEALTHZ else self.checks.readiness
            passed, lines = self.checks.evaluate(checks)
            if passed:
                return HTTPStatus.OK, TEXT_PLAIN, (OK + "\n").encode()
            lines.append(ENDPOINT_FAILED.format(endpoint=route.lstrip("/")))
            return (HTTPStatus.SERVICE_UNAVAILABLE, TEXT_PLAIN,
                    ("\n".join(lines) + "\n").encode())
        return HTTPStatus.NOT_FOUND, TEXT_PLAIN, (NOT_FOUND + "\n").encode()


class _Handler(BaseHTTPRequestHandler):
    server_ref: HealthServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        status, content_type, body = self.server_ref.respond(self.path)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s " + format, self.address_string(), *args)


__all__ = [
    "DEFAULT_BIND_ADDRESS",
    "INFORMERS_CHECK",
    "POLICIES_CHECK",
    "Check",
    "HealthChecks",
    "HealthObserver",
    "HealthServer",
    "LoopState",
    "informers_check",
    "parse_bind_address",
]
