"""Storage in parity scenarios: the new kinds survive a cluster file, kube's bindings and
selected nodes reach later decisions' clusters, the oracle creates pre-bound pairs for the
PV binder to bind, and the volume features are read from the pod and its claims."""

from __future__ import annotations

import copy

import pytest

from .features import features
from .generator import scenario as generated
from .generator_storage import STORAGE_SHARE, wants_storage
from .oracle_storage import expected_phase, for_kube, waits_for_provisioning
from .outcome import Outcome
from .replay import Replay, state_before
from .scenario import (
    CSI_DRIVER,
    CSI_NODE,
    NAMESPACE,
    NODE,
    POD,
    PV,
    PVC,
    STORAGE_CLASS,
    STORAGE_KINDS,
    Object,
    Scenario,
    parse_scenario,
)
from .storage import (
    BIND_COMPLETED,
    NO_PROVISIONER,
    SELECTED_NODE,
    bound_claim,
    bound_volume,
    prebound_pairs,
    volume_decisions,
    with_storage_decisions,
)

NS = "s-a"


def storage_class(name: str, mode: str = "WaitForFirstConsumer",
                  provisioner: str = NO_PROVISIONER) -> Object:
    return {"apiVersion": "storage.k8s.io/v1", "kind": STORAGE_CLASS, "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode}


def volume(name: str, cls: str, **spec: object) -> Object:
    return {"apiVersion": "v1", "kind": PV, "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": cls, "hostPath": {"path": "/tmp/x"}, **spec},
            "status": {"phase": "Available"}}


def claim(name: str, cls: str, modes: tuple[str, ...] = ("ReadWriteOnce",)) -> Object:
    return {"apiVersion": "v1", "kind": PVC, "metadata": {"name": name, "namespace": NS},
            "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": "1Gi"}},
                     "storageClassName": cls}, "status": {"phase": "Pending"}}


