"""`policysched simulate`, `explain` and `test` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from policysched.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "examples" / "demo-cluster.yaml")
SCENARIOS = ROOT / "tests" / "framework" / "scenarios"


def test_simulate_json_contract() -> None:
    result = CliRunner().invoke(main, ["simulate", "--cluster", DEMO, "--output", "json"])
    assert result.exit_code == 0, result.output
    pods = json.loads(result.output)["pods"]
    assert pods and all(set(p) >= {"namespace", "name", "node", "boundAt", "attempts",
                                   "message"} for p in pods)
    by_name = {p["name"]: p for p in pods}
    assert by_name["delayed"]["boundAt"] == 15 and by_name["delayed"]["node"]
    assert by_name["too-big"]["node"] is None
    assert by_name["too-big"]["message"].startswith("0/4 nodes are available:")
    gang = [by_name[f"trainer-{i}"] for i in range(3)]
    assert all(p["node"] and p["boundAt"] == 0 for p in gang)


def test_simulate_table() -> None:
    result = CliRunner().invoke(main, ["simulate", "--cluster", DEMO])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("POD")
    assert "pods bound in" in result.output


def test_simulate_rejects_a_malformed_cluster_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                   "  - name: c\n    resources: {requests: {cpu: 1.5.3Gi}}\n")
    result = CliRunner().invoke(main, ["simulate", "--cluster", str(bad)])
    assert result.exit_code == 1
    assert "1.5.3Gi" in result.output and "Traceback" not in result.output
    assert "document 1" in result.output


def test_simulate_reports_pods_of_unknown_profiles(tmp_path: Path) -> None:
    cluster = tmp_path / "c.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {schedulerName: nobody, containers: [{name: c}]}\n")
    result = CliRunner().invoke(main, ["simulate", "--cluster", str(cluster), "-o", "json"])
    assert result.exit_code == 0, result.output
    (pod,) = json.loads(result.output)["pods"]
    assert pod["node"] is None and "nobody" in pod["message"]


def test_explain_shows_filters_and_scores_per_node() -> None:
    result = CliRunner().invoke(main, ["explain", "--cluster", DEMO, "--pod",
                                       "default/database", "--output", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    nodes = {n["node"]: n for n in data["nodes"]}
    assert set(nodes) == {"node-a1", "node-b1", "node-c1", "node-c2"}
    assert nodes["node-a1"]["feasible"] and not nodes["node-b1"]["feasible"]
    assert data["chosen"] == "node-a1"
    assert nodes["node-a1"]["scores"] and nodes["node-a1"]["total"] is not None


def test_explain_unknown_pod_is_a_clear_error() -> None:
    result = CliRunner().invoke(main, ["explain", "--cluster", DEMO, "--pod", "nope"])
    assert result.exit_code == 1 and "no pod default/nope" in result.output


def test_test_command_passes_and_fails_with_a_diff(tmp_path: Path) -> None:
    ok = CliRunner().invoke(main, ["test", str(SCENARIOS / "gang.yaml")])
    assert ok.exit_code == 0, ok.output
    assert "passed, 0 failed" in ok.output
    wrong = tmp_path / "wrong.yaml"
    text = (SCENARIOS / "gang.yaml").read_text().replace(
        "default/trio-1: {node: node-a, boundAt: 0}", "default/trio-1: {node: node-z}")
    text = text.replace("policies/engine-points.yaml",
                        str(SCENARIOS / "policies" / "engine-points.yaml"))
    wrong.write_text(text)
    failed = CliRunner().invoke(main, ["test", str(wrong)])
    assert failed.exit_code == 1
    assert "default/trio-1: node: expected 'node-z', got 'node-a'" in failed.output


BROKEN = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: broken}
spec:
  filter:
  - name: needs-company
    # fails to evaluate for the pod named `follower` until a pod is bound on the node
    expression: "node.podCount > 0 || pod.name != 'follower' || int(pod.name) > 0"
  - name: bad-int
    expression: "!('n' in pod.labels) || int(pod.labels['n']) > 0"
---
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: later}
spec:
  match: "pod.name == 'leader'"
  preFilter:
  - name: after-100s
    expression: "now - pod.creationTimestamp >= 100"
    retryAfter: "100 - (now - pod.creationTimestamp)"
"""


