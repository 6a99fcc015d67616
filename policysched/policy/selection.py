"""Which loaded policies a profile of a SchedulerConfiguration enables, with which params and
weight — the one reading of ``profiles[].policies`` shared by the engine's profiles and the
commands' "enabled by no profile" warning.

A profile without ``policies`` enables every loaded policy, in load order. Otherwise:
first the ``enabled`` entries, in their order (with their ``weight`` and ``params``); then,
unless ``disabled`` holds ``*``, every other loaded policy not disabled by name; and, with
``selector`` (a label selector over the policies' ``metadata.labels``), every other loaded
policy it selects that is not disabled by name (``*`` does not stop a selector: it is how a
new policy enables itself, so applying or deleting its ConfigMap is enough). Policies
added by the last two steps run in load order, with their own params and weight 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..model.selectors import SelectorError, label_selector
from . import messages
from .model import Policy


class ConfigurationError(ValueError):
    """A configuration that names unknown policies or params, or is ambiguous."""


@dataclass(frozen=True)
class PolicyInstance:
    """A policy as a profile enables it: params after the profile's overrides, and the
    profile's weight multiplier for its score rules."""

    policy: Policy
    params: Mapping[str, Any] = field(default_factory=dict)
    weight: int = 1

    @cached_property  # read for every rule of every pod
    def name(self) -> str:
        return self.policy.name


def select(profile: Mapping[str, Any], policies: Sequence[Policy]) -> list[PolicyInstance]:
    """The policies ``profile`` enables, in the order their rules run. Raises
    ``ConfigurationError`` for an unknown policy or param, or an invalid selector."""
    name = profile.get("schedulerName", "")
    selection = profile.get("policies")
    if selection is None:
        return [PolicyInstance(p, dict(p.params)) for p in policies]
    by_name = {p.name: p for p in policies}
    out: list[PolicyInstance] = []
    for entry in selection.get("enabled") or []:
        policy = by_name.get(entry["name"])
        if policy is None:
            raise ConfigurationError(messages.UNKNOWN_POLICY.format(
                profile=name, policy=entry["name"]))
        overrides = entry.get("params") or {}
        unknown = sorted(set(overrides) - set(policy.params))
        if unknown:
            raise ConfigurationError(messages.UNKNOWN_PARAMS.format(
                profile=name, params=", ".join(unknown), policy=policy.name))
        out.append(PolicyInstance(policy, {**policy.params, **overrides},
                                  int(entry.get("weight", 1))))
    listed = {i.name for i in out}
    disabled = {d["name"] for d in selection.get("disabled") or []}
    selector_object = selection.get("selector")
    try:
        selector = None if selector_object is None else label_selector(selector_object)
    except SelectorError as e:
        raise ConfigurationError(messages.BAD_POLICY_SELECTOR.format(
            profile=name, problem=e)) from None
    for policy in policies:
        if policy.name in listed or policy.name in disabled:
            continue
        if "*" not in disabled or (selector is not None and selector.matches(policy.labels)):
            out.append(PolicyInstance(policy, dict(policy.params)))
    return out


def enabled_names(configuration: Mapping[str, Any], policies: Iterable[Policy]) -> set[str]:
    """The names of the ``policies`` some profile of ``configuration`` enables (a profile
    that cannot be read enables what it lists by name)."""
    policies = list(policies)
    enabled: set[str] = set()
    for profile in configuration.get("profiles") or [{}]:
        try:
            enabled |= {i.name for i in select(profile, policies)}
        except ConfigurationError:
            selection = profile.get("policies") or {}
            enabled |= {e["name"] for e in selection.get("enabled") or []}
    return enabled
