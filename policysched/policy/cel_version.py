"""The CEL compatibility version a SchedulerConfiguration selects
(``celCompatibilityVersion``): which Kubernetes release's CEL environment policies are
checked against (``cel.compatibility``). It is the user's promise about their own
policies; the built-in library is written for ``DEFAULT_VERSION`` and compiles at it
whatever the configuration says (a copy of it deployed as a ConfigMap is the user's)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..cel.compatibility import DEFAULT_VERSION, KubernetesVersion, parse_version
from ..errors import UserError
from ..resources import BUILTIN_POLICIES
from . import messages
from .documents import LoadedDocument

CONFIGURATION_KEY = "celCompatibilityVersion"


def from_configuration(configuration: Mapping[str, Any] | None) -> KubernetesVersion:
    """The version a SchedulerConfiguration sets (default: ``DEFAULT_VERSION``). The schema
    refuses an unknown one; for a configuration that was not validated, ``UserError``."""
    text = (configuration or {}).get(CONFIGURATION_KEY)
    if text is None:
        return DEFAULT_VERSION
    try:
        return parse_version(str(text))
    except ValueError as e:
        raise UserError(messages.CEL_VERSION_SETTING.format(key=CONFIGURATION_KEY,
                                                            problem=e)) from None


def for_document(document: LoadedDocument, configured: KubernetesVersion) -> KubernetesVersion:
    """The version ``document`` compiles at: ``configured``, but ``DEFAULT_VERSION`` for a
    file of the built-in library."""
    return DEFAULT_VERSION if _builtin(document.source) else configured


def _builtin(source: str) -> bool:
    try:
        return Path(source).resolve().is_relative_to(BUILTIN_POLICIES.resolve())
    except (OSError, ValueError):
        return False
