"""``Exchanges``: libcurl handles reused across methods and bodies, TLS settings of a
client configuration, failures without an answer as ``ExchangeError``."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

kubernetes = pytest.importorskip("kubernetes")

from policysched.cluster.exchange import ExchangeError, Exchanges  # noqa: E402

from .test_transport import CERT, TlsServer  # noqa: E402

HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}
TIMEOUT = (5.0, 10.0)


class EchoServer:
    """Answers every request with its method, path, body and Content-Type as JSON; a
    path starting with /status/N answers with status N."""

    def __init__(self) -> None:
        self.connections = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                server.connections += 1
                super().setup()

            def _echo(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                data = json.dumps({"method": self.command, "path": self.path,
                                   "body": body.decode(),
                                   "type": self.headers.get("Content-Type"),
                                   "expect": self.headers.get("Expect")}).encode()
                status = int(self.path.split("/")[2]) if self.path.startswith("/status/") \
                    else 200
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _echo

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def configuration(self) -> Any:
        configuration = kubernetes.client.Configuration()
        configuration.host = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        return configuration


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def answer(exchanges: Exchanges, method: str, target: str, data: bytes | None = None
           ) -> dict[str, Any]:
    status, raw = exchanges.exchange(method, target, data, HEADERS, TIMEOUT)
    assert status == 200
    return dict(json.loads(raw))


def test_one_handle_serves_every_method_and_body_in_turn(echo: EchoServer) -> None:
    exchanges = Exchanges(echo.configuration())
    big = json.dumps({"x": "y" * 5000}).encode()  # large enough for curl's 100-continue
    seen = [answer(exchanges, "POST", "/a", b'{"a":1}'),
            answer(exchanges, "GET", "/b?watch=false"),
            answer(exchanges, "PATCH", "/c", b'{"c":3}'),
            answer(exchanges, "DELETE", "/d"),
            answer(exchanges, "DELETE", "/e", b'{"e":5}'),
            answer(exchanges, "PUT", "/f", big),
            answer(exchanges, "GET", "/g")]
    assert [(s["method"], s["path"], s["body"]) for s in seen] == [
        ("POST", "/a", '{"a":1}'), ("GET", "/b?watch=false", ""), ("PATCH", "/c", '{"c":3}'),
        ("DELETE", "/d", ""), ("DELETE", "/e", '{"e":5}'), ("PUT", "/f", big.decode()),
        ("GET", "/g", "")]
    assert seen[0]["type"] == "application/json"
    assert all(s["expect"] is None for s in seen)  # no 100-continue round trip
    assert exchanges.handles == 1 and echo.connections == 1  # one kept-alive connection
    exchanges.close()


def test_an_error_status_is_an_answer(echo: EchoServer) -> None:
    exchanges = Exchanges(echo.configuration())
    status, raw = exchanges.exchange("POST", "/status/409", b"{}", HEADERS, TIMEOUT)
    assert status == 409 and json.loads(raw)["path"] == "/status/409"


def test_no_answer_is_an_exchange_error_and_the_handle_is_dropped() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    configuration = kubernetes.client.Configuration()
    configuration.host = f"http://127.0.0.1:{port}"
    exchanges = Exchanges(configuration)
    with pytest.raises(ExchangeError, match="onnect"):
        exchanges.exchange("GET", "/x", None, HEADERS, TIMEOUT)
    assert exchanges._idle == []


def test_concurrent_exchanges_take_a_handle_each_and_reuse_them(echo: EchoServer) -> None:
    exchanges = Exchanges(echo.configuration())
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait()
            for i in range(20):
                assert answer(exchanges, "POST", f"/p{i}", b"{}")["path"] == f"/p{i}"
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == [] and 1 <= exchanges.handles <= 4
    assert echo.connections == exchanges.handles
    exchanges.close()
    assert exchanges._idle == []


def test_tls_is_verified_against_the_configured_authority() -> None:
    server = TlsServer()
    try:
        trusted = server.api_client().configuration
        assert Exchanges(trusted).exchange("POST", "/x", b"{}", HEADERS, TIMEOUT)[0] == 201
        unknown = server.api_client().configuration
        unknown.ssl_ca_cert = None  # certifi's bundle: the self-signed cert is not in it
        with pytest.raises(ExchangeError):
            Exchanges(unknown).exchange("POST", "/x", b"{}", HEADERS, TIMEOUT)
        unknown.verify_ssl = False  # insecure-skip-tls-verify
        assert Exchanges(unknown).exchange("POST", "/x", b"{}", HEADERS, TIMEOUT)[0] == 201
        assert CERT.exists()
    finally:
        server.stop()
