"""``policysched test``: policy test files, in the spirit of ``kyverno test``.

A test file (YAML; one or more documents) holds test cases: a cluster, optionally the
policies and configuration to use, and the expected outcome per pod (docs/testing.md)::

    apiVersion: policysched.io/v1alpha1
    kind: PolicyTest
    name: delay pods wait for their annotation
    now: 1700000000             # optional: simulated start (default: latest creationTimestamp)
    policies: [delay.yaml]      # optional: files/dirs relative to this file, else to the
    config: my-config.yaml      #   built-in library; default: the built-in configuration
    cluster: |                  # multi-document YAML of Nodes, Pods, PodGroups, ...
      ...                       #   (or a path to such a file)
    expect:
      default/web-1: {node: node-a, boundAt: 15}
      default/web-2: {node: null, messageContains: "Insufficient cpu"}

Each case is validated by ``schemas/policytest.schema.json`` with the policy loader's
positioned messages (an unknown key is an error, not a silent pass). Documents without
``apiVersion``/``kind`` (the format before it was versioned) are read as test cases too;
documents of other kinds (policies, manifests kept beside the tests) are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import chain
from pathlib import Path
from typing import Any

from ..cluster.cluster_file import ClusterFileError, parse_cluster, start_time
from ..policy.diagnostics import Diagnostic
from ..policy.documents import (
    API_VERSION,
    CONFIGURATION_KIND,
    POLICY_KIND,
    TEST_KIND,
    LoadedDocument,
)
from ..policy.positions import FileText
from ..policy.schema import validate
from ..policy.yaml_documents import YamlDocument, parse_documents
from ..resources import BUILTIN_POLICIES
from .explain import PASS, Explanation, UnknownPod, explain
from .loading import UserError, load_cluster, load_offline
from .simulate import PodOutcome, simulate

CANNOT_READ = "{path}: cannot read the test file: {reason}"
NO_SUCH_POD = "{pod}: no such pending pod in the cluster"
MISMATCH = "{pod}: {key}: expected {want}, got {got!r}"
BAD_CLUSTER = "`cluster` must be a path or a multi-document YAML string"
NO_SUCH_NODE = "{pod}: {point}: {rule}: no node {node} in the cluster at the pod's last attempt"
NOT_EVALUATED = "not evaluated (no such rule, or its policy does not apply to the pod)"
NOT_SCORED = "not scored (no such rule, or the node did not pass the filters)"

Failure = tuple[tuple[str, ...], str]  # (path under the pod's expectation, message)


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # an expectation did not hold
    ERROR = "error"  # the case could not run: a bad test file, or a bad file it refers to


@dataclass
class CaseResult:
    """One test case: its ``failures`` (expectations that did not hold, or with
    ``status`` ERROR what prevents it from running, each a self-contained message)."""

    path: str
    name: str
    failures: list[str] = field(default_factory=list)
    status: Status = Status.PASSED
    warnings: list[str] = field(default_factory=list)  # loading's (policy not enabled...)

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    def fail(self, message: str) -> None:
        self.failures.append(message)
        if self.status is Status.PASSED:
            self.status = Status.FAILED


def _error(path: str, name: str, messages: list[str]) -> CaseResult:
    return CaseResult(path, name, messages, Status.ERROR)


# -- expectations per pod ------------------------------------------------------------------


def _is(want: Any, got: Any) -> bool:
    return bool(want == got)


def _one_of(want: Any, got: Any) -> bool:
    return got in want


def _contains(want: Any, got: Any) -> bool:
    return isinstance(got, str) and want in got


@dataclass(frozen=True)
class Expectation:
    """A key of a pod's expectation: the outcome attribute it reads, how it compares, and
    how the expected value is shown in a failure."""

    attribute: str
    holds: Callable[[Any, Any], bool] = _is
    shown: str = "{want!r}"


EXPECTATIONS: dict[str, Expectation] = {
    "node": Expectation("node"),
    "nodeIn": Expectation("node", _one_of, "one of {want!r}"),
    "message": Expectation("message"),
    "messageContains": Expectation("message", _contains, "a message containing {want!r}"),
    "boundAt": Expectation("bound_at"),
    "attempts": Expectation("attempts"),
}


PER_RULE = ("filters", "scores")  # expectations on the pod's last attempt, by rule and node
ANY_REJECTION = "reject"  # a filter verdict expected: rejected, for any reason


def check_pod(key: str, expected: dict[str, Any], pod: PodOutcome) -> Iterator[Failure]:
    """A failure for each expectation on ``pod``'s outcome that does not hold."""
    for name, want in expected.items():
        if name in PER_RULE:
            continue
        expectation = EXPECTATIONS[name]
        got = getattr(pod, expectation.attribute)
        if not expectation.holds(want, got):
            shown = expectation.shown.format(want=want)
            yield (name,), MISMATCH.format(pod=key, key=name, want=shown, got=got)


