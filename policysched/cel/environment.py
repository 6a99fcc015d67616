"""What an expression may refer to: declared variables, object types and functions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from .compatibility import DEFAULT_VERSION, KubernetesVersion
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
    ``version`` is the CEL compatibility version: the Kubernetes release whose functions,
    macros and checker rules apply (``cel.compatibility``); None is the CEL specification
    alone, as its conformance suite tests it (every function, no Kubernetes validator).
    List and map literals must be homogeneous (Kubernetes' rule) except anywhere inside a
    call of ``heterogeneous_literals_in`` (cel-go's exempt functions: string formatting,
    and the policy functions that take a Kubernetes object written as a literal).
    """

    variables: Mapping[str, Type] = field(default_factory=dict)
    objects: Mapping[str, Mapping[str, Type]] = field(default_factory=dict)
    functions: Mapping[str, Function] = field(default_factory=_library)
    size_hints: Mapping[str, int] = field(default_factory=dict)
    unavailable: Mapping[str, str] = field(default_factory=dict)
    cost_limit: int | None = None
    runtime_cost_limit: int | None = None
    version: KubernetesVersion | None = DEFAULT_VERSION
    heterogeneous_literals_in: frozenset[str] = frozenset({"format"})
