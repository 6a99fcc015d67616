"""node-volume-limits: kube-scheduler's NodeVolumeLimits CSI limits (csi_test.go's
TestCSILimits cases: bound, pending and ephemeral claims, shared volumes, drivers without a
limit, a missing claim)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.framework.status import Code

from .storage import StorageCase, claim, csi_node, ephemeral, node, pod, storage_class, uses, volume

REASON = "node(s) exceed max volume count"
OK = (Code.SUCCESS, "")
EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"


def ebs_claims(*names: str) -> list[dict[str, Any]]:
    """A claim bound to a CSI volume of ``EBS`` per name (claim ``name``, volume ``pv-name``)."""
    out = []
    for name in names:
        out += [claim(name, volume=f"pv-{name}"), volume(f"pv-{name}", driver=EBS)]
    return out


def verdict(*objects: dict[str, Any], limit: int = 2) -> tuple[Code, str]:
    case = StorageCase("node-volume-limits", [
        node("n1"), csi_node("n1", ebs_csi_aws_com=limit), storage_class("ebs", EBS),
        storage_class("gce", GCE), *objects])
    return case.verdict("default/new").on("n1")


def test_fits_up_to_the_limit() -> None:
    # "fits when node volume limit >= new pods CSI volume"
    assert verdict(*ebs_claims("a", "b"), pod("running", uses("a"), node="n1"),
                   pod("new", uses("b"))) == OK


def test_one_volume_over_the_limit_does_not_fit() -> None:
    # "doesn't when node volume limit <= pods CSI volume"
    assert verdict(*ebs_claims("a", "b", "c"),
                   pod("running", uses("a"), uses("b"), node="n1"),
                   pod("new", uses("c"))) == (Code.UNSCHEDULABLE, REASON)


def test_a_volume_already_on_the_node_is_not_counted_again() -> None:
    # "should count only unique volumes": the claim of a pod already there
    assert verdict(*ebs_claims("a", "b"), pod("running", uses("a"), uses("b"), node="n1"),
                   pod("new", uses("a"))) == OK


def test_the_pods_own_volumes_are_counted_once() -> None:
    assert verdict(*ebs_claims("a", "b"), pod("running", uses("a"), node="n1"),
                   pod("new", uses("b"), uses("b", read_only=True))) == OK


def test_a_full_node_still_takes_a_pod_that_adds_no_volume() -> None:
    # kube checks only the drivers the pod adds volumes to
    assert verdict(*ebs_claims("a", "b"), pod("running", uses("a"), uses("b"), node="n1"),
                   pod("new", uses("a")), limit=1) == OK


@pytest.mark.parametrize(("new_claim", "counted"), [
    # "should count pending PVCs": unbound, counted under its class's provisioner
    (claim("pending", storage_class="ebs"), True),
    # "should count PVCs with invalid PV name but valid SC"
    (claim("pending", volume="no-such-pv", storage_class="ebs"), True),
    # "should not count PVCs without SC" / another driver's class
    (claim("pending"), False),
    (claim("pending", storage_class="gce"), False),
])
def test_unbound_claims_count_under_their_class(new_claim: dict[str, Any],
                                                counted: bool) -> None:
    assert verdict(*ebs_claims("a"), new_claim, pod("running", uses("a"), node="n1"),
                   pod("new", uses("pending")), limit=1) == (
        (Code.UNSCHEDULABLE, REASON) if counted else OK)


def test_a_volume_of_a_driver_without_a_limit_is_not_limited() -> None:
    case = StorageCase("node-volume-limits", [
        node("n1"), csi_node("n1", ebs_csi_aws_com=1), claim("g", volume="pv-g"),
        volume("pv-g", driver=GCE), *ebs_claims("a"), pod("running", uses("a"), node="n1"),
        pod("new", uses("g"))])
    assert case.verdict("default/new").on("n1") == OK


def test_a_node_without_a_csinode_has_no_limit() -> None:
    case = StorageCase("node-volume-limits", [
        node("n1"), *ebs_claims("a", "b"), pod("running", uses("a"), node="n1"),
        pod("new", uses("b"))])
    assert case.verdict("default/new").on("n1") == OK


def test_ephemeral_volumes_count_and_a_missing_one_is_unresolvable() -> None:
    # "ephemeral volume missing": the new pod's claim is looked up, NotFound is unresolvable
    case = StorageCase("node-volume-limits", [
        node("n1"), csi_node("n1", ebs_csi_aws_com=1), storage_class("ebs", EBS),
        *ebs_claims("a"), pod("running", uses("a"), node="n1"), pod("new", ephemeral())])
    assert case.verdict("default/new").on("n1") == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        'looking up PVC default/new-v0: persistentvolumeclaim "new-v0" not found')
    # "ephemeral volume": once created (of the class of the EBS driver) it counts
    case.backend.add_object(claim("new-v0", storage_class="ebs"))
    case.scheduler.sync()
    assert case.verdict("default/new").on("n1") == (Code.UNSCHEDULABLE, REASON)


def test_a_missing_claim_of_a_pod_on_the_node_is_not_counted() -> None:
    assert verdict(*ebs_claims("b"), pod("running", uses("gone"), node="n1"),
                   pod("new", uses("b")), limit=1) == OK


def test_inline_csi_volumes_are_not_counted() -> None:
    # kube counts inline volumes only when CSI migration translates them
    inline = {"csi": {"driver": EBS, "volumeAttributes": {"size": "1Gi"}}}
    assert verdict(*ebs_claims("a"), pod("running", uses("a"), node="n1"),
                   pod("new", inline), limit=1) == OK
