"""YAML text → data with a node per path; YAML errors are positioned diagnostics."""

from __future__ import annotations

from policysched.policy.diagnostics import DiagnosticKind
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


def test_alias_bombs_are_bounded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from policysched.policy import yaml_documents

    monkeypatch.setattr(yaml_documents, "MAX_VALUES", 1000)
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    text += "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    text += "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    _, errors = parse(text)
    [error] = errors
    assert "document too large" in error.message


def test_unsupported_tags_are_errors() -> None:
    _, errors = parse("a: !!python/object:os.system x\n")
    [error] = errors
    assert error.message.startswith('unsupported YAML tag "tag:yaml.org,2002:python/object')
    assert (error.line, error.column) == (1, 4)


def test_non_scalar_keys_are_errors() -> None:
    _, errors = parse("? [a, b]\n: 1\n")
    [error] = errors
    assert error.message == "a mapping key must be a plain value, not a list"
