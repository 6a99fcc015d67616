"""Static CEL types, used by the checker, the function declarations and the environments."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Type:
    """A CEL type: a primitive (``params`` empty), a parameterised type such as
    ``list(int)`` / ``map(string, dyn)`` / ``optional_type(T)`` / ``type(T)``, or a type
    parameter (``is_param``) used in function signatures (``A``, ``B``)."""

    name: str
    params: tuple[Type, ...] = ()
    is_param: bool = False

    def __str__(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(str(p) for p in self.params)})"


INT = Type("int")
UINT = Type("uint")
DOUBLE = Type("double")
BOOL = Type("bool")
STRING = Type("string")
BYTES = Type("bytes")
NULL = Type("null_type")
DYN = Type("dyn")
ERROR = Type("*error*")
TIMESTAMP = Type("google.protobuf.Timestamp")
DURATION = Type("google.protobuf.Duration")

A = Type("A", is_param=True)
B = Type("B", is_param=True)
C = Type("C", is_param=True)


def list_of(elem: Type) -> Type:
    return Type("list", (elem,))


def map_of(key: Type, value: Type) -> Type:
    return Type("map", (key, value))


def optional_of(t: Type) -> Type:
    return Type("optional_type", (t,))


def type_of_type(t: Type) -> Type:
    return Type("type", (t,))


LIST_DYN = list_of(DYN)
MAP_STRING_STRING = map_of(STRING, STRING)
MAP_STRING_DYN = map_of(STRING, DYN)
