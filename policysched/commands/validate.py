"""``policysched validate``: policy files loaded and compiled under the limits of a
configuration, and the one-line summary of the outcome."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UserError
from ..policy import PolicySet, load_policy_set, render_text
from ..policy import messages as policy_messages
from ..policy.limits import DEFAULT_LIMITS, PolicyLimits


def validate(paths: Sequence[str], config_path: str | None = None) -> PolicySet:
    """Everything under ``paths``, checked with the ``policyLimits`` of the configuration
    at ``config_path`` (the defaults without one). Raises ``UserError`` when that
    configuration is itself invalid."""
    limits = DEFAULT_LIMITS
    if config_path is not None:
        configuration = load_policy_set([config_path])
        if not configuration.valid:
            raise UserError(render_text(configuration.errors, color=False))
        found = configuration.configurations
        limits = PolicyLimits.from_configuration(found[0].value if found else None)
    return load_policy_set(paths, limits)


def summary(policy_set: PolicySet) -> str:
    """"3 policies and 1 configuration are valid (4 files)", or the count of errors; then
    the count of warnings, if any."""
    files = policy_messages.count(len(policy_set.files), "file")
    if not policy_set.valid:
        errors = policy_messages.count(len(policy_set.errors), "error")
        text = policy_messages.SUMMARY_INVALID.format(errors=errors, files=files)
    else:
        valid = policy_messages.count(len(policy_set.policies), "policy")
        if policy_set.configurations:
            valid += " and " + policy_messages.count(len(policy_set.configurations),
                                                     "configuration")
        text = policy_messages.SUMMARY_VALID.format(policies=valid, files=files)
    if not policy_set.warnings:
        return text
    warnings = policy_messages.count(len(policy_set.warnings), "warning")
    return policy_messages.SUMMARY_WARNINGS.format(summary=text, warnings=warnings)
