"""What the offline commands read: policies, a configuration and a cluster file, turned
into frameworks and objects — or a ``UserError`` that says what is wrong, never a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..cluster.cluster_file import ClusterFileError, load_cluster_file, start_time
from ..errors import UserError
from ..framework.profiles import ConfigurationError, Engine, build_frameworks
from ..policy import load_policy_set, render_text
from ..resources import BUILTIN_POLICIES


def load_engine(policy_paths: Sequence[str], config_path: str | None, seed: int = 0) -> Engine:
    """Policies (default: the built-in library) and the configuration (default: the
    built-in one when using the built-in library, else one profile with every policy)."""
    paths = list(policy_paths) or [str(BUILTIN_POLICIES)]
    if config_path is not None:
        paths.append(config_path)
    policy_set = load_policy_set(paths)
    if not policy_set.valid:
        raise UserError(render_text(policy_set.errors, color=False))
    configuration: dict[str, Any] | None = None
    chosen = [c for c in policy_set.configurations
              if config_path is not None and Path(c.source).resolve() == Path(
                  config_path).resolve()]
    if not chosen and not policy_paths and config_path is None:
        chosen = list(policy_set.configurations)
    if len(chosen) > 1:
        raise UserError("several SchedulerConfiguration documents found; give one with "
                        "--config")
    if chosen:
        configuration = dict(chosen[0].value)
    try:
        frameworks, settings = build_frameworks(policy_set.policies, configuration)
    except ConfigurationError as e:
        raise UserError(str(e)) from None
    if seed:
        settings = replace(settings, seed=seed)
    return Engine(frameworks, settings)


def load_cluster(path: str, now: float | None) -> tuple[list[dict[str, Any]], float]:
    """The cluster file's objects and the simulated start time."""
    try:
        objects = load_cluster_file(path)
    except ClusterFileError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{path}: {e.strerror}") from None
    return objects, (now if now is not None else float(start_time(objects)))


__all__ = ["Engine", "UserError", "load_cluster", "load_engine"]
