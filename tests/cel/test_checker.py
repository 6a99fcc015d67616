"""The static checker: conformance acceptance, deduced types, errors with their offsets."""

from __future__ import annotations

import time
from typing import Any

import pytest

from policysched.cel import CelError, ast, checker, compile_expression, parser
from policysched.cel.compatibility import KubernetesVersion
from policysched.cel.environment import Environment
from policysched.cel.errors import CelCompileError, CompileErrorKind
from policysched.cel.library import Function, Overload, standard_library
from policysched.cel.types import (
    BOOL,
    DOUBLE,
    DYN,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    UINT,
    A,
    Type,
    list_of,
    map_of,
    optional_of,
    type_of_type,
)
from tests.cel.conformance import Case, proto_free_cases, spec_functions
from tests.cel.conformance_types import function_from_json, type_from_json

POD = Type("Pod")
SPEC = Type("PodSpec")
OBJECTS = {
    "Pod": {"name": STRING, "namespace": STRING, "labels": map_of(STRING, STRING),
            "spec": SPEC, "priority": INT},
    "PodSpec": {"nodeName": STRING, "containers": list_of(DYN)},
}


def env(**kw: Any) -> Environment:
    return Environment(**kw)


def check(text: str, e: Environment | None = None) -> checker.CheckResult:
    return checker.check(parser.parse(text), e if e is not None else env())


def type_of(text: str, e: Environment | None = None) -> str:
    return str(check(text, e).type)


def error(text: str, e: Environment | None = None) -> CelCompileError:
    with pytest.raises(CelCompileError) as info:
        check(text, e)
    return info.value


def nodes(tree: ast.Node) -> list[ast.Node]:
    out, stack = [], [tree]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(ast.children(n))
    return out


# ------------------------------------------------------------------------------------
# Conformance


def _conformance_env(case: Case) -> Environment:
    variables: dict[str, Type] = {}
    functions = spec_functions()
    for decl in case.raw.get("type_env", []):
        if "ident" in decl:
            variables[decl["name"]] = type_from_json(decl["ident"]["type"])
        elif "function" in decl:
            functions[decl["name"]] = function_from_json(decl["name"], decl["function"])
    for name in case.raw.get("bindings", {}):
        variables.setdefault(name, DYN)
    return Environment(variables=variables, functions=functions, version=None)


_ERROR_OUTCOMES = ("eval_error", "any_eval_errors", "unknown", "any_unknowns")
ACCEPTED = [c for c in proto_free_cases()
            if not c.raw.get("disable_check") and not any(k in c.raw for k in _ERROR_OUTCOMES)]
DEDUCED = [c for c in proto_free_cases()
           if "deduced_type" in c.raw.get("typed_result", {})]


def test_conformance_selection_is_complete() -> None:
    # 1,724 proto-free cases: 103 unchecked, 26 typed, 191 errors; the rest expect a value
    assert len(DEDUCED) == 26
    assert len(ACCEPTED) > 1300


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.id)
def test_conformance_expression_is_accepted(case: Case) -> None:
    e = _conformance_env(case)
    tree = parser.parse(case.raw["expr"])
    result = checker.check(tree, e)
    # every node of the tree has a type, and no type variable escapes
    for n in nodes(tree):
        t = result.types[id(n)]
        assert "_var" not in str(t), (n, t)
    assert result.type == result.types[id(tree)]


@pytest.mark.parametrize("case", DEDUCED, ids=lambda c: c.id)
def test_conformance_deduced_type(case: Case) -> None:
    want = type_from_json(case.raw["typed_result"]["deduced_type"])
    assert check(case.raw["expr"], _conformance_env(case)).type == want


def test_optional_none_with_a_generic_declaration_deduces_the_element_type() -> None:
    # what the two optional_none conformance cases need from the library declaration
    functions = dict(standard_library())
    functions["optional.none"] = Function(
        "optional.none", (Overload("optional_none", (), optional_of(A)),), lambda: None)
    e = env(functions=functions)
    assert type_of("[optional.none(), optional.of(1)]", e) == "list(optional_type(int))"
    assert type_of("[optional.of(1), optional.none()]", e) == "list(optional_type(int))"


