"""Hot reload with in-memory ConfigMaps and temporary directories (no API server)."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from policysched.cluster.transport import ApiError
from policysched.service.metrics import SchedulerMetrics
from policysched.service.reload import (
    DirectoryPoller,
    PolicyBundle,
    Rejection,
    Reloader,
    label_selector_string,
    warning_event,
)

POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: {name}
spec:
  filter:
  - name: ok
    expression: "{expression}"
"""
GOOD = "!node.unschedulable"
BAD = "node.nope +"  # a CEL syntax error on line 8


def policy(name: str, expression: str = GOOD) -> str:
    return POLICY.format(name=name, expression=expression)


def configmap(name: str, text: str, rv: str = "1", namespace: str = "ops") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                         "resourceVersion": rv},
            "data": {"policy.yaml": text}}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.reasons: list[str] = []

    def warn(self, configmap: Any, reason: str, note: str) -> None:
        self.reasons.append(reason)
        self.events.append((configmap["metadata"]["name"], note))


class Harness:
    def __init__(self, directories: list[str] | None = None,
                 configuration: dict[str, Any] | None = None) -> None:
        self.swapped: list[PolicyBundle] = []
        self.clock = FakeClock()
        self.metrics = SchedulerMetrics()
        self.recorder = Recorder()
        self.reloader = Reloader(directories or [], configuration, self.swapped.append,
                                 metrics=self.metrics, recorder=self.recorder, debounce=0,
                                 clock=self.clock)

    def metric(self, name: str, **labels: str) -> float | None:
        for family in text_string_to_metric_families(self.metrics.exposition().decode()):
            for s in family.samples:
                if s.name == name and s.labels == labels:
                    return s.value
        return None


def names(bundle: PolicyBundle | None) -> list[str]:
    assert bundle is not None
    return [p.name for p in bundle.policy_set.policies]


def test_a_valid_configmap_change_is_swapped_in_with_its_latency() -> None:
    h = Harness()
    h.reloader.upsert_configmap(configmap("a", policy("a")))
    initial = h.reloader.reload()
    assert isinstance(initial, PolicyBundle) and names(initial) == ["a"]
    assert initial.observed_at is None  # the initial load is not a reload
    assert h.metric("policysched_policy_reloads_total", result="success") == 0

    h.reloader.upsert_configmap(configmap("b", policy("b")), observed_at=h.clock.now)
    h.clock.now += 0.25
    bundle = h.reloader.reload()
    assert isinstance(bundle, PolicyBundle)
    assert names(bundle) == ["a", "b"] and h.swapped == [bundle]  # the initial one is returned
    assert list(bundle.frameworks) == ["policysched"]
    assert bundle.version != initial.version
    assert h.metric("policysched_policy_reloads_total", result="success") == 1
    assert h.metric("policysched_policy_reload_duration_seconds_sum") == pytest.approx(0.25)
    assert h.metric("policysched_active_policy_set_info", version=bundle.version) == 1
    assert h.reloader.readiness() is None


def test_an_invalid_change_is_rejected_and_the_last_good_set_stays() -> None:
    h = Harness()
    h.reloader.upsert_configmap(configmap("a", policy("a")))
    good = h.reloader.reload()
    h.reloader.upsert_configmap(configmap("a", policy("a", BAD), rv="2"))
    outcome = h.reloader.reload()
    assert isinstance(outcome, Rejection)
    assert h.reloader.active is good and h.swapped == []
    assert h.metric("policysched_policy_reloads_total", result="failure") == 1
    assert [name for name, _ in h.recorder.events] == ["a"]
    note = h.recorder.events[0][1]
    assert note.startswith("ops/a[policy.yaml]:8:")
    assert outcome.by_configmap == {"ops/a": (note,)}
    assert h.reloader.readiness() is None  # the last good set still serves

    h.reloader.upsert_configmap(configmap("b", policy("b")))  # blocked: the set stays bad
    assert isinstance(h.reloader.reload(), Rejection)
    assert len(h.recorder.events) == 1  # not repeated for the same revision

    h.reloader.upsert_configmap(configmap("a", policy("a"), rv="3"))  # fixed
    fixed = h.reloader.reload()
    assert names(fixed) == ["a", "b"] and h.reloader.last_rejection is None  # type: ignore[arg-type]


