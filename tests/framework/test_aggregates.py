"""Differential tests of declared aggregates (docs/architecture.md#aggregates), through the
built-in pod-topology-spread and inter-pod-affinity policies that use them:

1. Incremental = recomputed = kube. Random clusters go through random event sequences
   (pods added, deleted, relabelled, terminating, finished; nodes added, relabelled,
   deleted; pods scheduled, assumed and forgotten). After every event, every aggregate of
   both policies for a few probe pods — ``count`` and ``onNode`` on every node,
   ``minimum()``, ``domains()``, ``total()`` — must be the same computed with the
   scheduler's long-lived node table (brought up to date incrementally), with a fresh one
   (full recomputation), and by the ``kube_*`` functions below, which count the pods of
   the snapshot straight from kube-scheduler's definitions (PodTopologySpread's
   PreFilter, InterPodAffinity's PreFilter and PreScore).
2. Placements = reference. On random clusters, the default profile binds every pod to the
   same node, or gives it the same FailedScheduling message, with the new policies and
   with the brute-force CEL ones they replace (tests/policies/reference/), in both
   evaluation tiers. The clusters leave out what the reference does not model (see
   ``HARD`` and ``SOFT``); deterministic tests show the new policies doing what
   kube-scheduler does there: preemption's what-if removes the victims from the counts,
   pods nominated on a node count there, an empty spread selector counts no pod.
3. What-if = real. ``Framework.run_filter`` on a copy of a snapshot node with pods removed
   or added (kube's PreFilterExtensions RemovePod / AddPod) gives what the same filter
   gives on a cluster where those pods really are gone or present.

Cases are seeded as in tests/mutation.py: ``POLICYSCHED_FUZZ_SEED`` (the base seed),
``POLICYSCHED_FUZZ_SCALE`` (more cases), ``POLICYSCHED_FUZZ_CASE`` (one case); a failure
names the case and the command that re-runs it.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from policysched.cache import node_table
from policysched.cache.cache import Snapshot
from policysched.cache.node_info import NodeInfo
from policysched.cache.node_table import NodeTable
from policysched.cel import CelError
from policysched.cel.vector import freeze
from policysched.cluster.memory import MemoryBackend, merge_label_keys
from policysched.commands.loading import load_engine
from policysched.framework.aggregates import (
    AggregateValue,
    ClusterView,
    WhatIf,
    _only_with_affinity,
)
from policysched.framework.profiles import Engine, build_frameworks
from policysched.framework.runtime import CycleState, Framework
from policysched.framework.scheduler import SCALAR, VECTORISED, Scheduler
from policysched.model.clock import SimulatedClock
from policysched.model.objects import PodInfo, pod_info
from policysched.policy import ExtensionPoint, load_policy_set
from policysched.resources import BUILTIN_POLICIES
from tests.mutation import FuzzSettings

TEST = "tests/framework/test_aggregates.py"
SETTINGS = FuzzSettings.from_environment()
REFERENCE = Path(__file__).resolve().parents[1] / "policies" / "reference"
SPREAD, AFFINITY = "pod-topology-spread", "inter-pod-affinity"
PROFILE = "policysched"
START = "2026-11-22T10:00:00Z"
CLOCK_START = 1_795_000_000
HORIZON = 40.0  # simulated seconds of a placement run: backoffs (at most 10 s) expire

HOSTNAME, ZONE, RACK = "kubernetes.io/hostname", "topology.kubernetes.io/zone", "example.com/rack"
TOPOLOGY_KEYS = (HOSTNAME, ZONE, RACK)
ZONES, RACKS = ("z1", "z2", "z3"), ("r1", "r2")
NAMESPACES = ("default", "team")
LABEL_VALUES = {"app": ("a", "b", "c"), "tier": ("x", "y")}
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
HARD_EFFECTS = ("NoSchedule", "NoExecute")


# --------------------------------------------------------------------------- random objects


@dataclass(frozen=True)
class Shapes:
    """What random objects may hold (by default everything the API server accepts here)."""

    hard: bool = True  # DoNotSchedule constraints, required pod (anti-)affinity
    soft: bool = True  # ScheduleAnyway constraints
    # nodes that reject pods or miss topology labels: taints, nodeSelector, required node
    # affinity, small capacity
    picky_nodes: bool = True
    node_ranges: bool = True  # Gt / Lt in required node affinity
    affinity_label_keys: bool = True  # matchLabelKeys / mismatchLabelKeys in affinity terms
    priorities: bool = True  # pods of different priorities: preemption
    terminating: bool = True  # bound pods with a deletionTimestamp
    empty_spread_selectors: bool = True  # a constraint's labelSelector {}


EVERYTHING = Shapes()
# What the reference policies cannot do, left out (their headers' "Deviations"): nominated
# pods and preemption victims (one priority: no preemption), existing pods' matchLabelKeys,
# Gt / Lt in node affinity for nodeAffinityPolicy, an empty spread selector (the reference
# counts every pod, kube none); and the ScheduleAnyway score, whose domains and
# normalisation the reference takes over all nodes (kube: the feasible ones): HARD has no
# ScheduleAnyway constraint, SOFT none but those, on nodes where every pod fits.
HARD = Shapes(soft=False, node_ranges=False, affinity_label_keys=False, priorities=False,
              empty_spread_selectors=False)
SOFT = replace(HARD, hard=False, soft=True, picky_nodes=False)


def random_labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(v) for k, v in LABEL_VALUES.items() if rng.random() < 0.8}


def random_selector(rng: random.Random, empty: bool = True) -> dict[str, Any] | None:
    """A label selector: sometimes nil (selects nothing) or, if ``empty``, {} (everything)."""
    draw = rng.random()
    if draw < 0.08:
        return None
    if draw < 0.15 and empty:
        return {}
    selector: dict[str, Any] = {}
    if rng.random() < 0.7:
        key = rng.choice(list(LABEL_VALUES))
        selector["matchLabels"] = {key: rng.choice(LABEL_VALUES[key])}
    if not selector or rng.random() < 0.4:
        key = rng.choice(list(LABEL_VALUES))
        operator = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
        expression: dict[str, Any] = {"key": key, "operator": operator}
        if operator in ("In", "NotIn"):
            expression["values"] = rng.sample(LABEL_VALUES[key], rng.randint(1, 2))
        selector["matchExpressions"] = [expression]
    return selector


def unnamed_keys(selector: Mapping[str, Any] | None) -> list[str]:
    """The pod label keys ``selector`` does not name (the API server refuses a key in both
    a selector and its matchLabelKeys / mismatchLabelKeys)."""
    named = set((selector or {}).get("matchLabels") or {})
    named |= {e["key"] for e in (selector or {}).get("matchExpressions") or ()}
    return [k for k in LABEL_VALUES if k not in named]


def random_constraint(rng: random.Random, shapes: Shapes, kinds: Sequence[str]
                      ) -> dict[str, Any]:
    kind = rng.choice(kinds)
    constraint: dict[str, Any] = {"maxSkew": rng.choice((1, 1, 2)),
                                  "topologyKey": rng.choice(TOPOLOGY_KEYS),
                                  "whenUnsatisfiable": kind}
    selector = random_selector(rng, shapes.empty_spread_selectors)
    if selector is not None:
        constraint["labelSelector"] = selector
        free = unnamed_keys(selector)
        if free and rng.random() < 0.3:
            constraint["matchLabelKeys"] = [rng.choice(free)]
    if kind == DO_NOT_SCHEDULE and rng.random() < 0.2:
        constraint["minDomains"] = rng.choice((2, 4))
    if shapes.picky_nodes:
        if rng.random() < 0.3:
            constraint["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.3:
            constraint["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
    return constraint


def random_term(rng: random.Random, shapes: Shapes) -> dict[str, Any]:
    """A PodAffinityTerm: namespaces, namespaceSelector {} (all), match/mismatchLabelKeys."""
    term: dict[str, Any] = {"topologyKey": rng.choice(TOPOLOGY_KEYS)}
    selector = random_selector(rng)
    if selector is not None:
        term["labelSelector"] = selector
        if shapes.affinity_label_keys:
            for key in unnamed_keys(selector):
                where = rng.choice((None, None, "matchLabelKeys", "mismatchLabelKeys"))
                if where:
                    term.setdefault(where, []).append(key)
    draw = rng.random()
    if draw < 0.2:
        term["namespaces"] = rng.sample(NAMESPACES, rng.randint(1, 2))
    elif draw < 0.35:
        term["namespaceSelector"] = {}
    return term


def random_node_term(rng: random.Random, shapes: Shapes) -> dict[str, Any]:
    draw = rng.random()
    if shapes.node_ranges and draw < 0.25:
        return {"matchExpressions": [{"key": "cores", "operator": rng.choice(("Gt", "Lt")),
                                      "values": [rng.choice(("4", "16"))]}]}
    if draw < 0.5:
        return {"matchExpressions": [{"key": ZONE, "operator": rng.choice(("In", "NotIn")),
                                      "values": rng.sample(ZONES, rng.randint(1, 2))}]}
    if draw < 0.75:
        return {"matchExpressions": [{"key": RACK,
                                      "operator": rng.choice(("Exists", "DoesNotExist"))}]}
    return {"matchFields": [{"key": "metadata.name", "operator": rng.choice(("In", "NotIn")),
                             "values": [f"node-{rng.randrange(8)}"]}]}


def random_pod(rng: random.Random, name: str, shapes: Shapes, node: str = "",
               rich: bool = False) -> dict[str, Any]:
    """A pod (bound to ``node`` if given); ``rich``: more likely to have constraints and
    terms (a probe)."""
    chance = 0.8 if rich else 0.3
    spec: dict[str, Any] = {
        "schedulerName": PROFILE,
        "priority": rng.choice((0, 0, 10)) if shapes.priorities else 0,
        "containers": [{"name": "c", "resources": {"requests": {
            "cpu": rng.choice(("100m", "500m")), "memory": "64Mi"}}}],
    }
    kinds = [k for k, on in ((DO_NOT_SCHEDULE, shapes.hard), (SCHEDULE_ANYWAY, shapes.soft))
             if on]
    if rng.random() < chance:
        constraints: dict[tuple[str, str], dict[str, Any]] = {}  # the API: one per key, kind
        for _ in range(rng.randint(1, 2)):
            c = random_constraint(rng, shapes, kinds)
            constraints[c["topologyKey"], c["whenUnsatisfiable"]] = c
        spec["topologySpreadConstraints"] = list(constraints.values())
    affinity: dict[str, Any] = {}
    for kind, when, allowed in (("podAffinity", REQUIRED, shapes.hard),
                                ("podAntiAffinity", REQUIRED, shapes.hard),
                                ("podAffinity", PREFERRED, True),
                                ("podAntiAffinity", PREFERRED, True)):
        if allowed and rng.random() < chance / 2:
            terms: list[dict[str, Any]] = [random_term(rng, shapes)
                                           for _ in range(rng.randint(1, 2))]
            if when == PREFERRED:
                terms = [{"weight": rng.randint(1, 100), "podAffinityTerm": t} for t in terms]
            affinity.setdefault(kind, {})[when] = terms
    if shapes.picky_nodes:
        if rng.random() < 0.15:
            spec["nodeSelector"] = {ZONE: rng.choice(ZONES)}
        if rng.random() < 0.15:
            affinity["nodeAffinity"] = {REQUIRED: {"nodeSelectorTerms": [
                random_node_term(rng, shapes) for _ in range(rng.randint(1, 2))]}}
        if rng.random() < 0.3:
            spec["tolerations"] = [rng.choice((
                {"key": "dedicated", "operator": "Exists"},
                {"key": "dedicated", "operator": "Equal", "value": "batch",
                 "effect": "NoSchedule"},
                {"operator": "Exists"}))]
    if affinity:
        spec["affinity"] = affinity
    metadata: dict[str, Any] = {"name": name, "namespace": rng.choice(NAMESPACES),
                                "creationTimestamp": START, "labels": random_labels(rng)}
    if node:
        spec["nodeName"] = node
        if shapes.terminating and rng.random() < 0.2:
            metadata["deletionTimestamp"] = START
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def random_node(rng: random.Random, name: str, shapes: Shapes) -> dict[str, Any]:
    labels = {HOSTNAME: name, ZONE: rng.choice(ZONES), RACK: rng.choice(RACKS)}
    taints = []
    allocatable = {"cpu": "64", "memory": "64Gi", "pods": "110"}
    if shapes.picky_nodes:
        for key in TOPOLOGY_KEYS:
            if rng.random() < 0.12:
                del labels[key]
        if rng.random() < 0.5:
            labels["cores"] = rng.choice(("2", "8", "32"))
        if rng.random() < 0.25:
            taints.append({"key": "dedicated", "value": rng.choice(("batch", "gpu")),
                           "effect": rng.choice(("NoSchedule", "NoExecute",
                                                 "PreferNoSchedule"))})
        allocatable.update(cpu=rng.choice(("2", "8")), pods=rng.choice(("5", "110")))
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "creationTimestamp": START, "labels": labels},
            "spec": {"taints": taints}, "status": {"allocatable": allocatable}}


def random_cluster(rng: random.Random, shapes: Shapes, nodes: int, bound: int,
                   pending: int = 0) -> list[dict[str, Any]]:
    objects = [random_node(rng, f"node-{i}", shapes) for i in range(nodes)]
    objects += [random_pod(rng, f"bound-{i}", shapes, f"node-{rng.randrange(nodes)}")
                for i in range(bound)]
    objects += [random_pod(rng, f"pending-{i}", shapes) for i in range(pending)]
    return objects


# --------------------------------------------------------------------------- engines


@cache
def new_engine() -> Engine:
    """The built-in library and configuration: the policies with aggregates."""
    return load_engine([], None)


@cache
def reference_engine() -> Engine:
    """The built-in configuration with the reference (brute-force CEL) spread and
    affinity policies instead of the built-in ones."""
    builtin = load_policy_set([BUILTIN_POLICIES])
    reference = load_policy_set([REFERENCE / f"{name}.yaml" for name in (SPREAD, AFFINITY)])
    assert builtin.valid and reference.valid, (builtin.diagnostics, reference.diagnostics)
    replaced = {p.name for p in reference.policies}
    assert replaced == {SPREAD, AFFINITY}, replaced
    policies = [p for p in builtin.policies if p.name not in replaced] + list(
        reference.policies)
    [configuration] = builtin.configurations
    return Engine(*build_frameworks(policies, dict(configuration.value)))


def scheduler(objects: Sequence[dict[str, Any]], engine: Engine, evaluation: str
              ) -> tuple[Scheduler, MemoryBackend, SimulatedClock]:
    """A scheduler with ``engine``'s profiles in tier ``evaluation``, synced with a memory
    backend holding ``objects``; and that backend and its clock."""
    clock = SimulatedClock(CLOCK_START)
    backend = MemoryBackend(json.loads(json.dumps(list(objects))), clock)
    s = Scheduler(backend, engine.frameworks, replace(engine.settings, evaluation=evaluation))
    s.sync()
    assert not s.unserved
    return s, backend, clock


# --------------------------------------------------------------------------- kube's counts


Requirements = tuple[tuple[str, str, tuple[str, ...]], ...] | None  # None: selects nothing


def requirements(selector: Mapping[str, Any] | None) -> Requirements:
    """``metav1.LabelSelectorAsSelector``: nil selects nothing, {} everything."""
    if selector is None:
        return None
    out = [(k, "In", (v,)) for k, v in (selector.get("matchLabels") or {}).items()]
    out += [(e["key"], e["operator"], tuple(e.get("values") or ()))
            for e in selector.get("matchExpressions") or ()]
    return tuple(out)


def satisfied(required: Requirements, labels: Mapping[str, str]) -> bool:
    """``labels.Selector.Matches`` (NotIn and DoesNotExist hold without the label)."""
    if required is None:
        return False
    for key, operator, values in required:
        value = labels.get(key)
        holds = {"In": value in values, "NotIn": value not in values,
                 "Exists": key in labels, "DoesNotExist": key not in labels}[operator]
        if not holds:
            return False
    return True


def with_label_keys(required: Requirements, match: Sequence[str], mismatch: Sequence[str],
                    labels: Mapping[str, str]) -> Requirements:
    """matchLabelKeys / mismatchLabelKeys merged into a selector (nil stays nil)."""
    if required is None:
        return None
    return (required + tuple((k, "In", (labels[k],)) for k in match if k in labels)
            + tuple((k, "NotIn", (labels[k],)) for k in mismatch if k in labels))


@dataclass(frozen=True)
class Term:
    """kube-scheduler's ``AffinityTerm``."""

    selector: Requirements
    namespaces: frozenset[str]
    all_namespaces: bool  # namespaceSelector {}
    topology_key: str

    def selects(self, pod: PodInfo) -> bool:
        return ((self.all_namespaces or pod.namespace in self.namespaces)
                and satisfied(self.selector, pod.view["labels"]))


