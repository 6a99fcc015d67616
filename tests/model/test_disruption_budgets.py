"""PodDisruptionBudgets (policysched.model.disruption_budgets) as kube-scheduler's
preemption reads them (filterPodsWithPDBViolation)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.model.disruption_budgets import disruption_budget
from policysched.model.objects import ObjectError


def pdb(selector: Any = None, status: Any = None, namespace: str = "shop") -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                           "metadata": {"name": "web", "namespace": namespace},
                           "spec": {"minAvailable": 1}}
    if selector is not None:
        obj["spec"]["selector"] = selector
    if status is not None:
        obj["status"] = status
    return obj


def test_a_budget_is_its_selector_allowed_disruptions_and_disrupted_pods() -> None:
    found = disruption_budget(pdb({"matchLabels": {"app": "web"}}, {
        "disruptionsAllowed": 2, "disruptedPods": {"web-1": "2024-01-01T00:00:00Z"},
        "currentHealthy": 3}))
    assert (found.key, found.disruptions_allowed, found.disrupted_pods) == (
        "shop/web", 2, frozenset({"web-1"}))
    assert disruption_budget(pdb({"matchLabels": {"app": "web"}})).disruptions_allowed == 0


@pytest.mark.parametrize(("selector", "namespace", "labels", "covered"), [
    ({"matchLabels": {"app": "web"}}, "shop", {"app": "web", "tier": "x"}, True),
    ({"matchLabels": {"app": "web"}}, "other", {"app": "web"}, False),  # its namespace only
    ({"matchLabels": {"app": "web"}}, "shop", {"app": "db"}, False),
    ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "shop", {"app": "x"}, True),
    ({}, "shop", {"app": "web"}, False),  # kube's preemption: an empty selector, no pod
    (None, "shop", {"app": "web"}, False),  # no selector: no pod
    ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, "shop", {},
     False),  # a pod without labels: no budget
])
def test_which_pods_a_budget_covers(selector: Any, namespace: str, labels: dict[str, str],
                                    covered: bool) -> None:
    assert disruption_budget(pdb(selector)).covers(namespace, labels) is covered


@pytest.mark.parametrize(("obj", "field"), [
    (pdb({"matchLabels": {"app": 1}}), "spec.selector"),
    (pdb({"matchExpressions": [{"key": "app", "operator": "Near"}]}), "spec.selector"),
    (pdb({}, {"disruptionsAllowed": "2"}), "status.disruptionsAllowed"),
    (pdb({}, {"disruptedPods": ["web-1"]}), "status.disruptedPods"),
    ({"kind": "PodDisruptionBudget", "metadata": {}}, "metadata.name"),
])
def test_a_malformed_budget_names_its_field(obj: dict[str, Any], field: str) -> None:
    with pytest.raises(ObjectError) as caught:
        disruption_budget(obj)
    assert caught.value.field.startswith(field), caught.value
