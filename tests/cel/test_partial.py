"""Splitting an expression into pod-side parts, node-side parts and the remainder."""

from __future__ import annotations

from policysched.cel import ast, parser
from policysched.cel.partial import free_names, shape, split

ROOTS = {"pod", "node", "nodePods", "params", "variables", "now", "pods", "nodes"}
NODE = frozenset({"node", "nodePods"})


def parts(text: str) -> tuple[str, list[str], list[str]]:
    """The remainder and the parts, as compact strings."""
    result = split(parser.parse(text), ROOTS, NODE)
    return (_render(result.remainder), [_render(p) for p in result.pod_parts],
            [_render(p) for p in result.node_parts])


def _render(node: ast.Node) -> str:
    if isinstance(node, ast.Ident):
        return node.name
    if isinstance(node, ast.Literal):
        return repr(node.value)
    if isinstance(node, ast.Select):
        return f"{_render(node.operand)}.{node.field}"
    if isinstance(node, ast.Call):
        args = ", ".join(_render(a) for a in node.args)
        target = "" if node.target is None else _render(node.target) + "."
        return f"{target}{node.function}({args})"
    if isinstance(node, ast.Macro):
        target = "" if node.target is None else _render(node.target) + "."
        return f"{target}{node.kind}({node.var}, {', '.join(_render(a) for a in node.args)})"
    return type(node).__name__


def test_pod_and_node_sides_are_lifted_whole() -> None:
    remainder, pod, node = parts(
        "!('cpu' in pod.requests) || pod.requests['cpu'] <= "
        "('cpu' in node.free ? node.free['cpu'] : 0)")
    assert remainder == "_||_(@p0, _<=_(@p1, @n0))"
    assert pod == ["!_(@in('cpu', pod.requests))", "_[_](pod.requests, 'cpu')"]
    assert node == ["_?_:_(@in('cpu', node.free), _[_](node.free, 'cpu'), 0)"]


def test_params_go_with_either_side_and_equal_node_parts_are_shared() -> None:
    remainder, pod, node = parts(
        "node.podCount * params.w + pod.priority * params.w > node.podCount * params.w")
    assert remainder == "_>_(_+_(@n0, @p0), @n0)"
    assert pod == ["_*_(pod.priority, params.w)"]
    assert node == ["_*_(node.podCount, params.w)"]


def test_macro_variables_keep_their_uses_in_the_remainder() -> None:
    remainder, pod, node = parts(
        "pod.requests.all(r, r in ['cpu'] || pod.requests[r] <= node.free[r])")
    assert remainder == "@p0.all(r, _||_(@in(r, @p1), _<=_(_[_](@p2, r), _[_](@n0, r))))"
    assert pod == ["pod.requests", "CreateList", "pod.requests"]  # ['cpu'] is built once
    assert node == ["node.free"]


def test_namespaces_and_constants_are_not_parts() -> None:
    remainder, pod, node = parts("math.greatest(node.podCount, pod.priority) + 1")
    assert remainder == "_+_(math.greatest(@n0, @p0), 1)"
    assert pod == ["pod.priority"] and node == ["node.podCount"]


def test_free_names_skip_what_macros_bind() -> None:
    tree = parser.parse("pods.exists(p, p.name == pod.name) && cel.bind(x, now, x > 1)")
    assert free_names(tree) == {"pods", "pod", "now"}


def test_shape_ignores_where_the_text_is() -> None:
    a = parser.parse("node.podCount + 1")
    b = parser.parse("  node.podCount   +   1")
    assert shape(a) == shape(b) and shape(a) != shape(parser.parse("node.podCount + 2"))
