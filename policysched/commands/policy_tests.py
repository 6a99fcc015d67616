"""``policysched test``: policy test files, in the spirit of ``kyverno test``.

A test file (YAML; one or more documents) holds a cluster, optionally the policies and
configuration to use, and the expected outcome per pod::

    name: delay pods wait for their annotation
    now: 1700000000             # optional: simulated start (default: latest creationTimestamp)
    policies: [delay.yaml]      # optional: files/dirs relative to this file, else to the
    config: my-config.yaml      #   built-in library; default: the built-in configuration
    cluster: |                  # multi-document YAML of Nodes, Pods, PodGroups, ...
      ...                       #   (or a path to such a file)
    expect:
      default/web-1: {node: node-a, boundAt: 15}
      default/web-2: {node: null, message: "0/3 nodes are available: 3 Insufficient cpu."}

Only the keys given under a pod are compared (``node``, ``boundAt``, ``attempts``,
``message``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..cluster.cluster_file import ClusterFileError, parse_cluster, start_time
from ..resources import BUILTIN_POLICIES
from .loading import UserError, load_cluster, load_engine
from .simulate import simulate

EXPECTED_KEYS = {"node": "node", "boundAt": "bound_at", "attempts": "attempts",
                 "message": "message"}


@dataclass
class CaseResult:
    path: str
    name: str
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def find_test_files(paths: list[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        else:
            yield path


def _resolve(base: Path, ref: str) -> str:
    local = base / ref
    return str(local if local.exists() else BUILTIN_POLICIES / ref)


def run_file(path: Path) -> list[CaseResult]:
    """The results of the test documents in ``path``; Kubernetes-style documents (with a
    ``kind``: policies, manifests kept beside the tests) are not tests and are skipped."""
    try:
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        return [CaseResult(str(path), "", [f"cannot read the test file: {e}"])]
    return [run_case(path, index, doc) for index, doc in enumerate(documents, 1)
            if not (isinstance(doc, dict) and "kind" in doc)]


def run_case(path: Path, index: int, case: Any) -> CaseResult:
    name = case.get("name", f"document {index}") if isinstance(case, dict) else ""
    result = CaseResult(str(path), str(name))
    if not isinstance(case, dict) or not isinstance(case.get("expect"), dict):
        result.failures.append("a test needs a mapping with `cluster` and `expect`")
        return result
    base = path.parent
    try:
        engine = load_engine(
            [_resolve(base, p) for p in case.get("policies") or []],
            _resolve(base, case["config"]) if case.get("config") else None)
        objects, start = _cluster(base, case.get("cluster"), case.get("now"))
    except UserError as e:
        result.failures.append(str(e))
        return result
    outcome = simulate(objects, engine.frameworks, engine.settings, start)
    for key, expected in case["expect"].items():
        pod = outcome.pod(str(key))
        if pod is None:
            result.failures.append(f"{key}: no such pending pod in the cluster")
            continue
        for field_name, attribute in EXPECTED_KEYS.items():
            if not isinstance(expected, dict) or field_name not in expected:
                continue
            want, got = expected[field_name], getattr(pod, attribute)
            if want != got:
                result.failures.append(f"{key}: {field_name}: expected {want!r}, got {got!r}")
    return result


def _cluster(base: Path, cluster: Any, now: Any) -> tuple[list[dict[str, Any]], float]:
    if not isinstance(cluster, str):
        raise UserError("`cluster` must be a path or a multi-document YAML string")
    start = None if now is None else float(now)
    if "\n" not in cluster and (base / cluster).exists():
        return load_cluster(str(base / cluster), start)
    try:
        objects = parse_cluster(cluster, "cluster")
    except ClusterFileError as e:
        raise UserError(str(e)) from None
    return objects, (start if start is not None else float(start_time(objects)))
