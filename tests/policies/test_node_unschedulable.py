"""node-unschedulable: kube-scheduler's NodeUnschedulable filter."""

from __future__ import annotations

import pytest

from .helpers import Cluster, Harness, node, pod

REASON = "node(s) were unschedulable"


def verdict(tolerations: list[dict], unschedulable: bool = True) -> str | None:
    h = Harness("node-unschedulable", pod(tolerations=tolerations),
                Cluster([node("a", unschedulable=unschedulable)]))
    rejection = h.filter("a")
    if rejection is not None:
        assert rejection.unresolvable
    return rejection.reason if rejection else None


def test_schedulable_node_takes_any_pod() -> None:
    assert verdict([], unschedulable=False) is None


def test_cordoned_node_rejects_intolerant_pod() -> None:
    assert verdict([]) == REASON


@pytest.mark.parametrize("toleration", [
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "",
     "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "", "value": ""},
    {"operator": "Exists"},
])
def test_tolerating_pod_fits(toleration: dict) -> None:
    assert verdict([toleration]) is None


@pytest.mark.parametrize("toleration", [
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "true"},
    {"key": "other", "operator": "Exists"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Gt", "value": ""},
])
def test_other_tolerations_do_not_help(toleration: dict) -> None:
    assert verdict([toleration]) == REASON
