"""`policysched test`: the PolicyTest format (schema, positions, unversioned files), the
expectations per pod, the -k filter, JSON and JUnit reports and the exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from policysched.cli import main
from policysched.commands.policy_tests import EXPECTATIONS, PER_RULE, Status, run_file
from policysched.policy.documents import TEST_KIND
from policysched.policy.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]

CLUSTER = """\
cluster: |
  apiVersion: v1
  kind: Node
  metadata: {name: node-a}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
  ---
  apiVersion: v1
  kind: Node
  metadata: {name: node-b}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
  ---
  apiVersion: v1
  kind: Pod
  metadata: {name: small, namespace: default, creationTimestamp: "2023-11-14T22:13:20Z"}
  spec:
    schedulerName: policysched
    containers: [{name: c, resources: {requests: {cpu: "1"}}}]
  ---
  apiVersion: v1
  kind: Pod
  metadata: {name: big, namespace: default, creationTimestamp: "2023-11-14T22:13:20Z"}
  spec:
    schedulerName: policysched
    containers: [{name: c, resources: {requests: {cpu: "3"}}}]
"""
HEADER = "apiVersion: policysched.io/v1alpha1\nkind: PolicyTest\n"


def case(name: str, expect: str, header: str = HEADER) -> str:
    """A test document on the two-node cluster above (small fits, big never does)."""
    return f"{header}name: {name}\nnow: 1700000000\n{CLUSTER}expect:\n{expect}"


PASSING = case("small fits, big does not",
               "  default/small: {nodeIn: [node-a, node-b], boundAt: 0, message: null}\n"
               "  default/big: {node: null, messageContains: Insufficient cpu, attempts: 1}\n")
FAILING = case("big is expected to fit",
               "  default/big: {nodeIn: [node-a], messageContains: Insufficient memory}\n")


def write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["test", *args])


def test_every_expectation_kind_passes_when_it_holds(tmp_path: Path) -> None:
    result = run(str(write(tmp_path, PASSING)))
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed" in result.output


def test_node_in_and_message_contains_fail_with_what_differed(tmp_path: Path) -> None:
    path = write(tmp_path, FAILING)
    result = run(str(path))
    assert result.exit_code == 1, result.output
    assert (f"{path}:" in result.output
            and "default/big: nodeIn: expected one of ['node-a'], got None" in result.output)
    assert ("default/big: messageContains: expected a message containing "
            "'Insufficient memory', got '0/2 nodes are available: 2 Insufficient cpu."
            in result.output)


def test_a_failure_points_at_its_expectation(tmp_path: Path) -> None:
    (result,) = run_file(write(tmp_path, FAILING))
    line = FAILING.splitlines().index("  default/big: {nodeIn: [node-a], messageContains: "
                                      "Insufficient memory}") + 1
    assert result.failures[0].startswith(f"{tmp_path / 'case.yaml'}:{line}:17: ")


@pytest.mark.parametrize("expect, field, column", [
    ("  default/small: {nodeName: node-a}\n", "nodeName", 19),
    ("  default/small: {node: node-a, mesage: x}\n", "mesage", 33),
])
def test_an_unknown_key_is_an_error_with_its_position_not_a_pass(
        tmp_path: Path, expect: str, field: str, column: int) -> None:
    text = case("typo", expect)
    path = write(tmp_path, text)
    result = run(str(path))
    assert result.exit_code == 2, result.output
    line = len(text.splitlines())
    assert f"{path}:{line}:{column}: unknown field \"{field}\"" in result.output
    assert "Traceback" not in result.output and "0 passed, 0 failed, 1 error" in result.output


def test_schema_errors_of_the_test_document_itself(tmp_path: Path) -> None:
    text = case("bad", "  small: {node: 3}\n", header=HEADER.replace("PolicyTest", "PolicyTst"))
    (result,) = run_file(write(tmp_path, text))
    assert result.status is Status.ERROR
    joined = "\n".join(result.failures)
    assert ":2:7: " in joined and "PolicyTest" in joined  # the kind typo
    assert "must be namespace/name" in joined


def test_a_yaml_error_is_positioned_and_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "expect: {a: [}\n")
    result = run(str(path))
    assert result.exit_code == 2
    assert f"{path}:3:" in result.output and "Traceback" not in result.output


def test_a_missing_cluster_file_is_an_error_not_a_failure(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "cluster: nowhere.yaml\nexpect: {default/p: {node: n}}\n")
    result = run(str(path))
    assert result.exit_code == 2, result.output
    assert result.output.startswith("ERROR ")


def test_unversioned_files_are_still_read_and_checked(tmp_path: Path) -> None:
    assert run(str(write(tmp_path, case("old", "  default/small: {node: node-b}\n",
                                        header="")))).exit_code == 0
    typo = run(str(write(tmp_path, case("old", "  default/small: {nodeName: x}\n",
                                        header=""), "typo.yaml")))
    assert typo.exit_code == 2 and 'unknown field "nodeName"' in typo.output


def test_a_loaded_policy_no_profile_enables_is_shown_as_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "apiVersion: policysched.io/v1alpha1\nkind: SchedulingPolicy\n"
          "metadata: {name: idle}\nspec:\n  filter:\n  - {name: f, expression: 'false'}\n",
          "idle.yaml")
    path = write(tmp_path, PASSING.replace("now: 1700000000\n",
                                           "now: 1700000000\npolicies: [idle.yaml]\n"))
    result = run(str(path))
    assert result.exit_code == 0, result.output  # not enabled: its filter rejects nothing
    assert f"    {tmp_path / 'idle.yaml'}:1:1: idle: warning: policy idle is enabled by no " \
        "profile" in result.output
    report = json.loads(run("-o", "json", str(path)).output)
    (warning,) = report["files"][0]["cases"][0]["warnings"]
    assert "policysched.io/profile: policysched" in warning


def test_k_runs_only_the_matching_cases(tmp_path: Path) -> None:
    path = write(tmp_path, PASSING + "---\n" + FAILING)
    only_passing = run("-k", "small fits", str(path))
    assert only_passing.exit_code == 0, only_passing.output
    assert "1 passed, 0 failed" in only_passing.output and "big is expected" not in \
        only_passing.output
    assert run("-k", "expected to fit", str(path)).exit_code == 1
    nothing = run("-k", "no such case", str(path))
    assert nothing.exit_code == 2 and "no test case found" in nothing.output


def test_json_report_per_file_and_case(tmp_path: Path) -> None:
    good = write(tmp_path, PASSING, "good.yaml")
    bad = write(tmp_path, FAILING, "bad.yaml")
    result = run("-o", "json", str(good), str(bad))
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert (report["passed"], report["failed"], report["errors"]) == (1, 1, 0)
    assert [f["path"] for f in report["files"]] == [str(good), str(bad)]
    (passed,) = report["files"][0]["cases"]
    assert passed == {"name": "small fits, big does not", "status": "passed", "failures": [],
                      "warnings": []}
    (failed,) = report["files"][1]["cases"]
    assert failed["status"] == "failed" and len(failed["failures"]) == 2


def test_junit_report(tmp_path: Path) -> None:
    path = write(tmp_path, PASSING + "---\n" + FAILING)
    typo = write(tmp_path, case("typo", "  default/small: {nodeName: x}\n"), "typo.yaml")
    junit = tmp_path / "report.xml"
    result = run("--junit", str(junit), str(path), str(typo))
    assert result.exit_code == 2  # an invalid file outranks a failed expectation
    root = ET.parse(junit).getroot()
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == (
        "testsuites", "3", "1", "1")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert list(cases["small fits, big does not"]) == []
    (failure,) = cases["big is expected to fit"]
    assert failure.tag == "failure" and "nodeIn" in (failure.text or "")
    (error,) = cases["typo"]
    assert error.tag == "error" and "nodeName" in error.get("message", "")


def test_files_of_other_documents_are_skipped() -> None:
    result = run(str(ROOT / "examples"))
    assert result.exit_code == 0, result.output
    tests = len(list((ROOT / "examples").rglob("*-test.yaml")))
    assert tests >= 2
    assert "cluster.yaml" not in result.output
    assert f"{tests} passed, 0 failed" in result.output


def test_shipped_test_files_are_versioned() -> None:
    shipped = [p for p in (ROOT / "tests" / "policies" / "scenarios").glob("*.yaml")
               if p.name != "library-config.yaml"] + list(ROOT.glob("examples/*/*-test.yaml"))
    assert shipped
    for path in shipped:
        text = path.read_text()
        assert text.startswith("# yaml-language-server: $schema="), path
        assert text.count("kind: PolicyTest") == text.count("\nname: "), path


RULES = case("verdicts and scores per rule and node", """\
  default/big:
    filters:
      node-resources-fit/fits-request: {node-a: Insufficient cpu, node-b: reject}
      node-ports/free-host-ports: {node-a: pass}
  default/small:
    scores:
      node-resources-fit/least-allocated: {node-a: 72, node-b: 72}
