"""node-ports: kube-scheduler's NodePorts filter (HostPortInfo.CheckConflict)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.framework.status import Code

from .helpers import Cluster, Harness, KubeCase, api_node, node, pod

REASON = "node(s) didn't have free ports for the requested pod ports"


def verdict(used: dict, wanted: dict) -> str | None:
    running = pod("running", node_name="a", ports=[used])
    h = Harness("node-ports", pod(ports=[wanted]), Cluster([node("a")], [running]))
    rejection = h.filter("a")
    if rejection is not None:
        assert not rejection.unresolvable
    return rejection.reason if rejection else None


@pytest.mark.parametrize(("used", "wanted", "conflict"), [
    ({"hostPort": 8080}, {"hostPort": 8080}, True),
    ({"hostPort": 8080}, {"hostPort": 8081}, False),
    ({"hostPort": 8080, "protocol": "TCP"}, {"hostPort": 8080, "protocol": "UDP"}, False),
    ({"hostPort": 8080, "hostIP": "10.0.0.1"}, {"hostPort": 8080, "hostIP": "10.0.0.2"}, False),
    ({"hostPort": 8080, "hostIP": "10.0.0.1"}, {"hostPort": 8080, "hostIP": "10.0.0.1"}, True),
    ({"hostPort": 8080, "hostIP": "0.0.0.0"}, {"hostPort": 8080, "hostIP": "10.0.0.2"}, True),
    ({"hostPort": 8080, "hostIP": "10.0.0.1"}, {"hostPort": 8080, "hostIP": "0.0.0.0"}, True),
    ({"hostPort": 8080, "hostIP": "10.0.0.1"}, {"hostPort": 8080}, True),  # "" is 0.0.0.0
    ({"hostPort": 8080}, {"containerPort": 8080, "hostPort": 0}, False),  # no host port
])
def test_conflicts(used: dict, wanted: dict, conflict: bool) -> None:
    assert verdict(used, wanted) == (REASON if conflict else None)


def test_container_ports_without_host_port_always_fit() -> None:
    h = Harness("node-ports", pod(ports=[{"containerPort": 80}]), Cluster([node("a")]))
    assert h.filter("a") is None


def port_pod(kind: str, node: str = "") -> dict[str, Any]:
    """A pod whose ``kind`` container ("container", "init" or "sidecar") uses TCP host
    port 8001 (kube's st.MakePod().ContainerPort / InitContainerPort)."""
    used = {"name": kind, "ports": [{"containerPort": 8001, "hostPort": 8001,
                                     "protocol": "TCP"}]}
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if kind == "container":
        spec["containers"] = [used]
    else:
        spec["initContainers"] = [{**used, "restartPolicy": "Always"} if kind == "sidecar"
                                  else used]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{kind}-pod"},
            "spec": spec}


# kube-scheduler's TestNodePorts (nodeports/node_ports_test.go): "non-sidecar initContainer
# using hostPort" (its ports are not the pod's) and "TCP hostPort conflict from sidecar
# initContainer"; and the same for a sidecar of a pod on the node (NodeInfo.UsedPorts counts
# kube's GetHostPorts)
@pytest.mark.parametrize(("wanted", "running", "conflict"), [
    ("init", "container", False),
    ("sidecar", "container", True),
    ("container", "sidecar", True),
    ("container", "init", False),
])
def test_sidecar_host_ports_count(wanted: str, running: str, conflict: bool) -> None:
    node = api_node("node1", cpu="1", memory="1Gi", pods="110")
    status = KubeCase("node-ports", port_pod(wanted), [node],
                      [port_pod(running, node="node1")]).filter()["node1"]
    assert (status.code, *status.reasons) == (
        (Code.UNSCHEDULABLE, REASON) if conflict else (Code.SUCCESS,))
