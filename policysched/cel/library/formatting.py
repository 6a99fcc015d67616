# ruff: noqa: RUF001, RUF002  (the multiplication sign, infinity and superscripts Go prints)
"""``string.format``: printf-style formatting of cel-go's ``ext.Strings``, in two versions.

``FORMAT`` (in the standard library) is Kubernetes': ext.Strings version 2, which a 1.34
cluster enables (cel-go's ``ext/formatting.go``):

- ``%s`` of a list or map writes its elements as CEL literals: strings and bytes quoted as
  Go's ``%q`` (``["a", b"x"]``), doubles with six decimals (``1.500000``, ``"NaN"``),
  timestamps and durations as ``timestamp("…")``/``duration("…")``; map entries sorted by
  their written key, ``{"a":1, "b":2}``. A scalar is written as ``string(x)`` writes it;
- ``%f`` and ``%e`` print through golang.org/x/text for the en-US locale: digit grouping
  (``1,234.500000``), ``∞``, and ``%e`` as ``2.718280×10⁰⁰`` whose precision is (by a
  cel-go quirk) a field width: always six decimals, padded with spaces to the precision;
- ``%d``, ``%f``, ``%e`` take only integers, doubles (or the strings ``"NaN"``,
  ``"Infinity"``, ``"-Infinity"``), doubles; ``%b`` integers and bools; ``%x``/``%X``
  integers, strings and bytes; ``%o`` integers.

Its ``validator`` is Kubernetes' ``cel.validator.string_format``: a constant template
applied to a list literal is checked when the expression is compiled (unknown clauses, bad
precisions, too few or too many arguments, an argument whose static type the clause
refuses).

``SPEC_FORMAT`` is the CEL specification's, cel-go's latest (``formatting_v2.go``), which
the CEL conformance suite tests: ``%s`` of collections unquoted (``[a, 1.5]``), ``%e`` as
``2.718280e+00``, ``%d``/``%f``/``%e`` of any number. Only the conformance harness uses it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .. import ast
from ..errors import CelCompileError, CompileErrorKind
from ..types import LIST_DYN, STRING, Type
from ..values import CelError, Duration, Timestamp, TypeValue, UInt, no_such_overload, type_name
from .core import format_double
from .function import Function, member_overload
from .go_text import go_quote
from .time import format_duration, format_timestamp, shortest_fixed

MAX_SPEC_PRECISION = 100  # cel-go's default limit (strings version >= 5)
GO_INT_MAX = 2**63 - 1  # strconv.Atoi's range for a precision
# golang.org/x/text reads a width or precision up to this; past it the clause is "%!(NOVERB)"
_X_TEXT_MAX_NUMBER = 10_000_009
_NO_VERB = "%!(NOVERB)"
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_VERBS = frozenset("sdfebxXo")


# --- templates -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template: ``literals[i]`` precedes clause ``i`` (there is one more literal
    than clauses); a clause is (verb, precision or None). A template that cannot be parsed
    stops at its bad clause: ``error`` is the message, ``at_end`` when the template ends
    with a lone ``%`` (cel-go checks that before the argument count, the rest after)."""

    literals: tuple[str, ...]
    clauses: tuple[tuple[str, int | None], ...]
    error: str | None = None
    at_end: bool = False


def _clause_error(message: str) -> str:
    return f"could not parse formatting clause: {message}"


def _precision_error(message: str) -> str:
    return _clause_error(f"error while parsing precision: {message}")


