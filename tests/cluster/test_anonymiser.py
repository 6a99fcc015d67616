"""``Anonymiser``: names, namespaces, label keys and values replaced consistently, so that
an anonymised cluster file schedules exactly as the original does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from policysched.cluster.anonymiser import Anonymiser, normalised_image, well_known_key
from policysched.cluster.cluster_file import load_cluster_file, parse_cluster, start_time
from policysched.commands.loading import load_engine
from policysched.commands.simulate import Simulation, simulate
from policysched.commands.snapshot import render

FIXTURE = Path(__file__).parent / "fixtures" / "anonymise-cluster.yaml"

# every name, namespace, label key and value of the fixture that says something about it
ORIGINAL_STRINGS = ("east-1", "west-2", "shop", "batch", "prod", "blue", "web-5d8f", "5d8f",
                    "example.com", "dedicated", "trainers", "urgent", "cache-1", "reporter",
                    "registry", "postgres", "env", "team", "pod-template-hash", "near-prod")


def run(objects: list[dict[str, Any]]) -> Simulation:
    engine = load_engine([], None)
    return simulate(objects, engine.frameworks, engine.settings, float(start_time(objects)))


def anonymised_file(keep_keys: tuple[str, ...] = ("delay",)) -> tuple[Anonymiser, str]:
    anonymiser = Anonymiser(keep_keys)
    return anonymiser, render(anonymiser.objects(load_cluster_file(FIXTURE)))


def test_the_anonymised_cluster_schedules_as_the_original() -> None:
    """Every pending pod goes to the same node (through the mapping), at the same time,
    after as many attempts, with the same message and the same preemption victims: zones,
    hostnames, namespaceSelector, default spreading (a Service and a ReplicaSet), Gt on a
    label, matchFields, taints, a spread constraint's matchLabelKeys, a PodGroup, a
    PriorityClass, a PodDisruptionBudget and images all still work."""
    original = run(load_cluster_file(FIXTURE))
    anonymiser, text = anonymised_file()
    anonymised = run(parse_cluster(text, "anonymised"))
    token = anonymiser.values
    assert len(original.pods) == len(anonymised.pods) == 13
    by_key = {f"{p.namespace}/{p.name}": p for p in anonymised.pods}
    for pod in original.pods:
        other = by_key[f"{token[pod.namespace]}/{token[pod.name]}"]
        assert other.node == (token[pod.node] if pod.node else None), pod.name
        assert (other.bound_at, other.attempts, other.message) == (
            pod.bound_at, pod.attempts, pod.message), pod.name
        assert other.victims == tuple(
            "/".join(token[part] for part in v.split("/")) for v in pod.victims), pod.name
    placed = {p.name: p.node for p in original.pods}
    # the fixture's constraints decided these: they would change if a mapping broke
    assert (placed["ml"], placed["pinned"], placed["urgent"]) == ("east-1", "east-1", "west-2")
    assert original.pod("batch/urgent").victims == ("batch/cache-1",)  # type: ignore[union-attr]
    assert original.pod("batch/late").bound_at == 28  # type: ignore[union-attr]


def test_no_original_name_or_label_is_left() -> None:
    _, text = anonymised_file()
    words = set(re.findall(r"[A-Za-z0-9.\-/]+", text))
    for original in ORIGINAL_STRINGS:
        assert not any(original in word for word in words), original


def test_well_known_keys_keep_their_names_not_their_values() -> None:
    anonymiser, text = anonymised_file()
    nodes = [o for o in parse_cluster(text) if o["kind"] == "Node"]
    labels = nodes[0]["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == nodes[0]["metadata"]["name"] == "node-1"
    assert labels["topology.kubernetes.io/zone"] == anonymiser.values["east"] == "value-3"
    # a hostname label holds its node's name: one mapping for names and label values
    assert anonymiser.values["east-1"] == "node-1"
    # integers stay (node affinity's Gt compares them); other keys become tokens
    assert labels[anonymiser.keys["example.com/gpus"]] == "4"
    assert anonymiser.keys["team"].startswith("key-")
    namespaces = [o for o in parse_cluster(text) if o["kind"] == "Namespace"]
    assert namespaces[0]["metadata"]["labels"]["kubernetes.io/metadata.name"] == \
        namespaces[0]["metadata"]["name"] == "namespace-1"


def test_the_same_input_gives_the_same_file() -> None:
    assert anonymised_file()[1] == anonymised_file()[1]


def test_annotations_are_dropped_unless_their_key_is_kept() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "annotations": {"delay": "15", "owner": "alice",
                                                     "example.kubernetes.io/note": "x"}},
           "spec": {"containers": [{"name": "c"}]}}
    assert Anonymiser().anonymised(pod)["metadata"]["annotations"] == {
        "example.kubernetes.io/note": "value-1"}
    assert Anonymiser(["delay"]).anonymised(pod)["metadata"]["annotations"] == {
        "delay": "15", "example.kubernetes.io/note": "value-1"}


def test_system_priority_classes_and_scheduler_names_are_kept() -> None:
    anonymiser = Anonymiser()
    pod = anonymiser.anonymised({
        "kind": "Pod", "metadata": {"name": "p", "namespace": "kube-system"},
        "spec": {"schedulerName": "policysched", "priorityClassName": "system-node-critical",
                 "containers": [{"name": "c", "image": "nginx"}]}})
    assert pod["spec"]["schedulerName"] == "policysched"
    assert pod["spec"]["priorityClassName"] == "system-node-critical"
    assert pod["metadata"] == {"name": "pod-1", "namespace": "namespace-1"}
    node = anonymiser.anonymised({"kind": "Node", "metadata": {"name": "n"}, "spec": {},
                                  "status": {"images": [{"names": ["nginx:latest"]}]}})
    assert node["status"]["images"][0]["names"] == [pod["spec"]["containers"][0]["image"]]


@pytest.mark.parametrize(("key", "kept"), [
    ("kubernetes.io/hostname", True), ("topology.kubernetes.io/zone", True),
    ("node-role.kubernetes.io/control-plane", True), ("scheduling.x-k8s.io/pod-group", True),
    ("app", False), ("example.com/team", False), ("notkubernetes.io/x", False),
    ("k8s.io.example.com/x", False)])
def test_well_known_key(key: str, kept: bool) -> None:
    assert well_known_key(key) is kept


def test_normalised_image() -> None:
    assert normalised_image("nginx") == "nginx:latest"
    assert normalised_image("localhost:5000/nginx") == "localhost:5000/nginx:latest"
    assert normalised_image("nginx:1.2") == "nginx:1.2"


STORAGE_CLUSTER = """
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: east}}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
kind: Pod
metadata: {name: db-0, namespace: shop}
spec:
  nodeName: n1
  containers: [{name: c}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data-db-0}}
  - {name: scratch, ephemeral: {volumeClaimTemplate: {spec: {}}}}
  - {name: disk, gcePersistentDisk: {pdName: secret-disk}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-db-0, namespace: shop}
