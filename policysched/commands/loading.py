"""What the offline commands read: policies, a configuration and a cluster file, turned
into frameworks and objects — or a ``UserError`` that says what is wrong, never a traceback.
The configuration and its policy sources are resolved as ``run`` resolves them
(``policy.sources``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..cluster.cluster_file import ClusterFileError, load_cluster_file, start_time
from ..errors import UserError
from ..framework.profiles import ConfigurationError, Engine, build_frameworks
from ..policy import Diagnostic, cel_version, load_policy_set, render_text
from ..policy.limits import DEFAULT_LIMITS
from ..policy.sources import not_enabled, resolve_sources, with_enabled


@dataclass(frozen=True)
class LoadedEngine:
    """The engine, and the warnings to show about what it was built from: sources that
    cannot be read offline, policies enabled by no profile."""

    engine: Engine
    warnings: tuple[Diagnostic, ...]


def load_offline(policy_paths: Sequence[str], config_path: str | None, seed: int = 0,
                 enable: Sequence[str] = ()) -> LoadedEngine:
    """The engine of the configuration (``config_path``, default the built-in one) with
    the policies of its ``policySources`` plus ``policy_paths`` — as ``run`` loads them —
    and each ``NAME[:WEIGHT]`` of ``enable`` added to its first profile. Raises
    ``UserError`` when anything is invalid."""
    sources = resolve_sources(config_path, policy_paths)
    policy_set = load_policy_set(sources.paths, DEFAULT_LIMITS,
                                 cel_version.from_configuration(sources.configuration))
    if not policy_set.valid:
        raise UserError(render_text(policy_set.errors, color=False))
    configuration = with_enabled(sources.configuration, enable)
    try:
        frameworks, settings = build_frameworks(policy_set.policies, configuration)
    except ConfigurationError as e:
        raise UserError(str(e)) from None
    if seed:
        settings = replace(settings, seed=seed)
    warnings = (*sources.offline_notices(),
                *not_enabled(policy_set.policies, configuration, sources.label))
    return LoadedEngine(Engine(frameworks, settings), warnings)


def load_engine(policy_paths: Sequence[str], config_path: str | None, seed: int = 0,
                enable: Sequence[str] = ()) -> Engine:
    """``load_offline``'s engine, its warnings left out."""
    return load_offline(policy_paths, config_path, seed, enable).engine


def load_cluster(path: str, now: float | None) -> tuple[list[dict[str, Any]], float]:
    """The cluster file's objects and the simulated start time."""
    try:
        objects = load_cluster_file(path)
    except ClusterFileError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{path}: {e.strerror}") from None
    return objects, (now if now is not None else float(start_time(objects)))


__all__ = ["Engine", "LoadedEngine", "UserError", "load_cluster", "load_engine", "load_offline"]
