"""The comparison of one decision: a nomination kube picked among candidates our preemption
ranks as equally good agrees, with the victims we would evict there and nothing else."""

from __future__ import annotations

import pytest

from .compare import Comparison
from .outcome import Outcome
from .scenario import Scenario

POD = "ns/p"
TIED = {"n1": ("ns/a",), "n2": ("ns/b", "ns/c")}


def compare(kube: Outcome, ours: Outcome) -> Comparison:
    return Comparison(Scenario("s", (), ()), 0, kube, ours, frozenset())


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
