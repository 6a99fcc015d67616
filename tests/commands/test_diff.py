"""``policysched diff``: one cluster file, two policy sets (or configurations), what
differs, each side's utilisation, and the exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from policysched.cli import main
from policysched.commands.diff import compare
from policysched.commands.loading import load_cluster, load_engine

CLUSTER = """\
apiVersion: v1
kind: Node
metadata:
  name: big-hdd
  labels: {kubernetes.io/hostname: big-hdd, topology.kubernetes.io/zone: a, disk: hdd}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata:
  name: small-a
  labels: {kubernetes.io/hostname: small-a, topology.kubernetes.io/zone: a}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata:
  name: small-b
  labels: {kubernetes.io/hostname: small-b, topology.kubernetes.io/zone: b}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  nodeName: small-b
  containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  schedulerName: policysched
  containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: pinned, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  schedulerName: policysched
  nodeSelector: {disk: hdd}
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: huge, creationTimestamp: "2024-01-01T00:00:02Z"}
spec:
  schedulerName: policysched
  containers: [{name: c, resources: {requests: {cpu: "7"}}}]
"""

NO_HDD = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: no-hdd
  labels: {policysched.io/profile: policysched}
spec:
  filter:
  - name: not-hdd
    expression: "node.labels[?'disk'].orValue('') != 'hdd'"
    reason: node(s) have hdd disks
"""

ANY_NODE = NO_HDD.replace("no-hdd", "any-node").replace(
    "node.labels[?'disk'].orValue('') != 'hdd'", "true")

BIN_PACKING = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulerConfiguration
profiles:
- schedulerName: policysched
  queueSort: priority-sort
  policies:
    enabled:
    - name: priority-sort
    - name: node-resources-fit
    - name: node-resources-most-allocated
      weight: 5
    - name: default-binder
    disabled: [{name: "*"}]
