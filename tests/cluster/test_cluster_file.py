from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policysched.cluster.cluster_file import (
    ClusterFileError,
    load_cluster_file,
    parse_cluster,
    start_time,
)
from policysched.model.objects import parse_timestamp, pod_info

FIXTURES = Path(__file__).parent / "fixtures"


def _by_name(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects}


def test_a_valid_file_gives_its_objects_in_file_order() -> None:
    objects = load_cluster_file(FIXTURES / "valid.yaml")
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("PriorityClass", "high"),
        ("PriorityClass", "normal"),
        ("Node", "node-a"),
        ("Node", "node-b"),
        ("Pod", "web-0"),
        ("Pod", "urgent"),
        ("Pod", "plain"),
        ("Pod", "critical"),
        ("PodGroup", "trio"),
    ]


def test_priority_classes_are_resolved() -> None:
    pods = _by_name(load_cluster_file(FIXTURES / "valid.yaml"))
    assert pods["urgent"]["spec"]["priority"] == 1000
    assert pods["urgent"]["spec"]["preemptionPolicy"] == "Never"
    assert pods["plain"]["spec"]["priority"] == 10  # the global default
    assert pods["plain"]["spec"]["priorityClassName"] == "normal"
    assert pods["critical"]["spec"]["priority"] == 2_000_001_000  # a built-in class


def test_pods_without_a_creation_time_get_the_latest_of_the_file() -> None:
    objects = load_cluster_file(FIXTURES / "valid.yaml")
    latest = parse_timestamp("2024-01-01T00:05:00Z")
    assert start_time(objects) == latest
    pods = _by_name(objects)
    assert pods["urgent"]["metadata"]["creationTimestamp"] == "2024-01-01T00:05:00Z"
    assert pods["plain"]["metadata"]["creationTimestamp"] == "2024-01-01T00:01:00Z"
    assert "creationTimestamp" not in pods["node-b"]["metadata"]  # only pods are filled


def test_a_file_without_times_starts_at_zero() -> None:
    objects = parse_cluster("kind: Pod\nmetadata: {name: p}\n")
    assert start_time(objects) == 0
    assert objects[0]["metadata"]["creationTimestamp"] == "1970-01-01T00:00:00Z"


def test_every_problem_is_listed() -> None:
    with pytest.raises(ClusterFileError) as caught:
        parse_cluster((FIXTURES / "invalid.yaml").read_text(), "invalid.yaml")
    expected = (FIXTURES / "invalid.expected.txt").read_text().rstrip("\n")
    assert str(caught.value) == expected
    assert len(caught.value.problems) == 11
    first = caught.value.problems[0]
    assert (first.document, first.kind, first.name, first.line) == (
        2, "Pod", "default/web-1", 6)


def test_the_quantity_error_names_document_object_and_field() -> None:
    with pytest.raises(ClusterFileError) as caught:
        load_cluster_file(FIXTURES / "invalid.yaml")
    assert (
        "document 2 (Pod default/web-1): spec.containers[0].resources.requests.cpu: "
        "invalid quantity '1.5.3Gi'" in str(caught.value)
    )


def test_yaml_errors_are_reported_with_their_line() -> None:
    with pytest.raises(ClusterFileError) as caught:
        load_cluster_file(FIXTURES / "bad-yaml.yaml")
    (problem,) = caught.value.problems
    assert problem.line == 4 and str(problem).startswith("line 4: invalid YAML")


def test_duplicates_are_per_kind_and_namespace() -> None:
    text = """
kind: Pod
metadata: {name: web, namespace: a}
---
kind: Pod
metadata: {name: web, namespace: b}
---
kind: PodGroup
metadata: {name: web, namespace: a}
---
kind: Pod
metadata: {name: web, namespace: a}
"""
    with pytest.raises(ClusterFileError) as caught:
        parse_cluster(text)
    assert [str(p) for p in caught.value.problems] == [
        "document 4 (Pod a/web): duplicate Pod a/web (first defined in document 1)"
    ]


def test_two_global_defaults_are_refused() -> None:
    text = """
kind: PriorityClass
metadata: {name: one}
value: 1
globalDefault: true
---
kind: PriorityClass
metadata: {name: two}
value: 2
globalDefault: true
"""
    with pytest.raises(ClusterFileError, match='PriorityClass "one" is already the global'):
        parse_cluster(text)


def test_a_priority_that_contradicts_its_class_is_refused() -> None:
    text = """
kind: PriorityClass
metadata: {name: one}
value: 1
---
kind: Pod
metadata: {name: p}
spec: {priorityClassName: one, priority: 5}
"""
    with pytest.raises(ClusterFileError, match=r'spec.priority: 5 does not match PriorityClass'):
        parse_cluster(text)


def test_an_unreadable_file_is_a_cluster_file_error(tmp_path: Path) -> None:
    with pytest.raises(ClusterFileError, match="cannot read the file: No such file"):
        load_cluster_file(tmp_path / "missing.yaml")


def test_namespaces_and_workloads_are_cluster_objects() -> None:
    text = """
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {team: a}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team-a}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: old}
spec:
  template: {metadata: {labels: {app: old}}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1, namespace: team-a}
spec: {selector: {matchLabels: {app: web}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: team-a}
spec:
  selector:
    matchExpressions: [{key: app, operator: In, values: [db]}]
---
kind: Service
metadata: {name: web}
"""
    objects = parse_cluster(text)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Namespace", "team-a"), ("Service", "web"), ("ReplicationController", "old"),
        ("ReplicaSet", "web-1"), ("StatefulSet", "db"), ("Service", "web")]


