"""Differential tests between the evaluation tiers: on random clusters and pods, the
vectorised tier (columns, partial evaluation, equivalence cache) must give every node the
same filter status and every feasible node the same total score as the scalar tier, and a
whole simulation must bind the same pods to the same nodes with the same messages.

The profile is the built-in default plus ``fixtures/tiers/tricky.yaml`` (overflow, division
by zero, errors under both failure policies, comprehensions on both sides).
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from policysched.cluster.clock import SimulatedClock
from policysched.cluster.memory import MemoryBackend
from policysched.framework.scheduler import SCALAR, VECTORISED, Scheduler
from policysched.inputs import load_engine
from policysched.profiles import BUILTIN_POLICIES

FIXTURES = Path(__file__).parent / "fixtures" / "tiers"
START = "2026-11-22T10:00:00Z"
ZONES = ("zone-a", "zone-b", "zone-c")


def engine() -> Any:
    return load_engine([str(BUILTIN_POLICIES), str(FIXTURES / "tricky.yaml")],
                       str(FIXTURES / "scheduler-config.yaml"))


def random_node(rng: random.Random, i: int) -> dict[str, Any]:
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
                                   "pods": str(rng.choice((3, 10, 110)))},
                   "images": images},
    }


def random_pod(rng: random.Random, i: int, node: str = "") -> dict[str, Any]:
    app = rng.choice(("web", "db", "cache"))
    labels = {"app": app}
    if rng.random() < 0.2:
        labels.update({"tricky": "yes", "tier": "x"})
    spec: dict[str, Any] = {
        "schedulerName": "policysched",
        "priority": rng.choice((0, 0, 5, 20)),
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {
                            "cpu": rng.choice(("100m", "500m", "1500m")),
                            "memory": rng.choice(("100Mi", "1Gi"))}}}],
    }
    if rng.random() < 0.1:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
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


def random_cluster(seed: int, nodes: int, bound: int, pending: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    objects = [random_node(rng, i) for i in range(nodes)]
    objects += [random_pod(rng, i, f"node-{rng.randrange(nodes)}") for i in range(bound)]
    objects += [random_pod(rng, bound + i) for i in range(pending)]
    return objects


def scheduler(objects: list[dict[str, Any]], evaluation: str) -> Scheduler:
    loaded = engine()
    backend = MemoryBackend(objects, SimulatedClock(1_795_000_000))
    s = Scheduler(backend, loaded.frameworks, replace(loaded.settings, evaluation=evaluation))
    s.sync()
    return s


@pytest.mark.parametrize("seed", range(6))
def test_every_node_gets_the_same_status_and_score_in_both_tiers(seed: int) -> None:
    s = scheduler(random_cluster(seed, nodes=40, bound=30, pending=40), VECTORISED)
    assert s.evaluator is not None
    fwk = s.profiles["policysched"]
    compared = 0
    for _ in range(40):
        snapshot = s.cache.snapshot()
        for pod in s.cache.pending_pods()[:8]:
            state = s.cycle_state(pod, snapshot)
            if not fwk.run_pre_filter(state)[0].is_success:
                continue
            _, _, status_of = s.evaluator.filter(fwk, state, snapshot)
            scalar_state = s.cycle_state(pod, snapshot)
            for row, node in enumerate(snapshot.nodes):
                assert status_of(row) == fwk.run_filter(scalar_state, node), (pod.key, node.name)
                compared += 1
            feasible = [r for r, n in enumerate(snapshot.nodes)
                        if fwk.run_filter(scalar_state, n).is_success]
            if len(feasible) > 1:
                fwk.run_pre_score(state)
                fwk.run_pre_score(scalar_state)
                status, totals = s.evaluator.score(fwk, state, snapshot, np.array(feasible))
                want, want_totals, _ = fwk.run_score(
                    scalar_state, [snapshot.nodes[r] for r in feasible])
                assert status == want, pod.key
                if status.is_success:
                    assert totals.tolist() == want_totals, pod.key
        if not s.schedule_one():
            break
        s.sync()
    assert compared > 1000


@pytest.mark.parametrize("seed", range(4))
def test_a_simulation_binds_the_same_pods_to_the_same_nodes(seed: int) -> None:
    outcomes = []
    for evaluation in (SCALAR, VECTORISED):
        s = scheduler(random_cluster(100 + seed, nodes=30, bound=20, pending=60), evaluation)
        for _ in range(400):
            if not s.schedule_one():
                s.advance()
                if not s.schedule_one():
                    break
            s.sync()
        outcomes.append({k: (r.node, r.message, r.attempts) for k, r in s.records.items()})
    scalar, vectorised = outcomes
    assert any(node for node, _, _ in scalar.values())
    assert any(node is None for node, _, _ in scalar.values())  # some did not fit
    assert vectorised == scalar
