"""``cluster.snapshot``: a cluster listed in pages through the one client, trimmed to what
scheduling reads, sorted, and read back by the cluster-file reader unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from policysched.cluster.cluster_file import check_objects, parse_cluster
from policysched.cluster.snapshot import KINDS, ListProgress, snapshot, trimmed
from policysched.cluster.transport import ApiError, TokenBucket, Transport
from policysched.commands.snapshot import render

from .test_kube import FakeApiServer

MANAGED = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]


def pod(name: str, namespace: str = "default", node: str | None = None,
        **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "managedFields": MANAGED,
                     "labels": {"app": "web"}, "generateName": "web-",
                     "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}",
                                     "team": "blue"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": "web", "uid": "u1", "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": {"nodeName": node, "schedulerName": "policysched", "priority": 0,
                 "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                 "volumes": [{"name": "token", "projected": {"sources": []}}],
                 "tolerations": [{"key": "node.kubernetes.io/not-ready",
                                  "operator": "Exists", "effect": "NoExecute",
                                  "tolerationSeconds": 300}],
                 "containers": [{"name": "c", "image": "nginx", "env": [{"name": "A"}],
                                 "command": ["sleep"], "volumeMounts": [{"name": "token"}],
                                 "resources": {"requests": {"cpu": "100m"}},
                                 "ports": [{"name": "http", "containerPort": 80,
                                            "protocol": "TCP"}]}], **spec},
        "status": {"phase": "Running" if node else "Pending", "qosClass": "Burstable",
                   "hostIP": "10.0.0.1",
                   "conditions": [{"type": "PodScheduled", "status": "True",
                                   "lastTransitionTime": "2024-01-01T00:00:00Z"},
                                  {"type": "DisruptionTarget", "status": "True",
                                   "reason": "PreemptionByScheduler", "message": "m"}]}}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name},
                         "managedFields": MANAGED, "resourceVersion": "9"},
            "spec": {"podCIDR": "10.0.0.0/24", "providerID": "kwok://x",
                     "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                       "nodeInfo": {"kubeletVersion": "v1.34.12"},
                       "conditions": [{"type": "Ready", "status": "True",
                                       "lastHeartbeatTime": "2024-01-01T00:00:00Z"}],
                       "images": [{"names": ["nginx:latest"], "sizeBytes": 1000}]}}


@pytest.fixture()
def server() -> Iterator[FakeApiServer]:
    fake = FakeApiServer(page_size=2).start()
    for name in ("n3", "n1", "n2"):
        fake.put("nodes", node(name))
    for p in (pod("web-2", node="n1"), pod("web-1"), pod("api", "apps"), pod("web-3")):
        fake.put("pods", p)
    fake.put("namespaces", {"metadata": {"name": "apps", "labels": {"env": "prod"}},
                            "spec": {"finalizers": ["kubernetes"]},
                            "status": {"phase": "Active"}})
    fake.put("priorityclasses", {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                 "metadata": {"name": "high"}, "value": 1000,
                                 "description": "important"})
    fake.put("replicasets", {"metadata": {"name": "web"},
                             "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                                      "template": {"metadata": {"labels": {"app": "web"}},
                                                   "spec": {"containers": []}}},
                             "status": {"replicas": 3}})
    fake.put("services", {"metadata": {"name": "web"},
                          "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.0.9",
                                   "ports": [{"port": 80}]}})
    fake.put("replicationcontrollers", {"metadata": {"name": "old"},
                                        "spec": {"template": {"metadata": {
                                            "labels": {"app": "old"}}}}})
    yield fake
    fake.stop()


def take(server: FakeApiServer, progress: list[ListProgress] | None = None
         ) -> list[dict[str, Any]]:
    transport = Transport(server.api_client(), TokenBucket(0, 1))
    try:
        return snapshot(transport, progress.append if progress is not None else None)
    finally:
        transport.close()


def test_every_kind_is_listed_in_pages_sorted_by_kind_namespace_and_name(
        server: FakeApiServer) -> None:
    progress: list[ListProgress] = []
    objects = take(server, progress)
    assert [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
            for o in objects] == [
        ("Namespace", None, "apps"), ("PriorityClass", None, "high"),
        ("Node", None, "n1"), ("Node", None, "n2"), ("Node", None, "n3"),
        ("Service", "default", "web"), ("ReplicationController", "default", "old"),
        ("ReplicaSet", "default", "web"),
        ("Pod", "apps", "api"), ("Pod", "default", "web-1"), ("Pod", "default", "web-2"),
        ("Pod", "default", "web-3")]
    # pages of 2: every list is paged with limit/continue, and reported page by page
    pod_lists = [r for r in server.requests if r[0] == "GET" and r[1] == "/api/v1/pods"]
    assert len(pod_lists) == 2
    assert [p for p in progress if p.kind == "Pod"] == [
        ListProgress("Pod", 2, False), ListProgress("Pod", 4, True)]
    assert [p.kind for p in progress if p.done] == [k.kind for k in KINDS]


def test_a_cluster_without_the_podgroup_crd_has_no_podgroups(server: FakeApiServer) -> None:
    objects = take(server)
    assert not [o for o in objects if o["kind"] == "PodGroup"]
    assert any(r[1].endswith("/podgroups") for r in server.requests)


def test_podgroups_are_listed_when_served() -> None:
    fake = FakeApiServer(podgroups=True).start()
    try:
        fake.put("podgroups", {"metadata": {"name": "g"}, "spec": {"minMember": 2},
                               "status": {"phase": "Pending"}})
        objects = take(fake)
    finally:
        fake.stop()
    assert objects == [{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                        "metadata": objects[0]["metadata"], "spec": {"minMember": 2}}]


def test_a_kind_that_cannot_be_listed_is_an_error(server: FakeApiServer) -> None:
    server.fail("GET", r"^/api/v1/nodes$", 403, "Forbidden", 'nodes is forbidden')
    with pytest.raises(ApiError, match="nodes is forbidden"):
        take(server)


def test_objects_keep_only_what_scheduling_reads(server: FakeApiServer) -> None:
    objects = {(o["kind"], o["metadata"]["name"]): o for o in take(server)}
    bound = objects[("Pod", "web-2")]
    assert set(bound["metadata"]) == {"name", "namespace", "uid", "labels", "annotations",
                                      "creationTimestamp", "ownerReferences"}
    assert bound["metadata"]["annotations"] == {"team": "blue"}
    assert bound["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u1",
         "controller": True}]
    assert bound["spec"] == {
        "nodeName": "n1", "schedulerName": "policysched", "priority": 0,
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
        "containers": [{"name": "c", "image": "nginx",
                        "resources": {"requests": {"cpu": "100m"}},
                        "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}
    assert bound["status"] == {"phase": "Running", "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}
    assert "nodeName" not in objects[("Pod", "web-1")]["spec"]
    n1 = objects[("Node", "n1")]
    assert n1["spec"] == {"taints": [{"key": "dedicated", "value": "ml",
                                      "effect": "NoSchedule"}]}
    assert set(n1["status"]) == {"allocatable", "capacity", "images"}
    assert "managedFields" not in n1["metadata"] and "resourceVersion" not in n1["metadata"]
    assert objects[("PriorityClass", "high")]["value"] == 1000
    assert "description" not in objects[("PriorityClass", "high")]
    assert objects[("Service", "web")]["spec"] == {"selector": {"app": "web"}}
    assert objects[("ReplicaSet", "web")]["spec"] == {"selector": {"matchLabels": {"app": "web"}}}
    assert objects[("ReplicationController", "old")]["spec"] == {
        "template": {"metadata": {"labels": {"app": "old"}}}}
    assert "spec" not in objects[("Namespace", "apps")]


def test_the_snapshot_is_a_cluster_file(server: FakeApiServer) -> None:
    objects = take(server)
    read = parse_cluster(render(objects), "snapshot")
    assert [o["metadata"]["name"] for o in read] == [o["metadata"]["name"] for o in objects]
    assert render(objects) == render(take(server))  # the same cluster, the same file


def test_a_budget_keeps_what_preemption_reads() -> None:
    budget = trimmed("PodDisruptionBudget", {
        "metadata": {"name": "b", "namespace": "ns", "generation": 3},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 0, "disruptedPods": {"db-0": "2024-01-01T00:00:00Z"},
                   "currentHealthy": 2, "observedGeneration": 3}})
    assert budget == {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                      "metadata": {"name": "b", "namespace": "ns"},
                      "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
                      "status": {"disruptionsAllowed": 0,
                                 "disruptedPods": {"db-0": "2024-01-01T00:00:00Z"}}}


def test_a_deleted_priority_class_is_written_with_its_pods_priority(
        server: FakeApiServer) -> None:
    """A PriorityClass deleted after its pods were created: they keep the priority it gave
    them (the API server resolved it at creation), and the file still reads."""
    orphan = pod("orphan", node="n1", priorityClassName="gone", priority=500)
    server.put("pods", orphan)
    objects = take(server)
    classes = [o for o in objects if o["kind"] == "PriorityClass"]
    assert [(c["metadata"]["name"], c["value"]) for c in classes] == [("gone", 500),
                                                                      ("high", 1000)]
    read = {o["metadata"]["name"]: o for o in check_objects(objects) if o["kind"] == "Pod"}
    assert read["orphan"]["spec"]["priority"] == 500


def test_storage_objects_keep_what_the_volume_plugins_read_and_read_back() -> None:
    """Claims, volumes, classes, CSINodes and CSIDrivers are listed and trimmed; a pod keeps
    the volumes that refer to claims, CSI drivers or disks (not its configMaps or service
    account token); the snapshot reads back as a cluster file."""
    fake = FakeApiServer().start()
    try:
        fake.put("pods", pod("db-0", node="n1", volumes=[
            {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}},
            {"name": "token", "projected": {"sources": []}},
            {"name": "cfg", "configMap": {"name": "c"}}]))
        fake.put("persistentvolumeclaims", {
            "metadata": {"name": "data-db-0", "managedFields": MANAGED, "annotations": {
                "volume.kubernetes.io/selected-node": "n1"}},
            "spec": {"storageClassName": "csi", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}, "volumeName": "pv1"},
            "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}})
        fake.put("persistentvolumes", {
            "metadata": {"name": "pv1", "labels": {"topology.kubernetes.io/zone": "a"}},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "csi",
                     "csi": {"driver": "d", "volumeHandle": "h",
                             "volumeAttributes": {"a": "b"}},
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default",
                                  "name": "data-db-0", "uid": "u", "resourceVersion": "3"}},
            "status": {"phase": "Bound", "lastPhaseTransitionTime": "2024-01-01T00:00:00Z"}})
        fake.put("storageclasses", {"metadata": {"name": "csi"}, "provisioner": "d",
                                    "reclaimPolicy": "Delete",
                                    "volumeBindingMode": "WaitForFirstConsumer"})
        fake.put("csinodes", {"metadata": {"name": "n1"}, "spec": {"drivers": [
            {"name": "d", "nodeID": "n1", "allocatable": {"count": 2}}]}})
        fake.put("csidrivers", {"metadata": {"name": "d"}, "spec": {"attachRequired": True}})
        objects = take(fake)
    finally:
        fake.stop()
    found = {o["kind"]: o for o in objects}
    assert found["Pod"]["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]
    assert found["PersistentVolumeClaim"]["status"] == {"phase": "Bound"}
    assert "managedFields" not in found["PersistentVolumeClaim"]["metadata"]
    assert found["PersistentVolume"]["spec"] == {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
        "storageClassName": "csi", "csi": {"driver": "d", "volumeHandle": "h"},
        "claimRef": {"namespace": "default", "name": "data-db-0", "uid": "u"}}
    assert {k: v for k, v in found["StorageClass"].items() if k != "metadata"} == {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "d",
        "volumeBindingMode": "WaitForFirstConsumer"}
    assert found["CSINode"]["spec"]["drivers"][0]["allocatable"] == {"count": 2}
    read = parse_cluster(render(objects), "snapshot")
    assert [o["kind"] for o in read] == [o["kind"] for o in objects]
