"""``policysched configmap``: policy files, validated, as the ConfigMap manifest to apply to
the cluster (``policysched configmap my-policy.yaml | kubectl apply -f -``) — the running
scheduler watches ConfigMaps labelled ``policysched.io/policy=true`` and hot-reloads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..policy import PolicySet, load_policy_set
from ..policy import messages as policy_messages
from ..policy.configmap_manifest import CONFIGMAP_PREFIX, ManifestError, configmap_manifest
from ..policy.loader import yaml_files


@dataclass(frozen=True)
class Wrapped:
    """The validation of the files (print its diagnostics) and, when valid, the manifest."""

    policy_set: PolicySet
    manifest: str | None


def wrap(paths: Sequence[str], namespace: str, name: str | None = None) -> Wrapped:
    """The ConfigMap of the policy files under ``paths`` (one key per file, its name), or
    only the validation when a policy is invalid. Raises ``UserError`` for a file that
    holds something other than policies, or two files of the same name."""
    files = [Path(f) for p in paths for f in (yaml_files(p) if Path(p).is_dir() else [p])]
    policy_set = load_policy_set(files)
    if not policy_set.valid:
        return Wrapped(policy_set, None)
    if policy_set.configurations:
        raise UserError(policy_messages.CONFIGMAP_NOT_POLICY.format(
            path=policy_set.configurations[0].source, kind="SchedulerConfiguration"))
    for policy in policy_set.policies:
        if policy.origin is not None:  # already in a ConfigMap
            raise UserError(policy_messages.CONFIGMAP_NOT_POLICY.format(
                path=policy.source, kind="ConfigMap"))
    data: dict[str, str] = {}
    for file in files:
        if file.name in data:
            raise UserError(policy_messages.CONFIGMAP_DUPLICATE_KEY.format(
                path=file, key=file.name))
        data[file.name] = file.read_text(encoding="utf-8")
    if name is None:
        name = CONFIGMAP_PREFIX + policy_set.policies[0].name
    try:
        return Wrapped(policy_set, configmap_manifest(name, namespace, data))
    except ManifestError as e:
        raise UserError(str(e)) from None
