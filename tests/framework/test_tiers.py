"""Differential tests between the evaluation tiers: on random clusters and pods, the
vectorised tier (columns, partial evaluation, equivalence cache) must give every node the
same filter status and every feasible node the same total score as the scalar tier, and a
whole simulation must bind the same pods to the same nodes with the same messages.

The profile is the built-in default plus ``fixtures/tiers/tricky.yaml`` (overflow, division
by zero, errors under both failure policies, comprehensions on both sides, scores that are
not finite or not in 0..100). The same comparisons run on clusters of extreme quantities
(anything the API server accepts, up to 8Ei and beyond int64), where nothing may raise.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from policysched.cel.library import resource_quantity
from policysched.cel.parser import parse
from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.evaluator import ScalarEvaluator
from policysched.framework.scheduler import SCALAR, VECTORISED, Scheduler
from policysched.framework.status import Code
from policysched.framework.vectorised import (
    NODE_OBJECT_FIELDS,
    NodeEvaluator,
    _reads_node_fields,
)
from policysched.model.clock import SimulatedClock
from policysched.resources import BUILTIN_POLICIES

from . import filter_in_both_tiers

FIXTURES = Path(__file__).parent / "fixtures" / "tiers"
START = "2026-11-22T10:00:00Z"
ZONES = ("zone-a", "zone-b", "zone-c")


def engine() -> Any:
    return load_engine([str(BUILTIN_POLICIES), str(FIXTURES / "tricky.yaml")],
                       str(FIXTURES / "scheduler-config.yaml"))


# Quantities the API server accepts (any non-negative one), the cache saturates at int64
EXTREME = ("0", "1n", "1", "4", "8Gi", str(2**62), str(2**63 - 1), "8Ei", "16Ei", "1e19",
           "9223372036854775807m", "123456789.123456789123", "1e9999")
EXTREME_REQUESTS = ("0", "1n", "100m", "1Gi", str(2**62), "4Ei", "8Ei", "1e19",
                    "0.000000001234567891")


def random_node(rng: random.Random, i: int, extreme: bool = False) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": f"node-{i}"}
    if rng.random() < 0.9:
        labels["topology.kubernetes.io/zone"] = rng.choice(ZONES)
    if rng.random() < 0.5:
        labels["disk"] = rng.choice(("ssd", "hdd"))
    taints = []
    if rng.random() < 0.15:
        taints.append({"key": "dedicated", "value": "batch",
                       "effect": rng.choice(("NoSchedule", "PreferNoSchedule"))})
    images = []
    if rng.random() < 0.3:
        images.append({"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 700_000_000})
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": f"node-{i}", "creationTimestamp": START, "labels": labels},
        "spec": {"taints": taints, "unschedulable": rng.random() < 0.05},
        "status": {"allocatable": {"cpu": rng.choice(("1", "2", "4")),
                                   "memory": rng.choice(("2Gi", "8Gi")),
                                   "pods": str(rng.choice((3, 10, 110))),
                                   **({"example.com/dongle": "2"} if rng.random() < 0.3
                                      else {})},
                   "images": images},
    } if not extreme else {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": f"node-{i}", "creationTimestamp": START, "labels": labels},
        "spec": {"taints": taints},
        "status": {"allocatable": {r: rng.choice(EXTREME) for r in ("cpu", "memory", "pods")},
                   "images": [{"names": ["registry.k8s.io/pause:3.10"],
                               "sizeBytes": rng.choice((0, 2**62, 2**63 - 1))}]},
    }


def random_pod(rng: random.Random, i: int, node: str = "",
               extreme: bool = False) -> dict[str, Any]:
    app = rng.choice(("web", "db", "cache"))
    labels = {"app": app}
    if rng.random() < 0.2:
        labels.update({"tricky": "yes", "tier": "x"})
    requests = {"cpu": rng.choice(("100m", "500m", "1500m")),
                "memory": rng.choice(("100Mi", "1Gi"))}
    if extreme:
        requests = {r: rng.choice(EXTREME_REQUESTS) for r in requests if rng.random() < 0.8}
    spec: dict[str, Any] = {
        "schedulerName": "policysched",
        "priority": rng.choice((0, 0, 5, 20)),
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": requests}}],
    }
    if rng.random() < 0.1:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    if rng.random() < 0.15:  # a second container without requests, counted non-zero
        spec["containers"].append({"name": "helper", "image": "registry.k8s.io/pause:3.10"})
    if rng.random() < 0.15:  # a sidecar (its host port held) and an init container
        spec["initContainers"] = [
            {"name": "proxy", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": rng.choice(("50m", "1"))}},
             "ports": [{"containerPort": 15001, "hostPort": rng.choice((0, 15001))}]},
            {"name": "setup", "resources": {"requests": {"memory": rng.choice(("1Mi", "3Gi"))}}}]
    if rng.random() < 0.1:
        spec["containers"][0]["resources"]["requests"]["example.com/dongle"] = "1"
    if rng.random() < 0.1:
        spec["overhead"] = {"cpu": "250m"}
    if rng.random() < 0.1:
        spec["resources"] = {"requests": {"cpu": rng.choice(("200m", "3"))}}
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"disk": rng.choice(("ssd", "hdd"))}
    if rng.random() < 0.2:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    affinity: dict[str, Any] = {}
    if rng.random() < 0.2:
        affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In",
                 "values": [rng.choice(ZONES)]}]}}]}
    if rng.random() < 0.15:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname",
             "labelSelector": {"matchLabels": {"app": app}}}]}
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.2:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
            "labelSelector": {"matchLabels": {"app": app}}}]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": "default", "uid": f"uid-{i}",
                         "creationTimestamp": START, "labels": labels},
            "spec": spec}


def random_cluster(seed: int, nodes: int, bound: int, pending: int,
                   extreme: bool = False) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    objects = [random_node(rng, i, extreme) for i in range(nodes)]
    objects += [random_pod(rng, i, f"node-{rng.randrange(nodes)}", extreme)
                for i in range(bound)]
    objects += [random_pod(rng, bound + i, extreme=extreme) for i in range(pending)]
    return objects


def scheduler(objects: list[dict[str, Any]], evaluation: str, loaded: Any = None
              ) -> Scheduler:
    loaded = loaded or engine()
    backend = MemoryBackend(objects, SimulatedClock(1_795_000_000))
    s = Scheduler(backend, loaded.frameworks, replace(loaded.settings, evaluation=evaluation))
    s.sync()
    assert not s.unserved  # every object is one the API server accepts
    return s


def simulate(s: Scheduler) -> dict[str, tuple[str | None, str | None, int]]:
    """Schedule until nothing changes; (node, message, attempts) per pod."""
    for _ in range(400):
        if not s.schedule_one():
            s.advance()
            if not s.schedule_one():
                break
        s.sync()
    return {k: (r.node, r.message, r.attempts) for k, r in s.records.items()}


@pytest.mark.parametrize(("seed", "extreme"), [(seed, False) for seed in range(6)]
                         + [(seed, True) for seed in range(3)])
def test_every_node_gets_the_same_status_and_score_in_both_tiers(
        seed: int, extreme: bool, caplog: pytest.LogCaptureFixture) -> None:
    s = scheduler(random_cluster(seed, nodes=40, bound=30, pending=40, extreme=extreme),
                  VECTORISED)
    assert isinstance(s.evaluator, NodeEvaluator)
    fwk = s.profiles["policysched"]
    compared = 0
    for _ in range(40):
        snapshot = s.cache.snapshot()
        for pod in s.cache.pending_pods()[:8]:
            found = filter_in_both_tiers(s, fwk, pod, snapshot)
            if found is None:
                continue
            state, scalar_state, statuses = found
            compared += len(statuses)
            feasible = [r for r, status in enumerate(statuses) if status.is_success]
            if len(feasible) > 1:
                fwk.run_pre_score(state)
                fwk.run_pre_score(scalar_state)
                status, totals, parts = s.evaluator.score(fwk, state, snapshot,
                                                          np.array(feasible))
                want, want_totals, want_parts = ScalarEvaluator().score(
                    fwk, scalar_state, snapshot, np.array(feasible))
                assert status == want, pod.key
                if status.is_success:
                    assert totals.tolist() == want_totals.tolist(), pod.key
                    # each policy's part too, and the parts add up to the total
                    assert {p: v.tolist() for p, v in parts.items()} == \
                        {p: v.tolist() for p, v in want_parts.items()}, pod.key
                    assert sum(parts.values()).tolist() == want_totals.tolist(), pod.key
        if not s.schedule_one():
            break
        s.sync()
    assert compared > 1000
    # the columns handled every value themselves: no rule fell back to its closure
    assert "vectorised evaluation failed" not in caplog.text


@pytest.mark.parametrize(("seed", "extreme"), [(seed, False) for seed in range(4)]
                         + [(seed, True) for seed in range(3)])
def test_a_simulation_binds_the_same_pods_to_the_same_nodes(seed: int, extreme: bool) -> None:
    scalar, vectorised = (
        simulate(scheduler(random_cluster(100 + seed, nodes=30, bound=20, pending=60,
                                          extreme=extreme), evaluation))
        for evaluation in (SCALAR, VECTORISED))
    assert any(node for node, _, _ in scalar.values())
    assert any(node is None for node, _, _ in scalar.values())  # some did not fit
    assert vectorised == scalar
    # the built-in policies evaluate on anything the API server accepts: the only rule
    # errors are the tricky policy's own
    errors = {m.split(":")[0] for _, m, _ in scalar.values() if m and m.startswith("policy ")}
    assert all(e.startswith("policy tricky ") for e in errors), errors


def engine_with(tmp_path: Path, policy: str) -> Any:
    """The built-in profile plus one policy (YAML text) instead of the tricky one."""
    (tmp_path / "policy.yaml").write_text(policy)
    name = yaml.safe_load(policy)["metadata"]["name"]
    config = tmp_path / "config.yaml"
    # policySources are relative to the configuration file: the built-in library's path
    config.write_text((FIXTURES / "scheduler-config.yaml").read_text().replace(
        "- name: tricky", f"- name: {name}").replace(
        '"../../../../policies"', json.dumps(str(BUILTIN_POLICIES))))
    return load_engine([str(BUILTIN_POLICIES), str(tmp_path / "policy.yaml")], str(config))


def small_cluster(memory: str = "8Gi", pods: int = 20) -> list[dict[str, Any]]:
    """Three nodes, the last with ``memory``; ``pods`` pods of 100m / 100Mi, the even ones
    labelled ``poison``."""
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"},
         "status": {"allocatable": {"cpu": "4", "memory": m, "pods": "110"}}}
        for i, m in enumerate(("8Gi", "8Gi", memory))]
    for i in range(pods):
        objects.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": "default", "uid": f"uid-{i}",
                         "creationTimestamp": START,
                         "labels": {"poison": "yes"} if i % 2 == 0 else {}},
            "spec": {"schedulerName": "policysched", "containers": [{
                "name": "c", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}})
    return objects


NON_FINITE = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: poison}
spec:
  match: "'poison' in pod.labels"
  score:
  - name: not-finite
    expression: double(node.podCount) / 0.0
    normalize: max
"""


