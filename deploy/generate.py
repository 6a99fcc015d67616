#!/usr/bin/env python3
"""Generate the deploy/ files that are derived from policies/ (kustomize refuses files
outside its root, so they are generated here and committed):

* ``deploy/policies-configmap.yaml`` — one ConfigMap per built-in policy file
  (``policies/<name>.yaml`` → ConfigMap ``policysched-policy-<name>``, key ``<name>.yaml``,
  the file verbatim so diagnostics name the same lines), labelled
  ``policysched.io/policy: "true"`` in ``policysched-system``: the policies the Deployment
  watches and hot-reloads;
* ``deploy/scheduler-config.yaml`` — ``policies/scheduler-config.yaml``'s profiles, with
  the policies read from those ConfigMaps, leader election on a Lease in
  ``policysched-system`` and /healthz, /readyz, /metrics on port 10259.

Usage: ``make deploy-files`` or ``python deploy/generate.py`` (write), or ``--check``
(exit 1 and name the stale files when they differ from what would be generated).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parent
REPO = DEPLOY.parent
sys.path.insert(0, str(REPO))  # the checkout's policysched, installed or not

from policysched.policy.configmap_manifest import (  # noqa: E402
    CONFIGMAP_PREFIX,
    DEPLOY_NAMESPACE,
    POLICY_LABEL,
    ManifestError,
    configmap_manifest,
)

POLICIES = REPO / "policies"
BUILTIN_CONFIGURATION = "scheduler-config.yaml"

NAMESPACE = DEPLOY_NAMESPACE
APP_LABEL = ("app.kubernetes.io/name", "policysched")
LEASE_NAME = "policysched"
HEALTHZ_BIND_ADDRESS = "0.0.0.0:10259"

POLICIES_OUT = DEPLOY / "policies-configmap.yaml"
CONFIGURATION_OUT = DEPLOY / "scheduler-config.yaml"

HEADER = "# Generated from {source} by deploy/generate.py: do not edit.\n"


def policy_files() -> list[Path]:
    """The built-in policy files (every policies/*.yaml but the configuration)."""
    return sorted(p for p in POLICIES.glob("*.yaml") if p.name != BUILTIN_CONFIGURATION)


def configmap(path: Path) -> str:
    """The ConfigMap document of one policy file."""
    try:
        document = configmap_manifest(f"{CONFIGMAP_PREFIX}{path.stem}", NAMESPACE,
                                      {path.name: path.read_text(encoding="utf-8")},
                                      {APP_LABEL[0]: APP_LABEL[1]})
    except ManifestError as e:
        raise SystemExit(f"{path}: {e}") from None
    return HEADER.format(source=f"policies/{path.name}") + document


def policies_configmaps() -> str:
    return "---\n".join(configmap(p) for p in policy_files())


def scheduler_configuration() -> str:
    """The Deployment's SchedulerConfiguration: the built-in profiles, policies from the
    ConfigMaps, leader election, the health/metrics address."""
    source = POLICIES / BUILTIN_CONFIGURATION
    builtin: dict[str, Any] = yaml.safe_load(source.read_text(encoding="utf-8"))
    configuration: dict[str, Any] = {
        "apiVersion": builtin["apiVersion"],
        "kind": builtin["kind"],
        "policySources": {"configMaps": [{
            "labelSelector": {"matchLabels": {POLICY_LABEL: "true"}},
        }]},
        "leaderElection": {
            "leaderElect": True,
            "leaseName": LEASE_NAME,
        },
        "healthzBindAddress": HEALTHZ_BIND_ADDRESS,
    }
    for key, value in builtin.items():
        if key not in configuration and key != "policySources":
            configuration[key] = value
    comment = (
        "# The configuration of deploy/deployment.yaml (kustomize puts it in the ConfigMap\n"
        "# policysched-config): the profiles of policies/scheduler-config.yaml; the policies\n"
        f"# come from the ConfigMaps labelled {POLICY_LABEL}=true in the scheduler's own\n"
        f"# namespace ({NAMESPACE}, or an overlay's; deploy/policies-configmap.yaml),\n"
        f"# watched and hot-reloaded; only the holder of the Lease {LEASE_NAME} there schedules.\n")
    body = yaml.safe_dump(configuration, sort_keys=False, default_flow_style=False, width=100)
    return HEADER.format(source=f"policies/{BUILTIN_CONFIGURATION}") + comment + body


def outputs() -> dict[Path, str]:
    return {POLICIES_OUT: policies_configmaps(), CONFIGURATION_OUT: scheduler_configuration()}


def stale() -> list[Path]:
    """The generated files whose content differs from what would be generated now."""
    return [path for path, text in outputs().items()
            if not path.exists() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that the generated files are up to date")
    args = parser.parse_args(argv)
    if args.check:
        out_of_date = stale()
        for path in out_of_date:
            print(f"{path.relative_to(REPO)} is out of date: run make deploy-files",
                  file=sys.stderr)
        return 1 if out_of_date else 0
    for path, text in outputs().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