def affinity_term(term: Mapping[str, Any], owner: PodInfo) -> Term:
    """``newAffinityTerm`` of ``owner``'s term: its selector as stored (the API server merged
    its label keys when it created the pod)."""
    namespace_selector = term.get("namespaceSelector")
    namespaces = frozenset(term.get("namespaces") or ())
    if not namespaces and namespace_selector is None:
        namespaces = frozenset((owner.namespace,))
    return Term(requirements(term.get("labelSelector")), namespaces,
                requirements(namespace_selector) == (), term["topologyKey"])


def node_affinity_matches(pod: PodInfo, node: NodeInfo) -> bool:
    """``nodeaffinity.RequiredNodeAffinity.Match``: nodeSelector AND one term (ORed;
    requirements ANDed; an empty term matches nothing)."""
    labels = node.view["labels"]
    if any(labels.get(k) != v for k, v in pod.view["nodeSelector"].items()):
        return False
    required = ((pod.view["affinity"] or {}).get("nodeAffinity") or {}).get(REQUIRED)
    if required is None:
        return True

    def holds(e: Mapping[str, Any]) -> bool:
        key, operator, values = e["key"], e["operator"], e.get("values") or []
        if operator in ("Gt", "Lt"):
            try:
                have, bound = int(labels[key]), int(values[0])
            except (KeyError, ValueError):
                return False
            return have > bound if operator == "Gt" else have < bound
        return satisfied(((key, operator, tuple(values)),), labels)

    def field_holds(f: Mapping[str, Any]) -> bool:
        return (node.name in f["values"]) == (f["operator"] == "In")

    return any((t.get("matchExpressions") or t.get("matchFields"))
               and all(holds(e) for e in t.get("matchExpressions") or ())
               and all(field_holds(f) for f in t.get("matchFields") or ())
               for t in required.get("nodeSelectorTerms") or ())