def test_conformance_types_from_json() -> None:
    assert type_from_json({"primitive": "UINT64"}) == UINT
    assert type_from_json({"null": None}) == NULL
    assert type_from_json({"well_known": "TIMESTAMP"}) == TIMESTAMP
    assert type_from_json({"map_type": {"key_type": {"primitive": "STRING"},
                                        "value_type": {"dyn": {}}}}) == map_of(STRING, DYN)
    assert type_from_json({"abstract_type": {"name": "optional_type",
                                             "parameter_types": [{"primitive": "INT64"}]}}) \
        == optional_of(INT)
    assert type_from_json({"type_param": "T"}) == Type("T", is_param=True)
    assert type_from_json({"type": {"primitive": "INT64"}}) == type_of_type(INT)
    with pytest.raises(ValueError):
        type_from_json({"bogus": 1})


# ------------------------------------------------------------------------------------
# Inference


@pytest.mark.parametrize(("text", "want"), [
    ("1 + 2", "int"),
    ("1u * 2u", "uint"),
    ("1.5 / 2.0", "double"),
    ("'a' + 'b'", "string"),
    ("b'a' + b'b'", "bytes"),
    ("[1] + [2]", "list(int)"),
    ("[]", "list(dyn)"),
    ("{}", "map(dyn, dyn)"),
    ("1 < 2.0 && 2u >= 1", "bool"),
    ("timestamp(0) - timestamp(1)", "google.protobuf.Duration"),
    ("timestamp(0) + duration('1s')", "google.protobuf.Timestamp"),
    ("duration('1s') + timestamp(0)", "google.protobuf.Timestamp"),
    ("'a' in ['a']", "bool"),
    ("'a' in {'a': 1}", "bool"),
    ("{'a': [1]}['a'][0]", "int"),
    ("true ? 1 : 2", "int"),
    ("-(1.5)", "double"),
    ("!true", "bool"),
    ("int", "type(int)"),
    ("type(1) == int", "bool"),
    ("null", "null_type"),
    ("dyn(1) + 1", "int"),
    ("dyn(1) + dyn(2)", "dyn"),
    ("{'a': 1}.a", "int"),
    ("dyn({}).a.b", "dyn"),
    ("has({'a': 1}.a)", "bool"),
    ("{'a': 1}.?a", "optional_type(int)"),
    ("{'a': 1}[?'a']", "optional_type(int)"),
    ("[1][?0]", "optional_type(int)"),
    ("optional.of({'c': 1}).c", "optional_type(int)"),
    ("optional.of([1])[0]", "optional_type(int)"),
    ("optional.of({'c': 1}).?c", "optional_type(int)"),
    ("has(optional.of({'c': 1}).c)", "bool"),
    ("[?optional.of(1), 2]", "list(int)"),
    ("{?'a': optional.of('x')}", "map(string, string)"),
    ("optional.of(1).optMap(v, v * 2 > 1)", "optional_type(bool)"),
    ("optional.of(1).optFlatMap(v, optional.of(string(v)))", "optional_type(string)"),
    ("[1, 2].all(x, x > 0)", "bool"),
    ("[1, 2].exists_one(x, x > 0)", "bool"),
    ("[1, 2].map(x, string(x))", "list(string)"),
    ("[1, 2].map(x, x > 1, 'a')", "list(string)"),
    ("[1, 2].filter(x, x > 1)", "list(int)"),
    ("{'a': 1}.filter(k, k != 'b')", "list(string)"),
    ("{'a': 1}.map(k, k + 'x')", "list(string)"),
    ("{'a': 1}.all(k, v, k == 'a' && v > 0)", "bool"),
    ("['x'].exists(i, v, i == 0 && v == 'x')", "bool"),
    ("['x'].transformList(i, v, i * 2)", "list(int)"),
    ("['x'].transformList(i, v, i > 0, v + 'y')", "list(string)"),
    ("['x'].transformMap(i, v, v + 'y')", "map(int, string)"),
    ("{'a': 1}.transformMap(k, v, v * 2 > 1)", "map(string, bool)"),
    ("{'a': 1}.transformMapEntry(k, v, {v: k})", "map(int, string)"),
    ("cel.bind(x, 'a', x + x)", "string"),
    ("cel.block([1, cel.index(0) + 1, [cel.index(1)]], cel.index(2))", "list(int)"),
    ("[[], [[]], [[[]]]]", "list(list(list(list(dyn))))"),
    ("math.abs(-1)", "int"),
    ("math.greatest(1, 2)", "int"),
    ("'abc'.startsWith('a')", "bool"),
    ("size('abc') + size([1]) + [1].size()", "int"),
])
def test_inferred_type(text: str, want: str) -> None:
    assert type_of(text) == want


