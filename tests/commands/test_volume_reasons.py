"""`simulate` and `explain` with the built-in configuration show the volume policies'
reasons in kube-scheduler's words: a full CSI node, a disk in use, a volume in another
zone."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from policysched.cli import main

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-c, labels: {topology.kubernetes.io/zone: c}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-a}
spec: {drivers: [{name: ebs.csi.aws.com, nodeID: node-a, allocatable: {count: 1}}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: logs, namespace: default}
spec: {accessModes: [ReadWriteOnce], volumeName: pv-logs, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-logs}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  claimRef: {namespace: default, name: logs}
  csi: {driver: ebs.csi.aws.com, volumeHandle: logs}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec: {accessModes: [ReadWriteOnce], volumeName: pv-data, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-data, labels: {topology.kubernetes.io/zone: a}}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  claimRef: {namespace: default, name: data}
  csi: {driver: ebs.csi.aws.com, volumeHandle: data}
---
apiVersion: v1
kind: Pod
metadata: {name: logger, namespace: default}
spec:
  nodeName: node-a
  containers: [{name: c, image: c}]
  volumes: [{name: logs, persistentVolumeClaim: {claimName: logs}}]
---
apiVersion: v1
kind: Pod
metadata: {name: cache, namespace: default}
spec:
  nodeName: node-b
  containers: [{name: c, image: c}]
  volumes: [{name: scratch, awsElasticBlockStore: {volumeID: vol-scratch}}]
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default}
spec:
  schedulerName: policysched
  containers: [{name: c, image: c}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data}}
  - {name: scratch, awsElasticBlockStore: {volumeID: vol-scratch, readOnly: true}}
"""
MESSAGE = ("0/3 nodes are available: 1 node(s) exceed max volume count, 1 node(s) had no "
           "available disk, 1 node(s) had no available volume zone.")


def invoke(tmp_path: Path, *args: str) -> str:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    result = CliRunner().invoke(main, [*args, "--cluster", str(tmp_path / "cluster.yaml")])
    assert result.exit_code == 0, result.output
    return result.output


def test_simulate_gives_the_volume_reasons_in_kubes_words(tmp_path: Path) -> None:
    output = invoke(tmp_path, "simulate")
    [row] = [line for line in output.splitlines() if line.startswith("default/db")]
    assert "<unscheduled>" in row and MESSAGE in row


def test_explain_names_the_rule_that_rejected_each_node(tmp_path: Path) -> None:
    output = invoke(tmp_path, "explain", "--pod", "db")
    assert f"unschedulable: {MESSAGE}" in output
    verdicts = {line.split()[0]: " ".join(line.split()[1:]) for line in output.splitlines()
                if line.lstrip().startswith("node-")}
    assert verdicts == {
        "node-a": "node-volume-limits/max-volume-count: node(s) exceed max volume count - -",
        "node-b": "volume-restrictions/disk-conflict: node(s) had no available disk - -",
        "node-c": "volume-zone/volume-zone: node(s) had no available volume zone - -",
    }
