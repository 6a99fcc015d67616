"""The comparison of one decision: a nomination kube picked among candidates our preemption
ranks as equally good agrees, with the victims we would evict there and nothing else."""

from __future__ import annotations

import pytest

from .compare import Comparison
from .outcome import Outcome
from .scenario import PV, Object, Scenario

POD = "ns/p"
TIED = {"n1": ("ns/a",), "n2": ("ns/b", "ns/c")}


def volume(name: str, size: str) -> Object:
    return {"apiVersion": "v1", "kind": PV, "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}}}


VOLUMES = (volume("pv-small", "1Gi"), volume("pv-small-too", "1024Mi"),
           volume("pv-large", "5Gi"))


def compare(kube: Outcome, ours: Outcome) -> Comparison:
    return Comparison(Scenario("s", VOLUMES, ()), 0, kube, ours, frozenset())


def preempted(node: str, victims: tuple[str, ...], bound: str | None = None,
              tied: dict[str, tuple[str, ...]] | None = None) -> Outcome:
    return Outcome(POD, bound if bound is not None else node, "0/2 nodes are available.",
                   node, victims, tied=tied or {})


def test_a_nomination_among_our_tied_candidates_with_our_victims_there_agrees() -> None:
    c = compare(preempted("n2", ("ns/b", "ns/c")), preempted("n1", ("ns/a",), tied=TIED))
    assert c.nomination_tied and not c.differences


@pytest.mark.parametrize(("node", "victims", "kind"), [
    ("n2", ("ns/b",), "preemption: other victims on a node tied with ours"),
    ("n3", ("ns/d",), "preemption: other nominated node"),
])
def test_other_victims_or_a_node_not_tied_differ(node: str, victims: tuple[str, ...],
                                                 kind: str) -> None:
    c = compare(preempted(node, victims), preempted("n1", ("ns/a",), tied=TIED))
    assert c.differences == ("node", "victims") and c.kind == kind


def test_a_tied_nomination_still_needs_each_pod_bound_to_its_nomination() -> None:
    c = compare(preempted("n2", ("ns/b", "ns/c"), bound="n0"),
                preempted("n1", ("ns/a",), tied=TIED))
    assert c.differences == ("node",)


def test_only_one_side_nominating_is_said() -> None:
    c = compare(Outcome(POD, None, "0/2 nodes are available."),
                preempted("n1", ("ns/a",), tied=TIED))
    assert "preemption: only ours nominates" in c.causes


CLAIM = "ns/c"


def bound(node: str, volume: str | None = None, selected: str | None = None,
          waiting: bool = False) -> Outcome:
    return Outcome(POD, node, bindings={CLAIM: volume} if volume else {},
                   selected={CLAIM: selected} if selected else {}, waiting=waiting)


def test_the_same_volume_for_the_claim_agrees() -> None:
    c = compare(bound("n1", "pv-small"), bound("n1", "pv-small"))
    assert c.applies("volumes") and c.agrees("volumes") and not c.differences


def test_another_volume_of_the_same_capacity_agrees() -> None:
    """kube's FindMatchingVolume picks among equally small matches at random."""
    assert compare(bound("n1", "pv-small"), bound("n1", "pv-small-too")).agrees("volumes")


def test_another_volume_for_the_claim_is_a_difference() -> None:
    c = compare(bound("n1", "pv-small"), bound("n1", "pv-large"))
    assert c.differences == ("volumes",)
    assert c.kind == "VolumeBinding: other PersistentVolume chosen"


@pytest.mark.parametrize(("kube", "ours", "kind"), [
    (bound("n1", "pv"), bound("n1"), "VolumeBinding: bound claims differ"),
    (bound("n1", selected="n1"), bound("n1", "pv"),
     "VolumeBinding: provisioned claims differ + VolumeBinding: bound claims differ"),
])
def test_a_claim_only_one_side_binds_or_provisions_is_a_difference(kube: Outcome, ours: Outcome,
                                                                   kind: str) -> None:
    c = compare(kube, ours)
    assert c.differences == ("volumes",) and c.kind == kind


def test_on_another_node_of_kubes_top_scores_only_the_claims_are_compared() -> None:
    kube = Outcome(POD, "n1", scores={"n1": 50, "n2": 50}, bindings={CLAIM: "pv-on-n1"})
    c = compare(kube, bound("n2", "pv-on-n2"))
    assert c.agrees("node") and c.agrees("volumes")


def test_a_pod_kube_left_waiting_compares_its_selected_nodes_only() -> None:
    c = compare(bound("n1", selected="n1", waiting=True), bound("n1", selected="n1"))
    assert c.agrees("volumes")
    other = Outcome(POD, "n1", selected={"ns/d": "n1"}, bindings={CLAIM: "pv"})
    assert compare(bound("n1", selected="n1", waiting=True), other).differences == ("volumes",)


def test_a_decision_without_storage_has_no_volumes_aspect() -> None:
    c = compare(Outcome(POD, "n1"), Outcome(POD, "n1"))
    assert not c.applies("volumes") and c.agrees("volumes")