def test_a_non_finite_score_fails_only_the_pods_its_policy_matches(tmp_path: Path) -> None:
    loaded = engine_with(tmp_path, NON_FINITE)
    scalar, vectorised = (simulate(scheduler(small_cluster(), evaluation, loaded))
                          for evaluation in (SCALAR, VECTORISED))
    assert vectorised == scalar
    prefix = ("policy poison rule not-finite: spec.score[0].expression "
              "`double(node.podCount) / 0.0`: returns an invalid score ")
    for key, (node, message, _) in scalar.items():
        if int(key.rsplit("-", 1)[1]) % 2:  # not matched: bound
            assert node is not None and message is None, key
        else:  # NaN on an empty node, +Inf on the others: an Error for the pod
            assert node is None, key
            assert message in (prefix + "NaN on node node-0, it should be a finite number",
                               prefix + "+Inf on node node-0, it should be a finite number")


GROWING = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: growing}
spec:
  score:
  - name: out-of-range-once-crowded
    expression: "node.podCount * 30 + (node.name == 'node-2' ? 1 : 0)"
"""


def test_a_score_kept_between_pods_follows_a_node_out_of_range(tmp_path: Path) -> None:
    """The vectorised tier keeps a score rule's weighted scores from one pod to the next,
    updating the rows that changed: once the node the pods go to scores beyond 100, the
    next pod fails naming it, as in the scalar tier."""
    loaded = engine_with(tmp_path, GROWING)
    objects = small_cluster(pods=8)
    for obj in objects[3:5]:  # two pods on node-1 already: it scores 60
        obj["spec"]["nodeName"] = "node-1"
    scalar, vectorised = (simulate(scheduler(objects, evaluation, loaded))
                          for evaluation in (SCALAR, VECTORISED))
    assert vectorised == scalar
    assert [scalar[f"default/pod-{i}"][0] for i in (2, 3)] == ["node-1", "node-1"]  # 90
    for i in range(4, 8):  # then 120
        assert scalar[f"default/pod-{i}"][1] == (
            "policy growing rule out-of-range-once-crowded: spec.score[0].expression "
            "`node.podCount * 30 + (node.name == 'node-2' ? 1 : 0)`: returns an invalid "
            "score 120 on node node-1, it should in the range of [0, 100] after normalizing")


RUNNING_GUARD = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: running-guard}
spec:
  filter:
  - name: no-running-guard
    expression: "!nodePods.exists(p, p.name == 'guard' && p.status.?phase.orValue('') == 'Running')"
    reason: a running guard
"""