@pytest.mark.parametrize(("text", "want"), [
    ("[1, 'a']", "list(dyn)"),
    ("{'a': 1, 'b': 2.0}", "map(string, dyn)"),
    ("[timestamp(0), null]", "list(google.protobuf.Timestamp)"),
    ("[null, optional.of(1)]", "list(optional_type(int))"),
])
def test_mixed_literals_join_their_types_in_plain_cel(text: str, want: str) -> None:
    assert type_of(text, env(version=None)) == want


def test_variables_objects_and_selection() -> None:
    e = env(variables={"pod": POD, "now": INT}, objects=OBJECTS)
    assert type_of("pod.name", e) == "string"
    assert type_of("pod.spec.nodeName", e) == "string"
    assert type_of("pod.labels['app']", e) == "string"
    assert type_of("has(pod.spec.nodeName)", e) == "bool"
    assert type_of("pod.spec.containers.all(c, c.image != '')", e) == "bool"
    assert type_of("now - pod.priority >= 15", e) == "bool"
    assert type_of("pod", e) == "Pod"


def test_object_field_declared_with_a_type_parameter_is_dyn() -> None:
    e = env(variables={"o": Type("O")}, objects={"O": {"f": A}})
    assert type_of("o.f", e) == "dyn"


def test_macro_variables_are_scoped_and_shadow_globals() -> None:
    e = env(variables={"x": INT})
    tree = parser.parse("['a'].all(x, x == 'a') && x > 1")
    result = checker.check(tree, e)
    idents = sorted((n for n in nodes(tree) if isinstance(n, ast.Ident)),
                    key=lambda n: n.offset)
    assert [str(result.types[id(n)]) for n in idents] == ["string", "int"]
    # the bound variable is gone outside the macro
    assert error("[1].all(y, y > 0) && y > 0").kind == CompileErrorKind.REFERENCE
    assert type_of("cel.bind(x, 'a', x + 'b')", e) == "string"
    assert type_of("[[1]].all(x, x.all(x, x > 0))", e) == "bool"


def test_block_slots_accept_both_spellings() -> None:
    # the parser writes @index0 (cel-go); @index{0} is accepted too
    slot = ast.Literal(7, 1)
    body = ast.Call(20, ast.ADD, (ast.Ident(15, "@index0"), ast.Ident(25, "@index{0}")))
    tree = ast.Macro(0, checker.BLOCK, None, "", None, (slot, body))
    result = checker.check(tree, env())
    assert result.type == INT
    # a slot only sees the slots before it
    bad = ast.Macro(0, checker.BLOCK, None, "", None,
                    (ast.Ident(3, "@index1"), ast.Literal(5, 1), ast.Literal(8, 2)))
    with pytest.raises(CelCompileError) as info:
        checker.check(bad, env())
    assert info.value.kind == CompileErrorKind.REFERENCE and info.value.offset == 3


def test_qualified_identifiers_longest_prefix() -> None:
    e = env(variables={"a.b.c": STRING, "a.b": map_of(STRING, INT)})
    result = check("a.b.c", e)
    assert result.type == STRING
    assert list(result.references.values()) == ["a.b.c"]
    e2 = env(variables={"a.b": map_of(STRING, INT)})
    assert type_of("a.b.c", e2) == "int"
    assert type_of(".a.b.c", e2) == "int"
    # a macro variable shadows the head of a qualified name
    e3 = env(variables={"y.z": STRING})
    assert type_of("[{'z': 0}].exists(y, y.z == 0)", e3) == "bool"
    assert type_of("y.z", e3) == "string"


def test_leading_dot_skips_macro_variables() -> None:
    e = env(variables={"x": INT})
    assert type_of("['s'].map(x, .x)", e) == "list(int)"
    assert type_of("['s'].map(x, x)", e) == "list(string)"


def test_namespaced_function_calls() -> None:
    result = check("math.abs(-1.5)")
    assert result.type == DOUBLE
    assert "math.abs" in result.references.values()
    # a declared variable named like the namespace wins: abs() is then a member call
    e = env(variables={"math": map_of(STRING, INT)})
    err = error("math.abs(1)", e)
    assert err.kind == CompileErrorKind.REFERENCE
    assert "undeclared reference to 'abs'" in err.message


def test_overloads_are_recorded() -> None:
    tree = parser.parse("dyn(1) + 1")
    result = checker.check(tree, env())
    assert result.overloads[id(tree)] == ("add_int",)
    tree = parser.parse("dyn(1) + dyn(1)")
    assert len(checker.check(tree, env()).overloads[id(tree)]) > 3