SELECTING = {"profiles": [{"schedulerName": "p", "policies": {
    "enabled": [{"name": "a"}], "disabled": [{"name": "*"}],
    "selector": {"matchLabels": {"policysched.io/profile": "p"}}}}]}


def test_a_policy_no_profile_enables_is_a_warning_event_on_its_changed_configmap(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "policysched.service.reload")
    h = Harness(configuration=SELECTING)
    h.reloader.upsert_configmap(configmap("a", policy("a")))
    h.reloader.upsert_configmap(configmap("catalogue", policy("spare")))
    initial = h.reloader.reload()
    assert isinstance(initial, PolicyBundle)
    assert h.recorder.events == []  # the initial set: logged only
    assert any("policy spare is loaded but enabled by no profile" in r.message
               for r in caplog.records)

    h.reloader.upsert_configmap(configmap("mine", policy("mine"), rv="2"))
    assert isinstance(h.reloader.reload(), PolicyBundle)  # active: it is valid
    assert h.recorder.reasons == ["PolicyNotEnabled"]  # on "mine" only, not the catalogue
    ((name, note),) = h.recorder.events
    assert name == "mine" and note == (
        "ops/mine[policy.yaml]:1:1: policy mine is loaded but enabled by no profile, so it "
        "does nothing: enable it in the configuration, give it the label "
        "policysched.io/profile: p in its metadata.labels (profile p selects it)")

    labelled = policy("mine").replace("  name: mine\n",
                                      "  name: mine\n  labels: {policysched.io/profile: p}\n")
    h.reloader.upsert_configmap(configmap("mine", labelled, rv="3"))
    bundle = h.reloader.reload()
    assert isinstance(bundle, PolicyBundle) and len(h.recorder.events) == 1
    assert [i.name for i in bundle.frameworks["p"].instances] == ["a", "mine"]


def test_a_start_with_an_invalid_configmap_starts_with_the_valid_ones() -> None:
    # e.g. a restart after a bad edit: no earlier set to keep, but scheduling must go on
    h = Harness()
    h.reloader.upsert_configmap(configmap("a", policy("a")))
    h.reloader.upsert_configmap(configmap("b", policy("b", BAD)))
    initial = h.reloader.reload()
    assert isinstance(initial, PolicyBundle) and names(initial) == ["a"]
    assert h.reloader.readiness() is None
    assert [name for name, _ in h.recorder.events] == ["b"]
    assert h.recorder.events[0][1].startswith("ops/b[policy.yaml]:8:")

    h.reloader.upsert_configmap(configmap("c", policy("c")))  # b still bad: rejected
    assert isinstance(h.reloader.reload(), Rejection) and h.swapped == []
    h.reloader.upsert_configmap(configmap("b", policy("b"), rv="2"))  # fixed
    assert names(h.reloader.reload()) == ["a", "b", "c"]


def test_a_start_with_nothing_valid_is_a_rejection() -> None:
    h = Harness(configuration={"profiles": [{"schedulerName": "p", "policies": {
        "enabled": [{"name": "b"}]}}]})
    h.reloader.upsert_configmap(configmap("b", policy("b", BAD)))
    assert isinstance(h.reloader.reload(), Rejection)  # without b, "b" is unknown
    assert h.reloader.active is None
    assert (h.reloader.readiness() or "").startswith("no valid policy set")


def test_same_content_is_not_swapped_again() -> None:
    h = Harness()
    h.reloader.upsert_configmap(configmap("a", policy("a")))
    h.reloader.reload()
    h.reloader.upsert_configmap(configmap("a", "# a comment\n" + policy("a"), rv="9"))
    assert h.reloader.reload() is None
    assert h.swapped == []
    assert h.reloader.active is not None and h.reloader.active.configmaps == {"ops/a": "9"}


def test_only_changed_sources_are_compiled_again() -> None:
    h = Harness()
    h.reloader.replace_configmaps([configmap("a", policy("a")), configmap("b", policy("b"))])
    first = h.reloader.reload()
    h.reloader.upsert_configmap(configmap("b", policy("b", "node.unschedulable"), rv="2"))
    second = h.reloader.reload()
    assert isinstance(first, PolicyBundle) and isinstance(second, PolicyBundle)
    assert second.policy_set.policy("a") is first.policy_set.policy("a")  # reused
    assert second.policy_set.policy("b") is not first.policy_set.policy("b")