def check_rules(key: str, expected: dict[str, Any],
                explanation: Explanation) -> Iterator[Failure]:
    """A failure for each expected filter verdict or score that the pod's last attempt
    did not give. A rule in audit mode is expected the same way: its verdict and score are
    what it would have given (so the test holds as is once the rule is enforced)."""
    nodes = {n.node: n for n in explanation.nodes}
    for point in PER_RULE:
        for rule, by_node in expected.get(point, {}).items():
            for node_name, want in by_node.items():
                path = (point, rule, node_name)
                node = nodes.get(node_name)
                if node is None:
                    yield path, NO_SUCH_NODE.format(pod=key, point=point, rule=rule,
                                                    node=node_name)
                    continue
                got: Any
                if point == "filters":
                    got = node.filters.get(rule) or node.audit_filters.get(rule,
                                                                           NOT_EVALUATED)
                    holds = _verdict_holds(want, got)
                else:
                    score = node.scores.get(rule) or node.audit_scores.get(rule)
                    got = NOT_SCORED if score is None else score[0]
                    holds = score is not None and want == score[0]
                if not holds:
                    subject = f"{point}: {rule} on {node_name}"
                    yield path, MISMATCH.format(pod=key, key=subject, want=repr(want), got=got)


def _verdict_holds(want: str, got: str) -> bool:
    if got == NOT_EVALUATED:
        return False
    if want in (PASS, ANY_REJECTION):
        return (got == PASS) == (want == PASS)
    return got != PASS and want in got


# -- files and documents ---------------------------------------------------------------------


def find_test_files(paths: list[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        else:
            yield path


def is_test_case(value: Any) -> bool:
    """Whether a document is a test case: kind PolicyTest, no kind (the unversioned
    format), or our apiVersion with an unknown kind (a typo, reported by the schema)."""
    if not isinstance(value, dict) or "kind" not in value:
        return True
    kind = value["kind"]
    return kind == TEST_KIND or (value.get("apiVersion") == API_VERSION
                                 and kind not in (POLICY_KIND, CONFIGURATION_KIND))


def run_file(path: Path, select: str | None = None) -> list[CaseResult]:
    """The results of the test cases in ``path`` whose name contains ``select`` (all when
    None). A case the schema rejects is an ERROR result with positioned messages."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else str(e)
        return [_error(str(path), "", [CANNOT_READ.format(path=path, reason=reason)])]
    documents, diagnostics = parse_documents(text, FileText(str(path), text))
    if diagnostics:
        return [_error(str(path), "", _headlines(diagnostics))]
    results = []
    for index, document in enumerate(documents, 1):
        if not is_test_case(document.value):
            continue
        name = _name(document.value, index)
        if select is None or select in name:
            results.append(run_case(path, name, document))
    return results


def _name(value: Any, index: int) -> str:
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) and name else f"document {index}"


def _headlines(diagnostics: list[Diagnostic]) -> list[str]:
    return [d.headline() for d in diagnostics]


def run_case(path: Path, name: str, document: YamlDocument) -> CaseResult:
    problems = validate(LoadedDocument(TEST_KIND, document))
    if problems:
        return _error(str(path), name, _headlines(problems))
    case: dict[str, Any] = document.value
    result = CaseResult(str(path), name)
    base = path.parent
    try:
        loaded = load_offline(
            [_resolve(base, p) for p in case.get("policies") or []],
            _resolve(base, case["config"]) if case.get("config") else None,
            enable=case.get("enable") or ())
        objects, start = _cluster(base, case["cluster"], case.get("now"))
    except UserError as e:
        return _error(str(path), name, [str(e)])
    engine = loaded.engine
    result.warnings = [w.headline() for w in loaded.warnings]
    outcome = simulate(objects, engine.frameworks, engine.settings, start)
    for key, expected in case["expect"].items():
        pod = outcome.pod(key)
        if pod is None:
            result.fail(_at(document, ("expect", key), NO_SUCH_POD.format(pod=key)))
            continue
        failures = check_pod(key, expected, pod)
        if any(point in expected for point in PER_RULE):
            try:
                explanation = explain(objects, engine.frameworks, engine.settings, start, key)
            except UnknownPod as e:
                return _error(str(path), name, [str(e)])
            failures = chain(failures, check_rules(key, expected, explanation))
        for where, message in failures:
            result.fail(_at(document, ("expect", key, *where), message))
    return result


def _at(document: YamlDocument, path: tuple[str, ...], message: str) -> str:
    """``message`` prefixed with the ``file:line:col`` of the key at ``path``."""
    position = document.position(path, key=True)
    return f"{position.path}:{position.line}:{position.column}: {message}"


def _resolve(base: Path, ref: str) -> str:
    local = base / ref
    return str(local if local.exists() else BUILTIN_POLICIES / ref)


def _cluster(base: Path, cluster: str, now: float | None) -> tuple[list[dict[str, Any]], float]:
    start = None if now is None else float(now)
    if "\n" not in cluster and (base / cluster).exists():
        return load_cluster(str(base / cluster), start)
    try:
        objects = parse_cluster(cluster, "cluster")
    except ClusterFileError as e:
        raise UserError(str(e)) from None
    if not objects:
        raise UserError(BAD_CLUSTER)
    return objects, (start if start is not None else float(start_time(objects)))
