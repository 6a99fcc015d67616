"""YAML text → data with a node per path; YAML errors are positioned diagnostics; limits
on documents, nesting and aliases; libyaml and PyYAML's parser agree."""

from __future__ import annotations

from pathlib import Path as FilePath

import pytest

from policysched.policy import yaml_documents
from policysched.policy.diagnostics import DiagnosticKind
from policysched.policy.limits import PolicyLimits
from policysched.policy.positions import FileText, Position
from policysched.policy.yaml_documents import parse_documents


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_documents(text, FileText("f.yaml", text))


def test_documents_keep_a_position_for_every_key_and_value() -> None:
    docs, errors = parse("a: 1\nspec:\n  filter:\n  - name: x\n    expression: 'y'\n")
    assert errors == []
    [doc] = docs
    assert doc.value == {"a": 1, "spec": {"filter": [{"name": "x", "expression": "y"}]}}
    path = ("spec", "filter", 0, "expression")
    assert doc.position(path) == Position("f.yaml", 5, 17)
    assert doc.position(path, key=True) == Position("f.yaml", 5, 5)
    # a missing path falls back to its nearest ancestor
    assert doc.position(("spec", "filter", 0, "nope")) == Position("f.yaml", 4, 5)


def test_empty_documents_are_skipped_and_numbers_kept() -> None:
    docs, errors = parse("---\n---\na: 1\n---\n# only a comment\n---\nb: 2\n")
    assert errors == []
    assert [d.value for d in docs] == [{"a": 1}, {"b": 2}]
    assert [d.number for d in docs] == [1, 3]


def test_invalid_yaml_is_positioned_at_the_problem() -> None:
    docs, errors = parse("a: 1\nb: [1, 2\nc: 3\n")
    assert docs == []
    [error] = errors
    assert error.kind is DiagnosticKind.YAML
    assert error.message.startswith("invalid YAML: ")
    assert (error.line, error.column) == (3, 2)


def test_documents_before_a_yaml_error_are_kept() -> None:
    docs, errors = parse("a: 1\n---\nb: 'unterminated\n")
    assert [d.value for d in docs] == [{"a": 1}]
    assert len(errors) == 1 and errors[0].kind is DiagnosticKind.YAML


def test_duplicate_keys_are_errors_at_the_second_key() -> None:
    _, errors = parse("spec:\n  match: a\n  filter: []\n  match: b\n")
    [error] = errors
    assert error.message == 'duplicate key "match" (first defined at line 2)'
    assert (error.line, error.column) == (4, 3)
    assert error.line_text == "  match: b"


def test_keys_are_strings_and_timestamps_stay_text() -> None:
    [doc], _ = parse("1: a\non: b\nt: 2024-01-02\nn: null\nf: 1.5\n")
    assert doc.value == {"1": "a", "on": "b", "t": "2024-01-02", "n": None, "f": 1.5}


def test_merge_keys_are_applied_and_own_keys_win() -> None:
    [doc], errors = parse("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\n")
    assert errors == []
    assert doc.value["c"] == {"x": 1, "y": 3}


def test_recursive_alias_is_an_error_not_a_crash() -> None:
    _, errors = parse("a: &x [1, *x]\n")
    [error] = errors
    assert error.message == "recursive YAML alias"


