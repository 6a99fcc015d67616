"""Kubernetes' CEL as a subprocess: ``cel-reference`` (deploy/local/kube/cmd/cel-reference),
built and cached by ``deploy/local/cluster.sh build cel-reference``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
CLUSTER_SH = REPO / "deploy" / "local" / "cluster.sh"
BUILD_TIMEOUT = 1800.0  # seconds: a cold Go cache compiles k8s.io/apiserver's CEL packages


class ReferenceUnavailable(Exception):
    """The reference evaluator could not be built or did not answer."""


@dataclass(frozen=True)
class Request:
    """One expression and its variables: name → (declared type, typed JSON value)."""

    expr: str
    variables: dict[str, tuple[str, dict[str, Any]]]

    def line(self) -> str:
        return json.dumps({
            "expr": self.expr,
            "vars": {name: {"type": decl, "value": value}
                     for name, (decl, value) in self.variables.items()},
        })


def binary() -> Path:
    """The cel-reference binary, built first when the cache does not hold it."""
    done = subprocess.run([str(CLUSTER_SH), "build", "cel-reference"], capture_output=True,
                          text=True, timeout=BUILD_TIMEOUT, check=False)
    if done.returncode != 0:
        raise ReferenceUnavailable(
            f"cluster.sh build cel-reference failed (exit {done.returncode}):\n"
            f"{done.stderr[-3000:]}")
    path = subprocess.run([str(CLUSTER_SH), "path", "cel-reference"], capture_output=True,
                          text=True, timeout=60, check=True).stdout.strip()
    return Path(path)


def evaluate(program: Path, requests: Sequence[Request]) -> list[dict[str, Any]]:
    """Each request's answer: ``{"value": ...}``, ``{"compile_error": ...}`` or
    ``{"runtime_error": ...}``, in order."""
    stdin = "".join(r.line() + "\n" for r in requests)
    done = subprocess.run([str(program)], input=stdin, capture_output=True, text=True,
                          timeout=600, check=False)
    if done.returncode != 0:
        raise ReferenceUnavailable(f"cel-reference failed (exit {done.returncode}): "
                             f"{done.stderr[-2000:]}")
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(answers) != len(requests):
        raise ReferenceUnavailable(
            f"cel-reference answered {len(answers)} of {len(requests)} lines")
    return answers