def test_type_parameters_unify_per_call() -> None:
    pair = Function("pair", (Overload("pair", (A, A), list_of(A)),), lambda a, b: [a, b])
    e = env(functions={**standard_library(), "pair": pair})
    assert type_of("pair(1, 2)", e) == "list(int)"
    assert type_of("pair(1, dyn(2))", e) == "list(dyn)"
    assert type_of("pair(pair(1, 2), [])", e) == "list(list(int))"
    err = error("pair(1, 'a')", e)
    assert err.kind == CompileErrorKind.TYPE
    assert err.message == "found no matching overload for 'pair' applied to '(int, string)'"
    # a fresh instantiation per call: int in one call, string in the next
    assert type_of("pair(1, 2).size() + size(pair('a', 'b'))", e) == "int"


def test_varargs_overloads() -> None:
    f = Function("f", (Overload("f_ints", (STRING, INT), INT, varargs=True),), lambda *a: 0)
    e = env(functions={"f": f})
    assert type_of("f('a', 1)", e) == "int"
    assert type_of("f('a', 1, 2, 3)", e) == "int"
    assert error("f('a')", e).kind == CompileErrorKind.TYPE
    assert error("f('a', 1, 'b')", e).kind == CompileErrorKind.TYPE


def test_require_result() -> None:
    tree = parser.parse("  1 + 1")
    checker.require_result(tree, INT, (BOOL, INT))
    checker.require_result(tree, DYN, (BOOL,))
    checker.require_result(tree, list_of(DYN), (list_of(STRING),))
    with pytest.raises(CelCompileError) as info:
        checker.require_result(tree, INT, (BOOL,))
    assert info.value.kind == CompileErrorKind.TYPE
    assert info.value.message == "expression must evaluate to bool, found int"
    assert info.value.offset == tree.offset == 4
    with pytest.raises(CelCompileError) as info:
        checker.require_result(tree, STRING, (INT, DOUBLE))
    assert info.value.message == "expression must evaluate to int or double, found string"


# ------------------------------------------------------------------------------------
# Errors: kind, cel-go wording, offset


@pytest.mark.parametrize(("text", "kind", "message", "offset"), [
    ("x + 1", "reference", "undeclared reference to 'x'", 0),
    ("1 + foo", "reference", "undeclared reference to 'foo'", 4),
    ("nosuch(1)", "reference", "undeclared reference to 'nosuch'", 6),
    ("'a'.nosuch()", "reference", "undeclared reference to 'nosuch'", 10),
    ("1 + 'a'", "type", "found no matching overload for '_+_' applied to '(int, string)'", 2),
    ("'abc'.startsWith(1)", "type",
     "found no matching overload for 'startsWith' applied to 'string.(int)'", 16),
    ("size(1)", "type", "found no matching overload for 'size' applied to '(int)'", 4),
    ("!1", "type", "found no matching overload for '!_' applied to '(int)'", 0),
    ("-'a'", "type", "found no matching overload for '-_' applied to '(string)'", 0),
    ("1 && true", "type", "expected type 'bool' but found 'int'", 0),
    ("true && 1 && b", "type", "expected type 'bool' but found 'int'", 8),
    ("true || (1 + 2)", "type", "expected type 'bool' but found 'int'", 11),
    ("true ? 1 : 'a'", "type",
     "found no matching overload for '_?_:_' applied to '(bool, int, string)'", 5),
    ("[1][0u]", "type", "found no matching overload for '_[_]' applied to '(list(int), uint)'",
     3),
    ("1 in 'abc'", "type", "found no matching overload for '@in' applied to '(int, string)'", 2),
    ("(1).x", "type", "type 'int' does not support field selection", 3),
    ("Foo{a: 1}", "type", "unknown type 'Foo'", 0),
    ("1.all(x, x)", "type", "cannot be the range of a comprehension", 0),
    ("[1].all(x, x + 1)", "type", "predicate of 'all' must evaluate to bool, found int", 13),
    ("[1].filter(x, 'a')", "type", "predicate of 'filter' must evaluate to bool", 14),
    ("1.optMap(x, x)", "type", "optMap requires an optional value, found int", 0),
    ("[?1]", "type", "optional list element must be optional_type, found int", 2),
    ("{?1: 2}", "type", "optional map entry must be optional_type, found int", 5),
])
def test_error(text: str, kind: str, message: str, offset: int) -> None:
    err = error(text)
    assert err.kind.value == kind
    assert message in err.message
    assert err.offset == offset


