"""spec.aggregates: what the compiler accepts, and the positioned errors it gives."""

from __future__ import annotations

from policysched.policy import build_policy_set, load_text
from policysched.policy.model import Aggregate

HEADER = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: p
spec:
"""
GOOD = HEADER + """\
  variables:
  - name: keys
    expression: "['zone']"
  aggregates:
  - name: app
    pods: "{'labelSelector': {'matchLabels': {'app': pod.labels.app}}}"
    groupBy: "'zone'"
  - name: each
    forEach: variables.keys
    pods: "{'labelSelector': {}}"
    groupBy: item
    skipTerminating: true
    nodes:
      withLabels: variables.keys
      matchingNodeAffinity: "true"
  - name: theirs
    termsOf: p.affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution.orValue([])
  filter:
  - name: skew
    expression: >-
      aggregates.app.count(node) - aggregates.app.minimum() <= 1 &&
      aggregates.each.all(a, a.onNode(node) < 3) && aggregates.theirs.count(node) == 0
"""


def headlines(text: str) -> list[str]:
    return [e.headline() for e in build_policy_set(load_text(text, "p.yaml")).errors]


def test_aggregates_compile_and_rules_read_them() -> None:
    [policy] = build_policy_set(load_text(GOOD, "p.yaml")).policies
    app, each, theirs = policy.aggregates
    assert isinstance(app, Aggregate) and app.for_each is None and app.group_by is not None
    assert each.skip_terminating and each.node_labels is not None
    assert each.node_affinity is not None and each.node_taints is None
    assert theirs.terms_of is not None and theirs.pods is None
    assert policy.aggregates_by_name["theirs"] is theirs


def test_a_list_aggregate_is_typed_as_a_list() -> None:
    text = GOOD.replace("aggregates.each.all(a, a.onNode(node) < 3)",
                        "aggregates.each.onNode(node) < 3")
    [error] = headlines(text)
    assert error.startswith("p.yaml:27:29: p/skew: expression: type error: found no matching "
                            "overload for 'onNode' applied to 'list(policysched.Aggregate)")


def test_item_exists_only_with_for_each() -> None:
    text = GOOD.replace("groupBy: \"'zone'\"", "groupBy: item")
    [error] = headlines(text)
    assert error.startswith("p.yaml:12:14: p: aggregate app groupBy: ")
    assert "item exists only in the fields of an aggregate with forEach" in error


def test_variables_cannot_read_aggregates() -> None:
    text = GOOD.replace('expression: "[\'zone\']"', "expression: aggregates.app")
    [error] = headlines(text)
    assert "'aggregates' is not available in spec.variables" in error


def test_terms_of_sees_only_the_counted_pod_and_params() -> None:
    text = GOOD.replace("termsOf: p.affinity", "termsOf: pod.affinity")
    [error] = headlines(text)
    assert "p: aggregate theirs termsOf: " in error and "'pod'" in error


def test_duplicate_names_and_mixed_kinds_are_positioned_errors() -> None:
    duplicate = GOOD.replace("- name: theirs", "- name: app")
    error = headlines(duplicate)[0]
    assert error == "p.yaml:21:11: p: aggregate app is already declared on line 10"
    mixed = GOOD.replace("    termsOf: p.affinity",
                         "    groupBy: \"'zone'\"\n    termsOf: p.affinity")
    assert any(e.startswith("p.yaml:21:") for e in headlines(mixed)), headlines(mixed)


def test_group_by_must_be_a_string() -> None:
    [error] = headlines(GOOD.replace("groupBy: \"'zone'\"", "groupBy: '1'"))
    assert "aggregate app groupBy" in error and "string" in error
