"""inter-pod-affinity: kube-scheduler's InterPodAffinity filters and preferred score."""

from __future__ import annotations

from typing import Any

from .helpers import Cluster, Harness, kube_minmax, node, pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"


def term(key: str = ZONE, app: str | None = "db", **extra: Any) -> dict:
    t: dict[str, Any] = {"topologyKey": key, **extra}
    if app is not None:
        t["labelSelector"] = {"matchLabels": {"app": app}}
    return t


def required(kind: str, *terms: dict) -> dict:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def preferred(kind: str, *weighted: tuple[int, dict]) -> dict:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "podAffinityTerm": t} for w, t in weighted]}}


def nodes() -> list[dict]:
    return [node("a1", labels={ZONE: "a"}), node("a2", labels={ZONE: "a"}),
            node("b1", labels={ZONE: "b"}), node("bare", labels={})]


def harness(the_pod: dict, running: list[dict], **params: Any) -> Harness:
    return Harness("inter-pod-affinity", the_pod, Cluster(nodes(), running), params=params)


def db(name: str, where: str, **kw: Any) -> dict:
    kw.setdefault("labels", {"app": "db"})
    return pod(name, node_name=where, **kw)


def test_pod_without_affinity_fits_everywhere() -> None:
    h = harness(pod(), [db("db-0", "a1")])
    assert set(h.reasons().values()) == {None}


def test_required_affinity_follows_matching_pods_domain() -> None:
    h = harness(pod("web", affinity=required("podAffinity", term())), [db("db-0", "a1")])
    assert h.reasons() == {"a1": None, "a2": None, "b1": AFFINITY, "bare": AFFINITY}
    rejection = h.filter("b1")
    assert rejection is not None and rejection.unresolvable


def test_required_affinity_pods_must_match_all_terms() -> None:
    terms = required("podAffinity", term(), term(HOST, app="cache"))
    running = [db("db-0", "a1"), pod("cache-0", labels={"app": "cache"}, node_name="a2")]
    # no single pod matches both terms
    assert set(harness(pod("web", affinity=terms), running).reasons().values()) == {AFFINITY}
    both = [pod("db-cache", labels={"app": "db"}, node_name="a2")]
    terms = required("podAffinity", term(), term(HOST))
    assert harness(pod("web", affinity=terms), both).reasons() == {
        "a1": AFFINITY, "a2": None, "b1": AFFINITY, "bare": AFFINITY}


def test_first_pod_of_a_group_may_go_anywhere_with_the_key() -> None:
    h = harness(pod("db-0", labels={"app": "db"}, affinity=required("podAffinity", term())), [])
    assert h.reasons() == {"a1": None, "a2": None, "b1": None, "bare": AFFINITY}
    # ... but not when it does not match its own term
    h = harness(pod("web", affinity=required("podAffinity", term())), [])
    assert set(h.reasons().values()) == {AFFINITY}


def test_namespaces() -> None:
    other = db("db-prod", "b1", namespace="prod")
    h = harness(pod("web", affinity=required("podAffinity", term())), [other])
    assert set(h.reasons().values()) == {AFFINITY}  # default: the pod's own namespace
    h = harness(pod("web", affinity=required("podAffinity", term(namespaces=["prod"]))), [other])
    assert h.reasons()["b1"] is None
    h = harness(pod("web", affinity=required("podAffinity", term(namespaceSelector={}))), [other])
    assert h.reasons()["b1"] is None


def test_no_label_selector_selects_nothing() -> None:
    h = harness(pod("web", affinity=required("podAffinity", term(app=None))), [db("db-0", "a1")])
    assert set(h.reasons().values()) == {AFFINITY}


def test_required_anti_affinity() -> None:
    h = harness(pod("db-1", labels={"app": "db"}, affinity=required("podAntiAffinity", term())),
                [db("db-0", "a1")])
    assert h.reasons() == {"a1": ANTI, "a2": ANTI, "b1": None, "bare": None}
    rejection = h.filter("a1")
    assert rejection is not None and not rejection.unresolvable


def test_anti_affinity_match_expressions() -> None:
    t = term(app=None, labelSelector={"matchExpressions": [
        {"key": "app", "operator": "NotIn", "values": ["web"]},
        {"key": "tier", "operator": "Exists"}]})
    running = [db("db-0", "a1", labels={"app": "db", "tier": "data"}),
               db("web-0", "b1", labels={"app": "web", "tier": "front"})]
    h = harness(pod("x", affinity=required("podAntiAffinity", t)), running)
    assert h.reasons() == {"a1": ANTI, "a2": ANTI, "b1": None, "bare": None}


def test_existing_pods_anti_affinity() -> None:
    existing = db("db-0", "a1", affinity=required("podAntiAffinity", term(HOST)))
    h = harness(pod("db-1", labels={"app": "db"}), [existing])
    assert h.reasons() == {"a1": EXISTING, "a2": None, "b1": None, "bare": None}
    # a pod the term does not select is not repelled
    assert set(harness(pod("web", labels={"app": "web"}), [existing]).reasons().values()) == {None}
    # the term's namespaces are relative to the existing pod
    assert set(harness(pod("db-x", namespace="prod", labels={"app": "db"}),
                       [existing]).reasons().values()) == {None}


