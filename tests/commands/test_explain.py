"""`policysched explain` and `simulate` with rules in audit mode: the findings beside an
unchanged decision."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from policysched.cli import main

CLUSTER = """\
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {topology.kubernetes.io/zone: zone-a, disk: ssd}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels: {topology.kubernetes.io/zone: zone-b}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: node-c
  labels: {topology.kubernetes.io/zone: zone-c}
status:
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec:
  schedulerName: policysched
  containers:
  - name: web
    image: nginx
    resources: {requests: {cpu: 500m, memory: 256Mi}}
"""

TRIAL = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: ssd-only
spec:
  enforcement: {enforcement}
  filter:
  - name: needs-ssd
    expression: node.labels[?'disk'].orValue('') == 'ssd'
    reason: node(s) without an SSD
  score:
  - name: prefer-zone-a
    expression: "node.labels[?'topology.kubernetes.io/zone'].orValue('') == 'zone-a' ? 100 : 0"
    weight: 2
"""

FILTER_FINDING = ("audit: ssd-only/needs-ssd would have rejected 2 of 3 feasible nodes: 2 "
                  "node(s) without an SSD; the chosen node node-c among them")
SCORE_FINDING = ("audit: ssd-only/prefer-zone-a would have changed the score by +0 on the "
                 "chosen node node-c (+0 to +200 on the 3 scored nodes); node-a would have "
                 "been chosen instead (686 > 492)")


def invoke(tmp_path: Path, *args: str, enforcement: str = "Audit") -> str:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "trial.yaml").write_text(TRIAL.format(enforcement=enforcement))
    result = CliRunner().invoke(main, [
        *args, "--cluster", str(tmp_path / "cluster.yaml"),
        "--policies", str(tmp_path / "trial.yaml"), "--enable", "ssd-only"])
    assert result.exit_code == 0, result.output
    return result.output


def test_explain_shows_what_audited_rules_would_have_changed(tmp_path: Path) -> None:
    output = invoke(tmp_path, "explain", "--pod", "web-1")
    lines = output.splitlines()
    assert lines[3:6] == ["chosen: node-c", FILTER_FINDING, SCORE_FINDING]
    # the table is the decision's: no audited rule in it
    assert "ssd-only" not in "\n".join(lines[6:])


def test_explain_one_node_shows_the_audited_verdicts_apart(tmp_path: Path) -> None:
    output = invoke(tmp_path, "explain", "--pod", "web-1", "--node", "node-b")
    assert "ssd-only/needs-ssd" in output
    rows = {line.split()[0]: line.split()[1:] for line in output.splitlines()
            if line.startswith("ssd-only/")}
    assert rows["ssd-only/needs-ssd"] == ["filter", "(audit)", "node(s)", "without", "an",
                                          "SSD"]
    assert rows["ssd-only/prefer-zone-a"] == ["score", "(audit)", "0/0/0"]


def test_explain_json_has_the_findings_and_the_audited_verdicts(tmp_path: Path) -> None:
    data = json.loads(invoke(tmp_path, "explain", "--pod", "web-1", "-o", "json"))
    assert data["chosen"] == "node-c"
    assert data["audits"] == [FILTER_FINDING, SCORE_FINDING]
    by_node = {n["node"]: n for n in data["nodes"]}
    assert by_node["node-a"]["auditFilters"] == {"ssd-only/needs-ssd": "pass"}
    assert by_node["node-a"]["auditScores"]["ssd-only/prefer-zone-a"]["weighted"] == 200
    assert all(n["feasible"] for n in data["nodes"])  # the audited filter decided nothing


def test_enforced_the_same_policy_decides_and_explain_has_no_findings(tmp_path: Path) -> None:
    data = json.loads(invoke(tmp_path, "explain", "--pod", "web-1", "-o", "json",
                             enforcement="Enforce"))
    assert data["chosen"] == "node-a" and data["audits"] == []


def test_simulate_lists_the_findings_under_the_table(tmp_path: Path) -> None:
    output = invoke(tmp_path, "simulate")
    assert output.splitlines()[1].split()[:2] == ["default/web-1", "node-c"]
    assert ("audit findings (rules in audit mode decided nothing):\n"
            f"  default/web-1: {FILTER_FINDING}\n  default/web-1: {SCORE_FINDING}\n") in output
    data = json.loads(invoke(tmp_path, "simulate", "-o", "json"))
    assert data["pods"][0]["audits"] == [FILTER_FINDING, SCORE_FINDING]


def test_explain_json_has_each_nodes_rejecting_rule_zone_and_fill_and_the_rejections(
        tmp_path: Path) -> None:
    """What the HTML report draws: the first rule that rejects each node, the node's zone
    and fill at that moment, and the rejections by rule as the table's summary counts
    them."""
    data = json.loads(invoke(tmp_path, "explain", "--pod", "web-1", "-o", "json",
                             enforcement="Enforce"))
    by_node = {n["node"]: n for n in data["nodes"]}
    assert by_node["node-a"]["rejectedBy"] is None
    assert by_node["node-b"]["rejectedBy"] == "ssd-only/needs-ssd"
    assert {k: by_node["node-c"][k] for k in ("zone", "cpu", "memory", "pods")} == {
        "zone": "zone-c", "cpu": 0.0, "memory": 0.0, "pods": 0}
    assert data["rejections"] == [{"rule": "ssd-only/needs-ssd", "nodes": 2, "reasons": [
        {"reason": "node(s) without an SSD", "nodes": 2}]}]


def test_explain_shows_volume_reasons_in_kube_words() -> None:
    """examples/volumes: each node's VolumeBinding verdict, volumeBinder read by the
    filter rule alone (nothing before it computed it)."""
    cluster = Path(__file__).parents[2] / "examples" / "volumes" / "cluster.yaml"
    result = CliRunner().invoke(main, ["explain", "--cluster", str(cluster), "--pod", "db-0"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "chosen: node-b" in lines
    row = next(line for line in lines if line.strip().startswith("node-a"))
    assert "volume-binding/volumes-bindable: node(s) didn't find available persistent " \
           "volumes to bind" in row
