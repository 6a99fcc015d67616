"""`policysched simulate`, `explain` and `test` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from policysched.cli import main

from ..framework import POLICIES_ONLY

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "examples" / "demo-cluster.yaml")
SCENARIOS = ROOT / "tests" / "framework" / "scenarios"


def test_simulate_json_contract() -> None:
    result = CliRunner().invoke(main, ["simulate", "--cluster", DEMO, "--output", "json"])
    assert result.exit_code == 0, result.output
    pods = json.loads(result.output)["pods"]
    assert pods and all(set(p) >= {"namespace", "name", "node", "boundAt", "attempts",
                                   "message", "nominatedNodeName", "victims"} for p in pods)
    by_name = {p["name"]: p for p in pods}
    assert by_name["delayed"]["boundAt"] == 15 and by_name["delayed"]["node"]
    assert by_name["too-big"]["node"] is None
    assert by_name["too-big"]["message"].startswith("0/4 nodes are available:")
    gang = [by_name[f"trainer-{i}"] for i in range(3)]
    assert all(p["node"] and p["boundAt"] == 0 for p in gang)
    # the only volume that fits the claim is in zone-b
    assert by_name["ledger-0"]["node"] == "node-b1"


def test_explain_shows_the_volume_binding_reason() -> None:
    result = CliRunner().invoke(main, ["explain", "--cluster", DEMO, "--pod", "ledger-0"])
    assert result.exit_code == 0, result.output
    assert ("node-a1  volume-binding/volumes-bindable: node(s) didn't find available "
            "persistent volumes to bind") in result.output


PREEMPTION = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {nodeName: n1, priority: 0, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: high, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  schedulerName: policysched
  priority: 100
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {schedulerName: policysched, containers: [{name: c}]}
"""


def test_simulate_json_has_the_nominated_node_and_the_victims(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(PREEMPTION)
    result = CliRunner().invoke(main, ["simulate", "--cluster", str(cluster), "-o", "json"])
    assert result.exit_code == 0, result.output
    by_name = {p["name"]: p for p in json.loads(result.output)["pods"]}
    assert {k: by_name["high"][k] for k in ("node", "nominatedNodeName", "victims")} == {
        "node": "n1", "nominatedNodeName": "n1", "victims": ["default/low"]}
    assert (by_name["plain"]["nominatedNodeName"], by_name["plain"]["victims"]) == (None, [])


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
                        str(SCENARIOS / "policies" / "engine-points.yaml")).replace(
        "../fixtures/", str(SCENARIOS.parent / "fixtures") + "/")
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
        str(tmp_path / "policies"), "--enable", "broken", "--enable", "later", "-o", "json"])
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
            "--enable", "gate", "--enable", "picky", "--pod", pod, "-o", "json"])
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


def two_node_cluster(tmp_path: Path, nodes: int = 0) -> str:
    """A big and a small node; `first` (queued first) fills most of the big one, so
    `second`, which the empty cluster would send to the big node, goes to the small one.
    ``nodes`` more small nodes, each too small for `second`, pad the cluster."""
    node = ("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
            "status: {{allocatable: {{cpu: '{cpu}', memory: 64Gi, pods: '110'}}}}\n")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, creationTimestamp: "
           "'2026-01-01T00:00:0{second}Z'}}\nspec: {{schedulerName: policysched, "
           "containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}\n")
    docs = [node.format(name="big", cpu=8), node.format(name="small", cpu=4),
            *(node.format(name=f"tiny-{i:02}", cpu=1) for i in range(nodes)),
            pod.format(name="first", second=0, cpu=6), pod.format(name="second", second=1, cpu=3)]
    path = tmp_path / "two.yaml"
    path.write_text("---\n".join(docs))
    return str(path)


def explain_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["explain", *args, "-o", "json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def test_explain_names_the_node_simulate_chose_at_that_moment(tmp_path: Path) -> None:
    cluster = two_node_cluster(tmp_path)
    simulated = CliRunner().invoke(main, ["simulate", "--cluster", cluster, "-o", "json"])
    placed = {p["name"]: p["node"] for p in json.loads(simulated.output)["pods"]}
    assert placed == {"first": "big", "second": "small"}
    data = explain_json("--cluster", cluster, "--pod", "second")
    assert data["chosen"] == "small" and (data["attempt"], data["attempts"]) == (1, 1)
    nodes = {n["node"]: n for n in data["nodes"]}
    # the cluster as it was: `first` is on the big node, which no longer fits `second`
    assert not nodes["big"]["feasible"] and nodes["small"]["rank"] == 1


def test_explain_an_attempt_the_pod_did_not_have_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["explain", "--cluster", two_node_cluster(tmp_path),
                                       "--pod", "second", "--attempt", "2"])
    assert result.exit_code == 1 and "had 1 scheduling attempt(s), not 2" in result.output