@lru_cache(maxsize=512)
def parse_template(template: str, max_precision: int | None) -> Template:
    """cel-go's parseFormatString over ``template``; ``max_precision`` is the spec
    version's limit (None: Kubernetes', only strconv.Atoi's int64 range)."""
    literals: list[str] = []
    clauses: list[tuple[str, int | None]] = []
    size = len(template)
    text: list[str] = []
    start = 0

    def stop(error: str, at_end: bool = False) -> Template:
        return Template(tuple(literals), tuple(clauses), error, at_end)

    i = template.find("%")
    while i >= 0:
        text.append(template[start:i])
        if i + 1 < size and template[i + 1] == "%":
            text.append("%")
            start = i + 2
            i = template.find("%", start)
            continue
        literals.append("".join(text))
        text = []
        if i + 1 >= size:
            return stop("unexpected end of string", at_end=True)
        j = i + 1
        precision: int | None = None
        if template[j] == ".":
            j += 1
            k = j
            while k < size and "0" <= template[k] <= "9":
                k += 1
            digits = template[j:k]
            value = template[j:k].lstrip("0")  # strconv.Atoi reads leading zeros
            if k >= size:
                return stop(_precision_error("could not find end of precision specifier"))
            if not digits:
                return stop(_precision_error(
                    "error while converting precision to integer: "
                    'strconv.Atoi: parsing "": invalid syntax'))
            if max_precision is not None and (len(value) > 4
                                              or int(value or "0") > max_precision):
                return stop(_precision_error(
                    f"precision {digits} exceeds maximum allowed precision {max_precision}"))
            if len(value) > 19 or (len(value) == 19 and int(value) > GO_INT_MAX):
                return stop(_precision_error(
                    "error while converting precision to integer: "
                    f'strconv.Atoi: parsing "{digits}": value out of range'))
            precision = int(value or "0")
            j = k
        verb = template[j]
        if verb not in _VERBS:
            # cel-go reads one byte: the first byte of a multi-byte character, as a rune
            shown = chr(verb.encode("utf-8", "surrogatepass")[0])
            return stop(_clause_error(f'unrecognized formatting clause "{shown}"'))
        clauses.append((verb, precision))
        start = j + 1
        i = template.find("%", start)
    text.append(template[start:])
    literals.append("".join(text))
    return Template(tuple(literals), tuple(clauses))


Clause = Callable[[Any, "int | None"], str]


def _apply(template: str, values: Any, parsed: Template, clauses: dict[str, Clause]) -> str:
    """Substitute ``values`` into ``template``: the errors of cel-go's runtime formatting,
    in its order (the argument count first, clause by clause)."""
    out = [parsed.literals[0]]
    n = len(values)
    for index, (verb, precision) in enumerate(parsed.clauses):
        if index >= n:
            raise CelError(f"index {index} out of range")
        out.append(clauses[verb](values[index], precision))
        out.append(parsed.literals[index + 1])
    if parsed.error is not None:
        if len(parsed.clauses) >= n:
            raise CelError(f"index {len(parsed.clauses)} out of range")
        raise CelError(parsed.error)
    return "".join(out)


def _is_list(v: Any) -> bool:
    t = type(v)
    return t is list or t is tuple


def _format_error(message: str, v: Any) -> CelError:
    return CelError(f"error during formatting: {message}, was given {type_name(v)}")


_STRING_CLAUSE = ("string clause can only be used on strings, bools, bytes, ints, doubles, "
                  "maps, lists, types, durations, and timestamps")
_DECIMAL_CLAUSE = "decimal clause can only be used on integers"
_FIXED_CLAUSE = "fixed-point clause can only be used on doubles"
_SCIENTIFIC_CLAUSE = "scientific clause can only be used on doubles"
_BINARY_CLAUSE = "only integers and bools can be formatted as binary"
_HEX_CLAUSE = "only integers, byte buffers, and strings can be formatted as hex"
_OCTAL_CLAUSE = "octal clause can only be used on integers"


def _binary(v: Any, _precision: int | None) -> str:
    t = type(v)
    if t is bool:
        return "1" if v else "0"
    if t is int or t is UInt:
        return format(int(v), "b")
    raise _format_error(_BINARY_CLAUSE, v)


def _hex(v: Any, _precision: int | None) -> str:
    t = type(v)
    if t is int or t is UInt:
        return format(int(v), "x")
    if t is str:
        return v.encode("utf-8", "surrogatepass").hex()
    if t is bytes:
        return v.hex()
    raise _format_error(_HEX_CLAUSE, v)


def _hex_upper(v: Any, precision: int | None) -> str:
    return _hex(v, precision).upper()


def _octal(v: Any, _precision: int | None) -> str:
    t = type(v)
    if t is int or t is UInt:
        return format(int(v), "o")
    raise _format_error(_OCTAL_CLAUSE, v)


# --- Kubernetes: ext.Strings version 2 ---------------------------------------------------

