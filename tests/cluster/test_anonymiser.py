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