def tolerated(pod: PodInfo, node: NodeInfo) -> bool:
    """No NoSchedule / NoExecute taint of the node untolerated (``ToleratesTaint``)."""
    def tolerates(t: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
        return ((not t["effect"] or t["effect"] == taint["effect"])
                and (not t["key"] or t["key"] == taint["key"])
                and (t["operator"] == "Exists"
                     or (t["operator"] in ("", "Equal") and t["value"] == taint["value"])))

    return all(any(tolerates(t, taint) for t in pod.view["tolerations"])
               for taint in node.view["taints"] if taint["effect"] in HARD_EFFECTS)


@dataclass(frozen=True)
class Values:
    """An aggregate's values: per snapshot node ``count`` and ``onNode``; ``minimum()``,
    ``domains()``, ``total()``."""

    count: tuple[int, ...]
    on_node: tuple[int, ...]
    minimum: int
    domains: int
    total: int


AggregateValues = Values | list[Values] | str  # str: the error computing it


def by_domain(snapshot: Snapshot, own: Sequence[int], key: str,
              eligible: Sequence[bool]) -> Values:
    """Pods per node summed per value of ``key`` over the eligible nodes carrying it."""
    sums: dict[str, int] = {}
    for node, n, ok in zip(snapshot.nodes, own, eligible, strict=True):
        value = node.view["labels"].get(key)
        if ok and value is not None:
            sums[value] = sums.get(value, 0) + n
    count = tuple(sums.get(n.view["labels"].get(key), 0) if key in n.view["labels"] else 0
                  for n in snapshot.nodes)
    return Values(count, tuple(own), min(sums.values(), default=0), len(sums),
                  sum(sums.values()))


def kube_spread(pod: PodInfo, snapshot: Snapshot) -> list[Values]:
    """PodTopologySpread's counts for each of the pod's constraints (PreFilter's
    ``TpValueToMatchNum`` and critical paths; PreScore's per-node count on the node):
    pods in the pod's namespace, not terminating, matching the constraint's selector
    (matchLabelKeys merged; an empty selector counts nothing: ``countPodsMatchSelector``),
    on the nodes carrying every topology key of the constraints of its kind and passing
    the node inclusion policies."""
    constraints = [c for c in pod.view["spec"].get("topologySpreadConstraints") or ()
                   if c["whenUnsatisfiable"] in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)]
    out = []
    for c in constraints:
        keys = [d["topologyKey"] for d in constraints
                if d["whenUnsatisfiable"] == c["whenUnsatisfiable"]]
        selector = with_label_keys(requirements(c.get("labelSelector")),
                                   c.get("matchLabelKeys") or (), (), pod.view["labels"])
        eligible = [all(k in n.view["labels"] for k in keys)
                    and (c.get("nodeAffinityPolicy", "Honor") != "Honor"
                         or node_affinity_matches(pod, n))
                    and (c.get("nodeTaintsPolicy", "Ignore") != "Honor" or tolerated(pod, n))
                    for n in snapshot.nodes]
        own = [0 if not selector else sum(
            1 for p in n.pods.values()
            if not p.deleting and p.namespace == pod.namespace
            and satisfied(selector, p.view["labels"])) for n in snapshot.nodes]
        out.append(by_domain(snapshot, own, c["topologyKey"], eligible))
    return out


def _terms(pod: PodInfo, kind: str, when: str) -> list[Any]:
    return list(((pod.view["affinity"] or {}).get(kind) or {}).get(when) or ())


