"""Declared types and values as both sides of the differential test see them.

A declared type is text (``int``, ``list(string)``, ``map(string, dyn)``) that the Go
reference parses too. Values travel as *typed JSON* (see cel-reference's main.go):
``{"int": "5"}``, ``{"double": "NaN"}``, ``{"list": [...]}``, ``{"map": [[k, v], ...]}``,
``{"timestamp": "<RFC 3339>"}``, ``{"object": {"type": "net.IP", "string": "::1"}}`` ...
Results are compared in a *canonical* form, hashable tuples where every CEL type is
distinct (``1``, ``1u`` and ``1.0`` differ; NaN equals NaN; ``-0.0`` differs from ``0.0``;
map entries are sorted), built from the reference's JSON on one side and from our runtime
values on the other.
"""

from __future__ import annotations

import base64
import datetime
import math
from typing import Any

from policysched.cel import types as t
from policysched.cel.values import (
    NANOS,
    Duration,
    OptionalValue,
    Timestamp,
    TypeValue,
    UInt,
    type_of,
)

Canon = tuple[Any, ...]

SCALAR_TYPES: dict[str, t.Type] = {
    "int": t.INT, "uint": t.UINT, "double": t.DOUBLE, "bool": t.BOOL, "string": t.STRING,
    "bytes": t.BYTES, "null_type": t.NULL, "timestamp": t.TIMESTAMP, "duration": t.DURATION,
    "dyn": t.DYN,
}

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def declared_type(text: str) -> t.Type:
    """Our checker type for a declared type's text."""
    parsed, rest = _parse_type(text)
    if rest.strip():
        raise ValueError(f"bad declared type {text!r}")
    return parsed


def _parse_type(text: str) -> tuple[t.Type, str]:
    text = text.strip()
    end = min((i for i in (text.find(c) for c in "(,)") if i >= 0), default=len(text))
    name, rest = text[:end].strip(), text[end:]
    if name in SCALAR_TYPES:
        return SCALAR_TYPES[name], rest
    if name not in ("list", "map") or not rest.startswith("("):
        raise ValueError(f"unknown declared type {name!r}")
    first, rest = _parse_type(rest[1:])
    if name == "list":
        return t.list_of(first), _expect(rest, ")")
    second, rest = _parse_type(_expect(rest, ","))
    return t.map_of(first, second), _expect(rest, ")")


def _expect(rest: str, char: str) -> str:
    if not rest.startswith(char):
        raise ValueError(f"{char!r} expected in a declared type")
    return rest[1:]


def rfc3339(ns: int) -> str:
    """Nanoseconds since the epoch as Go's ``time.RFC3339Nano`` in UTC prints them."""
    seconds, nanos = divmod(ns, NANOS)
    when = _EPOCH + datetime.timedelta(seconds=seconds)
    text = (f"{when.year:04d}-{when.month:02d}-{when.day:02d}"
            f"T{when.hour:02d}:{when.minute:02d}:{when.second:02d}")
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    return text + "Z"


def to_json(value: Any) -> dict[str, Any]:
    """A variable's value (our runtime representation) as typed JSON for the reference."""
    c = canonical(value)
    return canon_to_json(c)


def canon_to_json(c: Canon) -> dict[str, Any]:
    tag = c[0]
    if tag in ("int", "uint", "duration"):
        return {tag: str(c[1])}
    if tag == "double":
        return {tag: c[1]}
    if tag in ("string", "bytes", "bool", "timestamp"):
        return {tag: c[1]}
    if tag == "null":
        return {"null": None}
    if tag == "list":
        return {"list": [canon_to_json(x) for x in c[1]]}
    if tag == "map":
        return {"map": [[canon_to_json(k), canon_to_json(v)] for k, v in c[1]]}
    raise ValueError(f"a variable cannot hold {tag}")


