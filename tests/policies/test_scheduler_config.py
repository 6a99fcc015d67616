"""scheduler-config.yaml: the built-in profile is kube-scheduler v1.34's default profile."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from policysched.policy import ExtensionPoint

from .helpers import POLICIES, load

CONFIG = yaml.safe_load((POLICIES / "scheduler-config.yaml").read_text())
PROFILES = {p["schedulerName"]: p for p in CONFIG["profiles"]}

# kube-scheduler plugin -> our policy (None: not reproduced)
PLUGINS = {
    "SchedulingGates": "scheduling-gates", "PrioritySort": "priority-sort",
    "NodeUnschedulable": "node-unschedulable", "NodeName": "node-name",
    "TaintToleration": "taint-toleration", "NodeAffinity": "node-affinity",
    "NodePorts": "node-ports", "NodeResourcesFit": "node-resources-fit",
    "VolumeRestrictions": "volume-restrictions", "NodeVolumeLimits": "node-volume-limits",
    "VolumeBinding": "volume-binding", "VolumeZone": "volume-zone",
    "PodTopologySpread": "pod-topology-spread",
    "InterPodAffinity": "inter-pod-affinity", "DefaultPreemption": "default-preemption",
    "NodeResourcesBalancedAllocation": "node-resources-balanced-allocation",
    "ImageLocality": "image-locality", "DefaultBinder": "default-binder",
    "DynamicResources": "dynamic-resources",
}
# default_plugins.go, v1.34 (checked against the Go source below when it is on this machine)
DEFAULT_PROFILE = [
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None),
    ("NodeName", None), ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None),
    ("NodeResourcesFit", 1), ("VolumeRestrictions", None), ("NodeVolumeLimits", None),
    ("VolumeBinding", None), ("VolumeZone", None), ("PodTopologySpread", 2),
    ("InterPodAffinity", 2), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
]
# applyDynamicResources (DynamicResourceAllocation, GA and on in v1.34): inserted before
# DefaultPreemption
FEATURE_GATED = ("DynamicResources", "DefaultPreemption")
# deploy/local/cluster.sh's module cache
GO_SOURCE = (Path(os.environ.get("POLICYSCHED_CACHE") or Path.home() / ".cache" / "policysched")
             / "gomod/k8s.io/kubernetes@v1.34.12/pkg/scheduler/apis/config/v1/default_plugins.go")


@pytest.mark.skipif(not GO_SOURCE.exists(), reason="kube-scheduler source not on this machine")
def test_default_profile_table_matches_the_go_source() -> None:
    text = GO_SOURCE.read_text()
    block = text[text.index("MultiPoint: v1.PluginSet{"):text.index("applyFeatureGates(plugins)")]
    found = [(name, int(weight) if weight else None) for name, weight in re.findall(
        r"\{Name: names\.(\w+)(?:, Weight: ptr\.To\[int32\]\((\d+)\))?\}", block)]
    assert found == DEFAULT_PROFILE
    insertion = text[text.index("func applyDynamicResources"):]
    assert "extended = append(extended, v1.Plugin{Name: names.DynamicResources})" in insertion
    assert "== names.DefaultPreemption" in insertion


def with_feature_gated(profile: list[tuple[str, int | None]]) -> list[tuple[str, int | None]]:
    """The default profile with the plugins kube-scheduler adds for features on by
    default (``FEATURE_GATED``: the plugin, and the one it goes before)."""
    plugin, before = FEATURE_GATED
    i = [name for name, _ in profile].index(before)
    return [*profile[:i], (plugin, None), *profile[i:]]


def test_builtin_profile_is_the_default_profile_plus_the_articles() -> None:
    enabled = PROFILES["policysched"]["policies"]["enabled"]
    expected = [(PLUGINS[name], weight) for name, weight in with_feature_gated(DEFAULT_PROFILE)
                if PLUGINS[name]]
    got = [(e["name"], e.get("weight")) for e in enabled]
    assert got[:len(expected)] == expected
    assert got[len(expected):] == [("delay", None), ("coscheduling", None)]
    assert PROFILES["policysched"]["policies"]["disabled"] == [{"name": "*"}]
    assert PROFILES["policysched"]["queueSort"] == "priority-sort"


def test_policies_reproducing_a_plugin_are_named_after_it_in_framework_texts() -> None:
    for plugin, name in PLUGINS.items():
        if name is not None:
            assert load(name).plugin == plugin, name


def test_score_rules_carry_weight_1_so_the_profile_weights_are_kube_weights() -> None:
    for entry in PROFILES["policysched"]["policies"]["enabled"]:
        for rule in load(entry["name"]).rules_for(ExtensionPoint.SCORE):
            assert getattr(rule, "weight", None) == 1, (entry["name"], rule.name)


def test_zones_profile_overrides_the_custom_score() -> None:
    enabled = {e["name"]: e for e in PROFILES["policysched-zones"]["policies"]["enabled"]}
    custom = enabled["prefer-labelled-nodes"]
    assert custom["params"] == {"labelKey": "topology.kubernetes.io/zone", "values": ["zone-a"]}
    assert custom["weight"] == 5
    assert set(custom["params"]) <= set(load("prefer-labelled-nodes").params)


def test_configuration_builds_frameworks() -> None:
    from policysched.framework.profiles import build_frameworks
    from policysched.policy import load_policy_set

    policy_set = load_policy_set([POLICIES])
    [configuration] = policy_set.configurations
    frameworks, _ = build_frameworks(policy_set.policies, dict(configuration.value))
    assert set(frameworks) == {"policysched", "policysched-zones"}
    weights = {i.name: i.weight for i in frameworks["policysched"].instances}
    assert weights["taint-toleration"] == 3 and weights["inter-pod-affinity"] == 2
    zones = {i.name: i for i in frameworks["policysched-zones"].instances}
    assert zones["prefer-labelled-nodes"].params["values"] == ["zone-a"]