spec: {storageClassName: fast, volumeName: pv-db, accessModes: [ReadWriteOnce]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: db-0-scratch, namespace: shop}
spec: {storageClassName: fast, accessModes: [ReadWriteOnce]}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-db}
spec:
  storageClassName: fast
  csi: {driver: csi.acme.example, volumeHandle: vol-secret}
  claimRef: {namespace: shop, name: data-db-0}
  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [
    {key: topology.kubernetes.io/zone, operator: In, values: [east]}]}]}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.acme.example
allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [east]}]}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: csi.acme.example, nodeID: i-secret, allocatable: {count: 3}}]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.acme.example}
"""


def test_storage_references_stay_consistent_and_nothing_leaks() -> None:
    """Claims, volumes, classes and CSI drivers are renamed consistently: the anonymised
    cluster links each pod to its claims, volumes and class as the original does, counts
    the same CSI volumes against the same limits, and names nothing of the original."""
    from policysched.cache import Cache
    from policysched.cluster.memory import MemoryBackend

    def loaded(objects: list[dict[str, Any]]) -> tuple[Cache, Any]:
        cache = Cache()
        for event in MemoryBackend(objects).drain_events():
            cache.apply(event)
        [pod] = [p for p in cache.pods()]
        return cache, pod

    original = parse_cluster(STORAGE_CLUSTER)
    text = render(Anonymiser().objects(original))
    for secret in ("shop", "db-0", "data", "fast", "pv-db", "acme", "vol-secret", "i-secret",
                   "secret-disk", "scratch", "east"):
        assert not re.search(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", text), secret
    for objects in (original, parse_cluster(text)):
        cache, pod = loaded(objects)
        snapshot = cache.snapshot()
        views = snapshot.volume_views(pod)
        assert [(v["claim"]["name"] != "", v["persistentVolume"]["name"] != "",
                 v["storageClass"]["name"] != "") for v in views] == [
            (True, True, True), (True, False, True), (False, False, False)]
        assert views[2]["disk"]["kind"] == "gcePersistentDisk"  # its pdName renamed
        node = snapshot.nodes[0]
        [driver] = node.view["csiVolumeLimits"]
        assert node.view == {**node.view, "csiVolumeLimits": {driver: 3},
                             "attachedCSIVolumes": {driver: 2}}
        assert views[0]["persistentVolume"]["nodeAffinity"].matches(
            node.view["labels"], node.name)
        assert snapshot.storage.classes[views[0]["storageClass"]["name"]].allows(
            node.view["labels"])
