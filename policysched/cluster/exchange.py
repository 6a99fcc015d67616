"""``Exchanges`` and ``Multiplexer``: request/response HTTP exchanges carried out by libcurl
(pycurl), the non-streaming half of ``Transport`` (binds, patches, Events, lists, the
Lease). ``Exchanges`` makes the caller wait for the answer; ``Multiplexer`` never does: one
thread drives every exchange handed to it at once (a libcurl multi handle), on HTTP/2 as
streams of one connection, and hands each answer to a callback.

Why libcurl: the request is built, sent, and its answer read in C with the GIL released,
so a bind costs about a quarter of the CPU it costs through urllib3 and http.client in
Python (measured against kube-apiserver, 16 threads binding 2,000 pods: 0.15 against
0.27 ms per bind; ``bench/e2e.py`` shows the effect on the whole process).

Each exchange borrows an idle handle (a ``pycurl.Curl``, which keeps its connections
alive between requests) and gives it back, so there are at most as many handles — and
connections — as requests in flight at once. HTTP/2 is used when the server offers it by
ALPN (libcurl's default over TLS, as client-go).

The TLS, proxy and server settings are those of a ``kubernetes`` client configuration:
``ssl_ca_cert`` (else certifi's bundle, as the ``kubernetes`` package does),
``cert_file``/``key_file``, ``verify_ssl``, ``assert_hostname``, ``tls_server_name``,
``proxy``/``no_proxy``/``proxy_headers``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any

import pycurl

from ..threads import Thread
from . import kube_messages as km

log = logging.getLogger(__name__)

MAX_HEADER_SETS = 16  # header dicts whose lines are kept (one per content type in use)
# the longest the multiplexer sleeps while exchanges wait for their start (so that one
# whose ``cancelled`` turns true ends promptly)
CANCEL_CHECK = 0.1
MULTIPLEXER_NAME = "http-multiplex"  # (an OS thread name: at most 15 bytes)


class ExchangeError(Exception):
    """No answer: the connection failed, or timed out (libcurl's message)."""


class Exchanges:
    """Exchanges with one server, on a pool of libcurl handles. Thread-safe."""

    def __init__(self, configuration: Any, *, pipewait: bool = False) -> None:
        self.base = str(configuration.host).rstrip("/")
        self._options = _handle_options(configuration)
        if pipewait and self.base.startswith("https:"):
            # (a multi handle's) wait for the TLS handshake (ALPN) to say whether the
            # connection multiplexes, rather than open one more; plain HTTP never does
            self._options.append((pycurl.PIPEWAIT, 1))
        self._lock = threading.Lock()
        self._idle: list[pycurl.Curl] = []
        self._closed = False
        self._header_lines: dict[int, tuple[Mapping[str, str], list[str]]] = {}
        self.handles = 0  # handles made: at most the exchanges ever in flight at once
        sni = getattr(configuration, "tls_server_name", None)
        if sni:  # the name to verify: the request names it, CONNECT_TO reaches the host
            url = urllib.parse.urlsplit(self.base)
            port = url.port or (443 if url.scheme == "https" else 80)
            self._options.append((pycurl.CONNECT_TO, [f"{sni}:{port}:{url.hostname}:{port}"]))
            self.base = urllib.parse.urlunsplit(url._replace(netloc=f"{sni}:{port}"))

    def exchange(self, method: str, target: str, data: bytes | None,
                 headers: Mapping[str, str], timeout: tuple[float, float]
                 ) -> tuple[int, bytes]:
        """Send ``method target`` (a path with its query) with body ``data``; returns the
        status and the body of the answer. Raises ``ExchangeError`` without one."""
        handle = self._borrow()
        body = BytesIO()
        try:
            self._prepare(handle, method, target, data, headers, timeout, body)
            handle.perform()
            status = int(handle.getinfo(pycurl.RESPONSE_CODE))
        except pycurl.error as e:
            handle.close()  # its connection is in an unknown state
            handle = None
            raise _exchange_error(e) from None
        finally:
            if handle is not None:
                self._give_back(handle)
        return status, body.getvalue()

    def _prepare(self, handle: pycurl.Curl, method: str, target: str, data: bytes | None,
                 headers: Mapping[str, str], timeout: tuple[float, float],
                 body: BytesIO) -> None:
        """Set ``handle`` up for one exchange, its answer's body written to ``body``."""
        handle.setopt(pycurl.URL, self.base + target)
        if data is None:
            handle.setopt(pycurl.HTTPGET, 1)
        else:
            handle.setopt(pycurl.POSTFIELDS, data)
        default = "GET" if data is None else "POST"
        handle.setopt(pycurl.CUSTOMREQUEST, None if method == default else method)
        handle.setopt(pycurl.HTTPHEADER, self._lines(headers))
        handle.setopt(pycurl.CONNECTTIMEOUT_MS, int(timeout[0] * 1000))
        # a read timeout: no byte for this long ends the exchange
        handle.setopt(pycurl.LOW_SPEED_TIME, max(1, int(timeout[1])))
        handle.setopt(pycurl.WRITEDATA, body)

    def close(self) -> None:
        """Close the idle handles (their connections); handles in use close when given
        back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for handle in idle:
            handle.close()

    def _borrow(self) -> pycurl.Curl:
        with self._lock:
            if self._idle:
                return self._idle.pop()
            self.handles += 1
        handle = pycurl.Curl()
        for option, value in self._options:
            handle.setopt(option, value)
        return handle

    def _give_back(self, handle: pycurl.Curl) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(handle)
                return
        handle.close()

    def _lines(self, headers: Mapping[str, str]) -> list[str]:
        """``headers`` as libcurl's header lines; the dicts are ``Credentials``' shared,
        unchanging ones, so the lines are kept by identity."""
        found = self._header_lines.get(id(headers))
        if found is None or found[0] is not headers:
            if len(self._header_lines) >= MAX_HEADER_SETS:  # credentials were renewed
                self._header_lines.clear()
            lines = [f"{k}: {v}" for k, v in headers.items()]
            lines.append("Expect:")  # no 100-continue round trip for larger bodies
            found = self._header_lines[id(headers)] = (headers, lines)
        return found[1]


Answer = Callable[[int, bytes, "ExchangeError | None"], None]  # status, body, or the error


@dataclass(eq=False)
class _Exchange:
    method: str
    target: str
    data: bytes | None
    headers: Mapping[str, str]
    timeout: tuple[float, float]
    answer: Answer
    at: float  # time.monotonic() before which it is not sent
    cancelled: Callable[[], bool] | None
    body: BytesIO | None = None


class Multiplexer:
    """Exchanges with one server carried out side by side by one thread, started lazily:
    ``submit`` returns at once and ``answer`` is called on that thread. libcurl's multi
    interface drives them, with the socket API (the sockets libcurl names are polled,
    with a pipe that wakes the thread for new work). Every handle waits for a connection
    able to multiplex (PIPEWAIT) rather than opening one more: on HTTP/2 (negotiated as
    ``Exchanges`` does) the exchanges in flight are streams of one connection. Its
    handles come from and go back to an ``Exchanges`` of their own (their settings and
    header lines). Thread-safe."""

    def __init__(self, configuration: Any) -> None:
        self._exchanges = Exchanges(configuration, pipewait=True)
        self._lock = threading.Lock()
        self._waiting: list[_Exchange] = []  # submitted, not started yet
        self._running: dict[pycurl.Curl, _Exchange] = {}  # the thread's alone
        self._closed = False
        self._sleeping = False  # the thread waits in poll: a submission writes to the pipe
        self._thread: threading.Thread | None = None
        # the thread's, made when it starts: the wake-up pipe, the poll of it and of
        # libcurl's sockets, libcurl's timer, the multi handle
        self._wake_read = self._wake_write = -1
        self._poll = select.poll()
        self._sockets: set[int] = set()
        self._timer: float | None = None  # when libcurl wants socket_action(TIMEOUT)
        self._multi: Any = None
        self.peak = 0  # the most exchanges running at once

    def submit(self, method: str, target: str, data: bytes | None,
               headers: Mapping[str, str], timeout: tuple[float, float], answer: Answer,
               *, at: float = 0.0, cancelled: Callable[[], bool] | None = None) -> None:
        """Send ``method target`` with body ``data`` no earlier than ``at`` (unless
        ``cancelled()`` is true by then); ``answer`` gets the status and body, or the
        ``ExchangeError`` (also after ``close``)."""
        exchange = _Exchange(method, target, data, headers, timeout, answer, at, cancelled)
        with self._lock:
            if not self._closed:
                self._waiting.append(exchange)
                if self._thread is None:
                    self._start_thread()
                elif self._sleeping:
                    self._wake()
                return
        answer(0, b"", ExchangeError(km.CLIENT_STOPPED))

    def close(self) -> None:
        """Take no more exchanges; those not started end with an ``ExchangeError``, those
        running finish (each within its own timeout), then the thread ends."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._thread is None:
                self._release()
            else:
                self._wake()

    # -- the thread -------------------------------------------------------------------------

    def _start_thread(self) -> None:
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self._poll.register(self._wake_read, select.POLLIN)
        self._multi = pycurl.CurlMulti()
        self._multi.setopt(pycurl.M_SOCKETFUNCTION, self._on_socket)
        self._multi.setopt(pycurl.M_TIMERFUNCTION, self._on_timer)
        self._thread = Thread(target=self._loop, name=MULTIPLEXER_NAME, daemon=True)
        self._thread.start()

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError):  # a wake-up is pending already
            os.write(self._wake_write, b"\0")

    def _loop(self) -> None:
        while True:
            with self._lock:
                self._sleeping = False
                due, dropped, closed = self._due(time.monotonic())
            for exchange in dropped:
                self._answer(exchange, 0, b"", ExchangeError(km.CLIENT_STOPPED))
            if closed and not self._running:  # (once closed, nothing is due: all dropped)
                break
            try:
                self._step(due)
            except Exception:  # a defect: end what runs (each pod's bind fails), go on
                log.exception(km.LOG_MULTIPLEXER_CRASHED)
                self._end_running()
        with self._lock:
            self._release()

    def _step(self, due: list[_Exchange]) -> None:
        """Start ``due``, let libcurl act on its timer, sleep until a socket, the timer,
        an exchange's start or a submission wants the thread, act on the sockets."""
        multi = self._multi
        for exchange in due:
            self._start(exchange)
        if self._timer is not None and self._timer <= time.monotonic():
            self._timer = None
            multi.socket_action(pycurl.SOCKET_TIMEOUT, 0)
        self._collect()
        with self._lock:
            self._sleeping = True
            wait = self._wait(time.monotonic())
        for fd, events in self._poll.poll(None if wait is None else wait * 1000):
            if fd == self._wake_read:
                with contextlib.suppress(BlockingIOError):
                    os.read(self._wake_read, 4096)
                continue
            flags = 0
            if events & (select.POLLIN | select.POLLHUP):
                flags |= pycurl.CSELECT_IN
            if events & select.POLLOUT:
                flags |= pycurl.CSELECT_OUT
            if events & (select.POLLERR | select.POLLNVAL):
                flags |= pycurl.CSELECT_ERR
            multi.socket_action(fd, flags)
        self._collect()

    def _due(self, now: float) -> tuple[list[_Exchange], list[_Exchange], bool]:
        """(Under the lock.) The exchanges to start now, those to drop (cancelled, or
        all once closed), and whether the multiplexer is closed; the others wait on."""
        due: list[_Exchange] = []
        dropped: list[_Exchange] = []
        waiting: list[_Exchange] = []
        for exchange in self._waiting:
            if self._closed or (exchange.cancelled is not None and exchange.cancelled()):
                dropped.append(exchange)
            elif exchange.at <= now:
                due.append(exchange)
            else:
                waiting.append(exchange)
        self._waiting = waiting
        return due, dropped, self._closed

    def _wait(self, now: float) -> float | None:
        """(Under the lock.) How long the thread may sleep in poll (None: until woken)."""
        deadlines = [self._timer] if self._timer is not None else []
        if self._waiting:
            deadlines.append(min(min(e.at for e in self._waiting), now + CANCEL_CHECK))
        return max(0.0, min(deadlines) - now) if deadlines else None

    def _start(self, exchange: _Exchange) -> None:
        handle = self._exchanges._borrow()
        exchange.body = BytesIO()
        try:
            self._exchanges._prepare(handle, exchange.method, exchange.target, exchange.data,
                                     exchange.headers, exchange.timeout, exchange.body)
            self._running[handle] = exchange
            self._multi.add_handle(handle)
        except pycurl.error as e:
            self._running.pop(handle, None)
            handle.close()
            self._answer(exchange, 0, b"", _exchange_error(e))
            return
        self.peak = max(self.peak, len(self._running))

    def _collect(self) -> None:
        """Answer every exchange libcurl has finished."""
        while True:
            queued, succeeded, failed = self._multi.info_read()
            for handle in succeeded:
                exchange = self._running.pop(handle)
                self._multi.remove_handle(handle)
                status = int(handle.getinfo(pycurl.RESPONSE_CODE))
                self._exchanges._give_back(handle)
                assert exchange.body is not None
                self._answer(exchange, status, exchange.body.getvalue(), None)
            for handle, _code, message in failed:
                exchange = self._running.pop(handle)
                self._multi.remove_handle(handle)
                handle.close()  # its connection is in an unknown state
                self._answer(exchange, 0, b"", ExchangeError(message))
            if not queued:
                return

    @staticmethod
    def _answer(exchange: _Exchange, status: int, body: bytes,
                error: ExchangeError | None) -> None:
        try:
            exchange.answer(status, body, error)
        except Exception:  # a defect of the caller's: the other exchanges go on
            log.exception(km.LOG_ANSWER_CRASHED, exchange.method, exchange.target)

    def _on_socket(self, what: int, fd: int, multi: Any, data: Any) -> None:
        if what == pycurl.POLL_REMOVE:
            if fd in self._sockets:
                self._sockets.discard(fd)
                self._poll.unregister(fd)
            return
        mask = ((select.POLLIN if what & pycurl.POLL_IN else 0)
                | (select.POLLOUT if what & pycurl.POLL_OUT else 0))
        if fd in self._sockets:
            self._poll.modify(fd, mask)
        else:
            self._sockets.add(fd)
            self._poll.register(fd, mask)

    def _on_timer(self, milliseconds: int) -> None:
        self._timer = None if milliseconds < 0 else time.monotonic() + milliseconds / 1000

    def _end_running(self) -> None:
        """Drop every running exchange, each answered with an error."""
        running, self._running = self._running, {}
        for handle, exchange in running.items():
            with contextlib.suppress(pycurl.error):
                self._multi.remove_handle(handle)
            handle.close()
            self._answer(exchange, 0, b"", ExchangeError(km.CLIENT_STOPPED))

    def _release(self) -> None:
        """(Under the lock; closed, nothing waiting or running.) Free the handles, the
        multi handle and the pipe."""
        self._exchanges.close()
        if self._multi is not None:
            self._multi.close()
            os.close(self._wake_read)
            os.close(self._wake_write)


