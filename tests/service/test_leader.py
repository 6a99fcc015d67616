"""``LeaderOnlyBackend``: binds without the Lease fail (as outcomes), other writes drop.
``LeaderElector``: client-go's acquire / renew / take-over / release on a Lease in memory.
(Elections against a real API server: ``tests/e2e/test_reload_leader.py``.)"""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend
from policysched.cluster.transport import ApiError
from policysched.framework.backend import BindError, BindRequest
from policysched.model.clock import SimulatedClock
from policysched.model.objects import pod_info

from ..cache.objects_builder import make_node, make_pod

leader = pytest.importorskip("policysched.service.leader")

NOT_LEADING = "not the leader"


def test_binds_are_handed_over_only_while_leading() -> None:
    memory = MemoryBackend([make_node("n1"), make_pod("a"), make_pod("b")], SimulatedClock(0))
    leading = [True]
    backend = leader.LeaderOnlyBackend(memory, lambda: leading[0], lambda: NOT_LEADING)
    a, b = (pod_info(memory.pod(k) or {}) for k in ("default/a", "default/b"))
    first = BindRequest(a, "n1")
    backend.start_bind(first)
    leading[0] = False
    refused = BindRequest(b, "n1")
    backend.start_bind(refused)
    outcomes = backend.drain_bind_outcomes()
    assert [(o.request, str(o.error) if o.error else None) for o in outcomes] == [
        (refused, NOT_LEADING), (first, None)]
    assert isinstance(outcomes[0].error, BindError)
    assert [x.pod for x in memory.bindings] == ["default/a"]
    assert backend.drain_bind_outcomes() == []
    with pytest.raises(BindError, match=NOT_LEADING):
        backend.bind(b, "n1")


class FakeLeases:
    """The Lease API of one API server, in memory: GET, POST (create), PUT (with the
    resourceVersion precondition); ``down`` makes every request fail unanswered."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0
        self.requests: list[str] = []
        self.down = False

    def call(self, method: str, path: str, *, body: Any = None, **kwargs: Any) -> Any:
        self.requests.append(method)
        if self.down:
            raise ApiError(0, "connection refused")
        if method == "GET":
            if self.lease is None:
                raise ApiError(404, "not found", "NotFound")
            return copy.deepcopy(self.lease)
        if method == "POST" and self.lease is not None:
            raise ApiError(409, "already exists", "AlreadyExists")
        if method == "PUT" and body["metadata"]["resourceVersion"] != str(self.version):
            raise ApiError(409, "the object has been modified", "Conflict")
        self.version += 1
        self.lease = copy.deepcopy(body)
        self.lease["metadata"]["resourceVersion"] = str(self.version)
        return copy.deepcopy(self.lease)

    @property
    def spec(self) -> dict[str, Any]:
        return dict((self.lease or {}).get("spec") or {})


SETTINGS = leader.LeaderElectionSettings(namespace="ns", lease_name="lease",
                                         lease_duration=15, renew_deadline=10, retry_period=2)


def _elector(api: FakeLeases, identity: str, clock: list[float]) -> Any:
    transport: Any = api
    return leader.LeaderElector.for_cluster(SETTINGS, transport, identity=identity,
                                            clock=lambda: clock[0])


def test_one_candidate_holds_the_lease_and_another_takes_over_only_when_it_expires() -> None:
    api, clock = FakeLeases(), [100.0]
    a, b = _elector(api, "a", clock), _elector(api, "b", clock)
    assert a._attempt() and a.is_leader() is False  # not leading until ``_lead``
    assert api.spec["holderIdentity"] == "a" and api.spec["leaseTransitions"] == 0
    assert api.spec["leaseDurationSeconds"] == 15
    assert api.requests == ["GET", "POST"]
    assert not b._attempt() and b.holder == "a"
    api.requests.clear()
    clock[0] += 2
    acquired = api.spec["acquireTime"]
    assert a._attempt()  # a renewal writes over the Lease a wrote: no read first
    assert api.requests == ["PUT"] and api.spec["acquireTime"] == acquired
    assert not b._attempt()  # b saw the Lease change: the lease runs from now
    clock[0] += 14
    assert not b._attempt()
    clock[0] += 1.5  # a stopped renewing 15 s (leaseDuration) ago, as b saw it
    assert b._attempt()
    assert api.spec["holderIdentity"] == "b" and api.spec["leaseTransitions"] == 1
    assert api.spec["acquireTime"] != acquired
    assert not a._attempt() and a.holder == "b"  # a's optimistic renewal conflicts


def test_a_released_lease_is_taken_over_at_once() -> None:
    api, clock = FakeLeases(), [0.0]
    a, b = _elector(api, "a", clock), _elector(api, "b", clock)
    assert a._attempt() and not b._attempt()
    assert a._release()
    assert api.spec["holderIdentity"] == "" and api.spec["leaseDurationSeconds"] == 1
    assert b._attempt() and api.spec["holderIdentity"] == "b"
    assert api.spec["leaseTransitions"] == 1
    assert not a._release()  # not the holder any more: nothing to give up


def test_an_unreachable_api_server_is_logged_once_not_per_retry(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, "policysched.service.leader")
    settings = leader.LeaderElectionSettings(namespace="ns", lease_name="lease")
    elector = leader.LeaderElector.for_cluster(settings, FakeLeases(), identity="replica-0")
    answers: list[object] = [OSError("connection refused")] * 5 + [True, True]

    def try_acquire_or_renew() -> bool:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return bool(answer)

    monkeypatch.setattr(elector, "try_acquire_or_renew", try_acquire_or_renew)
    assert [elector._attempt() for _ in range(7)] == [False] * 5 + [True, True]
    above_debug = [(r.levelno, r.getMessage()) for r in caplog.records
                   if r.levelno > logging.DEBUG]
    assert len(above_debug) == 2, above_debug
    assert above_debug[0] == (logging.WARNING, "lease ns/lease: lost connection to the API "
                                               "server: connection refused; retrying")
    assert above_debug[1][0] == logging.INFO
    assert above_debug[1][1].startswith("lease ns/lease: reconnected to the API server after ")
    assert above_debug[1][1].endswith("(5 attempts failed)")