def kube_affinity(pod: PodInfo, snapshot: Snapshot) -> dict[str, AggregateValues]:
    """InterPodAffinity's counts: pods matching all the pod's required affinity terms, or
    one of its other terms, per domain of each term (nodes carrying its key); and the
    existing pods' terms that select the pod, each weighing 1 or its weight in its own
    domain, a node summing the domains of its labels (``existingAntiAffinityCounts``,
    PreScore's ``topologyScore``)."""
    everywhere = [True] * len(snapshot.nodes)

    def selected(terms: Sequence[Term], key: str) -> Values:
        own = [sum(1 for p in n.pods.values() if all(t.selects(p) for t in terms))
               for n in snapshot.nodes]
        return by_domain(snapshot, own, key, everywhere)

    def existing(kind: str, when: str) -> Values:
        pairs: Counter[tuple[str, str]] = Counter()
        own = []
        for node in snapshot.nodes:
            labels, mine = node.view["labels"], 0
            for p in node.pods.values():
                for raw in _terms(p, kind, when):
                    weight, raw = (raw["weight"], raw["podAffinityTerm"]) if when == PREFERRED \
                        else (1, raw)
                    term = affinity_term(raw, p)
                    if term.topology_key in labels and term.selects(pod):
                        pairs[term.topology_key, labels[term.topology_key]] += weight
                        mine += weight
            own.append(mine)
        count = tuple(sum(pairs.get(item, 0) for item in n.view["labels"].items())
                      for n in snapshot.nodes)
        return Values(count, tuple(own), 0, 0, sum(own))

    required = [affinity_term(t, pod) for t in _terms(pod, "podAffinity", REQUIRED)]
    anti = [affinity_term(t, pod) for t in _terms(pod, "podAntiAffinity", REQUIRED)]
    preferred = [affinity_term(w["podAffinityTerm"], pod)
                 for kind in ("podAffinity", "podAntiAffinity")
                 for w in _terms(pod, kind, PREFERRED)]
    return {
        "affinity": [selected(required, t.topology_key) for t in required],
        "antiAffinity": [selected([t], t.topology_key) for t in anti],
        "preferred": [selected([t], t.topology_key) for t in preferred],
        "existingAntiAffinity": existing("podAntiAffinity", REQUIRED),
        "existingAffinity": existing("podAffinity", REQUIRED),
        "existingPreferredAffinity": existing("podAffinity", PREFERRED),
        "existingPreferredAntiAffinity": existing("podAntiAffinity", PREFERRED),
    }


def kube_values(pod: PodInfo, snapshot: Snapshot) -> dict[str, AggregateValues]:
    out: dict[str, AggregateValues] = {f"{SPREAD}.matching": list(kube_spread(pod, snapshot))}
    out.update((f"{AFFINITY}.{k}", v) for k, v in kube_affinity(pod, snapshot).items())
    return out


# --------------------------------------------------------------------------- the engine's


def engine_values(fwk: Framework, state: CycleState, snapshot: Snapshot
                  ) -> dict[str, AggregateValues]:
    """Every aggregate of both policies for ``state``'s pod, as its rules read them."""
    out: dict[str, AggregateValues] = {}
    for instance in fwk.instances:
        if instance.name not in (SPREAD, AFFINITY):
            continue
        aggregates = state.base(instance)["aggregates"]
        for spec in instance.policy.aggregates:
            name = f"{instance.name}.{spec.name}"
            try:
                value = aggregates[spec.name]
            except CelError as e:
                out[name] = f"error: {e}"
                continue
            out[name] = [values_of(v, snapshot) for v in value] if isinstance(value, list) \
                else values_of(value, snapshot)
    return out


def values_of(value: Any, snapshot: Snapshot) -> Values:
    nodes = [n.view for n in snapshot.nodes]
    return Values(tuple(value.count(n) for n in nodes), tuple(value.on_node(n) for n in nodes),
                  value.minimum(), value.domains(), value.total())


def fresh_state(s: Scheduler, pod: PodInfo, snapshot: Snapshot) -> CycleState:
    """``s.cycle_state`` with a new node table: every column computed from scratch."""
    return CycleState(pod, int(s.clock.now()), snapshot.pod_views, snapshot.node_views,
                      snapshot.pods_with_affinity_views,
                      cluster=ClusterView(snapshot, NodeTable()))


