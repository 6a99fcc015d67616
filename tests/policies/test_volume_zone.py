"""volume-zone: kube-scheduler's VolumeZone (volume_zone_test.go: single and multi-zone
volumes, beta and GA labels, unbound claims, objects that do not exist)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.framework.status import Code

from .storage import (
    BETA_REGION,
    BETA_ZONE,
    REGION,
    ZONE,
    StorageCase,
    claim,
    node,
    pod,
    storage_class,
    uses,
    volume,
)

REASON = "node(s) had no available volume zone"
OK = (Code.SUCCESS, "")
CONFLICT = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)


def zone_verdict(pv_labels: dict[str, str], node_labels: dict[str, str]) -> tuple[Code, str]:
    case = StorageCase("volume-zone", [
        node("n1", **node_labels), claim("data", volume="pv"),
        volume("pv", labels=pv_labels), pod("new", uses("data"))])
    return case.verdict("default/new").on("n1")


@pytest.mark.parametrize(("pv_labels", "node_labels", "expected"), [
    # TestSingleZone
    ({ZONE: "us-west1-a"}, {ZONE: "us-west1-a"}, OK),
    ({ZONE: "us-west1-a"}, {ZONE: "us-west1-b"}, CONFLICT),
    ({REGION: "us-west1"}, {REGION: "us-west1", ZONE: "us-west1-a"}, OK),
    ({REGION: "us-west1"}, {REGION: "us-east1", ZONE: "us-east1-a"}, CONFLICT),
    ({BETA_ZONE: "us-west1-a"}, {BETA_ZONE: "us-west1-a"}, OK),
    ({BETA_ZONE: "us-west1-a"}, {BETA_ZONE: "us-west1-b"}, CONFLICT),
    ({BETA_REGION: "us-west1"}, {BETA_REGION: "us-west1"}, OK),
    # a node without any topology label takes every volume
    ({ZONE: "us-west1-a"}, {"uselessLabel": "none"}, OK),
    # a volume without topology labels goes anywhere
    ({"uselessLabel": "none"}, {ZONE: "us-west1-a"}, OK),
    # TestMultiZone: `__` separates the zones of a volume
    ({ZONE: "us-west1-b__us-west1-c"}, {ZONE: "us-west1-c"}, OK),
    ({ZONE: "us-west1-b__us-west1-c"}, {ZONE: "us-west1-a"}, CONFLICT),
    # an empty zone does not parse: the label is ignored
    ({ZONE: "us-west1-b__"}, {ZONE: "us-west1-a"}, OK),
    # TestWithBinding/translateToGALabel: a beta volume label is matched by the node's GA one
    ({BETA_ZONE: "us-west1-a"}, {ZONE: "us-west1-a"}, OK),
    ({BETA_ZONE: "us-west1-a"}, {ZONE: "us-west1-b"}, CONFLICT),
    ({BETA_REGION: "us-west1"}, {REGION: "us-west1"}, OK),
    # ... but not the other way round
    ({ZONE: "us-west1-a"}, {BETA_ZONE: "us-west1-a"}, CONFLICT),
    # a node with the zone but without the region a volume asks for
    ({ZONE: "us-west1-a", REGION: "us-west1"}, {ZONE: "us-west1-a"}, CONFLICT),
])
def test_volume_topology_against_node_labels(pv_labels: dict[str, str],
                                             node_labels: dict[str, str],
                                             expected: tuple[Code, str]) -> None:
    assert zone_verdict(pv_labels, node_labels) == expected


def pre_filter(*objects: dict[str, Any]) -> tuple[Code, str]:
    case = StorageCase("volume-zone", [node("n1", **{ZONE: "a"}), *objects])
    status = case.verdict("default/new").pre_filter
    return status.code, status.message


@pytest.mark.parametrize(("objects", "message"), [
    ([], 'persistentvolumeclaim "data" not found'),
    ([claim("data")], "PersistentVolumeClaim had no pv name and storageClass name"),
    ([claim("data", storage_class="nowhere")],
     'storageclass.storage.k8s.io "nowhere" not found'),
    ([claim("data", storage_class="now"), storage_class("now")],
     "PersistentVolume had no name"),
    ([claim("data", volume="gone")], 'persistentvolume "gone" not found'),
])
def test_what_pre_filter_cannot_find_is_unresolvable(objects: list[dict[str, Any]],
                                                     message: str) -> None:
    assert pre_filter(*objects, pod("new", uses("data"))) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def test_an_unbound_wait_for_first_consumer_claim_is_left_to_volume_binding() -> None:
    case = StorageCase("volume-zone", [
        node("n1", **{ZONE: "a"}), storage_class("late", mode="WaitForFirstConsumer"),
        claim("data", storage_class="late"), claim("zoned", volume="pv"),
        volume("pv", labels={ZONE: "b"}), pod("new", uses("data")),
        pod("both", uses("data"), uses("zoned"))])
    assert case.verdict("default/new").on("n1") == OK
    assert case.verdict("default/both").on("n1") == CONFLICT


def test_the_first_problem_in_volume_order_is_reported() -> None:
    assert pre_filter(claim("a", volume="gone"), pod("new", uses("b"), uses("a"))) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "b" not found')


def test_ephemeral_volumes_are_not_looked_at() -> None:
    ephemeral = {"ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}
    case = StorageCase("volume-zone", [
        node("n1", **{ZONE: "a"}), claim("new-v0", volume="pv"),
        volume("pv", labels={ZONE: "b"}), pod("new", ephemeral)])
    verdict = case.verdict("default/new")
    assert verdict.pre_filter.is_success
    assert verdict.on("n1") == OK