def test_deleting_a_configmap_removes_its_policies() -> None:
    h = Harness()
    h.reloader.replace_configmaps([configmap("a", policy("a")), configmap("b", policy("b"))])
    h.reloader.reload()
    h.reloader.delete_configmap(configmap("a", ""))
    assert names(h.reloader.reload()) == ["b"]  # type: ignore[arg-type]


def test_a_profile_that_loses_its_policy_blames_the_changed_configmap() -> None:
    configuration = {"profiles": [{"schedulerName": "s", "policies": {
        "enabled": [{"name": "a"}], "disabled": [{"name": "*"}]}}]}
    h = Harness(configuration=configuration)
    h.reloader.replace_configmaps([configmap("a", policy("a")), configmap("b", policy("b"))])
    h.reloader.reload()
    h.reloader.upsert_configmap(configmap("a", policy("renamed"), rv="2"))
    outcome = h.reloader.reload()
    assert isinstance(outcome, Rejection)
    assert list(outcome.by_configmap) == ["ops/a"]
    assert "enables unknown policy a" in h.recorder.events[0][1]


def test_an_invalid_initial_set_is_not_ready(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(policy("p", BAD))
    h = Harness([str(tmp_path)])
    assert isinstance(h.reloader.reload(), Rejection)
    reason = h.reloader.readiness()
    assert reason is not None and reason.startswith(f"no valid policy set: {tmp_path}/p.yaml:8:")
    assert h.recorder.events == []  # files get a log line, not an Event
    assert h.metric("policysched_policy_reloads_total", result="failure") == 0  # initial


def test_directory_changes_are_polled_and_reloaded(tmp_path: Path) -> None:
    file = tmp_path / "p.yaml"
    file.write_text(policy("p"))
    h = Harness([str(tmp_path)])
    first = h.reloader.reload()
    seen: list[float] = []
    poller = DirectoryPoller([str(tmp_path)], seen.append, clock=h.clock)
    assert not poller.poll()
    file.write_text(policy("q"))
    os.utime(file, ns=(1, 1))  # a new mtime even on coarse clocks
    assert poller.poll() and seen == [h.clock.now]
    h.reloader.changed(seen[0])
    second = h.reloader.reload()
    assert names(first) == ["p"] and names(second) == ["q"]  # type: ignore[arg-type]


def test_the_worker_thread_reloads_after_a_change() -> None:
    done = threading.Event()
    bundles: list[PolicyBundle] = []

    def swap(bundle: PolicyBundle) -> None:
        bundles.append(bundle)
        done.set()

    reloader = Reloader([], None, swap, debounce=0.001)
    reloader.reload()
    done.clear()
    reloader.start()
    try:
        reloader.upsert_configmap(configmap("a", policy("a")))
        assert done.wait(5)
        assert names(bundles[-1]) == ["a"]
    finally:
        reloader.stop(5)


def test_label_selectors() -> None:
    assert label_selector_string(None) == "policysched.io/policy=true"
    assert label_selector_string({"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "t", "operator": "In", "values": ["x", "y"]},
        {"key": "u", "operator": "NotIn", "values": ["z"]},
        {"key": "v", "operator": "Exists"},
        {"key": "w", "operator": "DoesNotExist"},
    ]}) == "a=1,b=2,t in (x,y),u notin (z),v,!w"


def test_the_rejection_event_body() -> None:
    body = warning_event(configmap("a", ""), "PolicyRejected", "ops/a[k]:1:2: bad",
                         "policysched", "me")
    assert body["apiVersion"] == "events.k8s.io/v1"
    assert (body["type"], body["reason"], body["note"]) == ("Warning", "PolicyRejected",
                                                          "ops/a[k]:1:2: bad")
    assert body["regarding"] == {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "ops",
                                 "name": "a", "uid": "uid-a", "resourceVersion": "1"}
    assert body["metadata"]["namespace"] == "ops"
    assert body["eventTime"].endswith("Z") and body["reportingInstance"] == "me"