def test_undefined_field_suggests_the_closest() -> None:
    e = env(variables={"pod": POD}, objects=OBJECTS)
    err = error("pod.nmae == 'x'", e)
    assert err.kind == CompileErrorKind.TYPE
    assert err.message == "undefined field 'nmae' (did you mean 'name'?)"
    assert err.offset == 3
    err = error("has(pod.spec.nodeNmae)", e)
    assert err.message == "undefined field 'nodeNmae' (did you mean 'nodeName'?)"
    err = error("pod.zzzzzz", e)
    assert err.message == "undefined field 'zzzzzz'"


def test_undeclared_identifier_suggestion() -> None:
    e = env(variables={"pod": POD}, objects=OBJECTS)
    err = error("1 + pdo.priority", e)
    assert err.kind == CompileErrorKind.REFERENCE
    assert err.message == "undeclared reference to 'pdo' (did you mean 'pod'?)"
    assert err.offset == 4


def test_unavailable_variable_reports_the_reason() -> None:
    e = env(variables={"pod": POD}, objects=OBJECTS,
            unavailable={"node": "in preFilter: node variables exist from filter on",
                         "nodes": "outside preFilter, permit and postFilter"})
    err = error("pod.name != '' && node.name == 'a'", e)
    assert err.kind == CompileErrorKind.REFERENCE
    assert err.message == ("'node' is not available in preFilter: node variables exist "
                           "from filter on")
    assert err.offset == 18
    err = error("size(nodes)", e)
    assert err.message == "'nodes' is not available: outside preFilter, permit and postFilter"
    assert err.offset == 5
    # a macro variable of that name is fine
    assert type_of("[1].all(node, node > 0)", e) == "bool"


def test_first_error_in_source_order() -> None:
    err = error("a + b")
    assert err.message == "undeclared reference to 'a'" and err.offset == 0


# ------------------------------------------------------------------------------------
# Kubernetes' checker rules (cel-go v0.26 in Kubernetes 1.34's environment: texts, offsets)


@pytest.mark.parametrize(("text", "message", "offset"), [
    ("[1, 'a']", "expected type 'int' but found 'string'", 4),
    ("{'a': 1, 'b': 'x'}", "expected type 'int' but found 'string'", 14),
    ("[1, dyn('a')]", "expected type 'int' but found 'dyn'", 7),
    ("[null, 1]", "expected type 'null' but found 'int'", 7),
    ("[1, null]", "expected type 'int' but found 'null'", 4),
    ("[1, 2u]", "expected type 'int' but found 'uint'", 4),
    ("[[1], [2.0]]", "expected type 'list(int)' but found 'list(double)'", 6),
    ("[[1], [dyn(2)]]", "expected type 'list(int)' but found 'list(dyn)'", 6),
    ("[{'a': 1}, {'b': 'x'}]",
     "expected type 'map(string, int)' but found 'map(string, string)'", 11),
    ("[optional.of(1), optional.of('a')]",
     "expected type 'optional_type(int)' but found 'optional_type(string)'", 28),
    ("[?optional.of(1), 'a']", "expected type 'int' but found 'string'", 18),
    ("{?'a': optional.of(1), 'b': 'x'}", "expected type 'int' but found 'string'", 28),
    ("{1: 'a', 'b': 'c'}", "expected type 'int' but found 'string'", 9),
    ("[int, string]", "expected type 'type(int)' but found 'type(string)'", 6),
    ("[timestamp(0), null]", "expected type 'timestamp' but found 'null'", 15),
    ("[1, 2].map(x, [x, 'a'])", "expected type 'int' but found 'string'", 18),
    ("dyn([1, 'a'])", "expected type 'int' but found 'string'", 8),
])
def test_mixed_aggregate_literal_is_a_compile_error(text: str, message: str,
                                                    offset: int) -> None:
    err = error(text)
    assert (err.kind, err.message, err.offset) == (CompileErrorKind.TYPE, message, offset)


@pytest.mark.parametrize(("text", "want"), [
    ("[[1], []]", "list(list(int))"),               # the final types are compared
    ("{'a': [1], 'b': []}", "map(string, list(int))"),
    ("[[], []]", "list(list(dyn))"),
    ("[?optional.of(1), 2]", "list(int)"),         # an optional element's value counts
    ("[optional.of(1), optional.none()]", "list(optional_type(int))"),
    ("[type(1), int]", "list(type(int))"),
    ("'%s, %d'.format([[1, 'a'], 2])", "string"),  # string formatting is exempt
    ("[dyn(1), dyn('a')]", "list(dyn)"),
])
def test_homogeneous_aggregate_literal_is_accepted(text: str, want: str) -> None:
    assert type_of(text) == want