def cluster_file(tmp_path: Path, pods: list[str]) -> str:
    docs = ["apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '64', memory: 64Gi, pods: '110'}}\n"]
    for pod in pods:
        docs.append("apiVersion: v1\nkind: Pod\n"
                    f"metadata: {{name: {pod.split(':')[0]}, labels: {{n: '{pod[-1]}'}},\n"
                    "  creationTimestamp: '2026-01-01T00:00:00Z'}\n"
                    "spec: {schedulerName: policysched, containers: [{name: c}]}\n")
    path = tmp_path / "cluster.yaml"
    path.write_text("---\n".join(docs))
    return str(path)


def simulate_broken(tmp_path: Path, pods: list[str]) -> dict[str, Any]:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "broken.yaml").write_text(BROKEN)
    result = CliRunner().invoke(main, [
        "simulate", "--cluster", cluster_file(tmp_path, pods), "--policies",
        str(tmp_path / "policies"), "-o", "json"])
    assert result.exit_code == 0, result.output
    return {p["name"]: p for p in json.loads(result.output)["pods"]}


def test_simulate_gives_up_on_an_error_that_cannot_change(tmp_path: Path) -> None:
    by_name = simulate_broken(tmp_path, [f"bad-{i}:x" for i in range(30)])
    # the same Error twice with nothing changed in between: given up, not retried until
    # the hour-long horizon
    assert {(p["node"], p["attempts"]) for p in by_name.values()} == {(None, 2)}
    assert by_name["bad-0"]["message"] == (
        "policy broken rule bad-int: spec.filter[1].expression "
        "`!('n' in pod.labels) || int(pod.labels['n']) > 0`: type conversion error from "
        "'string' to 'int': 'x'")


def test_simulate_retries_an_error_after_the_cluster_changed(tmp_path: Path) -> None:
    by_name = simulate_broken(tmp_path, ["leader:1", "follower:1"])
    assert (by_name["leader"]["node"], by_name["leader"]["boundAt"]) == ("n1", 100)
    # its Error repeated, then the leader was bound: retried then, not at a time-out
    assert (by_name["follower"]["node"], by_name["follower"]["boundAt"]) == ("n1", 100)


GATE_AND_MATCH = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: gate}
spec:
  match: "pod.name == 'gated'"
  preEnqueue:
  - name: rank
    expression: "int(pod.labels['n']) > 0"
---
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: picky}
spec:
  match: "pod.name != 'matchless' || int(pod.labels['n']) > 0"
  filter:
  - name: anything
    expression: "true"
"""


def test_explain_shows_a_failing_gate_and_a_failing_match(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yaml").write_text(GATE_AND_MATCH)
    cluster = cluster_file(tmp_path, ["gated:x", "matchless:x"])
    outputs = {}
    for pod in ("gated", "matchless"):
        result = CliRunner().invoke(main, [
            "explain", "--cluster", cluster, "--policies", str(tmp_path / "policies"),
            "--pod", pod, "-o", "json"])
        assert result.exit_code == 0, result.output
        outputs[pod] = json.loads(result.output)
    gated = outputs["gated"]
    assert gated["preEnqueue"].startswith("Error: policy gate rule rank: ")
    assert gated["chosen"] is None and "'x'" in gated["message"]
    matchless = outputs["matchless"]
    assert matchless["preEnqueue"] == "pass" and matchless["chosen"] is None
    assert matchless["message"].startswith("policy picky: spec.match `")
    assert matchless["preFilter"] == "Error: " + matchless["message"]


def test_simulate_reports_the_gate_of_a_pod_held_at_pre_enqueue(tmp_path: Path) -> None:
    cluster = tmp_path / "c.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {schedulerName: policysched, schedulingGates: [{name: example.com/quota}],"
        " containers: [{name: c}]}\n")
    result = CliRunner().invoke(main, ["simulate", "--cluster", str(cluster), "-o", "json"])
    assert result.exit_code == 0, result.output
    (pod,) = json.loads(result.output)["pods"]
    assert pod["node"] is None and pod["attempts"] == 0
    assert "example.com/quota" in pod["message"], pod
