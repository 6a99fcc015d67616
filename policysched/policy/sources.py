"""Which configuration and which policy sources a command uses — the one meaning shared by
``run`` and the offline commands (``simulate``, ``explain``, ``test``, ``validate``).

The configuration is the ``--config`` file, else the built-in one
(``policies/scheduler-config.yaml``). Its ``policySources`` say where policies come from
(``directories`` relative to the configuration file; ``configMaps`` watched in the cluster
by ``run``); a configuration without ``policySources`` uses the built-in library. Paths
given with ``--policies`` are added to those sources, they never replace them, and enable
nothing by themselves: a profile of the configuration enables a policy, by name or by its
labels (``policy.selection``; ``--enable`` adds one to the first profile). A policy loaded
but enabled by no profile is a warning, except for the built-in library's own, which is a
catalogue to pick from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..resources import BUILTIN_POLICIES
from . import messages
from .diagnostics import Diagnostic, DiagnosticKind, render_text
from .documents import LoadedDocument
from .model import Policy
from .policy_set import load_policy_set
from .selection import enabled_names

BUILTIN_CONFIGURATION = BUILTIN_POLICIES / "scheduler-config.yaml"


@dataclass(frozen=True)
class ConfigMapSelection:
    """One ``policySources.configMaps`` entry: ConfigMaps of ``namespace`` (None: the
    namespace the scheduler runs in) selected by ``label_selector`` (None: the default
    selector)."""

    namespace: str | None
    label_selector: Mapping[str, Any] | None
    index: int  # in policySources.configMaps, for positions


@dataclass(frozen=True)
class Sources:
    """The configuration (``document``, from ``config_path``) and where policies come
    from: ``paths`` (files and directories, the configuration's first, then the added
    ones) and ``configmaps`` (read from the cluster by ``run`` only)."""

    document: LoadedDocument
    config_path: str
    paths: tuple[str, ...]
    configmaps: tuple[ConfigMapSelection, ...]
    builtin: bool  # the built-in configuration, no --config

    @property
    def label(self) -> str:
        """The configuration as named to the user."""
        return messages.BUILTIN_CONFIGURATION if self.builtin else self.config_path

    @property
    def configuration(self) -> dict[str, Any]:
        return dict(self.document.value)

    def offline_notices(self) -> list[Diagnostic]:
        """A warning per ConfigMap source, which only ``run`` can read."""
        return [replace(self.document.diagnostic(
            ("policySources", "configMaps", c.index), DiagnosticKind.SOURCE,
            messages.CONFIGMAP_SOURCE_OFFLINE.format(
                namespace=c.namespace or messages.OWN_NAMESPACE)),
            severity="warning") for c in self.configmaps]


def configuration_document(config_path: str | None) -> LoadedDocument:
    """The SchedulerConfiguration document of ``config_path`` (default: the built-in
    one). Raises ``UserError`` when the file is invalid or holds none or several."""
    path = str(BUILTIN_CONFIGURATION) if config_path is None else config_path
    found = load_policy_set([path])
    if not found.valid:
        raise UserError(render_text(found.errors, color=False))
    if len(found.configurations) != 1:
        raise UserError(messages.CONFIGURATION_COUNT.format(
            path=path, count=len(found.configurations)))
    return found.configurations[0]


def resolve_sources(config_path: str | None, added: Iterable[str] = ()) -> Sources:
    """The configuration of ``config_path`` (default: the built-in one) and its policy
    sources plus ``added``. Raises ``UserError``."""
    document = configuration_document(config_path)
    path, builtin = document.source, config_path is None
    spec = document.value.get("policySources")
    if spec is None:
        return Sources(document, path, (str(BUILTIN_POLICIES), *added), (), builtin)
    base = Path(path).resolve().parent
    directories = tuple(str(base / d) for d in spec.get("directories") or [])
    configmaps = tuple(ConfigMapSelection(c.get("namespace"), c.get("labelSelector"), i)
                       for i, c in enumerate(spec.get("configMaps") or []))
    return Sources(document, path, (*directories, *added), configmaps, builtin)


def with_enabled(configuration: Mapping[str, Any], enable: Sequence[str]) -> dict[str, Any]:
    """``configuration`` with each ``NAME[:WEIGHT]`` of ``enable`` appended to its first
    profile's enabled policies (a profile without a ``policies`` selection already
    enables everything). Raises ``UserError`` for a malformed entry."""
    out = dict(configuration)
    if not enable:
        return out
    profiles = [dict(p) for p in out.get("profiles") or [{}]]
    first = profiles[0]
    if first.get("policies") is not None:
        selection = dict(first["policies"])
        enabled = [dict(e) for e in selection.get("enabled") or []]
        for entry in enable:
            name, _, weight = entry.partition(":")
            if not name or (weight and not weight.isdigit()):
                raise UserError(messages.BAD_ENABLE.format(entry=entry))
            enabled = [e for e in enabled if e.get("name") != name]
            enabled.append({"name": name, **({"weight": int(weight)} if weight else {})})
        selection["enabled"] = enabled
        first["policies"] = selection
    out["profiles"] = profiles
    return out


def not_enabled(policies: Sequence[Policy], configuration: Mapping[str, Any],
                config_label: str) -> list[Diagnostic]:
    """A warning at each policy (outside the built-in library) that no profile enables."""
    enabled = enabled_names(configuration, policies)
    builtin = BUILTIN_POLICIES.resolve()
    out = []
    for policy in policies:
        if policy.name in enabled or _within(policy.source, builtin):
            continue
        message = messages.NOT_ENABLED.format(name=policy.name, config=config_label,
                                              label=label_hint(configuration))
        out.append(Diagnostic(DiagnosticKind.NOT_ENABLED, message, policy.position.path,
                              policy.position.line, policy.position.column,
                              policy=policy.name, origin=policy.origin, severity="warning"))
    return out


def label_hint(configuration: Mapping[str, Any]) -> str:
    """How to enable a policy through the first profile whose ``policies.selector`` asks
    for a label ("" when none does)."""
    for profile in configuration.get("profiles") or []:
        selector = (profile.get("policies") or {}).get("selector") or {}
        for key, value in (selector.get("matchLabels") or {}).items():
            return messages.NOT_ENABLED_LABEL.format(
                key=key, value=value, profile=profile.get("schedulerName", ""))
    return ""


def _within(source: str, directory: Path) -> bool:
    try:
        return Path(source).resolve().is_relative_to(directory)
    except (OSError, ValueError):
        return False
