"""Kubernetes' matching functions in policies (``policy.kubernetes_functions``): typed by
the checker, evaluated on the views of real objects, a selector Kubernetes refuses is a CEL
error naming the problem, and the values work in every evaluation tier."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from policysched.cel import CelCompileError, CelError, CompileErrorKind, compile_expression
from policysched.cel.types import BOOL, INT
from policysched.cel.vector import FactorisedColumn, Scalar, column_of, freeze
from policysched.framework.scheduler import SCALAR, VECTORISED
from policysched.model import selectors
from policysched.model.objects import node_view, pod_info
from policysched.policy import variables as v
from tests.framework.test_tiers import engine_with, random_cluster, scheduler, simulate

AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In",
                              "values": ["special"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 7, "preference": {"matchExpressions": [
                {"key": "disk", "operator": "In", "values": ["ssd"]}]}},
            {"weight": 3, "preference": {"matchExpressions": [
                {"key": "cpu", "operator": "Gt", "values": ["8"]}]}}]},
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone",
         "matchLabelKeys": ["rev"]}]},
}

POD = pod_info({
    "metadata": {"name": "web-1", "namespace": "prod", "labels": {"app": "web", "rev": "3"}},
    "spec": {"nodeSelector": {"pool": "general"}, "affinity": AFFINITY,
             "tolerations": [{"key": "dedicated", "operator": "Exists"},
                             {"key": "gpu", "value": "yes", "effect": "NoSchedule"}]},
}).view


def node(name: str, labels: dict[str, str], taints: list[dict[str, str]] | None = None
         ) -> dict[str, Any]:
    return node_view({"metadata": {"name": name, "labels": labels},
                      "spec": {"taints": taints or []}})


def pod(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return pod_info({"metadata": {"name": name, "namespace": namespace,
                                  "labels": labels}}).view


def evaluate(text: str, scope: v.Scope = v.FILTER, **extra: Any) -> Any:
    program = compile_expression(text, v.environment(scope))
    return program.evaluate({"now": 0, "pod": POD, "params": {}, "variables": {},
                             "nodePods": [], **extra})


def test_every_policy_environment_has_the_functions() -> None:
    for scope in (v.MATCH, v.VARIABLE, v.PRE_FILTER, v.FILTER, v.SCORE, v.POST_FILTER_VICTIMS):
        functions = v.environment(scope).functions
        for name in ("labelSelector", "nodeAffinity", "preferredNodeAffinity", "score",
                     "tolerates", "podAffinityTerm", "selects", "matches"):
            assert name in functions, (scope.name, name)


@pytest.mark.parametrize(("text", "want"), [
    ("labelSelector({'matchLabels': {'app': 'web'}}).matches(pod.labels)", True),
    ("labelSelector({'matchLabels': {'app': 'db'}}).matches(pod.labels)", False),
    ("labelSelector({'matchExpressions': [{'key': 'rev', 'operator': 'NotIn', "
     "'values': ['1', '2']}]}).matches(pod.labels)", True),
    ("labelSelector({}).matches({})", True),
    ("labelSelector(null).matches(pod.labels)", False),
    ("labelSelector(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     "[0].labelSelector).matches({'app': 'web'})", True),
    # the standard library's matches still is the regular-expression one
    ("pod.name.matches('^web-[0-9]+$')", True),
    ("matches(pod.name, 'db')", False),
])
def test_label_selectors(text: str, want: bool) -> None:
    assert evaluate(text) is want


@pytest.mark.parametrize(("labels", "name", "want"), [
    ({"pool": "general", "zone": "z1"}, "n1", True),
    ({"pool": "general", "zone": "z3"}, "n1", False),
    ({"pool": "general"}, "special", True),  # the second term: matchFields metadata.name
    ({"zone": "z1"}, "n1", False),  # nodeSelector pool=general
])
def test_node_affinity_matches_a_node(labels: dict[str, str], name: str, want: bool) -> None:
    assert evaluate("nodeAffinity(pod.nodeSelector, pod.affinity).matches(node)",
                    node=node(name, labels)) is want


@pytest.mark.parametrize(("labels", "want"), [
    ({}, 0), ({"disk": "ssd"}, 7), ({"disk": "ssd", "cpu": "16"}, 10), ({"cpu": "4"}, 0)])
def test_preferred_node_affinity_scores_a_node(labels: dict[str, str], want: int) -> None:
    program = compile_expression("preferredNodeAffinity(pod.affinity).score(node)",
                                 v.environment(v.SCORE))
    assert program.type == INT
    assert program.evaluate({"pod": POD, "node": node("n", labels), "now": 0}) == want


@pytest.mark.parametrize(("taints", "want"), [
    ([], True),
    ([{"key": "dedicated", "value": "x", "effect": "NoExecute"}], True),
    ([{"key": "gpu", "value": "yes", "effect": "NoSchedule"}], True),
    ([{"key": "gpu", "value": "no", "effect": "NoSchedule"}], False),
    ([{"key": "gpu", "value": "yes", "effect": "NoExecute"}], False),
])
def test_tolerations_tolerate_taints(taints: list[dict[str, str]], want: bool) -> None:
    text = "node.taints.all(t, pod.tolerations.exists(tol, tol.tolerates(t)))"
    assert evaluate(text, node=node("n", {}, taints)) is want


@pytest.mark.parametrize(("other", "want"), [
    (pod("a", "prod", {"app": "web", "rev": "3"}), True),
    (pod("b", "prod", {"app": "web", "rev": "4"}), False),  # matchLabelKeys: rev in (3)
    (pod("c", "dev", {"app": "web", "rev": "3"}), False),  # the owner's namespace only
    (pod("d", "prod", {"app": "db", "rev": "3"}), False),
])
def test_pod_affinity_terms_select_pods(other: dict[str, Any], want: bool) -> None:
    text = ("pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".all(t, podAffinityTerm(t, pod.namespace, pod.labels).selects(nodePods[0]))")
    assert evaluate(text, nodePods=[other]) is want


@pytest.mark.parametrize(("other", "want"), [
    (pod("a", "prod", {"app": "web", "rev": "3"}), True),
    (pod("b", "prod", {"app": "web", "rev": "4"}), True),  # as stored: matchLabelKeys ignored
    (pod("c", "dev", {"app": "web", "rev": "3"}), False),
])
def test_without_labels_a_term_is_read_as_stored(other: dict[str, Any], want: bool) -> None:
    text = ("pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".all(t, podAffinityTerm(t, pod.namespace).selects(nodePods[0]))")
    assert evaluate(text, nodePods=[other]) is want


def test_a_namespace_selector_other_than_everything_needs_namespace_labels() -> None:
    """Namespace labels are not known to ``selects``: only ``{}`` selects other namespaces."""
    for selector, want in (("{}", True), ("{'matchLabels': {'env': 'dev'}}", False)):
        text = (f"podAffinityTerm({{'labelSelector': {{}}, 'namespaceSelector': {selector}}}, "
                "pod.namespace, pod.labels).selects(nodePods[0])")
        assert evaluate(text, nodePods=[pod("x", "dev", {})]) is want


@pytest.mark.parametrize(("text", "message"), [
    ("labelSelector({}).matches(1)",
     "found no matching overload for 'matches' applied to 'policysched.LabelSelector.(int)'"),
    ("nodeAffinity(pod.nodeSelector, pod.affinity).matches(pod)",
     "found no matching overload for 'matches' applied to "
     "'policysched.NodeAffinity.(policysched.Pod)'"),
    ("nodeAffinity(pod.labels.size(), pod.affinity)",
     "found no matching overload for 'nodeAffinity' applied to '(int, dyn)'"),
    ("pod.tolerations[0].tolerates(pod.tolerations[0])",
     "found no matching overload for 'tolerates' applied to "
     "'policysched.Toleration.(policysched.Toleration)'"),
    ("podAffinityTerm({}, 1, {})",
     "found no matching overload for 'podAffinityTerm' applied to"),
    ("preferredNodeAffinity(pod.affinity).score(pod)",
     "found no matching overload for 'score'"),
    ("podAffinityTerm({}, '', {}).selects(node)", "found no matching overload for 'selects'"),
    ("labelSelector({}).matchLabels",
     "type 'policysched.LabelSelector' does not support field selection"),
    ("labelSelector({}) + 1", "found no matching overload for '_+_'"),
])
def test_type_errors_at_check_time(text: str, message: str) -> None:
    with pytest.raises(CelCompileError) as e:
        compile_expression(text, v.environment(v.FILTER))
    assert e.value.kind is CompileErrorKind.TYPE
    assert message in e.value.message


def test_result_types() -> None:
    env = v.environment(v.FILTER)
    for text in ("labelSelector({}).matches(pod.labels)",
                 "nodeAffinity(pod.nodeSelector, pod.affinity).matches(node)",
                 "pod.tolerations.all(t, node.taints.all(x, t.tolerates(x)))",
                 "podAffinityTerm(pod.affinity, pod.namespace, pod.labels).selects(pod)"):
        assert compile_expression(text, env).type == BOOL
    assert compile_expression("labelSelector({})", env).type == v.LABEL_SELECTOR_TYPE
    for text in ("podAffinityTerm({}, '', {})", "podAffinityTerm({}, '')"):
        assert compile_expression(text, env).type == v.POD_AFFINITY_TERM_TYPE


@pytest.mark.parametrize(("text", "message"), [
    ("labelSelector({'matchExpressions': [{'key': 'app', 'operator': 'Equals', "
     "'values': ['web']}]}).matches(pod.labels)",
     'invalid label selector: matchExpressions[0].operator: "Equals" is not a valid label '
     "selector operator"),
    ("labelSelector({'matchExpressions': [{'key': 'app', 'operator': 'In'}]}).matches({})",
     "invalid label selector: matchExpressions[0].values: Invalid value: []: for 'in', "
     "'notin' operators, values set can't be empty"),
    ("labelSelector('app=web').matches({})",
     "invalid label selector: must be a mapping, not a string"),
    ("labelSelector({'matchLabels': {'app': 1}}).matches({})",
     "invalid label selector: matchLabels.app: must be a string, not an integer"),
    ("preferredNodeAffinity({'nodeAffinity': {'preferredDuringSchedulingIgnoredDuringExecution':"
     " [{'weight': 1, 'preference': {'matchExpressions': [{'key': 'a', 'operator': 'Gt', "
     "'values': ['x']}]}}]}}).score(node)",
     "invalid node affinity: affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuring"
     "Execution[0].preference.matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', "
     "'Lt' operators, the value must be an integer"),
    ("podAffinityTerm({'labelSelector': {'matchLabels': {'a': 'b c'}}}, '', {}).selects(pod)",
     'invalid pod affinity term: labelSelector.matchLabels.a: Invalid value: "b c": a valid '
     "label must be an empty string"),
    ("nodeAffinity({}, {'nodeAffinity': 'x'}).matches(node)",
     "invalid node affinity: affinity.nodeAffinity: must be a mapping, not a string"),
    ("dyn({'key': 1}).tolerates(node.taints[0])",
     "invalid toleration or taint: toleration.key: must be a string, not an integer"),
])
def test_a_selector_kubernetes_refuses_is_a_cel_error_naming_the_problem(
        text: str, message: str) -> None:
    with pytest.raises(CelError) as e:
        evaluate(text, node=node("n", {}, [{"key": "k", "effect": "NoSchedule"}]))
    assert message in e.value.message


def test_a_required_term_kubernetes_cannot_parse_matches_nothing() -> None:
    """As kube-scheduler's NodeAffinity filter, which ignores the parse error."""
    text = ("nodeAffinity({}, {'nodeAffinity': {'requiredDuringSchedulingIgnoredDuringExecution':"
            " {'nodeSelectorTerms': [{'matchExpressions': [{'key': 'a', 'operator': 'Bad'}]}]}}})"
            ".matches(node)")
    assert evaluate(text, node=node("n", {"a": "x"})) is False


