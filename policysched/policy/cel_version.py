"""The CEL compatibility version a SchedulerConfiguration selects
(``celCompatibilityVersion``): which Kubernetes release's CEL environment policies are
checked against (``cel.compatibility``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cel.compatibility import DEFAULT_VERSION, KubernetesVersion, parse_version
from ..errors import UserError
from . import messages

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
