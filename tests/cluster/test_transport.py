"""``Transport`` over HTTPS: keep-alive connections reused by parallel writes, watches on
connections of their own, credentials read once unless they can change; writes sent
later (``send_later``) without the caller waiting, for a token or an answer."""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

kubernetes = pytest.importorskip("kubernetes")

from policysched.cluster import transport as tr  # noqa: E402
from policysched.cluster.transport import (  # noqa: E402
    ApiError,
    TokenBucket,
    Transport,
)

FIXTURES = Path(__file__).parent / "fixtures"
CERT, KEY = FIXTURES / "tls-cert.pem", FIXTURES / "tls-key.pem"  # self-signed, 127.0.0.1


class TlsServer:
    """Answers POSTs with 201 and watches (``watch=true``) with an open stream; counts the
    TLS connections it accepted and records each request's Authorization header.
    ``refused`` tokens get 401."""

    def __init__(self) -> None:
        self.accepted = 0
        self.authorizations: list[str] = []
        self.refused: set[str] = set()
        self.closing = threading.Event()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                with server.lock:
                    server.accepted += 1
                super().setup()

            def _answer(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                token = self.headers.get("Authorization", "")
                with server.lock:
                    server.authorizations.append(token)
                if token in server.refused:
                    self._answer(401, b'{"kind":"Status","code":401,"message":"Unauthorized"}')
                else:
                    self._answer(201, b'{"kind":"Binding"}')

            def do_GET(self) -> None:  # a watch: bookmarks until the client or test ends it
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                line = b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"1"}}}\n'
                try:
                    while not server.closing.wait(0.05):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                        self.wfile.flush()
                except OSError:
                    pass
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(CERT, KEY)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def api_client(self, token: str = "secret") -> Any:
        configuration = kubernetes.client.Configuration()
        configuration.host = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        configuration.ssl_ca_cert = str(CERT)
        configuration.api_key = {"BearerToken": token}
        configuration.api_key_prefix = {"BearerToken": "Bearer"}
        return kubernetes.client.ApiClient(configuration)

    def stop(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[TlsServer]:
    server = TlsServer()
    yield server
    server.stop()


BINDS = 8  # binds in flight at once, as --parallel-binds


def test_parallel_binds_reuse_keep_alive_connections_and_watches_take_none(
        server: TlsServer) -> None:
    transport = Transport(server.api_client(), TokenBucket(0, 1))
    watches = [transport.open("GET", "/api/v1/pods", query={"watch": "true"})
               for _ in range(3)]  # held open while the binds run, as informers do
    barrier = threading.Barrier(BINDS)
    errors: list[BaseException] = []

    def binder() -> None:
        try:
            barrier.wait()
            for i in range(25):
                transport.send("POST", f"/api/v1/namespaces/d/pods/p{i}/binding",
                               body={"target": {"name": "n"}})
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=binder) for _ in range(BINDS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert len(server.authorizations) == BINDS * 25
    connections = transport._connections
    # 200 POSTs: at most one TLS connection per bind in flight, never one per request
    assert connections.exchanges.handles <= BINDS
    assert connections.streams_pool.num_connections == 3  # one per watch
    assert server.accepted == connections.exchanges.handles + 3
    for watch in watches:
        tr.end_stream(watch)
    transport.close()


def test_credentials_are_read_once_when_they_cannot_change(server: TlsServer) -> None:
    api = server.api_client()
    transport = Transport(api, TokenBucket(0, 1))
    for _ in range(20):
        transport.send("POST", "/x", body={})
    assert transport.credentials.reads == 1
    assert set(server.authorizations) == {"Bearer secret"}
    server.refused.add("Bearer secret")
    with pytest.raises(ApiError) as refused:
        transport.send("POST", "/x", body={})
    assert refused.value.status == 401
    api.configuration.api_key["BearerToken"] = "rotated"  # e.g. a new token
    transport.send("POST", "/x", body={})  # a 401 makes the next request read it again
    assert server.authorizations[-1] == "Bearer rotated"
    assert transport.credentials.reads == 2


def test_a_refreshable_credential_is_asked_again_at_most_every_recheck(
        server: TlsServer) -> None:
    api = server.api_client("first")
    tokens = iter(["first", "second", "third"])
    api.configuration.refresh_api_key_hook = lambda c: c.api_key.update(
        BearerToken=next(tokens))  # as kubeconfig's exec plugins and token files do
    now = [0.0]
    transport = Transport(api, TokenBucket(0, 1))
    transport.credentials._clock = lambda: now[0]
    seen = []
    for step in (0.0, 0.5, tr.CREDENTIAL_RECHECK, 0.1, tr.CREDENTIAL_RECHECK):
        now[0] += step
        transport.send("POST", "/x", body={})
        seen.append(server.authorizations[-1])
    assert seen == ["Bearer first", "Bearer first", "Bearer second", "Bearer second",
                    "Bearer third"]
    assert transport.credentials.reads == 3


def test_a_view_shares_connections_and_credentials_with_its_own_stop(
        server: TlsServer) -> None:
    transport = Transport(server.api_client(), TokenBucket(0, 1))
    stop = threading.Event()
    view = transport.sharing(stop=stop)
    view.send("POST", "/x", body={})
    transport.send("POST", "/x", body={})
    assert server.accepted == 1 and view.credentials is transport.credentials
    stop.set()
    with pytest.raises(ApiError):
        view.send("POST", "/x", body={})
    transport.send("POST", "/x", body={})  # the process's client is not stopped
    transport.close()


class Outcomes:
    """What ``send_later`` reports, in order, and a wait for them."""

    def __init__(self) -> None:
        self.seen: list[ApiError | None] = []
        self.condition = threading.Condition()

    def __call__(self, error: ApiError | None) -> None:
        with self.condition:
            self.seen.append(error)
            self.condition.notify_all()

    def wait(self, count: int) -> list[ApiError | None]:
        with self.condition:
            assert self.condition.wait_for(lambda: len(self.seen) >= count, 10)
            return list(self.seen)


def test_send_later_reports_acceptance_refusal_and_a_stopped_client(
        server: TlsServer) -> None:
    stop = threading.Event()
    transport = Transport(server.api_client(), TokenBucket(0, 1), stop)
    server.refused.add("Bearer refused")
    refused = Transport(server.api_client("refused"), TokenBucket(0, 1))
    outcomes = Outcomes()
    transport.send_later("POST", "/api/v1/namespaces/d/pods/a/binding", outcomes,
                         body={"target": {"name": "n"}})
    outcomes.wait(1)
    refused.send_later("POST", "/api/v1/namespaces/d/pods/b/binding", outcomes, body={})
    first, second = outcomes.wait(2)
    assert first is None and isinstance(second, ApiError) and second.status == 401
    assert server.authorizations == ["Bearer secret", "Bearer refused"]
    stop.set()
    transport.send_later("POST", "/x", outcomes, body={})  # not sent
    stopped = outcomes.wait(3)[2]
    assert isinstance(stopped, ApiError) and stopped.message == tr.km.CLIENT_STOPPED
    assert len(server.authorizations) == 2
    transport.close()
    refused.close()


def test_send_later_waits_for_its_token_without_the_caller_and_stops_promptly(
        server: TlsServer) -> None:
    stop = threading.Event()
    transport = Transport(server.api_client(), TokenBucket(1, 1), stop)  # 1 per second
    outcomes = Outcomes()
    started = time.monotonic()
    for _ in range(3):  # the bucket's one token, then 1 s and 2 s later
        transport.send_later("POST", "/x", outcomes, body={})
    assert time.monotonic() - started < 0.5  # the caller never waited
    assert outcomes.wait(2) == [None, None] and time.monotonic() - started >= 1.0
    stop.set()  # the third still waits for its token: it ends unsent, without waiting
    third = outcomes.wait(3)[2]
    assert isinstance(third, ApiError) and third.message == tr.km.CLIENT_STOPPED
    assert time.monotonic() - started < 1.9 and len(server.authorizations) == 2
    transport.close()


def test_backoff_after_a_watch_backs_off_only_on_a_short_empty_one() -> None:
    backoff = tr.Backoff(1.0, 8.0)
    assert backoff.after_watch(0.1, delivered=True) == 0.0  # a slow watcher cut: at once
    assert backoff.after_watch(5.0, delivered=False) == 0.0
    first = backoff.after_watch(0.1, delivered=False)
    second = backoff.after_watch(0.1, delivered=False)
    assert 1.0 <= first <= 1.5 and 2.0 <= second <= 3.0  # growing
    assert backoff.after_watch(tr.BACKOFF_RESET_AFTER, delivered=False) == 0.0
    assert 1.0 <= backoff.after_watch(0.1, delivered=False) <= 1.5  # reset by a long one
