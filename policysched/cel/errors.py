"""Errors raised while turning CEL text into a program (evaluation errors are ``CelError``)."""

from __future__ import annotations

from enum import StrEnum


class CompileErrorKind(StrEnum):
    SYNTAX = "syntax"          # the text is not CEL
    REFERENCE = "reference"    # undeclared identifier or function, wrong extension point
    TYPE = "type"              # no matching overload, wrong result type
    COST = "cost"              # estimated worst-case cost over the limit
    ARGUMENT = "argument"      # a literal argument the function refuses (bad regex, timestamp)


class CelCompileError(Exception):
    """A problem found before evaluation, at ``offset`` (characters into the expression)."""

    def __init__(self, kind: CompileErrorKind, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        return f"{self.kind.value} error at offset {self.offset}: {self.message}"


SHOWN_NAME_LENGTH = 80


def shown(text: str, limit: int = SHOWN_NAME_LENGTH) -> str:
    """``text`` (a name, a literal, a list of argument types) for an error message, cut to
    ``limit`` characters: the position already says where it is."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
