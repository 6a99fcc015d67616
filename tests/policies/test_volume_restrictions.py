"""volume-restrictions: kube-scheduler's VolumeRestrictions (volume_restrictions_test.go's
tables: disk conflicts per volume type, ReadWriteOncePod conflicts, a missing claim)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.framework.status import Code, Status

from .storage import StorageCase, claim, node, pod, uses

DISK = "node(s) had no available disk"
RWOP = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod")
OK = (Code.SUCCESS, "")


def gce(name: str, read_only: bool = False) -> dict[str, Any]:
    return {"gcePersistentDisk": {"pdName": name, "readOnly": read_only}}


def aws(name: str, read_only: bool = False) -> dict[str, Any]:
    return {"awsElasticBlockStore": {"volumeID": name, "readOnly": read_only}}


def iscsi(iqn: str, read_only: bool = False) -> dict[str, Any]:
    return {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": iqn, "lun": 0,
                      "readOnly": read_only}}


def rbd(monitors: list[str], image: str = "bar", pool: str = "foo",
        read_only: bool = False) -> dict[str, Any]:
    return {"rbd": {"monitors": monitors, "pool": pool, "image": image,
                    "readOnly": read_only}}


def disk_verdict(existing: dict[str, Any], wanted: dict[str, Any]) -> tuple[Code, str]:
    case = StorageCase("volume-restrictions", [
        node("n1"), pod("running", existing, node="n1"), pod("new", wanted)])
    return case.verdict("default/new").on("n1")


@pytest.mark.parametrize(("existing", "wanted", "conflict"), [
    # TestGCEDiskConflicts / TestAWSDiskConflicts / TestRBDDiskConflicts /
    # TestISCSIDiskConflicts: the same disk conflicts, another does not
    (gce("foo"), gce("foo"), True),
    (gce("foo"), gce("bar"), False),
    (aws("foo"), aws("foo"), True),
    (aws("foo"), aws("bar"), False),
    (rbd(["a", "b"]), rbd(["a", "b"]), True),
    (rbd(["a", "b"]), rbd(["b", "c"]), True),  # one monitor in common is enough
    (rbd(["a", "b"]), rbd(["c", "d"]), False),
    (rbd(["a", "b"]), rbd(["a", "b"], image="baz"), False),
    (rbd(["a", "b"]), rbd(["a", "b"], pool="other"), False),
    (iscsi("iqn.2016-12.server:storage.target01"), iscsi("iqn.2016-12.server:storage.target01"),
     True),
    (iscsi("iqn.2016-12.server:storage.target01"), iscsi("iqn.2016-12.server:storage.target02"),
     False),
    # isVolumeConflict: two read-only mounts share a GCE disk, an iSCSI or RBD volume ...
    (gce("foo", read_only=True), gce("foo", read_only=True), False),
    (gce("foo", read_only=True), gce("foo"), True),
    (iscsi("iqn.x", read_only=True), iscsi("iqn.x", read_only=True), False),
    (rbd(["a"], read_only=True), rbd(["a"], read_only=True), False),
    # ... never an EBS volume
    (aws("foo", read_only=True), aws("foo", read_only=True), True),
    # different kinds never conflict
    (gce("foo"), aws("foo"), False),
])
def test_disk_conflicts(existing: dict[str, Any], wanted: dict[str, Any],
                        conflict: bool) -> None:
    assert disk_verdict(existing, wanted) == ((Code.UNSCHEDULABLE, DISK) if conflict else OK)


def test_disk_conflict_is_per_node_and_ends_with_the_pod_that_used_it() -> None:
    case = StorageCase("volume-restrictions", [
        node("n1"), node("n2"), pod("running", gce("foo"), node="n1"),
        pod("new", gce("foo"))])
    verdict = case.verdict("default/new")
    assert (verdict.on("n1"), verdict.on("n2")) == ((Code.UNSCHEDULABLE, DISK), OK)
    case.backend.delete_object("Pod", "running")
    case.scheduler.sync()
    assert case.verdict("default/new").on("n1") == OK


def rwop_cluster(*placed: dict[str, Any]) -> StorageCase:
    return StorageCase("volume-restrictions", [
        node("n1"), node("n2"), claim("rwop", modes=["ReadWriteOncePod"]),
        claim("rwo"), *placed, pod("new", uses("rwop"))])


def test_a_read_write_once_pod_claim_in_use_rejects_every_node() -> None:
    # TestAccessModeConflicts: "PVC with ReadWriteOncePod access mode is already used"
    verdict = rwop_cluster(pod("running", uses("rwop"), node="n1")).verdict("default/new")
    assert verdict.on("n1") == verdict.on("n2") == (Code.UNSCHEDULABLE, RWOP)


def test_a_read_write_once_pod_claim_nobody_uses_fits() -> None:
    verdict = rwop_cluster(pod("running", uses("rwo"), node="n1")).verdict("default/new")
    assert verdict.on("n1") == verdict.on("n2") == OK


def test_other_access_modes_are_shared() -> None:
    case = StorageCase("volume-restrictions", [
        node("n1"), claim("rwo"), pod("running", uses("rwo"), node="n1"),
        pod("new", uses("rwo"))])
    assert case.verdict("default/new").on("n1") == OK


def test_a_claim_of_the_same_name_in_another_namespace_is_another_claim() -> None:
    case = StorageCase("volume-restrictions", [
        node("n1"), claim("rwop", modes=["ReadWriteOncePod"]),
        claim("rwop", modes=["ReadWriteOncePod"], namespace="other"),
        pod("running", uses("rwop"), node="n1", namespace="other"),
        pod("new", uses("rwop"))])
    assert case.verdict("default/new").on("n1") == OK


def test_a_missing_claim_rejects_the_pod_at_pre_filter() -> None:
    # TestAccessModeConflicts: "PVC not found": the lister's NotFound, unresolvable
    case = StorageCase("volume-restrictions", [node("n1"), pod("new", uses("nowhere"))])
    verdict = case.verdict("default/new")
    assert (verdict.pre_filter.code, verdict.pre_filter.message) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "nowhere" not found')


def test_preemption_frees_the_claim_on_the_victims_node_only() -> None:
    """kube's RemovePod: on a what-if copy of the node without the pod that uses the
    claim, the claim is free there; the other nodes still see it in use."""
    case = rwop_cluster(pod("running", uses("rwop"), node="n1"))
    s = case.scheduler
    snapshot = s.cache.snapshot()
    info = s.cache.pod("default/new")
    assert info is not None
    state = s.cycle_state(info, snapshot)
    n1, n2 = snapshot.nodes
    what_if = n1.clone()
    victim = n1.pods["default/running"]
    what_if.remove_pod(victim)
    assert case.framework.run_filter(state, what_if).is_success
    assert case.framework.run_filter(state, n2).code is Code.UNSCHEDULABLE
    # reprieved: added back without its volumes, the copy still knows what it used
    what_if.add_pod(victim)
    assert case.framework.run_filter(state, what_if) == Status(
        Code.UNSCHEDULABLE, (RWOP,), "volume-restrictions/read-write-once-pod")


def test_claim_users_follow_binds_and_deletions() -> None:
    case = rwop_cluster()
    assert case.verdict("default/new").on("n1") == OK
    case.backend.add_object(pod("other", uses("rwop"), node="n2"))
    case.scheduler.sync()
    assert case.verdict("default/new").on("n1") == (Code.UNSCHEDULABLE, RWOP)
    case.backend.delete_object("Pod", "other")
    case.scheduler.sync()
    assert case.verdict("default/new").on("n1") == OK


def test_the_deletion_of_the_claims_user_requeues_the_pod_at_once() -> None:
    """The read-write-once-pod rule reads which pods use the claim: the deletion of its
    user moves the pod back (not the five-minute flush)."""
    case = rwop_cluster(pod("running", uses("rwop"), node="n1"))
    assert case.run()["default/new"] is None
    case.backend.delete_object("Pod", "running")
    case.scheduler.sync()
    assert case.run()["default/new"] in {"n1", "n2"}


def test_a_pod_nominated_to_a_node_holds_its_claim_and_disks_there() -> None:
    """kube's AddPod (RunFilterPluginsWithNominatedPods): a nominated pod's claims and
    disks count on its node, not elsewhere."""
    from policysched.framework.evaluator import filter_with_nominated

    case = StorageCase("volume-restrictions", [
        node("n1"), node("n2"), claim("rwop", modes=["ReadWriteOncePod"]),
        pod("nominated", uses("rwop"), gce("foo")), pod("new", uses("rwop")),
        pod("disk", gce("foo"))])
    s = case.scheduler
    snapshot = s.cache.snapshot()
    nominated = s.cache.pod("default/nominated")
    assert nominated is not None
    n1, n2 = snapshot.nodes
    for key, reason in (("default/new", RWOP), ("default/disk", DISK)):
        info = s.cache.pod(key)
        assert info is not None
        state = s.cycle_state(info, snapshot)
        assert filter_with_nominated(case.framework, state, n1, [nominated]).reasons == (
            reason,)
        assert filter_with_nominated(case.framework, state, n2, []).is_success
