"""CEL text → ``ast`` tree: a hand-written tokenizer and recursive-descent parser.

The grammar is cel-spec's language definition (as implemented by cel-go's ``CEL.g4``) plus
the syntax extensions cel-go enables: optional field selection / indexing / entries
(``a.?b``, ``a[?b]``, ``[?x]``, ``{?k: v}``, ``Msg{?f: v}``) and backtick-quoted field names
(``a.`b-c```). Macros are expanded into ``ast.Macro`` nodes here.

Node offsets are character offsets into the text, placed where cel-go places them (its
checker reports an error at the offset of the offending node): identifiers, literals, lists,
maps and messages start where they are written; operators (``a + b``, ``!a``, ``a ? b : c``,
``a[b]``, ``a.b``) sit on their operator token; calls, macros and ``has()`` sit on the ``(``
that opens their arguments (``size(x)`` on column 5, ``s.startsWith(1)`` on the ``(`` after
``startsWith``).

Shape decisions worth knowing:

* chains of ``&&`` / ``||`` become balanced binary trees (as cel-go does), so that
  ``a || b || ... || z`` nests logarithmically; the operators are associative in CEL;
* a ``-`` written directly before a number literal is part of the literal (``-5`` is
  ``Literal(-5)``, which is how ``-9223372036854775808`` is representable); ``!`` and the
  other ``-`` stay operators, one ``Call`` each (``!!x`` is not simplified to ``x``);
* a triple-quoted literal ends at the first closing delimiter, as in cel-go (ANTLR's
  non-greedy rule): a fourth closing quote starts a new, unterminated string;
* a leading-dot name keeps its dot: ``.x`` → ``Ident(".x")``, ``.f(x)`` → ``Call(".f")``;
* ``cel.index(N)`` → ``Ident("@index" + N)``; ``cel.iterVar(N, M)`` → ``Ident("@it:N:M")``;
  ``cel.accuVar(N, M)`` → ``Ident("@ac:N:M")`` (the names of cel-go's conformance runner;
  none of them can be written as an identifier by hand).

Policies are untrusted: the text length, the nesting of the parser and the height of the
resulting tree are bounded, and every failure is a ``CelCompileError`` of kind ``SYNTAX``
positioned at the offending token.
"""

from __future__ import annotations

import math
import re
from typing import NoReturn

from . import ast
from .errors import CelCompileError, CompileErrorKind, shown
from .values import INT64_MAX, UINT64_MAX, UInt

__all__ = ["MAX_EXPRESSION_LENGTH", "MAX_HEIGHT", "MAX_NESTING", "RESERVED", "parse"]

MAX_EXPRESSION_LENGTH = 100_000
"""Characters (code points) of one expression; cel-go's default size limit."""

MAX_NESTING = 100
"""Levels of nested sub-expressions: parentheses, list/map/message literals, call arguments,
index expressions. CEL requires 32; each level costs the parser a few Python frames."""

MAX_HEIGHT = 200
"""Height of the produced tree (the root counts 1). Bounds the recursion of every later
stage (checker, cost estimator, compiler, the compiled closures) whatever the input."""

RESERVED = frozenset({
    "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let",
    "loop", "package", "namespace", "return", "var", "void", "while",
})
"""Words that cannot be identifiers (they may still be field and member-function names)."""

# ---------------------------------------------------------------------------------------
# Tokens

# Token kinds. Punctuation and the keywords ``true false null in`` use their own text.
_EOF = "<end>"
_IDENT = "<ident>"
_QIDENT = "<quoted>"
_INT = "<int>"
_UINT = "<uint>"
_DOUBLE = "<double>"
_STRING = "<string>"
_BYTES = "<bytes>"

_KEYWORDS = {"true": "true", "false": "false", "null": "null", "in": "in"}

# One match per token: skip whitespace and comments, then exactly one named group matches.
_TOKEN_RE = re.compile(
    r"""
    (?:[ \t\n\r\f]+|//[^\n]*)*
    (?:
      (?P<double>\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?)
    | (?P<hex>0x[0-9a-fA-F]+[uU]?)
    | (?P<int>\d+[uU]?)
    | (?P<str>[bB]?[rR]?(?:'''|\"\"\"|'|\"))
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}])
    | (?P<quoted>`)
    | (?P<end>\Z)
    | (?P<bad>[\s\S])
    )
    """,
    re.VERBOSE | re.ASCII,  # \d is 0-9 only
)

