"""Go's forms of text, for the Kubernetes libraries that print what Go prints: a CEL string
as Go's UTF-8 bytes (``go_bytes``), and Go's ``strconv.Quote`` (``go_quote``, ``%q``)."""

from __future__ import annotations

import unicodedata

_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_bytes(s: str) -> bytes:
    """The Go string (UTF-8 bytes) of a CEL string. A lone surrogate (which JSON can carry
    into a Python string) is U+FFFD, as Go's JSON decoding makes it."""
    try:
        return s.encode()
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s).encode()


def go_quote(s: str | bytes) -> str:
    """Go's ``strconv.Quote``: double-quoted, printable characters as they are (Go's
    ``unicode.IsPrint``: L, M, N, P, S and the ASCII space), the others escaped (``\\n``,
    ``\\x01``, ``\\u00a0``, ``\\U0001f600``); a byte that is not UTF-8 as ``\\xff``."""
    data = go_bytes(s) if isinstance(s, str) else s
    out = ['"']
    for ch in data.decode("utf-8", errors="surrogateescape"):
        r = ord(ch)
        if 0xDC80 <= r <= 0xDCFF:  # a byte that is not UTF-8
            out.append(f"\\x{r - 0xDC00:02x}")
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch == " " or (r >= 0x20 and r != 0x7F
                           and unicodedata.category(ch)[0] in "LMNPS"):
            out.append(ch)
        elif r < 0x20 or r == 0x7F:
            out.append(f"\\x{r:02x}")
        elif r < 0x10000:
            out.append(f"\\u{r:04x}")
        else:
            out.append(f"\\U{r:08x}")
    out.append('"')
    return "".join(out)
