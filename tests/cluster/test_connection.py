"""``ConnectionLog``: one log line per change of a client's connection state, not per retry."""

from __future__ import annotations

import logging

import pytest

from policysched.cluster.connection import (
    ConnectionLog,
    about_the_object,
    describe,
    failure_status,
    is_outage,
)
from policysched.cluster.kube import ApiError

LOGGER = "policysched.test.connection"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER]


def test_an_outage_is_one_warning_then_one_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    clock = Clock()
    connection = ConnectionLog("Pod informer", logging.getLogger(LOGGER), clock)
    connection.succeeded()  # nothing was failing: nothing to say
    refused = ApiError(0, "connection refused")
    for _ in range(50):
        connection.failed(refused)
        clock.now += 0.5
    assert connection.failing
    connection.succeeded()
    connection.succeeded()
    assert lines(caplog) == [
        (logging.WARNING, "Pod informer: lost connection to the API server: "
                          "connection refused; retrying"),
        (logging.INFO, "Pod informer: reconnected to the API server after 25.0s "
                       "(50 attempts failed)")]
    assert not connection.failing and connection.outages == 1


def test_a_different_failure_is_a_new_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    connection = ConnectionLog("event writer", logging.getLogger(LOGGER), Clock())
    connection.failed(ApiError(0, "connection refused"))
    connection.failed(ApiError(503, "the server is shutting down"))
    connection.failed(ApiError(503, "the server is shutting down"))
    connection.failed(ApiError(403, "Forbidden"))
    connection.succeeded()
    assert lines(caplog) == [
        (logging.WARNING, "event writer: lost connection to the API server: "
                          "connection refused; retrying"),
        (logging.WARNING, "event writer: requests to the API server failing: "
                          "the server is shutting down; retrying"),
        (logging.WARNING, "event writer: requests to the API server failing: Forbidden; "
                          "retrying"),
        (logging.INFO, "event writer: requests succeed again after 0.0s (4 attempts failed)")]


def test_failures_alternating_between_two_kinds_are_two_lines(
        caplog: pytest.LogCaptureFixture) -> None:
    """A server shutting down refuses some connections and answers 503 to others: each
    kind is said once per outage, not once per switch between them."""
    caplog.set_level(logging.INFO, LOGGER)
    connection = ConnectionLog("pod writes", logging.getLogger(LOGGER), Clock())
    for _ in range(5):
        connection.failed(ApiError(503, "apiserver is shutting down"))
        connection.failed(ApiError(0, "connection refused"))
    connection.succeeded()
    connection.failed(ApiError(503, "apiserver is shutting down"))  # a new outage
    assert [level for level, _ in lines(caplog)] == [
        logging.WARNING, logging.WARNING, logging.INFO, logging.WARNING]


def test_a_success_that_began_before_the_failures_is_ignored() -> None:
    """Threads sharing one log: a request sent before the outage may still succeed after
    another thread's request failed; that says nothing about the connection now."""
    clock = Clock()
    connection = ConnectionLog("pod writes", logging.getLogger(LOGGER), clock)
    started = clock()
    clock.now += 1
    connection.failed(OSError("refused"))
    connection.succeeded(started)
    assert connection.failing
    connection.succeeded(clock())
    assert not connection.failing


def test_each_outage_is_reported() -> None:
    connection = ConnectionLog("lease", logging.getLogger(LOGGER), Clock())
    for _ in range(3):
        connection.failed(OSError("refused"))
        connection.succeeded()
    assert connection.outages == 3


def test_failure_status_and_outages() -> None:
    assert failure_status(OSError("refused")) == 0
    assert failure_status(ApiError(503, "busy")) == 503
    statuses = (0, 401, 403, 429, 500, 503, 400, 404, 409, 410, 422)
    assert [is_outage(ApiError(s, "")) for s in statuses] == [
        True, False, False, True, True, True, False, False, False, False, False]
    assert [about_the_object(ApiError(s, "")) for s in statuses] == [
        False, False, False, False, False, False, True, True, True, True, True]


def test_failures_are_described_on_one_line() -> None:
    from kubernetes.client.exceptions import ApiException

    forbidden = ApiException(status=403, reason="Forbidden")
    assert "\n" in str(forbidden)
    assert describe(forbidden) == "(403) Forbidden"
    assert describe(ApiError(0, "connection refused")) == "connection refused"
    assert describe(OSError()) == "OSError"