# String bodies, after the opening quote, up to and including the closing quote.
# Escapes are only delimited here (backslash + one character); they are decoded and
# validated afterwards so that a bad escape gets its own message and position.
_BODY_RE = {
    ("'", False): re.compile(r"[^'\\\n\r]*(?:\\[^\n\r][^'\\\n\r]*)*'"),
    ('"', False): re.compile(r'[^"\\\n\r]*(?:\\[^\n\r][^"\\\n\r]*)*"'),
    ("'''", False): re.compile(r"[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"),
    ('"""', False): re.compile(r'[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'),
    ("'", True): re.compile(r"[^'\n\r]*'"),
    ('"', True): re.compile(r'[^"\n\r]*"'),
    ("'''", True): re.compile(r"[\s\S]*?'''"),
    ('"""', True): re.compile(r'[\s\S]*?"""'),
}

_ESCAPE_RE = re.compile(
    r"\\(?:(?P<c>[abfnrtv\\'\"`?])|[xX](?P<x>[0-9a-fA-F]{2})|u(?P<u>[0-9a-fA-F]{4})"
    r"|U(?P<U>[0-9a-fA-F]{8})|(?P<o>[0-3][0-7]{2}))"
)
_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?",
}
_QUOTED_IDENT_RE = re.compile(r"[A-Za-z0-9_./ -]+`")


def _error(message: str, offset: int) -> CelCompileError:
    return CelCompileError(CompileErrorKind.SYNTAX, message, offset)


class _Tokens:
    """Parallel lists: kind, value, start and end offset of each token; ends with EOF."""

    __slots__ = ("ends", "kinds", "starts", "vals")

    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.vals: list[object] = []
        self.starts: list[int] = []
        self.ends: list[int] = []


def _tokenize(text: str) -> _Tokens:
    toks = _Tokens()
    kinds, vals, starts, ends = toks.kinds, toks.vals, toks.starts, toks.ends
    match = _TOKEN_RE.match
    pos = 0
    while True:
        m = match(text, pos)
        assert m is not None  # the 'end' and 'bad' alternatives always match
        group = m.lastgroup
        assert group is not None
        start = m.start(group)
        pos = m.end()
        kind: str
        value: object = None
        if group == "op":
            kind = m.group(group)
        elif group == "ident":
            word = m.group(group)
            kind = _KEYWORDS.get(word, _IDENT)
            value = word
        elif group == "int":
            digits = m.group(group)
            if digits[-1] in "uU":
                kind, value = _UINT, _uint_value(int(digits[:-1]), start)
            else:
                kind, value = _INT, int(digits)
        elif group == "hex":
            digits = m.group(group)
            if digits[-1] in "uU":
                kind, value = _UINT, _uint_value(int(digits[2:-1], 16), start)
            else:
                kind, value = _INT, int(digits[2:], 16)
        elif group == "double":
            number = float(m.group(group))
            if math.isinf(number):
                raise _error("double literal out of range", start)
            kind, value = _DOUBLE, number
        elif group == "str":
            kind, value, pos = _string(text, start, m.group(group), pos)
        elif group == "quoted":
            kind = _QIDENT
            value, pos = _quoted_ident(text, start)
        elif group == "end":
            kinds.append(_EOF)
            vals.append(None)
            starts.append(start)
            ends.append(start)
            return toks
        else:
            raise _error(_bad_character(m.group(group)), start)
        kinds.append(kind)
        vals.append(value)
        starts.append(start)
        ends.append(pos)


def _uint_value(value: int, offset: int) -> UInt:
    if value > UINT64_MAX:
        raise _error("unsigned integer literal out of range", offset)
    return UInt(value)


def _bad_character(ch: str) -> str:
    if ch == "=":
        return "unexpected '=', did you mean '=='?"
    if ch == "&":
        return "unexpected '&', did you mean '&&'?"
    if ch == "|":
        return "unexpected '|', did you mean '||'?"
    if ch.isprintable() and not ch.isspace():
        hint = " (identifiers are ASCII letters, digits and '_')" if ch.isalpha() else ""
        return f"unexpected character '{ch}'{hint}"
    return f"unexpected character {ch!r} (U+{ord(ch):04X})"