def differences(got: Mapping[str, AggregateValues], want: Mapping[str, AggregateValues],
                snapshot: Snapshot) -> list[str]:
    """What differs, one line per aggregate field, naming the nodes."""
    out = [f"{name}: {'missing' if name not in got else 'unexpected'}"
           for name in sorted(set(got) ^ set(want))]
    for name in sorted(set(got) & set(want)):
        a, b = got[name], want[name]
        pairs: list[tuple[str, AggregateValues, AggregateValues]] = [(name, a, b)]
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            pairs = [(f"{name}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, b, strict=True))]
        for label, x, y in pairs:
            if not (isinstance(x, Values) and isinstance(y, Values)):
                if x != y:
                    out.append(f"{label}: got {x}, want {y}")
                continue
            for f in ("count", "on_node", "minimum", "domains", "total"):
                mine, theirs = getattr(x, f), getattr(y, f)
                if mine == theirs:
                    continue
                if isinstance(mine, tuple):  # per node: the nodes that differ
                    rows = [i for i, (m, t) in enumerate(zip(mine, theirs, strict=True))
                            if m != t]
                    mine, theirs = ({snapshot.nodes[i].name: v[i] for i in rows}
                                    for v in (mine, theirs))
                out.append(f"{label}.{f}: got {mine}, want {theirs}")
    return out


def describe_cluster(snapshot: Snapshot) -> str:
    lines = []
    for node in snapshot.nodes:
        taints = [f"{t['key']}={t['value']}:{t['effect']}" for t in node.view["taints"]]
        lines.append(f"  {node.name} {node.view['labels']} {taints or ''}")
        for p in node.pods.values():
            lines.append(f"    {p.key} {p.view['labels']}{' deleting' if p.deleting else ''}"
                         f" {json.dumps(p.view['spec'].get('affinity') or {})[:300]}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- 1. incremental


INCREMENTAL_CASES = 16
SMALL_TABLE = 6  # columns
EVENTS = 40
PROBES = 3


@dataclass
class Driven:
    """A scheduler over a memory backend, driven by random events."""

    case: int
    rng: random.Random
    scheduler: Scheduler
    backend: MemoryBackend
    clock: SimulatedClock
    probes: list[PodInfo]
    events: list[str] = field(default_factory=list)
    deleted_nodes: list[str] = field(default_factory=list)
    serial: Iterator[int] = field(default_factory=itertools.count)

    def name(self, prefix: str) -> str:
        return f"{prefix}-{next(self.serial)}"

    def pods(self, bound: bool | None = None) -> list[dict[str, Any]]:
        return [p for p in self.backend.objects("Pod")
                if bound is None or bool(p["spec"].get("nodeName")) == bound]

    def node_names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.backend.objects("Node")]

    def check(self) -> None:
        """Every aggregate for every probe: long-lived table = fresh table = kube."""
        s = self.scheduler
        snapshot = s.cache.snapshot()
        fwk = s.profiles[PROFILE]
        for probe in self.probes:
            want = kube_values(probe, snapshot)
            for label, state in (("incremental", s.cycle_state(probe, snapshot)),
                                 ("recomputed", fresh_state(s, probe, snapshot))):
                found = differences(engine_values(fwk, state, snapshot), want, snapshot)
                if found:
                    pytest.fail(self.report(label, probe, found, snapshot), pytrace=False)

    def report(self, label: str, probe: PodInfo, found: list[str], snapshot: Snapshot) -> str:
        shown = "\n".join(f"  {d}" for d in found[:12])
        events = "\n".join(f"  {i}. {e}" for i, e in enumerate(self.events, 1))
        return (f"{label} aggregates differ from kube's after event {len(self.events)} "
                f"(case {self.case}; {SETTINGS.reproduce(TEST, self.case)})\n"
                f"probe {probe.key} labels {probe.view['labels']} spec "
                f"{json.dumps(probe.view['spec'], sort_keys=True)}\n{shown}\n"
                f"events:\n{events}\ncluster:\n{describe_cluster(snapshot)}")

    def apply(self, what: str) -> None:
        self.events.append(what)
        self.scheduler.sync()
        self.check()


def _pick(rng: random.Random, items: Sequence[Any]) -> Any:
    return rng.choice(items) if items else None


def event_add_pod(d: Driven) -> None:
    node = _pick(d.rng, d.node_names()) if d.rng.random() < 0.5 else ""
    pod = d.backend.add_object(random_pod(d.rng, d.name("new-pod"), EVERYTHING, node or ""))
    d.apply(f"add pod {pod['metadata']['namespace']}/{pod['metadata']['name']} "
            f"{pod['metadata']['labels']}" + (f" on {node}" if node else ""))


def event_delete_pod(d: Driven) -> None:
    pod = _pick(d.rng, d.pods())
    if pod is not None:
        d.backend.delete_object("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
        d.apply(f"delete pod {pod['metadata']['namespace']}/{pod['metadata']['name']}")


def event_relabel_pod(d: Driven) -> None:
    pod = _pick(d.rng, d.pods())
    if pod is not None:
        pod["metadata"]["labels"] = random_labels(d.rng)
        d.backend.update_object(pod)
        d.apply(f"relabel pod {pod['metadata']['namespace']}/{pod['metadata']['name']} "
                f"{pod['metadata']['labels']}")


def event_terminate_pod(d: Driven) -> None:
    pod = _pick(d.rng, [p for p in d.pods(bound=True)
                        if not p["metadata"].get("deletionTimestamp")])
    if pod is not None:
        pod["metadata"]["deletionTimestamp"] = START
        d.backend.update_object(pod)
        d.apply(f"pod {pod['metadata']['namespace']}/{pod['metadata']['name']} terminating")


def event_finish_pod(d: Driven) -> None:
    pod = _pick(d.rng, d.pods(bound=True))
    if pod is not None:
        pod.setdefault("status", {})["phase"] = "Succeeded"
        d.backend.update_object(pod)
        d.apply(f"pod {pod['metadata']['namespace']}/{pod['metadata']['name']} succeeded")


def event_add_node(d: Driven) -> None:
    """A new node, or one deleted before (its pods, kept by the cache, count again)."""
    name = d.deleted_nodes.pop() if d.deleted_nodes and d.rng.random() < 0.5 \
        else d.name("new-node")
    node = d.backend.add_object(random_node(d.rng, name, EVERYTHING))
    d.apply(f"add node {name} {node['metadata']['labels']} {node['spec']['taints']}")


def event_relabel_node(d: Driven) -> None:
    name = _pick(d.rng, d.node_names())
    if name is not None:
        fresh = random_node(d.rng, name, EVERYTHING)
        node = d.backend.get("Node", name)
        assert node is not None
        node["metadata"]["labels"], node["spec"] = fresh["metadata"]["labels"], fresh["spec"]
        d.backend.update_object(node)
        d.apply(f"relabel node {name} {fresh['metadata']['labels']} {fresh['spec']['taints']}")


def event_delete_node(d: Driven) -> None:
    name = _pick(d.rng, d.node_names())
    if name is not None and len(d.node_names()) > 1:
        d.backend.delete_object("Node", name)
        d.deleted_nodes.append(name)
        d.apply(f"delete node {name}")


def event_schedule(d: Driven) -> None:
    """One scheduling cycle: checked with the pod assumed, then bound."""
    s = d.scheduler
    attempts = {k: r.attempts for k, r in s.records.items()}
    binds = len(d.backend.bindings)
    if not s.schedule_one():
        d.clock.advance(11)  # past the longest backoff
        s.advance()
        if not s.schedule_one():
            return
    tried = [k for k, r in s.records.items() if r.attempts != attempts.get(k, 0)]
    bound = [f"{b.pod} on {b.node}" for b in d.backend.bindings[binds:]]
    d.events.append(f"schedule {', '.join(tried)}: {', '.join(bound) or 'not bound'}")
    d.check()  # the pod assumed, its bind not seen yet
    d.apply("the cycle's events")


def event_assume_and_forget(d: Driven) -> None:
    s = d.scheduler
    pod, node = _pick(d.rng, s.cache.pending_pods()), _pick(d.rng, d.node_names())
    if pod is None or node is None:
        return
    s.cache.assume(pod, node)
    d.events.append(f"assume {pod.key} on {node}")
    d.check()
    obj = d.backend.pod(pod.key)
    if obj is not None and d.rng.random() < 0.5:  # an event for the assumed pod
        obj["metadata"]["labels"] = random_labels(d.rng)
        d.backend.update_object(obj)
        d.apply(f"relabel assumed pod {pod.key} {obj['metadata']['labels']}")
    s.cache.forget(pod)
    d.events.append(f"forget {pod.key}")
    d.check()


EVENT_KINDS: tuple[tuple[Callable[[Driven], None], int], ...] = (
    (event_add_pod, 5), (event_delete_pod, 2), (event_relabel_pod, 3),
    (event_terminate_pod, 1), (event_finish_pod, 1), (event_add_node, 1),
    (event_relabel_node, 2), (event_delete_node, 1), (event_schedule, 5),
    (event_assume_and_forget, 2))


def created(pod: dict[str, Any]) -> dict[str, Any]:
    """``pod`` as the API server creates it (its terms' label keys merged)."""
    merge_label_keys(pod)
    return pod


def probe_pods(rng: random.Random) -> list[dict[str, Any]]:
    """``PROBES`` rich pods, each with a twin in another namespace with other labels: the
    same terms, that must not share the columns of the pods they count."""
    probes = []
    for i in range(PROBES):
        probe = random_pod(rng, f"probe-{i}", EVERYTHING, rich=True)
        twin = json.loads(json.dumps(probe))
        metadata = twin["metadata"]
        metadata["name"] = f"twin-{i}"
        metadata["namespace"] = next(n for n in NAMESPACES if n != metadata["namespace"])
        metadata["labels"] = random_labels(rng)
        probes += [probe, twin]
    return probes


@pytest.mark.parametrize("case", SETTINGS.cases(INCREMENTAL_CASES))
def test_aggregates_kept_incrementally_equal_a_recomputation_and_kube(
        case: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = SETTINGS.rng(TEST + ":incremental", case)
    if case % 3 == 2:  # a table too small for its columns: the least recently used go
        monkeypatch.setattr(node_table, "MAX_COLUMNS", SMALL_TABLE)
    objects = random_cluster(rng, EVERYTHING, nodes=rng.randint(3, 8), bound=rng.randint(0, 20),
                             pending=rng.randint(0, 8))
    s, backend, clock = scheduler(objects, new_engine(), VECTORISED if case % 2 else SCALAR)
    probes = [pod_info(created(p)) for p in probe_pods(rng)]
    d = Driven(case, rng, s, backend, clock, probes)
    d.check()
    kinds, weights = zip(*EVENT_KINDS, strict=True)
    for _ in range(EVENTS):
        rng.choices(kinds, weights)[0](d)


# --------------------------------------------------------------------------- 2. placements


PLACEMENT_CASES = 10

Outcomes = dict[str, tuple[str | None, str | None, int]]  # pod -> node, message, attempts


def simulate(s: Scheduler, clock: SimulatedClock) -> Outcomes:
    """Schedule until nothing is left to do within ``HORIZON`` simulated seconds."""
    end = clock.now() + HORIZON
    for _ in range(1000):
        while s.schedule_one():
            s.sync()
        s.sync()
        wakeup = s.next_wakeup()
        if wakeup is None or wakeup > end:
            break
        clock.advance_to(max(wakeup, clock.now()))
        s.advance()
    return {k: (r.node, r.message, r.attempts) for k, r in s.records.items()}


@pytest.mark.parametrize("case", SETTINGS.cases(PLACEMENT_CASES))
@pytest.mark.parametrize("mode", ["hard", "soft"])
def test_placements_equal_those_of_the_reference_policies(mode: str, case: int) -> None:
    shapes = HARD if mode == "hard" else SOFT
    rng = SETTINGS.rng(f"{TEST}:placements:{mode}", case)
    objects = random_cluster(rng, shapes, nodes=rng.randint(3, 8), bound=rng.randint(4, 20),
                             pending=rng.randint(8, 20))
    runs: dict[str, Outcomes] = {}
    for policies, engine in (("reference", reference_engine()), ("new", new_engine())):
        for tier in (SCALAR, VECTORISED):
            s, _, clock = scheduler(objects, engine, tier)
            runs[f"{policies} policies, {tier}"] = simulate(s, clock)
    (reference, want), *others = runs.items()
    for run, got in others:
        differ = [f"  {pod}: {got.get(pod)}, reference scalar: {want.get(pod)}"
                  for pod in sorted(set(got) | set(want)) if got.get(pod) != want.get(pod)]
        assert not differ, (
            f"{run}: {len(differ)} pod(s) placed unlike the {reference} (case {case}; "
            f"{SETTINGS.reproduce(TEST, case)})\n" + "\n".join(differ[:10])
            + "\npending pods:\n" + "\n".join(
                f"  {o['metadata']['namespace']}/{o['metadata']['name']} "
                f"{o['metadata']['labels']} {json.dumps(o['spec'], sort_keys=True)}"
                for o in objects if o["kind"] == "Pod" and not o["spec"].get("nodeName")))


# --------------------------------------------------------------------------- 3. what-if


WHAT_IF_CASES = 24
CHANGES = 6


@pytest.mark.parametrize("case", SETTINGS.cases(WHAT_IF_CASES))
def test_a_what_if_node_filters_like_the_cluster_it_stands_for(case: int) -> None:
    rng = SETTINGS.rng(f"{TEST}:what-if", case)
    objects = random_cluster(rng, EVERYTHING, nodes=rng.randint(3, 8), bound=rng.randint(4, 24))
    probes = [pod_info(created(random_pod(rng, f"probe-{i}", EVERYTHING, rich=True)))
              for i in range(4)]
    s, _, _ = scheduler(objects, new_engine(), SCALAR)
    fwk = s.profiles[PROFILE]
    # the filters of the whole profile, and those of the policies with aggregates alone (the
    # others often reject a node first)
    filters = {"profile": fwk.rules(ExtensionPoint.FILTER),
               "aggregates": tuple((i, r) for i, r in fwk.rules(ExtensionPoint.FILTER)
                                   if i.name in (SPREAD, AFFINITY))}
    snapshot = s.cache.snapshot()
    # one cycle state per probe, as preemption keeps one for all the what-ifs of a cycle
    states = [s.cycle_state(probe, snapshot) for probe in probes]
    prefiltered = [fwk.run_pre_filter(state).status.is_success for state in states]
    for change in range(CHANGES):
        node = rng.choice([n for n in snapshot.nodes if n.pods] or snapshot.nodes)
        on_node = [o for o in objects
                   if o["kind"] == "Pod" and o["spec"].get("nodeName") == node.name]
        removed = rng.sample(on_node, min(len(on_node), rng.randint(0, 3)))
        added = [created(random_pod(rng, f"added-{change}-{i}", EVERYTHING, node.name))
                 for i in range(rng.randint(0 if removed else 1, 2))]
        what_if = node.clone()
        for obj in removed:
            assert what_if.remove_pod(pod_info(obj)) is not None
        for obj in added:
            what_if.add_pod(pod_info(obj))
        real, _, _ = scheduler([o for o in objects if o not in removed] + added, new_engine(),
                               SCALAR)
        real_snapshot = real.cache.snapshot()
        real_node = real_snapshot.node(node.name)
        assert real_node is not None
        for probe, state, ok in zip(probes, states, prefiltered, strict=True):
            real_state = real.cycle_state(probe, real_snapshot)
            if not (ok and fwk.run_pre_filter(real_state).status.is_success):
                continue
            for which, rules in filters.items():
                got = fwk.run_filter(state, what_if, rules)
                want = fwk.run_filter(real_state, real_node, rules)
                assert got == want, (
                    f"{which} filters: what-if {node.name} differs from the real cluster "
                    f"(case {case}; {SETTINGS.reproduce(TEST, case)})\n"
                    f"  what-if: {got}\n  real: {want}\n"
                    f"removed: {[pod_key_of(o) for o in removed]}\n"
                    f"added: {json.dumps(added)}\n"
                    f"probe {probe.key} {probe.view['labels']} "
                    f"{json.dumps(probe.view['spec'], sort_keys=True)}\n"
                    f"cluster:\n{describe_cluster(snapshot)}")
    # the what-ifs left the cycles' own values as they were
    for probe, state in zip(probes, states, strict=True):
        fresh = s.cycle_state(probe, snapshot)
        assert [fwk.run_filter(state, n) for n in snapshot.nodes] == [
            fwk.run_filter(fresh, n) for n in snapshot.nodes], probe.key


def pod_key_of(obj: Mapping[str, Any]) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


# --------------------------------------------------------------------------- kube, not the
# reference: where the reference deviates, the new policies do what kube-scheduler does


def node_object(name: str, zone: str, cpu: str = "4", tainted: bool = False
                ) -> dict[str, Any]:
    taints = [{"key": "dedicated", "value": "other", "effect": "NoSchedule"}] if tainted else []
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME: name, ZONE: zone}},
            "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod_object(name: str, app: str, *, priority: int = 0, node: str = "", cpu: str = "100m",
               affinity: Mapping[str, Any] | None = None,
               spread: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": PROFILE, "priority": priority, "containers": [
        {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if node:
        spec["nodeName"] = node
    if affinity:
        spec["affinity"] = dict(affinity)
    if spread:
        spec["topologySpreadConstraints"] = list(spread)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": START,
                         "labels": {"app": app}},
            "spec": spec}


def required(kind: str, app: str, key: str = HOSTNAME) -> dict[str, Any]:
    """A pod (anti-)affinity with one required term selecting ``app``."""
    return {kind: {REQUIRED: [{"labelSelector": {"matchLabels": {"app": app}},
                               "topologyKey": key}]}}


def spread_by(key: str, app: str) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": DO_NOT_SCHEDULE,
            "labelSelector": {"matchLabels": {"app": app}}}


