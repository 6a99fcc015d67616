"""A document found in a policy source, before validation: its kind, data and positions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .diagnostics import Diagnostic, DiagnosticKind
from .model import ExtensionPoint
from .positions import Position
from .yaml_documents import Path, YamlDocument

API_VERSION = "policysched.io/v1alpha1"
POLICY_KIND = "SchedulingPolicy"
CONFIGURATION_KIND = "SchedulerConfiguration"
TEST_KIND = "PolicyTest"  # a test case of `policysched test`

_POINTS = frozenset(p.value for p in ExtensionPoint)


@dataclass(frozen=True)
class LoadedDocument:
    """A SchedulingPolicy or SchedulerConfiguration document. ``origin`` is the ConfigMap
    key (``namespace/name[key]``) it was embedded in, if any."""

    kind: str
    yaml: YamlDocument
    origin: str | None = None

    @property
    def value(self) -> Any:
        return self.yaml.value

    @property
    def source(self) -> str:
        return self.yaml.origin.label

    @property
    def position(self) -> Position:
        return self.yaml.position(())

    @property
    def name(self) -> str | None:
        """``metadata.name`` when it is a string."""
        metadata = self.value.get("metadata") if isinstance(self.value, dict) else None
        name = metadata.get("name") if isinstance(metadata, dict) else None
        return name if isinstance(name, str) and name else None

    def rule_name(self, path: Path) -> str | None:
        """The name of the rule that ``path`` (``spec.<point>[i]...``) is inside."""
        if len(path) < 3 or path[0] != "spec" or path[1] not in _POINTS:
            return None
        spec = self.value.get("spec")
        rules = spec.get(path[1]) if isinstance(spec, dict) else None
        index = path[2]
        if not isinstance(rules, list) or not isinstance(index, int) or index >= len(rules):
            return None
        rule = rules[index]
        name = rule.get("name") if isinstance(rule, dict) else None
        return name if isinstance(name, str) and name else f"{path[1]}[{index}]"

    def diagnostic(
        self, path: Path, kind: DiagnosticKind, message: str, *, key: bool = False
    ) -> Diagnostic:
        """A diagnostic at ``path``, attributed to this policy and the rule around it."""
        return self.attribute(self.yaml.diagnostic(path, kind, message, key=key), path)

    def attribute(self, diagnostic: Diagnostic, path: Path) -> Diagnostic:
        policy = self.name if self.kind == POLICY_KIND else None
        return diagnostic.within(policy, self.rule_name(path), self.origin)