"""


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    written = {"cluster": CLUSTER, "no-hdd": NO_HDD, "any": ANY_NODE}
    for name, text in written.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    return {name: str(tmp_path / f"{name}.yaml") for name in written}


def diff(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["diff", *args])
    return result.exit_code, result.stdout, result.stderr


def test_pods_placed_differently_and_newly_unschedulable(files: dict[str, str]) -> None:
    code, out, _ = diff("--cluster", files["cluster"], "--policies", files["any"],
                        "--policies", files["no-hdd"], "-o", "json")
    assert code == 1
    report = json.loads(out)
    assert report["sides"] == {"a": f"--policies {files['any']}",
                               "b": f"--policies {files['no-hdd']}"}
    assert report["identical"] is False
    assert report["placedDifferently"] == [
        {"namespace": "default", "name": "web", "a": {"node": "big-hdd", "message": None},
         "b": {"node": "small-a", "message": None}}]
    [pinned] = report["unschedulableOnlyB"]
    assert (pinned["name"], pinned["a"]["node"], pinned["b"]["node"]) == ("pinned", "big-hdd",
                                                                          None)
    # the same FailedScheduling text simulate prints for that side
    assert pinned["b"]["message"].startswith(
        "0/3 nodes are available: 1 node(s) have hdd disks, 2 node(s) didn't match Pod's "
        "node affinity/selector.")
    assert report["unschedulableOnlyA"] == []
    [huge] = report["otherReasons"]  # it fits big-hdd only on B, where no-hdd rejects it
    assert huge["a"]["message"].startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert huge["b"]["message"].startswith(
        "0/3 nodes are available: 1 node(s) have hdd disks, 2 Insufficient cpu.")
    a, b = report["utilisation"]["a"], report["utilisation"]["b"]
    assert (a["bound"], a["pending"], b["bound"], b["pending"]) == (2, 3, 1, 3)
    assert a["zones"] == {"a": {"pods": 2, "placed": 2}, "b": {"pods": 1, "placed": 0}}
    assert b["zones"] == {"a": {"pods": 1, "placed": 1}, "b": {"pods": 1, "placed": 0}}
    assert (a["zoneSpread"], b["zoneSpread"]) == (1, 0)
    assert a["fill"]["cpu"] == {"min": 0.0, "p50": 0.25, "p90": 0.5, "max": 0.5,
                                "mean": 0.25}
    nodes = {n["node"]: n for n in b["nodes"]}
    assert nodes["small-a"] == {"node": "small-a", "zone": "a", "cpu": 0.5, "memory": 0.25,
                                "pods": 1}


def test_the_text_report(files: dict[str, str]) -> None:
    code, out, _ = diff("--cluster", files["cluster"], "--policies", files["any"],
                        "--policies", files["no-hdd"])
    assert code == 1
    assert out.startswith(f"A: --policies {files['any']}\nB: --policies {files['no-hdd']}\n\n"
                          "different: 1 placed differently, 1 unschedulable only with B, "
                          "1 unschedulable on both for other reasons\n")
    assert "placed differently (1):\nPOD          NODE (A)  NODE (B)\ndefault/web  big-hdd" \
        "   small-a\n" in out
    assert "unschedulable on both, for other reasons (1):\n  default/huge\n    A: 0/3 nodes " \
        "are available: 3 Insufficient cpu." in out
    assert "unschedulable only with B (1):\nPOD             NODE (A)  MESSAGE (B)\n" \
        "default/pinned  big-hdd   0/3 nodes are available: 1 node(s) have hdd disks" in out
    assert "\nUTILISATION AT THE END        A               B\n" \
        "pending pods bound            2/3             1/3\n" \
        "cpu fill min p50 p90 max      0% 25% 50% 50%  0% 50% 50% 50%\n" in out
    assert "pods in zone a (placed)       2 (2)           1 (1)\n" in out
    assert out.endswith("zone spread (max - min pods)  1               0\n")


def test_identical_sides_exit_0(files: dict[str, str]) -> None:
    code, out, _ = diff("--cluster", files["cluster"], "--policies", files["any"],
                        "--policies", files["any"])
    assert code == 0
    assert "identical: every pending pod ends the same on both sides" in out


def test_two_configurations(files: dict[str, str], tmp_path: Path) -> None:
    """--config twice: side B fits pods on the most allocated node instead of spreading
    them, and without NodeAffinity ignores the pinned pod's node selector."""
    config = tmp_path / "config.yaml"
    config.write_text(BIN_PACKING)
    builtin = str(Path(__file__).resolve().parents[2] / "policies" / "scheduler-config.yaml")
    code, out, _ = diff("--cluster", files["cluster"], "--config", builtin, "--config",
                        str(config), "-o", "json")
    assert code == 1, out
    report = json.loads(out)
    assert [(c["name"], c["a"]["node"], c["b"]["node"]) for c in report["placedDifferently"]] \
        == [("web", "big-hdd", "small-b"), ("pinned", "big-hdd", "small-a")]
    assert [c["name"] for c in report["unschedulableOnlyA"]] == ["huge"]
    assert report["utilisation"]["b"]["fill"]["cpu"]["min"] == 0.5


def test_one_policies_compares_without_and_with_it(files: dict[str, str]) -> None:
    code, out, _ = diff("--cluster", files["cluster"], "--policies", files["no-hdd"])
    assert code == 1
    assert out.startswith(f"A: the built-in configuration\nB: --policies {files['no-hdd']}\n")
    assert "default/pinned  big-hdd   0/3 nodes are available: 1 node(s) have hdd disks" in out


@pytest.mark.parametrize("args", [
    [],
    ["--config", "CONFIG"],  # one side only
    ["--policies", "ANY", "--policies", "ANY", "--policies", "ANY"],
])
def test_bad_sides_exit_2(files: dict[str, str], args: list[str]) -> None:
    config = str(Path(__file__).resolve().parents[2] / "policies" / "scheduler-config.yaml")
    args = [{"ANY": files["any"], "CONFIG": config}.get(a, a) for a in args]
    code, out, err = diff("--cluster", files["cluster"], *args)
    assert code == 2 and out == ""
    assert "diff compares two sides" in err or "given 3 times" in err


def test_an_invalid_policy_exits_2(files: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(NO_HDD.replace("node.labels", "node.lables"))
    code, _, err = diff("--cluster", files["cluster"], "--policies", files["any"],
                        "--policies", str(bad))
    assert code == 2
    assert "undefined field 'lables'" in err and "Traceback" not in err


def test_compare_runs_each_side_on_its_own_copy(files: dict[str, str]) -> None:
    objects, start = load_cluster(files["cluster"], None)
    before = json.dumps(objects, sort_keys=True)
    engine = load_engine([files["any"]], None)
    result = compare(objects, engine, engine, start)
    assert result.identical
    assert json.dumps(objects, sort_keys=True) == before
