"""``policysched validate``: policy files loaded and compiled under the limits of a
configuration, and the one-line summary of the outcome."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..policy import PolicySet, cel_version, load_policy_set
from ..policy import messages as policy_messages
from ..policy.diagnostics import sort_key
from ..policy.limits import DEFAULT_LIMITS, PolicyLimits
from ..policy.sources import configuration_document, not_enabled


def validate(paths: Sequence[str], config_path: str | None = None) -> PolicySet:
    """Everything under ``paths``, checked with the ``policyLimits`` and the
    ``celCompatibilityVersion`` of the configuration at ``config_path`` (the defaults
    without one); with one, a policy none of its profiles enables is a warning. Raises
    ``UserError`` when that configuration is itself invalid."""
    if config_path is None:
        return load_policy_set(paths, DEFAULT_LIMITS)
    configuration = configuration_document(config_path).value
    policy_set = load_policy_set(paths, PolicyLimits.from_configuration(configuration),
                                 cel_version.from_configuration(configuration))
    unused = not_enabled(policy_set.policies, configuration, config_path)
    return replace(policy_set, diagnostics=tuple(sorted((*policy_set.diagnostics, *unused),
                                                        key=sort_key)))


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