def canonical(value: Any) -> Canon:
    """Our runtime value in canonical form."""
    if value is None:
        return ("null",)
    kind = type(value)
    if kind is bool:
        return ("bool", value)
    if kind is UInt:
        return ("uint", int(value))
    if kind is int:
        return ("int", value)
    if kind is float:
        return ("double", repr(value))
    if kind is str:
        return ("string", value)
    if kind is bytes:
        return ("bytes", base64.b64encode(value).decode())
    if kind in (list, tuple):
        return ("list", tuple(canonical(x) for x in value))
    if kind is dict:
        return ("map", tuple(sorted(((canonical(k), canonical(v)) for k, v in value.items()),
                                    key=repr)))
    if kind is Timestamp:
        return ("timestamp", rfc3339(value.ns))
    if kind is Duration:
        return ("duration", value.ns)
    if kind is TypeValue:
        return ("type", value.name)
    if kind is OptionalValue:
        return ("optional", canonical(value.value) if value.has else None)
    return ("object", type_of(value).name, str(value))


def from_json(data: dict[str, Any]) -> Canon:
    """The reference's typed JSON in canonical form."""
    ((tag, body),) = data.items()
    if tag in ("int", "uint", "duration"):
        return (tag, int(body))
    if tag == "double":
        return ("double", repr(float(body)))
    if tag in ("string", "bytes", "bool", "timestamp", "type"):
        return (tag, body)
    if tag == "null":
        return ("null",)
    if tag == "list":
        return ("list", tuple(from_json(x) for x in body))
    if tag == "map":
        return ("map", tuple(sorted(((from_json(k), from_json(v)) for k, v in body),
                                    key=repr)))
    if tag == "optional":
        return ("optional", None if body is None else from_json(body))
    if tag == "object":
        return ("object", body["type"], body["string"])
    raise ValueError(f"unknown typed value {data!r}")


def show(c: Canon) -> str:
    """A canonical value as CEL-like text, for tables and failure messages."""
    tag = c[0]
    if tag == "int":
        return str(c[1])
    if tag == "uint":
        return f"{c[1]}u"
    if tag == "double":
        f = float(c[1])
        return c[1] if math.isfinite(f) else {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[c[1]]
    if tag == "string":
        return repr(c[1])
    if tag == "bytes":
        return f"b{base64.b64decode(c[1])!r}"[:60]
    if tag == "bool":
        return "true" if c[1] else "false"
    if tag == "null":
        return "null"
    if tag == "list":
        return "[" + ", ".join(show(x) for x in c[1]) + "]"
    if tag == "map":
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in c[1]) + "}"
    if tag == "timestamp":
        return f"timestamp('{c[1]}')"
    if tag == "duration":
        return f"duration('{c[1]}ns')"
    if tag == "type":
        return f"type {c[1]}"
    if tag == "optional":
        return "optional.none()" if c[1] is None else f"optional.of({show(c[1])})"
    return f"{c[1]}({c[2]!r})"


def plain_value(decl: str, raw: Any) -> Any:
    """A YAML/JSON value (test data) as our runtime value of the declared type: ``uint``
    becomes ``UInt``, ``double`` a float, ``timestamp`` an RFC 3339 string parsed, ``duration``
    nanoseconds; ``dyn`` keeps what YAML gives."""
    return _plain(declared_type(decl), raw)


def _plain(typ: t.Type, raw: Any) -> Any:
    if typ.name == "list":
        return [_plain(typ.params[0], x) for x in raw]
    if typ.name == "map":
        return {_plain(typ.params[0], k): _plain(typ.params[1], v) for k, v in raw.items()}
    if typ == t.UINT:
        return UInt(raw)
    if typ == t.DOUBLE:
        return float(raw)
    if typ == t.TIMESTAMP:
        when = datetime.datetime.fromisoformat(raw.replace("Z", "+00:00"))
        delta = when - _EPOCH
        return Timestamp((delta.days * 86400 + delta.seconds) * NANOS + delta.microseconds * 1000)
    if typ == t.DURATION:
        return Duration(int(raw))
    return raw
