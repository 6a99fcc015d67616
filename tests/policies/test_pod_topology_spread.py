"""pod-topology-spread: kube-scheduler's PodTopologySpread filter (DoNotSchedule) and score
(ScheduleAnyway)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from policysched.framework.runtime import normalise
from policysched.policy.model import Normalization

from .helpers import Cluster, Harness, node, pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SKEW = "node(s) didn't match pod topology spread constraints"
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"


def constraint(key: str = ZONE, when: str = "DoNotSchedule", skew: int = 1, **extra: Any) -> dict:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


def zones(*spec: tuple[str, str]) -> list[dict]:
    return [node(name, labels={ZONE: zone}) for name, zone in spec]


def web(name: str, where: str, **kw: Any) -> dict:
    kw.setdefault("labels", {"app": "web"})
    return pod(name, node_name=where, **kw)


def harness(constraints: list[dict], nodes: list[dict], running: list[dict], **kw: Any) -> Harness:
    kw.setdefault("labels", {"app": "web"})
    the_pod = pod("new", spec={"topologySpreadConstraints": constraints}, **kw)
    return Harness("pod-topology-spread", the_pod, Cluster(nodes, running))


NODES = [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c")]


def test_filter_sends_the_pod_to_the_emptiest_domain() -> None:
    running = [web("w0", "a1"), web("w1", "a2"), web("w2", "b1")]
    h = harness([constraint()], zones(*NODES), running)
    assert h.reasons() == {"a1": SKEW, "a2": SKEW, "b1": SKEW, "c1": None}
    rejection = h.filter("a1")
    assert rejection is not None and not rejection.unresolvable


def test_max_skew_2_allows_more() -> None:
    running = [web("w0", "a1"), web("w1", "a2"), web("w2", "b1")]
    h = harness([constraint(skew=2)], zones(*NODES), running)
    assert h.reasons() == {"a1": SKEW, "a2": SKEW, "b1": None, "c1": None}


def test_node_without_the_key_is_unresolvable() -> None:
    h = harness([constraint()], [*zones(("a1", "a")), node("bare")], [])
    assert h.reasons() == {"a1": None, "bare": MISSING}
    rejection = h.filter("bare")
    assert rejection is not None and rejection.unresolvable


def test_only_matching_pods_in_the_namespace_count() -> None:
    running = [web("w0", "a1"), pod("other-app", labels={"app": "db"}, node_name="b1"),
               web("other-ns", "b1", namespace="prod"),
               web("leaving", "b1", metadata={"deletionTimestamp": "2023-11-14T22:00:00Z"})]
    h = harness([constraint()], zones(("a1", "a"), ("b1", "b")), running)
    assert h.reasons() == {"a1": SKEW, "b1": None}


def test_pod_not_matching_its_own_selector_does_not_add_itself() -> None:
    h = harness([constraint()], zones(("a1", "a"), ("b1", "b")), [web("w0", "a1")],
                labels={"app": "other"})
    # a: 1 + 0 - 0 <= 1
    assert h.reasons() == {"a1": None, "b1": None}


def test_no_label_selector_matches_nothing() -> None:
    c = constraint()
    del c["labelSelector"]
    h = harness([c], zones(("a1", "a"), ("b1", "b")), [web("w0", "a1"), web("w1", "a1")])
    assert h.reasons() == {"a1": None, "b1": None}


def test_match_expressions_and_match_label_keys() -> None:
    c = constraint(labelSelector={"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["web", "api"]}]}, matchLabelKeys=["version"])
    running = [web("v1-a", "a1", labels={"app": "web", "version": "1"}),
               web("v2-a", "a1", labels={"app": "api", "version": "2"}),
               web("v2-b", "b1", labels={"app": "web", "version": "2"})]
    # version 2 only: a 1, b 1
    h = harness([c], zones(("a1", "a"), ("b1", "b")), running,
                labels={"app": "web", "version": "2"})
    assert h.reasons() == {"a1": None, "b1": None}
    # version 1 only: a 1, b 0 -> a would be 2 - 0
    h = harness([c], zones(("a1", "a"), ("b1", "b")), running,
                labels={"app": "web", "version": "1"})
    assert h.reasons() == {"a1": SKEW, "b1": None}


def test_min_domains_makes_the_global_minimum_zero() -> None:
    running = [web("w0", "a1"), web("w1", "b1")]
    # two domains, one pod each: fine with minDomains 1 (min 1) ...
    h = harness([constraint()], zones(("a1", "a"), ("b1", "b")), running)
    assert h.reasons() == {"a1": None, "b1": None}
    # ... but with minDomains 3 the minimum is 0: 1 + 1 - 0 > 1 everywhere
    h = harness([constraint(minDomains=3)], zones(("a1", "a"), ("b1", "b")), running)
    assert h.reasons() == {"a1": SKEW, "b1": SKEW}


def test_node_affinity_policy_honor_and_ignore() -> None:
    running = [web("w0", "a1"), web("w1", "a1")]
    nodes = zones(("a1", "a"), ("b1", "b"))
    # Honor (default): zone b is not a domain for a pod restricted to zone a: min is a's 2
    h = harness([constraint()], nodes, running, node_selector={ZONE: "a"})
    assert h.filter("a1") is None
    # Ignore: b counts with 0 pods: 2 + 1 - 0 > 1
    h = harness([constraint(nodeAffinityPolicy="Ignore")], zones(("a1", "a"), ("b1", "b")), running,
                node_selector={ZONE: "a"})
    assert h.filter("a1") is not None


def test_node_taints_policy_honor() -> None:
    running = [web("w0", "a1")]
    nodes = [node("a1", labels={ZONE: "a"}),
             node("b1", labels={ZONE: "b"}, taints=[{"key": "x", "effect": "NoSchedule"}])]
    # Ignore (default): b is a domain with 0 pods: a would be 2 - 0
    h = harness([constraint()], [dict(n) for n in nodes], running)
    assert h.filter("a1") is not None
    # Honor: the tainted b1 does not count, a is the only domain
    h = harness([constraint(nodeTaintsPolicy="Honor")],
                [node("a1", labels={ZONE: "a"}),
                 node("b1", labels={ZONE: "b"}, taints=[{"key": "x", "effect": "NoSchedule"}])],
                running)
    assert h.filter("a1") is None
    # Honor, but tolerated: b counts again
    h = harness([constraint(nodeTaintsPolicy="Honor")],
                [node("a1", labels={ZONE: "a"}),
                 node("b1", labels={ZONE: "b"}, taints=[{"key": "x", "effect": "NoSchedule"}])],
                running, tolerations=[{"key": "x", "operator": "Exists"}])
    assert h.filter("a1") is not None


def test_every_constraint_must_hold() -> None:
    running = [web("w0", "a1")]
    nodes = zones(("a1", "a"), ("a2", "a"), ("b1", "b"))
    h = harness([constraint(), constraint(key=HOST)], nodes, running)
    # zone: a 1, b 0 -> a fails; hostname: a1 1, others 0 -> a1 fails
    assert h.reasons() == {"a1": SKEW, "a2": SKEW, "b1": None}


def test_no_constraints_no_work() -> None:
    h = Harness("pod-topology-spread", pod(), Cluster(zones(("a1", "a"))))
    assert h.reasons() == {"a1": None}
    assert not h.pre_score()


def normalised(raw: dict[str, float]) -> dict[str, int]:
    """The engine's normalisation of the spread rule's raw scores (kube's NormalizeScore)."""
    return dict(zip(raw, (int(x) for x in normalise(list(raw.values()), Normalization.INVERSE)),
                    strict=True))


def test_score_worked_example() -> None:
    running = [web("w0", "a1"), web("w1", "a2"), web("w2", "b1")]
    h = harness([constraint(when="ScheduleAnyway")], zones(*NODES), running)
    assert h.pre_score()
    assert h.reasons() == {"a1": None, "a2": None, "b1": None, "c1": None}
    # 3 zones: weight ln(5); a: 2 * ln 5 = 3.2 -> 3, b: 1.6 -> 2, c: 0
    assert h.raw_scores() == {"a1": 3, "a2": 3, "b1": 2, "c1": 0}
    # normalised: 100 * (max + min - s) / max
    assert normalised(h.raw_scores()) == {"a1": 0, "a2": 0, "b1": 33, "c1": 100}


def test_score_hostname_domains_and_max_skew_offset() -> None:
    running = [web("w0", "a1"), web("w1", "a1"), web("w2", "b1")]
    h = harness([constraint(key=HOST, when="ScheduleAnyway", skew=3)],
                zones(("a1", "a"), ("b1", "b"), ("c1", "c")), running)
    # hostname: size = 3 nodes -> ln 5; + maxSkew - 1 = 2
    w = math.log(5)
    expected = {"a1": round(2 * w + 2), "b1": round(w + 2), "c1": round(2.0)}
    assert h.raw_scores() == expected
    top, low = max(expected.values()), min(expected.values())
    assert normalised(h.raw_scores()) == {
        k: 100 * (top + low - v) // top for k, v in expected.items()}


def test_score_nodes_lacking_a_key_are_not_ranked() -> None:
    nodes = [*zones(("a1", "a"), ("b1", "b")), node("bare")]
    h = harness([constraint(when="ScheduleAnyway")], nodes, [web("w0", "a1")])
    assert h.raw_scores()["bare"] == -1
    assert normalised(h.raw_scores()) == {"a1": 0, "b1": 100, "bare": 0}


def test_score_all_equal_is_100() -> None:
    h = harness([constraint(when="ScheduleAnyway")], zones(("a1", "a"), ("b1", "b")), [])
    assert normalised(h.raw_scores()) == {"a1": 100, "b1": 100}


@pytest.mark.parametrize("x", [2, 3, 5, 10, 102])
def test_score_weight_is_the_log_of_domains_plus_two(x: int) -> None:
    nodes = [node(f"n{i}", labels={ZONE: f"z{i}"}) for i in range(max(x - 2, 1))]
    running = [web(f"w{i}", "n0") for i in range(10)]
    h = harness([constraint(when="ScheduleAnyway")], nodes, running)
    assert h.raw_scores()["n0"] == round(10 * math.log(max(x - 2, 1) + 2))


def test_system_default_constraints_select_by_the_workload() -> None:
    """A pod without constraints gets kube's system defaults (hostname maxSkew 3, zone
    maxSkew 5, ScheduleAnyway) over the pods its Services / controllers select."""
    running = [web("w0", "a1"), web("w1", "a1"), web("w2", "b1"),
               web("x", "c1", labels={"app": "db"})]
    nodes = zones(*NODES)
    selector = {"matchLabels": {"app": "web"}}
    h = Harness("pod-topology-spread", pod("new", labels={"app": "web"}),
                Cluster(nodes, running), workload_selector=selector)
    assert [(c["topologyKey"], c["maxSkew"]) for c in h.variables["constraints"]] == [
        ("kubernetes.io/hostname", 3), ("topology.kubernetes.io/zone", 5)]
    assert h.pre_score() and h.reasons() == dict.fromkeys(["a1", "a2", "b1", "c1"])
    # per node: on-node count * ln(4 nodes + 2) + 2, + zone count * ln(3 zones + 2) + 4
    host, zone = math.log(6), math.log(5)
    expected = {"a1": round(2 * host + 2 + 2 * zone + 4), "a2": round(2 + 2 * zone + 4),
                "b1": round(host + 2 + zone + 4), "c1": round(2.0 + 4)}
    assert h.raw_scores() == expected
    # nothing selects the pod: no constraint, no work
    alone = Harness("pod-topology-spread", pod("new", labels={"app": "web"}),
                    Cluster(nodes, running))
    assert alone.variables["constraints"] == [] and not alone.pre_score()
    # params.systemDefaulted false (kube's defaultingType List with no constraints)
    off = Harness("pod-topology-spread", pod("new", labels={"app": "web"}),
                  Cluster(nodes, running), workload_selector=selector,
                  params={"systemDefaulted": False})
    assert off.variables["constraints"] == []


def test_system_defaults_score_nodes_lacking_a_key() -> None:
    nodes = [*zones(("a1", "a"), ("b1", "b")), node("bare")]
    h = Harness("pod-topology-spread", pod("new", labels={"app": "web"}),
                Cluster(nodes, [web("w0", "a1")]),
                workload_selector={"matchLabels": {"app": "web"}})
    raw = h.raw_scores()
    assert raw["bare"] >= 0  # ranked (kube ignores no node for system defaults)
    assert normalised(raw)["bare"] > 0