def _quoted_ident(text: str, start: int) -> tuple[str, int]:
    """A backtick-quoted field name starting at ``start``; returns (name, end)."""
    m = _QUOTED_IDENT_RE.match(text, start + 1)
    if m is not None:
        return text[start + 1 : m.end() - 1], m.end()
    i = start + 1
    while i < len(text) and text[i] not in "`\n\r":
        if not (text[i].isascii() and (text[i].isalnum() or text[i] in "_./ -")):
            raise _error(
                f"invalid character {text[i]!r} in quoted identifier (allowed: ASCII letters, "
                "digits, '_', '.', '-', '/' and space)",
                i,
            )
        i += 1
    if i < len(text) and text[i] == "`":
        raise _error("empty quoted identifier", start)
    raise _error("unterminated quoted identifier", start)


def _string(text: str, start: int, opening: str, pos: int) -> tuple[str, object, int]:
    """Scan and decode a string or bytes literal whose opening (prefix + quote) ends at
    ``pos``; returns (kind, value, end)."""
    is_bytes = opening[0] in "bB"
    prefix = opening.rstrip("'\"")
    raw = "r" in prefix or "R" in prefix
    quote = opening[len(prefix) :]
    m = _BODY_RE[quote, raw].match(text, pos)
    if m is None:
        if len(quote) == 1:
            nl = min((i for i in (text.find("\n", pos), text.find("\r", pos)) if i >= 0),
                     default=-1)
            if nl >= 0 and text.find(quote, pos, nl) < 0 and text.find(quote, nl) >= 0:
                raise _error("unterminated string literal (use ''' or \"\"\" quotes for a "
                             "string spanning lines)", start)
        raise _error("unterminated string literal", start)
    end = m.end()
    body_start, body_end = pos, end - len(quote)
    triple = len(quote) == 3
    if raw:
        body = text[body_start:body_end]
        if triple:
            body = _normalize_newlines(body)
        return (_BYTES, body.encode("utf-8"), end) if is_bytes else (_STRING, body, end)
    return (*_decode(text, body_start, body_end, is_bytes, triple), end)


def _normalize_newlines(s: str) -> str:
    # As cel-go: line ends written in a multi-line literal are read as "\n".
    return s.replace("\r\n", "\n").replace("\r", "\n") if "\r" in s else s


def _decode(
    text: str, start: int, end: int, is_bytes: bool, triple: bool
) -> tuple[str, object]:
    """Decode the escapes of a non-raw literal body ``text[start:end]``."""
    i = text.find("\\", start, end)
    if i < 0:
        body = text[start:end]
        if triple:
            body = _normalize_newlines(body)
        return (_BYTES, body.encode("utf-8")) if is_bytes else (_STRING, body)
    str_parts: list[str] = []
    byte_parts: list[bytes] = []
    pos = start
    while i >= 0:
        chunk = text[pos:i]
        if triple:
            chunk = _normalize_newlines(chunk)
        if is_bytes:
            byte_parts.append(chunk.encode("utf-8"))
        else:
            str_parts.append(chunk)
        m = _ESCAPE_RE.match(text, i, end)
        if m is None:
            raise _error(_bad_escape(text, i, end), i)
        group = m.lastgroup
        digits = m.group(group) if group else ""
        if group == "c":
            ch = _SIMPLE_ESCAPES[digits]
            if is_bytes:
                byte_parts.append(ch.encode("ascii"))
            else:
                str_parts.append(ch)
        elif group in ("x", "o"):
            code = int(digits, 16 if group == "x" else 8)
            if is_bytes:
                byte_parts.append(bytes((code,)))
            else:
                str_parts.append(chr(code))
        else:  # \u or \U
            if is_bytes:
                raise _error(
                    "unicode escape sequences (\\u, \\U) are not allowed in bytes literals; "
                    "use \\x or octal escapes for byte values",
                    i,
                )
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise _error(f"invalid unicode code point U+{code:04X} in escape sequence", i)
            str_parts.append(chr(code))
        pos = m.end()
        i = text.find("\\", pos, end)
    chunk = text[pos:end]
    if triple:
        chunk = _normalize_newlines(chunk)
    if is_bytes:
        byte_parts.append(chunk.encode("utf-8"))
        return _BYTES, b"".join(byte_parts)
    str_parts.append(chunk)
    return _STRING, "".join(str_parts)