def bomb(width: int, levels: int) -> str:
    """Each level an anchored list of ``width`` aliases of the one before."""
    lines = ["l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]"
              for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_in_proportion_to_its_text() -> None:
    # 99 + 99² + 99³ = 980,199 values, just under the old cap of a million: it used to be
    # expanded (seconds, hundreds of MB). Aliases may now add twice the text's size.
    text = bomb(99, 2)
    docs, errors = parse(text)
    assert docs == []
    [error] = errors
    assert error.kind is DiagnosticKind.LIMIT
    assert error.message == (
        "YAML aliases expand the text to more than 2 times its size "
        "(policyLimits.maxAliasExpansion in the SchedulerConfiguration)")
    assert error.line == 2  # at the alias that goes too far, the 14th of the second list
    assert error.line_text is not None and error.line_text[error.column - 1:] == (
        ", ".join(["*l0"] * (99 - 13)) + "]")


def test_aliases_within_the_limit_are_expanded() -> None:
    text = "base: &b {failurePolicy: Ignore, message: nope}\nrules:\n"
    text += "".join(f"- {{<<: *b, name: r{i}}}\n" for i in range(20))
    [doc], errors = parse(text)
    assert errors == []
    assert doc.value["rules"][19] == {"failurePolicy": "Ignore", "message": "nope", "name": "r19"}
    # an expansion limit of 0 refuses any repetition through an alias
    _, errors = parse_documents(text, FileText("f.yaml", text),
                                PolicyLimits(max_alias_expansion=0))
    assert [e.kind for e in errors] == [DiagnosticKind.LIMIT]


def test_deep_nesting_is_a_positioned_error_not_a_recursion_error() -> None:
    text = "a: " + "[" * 100_000 + "]" * 100_000 + "\n"
    docs, errors = parse(text)
    assert docs == []
    [error] = errors
    assert error.kind is DiagnosticKind.LIMIT
    assert error.message == ("nested too deeply: more than 100 levels of mappings and lists "
                             "(policyLimits.maxDepth in the SchedulerConfiguration)")
    assert (error.line, error.column) == (1, 4 + 99)  # the 101st level: the 100th "["


def test_nesting_through_aliases_is_bounded_too() -> None:
    limits = PolicyLimits(max_depth=7)
    assert parse_documents("a: [[[[[[1]]]]]]\n", FileText("f", "x"), limits)[1] == []
    # b is 5 levels deep and c 7 (the document is the first), d 8 only once b is expanded
    text = "a: &a [[1]]\nb: &b [[*a]]\nc: [[*b]]\nd: [[[*b]]]\n"
    _, errors = parse_documents(text, FileText("f.yaml", text), limits)
    [error] = errors
    assert error.kind is DiagnosticKind.LIMIT and "more than 7 levels" in error.message
    assert error.line == 4


def test_the_number_of_documents_is_bounded_for_policy_input() -> None:
    text = "a: 1\n---\nb: 2\n---\nc: 3\n"
    docs, errors = parse_documents(text, FileText("f.yaml", text),
                                   PolicyLimits(max_documents=2))
    assert [d.value for d in docs] == [{"a": 1}, {"b": 2}]
    [error] = errors
    assert error.kind is DiagnosticKind.LIMIT and (error.line, error.column) == (4, 1)
    assert error.message == ("too many documents: more than 2 "
                             "(policyLimits.maxDocuments in the SchedulerConfiguration)")
    assert parse(text)[1] == []  # other YAML (cluster files): any number of documents


@pytest.mark.parametrize(("text", "message"), [
    ("a: " + "1" * 5000, "number too long: more than 4300 characters"),
    ("a: " + ":".join(["1"] * 2000) + ".5",  # sexagesimal, beyond a float
     "invalid number: int too large to convert to float"),
])
def test_numbers_python_cannot_convert_are_positioned_errors(text: str, message: str) -> None:
    _, errors = parse(text)
    [error] = errors
    assert error.kind is DiagnosticKind.YAML and error.message == message
    assert (error.line, error.column) == (1, 4)


def test_unsupported_tags_are_errors() -> None:
    _, errors = parse("a: !!python/object:os.system x\n")
    [error] = errors
    assert error.message.startswith('unsupported YAML tag "tag:yaml.org,2002:python/object')
    assert (error.line, error.column) == (1, 4)


def test_non_scalar_keys_are_errors() -> None:
    _, errors = parse("? [a, b]\n: 1\n")
    [error] = errors
    assert error.message == "a mapping key must be a plain value, not a list"


ROOT = FilePath(__file__).resolve().parents[2]
SAMPLES = {
    "non-ASCII": "a: é\nb: '日本語 x'\nc: \"\\u00e9 \\x41\"\n"
                 "d: |\n  línea\n  😀 x\ne: >-\n  f\n\n  g\n",
    "line breaks": "a: 1\r\nb: |\r\n  x\r\n  y\r\nc: 'q'\x85d: 2\u2028e: 3\u2029f: 4\n",
    "byte order mark": "\ufeffa: 1\nb: [x, y]\n",
    "documents": "---\na: 1\n...\n---\n- x\n---\n--- !!str\n",
    "scalar styles": "a: 'it''s'\nb: \"l1\\\n  l2\"\nc: plain\n  continued\n"
                     "d: |+\n  k\n\ne: >2\n   i\n",
    "anchors": "a: &a {x: 1}\nb: {<<: *a, y: 2}\nc: [*a, *a]\n",
    "unterminated": "a: 1\nb: [1, 2\nc: 3\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
    "undefined alias": "a: *nope\n",
    "duplicate anchor": "a: &x 1\nb: &x 2\n",
    "control character": "a: \x07\n",
}
SAMPLES.update({str(f.relative_to(ROOT)): f.read_text(encoding="utf-8") for f in sorted(
    [*(ROOT / "policies").glob("*.yaml"), *(ROOT / "tests/policy/fixtures").glob("*.yaml")])})


def outcome(text: str) -> tuple[object, ...]:
    """Everything a parse gives: values, the marks of every node and key, and errors."""
    docs, errors = parse(text)
    return tuple((d.number, d.value, {
        path: (ref.node.start_mark.index, ref.node.end_mark.index,
               getattr(ref.node, "style", None),
               ref.key.start_mark.index if ref.key is not None else None)
        for path, ref in d.nodes.items()}) for d in docs), tuple(errors)


@pytest.mark.skipif(yaml_documents._FAST_LOADER is None, reason="libyaml is not installed")
@pytest.mark.parametrize("name", list(SAMPLES))
def test_libyaml_gives_what_the_pure_python_parser_gives(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = SAMPLES[name]
    fast = outcome(text)
    monkeypatch.setattr(yaml_documents, "_FAST_LOADER", None)
    assert fast == outcome(text)
