"""What a rule reads that a cluster event can change (the facts of its queueing hints)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policysched.policy import load_policy_set
from policysched.policy.loader import load_text
from policysched.policy.policy_set import build_policy_set
from policysched.policy.reads import EVERY_FACT, Fact, policy_reads

ROOT = Path(__file__).resolve().parents[2]
F = Fact


def reads(expression: str, *, point: str = "filter", variables: tuple[str, ...] = (),
          aggregate: str | None = None) -> frozenset[Fact]:
    """The facts rule ``p/r`` reads, its ``expression`` written at ``point``, with
    variables ``v0``, ``v1``... and an aggregate ``a`` of the given ``pods``."""
    lines = ["apiVersion: policysched.io/v1alpha1", "kind: SchedulingPolicy",
             "metadata:", "  name: p", "spec:"]
    if variables:
        lines.append("  variables:")
        for i, text in enumerate(variables):
            lines += [f"  - name: v{i}", f"    expression: {json.dumps(text)}"]
    if aggregate is not None:
        lines += ["  aggregates:", "  - name: a", f"    pods: {json.dumps(aggregate)}",
                  "    groupBy: \"'zone'\""]
    lines += [f"  {point}:", "  - name: r", f"    expression: {json.dumps(expression)}"]
    policy_set = build_policy_set(load_text("\n".join(lines) + "\n", "p.yaml"))
    assert policy_set.valid, policy_set.diagnostics
    return policy_reads(policy_set.policies[0])["p/r"]


@pytest.mark.parametrize(("expression", "facts"), [
    ("node.labels['zone'] == 'a'", {F.NODE_ADDED, F.NODE_LABELS}),
    ("!node.unschedulable && node.taints.size() == 0", {F.NODE_ADDED, F.NODE_TAINTS}),
    ("node.free['cpu'] >= pod.requests['cpu']",
     {F.NODE_ADDED, F.NODE_ALLOCATABLE, F.NODE_USAGE}),
    ("node.podCount < 10", {F.NODE_ADDED, F.NODE_USAGE}),
    ("'a' in node.annotations", {F.NODE_ADDED, F.NODE_ANNOTATIONS}),
    ("size(node.images) > 0", {F.NODE_ADDED, F.NODE_OBJECT}),
    ("node.status.?phase.orValue('') == ''", {F.NODE_ADDED, F.NODE_OBJECT}),
    ("pod.nodeName == '' || pod.nodeName == node.name", {F.NODE_ADDED}),
    ("nodeAffinity(pod.nodeSelector, pod.affinity).matches(node)",
     {F.NODE_ADDED, F.NODE_LABELS}),
    ("preferredNodeAffinity(pod.affinity).score(node) >= 0", {F.NODE_ADDED, F.NODE_LABELS}),
    ("nodePods.all(p, p.labels == pod.labels)", {F.NODE_ADDED, F.PODS}),
    ("pod.podGroup.minMember > 1", {F.POD_GROUPS}),
    ("pod.labels.size() > 0 && now > 0 && pod.priority > 0", set()),
    # claims, volumes and classes (storage events), a node's CSI volume counts
    ("podVolumes.all(v, v.persistentVolume.nodeAffinity.matches(node))",
     {F.NODE_ADDED, F.NODE_LABELS, F.STORAGE}),
    ("node.attachedCSIVolumes[?'d'].orValue(0) < node.csiVolumeLimits[?'d'].orValue(9)",
     {F.NODE_ADDED, F.NODE_USAGE, F.STORAGE}),
    ("podVolumes.all(v, !(v.csiVolume in node.csiVolumes))",
     {F.NODE_ADDED, F.NODE_USAGE, F.STORAGE}),
    ("node.usedDisks.size() + node.usedClaims.size() == 0", {F.NODE_ADDED, F.NODE_USAGE}),
    # which pods use a claim: pods placed, deleted, finished
    ("podVolumes.all(v, v.claim.usedOnNodes.size() == 0)", {F.PODS, F.STORAGE}),
])
def test_a_filter_reads_the_facts_its_fields_come_from(expression: str,
                                                       facts: set[Fact]) -> None:
    assert reads(expression) == facts


@pytest.mark.parametrize(("expression", "facts"), [
    ("nodes.filter(n, !n.unschedulable).size() > 0",
     {F.NODE_ADDED, F.NODE_DELETED, F.NODE_TAINTS}),
    ("nodes.exists(n, n.labels['zone'] == 'a')", {F.NODE_ADDED, F.NODE_DELETED, F.NODE_LABELS}),
    ("nodes.size() > 2", {F.NODE_ADDED, F.NODE_DELETED}),
    ("nodes.sortBy(n, n.labels['zone']).map(n, n.unschedulable)[0]",
     {F.NODE_ADDED, F.NODE_DELETED, F.NODE_LABELS, F.NODE_TAINTS}),
    ("pods.exists(p, p.priority > pod.priority)", {F.PODS}),
    ("podGroupPods >= 2", {F.PODS}),
    ("workloadSelector == null", {F.WORKLOADS}),
])
def test_a_pre_filter_reads_the_cluster_lists_it_uses(expression: str,
                                                      facts: set[Fact]) -> None:
    assert reads(expression, point="preFilter") == facts


@pytest.mark.parametrize(("expression", "point"), [
    ("node == node", "filter"),  # the whole node
    ("cel.bind(n, node, n.labels.size() > 0)", "filter"),
    ("[node].size() == 1", "filter"),
    ("nodes[0].labels.size() > 0", "preFilter"),
    ("nodes.map(n, n).size() > 0", "preFilter"),
    ("nodes == []", "preFilter"),
])
def test_what_it_cannot_follow_reads_every_fact(expression: str, point: str) -> None:
    assert reads(expression, point=point) == EVERY_FACT


def test_variables_and_aggregates_count_what_they_read() -> None:
    assert reads("variables.v1", point="preFilter",
                 variables=("pods.size()", "variables.v0 > 0 && workloadSelector != null")
                 ) == {F.PODS, F.WORKLOADS}
    assert reads("aggregates.a.count(node) == 0",
                 aggregate="podAffinityTerm({}, pod.namespace)") == {
        F.PODS, F.NODE_ADDED, F.NODE_DELETED, F.NODE_LABELS, F.NODE_TAINTS,
        F.NAMESPACE_LABELS}


def test_a_variable_holding_nodes_is_followed_where_it_is_used() -> None:
    assert reads("variables.v1.exists(n, n.taints.size() > 0)", point="preFilter",
                 variables=("nodes.filter(n, n.labels.size() > 0)",
                            "pod.priority > 0 ? variables.v0 : variables.v0 + nodes")) == {
        F.NODE_ADDED, F.NODE_DELETED, F.NODE_LABELS, F.NODE_TAINTS}
    assert reads("variables.v0 == []", point="preFilter",
                 variables=("nodes.filter(n, n.labels.size() > 0)",)) == EVERY_FACT


def test_only_the_gate_prefilter_and_filter_rules_are_hinted() -> None:
    assert reads("pod.labels.size() > 0", point="preEnqueue") == set()
    lines = ["apiVersion: policysched.io/v1alpha1", "kind: SchedulingPolicy",
             "metadata: {name: p}", "spec:", "  reserve:", "  - {name: r, expression: 'true'}"]
    policy_set = build_policy_set(load_text("\n".join(lines) + "\n", "p.yaml"))
    assert policy_reads(policy_set.policies[0]) == {}


def test_the_default_plugins_read_what_kube_scheduler_registers_events_for() -> None:
    """Each built-in filter is woken by no more than its kube-scheduler plugin's
    EventsToRegister (v1.34, queueing hints enabled) ask for, and by what it needs."""
    found: dict[str, frozenset[Fact]] = {}
    for policy in load_policy_set([ROOT / "policies"]).policies:
        found.update(policy_reads(policy))
    # NodeAffinity: Node Add | UpdateNodeLabel
    assert found["node-affinity/node-selector-and-affinity"] == {F.NODE_ADDED, F.NODE_LABELS}
    assert found["node-affinity/named-nodes"] == set()  # the pod's own terms conflict
    # TaintToleration, NodeUnschedulable: Node Add | UpdateNodeTaint
    assert found["taint-toleration/tolerated"] == {F.NODE_ADDED, F.NODE_TAINTS}
    assert found["node-unschedulable/not-cordoned"] == {F.NODE_ADDED, F.NODE_TAINTS}
    # NodeName: Node Add
    assert found["node-name/requested-node"] == {F.NODE_ADDED}
    # NodePorts: Pod Delete, Node Add
    assert found["node-ports/free-host-ports"] == {F.NODE_ADDED, F.NODE_USAGE}
    # NodeResourcesFit: Pod Delete | UpdatePodScaleDown, Node Add | UpdateNodeAllocatable
    assert found["node-resources-fit/fits-request"] == {
        F.NODE_ADDED, F.NODE_ALLOCATABLE, F.NODE_USAGE}
    # InterPodAffinity: Pod Add | UpdatePodLabel | Delete, Node Add | UpdateNodeLabel
    for rule in ("pod-affinity", "pod-anti-affinity", "existing-pods-anti-affinity"):
        assert {F.PODS, F.NODE_ADDED, F.NODE_LABELS} <= found[f"inter-pod-affinity/{rule}"]
        assert F.NODE_USAGE not in found[f"inter-pod-affinity/{rule}"]
    # PodTopologySpread: Pod Add | UpdatePodLabel | Delete, Node Add | Delete |
    # UpdateNodeLabel | UpdateNodeTaint
    assert {F.PODS, F.NODE_ADDED, F.NODE_DELETED, F.NODE_LABELS, F.NODE_TAINTS} <= \
        found["pod-topology-spread/max-skew"]
    assert found["pod-topology-spread/topology-label"] == {
        F.NODE_ADDED, F.NODE_LABELS, F.WORKLOADS}
    # VolumeRestrictions: Pod Delete, Node Add, PersistentVolumeClaim Add
    assert found["volume-restrictions/claims-exist"] == {F.STORAGE}
    assert found["volume-restrictions/disk-conflict"] == {F.NODE_ADDED, F.NODE_USAGE, F.STORAGE}
    assert found["volume-restrictions/read-write-once-pod"] == {
        F.NODE_ADDED, F.NODE_USAGE, F.PODS, F.STORAGE}
    # NodeVolumeLimits: CSINode Add | Update, Pod Delete, PersistentVolumeClaim Add (and a
    # node added, which may come without a limit)
    assert found["node-volume-limits/claims-exist"] == {F.STORAGE}
    assert found["node-volume-limits/max-volume-count"] == {
        F.NODE_ADDED, F.NODE_USAGE, F.STORAGE}
    # VolumeZone: StorageClass Add, Node Add | UpdateNodeLabel, PersistentVolumeClaim and
    # PersistentVolume Add | Update
    assert found["volume-zone/volumes-known"] == {F.STORAGE}
    assert found["volume-zone/volume-zone"] == {F.NODE_ADDED, F.NODE_LABELS, F.STORAGE}
    # Coscheduling's PreFilter: its PodGroup and the pods of the group
    assert found["coscheduling/enough-siblings"] == {F.PODS, F.POD_GROUPS}
    assert found["scheduling-gates/no-gates"] == set()  # the pod's own update only
    assert all(facts != EVERY_FACT for facts in found.values())
