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
from array import array
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


class ScalarMap:
    """Maps character offsets in a scalar's value to indices in the text it was written in.

    The source slice of the scalar is decoded into pieces of text it contributes verbatim
    (quotes and block headers dropped; ``''`` and each backslash escape a one-character piece
    at the character that wrote it); the value is then aligned to those pieces. Every
    non-blank character of the value lands exactly on the character that produced it, for
    every scalar style and through any folding: folding and indentation only ever add or
    remove blanks. A blank maps to just after the non-blank character before it (the end of
    the value to just after its last one), so that an error there stays on the line it
    belongs to. If the alignment fails (it should not), every offset maps to the start of the
    scalar: a coarser position, never a wrong line.

    The mapping is kept as runs of consecutive characters (about one per line of the
    scalar, three integers each), built in time linear in its length: a ConfigMap value of a
    megabyte maps in about 0.1 s and keeps about 1.5 MB.
    """

    __slots__ = ("_after", "_lengths", "_sources", "_values", "start", "value")

    def __init__(self, node: yaml.ScalarNode, text: str) -> None:
        self.start: int = node.start_mark.index
        self.value: str = node.value
        self._values = array("q")   # value offset where each run starts
        self._sources = array("q")  # source index where each run starts
        self._lengths = array("q")  # characters in each run
        self._after = self.start    # where blanks before the first non-blank character map
        pieces = _pieces(text, node.start_mark.index, node.end_mark.index, node.style)
        if pieces:
            self._after = pieces[0][0]
        if not self._align(pieces):
            self._values, self._sources, self._lengths = array("q"), array("q"), array("q")
            self._after = self.start

    def source_index(self, offset: int) -> int:
        run = bisect.bisect_right(self._values, offset) - 1
        if run < 0:
            return self._after
        inside = offset - self._values[run]
        if inside < self._lengths[run]:
            return self._sources[run] + inside
        return self._sources[run] + self._lengths[run]

    def _align(self, pieces: list[tuple[int, str]]) -> bool:
        """Runs pairing the value's words with the pieces' words, character for character
        (a word may be split differently on each side: an escaped line break joins two)."""
        words = [(m.start(), m.group()) for m in _WORD.finditer(self.value)]
        sources = [(at + m.start(), m.group()) for at, piece in pieces
                   for m in _WORD.finditer(piece)]
        j = 0
        j_used = 0  # characters of sources[j] already paired
        for at, word in words:
            used = 0
            while used < len(word):
                if j == len(sources):
                    return False
                source_at, source_word = sources[j]
                n = min(len(word) - used, len(source_word) - j_used)
                if word[used : used + n] != source_word[j_used : j_used + n]:
                    return False
                self._add(at + used, source_at + j_used, n)
                used += n
                j_used += n
                if j_used == len(source_word):
                    j, j_used = j + 1, 0
        return True

    def _add(self, value_at: int, source_at: int, n: int) -> None:
        last = len(self._values) - 1
        if (last >= 0 and self._values[last] + self._lengths[last] == value_at
                and self._sources[last] + self._lengths[last] == source_at):
            self._lengths[last] += n  # continues the previous run
            return
        self._values.append(value_at)
        self._sources.append(source_at)
        self._lengths.append(n)


_WORD = re.compile(r"\S+")


def _pieces(text: str, start: int, end: int, style: str | None) -> list[tuple[int, str]]:
    """The source slice of a scalar as (index, text) pieces of the characters it
    contributes, blanks included (the aligner skips them)."""
    if style in ("|", ">"):
        newline = _LINE_BREAK.search(text, start, end)
        body = newline.end() if newline else end
        return [(body, text[body:end])]
    if style == "'":
        return _single_quoted_pieces(text, start + 1, end - 1)
    if style == '"':
        return _double_quoted_pieces(text, start + 1, end - 1)
    return [(start, text[start:end])]


def _single_quoted_pieces(text: str, start: int, end: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    i = start
    while i < end:
        quote = text.find("''", i, end)
        if quote < 0:
            out.append((i, text[i:end]))
            break
        out.append((i, text[i : quote + 1]))  # the first quote of '' writes the quote
        i = quote + 2
    return out


_SIMPLE_ESCAPES = {
    "0": "\0", "a": "\x07", "b": "\x08", "t": "\t", "\t": "\t", "n": "\n", "v": "\x0b",
    "f": "\x0c", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
    "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _double_quoted_pieces(text: str, start: int, end: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    i = start
    while i < end:
        backslash = text.find("\\", i, end)
        if backslash < 0 or backslash + 1 >= end:
            out.append((i, text[i:end]))
            break
        if backslash > i:
            out.append((i, text[i:backslash]))
        esc = text[backslash + 1]
        if esc in _SIMPLE_ESCAPES:
            out.append((backslash, _SIMPLE_ESCAPES[esc]))
            i = backslash + 2
        elif esc in _HEX_ESCAPES:
            width = _HEX_ESCAPES[esc]
            digits = text[backslash + 2 : backslash + 2 + width]
            try:
                out.append((backslash, chr(int(digits, 16))))
            except ValueError:
                out.append((backslash, esc))
            i = backslash + 2 + width
        elif esc in _BREAK_CHARS:
            # An escaped line break joins the lines: nothing is contributed.
            i = backslash + (3 if text.startswith("\r\n", backslash + 1) else 2)
        else:
            out.append((backslash, esc))
            i = backslash + 2
    return out
