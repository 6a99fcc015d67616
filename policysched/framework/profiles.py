"""A SchedulerConfiguration and a set of compiled policies → one ``Framework`` per profile.

Without a configuration document, one profile ``policysched`` enables every loaded policy in
load order. The built-in configuration is ``policies/scheduler-config.yaml`` beside the
built-in policy library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cel.values import INT64_MAX
from ..policy import ExtensionPoint, Policy
from ..policy.model import ScoreRule
from ..policy.selection import ConfigurationError, PolicyInstance, select
from .runtime import MAX_NODE_SCORE, Framework
from .scheduler import EngineSettings

DEFAULT_SCHEDULER_NAME = "policysched"


@dataclass(frozen=True)
class Engine:
    """What a configuration and its policies make: one ``Framework`` per profile, and the
    engine's settings."""

    frameworks: dict[str, Framework]
    settings: EngineSettings


def build_frameworks(policies: Sequence[Policy], configuration: Mapping[str, Any] | None
                     ) -> tuple[dict[str, Framework], EngineSettings]:
    spec = dict(configuration or {})
    profiles = spec.get("profiles") or [{"schedulerName": DEFAULT_SCHEDULER_NAME}]
    frameworks: dict[str, Framework] = {}
    for profile in profiles:
        name = profile["schedulerName"]
        if name in frameworks:
            raise ConfigurationError(f"profile {name} is declared twice")
        instances = select(profile, policies)
        _check_total_score(name, instances)
        frameworks[name] = Framework(name, instances, _queue_sort(name, profile, instances))
    backoff = spec.get("backoff") or {}
    settings = EngineSettings(
        percentage_of_nodes_to_score=int(spec.get("percentageOfNodesToScore", 0)),
        initial_backoff=float(backoff.get("initialSeconds", 1)),
        max_backoff=float(backoff.get("maxSeconds", 10)),
    )
    return frameworks, settings


def _check_total_score(name: str, instances: Sequence[PolicyInstance]) -> None:
    """kube-scheduler refuses a profile whose total score could overflow int64 (weight x
    100 summed over its score plugins); so does this, over score rules."""
    total = sum(rule.weight * instance.weight * MAX_NODE_SCORE for instance in instances
                for rule in instance.policy.rules_for(ExtensionPoint.SCORE)
                if isinstance(rule, ScoreRule))
    if total > INT64_MAX:
        raise ConfigurationError(
            f"profile {name}: the total score of its score rules could overflow int64 "
            f"(the sum of rule weight x policy weight x {MAX_NODE_SCORE} is {total})")


def _queue_sort(name: str, profile: Mapping[str, Any],
                instances: Sequence[PolicyInstance]) -> PolicyInstance | None:
    sorters = [i for i in instances if i.policy.rules_for(ExtensionPoint.QUEUE_SORT)]
    chosen = profile.get("queueSort")
    if chosen:
        match = [i for i in sorters if i.name == chosen]
        if not match:
            raise ConfigurationError(
                f"profile {name}: queueSort policy {chosen} is not enabled or has no "
                "queueSort rules")
        return match[0]
    if len(sorters) > 1:
        raise ConfigurationError(
            f"profile {name}: several enabled policies sort the queue "
            f"({', '.join(i.name for i in sorters)}); choose one with queueSort")
    return sorters[0] if sorters else None