def test_preferred_score_worked_example() -> None:
    affinity = {**preferred("podAffinity", (10, term())),
                **preferred("podAntiAffinity", (3, term(HOST)))}
    h = harness(pod("web", affinity=affinity), [db("db-0", "a1"), db("db-1", "b1")])
    raw = h.raw_scores()
    # zone a: +10 (db-0); zone b: +10 (db-1); host a1: -3; host b1: -3
    assert raw == {"a1": 7, "a2": 10, "b1": 7, "bare": 0}
    assert kube_minmax(raw) == {"a1": 70, "a2": 100, "b1": 70, "bare": 0}


def test_score_counts_each_matching_pod() -> None:
    affinity = preferred("podAffinity", (5, term()))
    h = harness(pod("web", affinity=affinity), [db("d0", "a1"), db("d1", "a2"), db("d2", "b1")])
    assert h.raw_scores() == {"a1": 10, "a2": 10, "b1": 5, "bare": 0}


def test_existing_pods_terms_score_the_incoming_pod() -> None:
    running = [
        pod("cache", labels={"app": "cache"}, node_name="a1",
            affinity=required("podAffinity", term(app="web"))),
        pod("proxy", labels={"app": "proxy"}, node_name="b1",
            affinity={**preferred("podAffinity", (4, term(HOST, app="web"))),
                      **preferred("podAntiAffinity", (9, term(app="web")))}),
    ]
    h = harness(pod("web", labels={"app": "web"}), running)
    # cache's required affinity: +1 (hardPodAffinityWeight) on zone a;
    # proxy: +4 on host b1, -9 on zone b
    assert h.pre_score()
    assert h.raw_scores() == {"a1": 1, "a2": 1, "b1": -5, "bare": 0}
    h = harness(pod("web", labels={"app": "web"}), running, hardPodAffinityWeight=10)
    assert h.raw_scores() == {"a1": 10, "a2": 10, "b1": -5, "bare": 0}


def test_ignoring_existing_pods_preferred_terms_skips_a_pod_without_preferred_terms() -> None:
    # kube's PreScore: IgnorePreferredTermsOfExistingPods and no preferred terms of its own
    # is a Skip, the existing pods' required affinity terms included (TestPreferredAffinity
    # "Ignore preferred terms of existing pods"); with a preferred term of its own, every
    # existing pod's term counts again ("...unless the incoming pod has inter-pod affinities")
    running = [
        pod("cache", labels={"app": "cache"}, node_name="a1",
            affinity=required("podAffinity", term(app="web"))),
        pod("proxy", labels={"app": "proxy"}, node_name="b1",
            affinity=preferred("podAntiAffinity", (9, term(app="web")))),
    ]
    h = harness(pod("web", labels={"app": "web"}), running, hardPodAffinityWeight=10,
                ignorePreferredTermsOfExistingPods=True)
    assert not h.pre_score()
    h = harness(pod("web", labels={"app": "web"},
                    affinity=preferred("podAffinity", (3, term(HOST, app="proxy")))),
                running, hardPodAffinityWeight=10, ignorePreferredTermsOfExistingPods=True)
    assert h.pre_score()
    # +10 on zone a (cache), -9 on zone b (proxy), +3 on host b1 (proxy)
    assert h.raw_scores() == {"a1": 10, "a2": 10, "b1": -6, "bare": 0}


def test_skipped_when_no_term_counts_a_pod() -> None:
    # kube's PreScore Skip when no existing pod gives a node a score ("all nodes are same
    # priority as Affinity is nil", "with no matching namespace", "with zero weight"): a
    # preferred term selecting no pod, or only pods on nodes without its topology key
    others = [db("d0", "a1", namespace="other"), db("d1", "bare")]
    for affinity in (preferred("podAffinity", (5, term())),
                     preferred("podAntiAffinity", (5, term(app="web")))):
        assert not harness(pod("web", affinity=affinity), others).pre_score()
    # an existing pod's required affinity term with hardPodAffinityWeight 0
    running = [pod("cache", labels={"app": "cache"}, node_name="a1",
                   affinity=required("podAffinity", term(app="web")))]
    assert harness(pod("web", labels={"app": "web"}), running).pre_score()
    assert not harness(pod("web", labels={"app": "web"}), running,
                       hardPodAffinityWeight=0).pre_score()
    # a preferred term selecting a pod on a node with its key scores, even all equal
    assert harness(pod("web", affinity=preferred("podAffinity", (5, term(HOST)))),
                   [db("d0", "a1")]).pre_score()


def test_existing_scores_sum_per_domain() -> None:
    running = [db(f"d{i}", "a1", affinity=preferred("podAntiAffinity", (2, term(app="web"))))
               for i in range(3)]
    running.append(db("d3", "b1", affinity=preferred("podAffinity", (7, term(app="web")))))
    h = harness(pod("web", labels={"app": "web"}), running)
    assert h.raw_scores() == {"a1": -6, "a2": -6, "b1": 7, "bare": 0}