def _exchange_error(e: pycurl.error) -> ExchangeError:
    return ExchangeError(e.args[1] if len(e.args) > 1 else str(e))


def _handle_options(configuration: Any) -> list[tuple[int, Any]]:
    """The options every handle gets, from a ``kubernetes`` client configuration."""
    options: list[tuple[int, Any]] = [
        (pycurl.NOSIGNAL, 1),  # handles run on many threads
        (pycurl.LOW_SPEED_LIMIT, 1),  # with LOW_SPEED_TIME: the read timeout
    ]
    if configuration.verify_ssl:
        options.append((pycurl.CAINFO, configuration.ssl_ca_cert or _default_ca_bundle()))
        if getattr(configuration, "assert_hostname", None) is False:
            options.append((pycurl.SSL_VERIFYHOST, 0))
    else:
        options += [(pycurl.SSL_VERIFYPEER, 0), (pycurl.SSL_VERIFYHOST, 0)]
    if configuration.cert_file:
        options.append((pycurl.SSLCERT, configuration.cert_file))
    if configuration.key_file:
        options.append((pycurl.SSLKEY, configuration.key_file))
    proxy = getattr(configuration, "proxy", None)
    if proxy:
        options.append((pycurl.PROXY, proxy))
        no_proxy = getattr(configuration, "no_proxy", None)
        if no_proxy:
            options.append((pycurl.NOPROXY, no_proxy))
        proxy_headers = getattr(configuration, "proxy_headers", None) or {}
        if proxy_headers:
            options.append((pycurl.PROXYHEADER,
                            [f"{k}: {v}" for k, v in proxy_headers.items()]))
    return options


def _default_ca_bundle() -> str:
    try:
        import certifi
    except ImportError as e:  # a dependency of kubernetes and requests
        raise ExchangeError(km.API_UNREACHABLE.format(reason=e)) from None
    return str(certifi.where())