""")


def test_filter_verdicts_and_scores_per_rule_and_node(tmp_path: Path) -> None:
    assert run(str(write(tmp_path, RULES))).exit_code == 0


@pytest.mark.parametrize("change, failure", [
    (("node-b: reject", "node-b: pass"),
     "default/big: filters: node-resources-fit/fits-request on node-b: expected 'pass', "
     "got 'Insufficient cpu'"),
    (("{node-a: pass}", "{node-a: reject}"),
     "node-ports/free-host-ports on node-a: expected 'reject', got 'pass'"),
    (("node-a: Insufficient cpu", "node-a: Insufficient memory"),
     "expected 'Insufficient memory', got 'Insufficient cpu'"),
    (("node-ports/free-host-ports", "node-ports/no-such-rule"),
     "node-ports/no-such-rule on node-a: expected 'pass', got 'not evaluated"),
    (("node-b: 72}", "node-b: 50}"),
     "default/small: scores: node-resources-fit/least-allocated on node-b: expected 50, "
     "got 72"),
    (("node-b: 72}", "node-z: 72}"),
     "node-resources-fit/least-allocated: no node node-z in the cluster"),
])
def test_a_wrong_verdict_or_score_fails(tmp_path: Path, change: tuple[str, str],
                                        failure: str) -> None:
    result = run(str(write(tmp_path, RULES.replace(*change))))
    assert result.exit_code == 1, result.output
    assert failure in result.output


def test_the_schema_and_the_runner_know_the_same_expectations() -> None:
    schema = load_schema(TEST_KIND)["$defs"]["podExpectation"]["properties"]
    assert set(schema) == set(EXPECTATIONS) | set(PER_RULE)


def test_a_rule_in_audit_mode_is_expected_by_its_would_be_verdicts_and_scores() -> None:
    """examples/ssd-trial: the pod's node is the one chosen without the audited policy,
    and the audited rules' verdicts and scores are what they would have been."""
    result = run(str(ROOT / "examples" / "ssd-trial" / "ssd-trial-test.yaml"))
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed" in result.output
