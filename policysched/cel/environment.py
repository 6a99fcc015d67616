"""What an expression may refer to: declared variables, object types and functions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from .library import Function, standard_library
from .types import Type


@cache
def _library() -> Mapping[str, Function]:
    return standard_library()


@dataclass(frozen=True)
class Environment:
    """Declarations for one kind of expression (for policies: one extension point).

    ``objects`` describes object types by name: their fields and each field's type, so that
    ``pod.annotatons`` is a compile error rather than a runtime one. ``size_hints`` bounds the
    size of list/map variables for the cost estimate (``pods`` → the largest cluster we plan
    for). ``cost_limit`` rejects expressions whose estimated worst case is larger;
    ``runtime_cost_limit`` bounds one evaluation.
    ``unavailable`` names variables that exist elsewhere but not here, with the reason shown
    to the user (e.g. ``node`` in preFilter).
    ``reject_repeated_map_keys`` is the CEL specification's rule, which its conformance suite
    tests: a map literal that repeats a key is an error. cel-go, and so Kubernetes, keeps
    the last value (``{'a': 1, 'a': 2}`` is ``{'a': 2}``), which is the default here.
    """

    variables: Mapping[str, Type] = field(default_factory=dict)
    objects: Mapping[str, Mapping[str, Type]] = field(default_factory=dict)
    functions: Mapping[str, Function] = field(default_factory=_library)
    size_hints: Mapping[str, int] = field(default_factory=dict)
    unavailable: Mapping[str, str] = field(default_factory=dict)
    cost_limit: int | None = None
    runtime_cost_limit: int | None = None
    reject_repeated_map_keys: bool = False