@pytest.mark.parametrize(("text", "applied", "offset"), [
    ("1 == 'a'", "(int, string)", 2),
    ("1 == 1.0", "(int, double)", 2),
    ("1 == 1u", "(int, uint)", 2),
    ("1 == null", "(int, null)", 2),
    ("null == 1", "(null, int)", 5),
    ("[1] == [1.0]", "(list(int), list(double))", 4),
    ("{'a': 1} == {'a': 'b'}", "(map(string, int), map(string, string))", 9),
    ("duration('1s') == 1", "(duration, int)", 15),
    ("optional.of(1) == 1", "(optional_type(int), int)", 15),
    ("type(1) == 1", "(type(int), int)", 8),
    ("b'a' == 'a'", "(bytes, string)", 5),
    ("[1].exists(x, x == 'a')", "(int, string)", 16),
])
def test_equality_between_different_static_types_is_a_compile_error(
        text: str, applied: str, offset: int) -> None:
    err = error(text)
    op = "_!=_" if "!=" in text else "_==_"
    assert err.kind == CompileErrorKind.TYPE
    assert err.message == f"found no matching overload for '{op}' applied to '{applied}'"
    assert err.offset == offset
    assert error(text.replace("==", "!=")).message.startswith(
        "found no matching overload for '_!=_'")


@pytest.mark.parametrize("text", [
    "dyn(1) == 'a'", "[1] == [dyn(1.0)]", "{'a': dyn(1)} == {'a': 1}", "null == null",
    "optional.none() == null", "duration('1s') == null", "type(1) == int",
    "1 < 1.0 && 2u > 1",  # ordering across numeric types stays (CrossTypeNumericComparisons)
])
def test_equality_with_dyn_or_null_and_numeric_ordering_are_accepted(text: str) -> None:
    assert type_of(text) == "bool"


# The CEL compatibility version: what exists before the release that introduced it.

def at(minor: int) -> Environment:
    return env(version=KubernetesVersion(1, minor))


@pytest.mark.parametrize(("text", "minor", "message"), [
    ("1 < 1.5", 27, "found no matching overload for '_<_' applied to '(int, double)'"),
    ("[1].first()", 27, "undeclared reference to 'first': introduced in Kubernetes 1.28, "
                        "the CEL compatibility version is 1.27"),
    ("optional.of(1).hasValue()", 27, "undeclared reference to 'optional.of': introduced "
                                      "in Kubernetes 1.28"),
    ("{'a': 1}.?a", 27, "unsupported syntax '.?': introduced in Kubernetes 1.28"),
    ("{'a': 1}[?'a']", 27, "unsupported syntax '[?': introduced in Kubernetes 1.28"),
    ("sets.contains([1], [1])", 28, "undeclared reference to 'sets.contains': introduced "
                                    "in Kubernetes 1.29"),
    ("'%d'.format([1])", 28, "undeclared reference to 'format': introduced in Kubernetes "
                             "1.29"),
    ("isIP('1.2.3.4')", 29, "undeclared reference to 'isIP': introduced in Kubernetes 1.30"),
    ("[1].all(i, v, v > 0)", 31, "unsupported two-variable comprehension: introduced in "
                                 "Kubernetes 1.32"),
    ("[1].transformList(i, v, v)", 31, "unsupported macro 'transformList': introduced in "
                                       "Kubernetes 1.32"),
    ("[2, 1].sort()", 33, "undeclared reference to 'sort': introduced in Kubernetes 1.34"),
    ("[[1]].flatten()", 33, "undeclared reference to 'flatten': introduced in Kubernetes "
                            "1.34"),
])
def test_a_function_or_syntax_is_refused_before_its_kubernetes_release(
        text: str, minor: int, message: str) -> None:
    err = error(text, at(minor))
    assert message in err.message
    assert type_of(text, at(minor + 1)) in ("bool", "optional_type(int)", "string",
                                            "list(int)")


@pytest.mark.parametrize("text", [
    "math.greatest(1, 2) == 2", "cel.bind(x, 1, x > 0)", "base64.encode(b'a') != ''",
    "'a'.matches('a') && 'ab'.find('b') == 'b'", "[1, 2].isSorted() && [1].sum() == 1",
    "'a,b'.split(',').join('-') == 'a-b'", "duration('1h') > duration('1m')",
])
def test_what_every_version_has(text: str) -> None:
    assert type_of(text, at(23)) == "bool"


