"""framework/runtime.py: what an expression sees at run time — here ``workloadSelector``,
kube-scheduler's DefaultSelector of the pod, from the Services and controllers the cache
keeps (model.workloads) — and how preFilter's rules run (kube-scheduler's
RunPreFilterPlugins)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.runtime import CycleState
from policysched.framework.scheduler import Scheduler
from policysched.model.clock import SimulatedClock

from ..cache.objects_builder import (
    controlled_by,
    make_controller,
    make_node,
    make_pod,
    make_service,
)
from . import POLICIES_ONLY

PROFILE = "policysched"
HOSTNAME = "kubernetes.io/hostname"
# at most one pod of a workload per node; a pod of no workload counts nothing
POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: one-per-node
spec:
  aggregates:
  - name: siblings
    pods: "{'labelSelector': workloadSelector}"
    groupBy: "'kubernetes.io/hostname'"
  filter:
  - name: alone
    expression: aggregates.siblings.onNode(node) == 0
    reason: node(s) already run a pod of the workload
"""
REASON = "node(s) already run a pod of the workload"
# a filter reading it through a variable: the vectorised tier's per-template reuse must
# not keep a result that depended on it (it changes without the pod changing)
LONER_POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: loners
spec:
  variables:
  - name: workload
    expression: workloadSelector
  filter:
  - name: no-workload
    expression: variables.workload == null
    reason: pod(s) of a workload are not welcome
