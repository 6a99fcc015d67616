"""Positioned errors found in policy sources, and their text and JSON renderings."""

from __future__ import annotations

import dataclasses
import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

import click

from .positions import Position, TextOrigin


class DiagnosticKind(StrEnum):
    IO = "io"                          # unreadable file, not UTF-8
    YAML = "yaml"                      # not YAML, duplicate key, unsupported tag
    DOCUMENT = "document"              # a document that is not a policy (or a ConfigMap of them)
    LIMIT = "limit"                    # input beyond a limit of policyLimits (size, depth, ...)
    UNKNOWN_FIELD = "unknown-field"
    SCHEMA = "schema"                  # wrong type, missing required field, value out of range
    DUPLICATE_NAME = "duplicate-name"  # rule, variable or policy name used twice
    CEL_SYNTAX = "cel-syntax"
    CEL_REFERENCE = "cel-reference"    # undeclared name, or not available at this point
    CEL_TYPE = "cel-type"
    CEL_COST = "cel-cost"
    CEL_ARGUMENT = "cel-argument"      # a literal the function refuses (invalid regex ...)
    ABSENT_KEY = "absent-key"          # warning: a map key read that fails on objects without it
    NOT_ENABLED = "not-enabled"        # warning: a policy loaded but enabled by no profile
    SOURCE = "source"                  # warning: a policy source this command cannot read


Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Diagnostic:
    """One error or warning (``severity``): what (``kind``, ``message``), where
    (``path``/``line``/``column``, the source line for the caret) and in which
    ``policy``/``rule`` when known. ``origin`` names the ConfigMap key a policy was
    embedded in. Only errors make a policy unusable."""

    kind: DiagnosticKind
    message: str
    path: str
    line: int | None = None
    column: int | None = None
    policy: str | None = None
    rule: str | None = None
    line_text: str | None = None
    origin: str | None = None
    severity: Severity = "error"

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    @classmethod
    def at(
        cls, origin: TextOrigin, index: int, kind: DiagnosticKind, message: str
    ) -> Diagnostic:
        """A diagnostic at character ``index`` of ``origin``'s text."""
        return cls.at_position(origin, origin.position(index), kind, message)

    @classmethod
    def at_position(
        cls, origin: TextOrigin, position: Position, kind: DiagnosticKind, message: str
    ) -> Diagnostic:
        return cls(
            kind,
            message,
            position.path,
            position.line,
            position.column,
            line_text=origin.line_text(position.line),
        )

    def within(
        self, policy: str | None = None, rule: str | None = None, origin: str | None = None
    ) -> Diagnostic:
        """This diagnostic attributed to a policy / rule / ConfigMap key (when not yet)."""
        return dataclasses.replace(
            self,
            policy=self.policy or policy,
            rule=self.rule or rule,
            origin=self.origin or origin,
        )

    @property
    def location(self) -> str:
        if self.line is None:
            return self.path
        return f"{self.path}:{self.line}:{self.column}"

    @property
    def subject(self) -> str | None:
        """``policy/rule``, ``policy`` or None."""
        if self.policy and self.rule:
            return f"{self.policy}/{self.rule}"
        return self.policy or None

    def headline(self) -> str:
        subject = self.subject
        middle = f" {subject}:" if subject else ""
        return f"{self.location}:{middle} {self.label}{self.message}"

    @property
    def label(self) -> str:
        """``"warning: "`` for a warning; errors are not labelled."""
        return "" if self.is_error else f"{self.severity}: "

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "policy": self.policy,
            "rule": self.rule,
            "message": self.message,
            "kind": self.kind.value,
            "severity": self.severity,
            "origin": self.origin,
        }


def sort_key(d: Diagnostic) -> tuple[str, int, int]:
    return (d.path, d.line or 0, d.column or 0)


def render_text(diagnostics: Iterable[Diagnostic], *, color: bool = False) -> str:
    """One headline per diagnostic, then its source line and a caret under the column."""
    out: list[str] = []
    for d in diagnostics:
        headline = d.headline()
        if color:
            subject = f" {d.subject}:" if d.subject else ""
            headline = (
                click.style(f"{d.location}:", bold=True)
                + click.style(subject, fg="cyan")
                + " "
                + click.style(d.label, fg="yellow", bold=True)
                + click.style(d.message, fg="red" if d.is_error else "yellow")
            )
        out.append(headline)
        if d.line_text is not None and d.column is not None:
            out.append(f"  {_printable(d.line_text)}")
            caret = "^" if not color else click.style("^", fg="green", bold=True)
            out.append("  " + _indent_like(d.line_text, d.column - 1) + caret)
    return "\n".join(out)


def _printable(line: str) -> str:
    """``line`` with control characters (but tabs) shown as U+FFFD, one for one."""
    return "".join("\ufffd" if unicodedata.category(c) == "Cc" and c != "\t" else c
                   for c in line)


def _indent_like(line: str, width: int) -> str:
    """Blanks as wide as the first ``width`` characters of ``line`` (tabs kept as tabs)."""
    return "".join("\t" if c == "\t" else " " for c in line[:width]).ljust(width)


def render_json(diagnostics: Sequence[Diagnostic], **extra: Any) -> str:
    document: dict[str, Any] = {
        "valid": not any(d.is_error for d in diagnostics),
        "errors": [d.to_json() for d in diagnostics],
    }
    document.update(extra)
    return json.dumps(document, indent=2)
