"""policy.selection: which loaded policies a profile enables — by name (with weight and
params), every other one unless ``*`` is disabled, and those its label selector matches."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from policysched.policy.model import Policy
from policysched.policy.positions import Position
from policysched.policy.selection import ConfigurationError, enabled_names, select


def policy(name: str, labels: Mapping[str, str] | None = None,
           params: Mapping[str, Any] | None = None) -> Policy:
    return Policy(name=name, source=f"{name}.yaml", position=Position(f"{name}.yaml", 1, 1),
                  labels=dict(labels or {}), params=dict(params or {}))


LOADED = [policy("a", params={"x": 1}), policy("mine", {"policysched.io/profile": "p"}),
          policy("b"), policy("other", {"policysched.io/profile": "q"})]
ONLY_A = {"enabled": [{"name": "a", "weight": 3, "params": {"x": 2}}],
          "disabled": [{"name": "*"}]}
SELECT_P = {"matchLabels": {"policysched.io/profile": "p"}}


def names(profile: Mapping[str, Any]) -> list[str]:
    return [i.name for i in select({"schedulerName": "p", **profile}, LOADED)]


def test_without_a_selection_every_policy_in_load_order() -> None:
    assert names({}) == ["a", "mine", "b", "other"]


def test_listed_policies_first_with_their_weight_and_params_then_the_others() -> None:
    (a,) = select({"schedulerName": "p", "policies": ONLY_A}, LOADED)
    assert (a.name, a.weight, a.params) == ("a", 3, {"x": 2})
    assert names({"policies": {"enabled": [{"name": "b"}], "disabled": [{"name": "a"}]}}) \
        == ["b", "mine", "other"]


def test_a_selector_enables_the_policies_whose_labels_match_despite_the_star() -> None:
    assert names({"policies": {**ONLY_A, "selector": SELECT_P}}) == ["a", "mine"]
    expression = {"matchExpressions": [{"key": "policysched.io/profile", "operator": "Exists"}]}
    assert names({"policies": {**ONLY_A, "selector": expression}}) == ["a", "mine", "other"]
    assert names({"policies": {"disabled": [{"name": "*"}], "selector": {}}}) == \
        ["a", "mine", "b", "other"]  # {} selects everything, as in Kubernetes


def test_a_selected_policy_has_its_own_params_and_weight_one() -> None:
    selected = select({"schedulerName": "p", "policies": {
        "disabled": [{"name": "*"}], "selector": {"matchLabels": {}}}}, LOADED)
    assert next((i.name, i.weight, dict(i.params)) for i in selected) == ("a", 1, {"x": 1})


def test_disabling_by_name_beats_the_selector() -> None:
    assert names({"policies": {**ONLY_A, "disabled": [{"name": "*"}, {"name": "mine"}],
                               "selector": SELECT_P}}) == ["a"]


@pytest.mark.parametrize(("selection", "message"), [
    ({"enabled": [{"name": "nope"}]}, "profile p enables unknown policy nope"),
    ({"enabled": [{"name": "a", "params": {"y": 1}}]},
     "profile p sets params y that policy a does not declare"),
    ({"selector": {"matchExpressions": [{"key": "k", "operator": "Equals"}]}},
     'profile p: policies.selector: .*"Equals" is not a valid label selector operator'),
])
def test_what_cannot_be_selected_is_a_configuration_error(
        selection: Mapping[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        names({"policies": selection})


def test_enabled_names_is_the_union_over_profiles() -> None:
    only_a = {"policies": ONLY_A}
    not_b = {"policies": {"disabled": [{"name": "b"}]}}
    assert enabled_names({"profiles": [only_a]}, LOADED) == {"a"}
    assert enabled_names({"profiles": [only_a, not_b]}, LOADED) == {"a", "mine", "other"}
    assert enabled_names({"profiles": [{"policies": {**ONLY_A, "selector": SELECT_P}}]},
                         LOADED) == {"a", "mine"}
    assert enabled_names({}, LOADED) == {"a", "mine", "b", "other"}
    broken = {"policies": {"enabled": [{"name": "a"}, {"name": "nope"}]}}
    assert enabled_names({"profiles": [broken]}, LOADED) == {"a", "nope"}
