"""``Exchanges``: request/response HTTP exchanges carried out by libcurl (pycurl), the
non-streaming half of ``Transport`` (binds, patches, Events, lists, the Lease).

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

import threading
import urllib.parse
from collections.abc import Mapping
from io import BytesIO
from typing import Any

import pycurl

from . import kube_messages as km

MAX_HEADER_SETS = 16  # header dicts whose lines are kept (one per content type in use)


class ExchangeError(Exception):
    """No answer: the connection failed, or timed out (libcurl's message)."""


class Exchanges:
    """Exchanges with one server, on a pool of libcurl handles. Thread-safe."""

    def __init__(self, configuration: Any) -> None:
        self.base = str(configuration.host).rstrip("/")
        self._options = _handle_options(configuration)
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
            handle.perform()
            status = int(handle.getinfo(pycurl.RESPONSE_CODE))
        except pycurl.error as e:
            handle.close()  # its connection is in an unknown state
            handle = None
            raise ExchangeError(e.args[1] if len(e.args) > 1 else str(e)) from None
        finally:
            if handle is not None:
                self._give_back(handle)
        return status, body.getvalue()

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
