"""The hand-written activations have exactly the fields variables.py declares, and every
library file is valid, has the modeline and a header comment."""

from __future__ import annotations

from policysched.policy import load_policy_set
from policysched.policy.variables import OBJECT_TYPES

from .helpers import POLICIES, node, pod

LIBRARY = sorted(p for p in POLICIES.glob("*.yaml"))


def test_pod_view_has_every_declared_field() -> None:
    assert set(pod()) == set(OBJECT_TYPES["policysched.Pod"])
    assert set(pod()["podGroup"]) == set(OBJECT_TYPES["policysched.PodGroup"])
    p = pod(ports=[{"hostPort": 80}], tolerations=[{"key": "k"}])
    assert set(p["ports"][0]) == set(OBJECT_TYPES["policysched.ContainerPort"])
    assert set(p["tolerations"][0]) == set(OBJECT_TYPES["policysched.Toleration"])


def test_node_view_has_every_declared_field() -> None:
    n = node(taints=[{"key": "k", "effect": "NoSchedule"}])
    assert set(n) == set(OBJECT_TYPES["policysched.Node"])
    assert set(n["taints"][0]) == set(OBJECT_TYPES["policysched.Taint"])


def test_library_validates() -> None:
    policy_set = load_policy_set([POLICIES])
    assert policy_set.errors == ()
    assert len(policy_set.configurations) == 1
    assert {p.name for p in policy_set.policies} == {
        "coscheduling", "default-binder", "default-preemption", "delay", "dynamic-resources",
        "image-locality",
        "inter-pod-affinity", "node-affinity", "node-name", "node-ports",
        "node-resources-balanced-allocation", "node-resources-fit",
        "node-resources-most-allocated", "node-unschedulable", "pod-topology-spread",
        "prefer-labelled-nodes", "priority-sort", "resource-limits", "scheduling-gates",
        "taint-toleration", "volume-restrictions", "node-volume-limits", "volume-binding",
        "volume-zone", "zone-a-first",
    }


def test_every_file_starts_with_the_modeline_and_a_header() -> None:
    for path in LIBRARY:
        lines = path.read_text().splitlines()
        schema = ("schedulerconfiguration" if path.name == "scheduler-config.yaml"
                  else "schedulingpolicy")
        assert lines[0] == f"# yaml-language-server: $schema=../schemas/{schema}.schema.json", path
        assert lines[1].startswith("# ") and len(lines[1]) > 10, path


def test_every_policy_has_a_scenario() -> None:
    scenarios = {p.stem for p in (POLICIES.parent / "tests/policies/scenarios").glob("*.yaml")}
    names = {p.stem for p in LIBRARY} - {"scheduler-config"}
    assert names <= scenarios
