"""docs/reference.md is generated from the code's own tables and cannot drift: it is up to
date, it covers every declared variable, field, function and macro, and every example in
it compiles and evaluates (rendering evaluates them all) and uses what it illustrates;
the examples of the policy schema are valid, warning-free policies."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from policysched.cel import ast, parser
from policysched.cel.values import UInt
from policysched.commands import reference
from policysched.policy import variables as v
from policysched.policy.documents import CONFIGURATION_KIND, POLICY_KIND
from policysched.policy.loader import load_text
from policysched.policy.policy_set import build_policy_set
from policysched.policy.schema import load_schema

TEXT = reference.render()
SAMPLE = reference.Sample()
# the fields every rule kind shares (``$ref`` to one definition), documented once
SHARED_RULE_FIELDS = {"message", "messageExpression", "failurePolicy", "enforcement"}


def nodes(tree: ast.Node) -> list[ast.Node]:
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(ast.children(node))
    return found


def called(call: ast.Call) -> set[str]:
    """The functions a call may name: ``x.of(y)`` is ``of``, or ``x.of`` (``optional.of``)."""
    if isinstance(call.target, ast.Ident):
        return {call.function, f"{call.target.name}.{call.function}"}
    return {call.function}


def test_the_committed_reference_is_up_to_date() -> None:
    assert reference.REFERENCE.read_text(encoding="utf-8") == TEXT, (
        f"docs/reference.md is out of date: run .venv/bin/{reference.COMMAND}")


def test_every_link_within_the_page_leads_to_a_heading() -> None:
    headings = {reference.anchor(line.lstrip("#").strip())
                for line in TEXT.splitlines() if line.startswith("#")}
    targets = set(re.findall(r"\]\(#([^)]+)\)", TEXT))
    assert targets and targets <= headings, sorted(targets - headings)


def test_check_names_the_command_that_regenerates_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "reference.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(reference, "REFERENCE", stale)
    assert reference.main(["--check"]) == 1
    assert reference.COMMAND in capsys.readouterr().err
    assert reference.main([]) == 0
    assert stale.read_text(encoding="utf-8") == TEXT
    assert reference.main(["--check"]) == 0
    monkeypatch.setattr(reference, "REFERENCE", tmp_path / "no-docs" / "reference.md")
    assert reference.main([]) == 2
    assert "source checkout" in capsys.readouterr().err


def test_every_function_of_a_policy_is_listed_with_a_doc_and_examples_calling_it() -> None:
    listed = [f.name for _, functions in reference.LIBRARIES for f in functions]
    declared = SAMPLE.environment.functions
    assert sorted(set(listed)) == sorted(declared)
    for name, function in declared.items():
        assert function.doc and function.examples, name
        assert f"| `{name}` |" in TEXT
        for example in function.examples:
            calls = set().union(*(called(n) for n in nodes(SAMPLE.compile(example).tree)
                                  if isinstance(n, ast.Call)))
            assert name in calls, f"{example!r} does not call {name}"
            assert reference.code(example) in TEXT


def test_every_variable_is_declared_documented_and_read_by_its_example() -> None:
    in_scopes = set().union(*(scope.declared for scope in v.SCOPES))
    assert in_scopes == set(v.DECLARATIONS)
    for name, declaration in v.DECLARATIONS.items():
        idents = {n.name for n in nodes(SAMPLE.compile(declaration.example).tree)
                  if isinstance(n, ast.Ident)}
        assert name in idents, f"{declaration.example!r} does not read {name}"
        assert f"| `{name}` | `" in TEXT


def test_every_field_of_every_object_type_is_documented() -> None:
    assert v.FIELD_DOCS.keys() == v.OBJECT_TYPES.keys() == reference.TYPE_PATHS.keys()
    for type_name, fields in v.OBJECT_TYPES.items():
        assert v.FIELD_DOCS[type_name].keys() == fields.keys(), type_name
        section = TEXT.split(f"### {type_name}\n", 1)[1].split("\n### ", 1)[0]
        for field in fields:
            assert f"| `{field}` |" in section, (type_name, field)


def test_every_macro_of_the_parser_is_documented() -> None:
    forms = " ".join(f for macro in reference.MACROS.values() for f in macro.forms)
    names = [*parser._QUANTIFIERS, *parser._TRANSFORMS, "map", "filter", "has", "optMap",
             "optFlatMap", "cel.bind", "sortBy"]
    for name in names:
        assert f"{name}(" in forms, name
    for macro in reference.MACROS.values():
        assert reference.code(macro.example) in TEXT


def test_every_schema_field_has_a_row() -> None:
    for kind in (POLICY_KIND, CONFIGURATION_KIND):
        schema = load_schema(kind)
        section = TEXT.split(f"\n## {kind}\n", 1)[1]
        for definition in (schema, *schema["$defs"].values()):
            for field in definition.get("properties", {}):
                assert f"| `{field}`" in section, (kind, field)


def policy_with(definition: str, example: Any, points: dict[str, str]) -> dict[str, Any]:
    """A policy holding ``example`` of schema definition ``definition``."""
    document: dict[str, Any] = {"apiVersion": "policysched.io/v1alpha1",
                                "kind": POLICY_KIND, "metadata": {"name": "example"},
                                "spec": {}}
    if definition in ("spec", "metadata"):
        document[definition] = example
    else:
        document["spec"][points[definition]] = [example]
    return document


def test_the_policy_schema_examples_are_valid_policies_without_warnings() -> None:
    definitions = load_schema(POLICY_KIND)["$defs"]
    points = {field["items"]["$ref"].rsplit("/", 1)[-1]: name
              for name, field in definitions["spec"]["properties"].items() if "items" in field}
    shared_seen: set[str] = set()
    for name, definition in definitions.items():
        examples = definition.get("examples", [])
        if name in points or name in ("variable", "aggregate", "spec", "metadata"):
            assert examples, f"$defs.{name} has no examples"
        for example in examples:
            document = policy_with(name, example, points)
            loaded = build_policy_set(load_text(yaml.safe_dump(document), f"{name}.yaml"))
            assert not loaded.diagnostics, (name, [str(d) for d in loaded.diagnostics])
        used = {field for example in examples for field in example}
        if name in points:
            shared_seen |= used & SHARED_RULE_FIELDS
            missing = set(definition["properties"]) - used - SHARED_RULE_FIELDS
            assert not missing, f"no example of $defs.{name} shows {sorted(missing)}"
    assert shared_seen == SHARED_RULE_FIELDS


@pytest.mark.parametrize("text", [
    "null", "true", "-7", "42u", "2.5", "'it\\'s'", "b'abc'", "[[1], [2, 3]]",
    "{'a': {'b': 1}}", "timestamp('2025-01-01T12:00:00Z')", "duration('5400s')",
    "optional.of(3)", "optional.none()", "ip('10.0.0.1')", "cidr('10.0.0.0/8')", "int",
])
def test_values_are_shown_as_the_cel_that_makes_them(text: str) -> None:
    value = SAMPLE.evaluate(text)
    assert reference.cel_text(value) == text
    assert SAMPLE.evaluate(reference.cel_text(value)) == value


def test_mixed_values_are_shown_as_their_plain_literal() -> None:
    # Kubernetes' checker wants dyn() around each value; the value reads better without
    value = SAMPLE.evaluate("[dyn(1), dyn('a'), dyn([true])]")
    assert reference.cel_text(value) == "[1, 'a', [true]]"


def test_special_doubles_and_opaque_values() -> None:
    assert reference.cel_text(float("inf")) == "+Inf"
    assert reference.cel_text(float("nan")) == "NaN"
    assert reference.cel_text(UInt(3)) == "3u"
    with pytest.raises(TypeError):
        reference.cel_text(SAMPLE.evaluate("labelSelector({})"))


def test_an_example_that_fails_names_itself() -> None:
    with pytest.raises(reference.ExampleError, match=r"'node\.labels\.spot'.*no such key"):
        SAMPLE.evaluate("node.labels.spot")
