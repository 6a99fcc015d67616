"""The volume policies give every node the same status in the vectorised tier as in the
scalar one, on random clusters of claims, CSI and zonal volumes, CSINodes and inline
disks (the built-in profile's tier test has no storage)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.scheduler import VECTORISED, Scheduler
from policysched.framework.vectorised import NodeEvaluator
from policysched.model.clock import SimulatedClock

from ..framework import POLICIES_ONLY, filter_in_both_tiers
from .helpers import POLICIES
from .storage import ZONE, claim, csi_node, node, pod, storage_class, uses, volume

POLICY_NAMES = ("volume-restrictions", "node-volume-limits", "volume-zone")
DRIVERS = ("ebs.csi.aws.com", "pd.csi.storage.gke.io")


def random_cluster(rng: random.Random, nodes: int, pods: int) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [storage_class("ebs", DRIVERS[0]),
                                     storage_class("late", DRIVERS[1], "WaitForFirstConsumer")]
    names = [f"n{i}" for i in range(nodes)]
    for name in names:
        labels = {ZONE: rng.choice("abc")} if rng.random() < 0.8 else {}
        objects.append(node(name, **labels))
        if rng.random() < 0.7:
            objects.append(csi_node(name, ebs_csi_aws_com=rng.randint(0, 3)))
    claims = []
    for i in range(pods // 2):
        name = f"c{i}"
        kind = rng.random()
        modes = ["ReadWriteOncePod"] if rng.random() < 0.3 else ["ReadWriteOnce"]
        if kind < 0.5:
            zones = "__".join(sorted(rng.sample("abc", rng.randint(1, 2))))
            objects += [claim(name, volume=f"pv{i}", modes=modes),
                        volume(f"pv{i}", driver=rng.choice(DRIVERS),
                               labels={ZONE: zones} if rng.random() < 0.7 else {})]
        elif kind < 0.8:
            objects.append(claim(name, storage_class=rng.choice(("ebs", "late")), modes=modes))
        claims.append(name)  # the others do not exist
    disks = [{"gcePersistentDisk": {"pdName": f"d{i}", "readOnly": rng.random() < 0.5}}
             for i in range(4)] + [{"awsElasticBlockStore": {"volumeID": "v0"}},
                                   {"rbd": {"monitors": rng.sample("xyz", 2), "image": "i"}}]
    for i in range(pods):
        volumes = [uses(rng.choice(claims)) for _ in range(rng.randint(0, 2))]
        volumes += rng.sample(disks, rng.randint(0, 1))
        placed = rng.choice(names) if i < pods // 2 else None
        objects.append(pod(f"p{i}", *volumes, node=placed))
    return objects


@pytest.mark.parametrize("seed", range(4))
def test_both_tiers_give_each_node_the_same_status(seed: int) -> None:
    rng = random.Random(seed)
    engine = load_engine([str(POLICIES / f"{name}.yaml") for name in POLICY_NAMES],
                         POLICIES_ONLY)
    backend = MemoryBackend(random_cluster(rng, nodes=12, pods=40), SimulatedClock(0))
    s = Scheduler(backend, engine.frameworks, replace(engine.settings, evaluation=VECTORISED))
    s.sync()
    assert isinstance(s.evaluator, NodeEvaluator)
    fwk = s.profiles["policysched"]
    snapshot = s.cache.snapshot()
    compared = rejected = 0
    for pending in s.cache.pending_pods():
        found = filter_in_both_tiers(s, fwk, pending, snapshot)
        if found is not None:
            statuses = found[2]
            compared += len(statuses)
            rejected += sum(not want.is_success for want in statuses)
    assert compared and rejected  # the rules decided something