def _bad_escape(text: str, i: int, end: int) -> str:
    nxt = text[i + 1] if i + 1 < end else ""
    if nxt and nxt in "xXuU":
        need = {"x": 2, "X": 2, "u": 4, "U": 8}[nxt]
        return f"invalid escape sequence: \\{nxt} must be followed by {need} hexadecimal digits"
    if nxt and nxt in "0123456789":
        return "invalid escape sequence: octal escapes are three digits from \\000 to \\377"
    if nxt in ("\n", "\r"):
        return "invalid escape sequence: a backslash cannot end a line"
    shown = repr(nxt)[1:-1] if nxt else ""
    return f"invalid escape sequence '\\{shown}'"


# ---------------------------------------------------------------------------------------
# Parser

# Binary operator token → (precedence, function). Higher binds tighter.
_OR, _AND, _REL, _ADD, _MUL = 1, 2, 3, 4, 5
_BINARY: dict[str, tuple[int, str]] = {
    "||": (_OR, ast.OR),
    "&&": (_AND, ast.AND),
    "==": (_REL, ast.EQ),
    "!=": (_REL, ast.NE),
    "<": (_REL, ast.LT),
    "<=": (_REL, ast.LE),
    ">": (_REL, ast.GT),
    ">=": (_REL, ast.GE),
    "in": (_REL, ast.IN),
    "+": (_ADD, ast.ADD),
    "-": (_ADD, ast.SUB),
    "*": (_MUL, ast.MUL),
    "/": (_MUL, ast.DIV),
    "%": (_MUL, ast.MOD),
}

_QUANTIFIERS = {
    "all": ast.ALL,
    "exists": ast.EXISTS,
    "exists_one": ast.EXISTS_ONE,
    "existsOne": ast.EXISTS_ONE,
}
_TRANSFORMS = {
    "transformList": ast.TRANSFORM_LIST,
    "transformMap": ast.TRANSFORM_MAP,
    "transformMapEntry": ast.TRANSFORM_MAP_ENTRY,
}
_BLOCK = "cel.block"


def parse(text: str) -> ast.Node:
    """Parse one CEL expression; raises ``CelCompileError`` (kind ``SYNTAX``)."""
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise _error(
            f"expression is too long: {len(text)} characters, the limit is "
            f"{MAX_EXPRESSION_LENGTH}",
            MAX_EXPRESSION_LENGTH,
        )
    toks = _tokenize(text)
    parser = _Parser(text, toks)
    try:
        node = parser.expr()
        if toks.kinds[parser.pos] != _EOF:
            parser.unexpected("an operator or the end of the expression")
    except RecursionError:
        # Only reachable when the caller itself runs close to Python's recursion limit.
        raise _error("expression nests too deeply", toks.starts[parser.pos]) from None
    if len(toks.kinds) > MAX_HEIGHT:  # the tree has fewer nodes than tokens
        _check_height(node)
    return node


def _too_high(offset: int) -> CelCompileError:
    return _error(
        f"expression nests too deeply: more than {MAX_HEIGHT} levels of operators, calls "
        "and selections",
        offset,
    )


