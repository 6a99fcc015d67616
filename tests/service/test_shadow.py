"""What ``run --shadow`` reports: the JSON-lines file, the metric, ``/shadow``; the loop
running a ``ShadowScheduler`` on a read-only backend; the options ``run`` refuses."""

from __future__ import annotations

import json
import threading
import urllib.request
from functools import partial
from pathlib import Path

import pytest

from policysched.commands.loading import load_engine
from policysched.errors import UserError
from policysched.framework.shadow import (
    AGREE,
    DIFFER,
    Judgment,
    ReadOnlyBackend,
    ShadowScheduler,
    ShadowSettings,
    Verdict,
)
from policysched.model.objects import pod_info
from policysched.service.loop import SchedulingLoop
from policysched.service.main import SHADOW_NO_LEADER, run
from policysched.service.metrics import SchedulerMetrics
from policysched.service.server import HealthServer
from policysched.service.shadow import SHADOW_PATH, ShadowOptions, ShadowReport

from ..cache.objects_builder import make_node, make_pod
from ..cluster.polling import wait_for
from .test_loop import LiveMemoryBackend
from .test_metrics import value


def judgment(pod: str, result: str, node: str = "a") -> Judgment:
    return Judgment(f"default/{pod}", f"uid-{pod}", "default-scheduler", "policysched",
                    Verdict("a", ("a",)), node, "", result, 1_000.0, 0.25)


def test_each_judgment_is_a_report_line_a_metric_and_part_of_the_summary(
        tmp_path: Path) -> None:
    metrics = SchedulerMetrics()
    path = tmp_path / "reports" / "shadow.jsonl"
    report = ShadowReport(metrics, str(path))
    report.record(judgment("p1", AGREE))
    report.record(judgment("p2", DIFFER, node="b"))
    report.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[1] == {
        "pod": "default/p2", "uid": "uid-p2", "schedulerName": "default-scheduler",
        "profile": "policysched", "result": "differ", "at": 1000.0, "pendingSeconds": 0.25,
        "actual": {"node": "b"}, "shadow": {"node": "a", "best": ["a"]}}
    assert value(metrics, "policysched_shadow_decisions_total", result="differ",
                 profile="policysched") == 1.0
    summary = report.summary()
    assert (summary["judged"], summary["agreement"]) == (2, 0.5)
    assert summary["results"] == {"agree": 1, "differ": 1, "would_reject": 0,
                                  "would_bind": 0, "error": 0}
    assert summary["differences"] == [lines[1]]  # agreements are only counted


def test_the_summary_is_served_on_shadow() -> None:
    metrics = SchedulerMetrics()
    report = ShadowReport(metrics)
    server = HealthServer("127.0.0.1:0", metrics)
    server.pages[SHADOW_PATH] = report.page
    server.start()
    try:
        report.record(judgment("p1", AGREE))
        with urllib.request.urlopen(server.url + SHADOW_PATH, timeout=5) as response:
            assert response.headers["Content-Type"] == "application/json"
            body = json.loads(response.read())
    finally:
        server.stop()
    assert (body["judged"], body["agreement"], body["report"]) == (1, 1.0, None)


def test_a_report_that_cannot_be_opened_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match="cannot open the shadow report"):
        ShadowReport(SchedulerMetrics(), str(tmp_path / "file" / "shadow.jsonl"))


def test_a_shadow_takes_no_lease() -> None:
    with pytest.raises(UserError) as raised:
        run(None, None, (), True, shadow=ShadowOptions(ShadowSettings()))
    assert str(raised.value) == SHADOW_NO_LEADER


def test_the_loop_runs_the_shadow_on_a_read_only_backend() -> None:
    """Another scheduler (here: the test) binds the pods; the loop's shadow judges each,
    and writes nothing (no Event, no condition, no binding of its own)."""
    engine = load_engine([], None)
    pods = [make_pod(f"p{i}", cpu="100m", uid=f"u{i}", schedulerName="default-scheduler")
            for i in range(5)]
    backend = LiveMemoryBackend([make_node("n1"), *pods])
    judgments: list[Judgment] = []
    loop = SchedulingLoop(engine, lambda: backend, wrap_backend=ReadOnlyBackend,
                          make_scheduler=partial(ShadowScheduler, shadow=ShadowSettings(),
                                                 on_judgment=judgments.append))
    thread = threading.Thread(target=loop.run_until, daemon=True)
    thread.start()
    try:
        wait_for(lambda: loop.scheduler is not None and len(loop.scheduler.watched) == 5,
                 timeout=10.0)
        for i in range(5):
            backend.bind(pod_info(backend.pod(f"default/p{i}")), "n1")  # type: ignore[arg-type]
        backend.wake()
        wait_for(lambda: len(judgments) == 5, timeout=10.0)
    finally:
        loop.stop()
        thread.join(5)
    assert {j.result for j in judgments} == {AGREE}
    assert backend.events == [] and len(backend.bindings) == 5
    assert loop.errors == 0
