"""Check that a view is a value of its declared CEL type, recursively and exactly."""

from __future__ import annotations

from typing import Any

from policysched.cel.types import Type
from policysched.policy.variables import OBJECT_TYPES


def type_errors(value: Any, declared: Type, path: str = "") -> list[str]:
    """Why ``value`` is not a value of ``declared`` (empty when it is). Object types must
    have exactly their declared fields."""
    name = declared.name
    if name == "dyn":
        return []
    if name == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: {value!r} is not an int"]
    if name == "string":
        return [] if isinstance(value, str) else [f"{path}: {value!r} is not a string"]
    if name == "bool":
        return [] if isinstance(value, bool) else [f"{path}: {value!r} is not a bool"]
    if name == "list":
        if not isinstance(value, list | tuple):
            return [f"{path}: {value!r} is not a list"]
        return [e for i, v in enumerate(value) for e in type_errors(v, declared.params[0],
                                                                   f"{path}[{i}]")]
    if name == "map":
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not a map"]
        key_type, value_type = declared.params
        errors = []
        for k, v in value.items():
            errors += type_errors(k, key_type, f"{path} key")
            errors += type_errors(v, value_type, f"{path}[{k!r}]")
        return errors
    fields = OBJECT_TYPES[name]
    if not isinstance(value, dict):
        return [f"{path}: {value!r} is not a {name}"]
    if set(value) != set(fields):
        return [f"{path}: fields {sorted(value)} are not those of {name}: {sorted(fields)}"]
    return [e for f, t in fields.items() for e in type_errors(value[f], t, f"{path}.{f}")]