"""


def pod(name: str, app: str, *, namespace: str = "default", node: str | None = None
        ) -> dict[str, Any]:
    return make_pod(name, namespace=namespace, node=node, labels={"app": app},
                    schedulerName=PROFILE)


def scheduler(tmp_path: Path, objects: list[dict[str, Any]], policy: str = POLICY
              ) -> tuple[Scheduler, MemoryBackend, SimulatedClock]:
    (tmp_path / "policy.yaml").write_text(policy)
    engine = load_engine([str(tmp_path / "policy.yaml")], POLICIES_ONLY)
    node = make_node("n1")
    node["metadata"]["labels"] = {HOSTNAME: "n1"}
    clock = SimulatedClock(0)
    backend = MemoryBackend([node, *objects], clock)
    s = Scheduler(backend, engine.frameworks, engine.settings)
    s.sync()
    return s, backend, clock


def run(s: Scheduler, clock: SimulatedClock) -> dict[str, tuple[str | None, str | None]]:
    """Schedule until nothing is due within a minute (backoffs end; an unschedulable
    pod not moved by an event waits five)."""
    end = clock.now() + 60
    while True:
        while s.schedule_one():
            s.sync()
        wakeup = s.next_wakeup()
        if wakeup is None or wakeup > end:
            return {k: (r.node, r.message) for k, r in s.records.items()}
        clock.advance_to(max(wakeup, clock.now()))
        s.advance()


def test_workload_selector_is_the_pods_default_selector(tmp_path: Path) -> None:
    web = controlled_by(pod("web-1", "web"), "ReplicaSet", "web")
    s, _, _ = scheduler(tmp_path, [
        make_service("front", {"app": "web"}),
        make_controller("ReplicaSet", "web", {"matchExpressions": [
            {"key": "app", "operator": "In", "values": ["web", "www"]}]}),
        web, pod("api-1", "api")])
    snapshot = s.cache.snapshot()
    [instance] = s.profiles[PROFILE].instances
    want = {"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "app", "operator": "In", "values": ["web", "www"]}]}
    for key, expected in (("default/web-1", want), ("default/api-1", None)):
        info = s.cache.pod(key)
        assert info is not None
        base = s.cycle_state(info, snapshot).base(instance)
        assert base["workloadSelector"] == expected
        assert base["workloadSelector"] == s.cache.default_selector(info)
        # without a cluster snapshot (the preEnqueue gate's state): null
        assert CycleState(info, 0, list, list).base(instance)["workloadSelector"] is None


def test_a_rule_counts_the_pods_of_the_pods_workload(tmp_path: Path) -> None:
    """web-1 is selected by the Service "front", as web-0 on n1 is: n1 is taken. db-1's
    StatefulSet selects db-0 too, but db-0 is of another namespace; api-1 belongs to no
    workload (the ReplicaSet selecting its labels is not its controller). Deleting the
    Service moves web-1 back, and its workload is then none."""
    s, backend, clock = scheduler(tmp_path, [
        make_service("front", {"app": "web"}),
        make_controller("StatefulSet", "db", {"matchLabels": {"app": "db"}}),
        make_controller("ReplicaSet", "api", {"matchLabels": {"app": "api"}}),
        pod("web-0", "web", node="n1"), pod("db-0", "db", namespace="other", node="n1"),
        pod("api-0", "api", node="n1"),
        pod("web-1", "web"), controlled_by(pod("db-1", "db"), "StatefulSet", "db"),
        pod("api-1", "api")])
    outcomes = run(s, clock)
    assert outcomes["default/web-1"][0] is None
    assert REASON in str(outcomes["default/web-1"][1])
    assert outcomes["default/db-1"][0] == "n1"
    assert outcomes["default/api-1"][0] == "n1"
    backend.delete_object("Service", "front")
    s.sync()
    assert run(s, clock)["default/web-1"][0] == "n1"


def test_a_result_that_read_it_is_not_reused_once_it_changed(tmp_path: Path) -> None:
    """The Service goes, web-1 is retried with the same template: its filter is evaluated
    anew (``workloadSelector`` is one of the vectorised tier's cycle inputs)."""
    s, backend, clock = scheduler(tmp_path, [make_service("front", {"app": "web"}),
                                             pod("web-1", "web")], LONER_POLICY)
    node, message = run(s, clock)["default/web-1"]
    assert node is None and "pod(s) of a workload are not welcome" in str(message)
    backend.delete_object("Service", "front")
    s.sync()
    assert run(s, clock)["default/web-1"][0] == "n1"


# -- preFilter: kube-scheduler's RunPreFilterPlugins, a policy being a plugin ------------------

def pre_filter_policy(name: str, rules: str, plugin: str = "") -> str:
    plugin_line = f"  pluginName: {plugin}\n" if plugin else ""
    return (f"apiVersion: policysched.io/v1alpha1\nkind: SchedulingPolicy\nmetadata:\n"
            f"  name: {name}\nspec:\n{plugin_line}  preFilter:\n{rules}")


def rejecting(message: str, *, unresolvable: bool = False, retry: int | None = None,
              name: str = "reject", expression: str = "false") -> str:
    retry_line = f"    retryAfter: '{retry}'\n" if retry is not None else ""
    return (f"  - name: {name}\n    expression: '{expression}'\n    message: {message}\n"
            f"    unresolvable: {str(unresolvable).lower()}\n{retry_line}")


def naming(*nodes: str) -> str:
    return f"  - name: narrow\n    nodeNames: \"{list(nodes)!r}\"\n"


def first_failure(tmp_path: Path, policies: list[str], nodes: int = 3
                  ) -> tuple[str | None, Scheduler]:
    """The message of pod ``p``'s first attempt with exactly these ``policies``."""
    for path in tmp_path.glob("*.yaml"):
        path.unlink()
    for i, text in enumerate(policies):
        (tmp_path / f"{i}.yaml").write_text(text)
    s = Scheduler(MemoryBackend([make_node(f"n{i}") for i in range(nodes)]
                                + [make_pod("p", schedulerName=PROFILE)],
                                SimulatedClock(1_700_000_000)),
                  load_engine([str(tmp_path)], POLICIES_ONLY).frameworks)
    s.sync()
    s.schedule_one()
    return s.records["default/p"].message, s


def test_an_unschedulable_pre_filter_rejection_lets_later_policies_run_the_last_wins(
        tmp_path: Path) -> None:
    message, s = first_failure(tmp_path, [
        pre_filter_policy("a", rejecting("first", retry=30)),
        pre_filter_policy("b", rejecting("second", retry=10))])
    assert message == "0/3 nodes are available: second."
    # retried when both may pass: after the longer delay
    assert s.next_wakeup() == 1_700_000_000 + 30


def test_an_unresolvable_pre_filter_rejection_ends_pre_filter(tmp_path: Path) -> None:
    message, _ = first_failure(tmp_path, [
        pre_filter_policy("a", rejecting("first", unresolvable=True)),
        pre_filter_policy("b", rejecting("second"))])
    assert message == "0/3 nodes are available: first."


def test_a_policy_stops_at_its_first_rejection(tmp_path: Path) -> None:
    message, _ = first_failure(tmp_path, [
        pre_filter_policy("a", rejecting("first") + rejecting("second", name="again"))])
    assert message == "0/3 nodes are available: first."


def test_nodes_left_out_by_node_names_are_named_after_the_plugins(tmp_path: Path) -> None:
    # kube: "node(s) didn't satisfy plugin(s) [NodeAffinity]" (sets.List of the plugins
    # that returned node names, printed with %v)
    message, _ = first_failure(tmp_path, [
        pre_filter_policy("a", naming("n0", "n1"), plugin="Zeta"),
        pre_filter_policy("b", naming("n1", "gone")),
        pre_filter_policy("c", rejecting("unused", expression="true"))])
    assert message is None  # n1 fits
    message, _ = first_failure(tmp_path, [
        pre_filter_policy("a", naming("gone"), plugin="Zeta")])
    assert message == ("0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [Zeta].")


def test_node_names_that_intersect_to_nothing_reject_the_pod_as_unresolvable(
        tmp_path: Path) -> None:
    # kube's texts from RunPreFilterPlugins, one plugin and several
    message, _ = first_failure(tmp_path, [pre_filter_policy("a", naming())])
    assert message == "0/3 nodes are available: node(s) didn't satisfy plugin a."
    message, _ = first_failure(tmp_path, [
        pre_filter_policy("b", naming("n0"), plugin="Zeta"),
        pre_filter_policy("a", naming("n1"), plugin="Alpha"),
        pre_filter_policy("c", rejecting("not reached"))])
    assert message == ("0/3 nodes are available: node(s) didn't satisfy plugin(s) "
                       "[Alpha Zeta] simultaneously.")


def test_without_nodes_the_pod_is_told_so_before_pre_filter(tmp_path: Path) -> None:
    # kube's ErrNoNodesAvailable comes before PreFilter
    message, _ = first_failure(tmp_path, [pre_filter_policy("a", rejecting("first"))],
                               nodes=0)
    assert message == "no nodes available to schedule pods"


# --------------------------------------------------------------------------- volumes

ZONE = "topology.kubernetes.io/zone"
VOLUME_POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: volumes
spec:
  filter:
  - name: bound
    expression: podVolumes.all(v, v.claim.volumeName != '')
    reason: pod has unbound immediate PersistentVolumeClaims
  - name: zone
    expression: podVolumes.all(v, v.persistentVolume.nodeAffinity.matches(node))
    reason: node(s) didn't match PersistentVolume's node affinity
  - name: limit
    expression: >-
      podVolumes.filter(v, v.persistentVolume.csiDriver != '').all(v,
        node.attachedCSIVolumes[?v.persistentVolume.csiDriver].orValue(0) <
        node.csiVolumeLimits[?v.persistentVolume.csiDriver].orValue(1000))
    reason: node(s) exceed max volume count
"""


def claim(name: str, volume: str = "") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"volumeName": volume, "accessModes": ["ReadWriteOnce"]}}


def volume(name: str, zone: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "csi": {"driver": "d", "volumeHandle": name},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": ZONE, "operator": "In", "values": [zone]}]}]}}}}


def with_claim(name: str, claim_name: str, node: str | None = None) -> dict[str, Any]:
    obj = pod(name, "db", node=node)
    obj["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {
        "claimName": claim_name}}]
    return obj


def zoned_node(name: str, zone: str) -> dict[str, Any]:
    node = make_node(name)
    node["metadata"]["labels"] = {HOSTNAME: name, ZONE: zone}
    return node


def test_pod_volumes_are_read_by_rules_and_a_binding_requeues(tmp_path: Path) -> None:
    """podVolumes: a claim bound to a zonal volume pulls its pod to the zone; a node whose
    CSINode limit its attached volumes reach is full; a pod whose claim is unbound is
    unschedulable until the claim binds (a storage event requeues it at once)."""
    csi_node = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                "metadata": {"name": "n2"},
                "spec": {"drivers": [{"name": "d", "nodeID": "n2", "allocatable": {"count": 1}}]}}
    s, backend, clock = scheduler(tmp_path, [
        zoned_node("n2", "b"), zoned_node("n3", "b"), csi_node,
        volume("pv-a", "a"), volume("pv-b", "b"), volume("pv-b2", "b"), volume("pv-c", "b"),
        claim("a", "pv-a"), claim("b", "pv-b"), claim("b2", "pv-b2"), claim("late"),
        with_claim("running", "b2", node="n2"),  # n2's one CSI volume is in use
        with_claim("zone-a", "a"), with_claim("zone-b", "b"), with_claim("waits", "late")],
        VOLUME_POLICY)
    # n1 has no zone label: zone a is nowhere
    info = s.cache.pod("default/zone-b")
    assert info is not None
    [view] = s.cycle_state(info, s.cache.snapshot()).base(
        s.profiles[PROFILE].instances[0])["podVolumes"]
    assert (view["claim"]["volumeName"], view["persistentVolume"]["csiDriver"]) == ("pv-b", "d")
    outcomes = run(s, clock)
    assert outcomes["default/zone-b"][0] == "n3"  # n2 is at its CSI limit
    assert outcomes["default/zone-a"][0] is None
    assert "didn't match PersistentVolume's node affinity" in str(outcomes["default/zone-a"][1])
    assert outcomes["default/waits"][0] is None
    assert "unbound immediate PersistentVolumeClaims" in str(outcomes["default/waits"][1])
    backend.update_object(claim("late", "pv-c"))
    s.sync()
    # moved back by the claim's update, within the minute run() waits (not the five
    # minutes an unschedulable pod waits without an event that may help it)
    assert run(s, clock)["default/waits"][0] == "n3"