class FakeConfigMapApi:
    """The ConfigMaps of an API server that is down for the first ``failures`` requests,
    then lists ``items``; each watch streams the next of ``watches`` and ends (when none
    is left, it stays open, empty, until interrupted)."""

    def __init__(self, failures: int = 0, items: list[dict[str, Any]] | None = None,
                 watches: list[list[dict[str, Any]]] | None = None) -> None:
        self.failures = failures
        self.items = items or []
        self.watches = watches or []
        self.requests: list[tuple[str, str, dict[str, Any]]] = []

    def _fail(self) -> None:
        if len(self.requests) <= self.failures:
            raise ApiError(0, "connection refused")

    def call(self, method: str, path: str, *, query: dict[str, Any], **kwargs: Any) -> Any:
        self.requests.append((method, path, query))
        self._fail()
        return {"items": self.items, "metadata": {"resourceVersion": "5"}}

    def open(self, method: str, path: str, *, query: dict[str, Any], **kwargs: Any) -> Any:
        self.requests.append((method, path, query))
        self._fail()
        return _Stream(self.watches.pop(0) if self.watches else None)


class _Stream:
    """A streamed watch response: its lines, then (if none) an open, idle stream."""

    def __init__(self, lines: list[dict[str, Any]] | None) -> None:
        self.lines = lines
        self.closed = threading.Event()

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        if self.lines is not None:
            yield b"".join(json.dumps(line).encode() + b"\n" for line in self.lines)
            return
        self.closed.wait(10)

    def shutdown(self) -> None:
        self.closed.set()

    def close(self) -> None:
        self.closed.set()

    def release_conn(self) -> None:
        pass


def _watcher(api: FakeConfigMapApi, harness: Harness, selector: str = "") -> Any:
    from policysched.service import reload

    transport: Any = api
    return reload.ConfigMapWatcher(transport, reload.ConfigMapSource("ops", selector),
                                   harness.reloader)


def test_a_configmap_watch_outage_is_logged_once_not_per_retry(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from policysched.cluster.transport import Backoff
    from policysched.service import reload

    caplog.set_level(logging.INFO, "policysched.service.reload")
    monkeypatch.setattr(reload, "Backoff", lambda: Backoff(0.001, 0.01))
    watcher = _watcher(FakeConfigMapApi(failures=5), Harness())
    watcher.start()
    try:
        assert watcher.synced.wait(5)
    finally:
        watcher.stop(5)
    logged = [(r.levelno, r.getMessage()) for r in caplog.records
              if r.levelno >= logging.WARNING or "reconnected" in r.getMessage()]
    name = f"ConfigMap watch {watcher.source.name}"
    assert [level for level, _ in logged] == [logging.WARNING, logging.INFO], logged
    assert logged[0][1] == f"{name}: lost connection to the API server: connection refused; " \
        "retrying"
    assert logged[1][1].startswith(f"{name}: reconnected to the API server after ")
    assert logged[1][1].endswith("(5 attempts failed)")


def test_configmaps_are_listed_then_watched_through_the_transport() -> None:
    h = Harness()
    upserts: list[str] = []
    upsert = h.reloader.upsert_configmap
    h.reloader.upsert_configmap = lambda c, *args: (  # type: ignore[method-assign]
        upserts.append(c["metadata"]["name"]), upsert(c, *args))[-1]
    api = FakeConfigMapApi(items=[configmap("b", policy("b"))], watches=[
        [{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "6"}}},
         {"type": "ADDED", "object": configmap("a", policy("a"), rv="7")}],
        [{"type": "ERROR", "object": {"code": 410, "message": "too old"}}]])
    watcher = _watcher(api, h, "policysched.io/policy=true")
    watcher.start()
    try:
        assert watcher.synced.wait(5)
        deadline = time.monotonic() + 5
        while len(api.requests) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        watcher.stop(5)
    path = "/api/v1/namespaces/ops/configmaps"
    selector = "policysched.io/policy=true"
    assert [(m, p, q.get("watch"), q.get("resourceVersion"), q["labelSelector"])
            for m, p, q in api.requests[:5]] == [
        ("GET", path, None, None, selector),
        ("GET", path, "true", "5", selector),
        ("GET", path, "true", "7", selector),  # the server ended it: on from the last seen
        ("GET", path, None, None, selector),  # 410 Gone: listed again at once
        ("GET", path, "true", "5", selector)]
    assert upserts == ["a"]
    assert [c["metadata"]["name"] for c in h.reloader.configmaps()] == ["b"]  # the relist


