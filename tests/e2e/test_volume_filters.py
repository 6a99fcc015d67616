"""The volume filters of the built-in profile against the real control plane, with
``policysched run`` scheduling and kube-controller-manager's PersistentVolume binder
binding the claims (Immediate binding, static PVs): NodeVolumeLimits keeps a pod off a node
whose CSINode limit its attached volumes reach; VolumeZone keeps a pod whose volume is
labelled with a zone in that zone.

Each test has nodes of its own, selected by a pool label its pods ask for, so that the
cluster's other nodes do not take them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from . import support
from .test_volumes import claim, is_bound_to, storage, wait_for_claim  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e

POOL = "e2e.policysched.io/pool"
ZONE = "topology.kubernetes.io/zone"
DRIVER = "csi.e2e.policysched.io"
BIND_TIMEOUT = 30.0  # seconds for a schedulable pod to be bound
REJECT_TIMEOUT = 30.0  # … for an unschedulable one to get its PodScheduled=False condition


@pytest.fixture
def make_csi_node(admin_api: Any) -> Iterator[Callable[[str, int], None]]:
    """Create the CSINode of a node, with a volume limit for ``DRIVER``; deleted after."""
    from kubernetes import client

    storage_api: Any = client.StorageV1Api(admin_api)
    created: list[str] = []

    def make(node: str, limit: int) -> None:
        support.create(admin_api, {
            "apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": node},
            "spec": {"drivers": [{"name": DRIVER, "nodeID": node,
                                  "allocatable": {"count": limit}}]}})
        created.append(node)

    try:
        yield make
    finally:
        for name in created:
            with contextlib.suppress(Exception):
                storage_api.delete_csi_node(name)


def csi_volume(name: str, namespace: str, labels: dict[str, str] | None = None
               ) -> dict[str, Any]:
    """A static CSI PersistentVolume of ``DRIVER`` (no class, Immediate binding)."""
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {"e2e-namespace": namespace, **(labels or {})}},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                     "csi": {"driver": DRIVER, "volumeHandle": name}}}


def bound_claims(core: Any, admin_api: Any, namespace: str, names: list[str],
                 labels: dict[str, dict[str, str]] | None = None) -> None:
    """A claim per name bound by the PV controller to a CSI volume of its own (the claim
    names it in ``volumeName``: the controller binds that pair)."""
    volumes = {}
    for name in names:
        volumes[name] = support.unique(f"{namespace}-{name}")
        support.create(admin_api, csi_volume(volumes[name], namespace,
                                             (labels or {}).get(name)))
        document = claim(name, namespace, storage_class_name="")
        document["spec"]["volumeName"] = volumes[name]
        support.create(admin_api, document)
    for name in names:
        wait_for_claim(core, namespace, name, is_bound_to(volumes[name]),
                       f"Bound to {volumes[name]}")


def pod_using(name: str, namespace: str, claim_name: str, pool: str,
              node: str | None = None) -> dict[str, Any]:
    """A pod of policysched using ``claim_name``, on the nodes of ``pool`` (or ``node``)."""
    selector = {POOL: pool} if node is None else {"kubernetes.io/hostname": node}
    document = support.pod(name, node_selector=selector)
    document["metadata"]["namespace"] = namespace
    document["spec"]["volumes"] = [{"name": "data",
                                    "persistentVolumeClaim": {"claimName": claim_name}}]
    return document


def bound_node(core: Any, namespace: str, name: str) -> str:
    pod = support.wait_for_pod(core, namespace, name, support.is_bound, BIND_TIMEOUT,
                               "bound to a node")
    return str(pod.spec.node_name)


def test_a_csi_attach_limit_keeps_the_next_pod_off_a_full_node(
        scheduler: support.SchedulerProcess, controller_manager: support.Cluster,
        storage: Any, admin_api: Any, namespace: str,  # noqa: F811 (fixture)
        make_node: Callable[..., str], make_csi_node: Callable[[str, int], None]) -> None:
    core = storage
    pool = support.unique("csi")
    full = make_node(support.unique("e2e-csi-full"), labels={POOL: pool}, cpu="8")
    spare = make_node(support.unique("e2e-csi-spare"), labels={POOL: pool}, cpu="2")
    make_csi_node(full, 1)  # the emptier node takes one volume of the driver
    bound_claims(core, admin_api, namespace, ["first", "second", "third"])

    support.create(admin_api, pod_using("first", namespace, "first", pool))
    assert bound_node(core, namespace, "first") == full  # the least allocated node
    # full's one volume is attached: the next pod goes to the other node of the pool ...
    support.create(admin_api, pod_using("second", namespace, "second", pool))
    assert bound_node(core, namespace, "second") == spare
    # ... and a pod that only full may take waits, in kube's words
    support.create(admin_api, pod_using("third", namespace, "third", pool, node=full))
    reason = "node(s) exceed max volume count"
    pod = support.wait_for_pod(core, namespace, "third", support.unschedulable_with(reason),
                               REJECT_TIMEOUT, f"PodScheduled=False with {reason!r}")
    assert not pod.spec.node_name
    assert f"1 {reason}" in support.scheduled_condition(pod).message
    # once the first pod is gone its volume is no longer counted: the third pod fits
    core.delete_namespaced_pod("first", namespace, grace_period_seconds=0)
    assert bound_node(core, namespace, "third") == full


def test_a_volume_labelled_with_a_zone_keeps_its_pod_in_that_zone(
        scheduler: support.SchedulerProcess, controller_manager: support.Cluster,
        storage: Any, admin_api: Any, namespace: str,  # noqa: F811 (fixture)
        make_node: Callable[..., str]) -> None:
    core = storage
    pool = support.unique("zone")
    # the emptier node is in the other zone: only the volume's zone label pulls the pod
    make_node(support.unique("e2e-zone-x"), labels={POOL: pool, ZONE: "zone-x"}, cpu="8")
    in_zone = make_node(support.unique("e2e-zone-y"), labels={POOL: pool, ZONE: "zone-y"},
                        cpu="2")
    bound_claims(core, admin_api, namespace, ["data"], labels={"data": {ZONE: "zone-y"}})

    support.create(admin_api, pod_using("db", namespace, "data", pool))
    assert bound_node(core, namespace, "db") == in_zone