def _check_height(root: ast.Node) -> None:
    """The exact check; chains that are obviously too long fail earlier, while parsing."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_HEIGHT:
            raise _too_high(node.offset)
        for child in ast.children(node):
            stack.append((child, depth + 1))


class _Parser:
    __slots__ = ("depth", "ends", "kinds", "pos", "starts", "text", "vals")

    def __init__(self, text: str, toks: _Tokens) -> None:
        self.text = text
        self.kinds = toks.kinds
        self.vals = toks.vals
        self.starts = toks.starts
        self.ends = toks.ends
        self.pos = 0
        self.depth = 0

    # -- errors --------------------------------------------------------------------------

    def describe(self, i: int) -> str:
        kind = self.kinds[i]
        if kind == _EOF:
            return "end of expression"
        if kind == _IDENT:
            return f"identifier '{shown(str(self.vals[i]))}'"
        if kind == _QIDENT:
            return f"quoted identifier `{shown(str(self.vals[i]))}`"
        if kind in (_INT, _UINT, _DOUBLE):
            return f"number '{shown(self.text[self.starts[i] : self.ends[i]])}'"
        if kind == _STRING:
            return "string literal"
        if kind == _BYTES:
            return "bytes literal"
        return f"'{kind}'"

    def unexpected(self, expected: str, i: int | None = None) -> NoReturn:
        i = self.pos if i is None else i
        raise _error(f"unexpected {self.describe(i)}, expected {expected}", self.starts[i])

    def expect(self, kind: str, expected: str | None = None) -> int:
        """Consume a token of ``kind``; returns its offset."""
        if self.kinds[self.pos] != kind:
            self.unexpected(expected or f"'{kind}'")
        self.pos += 1
        return self.starts[self.pos - 1]

    # -- expressions -----------------------------------------------------------------------

    def expr(self) -> ast.Node:
        """Expr = ConditionalOr ["?" ConditionalOr ":" Expr]."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _error(
                f"expression nests too deeply: more than {MAX_NESTING} levels of nested "
                "parentheses, brackets, braces or call arguments",
                self.starts[self.pos],
            )
        node = self.binary()
        if self.kinds[self.pos] == "?":
            # a ? b : c ? d : e — collected in a loop, folded to the right.
            arms: list[tuple[int, ast.Node, ast.Node]] = []
            while self.kinds[self.pos] == "?":
                question = self.starts[self.pos]
                self.pos += 1
                then = self.binary()
                self.expect(":")
                arms.append((question, node, then))
                if len(arms) >= MAX_HEIGHT:
                    raise _too_high(question)
                node = self.binary()
            for question, cond, then in reversed(arms):
                node = ast.Call(question, ast.COND, (cond, then, node))
        self.depth -= 1
        return node

    def binary(self) -> ast.Node:
        """All binary operators (||, &&, relations, + -, * / %) by precedence."""
        first = self.unary()
        kinds = self.kinds
        if kinds[self.pos] not in _BINARY:
            return first
        operands = [first]
        ops: list[tuple[int, str, int]] = []
        while (entry := _BINARY.get(kinds[self.pos])) is not None:
            ops.append((entry[0], entry[1], self.starts[self.pos]))
            self.pos += 1
            operands.append(self.unary())
        return _build(operands, ops, 0, len(operands) - 1, _OR)

    def unary(self) -> ast.Node:
        """Unary = Member | "!" {"!"} Member | "-" {"-"} Member."""
        kind = self.kinds[self.pos]
        if kind != "!" and (kind != "-" or self.kinds[self.pos + 1] in (_INT, _DOUBLE)):
            return self.member()
        offsets: list[int] = []
        # A '-' directly before a number is the literal's sign (see primary()).
        while self.kinds[self.pos] == kind and not (
            kind == "-" and self.kinds[self.pos + 1] in (_INT, _DOUBLE)
        ):
            offsets.append(self.starts[self.pos])
            self.pos += 1
        if len(offsets) >= MAX_HEIGHT:
            raise _too_high(offsets[MAX_HEIGHT - 1])
        other = self.kinds[self.pos]
        if other in ("!", "-") and other != kind and not (
            other == "-" and self.kinds[self.pos + 1] in (_INT, _DOUBLE)
        ):
            raise _error(
                f"unexpected '{other}' after '{kind}'; use parentheses to combine '!' and "
                "'-'",
                self.starts[self.pos],
            )
        node = self.member()
        fn = ast.NOT if kind == "!" else ast.NEG
        for offset in reversed(offsets):
            node = ast.Call(offset, fn, (node,))
        return node

    def member(self) -> ast.Node:
        """Member = Primary {"." ["?"] IDENT ["(" args ")"] | "[" ["?"] Expr "]"}."""
        node = self.primary()
        kinds = self.kinds
        chain = 0  # postfix operations so far: each adds a level to the tree
        while True:
            kind = kinds[self.pos]
            chain += 1
            if chain > MAX_HEIGHT and kind in (".", "["):
                raise _too_high(self.starts[self.pos])
            if kind == ".":
                dot = self.starts[self.pos]
                self.pos += 1
                optional = kinds[self.pos] == "?"
                if optional:
                    self.pos += 1
                name_kind = kinds[self.pos]
                if name_kind != _IDENT and name_kind != _QIDENT:
                    hint = (" (write `" + name_kind + "` to select a field with this name)"
                            if name_kind in _KEYWORDS else "")
                    self.unexpected("a field name" + hint)
                name = self.vals[self.pos]
                assert isinstance(name, str)
                self.pos += 1
                if kinds[self.pos] == "(":
                    if optional:
                        raise _error("a field selected with '.?' cannot be called",
                                     self.starts[self.pos])
                    if name_kind == _QIDENT:
                        raise _error("a quoted identifier cannot be called as a function",
                                     self.starts[self.pos])
                    paren = self.starts[self.pos]
                    args = self.arguments()
                    node = self.receiver_call(name, paren, node, args)
                else:
                    node = ast.Select(dot, node, name, optional=optional)
            elif kind == "[":
                bracket = self.starts[self.pos]
                self.pos += 1
                optional = kinds[self.pos] == "?"
                if optional:
                    self.pos += 1
                index = self.expr()
                self.expect("]", "']'")
                node = ast.Call(bracket, ast.OPT_INDEX if optional else ast.INDEX,
                                (node, index))
            else:
                return node

    def primary(self) -> ast.Node:
        kinds = self.kinds
        i = self.pos
        kind = kinds[i]
        start = self.starts[i]
        if kind == _IDENT or (kind == "." and kinds[i + 1] == _IDENT):
            return self.name()
        if kind == _INT:
            self.pos += 1
            value = self.vals[i]
            assert isinstance(value, int)
            if value > INT64_MAX:
                raise _error("integer literal out of range", start)
            return ast.Literal(start, value)
        if kind == "-":  # unary() only leaves a '-' here when a number follows
            self.pos += 2
            value = self.vals[i + 1]
            if kinds[i + 1] == _INT:
                assert isinstance(value, int)
                if value > INT64_MAX + 1:
                    raise _error("integer literal out of range", start)
                return ast.Literal(start, -value)
            assert isinstance(value, float)
            return ast.Literal(start, -value)
        if kind in (_UINT, _DOUBLE, _STRING, _BYTES):
            self.pos += 1
            return ast.Literal(start, self.vals[i])
        if kind == "true" or kind == "false" or kind == "null":
            self.pos += 1
            return ast.Literal(start, True if kind == "true" else False if kind == "false"
                               else None)
        if kind == "(":
            self.pos += 1
            node = self.expr()
            self.expect(")", "')'")
            return node
        if kind == "[":
            return self.list_literal()
        if kind == "{":
            return self.map_literal()
        if kind == _QIDENT:
            raise _error("a quoted identifier can only be used as a field name, after '.' "
                         "or in a message literal", start)
        if kind == ".":
            self.unexpected("a name after the leading '.'", i + 1)
        self.unexpected("an expression")

    def name(self) -> ast.Node:
        """[.]IDENT, [.]IDENT(args) or a message literal [.]IDENT{.IDENT}{fields}."""
        kinds = self.kinds
        start = self.starts[self.pos]
        leading_dot = kinds[self.pos] == "."
        if leading_dot:
            self.pos += 1
        word = self.vals[self.pos]
        assert isinstance(word, str)
        if word in RESERVED:
            raise _error(f"reserved identifier '{word}'", self.starts[self.pos])
        j = self.pos + 1
        while kinds[j] == "." and kinds[j + 1] == _IDENT:
            j += 2
        if kinds[j] == "{":
            parts = [self.vals[k] for k in range(self.pos, j, 2)]
            self.pos = j
            type_name = ("." if leading_dot else "") + ".".join(str(p) for p in parts)
            return self.message_literal(start, type_name)
        self.pos += 1
        name = "." + word if leading_dot else word
        if kinds[self.pos] == "(":
            paren = self.starts[self.pos]
            args = self.arguments()
            return self.global_call(name, paren, args)
        return ast.Ident(start, name)

    def arguments(self) -> tuple[ast.Node, ...]:
        """ "(" [Expr {"," Expr}] ")" — the current token is the "(". """
        self.pos += 1
        if self.kinds[self.pos] == ")":
            self.pos += 1
            return ()
        args: list[ast.Node] = []
        while True:
            args.append(self.expr())
            kind = self.kinds[self.pos]
            self.pos += 1
            if kind == ")":
                return tuple(args)
            if kind != ",":
                self.unexpected("',' or ')'", self.pos - 1)
            if self.kinds[self.pos] == ")":
                raise _error("unexpected ')', expected an expression (a call cannot end "
                             "with a trailing comma)", self.starts[self.pos])

    def skip_lone_comma(self, closing: str) -> None:
        """An empty literal may be written with its trailing comma (``[,]``, ``{,}``)."""
        if self.kinds[self.pos] == "," and self.kinds[self.pos + 1] == closing:
            self.pos += 1

    def list_literal(self) -> ast.Node:
        """ "[" [["?"] Expr {"," ["?"] Expr}] [","] "]" """
        start = self.starts[self.pos]
        self.pos += 1
        self.skip_lone_comma("]")
        elements: list[ast.Node] = []
        optional: set[int] = set()
        while self.kinds[self.pos] != "]":
            if self.kinds[self.pos] == "?":
                optional.add(len(elements))
                self.pos += 1
            elements.append(self.expr())
            if self.kinds[self.pos] == ",":
                self.pos += 1
            elif self.kinds[self.pos] != "]":
                self.unexpected("',' or ']'")
        self.pos += 1
        return ast.CreateList(start, tuple(elements), frozenset(optional))

    def map_literal(self) -> ast.Node:
        """ "{" [["?"] Expr ":" Expr {"," ...}] [","] "}" """
        start = self.starts[self.pos]
        self.pos += 1
        self.skip_lone_comma("}")
        entries: list[ast.MapEntry] = []
        while self.kinds[self.pos] != "}":
            entry_at = self.starts[self.pos]
            optional = self.kinds[self.pos] == "?"
            if optional:
                self.pos += 1
            key = self.expr()
            self.expect(":", "':' after the map key")
            value = self.expr()
            entries.append(ast.MapEntry(entry_at, key, value, optional))
            if self.kinds[self.pos] == ",":
                self.pos += 1
            elif self.kinds[self.pos] != "}":
                self.unexpected("',' or '}'")
        self.pos += 1
        return ast.CreateMap(start, tuple(entries))

    def message_literal(self, start: int, type_name: str) -> ast.Node:
        """Type "{" [["?"] FIELD ":" Expr {"," ...}] [","] "}" — current token is "{"."""
        self.pos += 1
        self.skip_lone_comma("}")
        fields: list[ast.FieldInit] = []
        while self.kinds[self.pos] != "}":
            field_at = self.starts[self.pos]
            optional = self.kinds[self.pos] == "?"
            if optional:
                self.pos += 1
            if self.kinds[self.pos] not in (_IDENT, _QIDENT):
                self.unexpected("a field name")
            name = self.vals[self.pos]
            assert isinstance(name, str)
            self.pos += 1
            self.expect(":", "':' after the field name")
            fields.append(ast.FieldInit(field_at, name, self.expr(), optional))
            if self.kinds[self.pos] == ",":
                self.pos += 1
            elif self.kinds[self.pos] != "}":
                self.unexpected("',' or '}'")
        self.pos += 1
        return ast.CreateStruct(start, type_name, tuple(fields))

    # -- calls and macros ------------------------------------------------------------------

    def global_call(self, name: str, at: int, args: tuple[ast.Node, ...]) -> ast.Node:
        if name == "has" and len(args) == 1:
            arg = args[0]
            if not isinstance(arg, ast.Select) or arg.test_only or arg.optional:
                raise _error("invalid argument to has() macro: expected a field selection "
                             "such as has(a.b)", arg.offset)
            return ast.Select(at, arg.operand, arg.field, test_only=True)
        return ast.Call(at, name, args)

    def receiver_call(
        self, name: str, at: int, target: ast.Node, args: tuple[ast.Node, ...]
    ) -> ast.Node:
        n = len(args)
        if name in _QUANTIFIERS and n in (2, 3):
            var, var2 = _variables(name, args[: n - 1])
            return ast.Macro(at, _QUANTIFIERS[name], target, var, var2, args[n - 1 :])
        if name == "map" and n in (2, 3):
            var, _ = _variables(name, args[:1])
            kind = ast.MAP if n == 2 else ast.MAP_FILTER
            return ast.Macro(at, kind, target, var, None, args[1:])
        if name == "filter" and n == 2:
            var, _ = _variables(name, args[:1])
            return ast.Macro(at, ast.FILTER, target, var, None, args[1:])
        if name in _TRANSFORMS and n in (3, 4):
            var, var2 = _variables(name, args[:2])
            return ast.Macro(at, _TRANSFORMS[name], target, var, var2, args[2:])
        if name == "sortBy" and n == 2:
            if isinstance(target, ast.Literal | ast.CreateMap | ast.CreateStruct):
                raise _error("sortBy can only be applied to a list, identifier, comprehension, "
                             "call or select expression", target.offset)
            var, _ = _variables(name, args[:1])
            return ast.Macro(at, ast.SORT_BY, target, var, None, args[1:])
        if (name == "optMap" or name == "optFlatMap") and n == 2:
            var, _ = _variables(name, args[:1])
            kind = ast.OPT_MAP if name == "optMap" else ast.OPT_FLAT_MAP
            return ast.Macro(at, kind, target, var, None, args[1:])
        if isinstance(target, ast.Ident) and target.name == "cel":
            macro = self.cel_macro(name, at, args)
            if macro is not None:
                return macro
        return ast.Call(at, name, args, target)

    def cel_macro(self, name: str, at: int, args: tuple[ast.Node, ...]) -> ast.Node | None:
        """``cel.bind``, ``cel.block``, ``cel.index``, ``cel.iterVar``, ``cel.accuVar``."""
        n = len(args)
        if name == "bind" and n == 3:
            var, _ = _variables("cel.bind", args[:1])
            return ast.Macro(at, ast.BIND, None, var, None, args[1:])
        if name == "block" and n == 2:
            slots = args[0]
            if not isinstance(slots, ast.CreateList) or slots.optional_indices:
                raise _error("cel.block requires a list literal (without optional elements) "
                             "as its first argument", slots.offset)
            return ast.Macro(at, _BLOCK, None, "", None, (*slots.elements, args[1]))
        if name == "index" and n == 1:
            index = _non_negative_int(args[0])
            if index is None:
                raise _error("cel.index requires a single non-negative int constant argument",
                             args[0].offset)
            return ast.Ident(at, f"@index{index}")
        if (name == "iterVar" or name == "accuVar") and n == 2:
            depth, unique = _non_negative_int(args[0]), _non_negative_int(args[1])
            if depth is None or unique is None:
                bad = args[0] if depth is None else args[1]
                raise _error(f"cel.{name} requires two non-negative int constant arguments",
                             bad.offset)
            prefix = "@it" if name == "iterVar" else "@ac"
            return ast.Ident(at, f"{prefix}:{depth}:{unique}")
        return None


