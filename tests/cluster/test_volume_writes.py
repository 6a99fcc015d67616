"""The API side of VolumeBinding's PreBind (policysched.cluster.volume_writes)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cluster.volume_writes import (
    bind_volume_to_claim,
    check_provision,
    check_static,
    select_node,
    wait_until_bound,
)
from policysched.framework.backend import BackendError

CLAIM = {"metadata": {"name": "c1", "namespace": "ns", "uid": "u1", "resourceVersion": "7"}}


def volume(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "pv1"}, "spec": spec}


def test_a_volume_is_bound_to_the_claim_as_get_bind_volume_to_claim_does() -> None:
    bound = bind_volume_to_claim(volume(), CLAIM)
    assert bound is not None
    assert bound["spec"]["claimRef"] == {
        "kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": "ns", "name": "c1",
        "uid": "u1", "resourceVersion": "7"}
    assert bound["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert bind_volume_to_claim(bound, CLAIM) is None  # already bound: no write
    # pre-bound by the user (no uid yet): the uid is added, not the annotation
    pre_bound = bind_volume_to_claim(volume(claimRef={"namespace": "ns", "name": "c1"}), CLAIM)
    assert pre_bound is not None and pre_bound["spec"]["claimRef"]["uid"] == "u1"
    assert "annotations" not in pre_bound["metadata"]
    with pytest.raises(BackendError, match='already bound to a different claim "ns/c2"'):
        bind_volume_to_claim(volume(claimRef={"namespace": "ns", "name": "c2"}), CLAIM)


def test_checks_say_when_bindings_are_done_or_undone() -> None:
    done = {"metadata": {"name": "c1", "annotations": {
        "pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/selected-node": "n1"}},
        "spec": {"volumeName": "pv1"}}
    assert check_static(volume(claimRef={"uid": "u1"}), done) is True
    assert check_static(volume(claimRef={"uid": "u1"}), CLAIM) is False
    with pytest.raises(BackendError, match='ClaimRef got reset for pv "pv1"'):
        check_static(volume(), done)
    assert check_provision(done, "n1") is True
    with pytest.raises(BackendError, match='provisioning failed for PVC "c1"'):
        check_provision(done, "n2")
    with pytest.raises(BackendError, match='selectedNode annotation reset for PVC "c1"'):
        check_provision(CLAIM, "n1")
    selected = select_node(CLAIM, "n1")
    assert selected is not None and select_node(selected, "n1") is None
    assert check_provision(selected, "n1") is False


def test_the_wait_polls_every_second_and_times_out_in_kube_words() -> None:
    clock = [0.0]
    polls: list[float] = []

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    def check() -> bool:
        polls.append(clock[0])
        return clock[0] >= 3

    wait_until_bound(check, 10, lambda: clock[0], sleep)
    assert polls == [1.0, 2.0, 3.0]
    with pytest.raises(BackendError, match=r"^binding volumes: context deadline exceeded$"):
        wait_until_bound(lambda: False, 2.5, lambda: clock[0], sleep)