def test_bad_namespaces_and_workloads_are_reported() -> None:
    text = """
kind: Namespace
metadata: {name: a, labels: {team: 1}}
---
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
kind: ReplicaSet
metadata: {name: web}
spec: {selector: {matchLabels: {app: web}}}
---
kind: StatefulSet
metadata: {name: db}
spec: {replicas: 1}
---
kind: Service
metadata: {name: s}
spec: {selector: {app: -web}}
---
kind: Service
metadata: {name: s, namespace: other}
spec: {selector: {app: web}}
---
kind: Service
metadata: {name: s, namespace: other}
"""
    with pytest.raises(ClusterFileError) as caught:
        parse_cluster(text)
    assert [str(p) for p in caught.value.problems] == [
        "document 1 (Namespace a): metadata.labels.team: must be a string, not an integer",
        'document 3 (ReplicaSet default/web): apiVersion: ReplicaSet must have apiVersion '
        '"apps/v1", not "v1"',
        "document 4 (StatefulSet default/db): spec.selector: required field is missing",
        "document 5 (Service default/s): spec.selector.app: invalid label value '-web': "
        + "a valid label must be an empty string or consist of alphanumeric characters, '-', "
        "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', "
        "or 'my_value', or '12345')",
        "document 7 (Service other/s): duplicate Service other/s (first defined in "
        "document 6)",
    ]


def test_disruption_budgets_nominations_and_deletions_are_read() -> None:
    """PodDisruptionBudgets (policy/v1) are cluster objects; a malformed one is reported;
    a pending pod's status.nominatedNodeName and a pod's deletionTimestamp are kept."""
    text = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
status: {disruptionsAllowed: 0}
---
kind: Pod
metadata: {name: p, deletionTimestamp: "2024-01-01T00:00:00Z"}
spec: {containers: [{name: c}]}
status: {nominatedNodeName: n1}
"""
    objects = parse_cluster(text)
    assert [o["kind"] for o in objects] == ["PodDisruptionBudget", "Pod"]
    pod = pod_info(objects[1])
    assert (pod.nominated_node, pod.deleting) == ("n1", True)
    with pytest.raises(ClusterFileError) as caught:
        parse_cluster("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\n"
                      "metadata: {name: a}\n---\nkind: PodDisruptionBudget\n"
                      "metadata: {name: b}\nspec: {selector: {matchLabels: {app: 1}}}\n")
    assert [str(p) for p in caught.value.problems] == [
        "document 1 (PodDisruptionBudget default/a): apiVersion: PodDisruptionBudget must "
        'have apiVersion "policy/v1", not "policy/v1beta1"',
        "document 2 (PodDisruptionBudget default/b): spec.selector: matchLabels.app: must be "
        "a string, not an integer"]


def test_storage_objects_are_read_and_reach_the_cache() -> None:
    """PersistentVolumeClaims, PersistentVolumes (v1), StorageClasses, CSINodes and
    CSIDrivers (storage.k8s.io/v1) are cluster objects: through the in-process cluster
    into the cache; a malformed one, or a wrong apiVersion, is reported."""
    from policysched.cache import Cache
    from policysched.cluster.memory import MemoryBackend

    text = """
kind: Pod
metadata: {name: web-0}
spec:
  nodeName: n1
  containers: [{name: c}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data-web-0}}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-web-0}
spec: {storageClassName: csi, volumeName: pv1, accessModes: [ReadWriteOnce],
       resources: {requests: {storage: 1Gi}}}
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1, labels: {topology.kubernetes.io/zone: a}}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], storageClassName: csi,
       csi: {driver: d, volumeHandle: h1}, claimRef: {namespace: default, name: data-web-0}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: csi}
provisioner: d
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: d, nodeID: n1, allocatable: {count: 1}}]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: d}
spec: {attachRequired: true}
---
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
"""
    objects = parse_cluster(text)
    backend = MemoryBackend(objects)
    events = backend.drain_events()
    assert [e.resource for e in events if e.kind == "ADDED"] == [
        "Node", "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
        "CSIDriver", "Pod"]  # storage objects before the pods that use them
    # the in-process PV controller completes the pre-bound pair as soon as both exist
    modified = [e for e in events if e.kind == "MODIFIED"]
    assert {e.resource for e in modified} == {"PersistentVolume", "PersistentVolumeClaim"}
    assert modified[-2].obj["status"]["phase"] == "Bound"  # the volume
    claim = modified[-1].obj
    assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert claim["status"]["phase"] == "Bound"
    cache = Cache()
    for event in events:
        cache.apply(event)
    snapshot = cache.snapshot()
    node = snapshot.node("n1")
    assert node is not None and node.attached_csi_volumes() == {"d": 1}
    assert dict(snapshot.storage.csi_nodes["n1"].limits) == {"d": 1}
    pod = cache.pod("default/web-0")
    assert pod is not None
    [view] = snapshot.volume_views(pod)
    assert view["persistentVolume"]["labels"] == {"topology.kubernetes.io/zone": "a"}
    with pytest.raises(ClusterFileError) as caught:
        parse_cluster("apiVersion: storage.k8s.io/v1beta1\nkind: CSINode\nmetadata: {name: a}\n"
                      "---\nkind: PersistentVolumeClaim\nmetadata: {name: b}\n"
                      "spec: {accessModes: [Sometimes]}\n")
    assert [str(p) for p in caught.value.problems] == [
        'document 1 (CSINode a): apiVersion: CSINode must have apiVersion "storage.k8s.io/v1",'
        ' not "storage.k8s.io/v1beta1"',
        "document 2 (PersistentVolumeClaim default/b): spec.accessModes[0]: Unsupported value:"
        " 'Sometimes': supported values: ReadWriteOnce, ReadOnlyMany, ReadWriteMany,"
        " ReadWriteOncePod"]