def _bytes_text(v: bytes) -> str:
    try:
        return v.decode("utf-8")
    except UnicodeDecodeError:
        raise CelError('error during formatting: could not convert argument "invalid UTF-8 '
                       'in bytes, cannot convert to string" to string') from None


def _scalar_text(v: Any) -> str | None:
    """``string(v)`` for the scalars ``%s`` writes that way, else None."""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return format_double(v)
    if v is None:
        return "null"
    if t is bytes:
        return _bytes_text(v)
    if t is Timestamp:
        return format_timestamp(v)
    if t is Duration:
        return format_duration(v)
    if t is TypeValue:
        return v.name
    return None


def _go_fixed6(x: float) -> str:
    """Go's ``fmt.Sprintf("%.6f", x)``."""
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return f"{x:.6f}"


def _literal(v: Any) -> str:
    """An element of a list or map under ``%s``: written as a CEL literal (cel-go's
    clauseForType then quoteForCEL)."""
    t = type(v)
    if t is str:
        return go_quote(v)
    if t is bytes:
        return "b" + go_quote(_bytes_text(v))
    if t is float:
        text = _go_fixed6(v)
        return text if math.isfinite(v) else go_quote(text)
    if t is Timestamp:
        return f"timestamp({go_quote(format_timestamp(v))})"
    if t is Duration:
        return f"duration({go_quote(format_duration(v))})"
    if t is list or t is tuple:
        return _list_text(v)
    if t is dict:
        return _map_text(v)
    scalar = _scalar_text(v)
    if scalar is None:
        raise CelError(f"error during formatting: no formatting function for {type_name(v)}")
    return scalar


def _list_text(v: Any) -> str:
    return "[" + ", ".join([_literal(x) for x in v]) + "]"


def _map_text(v: dict[Any, Any]) -> str:
    entries = []
    for key, value in v.items():
        tk = type(key)
        if tk is str:
            shown = go_quote(key)
        elif tk is bool or tk is int or tk is UInt:
            shown = _scalar_text(key) or ""
        else:
            raise CelError("error during formatting: no formatting function for map key of "
                           f"type {type_name(key)}")
        entries.append((shown, _literal(value)))
    entries.sort(key=lambda entry: entry[0])
    return "{" + ", ".join([f"{k}:{x}" for k, x in entries]) + "}"


def _string(v: Any, _precision: int | None) -> str:
    t = type(v)
    if t is list or t is tuple:
        return _list_text(v)
    if t is dict:
        return _map_text(v)
    text = _scalar_text(v)
    if text is None:
        raise _format_error(_STRING_CLAUSE, v)
    return text


def _decimal(v: Any, _precision: int | None) -> str:
    t = type(v)
    if t is int or t is UInt:
        return str(int(v))
    raise _format_error(_DECIMAL_CLAUSE, v)


def _double_arg(v: Any, message: str) -> float:
    t = type(v)
    if t is float:
        return float(v)
    if t is str and v in _SPECIAL_DOUBLES:
        return _SPECIAL_DOUBLES[v]
    raise _format_error(message, v)


def _group(digits: str) -> str:
    """en-US digit grouping: a comma every three integer digits."""
    head = len(digits) % 3 or 3
    return ",".join([digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)])


def en_fixed(x: float, precision: int) -> str:
    """golang.org/x/text's en-US ``%.{precision}f``: at most ``int16(precision)`` decimals
    (shortest digits when that is negative), at least ``uint8(precision)``, grouped integer
    digits, ``∞``, and a minus sign for any negative value (not for -0.0)."""
    if x != x:
        return "NaN"
    sign = "-" if x < 0 else ""
    if math.isinf(x):
        return sign + "∞"
    max_fraction = ((precision + 0x8000) & 0xFFFF) - 0x8000
    min_fraction = precision & 0xFF
    text = format(abs(x), f".{max_fraction}f") if max_fraction >= 0 else shortest_fixed(abs(x))
    whole, _, fraction = text.partition(".")
    whole = whole.lstrip("0")
    fraction = fraction.rstrip("0")
    if not whole and not fraction:
        return sign + "0" + ("." + "0" * min_fraction if min_fraction else "")
    fraction = fraction.ljust(min_fraction, "0")
    return sign + (_group(whole) if whole else "0") + ("." + fraction if fraction else "")


