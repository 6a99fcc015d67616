"""Where things are in source text: ``file:line:column`` from character indices.

Every piece of text a policy comes from is a ``TextOrigin``: a file read from disk
(``FileText``), or the value of a ConfigMap key (``EmbeddedText``), whose indices map back
through the YAML scalar that held it to the file it was written in. ``ScalarMap`` maps a
character of a YAML scalar's *value* (a CEL expression, an embedded document) to the index
of that character in the text the scalar was written in.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Protocol

import yaml

# Line breaks as PyYAML counts them (YAML 1.1), so that our lines agree with its marks.
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_BREAK_CHARS = "\r\n\x85\u2028\u2029"


@dataclass(frozen=True, slots=True)
class Position:
    """A place in a source: ``path`` as shown to the user, 1-based ``line`` and ``column``."""

    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


class TextOrigin(Protocol):
    """Text whose character indices can be shown as positions in a source file."""

    @property
    def label(self) -> str: ...

    def position(self, index: int) -> Position: ...

    def line_text(self, line: int) -> str | None: ...


@dataclass(frozen=True)
class FileText:
    """A whole text (a file, or a ConfigMap value fetched from the API) shown as ``label``."""

    label: str
    text: str
    _line_starts: list[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0] + [m.end() for m in _LINE_BREAK.finditer(self.text)]
        object.__setattr__(self, "_line_starts", starts)

    def position(self, index: int) -> Position:
        index = max(0, min(index, len(self.text)))
        line = bisect.bisect_right(self._line_starts, index) - 1
        return Position(self.label, line + 1, index - self._line_starts[line] + 1)

    def line_text(self, line: int) -> str | None:
        if not 1 <= line <= len(self._line_starts):
            return None
        start = self._line_starts[line - 1]
        end = self._line_starts[line] if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip(_BREAK_CHARS)


@dataclass(frozen=True)
class EmbeddedText:
    """Text that is the value of a YAML scalar in ``outer`` (a ConfigMap key): positions are
    those of the outer file, so an error inside a ``|`` block is reported on its real line."""

    outer: TextOrigin
    scalar: ScalarMap

    @property
    def label(self) -> str:
        return self.outer.label

    def position(self, index: int) -> Position:
        return self.outer.position(self.scalar.source_index(index))

    def line_text(self, line: int) -> str | None:
        return self.outer.line_text(line)


@dataclass(frozen=True, slots=True)
class _Decoded:
    char: str
    index: int


class ScalarMap:
    """Maps character offsets in a scalar's value to indices in the text it was written in.

    The source slice of the scalar is decoded into the characters it contributes (quotes and
    block headers dropped, ``''`` and backslash escapes decoded, each character remembering
    where it was written); the value is then aligned to that sequence. Every non-blank
    character of the value lands exactly on the character that produced it, for every
    scalar style: folding and indentation only ever add or remove blanks. A blank produced by
    folding maps to just after the preceding character. If the alignment fails (it should
    not), every offset maps to the start of the scalar: a coarser position, never a wrong line.
    """

    def __init__(self, node: yaml.ScalarNode, text: str) -> None:
        self.start = node.start_mark.index
        self.value: str = node.value
        decoded = _decode(text, node.start_mark.index, node.end_mark.index, node.style)
        self._indices = _align(self.value, decoded, self.start)

    def source_index(self, offset: int) -> int:
        if self._indices is None:
            return self.start
        return self._indices[max(0, min(offset, len(self._indices) - 1))]


def _decode(text: str, start: int, end: int, style: str | None) -> list[_Decoded]:
    if style in ("|", ">"):
        newline = _LINE_BREAK.search(text, start, end)
        body = newline.end() if newline else end
        return [_Decoded(text[i], i) for i in range(body, end)]
    if style == "'":
        return _decode_single_quoted(text, start + 1, end - 1)
    if style == '"':
        return _decode_double_quoted(text, start + 1, end - 1)
    return [_Decoded(text[i], i) for i in range(start, end)]


def _decode_single_quoted(text: str, start: int, end: int) -> list[_Decoded]:
    out: list[_Decoded] = []
    i = start
    while i < end:
        out.append(_Decoded(text[i], i))
        i += 2 if text[i] == "'" and i + 1 < end and text[i + 1] == "'" else 1
    return out


_SIMPLE_ESCAPES = {
    "0": "\0", "a": "\x07", "b": "\x08", "t": "\t", "\t": "\t", "n": "\n", "v": "\x0b",
    "f": "\x0c", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
    "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _decode_double_quoted(text: str, start: int, end: int) -> list[_Decoded]:
    out: list[_Decoded] = []
    i = start
    while i < end:
        ch = text[i]
        if ch != "\\" or i + 1 >= end:
            out.append(_Decoded(ch, i))
            i += 1
            continue
        esc = text[i + 1]
        if esc in _SIMPLE_ESCAPES:
            out.append(_Decoded(_SIMPLE_ESCAPES[esc], i))
            i += 2
        elif esc in _HEX_ESCAPES:
            width = _HEX_ESCAPES[esc]
            digits = text[i + 2 : i + 2 + width]
            try:
                out.append(_Decoded(chr(int(digits, 16)), i))
            except ValueError:
                out.append(_Decoded(esc, i))
            i += 2 + width
        elif esc in _BREAK_CHARS:
            # An escaped line break joins the lines: nothing is contributed.
            i += 3 if text.startswith("\r\n", i + 1) else 2
        else:
            out.append(_Decoded(esc, i))
            i += 2
    return out


def _align(value: str, decoded: list[_Decoded], start: int) -> list[int] | None:
    indices: list[int] = []
    j = 0
    after = decoded[0].index if decoded else start
    for ch in value:
        if ch.isspace():
            if j < len(decoded) and decoded[j].char == ch:
                after = decoded[j].index + 1
                indices.append(decoded[j].index)
                j += 1
            else:
                indices.append(after)
            continue
        while j < len(decoded) and decoded[j].char != ch:
            if not decoded[j].char.isspace():
                return None
            j += 1
        if j == len(decoded):
            return None
        indices.append(decoded[j].index)
        after = decoded[j].index + 1
        j += 1
    indices.append(after)
    return indices