@pytest.mark.parametrize("text", [
    "labelSelector({}).matches(dyn({'a': 1}))",
    "labelSelector({}).matches(dyn({'a': ['x']}))",
    "nodeAffinity({}, null).matches(dyn({'name': 1}))",
    "nodeAffinity({}, null).matches(dyn({'labels': {}}))",
    "podAffinityTerm({}, '', {}).selects(dyn({'namespace': dyn('x'), 'labels': dyn(1)}))",
    "dyn(labelSelector({})).selects(pod)",
    "dyn(podAffinityTerm({}, '', {})).matches({})",
    "dyn(1).score(node)",
    "podAffinityTerm({}, dyn(1), {})",
    "nodeAffinity(dyn({'a': 1}), null).matches(node)",
])
def test_wrong_values_behind_dyn_are_cel_errors(text: str) -> None:
    with pytest.raises(CelError):
        evaluate(text, node=node("n", {}))


def test_values_are_equal_and_hashable_by_content() -> None:
    """The vectorised tiers key pod-side parts by ``freeze`` and compare them with ==."""
    a = evaluate("labelSelector({'matchLabels': {'app': 'web'}})")
    b = evaluate("labelSelector({'matchExpressions': [{'key': 'app', 'operator': 'In', "
                 "'values': ['web']}]})")
    assert a == b and freeze(a) == freeze(b) and hash(freeze(a)) == hash(freeze(b))
    assert evaluate("labelSelector({'matchLabels': {'app': 'web'}}) == "
                    "labelSelector({'matchExpressions': [{'key': 'app', 'operator': 'In', "
                    "'values': ['web']}]})") is True
    assert evaluate("labelSelector({}) != labelSelector(null)") is True
    for text in ("nodeAffinity(pod.nodeSelector, pod.affinity)",
                 "preferredNodeAffinity(pod.affinity)",
                 "podAffinityTerm(pod.affinity.podAntiAffinity.requiredDuringScheduling"
                 "IgnoredDuringExecution[0], pod.namespace, pod.labels)"):
        first, second = evaluate(text), evaluate(text)
        assert first == second and freeze(first) == freeze(second)
        assert isinstance(first, selectors.NodeAffinity | selectors.PreferredNodeAffinity
                          | selectors.PodAffinityTerm)