def test_a_watch_the_server_ends_at_once_is_not_reopened_in_a_tight_loop() -> None:
    """A server (or proxy) that ends every watch at once without an event: the watcher
    backs off between watches (client-go's "very short watch") instead of spinning."""
    api = FakeConfigMapApi(watches=[[] for _ in range(10_000)])
    watcher = _watcher(api, Harness())
    watcher.start()
    try:
        assert watcher.synced.wait(5)
        time.sleep(0.6)
    finally:
        watcher.stop(5)
    watches = [q for _, _, q in api.requests if q.get("watch") == "true"]
    assert 1 <= len(watches) <= 3, len(watches)  # the first backoff is 0.5-0.75 s


# -- hostile input: limits, failures and the compile budget --------------------------------


def many_rules(name: str, rules: int, tag: str = "") -> str:
    text = "apiVersion: policysched.io/v1alpha1\nkind: SchedulingPolicy\n"
    text += f"metadata: {{name: {name}}}\nspec:\n  filter:\n" + "".join(
        f"  - {{name: r{i}, expression: '{i} >= 0{tag}'}}\n" for i in range(rules))
    return text


POISON = {
    "nesting": "a: " + "[" * 100_000 + "]" * 100_000 + "\n",  # RecursionError before
    "alias bomb": "l0: &l0 [" + ", ".join(["x"] * 99) + "]\nl1: &l1 [" + ", ".join(
        ["*l0"] * 99) + "]\nl2: [" + ", ".join(["*l1"] * 99) + "]\n",
    "too large": policy("big", "'" + "a" * (1 << 18) + "' != ''"),
}


def test_poison_configmaps_are_rejected_and_the_reload_thread_keeps_working() -> None:
    h = Harness()
    h.reloader.upsert_configmap(configmap("a", policy("a")))
    good = h.reloader.reload()
    swapped = threading.Event()

    def swap(bundle: PolicyBundle) -> None:
        h.swapped.append(bundle)
        swapped.set()

    h.reloader.swap = swap
    h.reloader.start()
    try:
        for i, (name, text) in enumerate(POISON.items(), start=1):
            h.reloader.upsert_configmap(configmap("poison", text, rv=str(i)))
            deadline = time.monotonic() + 5
            while len(h.recorder.events) < i and time.monotonic() < deadline:
                time.sleep(0.01)
            assert [n for n, _ in h.recorder.events] == ["poison"] * i, name
            assert h.metric("policysched_policy_reloads_total", result="failure") == i
            assert h.reloader.active is good
        nesting, bomb, large = (note for _, note in h.recorder.events)
        assert nesting.startswith("ops/poison[policy.yaml]:1:103: nested too deeply")
        assert bomb.startswith("ops/poison[policy.yaml]:2:")
        assert "YAML aliases expand the text" in bomb
        assert large.startswith("ops/poison[policy.yaml]:1:1: too large to read")
        h.reloader.upsert_configmap(configmap("poison", policy("fixed"), rv="9"))
        assert swapped.wait(5)
        assert names(h.swapped[-1]) == ["a", "fixed"]
    finally:
        h.reloader.stop(5)