@pytest.mark.parametrize("tier", [SCALAR, VECTORISED])
def test_a_status_update_of_a_bound_pod_is_seen_by_rules_reading_its_node_pods(
        tier: str, tmp_path: Path) -> None:
    """A status update of a bound pod does not change its node's view (nothing counted
    changes), but it does change ``nodePods``: a rule reading a pod's phase sees it, also
    for a pod of the same template as one scheduled before it."""
    nodes, guard, first, second = small_cluster(pods=3)[2:]
    guard["metadata"]["name"] = "guard"
    guard["spec"]["nodeName"] = "node-2"
    for pod in (first, second):
        pod["metadata"]["labels"] = {}
        pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-2"}
    nodes["metadata"]["labels"] = {"kubernetes.io/hostname": "node-2"}
    s = scheduler([nodes, guard, first], tier, engine_with(tmp_path, RUNNING_GUARD))
    assert s.schedule_one()
    s.sync()
    assert s.records["default/pod-1"].node == "node-2"
    backend = s.backend
    assert isinstance(backend, MemoryBackend)
    stored = backend.pod("default/guard")
    assert stored is not None
    backend.update_object({**stored, "status": {"phase": "Running"}})
    backend.add_object(second)
    s.sync()
    assert s.schedule_one()
    s.sync()
    record = s.records["default/pod-2"]
    assert record.node is None and "a running guard" in str(record.message)