# On n1 the low-priority pods stand in the way of the high-priority pod "preemptor"; n2 is
# tainted (no preemption helps there). kube-scheduler's preemption removes them with
# RemovePod: the counts drop and n1 fits, so they are evicted and the preemptor goes there.
# The reference counts them still: no victims found (except for the affinity case, where
# still counting the victim happens to let the preemptor in).
PREEMPTIONS = {
    "the pod's anti-affinity": (
        [pod_object("low", "web", node="n1")],
        pod_object("preemptor", "api", priority=100,
                   affinity=required("podAntiAffinity", "web")), True),
    "an existing pod's anti-affinity": (
        [pod_object("low", "db", node="n1", affinity=required("podAntiAffinity", "api"))],
        pod_object("preemptor", "api", priority=100), True),
    "spreading": (
        [pod_object("low-1", "web", node="n1"), pod_object("low-2", "web", node="n1")],
        pod_object("preemptor", "web", priority=100, spread=[spread_by(ZONE, "web")]), True),
    "the first pod of an affinity group": (  # the only matching pod is the victim
        [pod_object("low", "web", node="n1", cpu="3500m")],
        pod_object("preemptor", "web", priority=100, cpu="1",
                   affinity=required("podAffinity", "web", ZONE)), False),
}


@pytest.mark.parametrize("tier", [SCALAR, VECTORISED])
@pytest.mark.parametrize("case", list(PREEMPTIONS))
def test_preemption_removes_the_victims_from_the_counts(case: str, tier: str) -> None:
    victims, preemptor, reference_differs = PREEMPTIONS[case]
    objects = [node_object("n1", "z1"), node_object("n2", "z2", tainted=True), *victims,
               preemptor]
    for policies, engine in (("new", new_engine()), ("reference", reference_engine())):
        s, backend, clock = scheduler(objects, engine, tier)
        outcome = simulate(s, clock)["default/preemptor"]
        evicted = sorted(e.pod for e in backend.evictions)
        if policies == "new":
            assert outcome[0] == "n1", outcome
            assert evicted == sorted(pod_key_of(v) for v in victims)
        elif reference_differs:
            assert outcome[0] is None and not evicted, (outcome, evicted)


