"""Errors raised while turning CEL text into a program (evaluation errors are ``CelError``)."""

from __future__ import annotations

from enum import StrEnum


class CompileErrorKind(StrEnum):
    SYNTAX = "syntax"          # the text is not CEL
    REFERENCE = "reference"    # undeclared identifier or function, wrong extension point
    TYPE = "type"              # no matching overload, wrong result type
    COST = "cost"              # estimated worst-case cost over the limit


class CelCompileError(Exception):
    """A problem found before evaluation, at ``offset`` (characters into the expression)."""

    def __init__(self, kind: CompileErrorKind, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        return f"{self.kind.value} error at offset {self.offset}: {self.message}"