def _variables(macro: str, args: tuple[ast.Node, ...]) -> tuple[str, str | None]:
    """The variable names a macro binds (one or two simple identifiers)."""
    names: list[str] = []
    for arg in args:
        if not isinstance(arg, ast.Ident) or arg.name.startswith("."):
            raise _error(f"argument must be a simple name (the variable bound by {macro}())",
                         arg.offset)
        if arg.name in names:
            raise _error(f"duplicate variable name '{arg.name}' in {macro}()", arg.offset)
        names.append(arg.name)
    return names[0], (names[1] if len(names) > 1 else None)


def _non_negative_int(node: ast.Node) -> int | None:
    if isinstance(node, ast.Literal):
        value = node.value
        if type(value) is int and value >= 0:
            return value
    return None


def _build(
    operands: list[ast.Node], ops: list[tuple[int, str, int]], lo: int, hi: int, level: int
) -> ast.Node:
    """The tree of ``operands[lo..hi]`` joined by ``ops[lo..hi-1]`` (``ops[i]`` sits between
    operands ``i`` and ``i+1``), splitting on the loosest operators first. Recursion depth
    is bounded by the number of precedence levels (plus log n for && / || balancing)."""
    if lo == hi:
        return operands[lo]
    splits = [k for k in range(lo, hi) if ops[k][0] == level]
    while not splits:
        level += 1
        splits = [k for k in range(lo, hi) if ops[k][0] == level]
    if len(splits) >= MAX_HEIGHT and level not in (_OR, _AND):
        raise _too_high(ops[splits[MAX_HEIGHT - 1]][2])  # a left-deep chain that long
    terms: list[ast.Node] = []
    first = lo
    for k in splits:
        terms.append(_build(operands, ops, first, k, level + 1))
        first = k + 1
    terms.append(_build(operands, ops, first, hi, level + 1))
    if level in (_OR, _AND):
        return _balance(ops[splits[0]][1], terms, [ops[k][2] for k in splits],
                        0, len(splits) - 1)
    node = terms[0]
    for j, k in enumerate(splits):
        node = ast.Call(ops[k][2], ops[k][1], (node, terms[j + 1]))
    return node


def _balance(
    fn: str, terms: list[ast.Node], offsets: list[int], lo: int, hi: int
) -> ast.Node:
    """cel-go's balanced tree of a chain of one logical operator; ``offsets[lo..hi]`` are
    the operator positions, ``terms[lo..hi+1]`` the operands."""
    mid = (lo + hi + 1) // 2
    left = terms[mid] if mid == lo else _balance(fn, terms, offsets, lo, mid - 1)
    right = terms[mid + 1] if mid == hi else _balance(fn, terms, offsets, mid + 1, hi)
    return ast.Call(offsets[mid], fn, (left, right))
