"""Conformance ``type_env`` / ``deduced_type`` JSON (cel-spec's ``cel.expr.Type`` in proto3
JSON) → ``policysched.cel.types.Type``, and ``type_env`` function declarations →
``Function``s for the checker (their implementation raises: they are only checked)."""

from __future__ import annotations

from typing import Any

from policysched.cel import types as t
from policysched.cel.library import Function, Overload
from policysched.cel.values import CelError

_PRIMITIVES = {
    "BOOL": t.BOOL,
    "INT64": t.INT,
    "UINT64": t.UINT,
    "DOUBLE": t.DOUBLE,
    "STRING": t.STRING,
    "BYTES": t.BYTES,
}

_WELL_KNOWN = {
    "ANY": t.DYN,
    "TIMESTAMP": t.TIMESTAMP,
    "DURATION": t.DURATION,
}


def type_from_json(decl: dict[str, Any]) -> t.Type:
    """One ``cel.expr.Type`` message → ``Type``.

    Wrapper types (``google.protobuf.Int64Value`` ...) become their primitive type: we have
    no separate nullable wrappers. Message types become opaque named types.
    """
    if "primitive" in decl:
        return _PRIMITIVES[decl["primitive"]]
    if "list_type" in decl:
        return t.list_of(type_from_json(decl["list_type"].get("elem_type", {"dyn": {}})))
    if "map_type" in decl:
        m = decl["map_type"]
        return t.map_of(type_from_json(m.get("key_type", {"dyn": {}})),
                        type_from_json(m.get("value_type", {"dyn": {}})))
    if "null" in decl:
        return t.NULL
    if "dyn" in decl:
        return t.DYN
    if "error" in decl:
        return t.ERROR
    if "well_known" in decl:
        return _WELL_KNOWN[decl["well_known"]]
    if "wrapper" in decl:
        return _PRIMITIVES[decl["wrapper"]]
    if "type_param" in decl:
        return t.Type(decl["type_param"], is_param=True)
    if "abstract_type" in decl:
        a = decl["abstract_type"]
        return t.Type(a["name"], tuple(type_from_json(p) for p in a.get("parameter_types", [])))
    if "message_type" in decl:
        return t.Type(decl["message_type"])
    if "type" in decl:
        inner = decl["type"]
        return t.type_of_type(type_from_json(inner)) if inner else t.Type("type")
    raise ValueError(f"unsupported conformance type {decl}")


def _unimplemented(*args: Any) -> Any:
    raise CelError("declared for type-checking only")


def function_from_json(name: str, decl: dict[str, Any]) -> Function:
    """A ``type_env`` entry's ``function`` declaration → ``Function`` (check only)."""
    overloads = []
    for ov in decl.get("overloads", []):
        overloads.append(Overload(
            ov.get("overload_id", name),
            tuple(type_from_json(p) for p in ov.get("params", [])),
            type_from_json(ov.get("result_type", {"dyn": {}})),
            member=bool(ov.get("is_instance_function", False)),
        ))
    return Function(name, tuple(overloads), _unimplemented)