def test_no_suggestion_of_a_function_the_version_lacks() -> None:
    assert "did you mean" not in error("[1].firsst()", at(27)).message
    assert "did you mean 'first'" in error("[1].firsst()", at(28)).message


# ------------------------------------------------------------------------------------
# Literal arguments a function refuses (cel-go's regex / timestamp / duration validators)

LITERAL_ENV = Environment(variables={"s": STRING, "x": STRING})

BAD_PATTERNS = [
    "a**",            # bad repetition operator
    "[z-a]",          # invalid character class range
    "(?<=a)b",        # no look-behind in RE2
    "(a)\\1",         # no back-references
    "a{1001}",        # repetition over RE2's 1000
    "\\pL{1000}",     # over the run-time engine's memory budget for one pattern
    "(unclosed",
    "\\C",             # RE2 accepts one byte; Go's regexp (Kubernetes') does not
    "[\\C]",
]


@pytest.mark.parametrize("pattern", BAD_PATTERNS)
@pytest.mark.parametrize(("template", "function"), [
    ("s.matches({p})", "matches"),
    ("matches(s, {p})", "matches"),
    ("s.find({p})", "find"),
    ("s.findAll({p})", "findAll"),
    ("s.findAll({p}, 2)", "findAll"),
    ("s.size() > 0 && [s].exists(v, v.matches({p}))", "matches"),
])
def test_invalid_regex_literal_is_a_compile_error_at_the_literal(
        template: str, function: str, pattern: str) -> None:
    literal = "'" + pattern.replace("\\", "\\\\") + "'"
    text = template.format(p=literal)
    err = error(text, LITERAL_ENV)
    assert err.kind == CompileErrorKind.ARGUMENT
    assert err.offset == text.index(literal)
    assert err.message.startswith(f"invalid {function} argument: invalid regular expression ")


def test_pattern_through_dyn_is_checked_too() -> None:
    # Kubernetes compiles a constant pattern when it plans the program; dyn() is constant
    text = "s.matches(dyn(dyn('a**')))"
    err = error(text, LITERAL_ENV)
    assert err.kind == CompileErrorKind.ARGUMENT and err.offset == text.index("'a")
    assert check("s.matches(dyn(x))", LITERAL_ENV).type == BOOL


@pytest.mark.parametrize("pattern", [*BAD_PATTERNS, "a*", "^[a-z0-9]([-a-z0-9]*)?$",
                                     "(?i)x", "\\d{1000}", "(?P<n>a)", "\\Q\\C\\E", "a\\\\C", ""])
def test_compile_time_and_run_time_agree_on_every_pattern(pattern: str) -> None:
    literal = "'" + pattern.replace("\\", "\\\\") + "'"
    try:
        compile_expression(f"s.matches({literal})", LITERAL_ENV)
        refused = False
    except CelCompileError:
        refused = True
    dynamic = compile_expression("s.matches(x)", LITERAL_ENV)
    try:
        dynamic.evaluate({"s": "abc", "x": pattern})
        fails = False
    except CelError:
        fails = True
    assert refused == fails