TIERS_POLICY = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: kubernetes-functions}
spec:
  variables:
  - name: affinity
    expression: nodeAffinity(pod.nodeSelector, pod.affinity)
  - name: antiAffinity
    expression: >-
      pod.affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution.orValue([])
        .map(t, podAffinityTerm(t, pod.namespace, pod.labels))
  filter:
  - name: node-affinity
    expression: variables.affinity.matches(node)
  - name: taints
    expression: >-
      !node.taints.exists(t, t.effect == 'NoSchedule' &&
        !pod.tolerations.exists(tol, tol.tolerates(t)))
  - name: anti-affinity-on-the-node
    expression: "!nodePods.exists(p, variables.antiAffinity.exists(t, t.selects(p)))"
  score:
  - name: preferred
    expression: preferredNodeAffinity(pod.affinity).score(node)
    normalize: max
  - name: same-app
    expression: >-
      nodePods.filter(p, labelSelector({'matchLabels': {'app': pod.labels[?'app'].orValue('')}})
        .matches(p.labels)).size()
    normalize: max
"""


@pytest.mark.parametrize("seed", range(3))
def test_both_tiers_place_every_pod_alike(tmp_path: Path, seed: int,
                                          caplog: pytest.LogCaptureFixture) -> None:
    """The values as pod-side parts, keyed and compared by the vectorised tier."""
    loaded = engine_with(tmp_path, TIERS_POLICY)
    scalar, vectorised = (
        simulate(scheduler(random_cluster(300 + seed, nodes=30, bound=20, pending=40),
                           evaluation, loaded))
        for evaluation in (SCALAR, VECTORISED))
    assert vectorised == scalar
    assert any(node for node, _, _ in scalar.values())
    assert not [m for _, m, _ in scalar.values() if m and "kubernetes-functions" in m]
    assert "vectorised evaluation failed" not in caplog.text


def random_requirement(rng: random.Random) -> dict[str, Any]:
    key = rng.choice(("zone", "disk", "cpu"))
    operator = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
    if operator in ("In", "NotIn"):
        return {"key": key, "operator": operator, "values": rng.sample(("z1", "ssd", "4"), 2)}
    if operator in ("Gt", "Lt"):
        return {"key": key, "operator": operator, "values": [rng.choice(("2", "8", "16"))]}
    return {"key": key, "operator": operator}


def random_term(rng: random.Random) -> dict[str, Any]:
    term: dict[str, Any] = {"matchExpressions": [random_requirement(rng)
                                                 for _ in range(rng.randint(0, 2))]}
    if rng.random() < 0.3:
        term["matchFields"] = [{"key": rng.choice(("metadata.name", "spec.x")),
                                "operator": rng.choice(("In", "NotIn")),
                                "values": [rng.choice(("n1", "n2", ""))]}]
    return term


@pytest.mark.parametrize("seed", range(20))
def test_columns_agree_with_the_matcher_node_by_node(seed: int) -> None:
    """``NodeAffinity.matches`` and ``PreferredNodeAffinity.score`` over a column of nodes
    (the vectorised tier's ``columns``), once per distinct combination of what they read,
    give what they give on each node."""
    rng = random.Random(seed)
    functions = v.environment(v.SCORE).functions
    views = [node(f"n{i}", {k: rng.choice(values) for k, values in (
        ("zone", ("z1", "z2")), ("disk", ("ssd", "hdd")), ("cpu", ("4", "16", "x")),
        ("pool", ("general", "gpu"))) if rng.random() < 0.7}) for i in range(12)]
    rows = [rng.choice(views) for _ in range(30)]  # a view may be on several rows
    column = column_of(rows)
    assert isinstance(column, FactorisedColumn)
    for _ in range(10):
        node_selector = rng.choice(({}, {}, {"pool": "general"},
                                    {"kubernetes.io/hostname": "n3", "pool": "gpu"}))
        required = {"nodeSelectorTerms": [random_term(rng) for _ in range(rng.randint(0, 3))]}
        preferred = [{"weight": rng.randint(1, 100), "preference": random_term(rng)}
                     for _ in range(rng.randint(0, 3))]
        affinity = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": required,
            "preferredDuringSchedulingIgnoredDuringExecution": preferred}}
        if rng.random() < 0.3:
            del affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        matcher = selectors.required_node_affinity(node_selector, affinity)
        scorer = selectors.preferred_node_affinity(affinity)
        for function, value, want in (
                ("matches", matcher, [matcher.matches(n["labels"], n["name"]) for n in rows]),
                ("score", scorer, [scorer.score(n["labels"], n["name"]) for n in rows])):
            columns = functions[function].columns
            assert columns is not None
            got = columns(len(rows), Scalar(value), column)
            assert got is not None and got.err is None
            assert got.data.tolist() == want, (function, node_selector, affinity)


def test_columns_leave_what_is_no_node_view_to_the_matcher() -> None:
    matches = v.environment(v.FILTER).functions["matches"].columns
    assert matches is not None
    affinity = Scalar(selectors.required_node_affinity({"pool": "general"}, None))
    assert matches(2, affinity, column_of([{"a": "b"}, {"c": "d"}])) is None  # label maps
    assert matches(2, affinity, column_of(["x", "y"])) is None
    assert matches(2, Scalar("web-1"), column_of(["^web", "^db"])) is None  # a regex
