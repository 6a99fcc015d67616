"""JSON-Schema validation of loaded documents, with messages a person can act on.

The schemas live in ``schemas/`` at the top of the project (editors use them too, through
the ``yaml-language-server`` modeline of the shipped policies) and ship inside the package
(``policysched.resources`` finds them). jsonschema finds the errors;
this module turns each into one positioned diagnostic: an unknown field points at the key
and suggests the closest valid one, a missing field points at the mapping that lacks it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from ..resources import SCHEMA_DIRECTORY
from . import messages
from .diagnostics import Diagnostic, DiagnosticKind
from .documents import CONFIGURATION_KIND, POLICY_KIND, TEST_KIND, LoadedDocument
from .yaml_documents import Path

SCHEMA_FILES = {
    POLICY_KIND: "schedulingpolicy.schema.json",
    CONFIGURATION_KIND: "schedulerconfiguration.schema.json",
    TEST_KIND: "policytest.schema.json",
}


@cache
def load_schema(kind: str) -> Mapping[str, Any]:
    """The JSON Schema of documents of ``kind`` (SchedulingPolicy, SchedulerConfiguration)."""
    with open(SCHEMA_DIRECTORY / SCHEMA_FILES[kind], encoding="utf-8") as f:
        schema: dict[str, Any] = json.load(f)
    return schema


@cache
def _validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(load_schema(kind))


@cache
def rule_fields() -> Mapping[str, tuple[str, ...]]:
    """Field name → the extension points whose rules have it (for unknown-field hints)."""
    fields: dict[str, list[str]] = {}
    for name, definition in load_schema(POLICY_KIND)["$defs"].items():
        if name.endswith("Rule"):
            for field in definition["properties"]:
                fields.setdefault(field, []).append(name[: -len("Rule")])
    return {k: tuple(v) for k, v in fields.items()}


def validate(document: LoadedDocument) -> list[Diagnostic]:
    """Every schema violation of ``document``, positioned and attributed."""
    translator = _Translator(document)
    errors = sorted(_validator(document.kind).iter_errors(document.value), key=_error_order)
    for error in errors:
        translator.translate(error)
    return translator.result()


def _error_order(error: ValidationError) -> tuple[int, str]:
    return (len(error.absolute_path), str(list(error.absolute_path)))


class _Translator:
    def __init__(self, document: LoadedDocument) -> None:
        self.document = document
        self.schema = load_schema(document.kind)
        self.found: list[tuple[Path, Diagnostic]] = []
        self.suggested: set[tuple[Path, str]] = set()  # (object path, suggested field)
        self.missing: list[tuple[Path, tuple[str, ...], Diagnostic]] = []

    def result(self) -> list[Diagnostic]:
        # A typo such as "expresion" is reported once, as an unknown field with a
        # suggestion, not also as the required "expression" being missing.
        out = [d for _, d in self.found]
        out += [
            d for path, fields, d in self.missing
            if not any((path, field) in self.suggested for field in fields)
        ]
        return out

    def add(self, path: Path, message: str, *, key: bool = False,
            kind: DiagnosticKind = DiagnosticKind.SCHEMA) -> None:
        self.found.append((path, self.document.diagnostic(path, kind, message, key=key)))

    def translate(self, error: ValidationError) -> None:
        path: Path = tuple(error.absolute_path)
        keyword = error.validator
        value: Any = error.validator_value
        instance = error.instance
        schema = error.schema if isinstance(error.schema, dict) else {}
        if "propertyNames" in error.absolute_schema_path:
            self._property_name(path, error, schema)
        elif keyword in ("additionalProperties", "unevaluatedProperties"):
            self._unknown_fields(path, instance, schema)
        elif keyword == "required":
            for field in value:
                if isinstance(instance, dict) and field not in instance:
                    d = self.document.diagnostic(
                        path, DiagnosticKind.SCHEMA, messages.MISSING_FIELD.format(field=field)
                    )
                    self.missing.append((path, (field,), d))
        elif keyword == "dependentRequired":
            self._dependent(path, instance, value)
        elif keyword in ("anyOf", "oneOf"):
            self._alternatives(path, error, keyword)
        elif keyword == "not" and "dependentSchemas" in error.absolute_schema_path:
            self._excluded(path, error)
        else:
            self.add(path, self._value_message(path, error, schema))

    def _property_name(self, path: Path, error: ValidationError, schema: dict[str, Any]) -> None:
        name = error.instance
        subject = messages.PROPERTY_NAME_SUBJECT.format(name=name)
        rule = schema.get("errorMessage") or messages.BAD_PATTERN_GENERIC.format(
            pattern=schema.get("pattern")
        )
        self.add((*path, str(name)), f"{subject} {rule}", key=True)

    def _unknown_fields(self, path: Path, instance: Any, schema: dict[str, Any]) -> None:
        if not isinstance(instance, dict):
            return
        known = list(schema.get("properties", {}))
        for field in instance:
            if field in known:
                continue
            message = messages.UNKNOWN_FIELD.format(field=field)
            suggestion = _closest(field, known)
            if suggestion is not None:
                message += messages.UNKNOWN_FIELD_SUGGESTION.format(suggestion=suggestion)
                self.suggested.add((path, suggestion))
            elif self.document.kind == POLICY_KIND and field in rule_fields():
                points = ", ".join(rule_fields()[field])
                message += messages.UNKNOWN_FIELD_ELSEWHERE.format(field=field, points=points)
            self.add((*path, field), message, key=True, kind=DiagnosticKind.UNKNOWN_FIELD)

    def _dependent(self, path: Path, instance: Any, dependencies: Mapping[str, Any]) -> None:
        if not isinstance(instance, dict):
            return
        for given, needed in dependencies.items():
            if given not in instance:
                continue
            for field in needed:
                if field not in instance:
                    message = messages.DEPENDENT_FIELD.format(field=field, given=given)
                    self.add((*path, given), message, key=True)

    def _excluded(self, path: Path, error: ValidationError) -> None:
        """Fields that may not be set together with a field (``dependentSchemas``: the
        field → ``not`` any of them required)."""
        schema_path = list(error.absolute_schema_path)
        given = schema_path[schema_path.index("dependentSchemas") + 1]
        excluded: Any = error.validator_value
        branches = excluded.get("anyOf", [excluded])
        fields = [b["required"][0] for b in branches if _only_required(b)]
        for field in fields:
            if isinstance(error.instance, dict) and field in error.instance:
                self.add((*path, field), messages.EXCLUDED_FIELD.format(field=field, given=given),
                         key=True)

    def _alternatives(self, path: Path, error: ValidationError, keyword: str) -> None:
        branches: Any = error.validator_value
        fields = [b["required"][0] for b in branches if _only_required(b)]
        if len(fields) == len(branches) and isinstance(error.instance, dict):
            present = [f for f in fields if f in error.instance]
            names = ", ".join(f'"{f}"' for f in fields)
            if not present:
                d = self.document.diagnostic(path, DiagnosticKind.SCHEMA,
                                             messages.NEED_ONE_OF.format(fields=names))
                self.missing.append((path, tuple(fields), d))
            elif keyword == "oneOf" and len(present) > 1:
                self.add((*path, present[1]), messages.ONLY_ONE_OF.format(fields=names), key=True)
            return
        types = [t for t in map(self._branch_type, branches) if t is not None]
        if len(types) == len(branches):  # alternatives by type (a number or an expression)
            actual = json_type(error.instance)
            matching = [i for i, t in enumerate(types) if _type_accepts(t, actual)]
            if not matching:
                wanted = " or ".join(dict.fromkeys(messages.JSON_TYPES[t] for t in types))
                self.add(path, messages.WRONG_TYPE.format(
                    subject=_subject(path), expected=wanted, actual=messages.JSON_TYPES[actual]))
                return
            for sub in error.context or ():
                if sub.relative_schema_path and sub.relative_schema_path[0] == matching[0]:
                    self.translate(sub)
            return
        best = best_match(error.context) if error.context else None
        if best is None:
            self.add(path, messages.INVALID_VALUE.format(subject=_subject(path),
                                                         reason=error.message))
        else:
            self.translate(best)

    def _branch_type(self, branch: Any) -> str | None:
        """The one JSON type an alternative accepts (through ``$ref``s), or None."""
        while isinstance(branch, dict) and "$ref" in branch and "type" not in branch:
            branch = self.schema["$defs"].get(str(branch["$ref"]).rsplit("/", 1)[-1])
        kind = branch.get("type") if isinstance(branch, dict) else None
        return kind if isinstance(kind, str) else None

    def _value_message(self, path: Path, error: ValidationError, schema: dict[str, Any]) -> str:
        keyword, instance = error.validator, error.instance
        value: Any = error.validator_value
        subject = _subject(path)
        if keyword == "type":
            expected = [value] if isinstance(value, str) else list(value)
            actual = messages.JSON_TYPES[json_type(instance)]
            if schema is self.schema["$defs"].get("celExpression"):
                return messages.WRONG_TYPE_CEL.format(subject=subject, actual=actual)
            wanted = " or ".join(messages.JSON_TYPES[t] for t in expected)
            return messages.WRONG_TYPE.format(subject=subject, expected=wanted, actual=actual)
        if keyword == "enum":
            choices = ", ".join(str(c) for c in value)
            return messages.NOT_ONE_OF.format(subject=subject, choices=choices,
                                              value=_show(instance))
        if keyword == "const":
            return messages.NOT_CONST.format(subject=subject, expected=_show(value),
                                             value=_show(instance))
        if keyword in ("minimum", "exclusiveMinimum"):
            return messages.TOO_SMALL.format(subject=subject, limit=value, value=instance)
        if keyword in ("maximum", "exclusiveMaximum"):
            return messages.TOO_LARGE.format(subject=subject, limit=value, value=instance)
        if keyword in ("minLength", "minItems"):
            return messages.TOO_SHORT.format(subject=subject)
        if keyword == "maxLength":
            return messages.TOO_LONG.format(subject=subject, limit=value)
        if keyword == "pattern":
            rule = schema.get("errorMessage") or messages.BAD_PATTERN_GENERIC.format(pattern=value)
            return messages.BAD_PATTERN.format(subject=_field(path), value=_show(instance),
                                               rule=rule)
        if keyword == "uniqueItems":
            return messages.NOT_UNIQUE.format(subject=subject)
        return messages.INVALID_VALUE.format(subject=subject, reason=error.message)


def _only_required(branch: Any) -> bool:
    return isinstance(branch, dict) and set(branch) == {"required"} and len(branch["required"]) == 1


def _type_accepts(expected: str, actual: str) -> bool:
    """Whether a value of JSON type ``actual`` has JSON-Schema type ``expected``."""
    return actual == expected or (expected == "number" and actual == "integer")


def _closest(field: str, known: list[str]) -> str | None:
    for candidate in known:
        if candidate.lower() == field.lower():
            return candidate
    matches = difflib.get_close_matches(field, known, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _field(path: Path) -> str:
    """The name of the field at ``path``: ``weight``, ``keys[0]``, ``document``."""
    if not path:
        return "document"
    last = path[-1]
    if isinstance(last, int):
        parent = _field(path[:-1])
        return f"{parent}[{last}]"
    return last


def _subject(path: Path) -> str:
    return messages.FIELD_SUBJECT.format(field=_field(path)) if path else "the document"


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."