def test_explain_table_marks_the_chosen_node_and_summarises_rejections(
        tmp_path: Path) -> None:
    cluster = two_node_cluster(tmp_path, nodes=12)
    result = CliRunner().invoke(main, ["explain", "--cluster", cluster, "--pod", "second"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "chosen: small" in lines
    summary = lines[lines.index("filter rejections:") + 1]
    assert summary == "  rule node-resources-fit/fits-request rejected 13 nodes: Insufficient cpu"
    header = next(i for i, line in enumerate(lines) if "VERDICT" in line)
    assert lines[header + 1].split()[:2] == ["*", "small"]  # the chosen node first
    assert len(lines) - header - 2 == 10  # --top 10 by default, then how many are left
    assert lines[-1].startswith("4 more nodes")
    data = explain_json("--cluster", cluster, "--pod", "second")
    assert len(data["nodes"]) == 14  # json has every node, whatever the view


def test_explain_counts_every_reason_of_a_node(tmp_path: Path) -> None:
    # NodeResourcesFit names every resource a node lacks: the summary counts a node under
    # each of its reasons (as the FailedScheduling message does), the verdict lists them all
    node = ("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
            "status: {{allocatable: {{cpu: '{cpu}', memory: {memory}, pods: '110'}}}}\n")
    docs = [node.format(name="short", cpu=1, memory="1Gi"),
            node.format(name="thin", cpu=8, memory="1Gi"),
            "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec: {schedulerName: "
            "policysched, containers: [{name: c, resources: {requests: {cpu: '2', "
            "memory: 2Gi}}}]}\n"]
    path = tmp_path / "cluster.yaml"
    path.write_text("---\n".join(docs))
    result = CliRunner().invoke(main, ["explain", "--cluster", str(path), "--pod", "big"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "unschedulable: 0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient " \
        "memory. no new claims to deallocate, preemption: 0/2 nodes are available: 2 " \
        "Preemption is not helpful for scheduling." in lines
    assert lines[lines.index("filter rejections:") + 1] == (
        "  rule node-resources-fit/fits-request rejected 2 nodes: Insufficient memory (2); "
        "Insufficient cpu (1)")
    assert any(line.split()[:4] == ["short", "node-resources-fit/fits-request:",
                                    "Insufficient", "cpu,"] for line in lines)
    data = explain_json("--cluster", str(path), "--pod", "big")
    short = next(n for n in data["nodes"] if n["node"] == "short")
    assert short["reasons"] == {"node-resources-fit/fits-request": [
        "Insufficient cpu", "Insufficient memory"]}
    assert short["filters"]["node-resources-fit/fits-request"] == \
        "Insufficient cpu, Insufficient memory"


def test_explain_views_one_node_all_nodes_and_failed_only(tmp_path: Path) -> None:
    cluster = two_node_cluster(tmp_path, nodes=12)
    base = ["explain", "--cluster", cluster, "--pod", "second"]
    one = CliRunner().invoke(main, [*base, "--node", "big"])
    assert one.exit_code == 0, one.output
    assert "node big: rejected" in one.output
    assert ["node-resources-fit/fits-request", "filter", "Insufficient", "cpu"] in [
        line.split() for line in one.output.splitlines()]
    assert "tiny" not in one.output
    chosen = CliRunner().invoke(main, [*base, "--node", "small"])
    assert "node small (chosen): feasible, total" in chosen.output
    assert "raw/normalised/weighted" in chosen.output
    everything = CliRunner().invoke(main, [*base, "--top", "0"])
    assert "more nodes" not in everything.output and "tiny-11" in everything.output
    failed = CliRunner().invoke(main, [*base, "--failed-only", "--top", "0"])
    rows = failed.output.split("VERDICT", 1)[1].splitlines()[1:]
    assert len(rows) == 13 and not any("small" in row for row in rows)
    missing = CliRunner().invoke(main, [*base, "--node", "nope"])
    assert missing.exit_code == 1 and "no node nope" in missing.output


PER_NODE_REASON = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: per-node}
spec:
  filter:
  - name: only-small
    expression: node.name == 'small'
    messageExpression: "'reserved: ' + node.name"
"""


def test_explain_shows_a_filter_message_expression_and_caps_the_reasons(
        tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yaml").write_text(PER_NODE_REASON)
    cluster = two_node_cluster(tmp_path, nodes=4)
    result = CliRunner().invoke(main, ["explain", "--cluster", cluster, "--policies",
                                       str(tmp_path / "policies"), "--config",
                                       POLICIES_ONLY, "--pod", "second"])
    assert result.exit_code == 0, result.output
    assert ("  rule per-node/only-small rejected 5 nodes: reserved: big (1); "
            "reserved: tiny-00 (1); reserved: tiny-01 (1); 2 other reasons"
            in result.output.splitlines()), result.output


def test_explain_shows_the_aggregates() -> None:
    rack = ROOT / "examples" / "rack-spread"
    args = ["explain", "--cluster", str(rack / "cluster.yaml"), "--policies",
            str(rack / "rack-spread.yaml"), "--enable", "rack-spread", "--pod", "web-3"]
    result = CliRunner().invoke(main, [*args, "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    # web-0 on n4 (rack r2), web-1 and web-2 on r1's nodes: web-3 must go to r2
    assert data["chosen"] == "n4"
    assert data["aggregates"]["rack-spread/sameApp"] == {"minimum": 1, "domains": 2, "total": 3}
    by_node = {n["node"]: n["aggregates"]["rack-spread/sameApp"] for n in data["nodes"]}
    assert by_node["n4"] == {"count": 1, "onNode": 1}
    assert by_node["n3"] == {"count": 2, "onNode": 0}
    text = CliRunner().invoke(main, [*args, "--node", "n3"]).output
    assert "2 in the node's domain, 0 on the node (minimum 1, 2 domains, total 3)" in text


# -- one meaning everywhere: the configuration's sources, --policies added, --enable ------

RACK = ROOT / "examples" / "rack-spread"


def simulate_rack(*args: str) -> Any:
    return CliRunner().invoke(main, ["simulate", "--cluster", str(RACK / "cluster.yaml"),
                                     "-o", "json", *args])


def placed(result: Any) -> dict[str, str]:
    assert result.exit_code == 0, result.output
    return {p["name"]: p["node"] for p in json.loads(result.stdout)["pods"]}


def test_policies_are_added_and_a_policy_no_profile_enables_is_a_warning() -> None:
    result = simulate_rack("--policies", str(RACK / "rack-spread.yaml"))
    # the built-in configuration's profiles run, rack-spread does not: web-3 in rack r1
    assert placed(result)["web-3"] == "n3"
    assert result.stderr.startswith(f"{RACK / 'rack-spread.yaml'}:4:1: rack-spread: warning: "
                                    "policy rack-spread is enabled by no profile of the "
                                    "built-in configuration")
    assert "--enable rack-spread[:WEIGHT]" in result.stderr


def test_enable_adds_the_policy_to_the_first_profile() -> None:
    result = simulate_rack("--policies", str(RACK / "rack-spread.yaml"),
                           "--enable", "rack-spread")
    assert placed(result)["web-3"] == "n4" and result.stderr == ""
    # the library given again is read once, not a duplicate of the configuration's source
    again = simulate_rack("--policies", str(ROOT / "policies"), "--policies",
                          str(RACK / "rack-spread.yaml"), "--enable", "rack-spread:2")
    assert placed(again)["web-3"] == "n4"
    unknown = simulate_rack("--enable", "nope")
    assert unknown.exit_code == 1 and "enables unknown policy nope" in unknown.output


def test_the_configuration_policy_sources_are_honoured_offline(tmp_path: Path) -> None:
    (tmp_path / "conf" / "mine").mkdir(parents=True)
    (tmp_path / "conf" / "mine" / "rack.yaml").write_text(
        (RACK / "rack-spread.yaml").read_text())
    config = tmp_path / "conf" / "config.yaml"
    config.write_text((ROOT / "policies" / "scheduler-config.yaml").read_text().replace(
        'directories: ["."]', f'directories: [{json.dumps(str(ROOT / "policies"))}, mine]'
    ).replace("    - name: coscheduling\n", "    - name: coscheduling\n    - name: rack-spread\n",
              1))
    result = simulate_rack("--config", str(config))
    assert placed(result)["web-3"] == "n4" and result.stderr == ""


def test_configmap_sources_are_a_warning_offline_and_their_files_can_be_given() -> None:
    result = simulate_rack("--config", str(ROOT / "deploy" / "scheduler-config.yaml"),
                           "--policies", str(ROOT / "deploy" / "policies-configmap.yaml"))
    assert placed(result)["web-0"] is not None
    assert "policySources" not in result.stdout
    assert ("ConfigMaps of namespace <the scheduler's namespace> are read from the cluster by "
            "`policysched run` only") in result.stderr


def test_a_cluster_file_given_as_policies_is_one_clear_message() -> None:
    result = simulate_rack("--policies", str(RACK / "cluster.yaml"))
    assert result.exit_code == 1
    assert result.output.count("not policies") == 1, result.output
    assert "8 documents here are not policies (kinds: Node (4), Pod (4))" in result.output


def test_validate_with_a_configuration_warns_of_a_policy_it_does_not_enable() -> None:
    args = ["validate", "--config", str(ROOT / "policies" / "scheduler-config.yaml"),
            str(RACK / "rack-spread.yaml")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "policy rack-spread is enabled by no profile of " in result.stdout
    assert CliRunner().invoke(main, [*args, "--strict"]).exit_code == 1