@pytest.mark.parametrize("memory", ["8Ei", "16Ei", "1e19", str(2**63 - 1), "1e9999"])
def test_a_node_with_memory_beyond_int64_takes_pods_like_any_other(memory: str) -> None:
    scalar, vectorised = (simulate(scheduler(small_cluster(memory), evaluation))
                          for evaluation in (SCALAR, VECTORISED))
    assert vectorised == scalar
    assert all(node is not None for node, _, _ in scalar.values()), scalar
    assert any(node == "node-2" for node, _, _ in scalar.values())


UNEXPECTED = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: odd}
spec:
  match: "'poison' in pod.labels"
  filter:
  - name: node-side
    expression: sign(quantity(node.labels['size'])) >= 0
  score:
  - name: pod-side
    expression: node.podCount + quantity(pod.labels['poison']).asInteger()
"""


@pytest.mark.parametrize("fails", ["node", "pod"])
def test_any_exception_in_a_rule_is_an_error_for_the_pods_it_applies_to(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: str) -> None:
    # an exception that is no CEL error (here from a library function), on one node or
    # for one pod, is an Error naming the rule for the pods the rule applies to, in both tiers
    real = resource_quantity.parse

    def odd(text: str) -> resource_quantity.Quantity:
        if text == "13":
            raise ZeroDivisionError("odd object")
        return real(text)

    monkeypatch.setattr(resource_quantity, "parse", odd)
    loaded = engine_with(tmp_path, UNEXPECTED)
    objects = small_cluster()
    for i, obj in enumerate(objects[:3]):
        obj["metadata"]["labels"] = {"size": "13" if fails == "node" and i == 1 else "1"}
    for obj in objects[3:]:
        if "poison" in obj["metadata"]["labels"]:
            obj["metadata"]["labels"]["poison"] = "13" if fails == "pod" else "1"
    scalar, vectorised = (simulate(scheduler(objects, evaluation, loaded))
                          for evaluation in (SCALAR, VECTORISED))
    assert vectorised == scalar
    if fails == "node":
        want = ("policy odd rule node-side: spec.filter[0].expression "
                "`sign(quantity(node.labels['size'])) >= 0`: unexpected ZeroDivisionError: "
                "odd object")
    else:
        want = ("policy odd rule pod-side: spec.score[0].expression "
                "`node.podCount + quantity(pod.labels['poison']).asInteger()`: "
                "unexpected ZeroDivisionError: odd object")
    for key, (node, message, _) in scalar.items():
        if int(key.rsplit("-", 1)[1]) % 2:
            assert node is not None, key
        else:
            assert node is None and message == want, key


DYNAMIC_REASON = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: dynamic}
spec:
  filter:
  - name: room
    expression: node.name != 'node-0' && node.name != 'node-1'
    reason: static reason
    messageExpression: "'no room for ' + pod.name + ' on ' + node.name"
  - name: broken-message
    expression: node.name != 'node-2'
    reason: the static reason when the expression fails
    messageExpression: "pod.labels['absent']"
"""


