"""``Exchanges``: libcurl handles reused across methods and bodies, TLS settings of a
client configuration, failures without an answer as ``ExchangeError``. ``Multiplexer``:
exchanges side by side on one thread, started no earlier than asked, cancelled or closed
ones answered with an error."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

kubernetes = pytest.importorskip("kubernetes")

from policysched.cluster.exchange import (  # noqa: E402
    MULTIPLEXER_NAME,
    ExchangeError,
    Exchanges,
    Multiplexer,
)

from .test_transport import CERT, TlsServer  # noqa: E402

HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}
TIMEOUT = (5.0, 10.0)


class EchoServer:
    """Answers every request with its method, path, body and Content-Type as JSON; a
    path starting with /status/N answers with status N; one starting with /held waits
    for ``gate`` first. ``arrived`` records each request's path and time."""

    def __init__(self) -> None:
        self.connections = 0
        self.gate = threading.Event()
        self.arrived: list[tuple[str, float]] = []
        self.holding = 0  # requests waiting for the gate
        self.lock = threading.Lock()
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
                with server.lock:
                    server.arrived.append((self.path, time.monotonic()))
                if self.path.startswith("/held"):
                    with server.lock:
                        server.holding += 1
                    server.gate.wait(10)
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


def unreachable() -> Any:
    """A client configuration naming a port nothing listens on."""
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    configuration = kubernetes.client.Configuration()
    configuration.host = f"http://127.0.0.1:{port}"
    return configuration


def test_no_answer_is_an_exchange_error_and_the_handle_is_dropped() -> None:
    exchanges = Exchanges(unreachable())
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


# ------------------------------------------------------------------------------ Multiplexer


class Answers:
    """The answers a multiplexer gives, by target, with the thread each came on."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = threading.Condition(self.lock)
        self.by_target: dict[str, tuple[int, bytes, ExchangeError | None, str]] = {}

    def to(self, target: str) -> Any:
        def answer(status: int, raw: bytes, error: ExchangeError | None) -> None:
            with self.lock:
                self.by_target[target] = (status, raw, error, threading.current_thread().name)
                self.done.notify_all()
        return answer

    def wait(self, count: int, timeout: float = 10.0) -> None:
        with self.lock:
            assert self.done.wait_for(lambda: len(self.by_target) >= count, timeout), \
                f"{len(self.by_target)} of {count} answers"


def test_the_multiplexer_runs_exchanges_side_by_side_on_its_one_thread(echo: EchoServer
                                                                         ) -> None:
    multiplexer = Multiplexer(echo.configuration())
    answers = Answers()
    held = [f"/held/{i}" for i in range(8)]
    for target in held:
        multiplexer.submit("POST", target, b'{"a":1}', HEADERS, TIMEOUT, answers.to(target))
    # every one is under way at once (the caller never waited): the server holds them all
    deadline = time.monotonic() + 10
    while echo.holding < len(held) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert echo.holding == len(held) and answers.by_target == {}
    multiplexer.submit("GET", "/status/409", None, HEADERS, TIMEOUT, answers.to("/status/409"))
    answers.wait(1)  # not behind the held ones
    echo.gate.set()
    answers.wait(len(held) + 1)
    for target in held:
        status, raw, error, thread = answers.by_target[target]
        assert (status, error, thread) == (200, None, MULTIPLEXER_NAME)
        assert json.loads(raw)["path"] == target and json.loads(raw)["body"] == '{"a":1}'
    assert answers.by_target["/status/409"][0] == 409  # an error status is an answer
    assert multiplexer.peak == len(held) + 1
    multiplexer.close()


def test_an_exchange_starts_no_earlier_than_asked_and_a_cancelled_one_never(
        echo: EchoServer) -> None:
    multiplexer = Multiplexer(echo.configuration())
    answers = Answers()
    cancelled = threading.Event()
    submitted = time.monotonic()
    multiplexer.submit("POST", "/later", b"{}", HEADERS, TIMEOUT, answers.to("/later"),
                       at=submitted + 1.0)
    multiplexer.submit("POST", "/never", b"{}", HEADERS, TIMEOUT, answers.to("/never"),
                       at=submitted + 60, cancelled=cancelled.is_set)
    multiplexer.submit("POST", "/now", b"{}", HEADERS, TIMEOUT, answers.to("/now"))
    answers.wait(2)
    arrived = dict(echo.arrived)
    assert arrived["/later"] - submitted >= 1.0 and arrived["/now"] < arrived["/later"]
    cancelled.set()
    answers.wait(3, timeout=5)  # promptly, not at its start time
    status, _, error, _ = answers.by_target["/never"]
    assert status == 0 and isinstance(error, ExchangeError) and "/never" not in arrived
    multiplexer.close()


def test_no_answer_is_an_exchange_error_and_a_failing_callback_stops_nothing() -> None:
    multiplexer = Multiplexer(unreachable())
    answers = Answers()

    def broken(status: int, raw: bytes, error: ExchangeError | None) -> None:
        raise RuntimeError("a defect of the caller's")

    multiplexer.submit("GET", "/first", None, HEADERS, TIMEOUT, broken)
    multiplexer.submit("GET", "/x", None, HEADERS, TIMEOUT, answers.to("/x"))
    answers.wait(1)
    status, _, error, _ = answers.by_target["/x"]
    assert status == 0 and isinstance(error, ExchangeError) and "onnect" in str(error)
    multiplexer.submit("GET", "/y", None, HEADERS, TIMEOUT, answers.to("/y"))
    answers.wait(2)  # the thread goes on
    multiplexer.close()


def test_close_lets_the_running_finish_and_refuses_the_rest(echo: EchoServer) -> None:
    multiplexer = Multiplexer(echo.configuration())
    answers = Answers()
    multiplexer.submit("POST", "/held/a", b"{}", HEADERS, TIMEOUT, answers.to("/held/a"))
    multiplexer.submit("POST", "/waiting", b"{}", HEADERS, TIMEOUT, answers.to("/waiting"),
                       at=time.monotonic() + 60)
    deadline = time.monotonic() + 10
    while echo.holding < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    multiplexer.close()
    multiplexer.submit("GET", "/after", None, HEADERS, TIMEOUT, answers.to("/after"))
    answers.wait(2)
    assert isinstance(answers.by_target["/waiting"][2], ExchangeError)
    assert isinstance(answers.by_target["/after"][2], ExchangeError)
    assert "/held/a" not in answers.by_target  # still running
    echo.gate.set()
    answers.wait(3)
    assert answers.by_target["/held/a"][:3] == (200, answers.by_target["/held/a"][1], None)
    thread = multiplexer._thread
    assert thread is not None
    thread.join(5)
    assert not thread.is_alive()
