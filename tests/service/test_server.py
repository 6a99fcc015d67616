"""The health and metrics endpoint, on 127.0.0.1 with an ephemeral port."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from policysched.service.metrics import RESULT_SCHEDULED, SchedulerMetrics
from policysched.service.server import HealthChecks, HealthServer, parse_bind_address


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read().decode()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server(clock: FakeClock) -> Iterator[HealthServer]:
    metrics = SchedulerMetrics()
    metrics.on_attempt("policysched", RESULT_SCHEDULED, 0.01)
    s = HealthServer("127.0.0.1:0", metrics, HealthChecks(heartbeat_timeout=10, clock=clock))
    s.start()
    yield s
    s.stop()


def test_metrics_are_served(server: HealthServer) -> None:
    status, content_type, body = get(server.url + "/metrics")
    assert status == 200
    assert content_type.startswith("text/plain; version=")
    assert 'scheduler_schedule_attempts_total{profile="policysched",result="scheduled"} 1.0' \
        in body


def test_healthz_follows_the_heartbeat(server: HealthServer, clock: FakeClock) -> None:
    assert get(server.url + "/healthz")[::2] == (200, "ok\n")
    clock.now += 11
    status, _, body = get(server.url + "/healthz")
    assert status == 503
    assert "[-]loop failed: the scheduling loop has not run for 11s (limit 10s)" in body
    assert body.endswith("healthz check failed\n")
    server.checks.heartbeat()
    assert get(server.url + "/healthz")[0] == 200


def test_readyz_fails_with_reasons_until_every_check_passes(server: HealthServer) -> None:
    state = {"synced": False}
    server.checks.readiness["informers"] = lambda: None if state["synced"] else "not synced"
    server.checks.readiness["policies"] = lambda: None
    status, _, body = get(server.url + "/readyz")
    assert status == 503
    assert body.splitlines() == ["[-]informers failed: not synced", "[+]policies ok",
                                 "readyz check failed"]
    state["synced"] = True
    assert get(server.url + "/readyz")[::2] == (200, "ok\n")


def test_a_check_that_raises_fails_and_unknown_paths_are_404(server: HealthServer) -> None:
    def broken() -> str | None:
        raise RuntimeError("boom")

    server.checks.readiness["broken"] = broken
    status, _, body = get(server.url + "/readyz")
    assert status == 503 and "[-]broken failed: RuntimeError: boom" in body
    assert get(server.url + "/nope")[0] == 404


def test_parse_bind_address() -> None:
    assert parse_bind_address("0.0.0.0:10259") == ("0.0.0.0", 10259)
    assert parse_bind_address(":8080") == ("0.0.0.0", 8080)
    assert parse_bind_address("[::1]:9") == ("::1", 9)
    with pytest.raises(ValueError, match="expected host:port"):
        parse_bind_address("localhost")