def test_a_filter_reason_is_its_message_expression_on_that_node_in_both_tiers(
        tmp_path: Path) -> None:
    loaded = engine_with(tmp_path, DYNAMIC_REASON)
    reasons = []
    for evaluation in (SCALAR, VECTORISED):
        s = scheduler(small_cluster(pods=1), evaluation, loaded)
        fwk = s.profiles["policysched"]
        snapshot = s.cache.snapshot()
        state = s.cycle_state(s.cache.pending_pods()[0], snapshot)
        if not isinstance(s.evaluator, NodeEvaluator):
            reasons.append([fwk.run_filter(state, n).message for n in snapshot.nodes])
        else:
            _, _, status_of = s.evaluator.filter(fwk, state, snapshot)
            reasons.append([status_of(row).message for row in range(len(snapshot.nodes))])
    assert reasons[0] == reasons[1] == [
        "no room for pod-0 on node-0", "no room for pod-0 on node-1",
        "the static reason when the expression fails"]
    scalar, vectorised = (simulate(scheduler(small_cluster(pods=1), evaluation, loaded))
                          for evaluation in (SCALAR, VECTORISED))
    assert vectorised == scalar
    message = scalar["default/pod-0"][1]
    assert message is not None and "1 no room for pod-0 on node-0" in message, message


REASONS = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: several}
spec:
  filter:
  - name: checks
    reasons: |
      (node.name == 'node-0' ? [] : ['not node-0']) +
      (node.name == 'node-2' ? ['node-2 too'] : []) +
      (node.name == 'node-1' && 'poison' in pod.labels ? dyn([1]) : [])
    unresolvableExpression: |
      'poison' in pod.labels ? node.labels['absent'] == '' : node.name == 'node-2'
  - name: skipped
    reasons: "[pod.labels['absent']]"
    failurePolicy: Ignore
  - name: static
    reasons: "node.name == 'node-0' ? ['static'] : []"
    unresolvableExpression: "pod.labels['absent'] == ''"
    unresolvable: true
    failurePolicy: Ignore
