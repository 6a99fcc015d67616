"""Bounds on policy input, so that no policy text can exhaust the process.

Each limit is checked as early as it can be: the size of a file or ConfigMap value before
it is parsed; the number of documents, the nesting depth and the expansion of YAML
aliases while it is parsed; the number of rules and variables and the length of every
expression before anything is compiled; the time a hot reload of ``policysched run``
spends compiling, before each expression. A violation is a positioned diagnostic naming
the limit and where it is set.

The defaults are generous for real policies (the largest shipped file is 21 kB, its
longest expression 1,622 characters, its most rules 16 and most variables 50) and small
enough that hostile input is refused in milliseconds. They are changed with the
``policyLimits`` block of the SchedulerConfiguration (``validate --config`` applies it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import messages

CONFIGURATION_KEY = "policyLimits"


@dataclass(frozen=True)
class PolicyLimits:
    """The limits; each field's ``key`` metadata is its name in ``policyLimits``."""

    max_bytes: int = dataclasses.field(default=256 * 1024, metadata={"key": "maxBytes"})
    """Size of one file, or of one ConfigMap value, in bytes (UTF-8)."""
    max_documents: int = dataclasses.field(default=200, metadata={"key": "maxDocuments"})
    """YAML documents (and List items) in one file or ConfigMap value."""
    max_depth: int = dataclasses.field(default=100, metadata={"key": "maxDepth"})
    """Levels of nested mappings and lists in a document (aliases expanded)."""
    max_alias_expansion: int = dataclasses.field(
        default=2, metadata={"key": "maxAliasExpansion"})
    """What YAML aliases (and merge keys) may add to a text, as a multiple of its size."""
    max_expression_length: int = dataclasses.field(
        default=10_000, metadata={"key": "maxExpressionLength"})
    """Characters of one CEL expression."""
    max_rules: int = dataclasses.field(default=256, metadata={"key": "maxRules"})
    """Rules of one policy, all extension points together."""
    max_variables: int = dataclasses.field(default=256, metadata={"key": "maxVariables"})
    """Entries of one policy's ``spec.variables``."""
    compile_timeout_seconds: float = dataclasses.field(
        default=10.0, metadata={"key": "compileTimeoutSeconds"})
    """Time a reload of ``policysched run`` may spend compiling policies that changed."""

    @classmethod
    def from_configuration(cls, configuration: Mapping[str, Any] | None) -> PolicyLimits:
        """The limits of a (schema-valid) SchedulerConfiguration; defaults for those it
        does not set."""
        block = (configuration or {}).get(CONFIGURATION_KEY) or {}
        given = {f.name: block[f.metadata["key"]] for f in dataclasses.fields(cls)
                 if f.metadata["key"] in block}
        return cls(**given)

    def message(self, template: str, name: str, **fields: Any) -> str:
        """``template`` filled with the limit ``name`` (a field name), where it is set, and
        ``fields``."""
        setting = messages.LIMIT_SETTING.format(key=_KEYS[name])
        return template.format(limit=getattr(self, name), setting=setting, **fields)


_KEYS = {f.name: f.metadata["key"] for f in dataclasses.fields(PolicyLimits)}

DEFAULT_LIMITS = PolicyLimits()
