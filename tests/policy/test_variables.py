"""The CEL environment of each extension point."""

from __future__ import annotations

import pytest

from policysched.cel import CelCompileError, CompileErrorKind, compile_expression
from policysched.cel.types import BOOL, INT
from policysched.policy import variables as v

ALL_SCOPES = [
    v.MATCH, v.VARIABLE, v.QUEUE_SORT_LESS, v.QUEUE_SORT_KEYS, v.PRE_ENQUEUE, v.PRE_FILTER,
    v.FILTER, v.POST_FILTER, v.POST_FILTER_VICTIMS, v.PRE_SCORE, v.SCORE, v.RESERVE,
    v.UNRESERVE, v.PERMIT, v.PRE_BIND, v.BIND, v.POST_BIND,
]
UNIVERSE = {v.NOW, v.POD, v.NODE, v.NODE_PODS, v.PODS, v.NODES, v.PODS_WITH_AFFINITY,
            v.WORKLOAD_SELECTOR, v.POD_GROUP_PODS, v.PARAMS, v.VARIABLES, v.A, v.B, v.VICTIM,
            v.AGGREGATES, v.ITEM, v.COUNTED_POD, v.PRE_FILTER_RAN, v.POD_VOLUMES,
            v.VOLUME_BINDER}
NODE_LEVEL = [v.FILTER, v.SCORE, v.RESERVE, v.UNRESERVE, v.PERMIT, v.PRE_BIND, v.BIND,
              v.POST_BIND, v.POST_FILTER_VICTIMS]


def reference_error(text: str, scope: v.Scope) -> str:
    with pytest.raises(CelCompileError) as e:
        compile_expression(text, v.environment(scope))
    assert e.value.kind is CompileErrorKind.REFERENCE
    return e.value.message


@pytest.mark.parametrize("scope", ALL_SCOPES, ids=lambda s: s.name)
def test_every_variable_is_declared_or_explained(scope: v.Scope) -> None:
    env = v.environment(scope)
    assert set(env.variables) | set(env.unavailable) == UNIVERSE
    assert not set(env.variables) & set(env.unavailable)
    assert all(reason.startswith(f"in {scope.name}: ") for reason in env.unavailable.values())
    assert env.cost_limit == env.runtime_cost_limit == 1_000_000
    assert env.size_hints[v.PODS] == 150_000 and env.size_hints[v.NODES] == 5_000


def test_node_is_not_available_in_pre_filter_with_the_reason() -> None:
    assert reference_error("node.unschedulable", v.PRE_FILTER) == (
        "'node' is not available in preFilter: "
        "preFilter runs once per pod before any node is considered"
    )


@pytest.mark.parametrize("scope", NODE_LEVEL, ids=lambda s: s.name)
def test_node_level_points_see_the_node_and_its_pods(scope: v.Scope) -> None:
    program = compile_expression(
        "!node.unschedulable && nodePods.size() < node.podCount + 1", v.environment(scope),
        expected=(BOOL,),
    )
    assert program.type == BOOL


def test_cluster_wide_lists_only_at_pod_level_points() -> None:
    for scope in (v.PRE_FILTER, v.POST_FILTER, v.PRE_SCORE, v.PERMIT, v.VARIABLE):
        compile_expression("pods.size() + nodes.size()", v.environment(scope))
    message = reference_error("nodes.size()", v.SCORE)
    assert message.startswith("'nodes' is not available in score: the cluster-wide lists")


def test_workload_selector_where_the_cluster_wide_lists_are() -> None:
    """kube's DefaultSelector of the pod (a LabelSelector or null), for spreading rules and
    the fields of aggregates."""
    for scope in (v.PRE_FILTER, v.POST_FILTER, v.PRE_SCORE, v.PERMIT, v.VARIABLE, v.AGGREGATE,
                  v.AGGREGATE_ITEM):
        compile_expression("workloadSelector == null || 'matchLabels' in workloadSelector",
                           v.environment(scope), expected=(BOOL,))
    for scope in (v.SCORE, v.PRE_ENQUEUE, v.MATCH):
        assert reference_error("workloadSelector", scope).startswith(
            f"'workloadSelector' is not available in {scope.name}: like the cluster-wide lists")


def test_a_and_b_only_in_queue_sort_less() -> None:
    compile_expression("a.priority > b.priority", v.environment(v.QUEUE_SORT_LESS))
    assert reference_error("pod.priority", v.QUEUE_SORT_LESS) == (
        "'pod' is not available in queueSort less: it compares two pods, a and b"
    )
    assert "a and b exist only in queueSort less" in reference_error("a.name", v.FILTER)


def test_victim_only_in_post_filter_victims() -> None:
    compile_expression("victim.priority < pod.priority", v.environment(v.POST_FILTER_VICTIMS))
    assert "victim exists only in postFilter victims" in reference_error(
        "victim.priority", v.POST_FILTER
    )


def test_variables_are_not_available_in_match() -> None:
    assert reference_error("variables.x", v.MATCH) == (
        "'variables' is not available in spec.match: "
        "variables are computed only for pods the policy matches"
    )


def test_pod_and_node_fields_are_typed() -> None:
    env = v.environment(v.FILTER)
    assert compile_expression("pod.requests['cpu'] + node.free['memory']", env).type == INT
    compile_expression("pod.ports.exists(p, p.hostPort == 80 && p.protocol == 'TCP')", env)
    compile_expression("node.taints.all(t, pod.tolerations.exists(x, x.key == t.key))", env)
    compile_expression("node.usedPorts.exists(u, u.hostPort == 80)", env)
    compile_expression("pod.ownerReferences.exists(o, o.controller && o.kind == 'Job')", env)
    compile_expression("node.images['nginx'] > 0 && pod.spec.containers.size() > 0", env)
    with pytest.raises(CelCompileError) as e:
        compile_expression("node.unschedulabel", env)
    assert e.value.kind is CompileErrorKind.TYPE
    assert "did you mean 'unschedulable'" in e.value.message


def test_params_and_variables_are_objects_with_known_fields() -> None:
    env = v.environment(v.FILTER, params=["zone"], variables={"age": INT})
    assert compile_expression("variables.age + 1", env).type == INT
    compile_expression("node.labels['zone'] == params.zone", env)
    for text in ("params.zon", "variables.ag"):
        with pytest.raises(CelCompileError):
            compile_expression(text, env)


def test_pod_volumes_are_seen_from_pre_filter_on_and_explained_elsewhere() -> None:
    """podVolumes comes from the cycle's snapshot: node-level points see it (it is per pod),
    preEnqueue does not, and says why."""
    for scope in (v.PRE_FILTER, v.FILTER, v.SCORE, v.PERMIT, v.VARIABLE):
        compile_expression("podVolumes.all(v, v.claim.phase == 'Bound')", v.environment(scope),
                           expected=(BOOL,))
    assert reference_error("podVolumes.size() == 0", v.PRE_ENQUEUE) == (
        "'podVolumes' is not available in preEnqueue: the pod's volumes come from the cycle's "
        "snapshot: they are available from preFilter on and in spec.variables")
