"""SchedulingPolicy documents: loading (files, directories, ConfigMaps), JSON-Schema
validation with ``file:line:column`` positions, and compilation of every CEL field for its
extension point.

Typical use::

    policy_set = load_policy_set(["policies/"])
    if not policy_set.valid:
        print(render_text(policy_set.diagnostics))
    for policy in policy_set.policies:
        for rule in policy.rules_for(ExtensionPoint.FILTER):
            rule.expression.evaluate({"pod": ..., "node": ..., ...})
"""

from __future__ import annotations

from .compile import compile_policy
from .diagnostics import Diagnostic, DiagnosticKind, render_json, render_text
from .documents import API_VERSION, CONFIGURATION_KIND, POLICY_KIND, LoadedDocument
from .loader import LoadResult, load_configmap, load_paths, load_text
from .model import (
    BindRule,
    CelExpression,
    Enforcement,
    ExtensionPoint,
    FailurePolicy,
    FilterRule,
    Normalization,
    PermitOnFalse,
    PermitRule,
    Policy,
    PostBindRule,
    PostFilterRule,
    PreBindRule,
    PreEnqueueRule,
    PreFilterRule,
    PreScoreRule,
    QueueSortRule,
    ReserveRule,
    Rule,
    ScoreRule,
    UnreserveRule,
    Variable,
)
from .policy_set import PolicySet, build_policy_set, load_policy_set
from .positions import Position

__all__ = [
    "API_VERSION",
    "CONFIGURATION_KIND",
    "POLICY_KIND",
    "BindRule",
    "CelExpression",
    "Diagnostic",
    "DiagnosticKind",
    "Enforcement",
    "ExtensionPoint",
    "FailurePolicy",
    "FilterRule",
    "LoadResult",
    "LoadedDocument",
    "Normalization",
    "PermitOnFalse",
    "PermitRule",
    "Policy",
    "PolicySet",
    "Position",
    "PostBindRule",
    "PostFilterRule",
    "PreBindRule",
    "PreEnqueueRule",
    "PreFilterRule",
    "PreScoreRule",
    "QueueSortRule",
    "ReserveRule",
    "Rule",
    "ScoreRule",
    "UnreserveRule",
    "Variable",
    "build_policy_set",
    "compile_policy",
    "load_configmap",
    "load_paths",
    "load_policy_set",
    "load_text",
    "render_json",
    "render_text",
]