def en_scientific(x: float, width: int) -> str:
    """golang.org/x/text's en-US ``%{width}e``: seven significant digits, ``×10`` and a
    superscript exponent of at least two digits, padded with spaces to ``uint16(width)``
    characters (no padding for width 0, which Go reads as the ``0`` flag)."""
    if x != x:
        text = "NaN"
    else:
        sign = "-" if x < 0 else ""
        if math.isinf(x):
            text = sign + "∞"
        else:
            mantissa, _, exponent = f"{abs(x):.6e}".partition("e")
            e = int(exponent)
            digits = f"{abs(e):02d}".translate(_SUPERSCRIPT)
            text = f"{sign}{mantissa}×10{'⁻' if e < 0 else ''}{digits}"
    pad = (width & 0xFFFF) - len(text)
    return " " * pad + text if pad > 0 else text


def _fixed(v: Any, precision: int | None) -> str:
    x = _double_arg(v, _FIXED_CLAUSE)
    if precision is None:
        precision = 6
    if precision > _X_TEXT_MAX_NUMBER:
        return _NO_VERB
    return en_fixed(x, precision)


def _scientific(v: Any, precision: int | None) -> str:
    x = _double_arg(v, _SCIENTIFIC_CLAUSE)
    if precision is None:
        precision = 6
    if precision > _X_TEXT_MAX_NUMBER:
        return _NO_VERB
    return en_scientific(x, precision)


_KUBERNETES_CLAUSES: dict[str, Clause] = {
    "s": _string, "d": _decimal, "f": _fixed, "e": _scientific, "b": _binary, "x": _hex,
    "X": _hex_upper, "o": _octal,
}


def format_kubernetes(*args: Any) -> str:
    """``"template".format([args])`` as Kubernetes formats it."""
    if len(args) != 2 or type(args[0]) is not str or not _is_list(args[1]):
        raise no_such_overload("format", *args)
    template: str = args[0]
    if "%" not in template:
        return template
    return _apply(template, args[1], parse_template(template, None), _KUBERNETES_CLAUSES)


# --- Kubernetes' compile-time validator ----------------------------------------------------

# Per clause, the kinds of static type it accepts (dyn always passes).
_ACCEPTED: dict[str, tuple[frozenset[str], str]] = {
    "s": (frozenset({"list", "map", "int", "uint", "double", "bool", "string", "bytes",
                     "google.protobuf.Timestamp", "google.protobuf.Duration", "type",
                     "null_type"}), _STRING_CLAUSE),
    "d": (frozenset({"int", "uint"}), _DECIMAL_CLAUSE),
    "f": (frozenset({"double", "string"}), _FIXED_CLAUSE),
    "e": (frozenset({"double", "string"}), _SCIENTIFIC_CLAUSE),
    "b": (frozenset({"int", "uint", "bool"}), _BINARY_CLAUSE),
    "x": (frozenset({"int", "uint", "string", "bytes"}), _HEX_CLAUSE),
    "X": (frozenset({"int", "uint", "string", "bytes"}), _HEX_CLAUSE),
    "o": (frozenset({"int", "uint"}), _OCTAL_CLAUSE),
}


def _refused(verb: str, node: ast.Node, type_of: Callable[[ast.Node], Type]) -> ast.Node | None:
    """The node (``node`` or, for ``%s``, an element of a literal inside it) whose static
    type ``verb`` refuses, if any."""
    t = type_of(node)
    if t.name != "dyn" and not t.is_param and t.name not in _ACCEPTED[verb][0]:
        return node
    if verb == "s" and isinstance(node, ast.CreateList | ast.CreateMap):
        for inner in ast.children(node):  # literals are checked element by element
            bad = _refused(verb, inner, type_of)
            if bad is not None:
                return bad
    return None