@pytest.mark.parametrize(("call", "fragment"), [
    ("timestamp('noon')", "is not an RFC 3339 timestamp"),
    ("timestamp('2024-02-30T00:00:00Z')", "is not an RFC 3339 timestamp"),
    ("duration('1x')", "unknown unit"),
    ("quantity('1Q')", "quantities must match the regular expression"),
    ("quantity('1.5.3Gi')", "quantities must match the regular expression"),
    ("quantity('10Mm')", "unable to parse quantity's suffix"),
    ("quantityMilli('9Ei')", "out of int64 range"),
    ("semver('1.2.3-01')", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("semver('v1.2-rc', true)", "short version cannot contain PreRelease/Build meta data"),
    ("ip('1.2.3')", "IP Address '1.2.3' parse error"),
    ("cidr('10.0.0.0/33')", "network address parse error"),
    ("int('12x')", "type conversion error"),
    ("uint('-1')", "type conversion error"),
    ("double('1,5')", "type conversion error"),
    ("bool('maybe')", "type conversion error"),
])
def test_constant_conversion_that_always_fails_is_a_compile_error(
        call: str, fragment: str) -> None:
    text = f"s == '' || {call} != {call}"
    err = error(text, LITERAL_ENV)
    assert err.kind == CompileErrorKind.ARGUMENT
    assert err.offset == text.index("'", text.index(call))
    name = call.split("(")[0]
    assert err.message.startswith(f"invalid {name} argument: ") and fragment in err.message


@pytest.mark.parametrize(("call", "message", "at"), [
    ("int(1e19)", "invalid int argument: integer overflow", "1e19"),
    ("int(-9223372036854775808.0)", "invalid int argument: integer overflow", "-9"),
    ("uint(-1)", "invalid uint argument: unsigned integer overflow", "-1"),
    ("uint(1.8446744073709552e19)", "invalid uint argument: unsigned integer overflow", "1.8"),
    ("string(b'\\xff')",
     "invalid string argument: invalid UTF-8 in bytes, cannot convert to string", "b'"),
    ("timestamp(253402300800)", "invalid timestamp argument: timestamp overflow", "2534"),
    ("timestamp(-62135596801)", "invalid timestamp argument: timestamp overflow", "-62"),
    ("duration('2562048h')",
     "invalid duration argument: duration '2562048h' out of range", "'"),
    ("int(dyn(1e19))", "invalid int argument: integer overflow", "(1e19"),  # folded through
    ("bytes(dyn(1))", "invalid bytes argument: no such overload", "(1)"),
])
def test_constant_conversion_kubernetes_folds_is_a_compile_error(
        call: str, message: str, at: str) -> None:
    """Kubernetes evaluates a type conversion of a constant when it plans the program
    (cel.OptOptimize): a failing one is a compile error there, whatever the branch."""
    text = f"s == '' || {call} != {call}"
    err = error(text, LITERAL_ENV)
    assert err.kind == CompileErrorKind.ARGUMENT
    assert err.message.startswith(message)
    assert err.offset == text.index(at, text.index(call))


@pytest.mark.parametrize("text", [
    "uint(1e19) > 0u", "int(9.2233720368547e18) > 0", "int(-1.5) == -1",
    "timestamp(253402300799) > timestamp(-62135596800)",
    "duration('2562047h') > duration('-9223372036.854775808s')",
    "string(1.5) + string(b'ok') + string(dyn(1)) != ''", "type(dyn(1)) == int",
])
def test_constant_conversion_that_succeeds_is_accepted(text: str) -> None:
    assert check(text, LITERAL_ENV).type == BOOL


@pytest.mark.parametrize("text", [
    "timestamp('2024-01-01T00:00:00Z') < timestamp(s)",
    "duration('1h30m') > duration('0s')",
    "quantity('1.5Gi').asInteger() > 0 && quantityMilli('500m') == 500",
    "semver('v1.2', true).minor() == 2 && semver('1.2.3') == semver(s)",  # v1.2: normalised
    "ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
    "int('-12') + int(s) == 0 && bool('true') && uint('1') == 1u && double('1e3') > 0.0",
    "s.matches(x) && s.find(s + '*') == '' && int(x) == 1",  # not literals: run-time errors
    "timestamp(1700000000) > timestamp(0)",                # not strings
])
def test_valid_or_non_literal_arguments_are_accepted(text: str) -> None:
    assert check(text, LITERAL_ENV).type == BOOL


# ------------------------------------------------------------------------------------
# Untrusted input


def test_deep_tree_does_not_recurse() -> None:
    node: ast.Node = ast.Literal(0, 1)
    for i in range(5_000):
        node = ast.Call(i, ast.ADD, (node, ast.Literal(i, 1)))
    result = checker.check(node, env())
    assert result.type == INT
    assert len(result.types) == 10_001


def _nested_lists(depth: int) -> ast.Node:
    node: ast.Node = ast.Literal(0, 1)
    for i in range(depth):
        node = ast.CreateList(i, (node,))
    return node


def test_deeply_nested_list_type() -> None:
    # the parser bounds trees at 200 levels; a type that deep is fine
    result = checker.check(_nested_lists(200), env())
    assert str(result.type).count("list(") == 200
    # far deeper (only possible with hand-made trees) is an error, never RecursionError
    with pytest.raises(CelCompileError) as info:
        checker.check(_nested_lists(5000), env())
    assert info.value.kind == CompileErrorKind.TYPE


def test_exponential_type_growth_is_rejected_quickly() -> None:
    text = "{1: 1}"
    for i in range(40):
        text = f"cel.bind(v{i}, {text}, {{v{i}: v{i}}})"
    started = time.monotonic()
    err = error(text)
    assert err.kind == CompileErrorKind.TYPE
    assert "too complex" in err.message
    assert time.monotonic() - started < 5
