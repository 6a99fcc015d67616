"""``ConnectionLog``: what one API client (an informer, the event writer, the lease…) logs
about its connection to the API server — one line per change of state, never one per retry.

An outage of the API server makes every client retry, each with its own backoff; logging
each retry buried the log in thousands of identical warnings. A client now reports each
attempt's result (``failed(error)`` or ``succeeded()``) and the log gets:

* a warning when requests start failing ("lost connection to the API server: <reason>;
  retrying", or "requests failing: <reason>; retrying" for an HTTP error status);
* another warning only when the failure changes (say, from "connection refused" to
  "Forbidden");
* an info line when a request succeeds again: "reconnected after N s (M attempts failed)".

Each retry is still logged at debug level.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from . import kube_messages as km


def failure_status(error: BaseException) -> int:
    """The HTTP status of a failed request's error (0: no response at all): ``ApiError``'s
    and the kubernetes client's ``ApiException``'s ``status``."""
    status = getattr(error, "status", None)
    return status if isinstance(status, int) else 0


def is_outage(error: BaseException) -> bool:
    """Whether a failure says the API server is unavailable (no answer, or 429/5xx): worth
    retrying the request."""
    return failure_status(error) in (0, 429, 500, 502, 503, 504)


def about_the_object(error: BaseException) -> bool:
    """Whether a failure concerns the request's object (invalid, missing, in conflict)
    rather than the client's state: unreachable server, refused credentials or permission
    (a restarting API server refuses them until its authorizer is ready), overload."""
    return failure_status(error) in (400, 404, 409, 410, 422)


def describe(error: BaseException) -> str:
    """One line about a failure (the kubernetes client's exceptions span several lines:
    their first, "(403)", then gets the reason, "(403) Forbidden")."""
    lines = str(error).strip().splitlines()
    first = lines[0] if lines else type(error).__name__
    reason = getattr(error, "reason", None)
    if first.startswith("(") and isinstance(reason, str) and reason:
        first = f"{first} {reason}"
    return first


class ConnectionLog:
    """The connection state of one client, named ``name`` in the log lines; thread-safe."""

    def __init__(self, name: str, logger: logging.Logger,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.log = logger
        self.clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None  # when the current run of failures began
        self._status: int | None = None  # the status of the last failure
        self._logged: set[int] = set()  # the failure statuses warned of in this outage
        self._failures = 0  # failed attempts since ``_since``
        self.outages = 0  # runs of failures so far

    @property
    def failing(self) -> bool:
        return self._since is not None

    def failed(self, error: BaseException) -> None:
        """An attempt failed with ``error``: a warning the first time the outage fails
        with this status (a refused connection, a 503 ...), debug otherwise — a server
        shutting down alternates between two, which is two lines, not one per switch."""
        status = failure_status(error)
        with self._lock:
            self._failures += 1
            if self._since is None:
                self._since = self.clock()
                self.outages += 1
            changed = status not in self._logged
            self._logged.add(status)
            self._status = status
        reason = describe(error)
        if not changed:
            self.log.debug(km.LOG_STILL_FAILING, self.name, reason)
        elif status == 0:
            self.log.warning(km.LOG_CONNECTION_LOST, self.name, reason)
        else:
            self.log.warning(km.LOG_REQUESTS_FAILING, self.name, reason)

    def succeeded(self, started: float | None = None) -> None:
        """An attempt succeeded: an info line if attempts were failing until now. A
        success that ``started`` (this log's clock) before the failures began says nothing
        about now and is ignored (clients whose threads share one log)."""
        with self._lock:
            since, failures, status = self._since, self._failures, self._status
            if since is None or (started is not None and started < since):
                return
            self._since, self._status, self._failures = None, None, 0
            self._logged.clear()
        template = km.LOG_RECONNECTED if status == 0 else km.LOG_RECOVERED
        self.log.info(template, self.name, self.clock() - since, failures)


__all__ = ["ConnectionLog", "about_the_object", "describe", "failure_status", "is_outage"]
