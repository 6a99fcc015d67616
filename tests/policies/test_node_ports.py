"""node-ports: kube-scheduler's NodePorts filter (HostPortInfo.CheckConflict)."""

from __future__ import annotations

import pytest

from .helpers import Cluster, Harness, node, pod

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
