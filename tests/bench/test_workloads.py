"""bench/workloads.py: the placement check behind bench/e2e.py's "constraints held" column
finds what each constraint forbids, and only that."""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from workloads import (  # bench/ is not a package: on sys.path above
    HOSTNAME,
    WORKLOADS,
    ZONE,
    anti_affinity_pod,
    default_pod,
    placement_violations,
    quantity,
    selector_matches,
    spreading_pod,
)


def nodes(count: int, zones: tuple[str, ...] = ("a", "b", "c")) -> list[dict[str, Any]]:
    return [{"metadata": {"name": f"n{i}",
                          "labels": {HOSTNAME: f"n{i}", ZONE: zones[i % len(zones)]}},
             "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}
            for i in range(count)]


@pytest.mark.parametrize(("text", "value"), [
    ("100m", Decimal("0.1")), ("4", Decimal(4)), ("500Mi", Decimal(500 * 2**20)),
    ("32Gi", Decimal(32 * 2**30)), ("1k", Decimal(1000)), ("1e3", Decimal(1000)),
])
def test_quantity(text: str, value: Decimal) -> None:
    assert quantity(text) == value


def test_selector_semantics() -> None:
    labels = {"color": "green", "tier": "web"}
    assert not selector_matches(None, labels)  # a null selector matches nothing
    assert selector_matches({}, labels)  # an empty one everything
    assert selector_matches({"matchLabels": {"color": "green"}}, labels)
    assert not selector_matches({"matchLabels": {"color": "blue"}}, labels)
    assert selector_matches({"matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["web", "db"]},
        {"key": "color", "operator": "NotIn", "values": ["blue"]},
        {"key": "color", "operator": "Exists"},
        {"key": "zone", "operator": "DoesNotExist"}]}, labels)
    assert not selector_matches({"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}, labels)


def test_anti_affinity_two_green_pods_on_one_node_in_either_namespace() -> None:
    cluster = nodes(4)
    spread = [anti_affinity_pod(f"p{i}", "sched-1", f"n{i}") for i in range(3)]
    assert placement_violations([*spread, anti_affinity_pod("i", "sched-0", "n3")],
                                cluster) == []
    broken = placement_violations([*spread, anti_affinity_pod("i", "sched-0", "n1")], cluster)
    assert broken and all("anti-affinity" in v and f"{HOSTNAME}=n1" in v for v in broken)
    # a green pod in a namespace the terms do not name is not selected; pending pods are
    # nowhere
    green = default_pod("x", "other", "n1")
    green["metadata"]["labels"] = {"color": "green"}
    assert placement_violations([*spread, green, anti_affinity_pod("q", "sched-1", None)],
                                cluster) == []
    # but a pod's own term, naming sched-1, forbids it from joining p1 whatever its namespace
    assert placement_violations([*spread, anti_affinity_pod("y", "other", "n1")], cluster)


def test_spread_skew_over_every_zone_of_the_nodes() -> None:
    cluster = nodes(6)
    even = [spreading_pod(f"p{i}", "ns", f"n{i % 3}") for i in range(12)]
    assert placement_violations(even, cluster) == []
    # 6 / 6 / 0: skew 6 > maxSkew 5, also when the empty zone's nodes hold other pods
    skewed = [spreading_pod(f"p{i}", "ns", f"n{i % 2}") for i in range(12)]
    others = [default_pod("d", "ns", "n2"), spreading_pod("elsewhere", "ns2", "n2")]
    [message] = placement_violations([*skewed, *others], cluster)
    assert "skew 6 > maxSkew 5" in message
    # 5 / 5 / 0 is within maxSkew 5
    assert placement_violations(skewed[:10], cluster) == []


def test_resources_per_node() -> None:
    cluster = nodes(2)
    assert placement_violations([default_pod(f"p{i}", "ns", "n0") for i in range(40)],
                                cluster) == []
    [message] = placement_violations([default_pod(f"p{i}", "ns", "n0") for i in range(41)],
                                     cluster)
    assert message.startswith("node n0: cpu 4.1")


def test_workload_init_and_measured_pods() -> None:
    anti = WORKLOADS["pod-anti-affinity"]
    assert (anti.init_pods(1000), anti.measured_pods(1000, 2000)) == (200, 800)
    spread = WORKLOADS["topology-spread"]
    assert (spread.init_pods(1000), spread.measured_pods(1000, 2000)) == (1000, 2000)
    assert [spread.zone(i) for i in range(4)] == ["moon-1", "moon-2", "moon-3", "moon-1"]