# "nominated" preempts "low" on n1 and is nominated there; before it binds, "late" (lower
# priority) must count it on n1, as kube-scheduler's filter with nominated pods does (n2 is
# full of a pod nothing can preempt). The reference does not see it and puts "late" on n1.
NOMINATIONS = {
    "the pod's anti-affinity": (
        pod_object("nominated", "a", priority=100, cpu="1"),
        pod_object("late", "b", priority=50, affinity=required("podAntiAffinity", "a")),
        "node(s) didn't match pod anti-affinity rules"),
    "the nominated pod's anti-affinity": (
        pod_object("nominated", "a", priority=100, cpu="1",
                   affinity=required("podAntiAffinity", "b")),
        pod_object("late", "b", priority=50),
        "node(s) didn't satisfy existing pods anti-affinity rules"),
    "spreading": (
        pod_object("nominated", "a", priority=100, cpu="1"),
        pod_object("late", "a", priority=50, spread=[spread_by(HOSTNAME, "a")]),
        "node(s) didn't match pod topology spread constraints"),
}


@pytest.mark.parametrize("tier", [SCALAR, VECTORISED])
@pytest.mark.parametrize("case", list(NOMINATIONS))
def test_a_pod_nominated_on_a_node_counts_there(case: str, tier: str) -> None:
    nominated, late, reason = NOMINATIONS[case]
    objects = [node_object("n1", "z1", cpu="2"), node_object("n2", "z2", cpu="2"),
               pod_object("low", "filler", node="n1", cpu="1500m"),
               pod_object("full", "filler", priority=1000, node="n2", cpu="2"), nominated]
    for policies, engine in (("new", new_engine()), ("reference", reference_engine())):
        s, backend, _ = scheduler(objects, engine, tier)
        assert s.schedule_one()
        s.sync()
        assert [e.pod for e in backend.evictions] == ["default/low"]
        assert s.nominated["default/nominated"][0] == "n1"
        backend.add_object(late)
        s.sync()
        pod = s.cache.pod("default/late")
        assert pod is not None
        snapshot = s.cache.snapshot()
        decision = s.decide(s.profiles[PROFILE], s.cycle_state(pod, snapshot), snapshot)
        if policies == "new":
            assert decision.node is None and reason in decision.message, decision
        else:
            assert decision.node == "n1", decision


def test_an_empty_spread_selector_counts_no_pod() -> None:
    """kube-scheduler's ``countPodsMatchSelector`` counts nothing for an empty selector
    (``labelSelector: {}``, no matchLabelKeys merged in): every domain counts 0, the pod
    itself 1, so the constraint never blocks. Here n1's zone holds three pods of the
    namespace, n2's none; the pod may only go to n1 (nodeSelector; n2 still a domain:
    nodeAffinityPolicy Ignore)."""
    constraint = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DO_NOT_SCHEDULE,
                  "labelSelector": {}, "nodeAffinityPolicy": "Ignore"}
    pod = pod_object("spread", "web", spread=[constraint])
    pod["spec"]["nodeSelector"] = {ZONE: "z1"}
    objects = [node_object("n1", "z1"), node_object("n2", "z2"), pod,
               *(pod_object(f"other-{i}", "other", node="n1") for i in range(3))]
    for tier in (SCALAR, VECTORISED):
        s, _, clock = scheduler(objects, new_engine(), tier)
        assert simulate(s, clock)["default/spread"][0] == "n1", tier


# --------------------------------------------------------------------------- namespaceSelector


def namespace_object(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def in_namespace(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    obj["metadata"]["namespace"] = namespace
    return obj


def by_team(kind: str, app: str, team: str) -> dict[str, Any]:
    """A required pod (anti-)affinity term selecting ``app`` in the namespaces of ``team``."""
    return {kind: {REQUIRED: [{"labelSelector": {"matchLabels": {"app": app}},
                               "namespaceSelector": {"matchLabels": {"team": team}},
                               "topologyKey": HOSTNAME}]}}


@pytest.mark.parametrize("tier", [SCALAR, VECTORISED])
def test_the_pods_namespace_selector_selects_by_the_namespaces_labels(tier: str) -> None:
    """The incoming pod's required affinity to `app: web` in namespaces labelled `team: a`:
    only the web pod of shop-a (on n2) counts, not shop-b's (on n1) nor one in a namespace
    not known. A pod with affinity to `team: c` fits nowhere until a namespace is
    relabelled so: the event moves it, and it counts that namespace's pods (the counts
    are cached per question, and the question changes with the namespaces' labels)."""
    objects = [node_object("n1", "z1"), node_object("n2", "z2"), node_object("n3", "z3"),
               namespace_object("shop-a", team="a"), namespace_object("shop-b", team="b"),
               in_namespace(pod_object("web-b", "web", node="n1"), "shop-b"),
               in_namespace(pod_object("web-a", "web", node="n2"), "shop-a"),
               in_namespace(pod_object("web-unknown", "web", node="n3"), "nowhere"),
               pod_object("api-a", "api", affinity=by_team("podAffinity", "web", "a")),
               pod_object("api-c", "api", affinity=by_team("podAffinity", "web", "c"))]
    s, backend, clock = scheduler(objects, new_engine(), tier)
    outcomes = simulate(s, clock)
    assert outcomes["default/api-a"][0] == "n2"
    node, message, _ = outcomes["default/api-c"]
    assert node is None and "didn't match pod affinity rules" in str(message)
    backend.update_object(namespace_object("shop-b", team="c"))
    s.sync()
    assert simulate(s, clock)["default/api-c"][0] == "n1"


@pytest.mark.parametrize("tier", [SCALAR, VECTORISED])
def test_an_existing_pods_term_reads_an_unknown_namespace_as_one_without_labels(
        tier: str) -> None:
    """kube-scheduler's GetNamespaceLabelsSnapshot: for existing pods' terms, a namespace
    it does not know has no labels, so `team DoesNotExist` selects its pods."""
    guard = pod_object("guard", "db", node="n1", affinity={"podAntiAffinity": {REQUIRED: [{
        "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME,
        "namespaceSelector": {"matchExpressions": [{"key": "team",
                                                    "operator": "DoesNotExist"}]}}]}})
    pending = [in_namespace(pod_object("web", "web"), namespace)
               for namespace in ("nowhere", "shop-b")]
    for pod in pending:
        pod["spec"]["nodeSelector"] = {HOSTNAME: "n1"}
    objects = [node_object("n1", "z1"), namespace_object("shop-b", team="b"), guard, *pending]
    s, _, clock = scheduler(objects, new_engine(), tier)
    outcomes = simulate(s, clock)
    assert outcomes["nowhere/web"][0] is None
    assert outcomes["shop-b/web"][0] == "n1"


@pytest.mark.parametrize("tier", [SCALAR, VECTORISED])
def test_an_existing_pods_namespace_selector_selects_by_the_namespaces_labels(
        tier: str) -> None:
    """An existing pod's required anti-affinity to `app: web` in namespaces labelled
    `team: a` keeps the web pods of such namespaces off its node, and only them: not one
    of a namespace labelled otherwise, nor one of a namespace not known (kube reads it as
    one without labels)."""
    guard = in_namespace(pod_object("guard", "db", node="n1",
                                    affinity=by_team("podAntiAffinity", "web", "a")), "ops")
    pending = {name: in_namespace(pod_object(name, "web"), namespace)
               for name, namespace in (("web-a", "shop-a"), ("web-b", "shop-b"),
                                       ("web-unknown", "nowhere"))}
    for pod in pending.values():
        pod["spec"]["nodeSelector"] = {HOSTNAME: "n1"}
    objects = [node_object("n1", "z1"), node_object("n2", "z2"),
               namespace_object("shop-a", team="a"), namespace_object("shop-b", team="b"),
               guard, *pending.values()]
    s, _, clock = scheduler(objects, new_engine(), tier)
    outcomes = simulate(s, clock)
    node, message, _ = outcomes["shop-a/web-a"]
    assert node is None and "didn't satisfy existing pods anti-affinity rules" in str(message)
    assert outcomes["shop-b/web-b"][0] == "n1"
    assert outcomes["nowhere/web-unknown"][0] == "n1"


def test_a_pod_recreated_with_other_terms_is_counted_with_its_new_terms() -> None:
    """A counted pod's ``termsOf`` terms are kept per pod object (evaluated once, not on
    every change of its node): a pod deleted and created again under the same name with
    other terms is counted with the new ones."""
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
             for name in ("n0", "n1")]

    def guard(anti: bool) -> dict[str, Any]:
        spec: dict[str, Any] = {"nodeName": "n0", "containers": [{"name": "c"}]}
        if anti:
            spec["affinity"] = {"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "topologyKey": "kubernetes.io/hostname"}]}}
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "guard", "namespace": "default"}, "spec": spec}

    web = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
           "spec": {"schedulerName": "policysched", "containers": [{"name": "c"}]}}
    s, backend, _ = scheduler([*nodes, guard(False), web], new_engine(), VECTORISED)
    fwk = next(iter(s.profiles.values()))
    [instance] = [i for i in fwk.instances if i.name == AFFINITY]

    def counted() -> list[int]:
        snapshot = s.cache.snapshot()
        pod = s.cache.pod("default/web")
        assert pod is not None
        base = s.cycle_state(pod, snapshot).base(instance)  # its aggregates live with it
        value = base["aggregates"]["existingAntiAffinity"]
        return [value.count(n.view) for n in snapshot.nodes]

    assert counted() == [0, 0]
    for anti in (True, False, True):
        backend.delete_object("Pod", "guard", "default")
        backend.add_object(guard(anti))
        s.sync()
        assert counted() == ([1, 0] if anti else [0, 0]), anti