"""


@pytest.mark.parametrize("poison", [False, True])
def test_a_filter_with_reasons_gives_each_node_its_reasons_in_both_tiers(
        tmp_path: Path, poison: bool) -> None:
    loaded = engine_with(tmp_path, REASONS)
    got = []
    for evaluation in (SCALAR, VECTORISED):
        s = scheduler(small_cluster(pods=2), evaluation, loaded)
        fwk = s.profiles["policysched"]
        snapshot = s.cache.snapshot()
        pod = s.cache.pending_pods()[0 if poison else 1]
        state = s.cycle_state(pod, snapshot)
        if not isinstance(s.evaluator, NodeEvaluator):
            got.append([fwk.run_filter(state, n) for n in snapshot.nodes])
        else:
            _, _, status_of = s.evaluator.filter(fwk, state, snapshot)
            got.append([status_of(row) for row in range(len(snapshot.nodes))])
    assert got[0] == got[1]
    node_0, node_1, node_2 = got[0]
    # node-0 passes `checks`, `skipped` fails there (ignored: it passes), and `static`'s
    # unresolvableExpression fails (ignored: `unresolvable` applies)
    assert (node_0.code, node_0.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("static",))
    if poison:  # a list of the wrong type, and an unresolvableExpression that fails
        assert node_1.code is Code.ERROR
        assert "must evaluate to a list of strings, got ['not node-0', 1]" in node_1.message
        assert node_2.code is Code.ERROR and "no such key: absent" in node_2.message
    else:
        assert (node_1.code, node_1.reasons) == (Code.UNSCHEDULABLE, ("not node-0",))
        assert (node_2.code, node_2.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                 ("not node-0", "node-2 too"))


LABELLED = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: labelled}
spec:
  filter:
  - name: open
    expression: node.labels.?tier.orValue('') != 'off'
    reason: node is off
  score:
  - name: rank
    expression: "node.labels.?rank.orValue('') == 'high' ? 100 : 0"
"""


def test_results_kept_for_a_changed_node_follow_its_column_values(tmp_path: Path) -> None:
    """Pods of one template reuse the rules' results of the previous pod on every node
    whose columns did not change: a node whose labels change between two pods (a Node
    update) is evaluated again, one whose change leaves the columns as they were (a pod
    bound there, an unread label) keeps its results — the same decisions as the scalar
    tier, node by node."""
    loaded = engine_with(tmp_path, LABELLED)
    one_template = [o for o in small_cluster(pods=24) if not o["metadata"].get("labels")]
    schedulers = {evaluation: scheduler(one_template, evaluation, loaded)
                  for evaluation in (SCALAR, VECTORISED)}
    for cycle in range(12):
        for s in schedulers.values():
            for i in range(3):  # a Node update on every node, changing one column or none
                node = s.backend.get("Node", f"node-{i}")
                assert node is not None
                labels = node["metadata"].setdefault("labels", {})
                labels["unread"] = str(cycle)
                if i == cycle % 3:
                    labels["tier"] = "on" if labels.get("tier") == "off" else "off"
                if i == (cycle + 1) % 3:
                    labels["rank"] = "high" if labels.get("rank") != "high" else "low"
                s.backend.update_object(node)
            s.sync()
            assert s.schedule_one()
            s.sync()
    scalar, vectorised = ([(b.pod, b.node) for b in s.backend.bindings]
                          for s in schedulers.values())
    assert vectorised == scalar
    assert len(scalar) == 10 and len({node for _, node in scalar}) == 3  # 2 found none


