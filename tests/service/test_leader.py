"""``LeaderOnlyBackend``: binds without the Lease fail (as outcomes), other writes drop.
(Elections against a real API server: ``tests/e2e/test_reload_leader.py``.)"""

from __future__ import annotations

import logging

import pytest

from policysched.cluster.memory import MemoryBackend
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


class _Lock:
    identity = "replica-0"


def test_an_unreachable_api_server_is_logged_once_not_per_retry(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, "policysched.service.leader")
    settings = leader.LeaderElectionSettings(namespace="ns", lease_name="lease")
    elector = leader.LeaderElector(settings, _Lock())
    answers: list[object] = [OSError("connection refused")] * 5 + [True, True]

    def try_acquire_or_renew() -> bool:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return bool(answer)

    monkeypatch.setattr(elector._election, "try_acquire_or_renew", try_acquire_or_renew)
    assert [elector._attempt() for _ in range(7)] == [False] * 5 + [True, True]
    above_debug = [(r.levelno, r.getMessage()) for r in caplog.records
                   if r.levelno > logging.DEBUG]
    assert len(above_debug) == 2, above_debug
    assert above_debug[0] == (logging.WARNING, "lease ns/lease: lost connection to the API "
                                               "server: connection refused; retrying")
    assert above_debug[1][0] == logging.INFO
    assert above_debug[1][1].startswith("lease ns/lease: reconnected to the API server after ")
    assert above_debug[1][1].endswith("(5 attempts failed)")