def test_an_aggregate_that_counts_nothing_is_the_same_for_the_vectorised_caches() -> None:
    """``freeze`` (tier 4's key) makes two aggregates that count nothing anywhere equal, so
    a rule reading one keeps its results from one pod to the next; any aggregate that
    counts something is only itself."""
    nodes = [NodeInfo.of({"metadata": {"name": f"n{i}"}}) for i in range(3)]
    view = ClusterView(Snapshot(1, nodes), NodeTable())

    def value(counts: list[int], total: int = 0) -> AggregateValue:
        return AggregateValue(view, np.array(counts, np.int64), np.array(counts, np.int64),
                              0, 0, total, lambda node, row: WhatIf(0, 0, 0, 0))

    empty, other_empty = value([0, 0, 0]), value([0, 0, 0])
    assert empty != other_empty  # as CEL values they stay distinct objects
    assert freeze(empty) == freeze(other_empty)
    counting, same_counts = value([1, 0, 0], 1), value([1, 0, 0], 1)
    assert freeze(counting) != freeze(same_counts) != freeze(empty)


REPELLING_TERMS = ("p.labels.?repels.orValue('') == 'web' ? [{'labelSelector': dyn({"
                   "'matchLabels': {'app': 'web'}}), 'topologyKey': dyn('kubernetes.io/hostname')}]"
                   " : "
                   "p.affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution"
                   ".orValue([])")


@pytest.mark.parametrize("tier", [SCALAR, VECTORISED])
def test_only_pods_with_affinity_are_read_when_terms_come_from_the_affinity_alone(
        tier: str, tmp_path: Path) -> None:
    """A ``termsOf`` that reads the pod only through ``p.affinity`` (the built-in one)
    skips the pods without any; one that reads anything else (here the labels) reads
    every pod, so a pod without affinity can still keep others off its node."""
    text = (BUILTIN_POLICIES / f"{AFFINITY}.yaml").read_text()
    builtin_terms = ('termsOf: "p.affinity.?podAntiAffinity.?'
                     'requiredDuringSchedulingIgnoredDuringExecution.orValue([])"')
    assert builtin_terms in text
    (tmp_path / "affinity.yaml").write_text(text.replace(
        builtin_terms, "termsOf: " + json.dumps(REPELLING_TERMS)))
    builtin = load_policy_set([BUILTIN_POLICIES])
    changed = load_policy_set([tmp_path / "affinity.yaml"])
    assert builtin.valid and changed.valid, changed.diagnostics
    [configuration] = builtin.configurations
    for policies, only_with_affinity in ((builtin.policies, True), (
            [p for p in builtin.policies if p.name != AFFINITY] + list(changed.policies),
            False)):
        [policy] = [p for p in policies if p.name == AFFINITY]
        [terms] = [a for a in policy.aggregates if a.name == "existingAntiAffinity"]
        assert terms.terms_of is not None
        assert _only_with_affinity(terms.terms_of, policy.params) is only_with_affinity
        guard = pod_object("guard", "db", node="n1")
        guard["metadata"]["labels"]["repels"] = "web"
        web = pod_object("web", "web")
        web["spec"]["nodeSelector"] = {HOSTNAME: "n1"}
        engine = Engine(*build_frameworks(policies, dict(configuration.value)))
        s, _, clock = scheduler([node_object("n1", "z1"), guard, web], engine, tier)
        node, message, _ = simulate(s, clock)["default/web"]
        if only_with_affinity:
            assert node == "n1"
        else:
            assert node is None
            assert "didn't satisfy existing pods anti-affinity rules" in str(message)


@pytest.mark.parametrize(("terms_of", "only_with_affinity"), [
    ("p.affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution"
     ".orValue([])", True),
    ("has(p.affinity.podAffinity) ? p.affinity.podAffinity"
     ".?requiredDuringSchedulingIgnoredDuringExecution.orValue([]) : []", True),
    # a pod with node affinity only could have terms: every pod with an affinity is read
    ("p.affinity.?nodeAffinity.hasValue() ? p.affinity.?podAffinity"
     ".?requiredDuringSchedulingIgnoredDuringExecution.orValue([]) : []", False),
    ("p.affinity.size() > 0 ? [] : []", False),
    (REPELLING_TERMS, False),
])
def test_only_pods_with_pod_affinity_are_read_when_terms_come_from_it_alone(
        terms_of: str, only_with_affinity: bool, tmp_path: Path) -> None:
    """The proof that lets a cluster whose placed pods have no pod (anti-)affinity count
    nothing without reading a node: ``termsOf`` reads the pod only through
    ``p.affinity.podAffinity`` and ``p.affinity.podAntiAffinity``, and gives no term for
    a pod without an affinity."""
    text = (BUILTIN_POLICIES / f"{AFFINITY}.yaml").read_text()
    builtin_terms = ('termsOf: "p.affinity.?podAntiAffinity.?'
                     'requiredDuringSchedulingIgnoredDuringExecution.orValue([])"')
    (tmp_path / "affinity.yaml").write_text(text.replace(
        builtin_terms, "termsOf: " + json.dumps(terms_of)))
    changed = load_policy_set([tmp_path / "affinity.yaml"])
    assert changed.valid, changed.diagnostics
    [policy] = changed.policies
    [terms] = [a for a in policy.aggregates if a.name == "existingAntiAffinity"]
    assert terms.terms_of is not None
    assert _only_with_affinity(terms.terms_of, policy.params) is only_with_affinity