def pod(name: str, *claims: str, node: str | None = None, **spec: object) -> Object:
    body: Object = {"containers": [{"name": "c", "image": "pause"}],
                    "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                                for i, c in enumerate(claims)], **spec}
    if node:
        body["nodeName"] = node
    else:
        body["schedulerName"] = "policysched"
    return {"apiVersion": "v1", "kind": POD, "metadata": {"name": name, "namespace": NS},
            "spec": body}


def node(name: str) -> Object:
    return {"apiVersion": "v1", "kind": NODE, "metadata": {"name": name, "labels": {}},
            "status": {"allocatable": {"cpu": "1", "pods": "110"}}}


def csi_node(name: str, driver: str, count: int) -> Object:
    return {"apiVersion": "storage.k8s.io/v1", "kind": CSI_NODE, "metadata": {"name": name},
            "spec": {"drivers": [{"name": driver, "nodeID": name,
                                  "allocatable": {"count": count}}]}}


def pair(name: str, cls: str, **spec: object) -> tuple[Object, Object]:
    """A pre-bound (claim, volume)."""
    c, v = claim(name, cls), volume(f"pv-{name}", cls, **spec)
    return bound_claim(c, v, by_controller=False), bound_volume(v, c, by_controller=False)


def a_scenario() -> Scenario:
    bound_c, bound_v = pair("bound", "imm", csi={"driver": "d.example", "volumeHandle": "h"})
    objects = [
        {"apiVersion": "v1", "kind": NAMESPACE, "metadata": {"name": NS}},
        csi_node("n0", "d.example", 2), node("n0"), node("n1"),
        storage_class("wffc"), storage_class("imm", "Immediate"),
        storage_class("prov", provisioner="example.com/p"),
        {"apiVersion": "storage.k8s.io/v1", "kind": CSI_DRIVER,
         "metadata": {"name": "d.example"}, "spec": {}},
        volume("pv-static", "wffc"), bound_v, bound_c,
        claim("wait", "wffc"), claim("provision", "prov"), claim("now", "imm"),
        claim("once", "imm", ("ReadWriteOncePod",)),
        pod("user", "bound", node="n0"),
    ]
    pending = (pod("p-wait", "wait"), pod("p-bound", "bound"), pod("p-provision", "provision"),
               pod("p-missing", "nope"), pod("p-now", "now", "once"),
               pod("p-disk", volumes=[{"name": "d", "gcePersistentDisk": {"pdName": "x"}}]))
    return Scenario("s", tuple(objects), pending)


def test_storage_kinds_survive_a_cluster_file_in_creation_order() -> None:
    s = a_scenario()
    back = parse_scenario(s.to_cluster_file(), "other")
    assert back.canonical() != s.canonical()  # reordered: by kind
    kinds = [o["kind"] for o in back.objects]
    assert kinds == [NAMESPACE, STORAGE_CLASS, STORAGE_CLASS, STORAGE_CLASS, CSI_DRIVER, PV, PV,
                     PVC, PVC, PVC, PVC, PVC, NODE, NODE, CSI_NODE, POD]
    assert sorted(map(str, back.objects)) == sorted(map(str, s.objects))
    assert back.pending == s.pending
    assert set(STORAGE_KINDS) <= set(kinds)


def test_prebound_pairs_name_each_other() -> None:
    pairs = prebound_pairs(a_scenario().objects)
    assert [(c["metadata"]["name"], v["metadata"]["name"]) for c, v in pairs] == [
        ("bound", "pv-bound")]
    c, v = pairs[0]
    assert v["spec"]["claimRef"] == {"kind": PVC, "namespace": NS, "name": "bound"}
    assert c["metadata"]["annotations"] == {BIND_COMPLETED: "yes"}
    assert c["status"]["phase"] == v["status"]["phase"] == "Bound"


def test_the_oracle_creates_a_pair_for_the_pv_binder_to_bind() -> None:
    c, v = prebound_pairs(a_scenario().objects)[0]
    v["spec"]["claimRef"]["uid"] = "u1"
    created_v, created_c = for_kube(v), for_kube(c, {"pv-bound"})
    assert "status" not in created_v and "uid" not in created_v["spec"]["claimRef"]
    assert "status" not in created_c and not created_c["metadata"]["annotations"]
    assert v["spec"]["claimRef"]["uid"] == "u1"  # the scenario's object is left alone
    assert expected_phase(c) == "Bound" and expected_phase(for_kube(v)) == "Available"
    lost = copy.deepcopy(c)  # bound to a volume the scenario lacks: created as it is
    assert for_kube(lost, set())["metadata"]["annotations"] == {BIND_COMPLETED: "yes"}


def test_claims_waiting_for_a_provisioner() -> None:
    s = a_scenario()
    assert [waits_for_provisioning(s, p) for p in s.pending] == [
        [], [], [f"{NS}/provision"], [], [], []]


def test_later_decisions_see_the_claims_kube_bound_and_not_a_pod_left_waiting() -> None:
    s = a_scenario()
    kube = [Outcome(f"{NS}/p-wait", "n1", bindings={f"{NS}/wait": "pv-static"}),
            Outcome(f"{NS}/p-bound", "n0"),
            Outcome(f"{NS}/p-provision", "n1", selected={f"{NS}/provision": "n1"},
                    waiting=True),
            Outcome(f"{NS}/p-missing", None, "0/2 nodes are available")]
    objects = state_before(s, kube, 4)
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    wait, static = by_name[(PVC, "wait")], by_name[(PV, "pv-static")]
    assert wait["spec"]["volumeName"] == "pv-static" and wait["status"]["phase"] == "Bound"
    assert BIND_COMPLETED in wait["metadata"]["annotations"]
    assert static["spec"]["claimRef"]["name"] == "wait" and static["status"]["phase"] == "Bound"
    assert by_name[(PVC, "provision")]["metadata"]["annotations"] == {SELECTED_NODE: "n1"}
    placed = {o["metadata"]["name"]: o["spec"]["nodeName"] for o in objects
              if o["kind"] == POD and o["spec"].get("nodeName")}
    assert placed == {"user": "n0", "p-wait": "n1", "p-bound": "n0"}
    assert objects[-1]["metadata"]["name"] == "p-now"
    # the scenario itself is unchanged
    assert "volumeName" not in next(o for o in s.objects if o["metadata"]["name"] == "wait")["spec"]


def test_decisions_without_storage_changes_keep_the_objects() -> None:
    objects = list(a_scenario().objects)
    assert with_storage_decisions(objects, {}, {}) == objects
    assert with_storage_decisions(objects, {f"{NS}/gone": "pv-static"}, {}) == objects


def test_outcome_json_keeps_the_storage_fields_and_omits_them_when_empty() -> None:
    o = Outcome("ns/p", "n1", bindings={"ns/c": "pv"}, selected={"ns/d": "n1"}, waiting=True)
    assert Outcome.from_json(o.as_json()) == o
    assert set(Outcome("ns/p", "n1").as_json()) == {"pod", "node", "message"}


@pytest.mark.parametrize(("index", "expected"), [
    (0, {"wffc-static"}),
    (1, {"bound-volumes", "csi-limits"}),
    (2, {"wffc-provision"}),
    (3, {"missing-claim"}),
    (4, {"unbound-immediate", "rwop"}),
    (5, {"disk-conflicts"}),
])
def test_volume_features(index: int, expected: set[str]) -> None:
    s = a_scenario()
    volume_features = {"bound-volumes", "missing-claim", "unbound-immediate", "wffc-static",
                       "wffc-provision", "volume-zones", "rwop", "disk-conflicts", "csi-limits"}
    assert features(s, s.pending[index]) & volume_features == expected


def test_zone_labels_of_a_bound_volume_are_a_volume_zone_feature() -> None:
    c, v = pair("z", "imm")
    v["metadata"]["labels"] = {"topology.kubernetes.io/zone": "a__b"}
    s = Scenario("z", (c, v), (pod("p", "z"),))
    assert "volume-zones" in features(s, s.pending[0])


def test_the_storage_theme_is_deterministic_and_leaves_other_scenarios_alone() -> None:
    chosen = [i for i in range(200) if any(o["kind"] in STORAGE_KINDS
                                           for o in generated(1, i).objects)]
    assert 0.3 * STORAGE_SHARE * 200 < len(chosen) < 200 * STORAGE_SHARE
    assert generated(1, chosen[0]).canonical() == generated(1, chosen[0]).canonical()
    plain = next(i for i in range(200) if i not in chosen)
    s = generated(1, plain)
    assert all("volumes" not in p["spec"] for p in (*s.bound_pods, *s.pending))
    preempting = [i for i in range(200) if i % 10 in (2, 5, 8)]  # the preemption themes
    assert not set(preempting) & set(chosen)
    assert wants_storage(1, chosen[0], "preemption") is None


def test_a_decision_records_the_claims_it_bound_or_selected_a_node_for() -> None:
    s = a_scenario()
    after = {c["metadata"]["name"]: c for c in s.of_kind(PVC)}
    after["wait"] = bound_claim(after["wait"], volume("pv-static", "wffc"))
    after["provision"] = with_storage_decisions([after["provision"]], {},
                                                {f"{NS}/provision": "n1"})[0]
    p = pod("p", "wait", "provision", "bound", "nope")
    assert volume_decisions(p, s.objects, lambda _, name: after.get(name)) == (
        {f"{NS}/wait": "pv-static"}, {f"{NS}/provision": "n1"})
    # a claim bound before the decision (the pre-bound pair "bound") is not the decision's
    assert volume_decisions(pod("q", "bound"), s.objects, lambda _, name: after.get(name)) == (
        {}, {})


def test_the_replay_records_the_volume_our_binder_chose_and_the_node_it_selected() -> None:
    objects = (
        {"apiVersion": "v1", "kind": NAMESPACE, "metadata": {"name": NS}}, node("n0"),
        storage_class("wffc"), storage_class("prov", provisioner="example.com/p"),
        volume("pv-large", "wffc", capacity={"storage": "5Gi"}), volume("pv-small", "wffc"),
        volume("pv-rwx", "wffc", accessModes=["ReadWriteMany"]),
        claim("c", "wffc"), claim("d", "prov"))
    s = Scenario("r", objects, (pod("p", "c", "d"),))
    ours = Replay().decide(state_before(s, [], 0), before=s.objects)
    assert ours.node == "n0"
    # the smallest volume of the claim's class and access modes, as kube's FindMatchingVolume
    assert ours.bindings == {f"{NS}/c": "pv-small"}
    assert ours.selected == {f"{NS}/d": "n0"}  # provisioned in-process: selected, not bound
