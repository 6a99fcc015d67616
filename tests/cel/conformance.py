"""The official CEL conformance cases (cel-spec's simple tests, as JSON) and how to run one.

The data lives in ``../shared/cel-conformance/json`` beside the project. Only the
proto-free subset counts (no ``container``; no protobuf message, enum or well-known type),
the rule stated in the data's ABOUT.md.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policysched.cel import CelCompileError, CelError, Environment, compile_expression
from policysched.cel import types as t
from policysched.cel.library import Function, standard_library
from policysched.cel.library.formatting import SPEC_FORMAT
from policysched.cel.library.strings import SPEC_REVERSE
from policysched.cel.values import TYPE_IDENTIFIERS, OptionalValue, TypeValue, UInt, type_of
from tests.cel.conformance_types import function_from_json, type_from_json

PROTO_MARKERS = ("TestAllTypes", "google.protobuf", "object_value", "message_type", "enum_value")


def data_dir() -> Path:
    env = os.environ.get("CEL_CONFORMANCE_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared" / "cel-conformance" / "json"


@dataclass(frozen=True)
class Case:
    file: str
    section: str
    name: str
    raw: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.file}/{self.section}/{self.name}"


def proto_free_cases() -> Iterator[Case]:
    for path in sorted(data_dir().glob("*.json")):
        data = json.loads(path.read_text())
        for section in data.get("section", []):
            for test in section.get("test", []):
                text = json.dumps(test)
                if "container" in test or any(m in text for m in PROTO_MARKERS):
                    continue
                yield Case(path.stem, section.get("name", ""), test["name"], test)


def value_from_json(v: dict[str, Any]) -> Any:
    """A conformance ``Value`` message (proto3 JSON) → our runtime value."""
    if "int64_value" in v:
        return int(v["int64_value"])
    if "uint64_value" in v:
        return UInt(int(v["uint64_value"]))
    if "double_value" in v:
        d = v["double_value"]
        return float(d)  # numbers, or "NaN" / "Infinity" / "-Infinity"
    if "string_value" in v:
        return v["string_value"]
    if "bytes_value" in v:
        return base64.b64decode(v["bytes_value"])
    if "bool_value" in v:
        return v["bool_value"]
    if "null_value" in v:
        return None
    if "list_value" in v:
        return [value_from_json(x) for x in v["list_value"].get("values", [])]
    if "map_value" in v:
        return {
            value_from_json(e["key"]): value_from_json(e["value"])
            for e in v["map_value"].get("entries", [])
        }
    if "type_value" in v:
        name = v["type_value"]
        return TYPE_IDENTIFIERS.get(name, TypeValue(name))
    raise ValueError(f"unsupported conformance value {v}")


def same_value(got: Any, want: Any) -> bool:
    """Exact equality: same CEL type and value (1 is not 1.0 here), NaN equals NaN."""
    try:
        if type_of(got) != type_of(want):
            return False
    except CelError:
        return False
    if isinstance(want, float):
        return (math.isnan(got) and math.isnan(want)) or (
            got == want and math.copysign(1, got) == math.copysign(1, want))
    if isinstance(want, list):
        return len(got) == len(want) and all(
            same_value(a, b) for a, b in zip(got, want, strict=True))
    if isinstance(want, dict):
        return len(got) == len(want) and all(
            k in got and same_value(got[k], v) for k, v in want.items())
    if isinstance(want, OptionalValue):
        return got.has == want.has and (not want.has or same_value(got.value, want.value))
    return bool(got == want)


def _declared_type(decl: dict[str, Any]) -> t.Type:
    return type_from_json(decl)


def spec_functions() -> dict[str, Function]:
    """The standard library with the specification's string.format and string reverse
    (cel-go's latest ext.Strings), not Kubernetes' ext.Strings version 2."""
    functions = dict(standard_library())
    functions["format"] = SPEC_FORMAT
    functions["reverse"] = SPEC_REVERSE
    return functions


def environment(case: Case) -> Environment:
    """Variables and extra functions the case declares in its ``type_env``."""
    raw = case.raw
    variables: dict[str, t.Type] = {}
    functions = spec_functions()
    for decl in raw.get("type_env", []):
        if "ident" in decl:
            variables[decl["name"]] = _declared_type(decl["ident"]["type"])
        elif "function" in decl:
            functions[decl["name"]] = function_from_json(decl["name"], decl["function"])
    for name in raw.get("bindings", {}):
        variables.setdefault(name, t.DYN)
    return Environment(variables=variables, functions=functions, version=None)


@dataclass(frozen=True)
class Outcome:
    passed: bool
    detail: str = ""


def run(case: Case) -> Outcome:
    raw = case.raw
    check = not raw.get("disable_check", False)
    env = environment(case)
    try:
        program = compile_expression(raw["expr"], env, check=check)
    except CelCompileError as e:
        if "eval_error" in raw:
            return Outcome(True)
        return Outcome(False, f"compile error: {e}")
    if "typed_result" in raw:
        want_type = raw["typed_result"].get("deduced_type")
        if want_type is not None:
            got_type = program.type
            if str(got_type) != str(_declared_type(want_type)):
                return Outcome(False, f"deduced {got_type}, want {_declared_type(want_type)}")
    if raw.get("check_only"):
        return Outcome(True)
    bindings = {name: value_from_json(b["value"]) for name, b in raw.get("bindings", {}).items()}
    try:
        got = program.evaluate(bindings)
    except CelError as e:
        if "eval_error" in raw:
            return Outcome(True)
        return Outcome(False, f"eval error: {e.message}")
    except RecursionError:
        return Outcome(False, "recursion error")
    if "eval_error" in raw:
        return Outcome(False, f"expected an error, got {got!r}")
    if "typed_result" in raw and "result" in raw["typed_result"]:
        want = value_from_json(raw["typed_result"]["result"])
    elif "value" in raw:
        want = value_from_json(raw["value"])
    else:
        want = True
    if same_value(got, want):
        return Outcome(True)
    return Outcome(False, f"got {got!r}, want {want!r}")