@pytest.mark.parametrize(("part", "objects_only", "view_only"), [
    ("node.labels['zone']", True, True),
    ("node.taints.exists(t, t.effect == 'NoSchedule')", True, True),
    ("node.allocatable.cpu - 1", True, True),
    ("has(node.spec.podCIDR) && node.name != ''", True, True),
    ("node.free.cpu", False, True),  # the node's pods change it
    ("node.podCount", False, True),
    ("has(node.usedPorts) ? node.usedPorts.size() : 0", False, True),
    ("nodePods.size()", False, False),  # a pod's status update changes nodePods
    ("nodePods.exists(p, p.status.phase == 'Running')", False, False),
    ("node", False, False),  # the whole view, requested and all
    ("node['free']", False, False),  # not followed
    ("[node].exists(n, n.labels.size() > 0)", False, False),
    ("node.labels.exists(node, node == 'a')", False, False),  # binds the name
])
def test_a_node_part_reads_the_node_object_or_view_only_when_it_reads_only_their_fields(
        part: str, objects_only: bool, view_only: bool) -> None:
    assert _reads_node_fields(parse(part), NODE_OBJECT_FIELDS) is objects_only
    assert _reads_node_fields(parse(part)) is view_only


def test_a_bind_re_evaluates_only_the_bound_node_of_the_rules_reading_its_pods(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Pods of one template, in a cluster without pod affinity: after a bind, a rule that
    reads only Node objects (taints, cordon, images) keeps its results on every node without
    looking at which nodes changed, and
    one reading the node's pods evaluates its remainder on the bound node alone — an
    aggregate's rule too, with this cycle's aggregate, never falling back to its whole
    closure. The decisions are the scalar tier's."""
    objects = [o for o in small_cluster(pods=9) if not o["metadata"].get("labels")]
    schedulers = {evaluation: scheduler(objects, evaluation)
                  for evaluation in (SCALAR, VECTORISED)}
    vectorised = schedulers[VECTORISED]
    assert vectorised.schedule_one()  # the first pod evaluates every rule on every node
    vectorised.sync()
    rows: dict[str, list[list[int]]] = {}
    closure: list[str] = []
    checked: set[str] = set()
    run, scalar_rows = NodeEvaluator._run, NodeEvaluator._scalar_rows
    affected = NodeEvaluator._affected

    def spy_affected(self: NodeEvaluator, plan: Any, stale: Any) -> Any:
        checked.add(plan.rule.qualified_name)
        return affected(self, plan, stale)

    def spy_run(self: NodeEvaluator, plan: Any, state: Any, snapshot: Any, known: Any,
                at: Any, filter_rows: bool) -> None:
        if at is not None:
            rows.setdefault(plan.rule.qualified_name, []).append(at.tolist())
        run(self, plan, state, snapshot, known, at, filter_rows)

    def spy_scalar(self: NodeEvaluator, plan: Any, state: Any, snapshot: Any,
                   at: list[int], filter_rows: bool) -> None:
        if at:
            closure.append(plan.rule.qualified_name)
        scalar_rows(self, plan, state, snapshot, at, filter_rows)

    monkeypatch.setattr(NodeEvaluator, "_affected", spy_affected)
    monkeypatch.setattr(NodeEvaluator, "_run", spy_run)
    monkeypatch.setattr(NodeEvaluator, "_scalar_rows", spy_scalar)
    while vectorised.schedule_one():
        vectorised.sync()
    for name in ("taint-toleration/tolerated", "node-unschedulable/not-cordoned",
                 "image-locality/image-locality"):
        assert name not in checked  # not even which nodes changed
    bound = [vectorised.cache.snapshot().index[b.node] for b in vectorised.backend.bindings]
    for name in ("node-resources-fit/fits-request", "node-resources-fit/least-allocated",
                 "inter-pod-affinity/existing-pods-anti-affinity"):
        assert rows[name] == [[row] for row in bound[:-1]]
    assert not [name for name in closure if not name.startswith("tricky/")]  # (errors)
    simulate(schedulers[SCALAR])
    assert [(b.pod, b.node) for b in vectorised.backend.bindings] == \
        [(b.pod, b.node) for b in schedulers[SCALAR].backend.bindings]