def validate_format(call: ast.Call, type_of: Callable[[ast.Node], Type]) -> None:
    """Kubernetes' ``cel.validator.string_format``: ``'<constant>'.format([<list literal>])``
    is formatted at compile time against the elements' static types."""
    target = call.target
    if (not isinstance(target, ast.Literal) or type(target.value) is not str
            or len(call.args) != 1 or not isinstance(call.args[0], ast.CreateList)):
        return
    elements = call.args[0].elements
    parsed = parse_template(target.value, None)

    def error(message: str, node: ast.Node = call) -> CelCompileError:
        return CelCompileError(CompileErrorKind.ARGUMENT, message, node.offset)

    for index, (verb, _precision) in enumerate(parsed.clauses):
        if index >= len(elements):
            raise error(f"index {index} out of range")
        bad = _refused(verb, elements[index], type_of)
        if bad is not None:
            raise error(f"error during formatting: {_ACCEPTED[verb][1]}, was given "
                        f"{type_of(bad).name}", bad)
    if parsed.error is not None:
        if not parsed.at_end and len(parsed.clauses) >= len(elements):
            raise error(f"index {len(parsed.clauses)} out of range")
        raise error(parsed.error)
    if len(elements) > len(parsed.clauses):
        raise error("too many arguments supplied to string.format "
                    f"(expected {len(parsed.clauses)}, got {len(elements)})")


# --- the CEL specification: cel-go's latest version ----------------------------------------

def _spec_double(x: float) -> str:
    """Go's ``strconv.FormatFloat(x, 'f', -1, 64)`` with CEL's spelling of NaN and
    infinities."""
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    r = shortest_fixed(x)
    return r[:-2] if r.endswith(".0") else r


def _spec_string(v: Any, _precision: int | None = None) -> str:
    t = type(v)
    if t is float:
        return _spec_double(v)
    if t is list or t is tuple:
        return "[" + ", ".join([_spec_string(x) for x in v]) + "]"
    if t is dict:
        entries = sorted((_spec_string(k), _spec_string(x)) for k, x in v.items())
        return "{" + ", ".join([f"{k}: {x}" for k, x in entries]) + "}"
    if t is bytes:
        return v.decode("utf-8", "replace")
    text = _scalar_text(v)
    if text is None:
        raise _format_error(_STRING_CLAUSE, v)
    return text


def _spec_decimal(v: Any, _precision: int | None) -> str:
    t = type(v)
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return _spec_double(v)
    raise _format_error(_DECIMAL_CLAUSE, v)


def _spec_number(v: Any, message: str) -> float | None:
    """The double to print, or None for NaN and the infinities (printed by name)."""
    t = type(v)
    if t is int or t is UInt:
        return float(v)
    if t is float:
        return v if math.isfinite(v) else None
    raise _format_error(message, v)


def _spec_fixed(v: Any, precision: int | None) -> str:
    x = _spec_number(v, _FIXED_CLAUSE)
    return _spec_double(v) if x is None else f"{x:.{6 if precision is None else precision}f}"


def _spec_scientific(v: Any, precision: int | None) -> str:
    x = _spec_number(v, _SCIENTIFIC_CLAUSE)
    return _spec_double(v) if x is None else f"{x:.{6 if precision is None else precision}e}"


_SPEC_CLAUSES: dict[str, Clause] = {
    "s": _spec_string, "d": _spec_decimal, "f": _spec_fixed, "e": _spec_scientific,
    "b": _binary, "x": _hex, "X": _hex_upper, "o": _octal,
}


def format_spec(*args: Any) -> str:
    """``"template".format([args])`` as the CEL specification formats it."""
    if len(args) != 2 or type(args[0]) is not str or not _is_list(args[1]):
        raise no_such_overload("format", *args)
    template: str = args[0]
    if "%" not in template:
        return template
    parsed = parse_template(template, MAX_SPEC_PRECISION)
    return _apply(template, args[1], parsed, _SPEC_CLAUSES)


_OVERLOADS = (member_overload("string_format", (STRING, LIST_DYN), STRING),)

FORMAT = Function(
    "format",
    _OVERLOADS,
    format_kubernetes,
    cost_per_size=True,
    doc="printf-style formatting of the list's values, as Kubernetes: %s (lists and maps "
        "as CEL literals), %d, %f (%.2f, en-US digit grouping), %e (2.5×10⁰³), %x, %X, %o, "
        "%b, %%",
    examples=("'%s runs %d pods'.format([node.name, node.podCount])",),
    validator=validate_format,
)

SPEC_FORMAT = Function("format", _OVERLOADS, format_spec, cost_per_size=True,
                       doc="printf-style formatting as the CEL specification")

FUNCTIONS: list[Function] = [FORMAT]