def test_any_failure_while_loading_is_a_rejection_not_a_dead_reload(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from policysched.service import reload

    def load(configmap: dict[str, Any], *args: Any) -> Any:
        if configmap["metadata"]["name"] == "poison":
            raise MemoryError("out of memory")
        return real_load(configmap, *args)

    real_load = reload.load_configmap
    monkeypatch.setattr(reload, "load_configmap", load)
    h = Harness()
    h.reloader.upsert_configmap(configmap("a", policy("a")))
    good = h.reloader.reload()
    h.reloader.upsert_configmap(configmap("poison", policy("p"), rv="2"))
    outcome = h.reloader.reload()
    assert isinstance(outcome, Rejection) and h.reloader.active is good
    assert outcome.problems == ("cannot load the policies: MemoryError: out of memory",)
    assert h.recorder.events == [("poison", outcome.problems[0])]
    assert h.metric("policysched_policy_reloads_total", result="failure") == 1
    assert "policy change rejected" in caplog.text
    h.reloader.delete_configmap(configmap("poison", ""))
    h.reloader.upsert_configmap(configmap("b", policy("b")))
    assert names(h.reloader.reload()) == ["a", "b"]  # type: ignore[arg-type]


class TickingClock(FakeClock):
    """Advances by ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        super().__init__()
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_reload_is_rejected_once_compiling_exceeds_its_budget() -> None:
    configuration = {"policyLimits": {"compileTimeoutSeconds": 1}}
    swapped: list[PolicyBundle] = []
    clock = TickingClock(0.3)  # each expression compiled reads it once
    metrics, recorder = SchedulerMetrics(), Recorder()
    reloader = Reloader([], configuration, swapped.append, metrics=metrics,
                        recorder=recorder, debounce=0, clock=clock)
    reloader.upsert_configmap(configmap("a", many_rules("a", 6)))
    good = reloader.reload()  # the initial load is not bounded
    assert names(good) == ["a"]
    reloader.upsert_configmap(configmap("a", many_rules("a", 6, " && true"), rv="2"))
    outcome = reloader.reload()
    assert isinstance(outcome, Rejection) and reloader.active is good and swapped == []
    [(name, note)] = recorder.events
    assert (name, note) == ("a", (
        "ops/a[policy.yaml]:8:28: a/r2: compiling the changed policies took more than 1 s: "
        "stopped here (policyLimits.compileTimeoutSeconds in the SchedulerConfiguration)"))
    clock.step = 0.01
    reloader.changed()
    assert names(reloader.reload()) == ["a"] and len(swapped) == 1  # type: ignore[arg-type]


def test_the_limits_come_from_the_configuration() -> None:
    h = Harness(configuration={"policyLimits": {"maxRules": 2}})
    h.reloader.upsert_configmap(configmap("a", many_rules("a", 2)))
    assert isinstance(h.reloader.reload(), PolicyBundle)
    h.reloader.upsert_configmap(configmap("a", many_rules("a", 3), rv="2"))
    assert isinstance(h.reloader.reload(), Rejection)
    [(_, note)] = h.recorder.events
    assert note == ("ops/a[policy.yaml]:8:5: a/r2: too many rules: 3, more than 2 "
                    "(policyLimits.maxRules in the SchedulerConfiguration)")


TRIAL = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: trial
spec:
  enforcement: {enforcement}
  filter:
  - name: nowhere
    expression: "false"
    reason: node(s) refused by the trial
"""


def test_switching_audit_to_enforce_is_one_field_hot_reloaded() -> None:
    """The same ConfigMap with ``spec.enforcement`` changed: the rule that only reported
    now decides, for the pods scheduled after the swap."""
    from policysched.cluster.memory import MemoryBackend
    from policysched.framework.scheduler import Scheduler
    from policysched.model.clock import SimulatedClock

    from ..cache.objects_builder import make_node, make_pod

    h = Harness()
    h.reloader.upsert_configmap(configmap("trial", TRIAL.format(enforcement="Audit")))
    audited = h.reloader.reload()
    assert isinstance(audited, PolicyBundle)
    backend = MemoryBackend([make_node("n1"), make_pod("first", schedulerName="policysched")],
                            SimulatedClock(1000.0))
    scheduler = Scheduler(backend, audited.frameworks)
    scheduler.sync()
    assert scheduler.schedule_one()
    assert scheduler.records["default/first"].node == "n1"
    assert [e.reason for e in backend.events] == ["PolicyAudit", "Scheduled"]

    h.reloader.upsert_configmap(configmap("trial", TRIAL.format(enforcement="Enforce"),
                                          rv="2"), observed_at=h.clock.now)
    enforced = h.reloader.reload()
    assert isinstance(enforced, PolicyBundle) and h.swapped == [enforced]
    scheduler.set_profiles(enforced.frameworks)
    backend.add_object(make_pod("second", schedulerName="policysched"))
    scheduler.sync()
    assert scheduler.schedule_one()
    assert scheduler.records["default/second"].node is None
    assert backend.events[-1].message == ("0/1 nodes are available: 1 node(s) refused by "
                                          "the trial.")
