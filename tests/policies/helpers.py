"""Hand-written activations for the policy library's unit tests.

``pod()`` and ``node()`` build the CEL views with every field ``policysched.policy.variables``
declares (and nothing else), filled with the API defaults the cache uses; ``Cluster`` adds
the node aggregates (requested, free, podCount, usedPorts) from the pods placed on each node,
as the cache does. ``Harness`` evaluates one compiled policy the way the engine's
``Framework`` does: variables computed lazily once per pod, filter rules in order up to the
first failure, score rules per node, preFilter / preScore / permit / postFilter / bind
fields.

``KubeCase`` runs a policy in the engine itself on API objects (pods, nodes), the model and
cache computing what the views hold: for kube-scheduler's plugin tests, which are written on
pods and nodes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from policysched.cache.cache import has_pod_affinity
from policysched.cache.node_info import NodeInfo
from policysched.commands.loading import load_engine
from policysched.framework.runtime import CycleState, Framework
from policysched.framework.status import Status
from policysched.model.objects import pod_info
from policysched.model.resources import NON_ZERO_DEFAULTS, ordered
from policysched.model.selectors import (
    PodAffinityTerm,
    pod_affinity_term,
    required_node_affinity,
    untolerated_taint,
)
from policysched.policy import ExtensionPoint, Policy, load_policy_set
from policysched.policy.model import Aggregate

from ..framework import POLICIES_ONLY

POLICIES = Path(__file__).resolve().parents[2] / "policies"

GI = 1024**3
MI = 1024**2


@cache
def load(name: str) -> Policy:
    """The compiled policy of ``policies/<name>.yaml`` (it must validate cleanly)."""
    policy_set = load_policy_set([POLICIES / f"{name}.yaml"])
    assert policy_set.errors == (), policy_set.errors
    [policy] = policy_set.policies
    return policy


# --------------------------------------------------------------------------- views


def pod(name: str = "web-1", *, namespace: str = "default", labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None, creation: int = 1000, priority: int = 0,
        requests: Mapping[str, int] | None = None, limits: Mapping[str, int] | None = None,
        ports: Sequence[Mapping[str, Any]] = (), tolerations: Sequence[Mapping[str, Any]] = (),
        node_selector: Mapping[str, str] | None = None, affinity: Mapping[str, Any] | None = None,
        node_name: str = "", scheduler_name: str = "policysched",
        pod_group: Mapping[str, Any] | None = None, spec: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None, status: Mapping[str, Any] | None = None,
        ) -> dict[str, Any]:
    """A ``policysched.Pod`` view. ``spec`` adds raw spec fields (topologySpreadConstraints,
    containers, preemptionPolicy...); affinity, nodeSelector, tolerations, nodeName and
    priority are mirrored into it as in the API object."""
    full_tolerations = [
        {"key": t.get("key", ""), "operator": t.get("operator", "Equal"),
         "value": t.get("value", ""), "effect": t.get("effect", ""),
         "tolerationSeconds": t.get("tolerationSeconds", 0)}
        for t in tolerations
    ]
    full_ports = [
        {"containerPort": p.get("containerPort", p.get("hostPort", 80)),
         "hostPort": p.get("hostPort", 0), "protocol": p.get("protocol", "TCP"),
         "hostIP": p.get("hostIP", "")}
        for p in ports
    ]
    raw_spec: dict[str, Any] = {"containers": [{"name": "main", "image": "busybox"}],
                                "schedulerName": scheduler_name, "priority": priority}
    if affinity:
        raw_spec["affinity"] = dict(affinity)
    if node_selector:
        raw_spec["nodeSelector"] = dict(node_selector)
    if node_name:
        raw_spec["nodeName"] = node_name
    raw_spec.update(spec or {})
    raw_metadata = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                    "labels": dict(labels or {}), "annotations": dict(annotations or {})}
    raw_metadata.update(metadata or {})
    group = {"name": "", "minMember": 0, "scheduleTimeoutSeconds": 0}
    group.update(pod_group or {})
    # one container: kube's non-zero defaults apply to the pod as to that container
    non_zero = {**(requests or {})}
    for resource, default in NON_ZERO_DEFAULTS.items():
        non_zero.setdefault(resource, default)
    return {
        "name": name,
        "namespace": namespace,
        "uid": raw_metadata["uid"],
        "labels": dict(labels or {}),
        "annotations": dict(annotations or {}),
        "creationTimestamp": creation,
        "priority": priority,
        "requests": ordered(requests or {}),  # in kube's order, as the model lists them
        "nonZeroRequests": ordered(non_zero),
        "limits": dict(limits or {}),
        "ports": full_ports,
        "tolerations": full_tolerations,
        "nodeSelector": dict(node_selector or {}),
        "affinity": dict(affinity or {}),
        "schedulerName": scheduler_name,
        "nodeName": node_name,
        "ownerReferences": [],
        "podGroup": group,
        "metadata": raw_metadata,
        "spec": raw_spec,
        "status": dict(status or {"phase": "Running" if node_name else "Pending"}),
    }


def node(name: str = "node-a", *, labels: Mapping[str, str] | None = None,
         taints: Sequence[Mapping[str, str]] = (), unschedulable: bool = False,
         allocatable: Mapping[str, int] | None = None, images: Mapping[str, int] | None = None,
         annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A ``policysched.Node`` view with nothing on it (``Cluster`` adds the pods).
    ``kubernetes.io/hostname`` is set to the name unless ``labels`` sets it."""
    all_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    alloc = dict(allocatable if allocatable is not None
                 else {"cpu": 4000, "memory": 8 * GI, "pods": 110})
    full_taints = [{"key": t["key"], "value": t.get("value", ""), "effect": t["effect"]}
                   for t in taints]
    spec: dict[str, Any] = {}
    if full_taints:
        spec["taints"] = full_taints
    if unschedulable:
        spec["unschedulable"] = True
    requested = dict.fromkeys(alloc, 0)
    requested["pods"] = 0
    return {
        "name": name,
        "labels": all_labels,
        "annotations": dict(annotations or {}),
        "taints": full_taints,
        "unschedulable": unschedulable,
        "allocatable": alloc,
        "requested": requested,
        "nonZeroRequested": {**requested, **dict.fromkeys(NON_ZERO_DEFAULTS, 0)},
        "free": dict(alloc),
        "podCount": 0,
        "usedPorts": [],
        "images": dict(images or {}),
        "csiVolumeLimits": {},
        "attachedCSIVolumes": {},
        "csiVolumes": {},
        "usedDisks": [],
        "usedClaims": {},
        "metadata": {"name": name, "labels": all_labels},
        "spec": spec,
        "status": {"allocatable": {k: str(v) for k, v in alloc.items()}},
    }


@dataclass
class Cluster:
    """Nodes and the pods placed on them (``nodeName`` set): node aggregates as the cache
    computes them (requested sums nonzero requests, nonZeroRequested the same with the pods'
    non-zero cpu and memory, free = allocatable - requested, podCount, usedPorts for host
    ports)."""

    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        by_name = {n["name"]: n for n in self.nodes}
        for p in self.pods:
            n = by_name.get(p["nodeName"])
            if n is None:
                continue
            for resource, amount in p["requests"].items():
                if amount:
                    n["requested"][resource] = n["requested"].get(resource, 0) + amount
                    if resource in n["allocatable"]:
                        n["free"][resource] = n["allocatable"][resource] - n["requested"][resource]
            non_zero = {**n["nonZeroRequested"], **n["requested"]}
            for resource in NON_ZERO_DEFAULTS:
                non_zero[resource] = n["nonZeroRequested"][resource] + \
                    p["nonZeroRequests"][resource]
            n["nonZeroRequested"] = non_zero
            n["podCount"] += 1
            n["requested"]["pods"] = n["podCount"]
            n["nonZeroRequested"]["pods"] = n["podCount"]
            if "pods" in n["allocatable"]:
                n["free"]["pods"] = n["allocatable"]["pods"] - n["podCount"]
            for port in p["ports"]:
                if port["hostPort"] > 0:
                    entry = {"hostIP": port["hostIP"], "protocol": port["protocol"],
                             "hostPort": port["hostPort"]}
                    if entry not in n["usedPorts"]:
                        n["usedPorts"].append(entry)

    def node(self, name: str) -> dict[str, Any]:
        return next(n for n in self.nodes if n["name"] == name)

    def pods_on(self, name: str) -> list[dict[str, Any]]:
        return [p for p in self.pods if p["nodeName"] == name]


# --------------------------------------------------------------------------- evaluation


class _Variables(dict[str, Any]):
    """``variables`` of one policy for one pod, computed on first use (as the ``Framework``)."""

    def __init__(self, policy: Policy, base: dict[str, Any]) -> None:
        super().__init__()
        self._expressions = {v.name: v.expression for v in policy.variables}
        self._base = base

    def __missing__(self, name: str) -> Any:
        value = self._expressions[name].evaluate(self._base)
        self[name] = value
        return value


@dataclass
class BruteAggregate:
    """An aggregate recomputed from the views, straight from kube-scheduler's definitions
    (the engine's incremental ``framework.aggregates`` must agree with it)."""

    counts: dict[tuple[str, str], int]  # (topology key, value) -> count
    own: dict[str, int]  # node -> count on it
    keys: tuple[str, ...]  # the topology keys counted
    minimum_count: int = 0
    domain_count: int = 0
    scored_domain_count: int = 0  # every node of the cluster is taken as scored

    def count(self, node: Mapping[str, Any]) -> int:
        labels = node["labels"]
        return sum(self.counts.get((k, labels[k]), 0) for k in self.keys if k in labels)

    def on_node(self, node: Mapping[str, Any]) -> int:
        return self.own.get(node["name"], 0)

    def minimum(self) -> int:
        return self.minimum_count

    def domains(self) -> int:
        return self.domain_count

    def total(self) -> int:
        return sum(self.counts.values())

    def domains_scored(self) -> int:
        return self.scored_domain_count

    def count_column(self, size: int, node: Any) -> None:
        return None

    on_node_column = count_column


def _terms(value: Any, owner: Mapping[str, Any]) -> list[tuple[PodAffinityTerm, int]]:
    out = []
    for item in value if isinstance(value, list) else [value]:
        weight, term = 1, item
        if isinstance(item, dict) and "podAffinityTerm" in item:
            weight, term = item["weight"], item["podAffinityTerm"]
        if type(term) is not PodAffinityTerm:  # else a podAffinityTerm(...) value
            term = pod_affinity_term(term, owner["namespace"])  # as the API server stored it
        out.append((term, weight))
    return out


def brute_aggregate(spec: Aggregate, base: Mapping[str, Any], cluster: Cluster,
                    extra: Mapping[str, Any]) -> BruteAggregate:
    """``spec`` for the pod of ``base`` (its activation) on ``cluster``."""
    the_pod = base["pod"]
    act = {**base, **extra}
    if spec.terms_of is not None:
        counts: dict[tuple[str, str], int] = {}
        own: dict[str, int] = {}
        for n in cluster.nodes:
            for p in cluster.pods_on(n["name"]):
                found = spec.terms_of.evaluate({"p": p, "params": base["params"]})
                for term, weight in _terms(found, p):
                    key = term.topology_key
                    if key in n["labels"] and term.selects(the_pod["labels"],
                                                           the_pod["namespace"]):
                        domain = (key, n["labels"][key])
                        counts[domain] = counts.get(domain, 0) + weight
                        own[n["name"]] = own.get(n["name"], 0) + weight
        return BruteAggregate(counts, own, tuple({k for k, _ in counts}))
    assert spec.pods is not None and spec.group_by is not None
    terms = [t for t, _ in _terms(spec.pods.evaluate(act), the_pod)]
    key = spec.group_by.evaluate(act)
    labels = [str(k) for k in spec.node_labels.evaluate(act)] if spec.node_labels else []
    affinity = spec.node_affinity is not None and spec.node_affinity.evaluate(act) is True
    taints = spec.node_taints is not None and spec.node_taints.evaluate(act) is True
    required = required_node_affinity(the_pod["nodeSelector"], the_pod["affinity"])
    own = {}
    for n in cluster.nodes:
        own[n["name"]] = sum(
            1 for p in cluster.pods_on(n["name"])
            if not (spec.skip_terminating and p["metadata"].get("deletionTimestamp"))
            and all(t.selects(p["labels"], p["namespace"]) for t in terms))
    counts = {}
    labelled = [n for n in cluster.nodes
                if key in n["labels"] and all(k in n["labels"] for k in labels)]
    scored = (len(labelled) if key == "kubernetes.io/hostname"
              else len({n["labels"][key] for n in labelled}))
    for n in labelled:
        if affinity and not required.matches(n["labels"], n["name"]):
            continue
        if taints and untolerated_taint(the_pod["tolerations"], n["taints"],
                                        ("NoSchedule", "NoExecute")) is not None:
            continue
        domain = (key, n["labels"][key])
        counts[domain] = counts.get(domain, 0) + own[n["name"]]
    return BruteAggregate(counts, own, (key,), min(counts.values(), default=0), len(counts),
                          scored)


GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def _group_pods(the_pod: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> int:
    """``podGroupPods``: the pods labelled with ``the_pod``'s group in its namespace."""
    group = the_pod["labels"].get(GROUP_LABEL)
    return 0 if group is None else sum(
        1 for p in pods
        if p["namespace"] == the_pod["namespace"] and p["labels"].get(GROUP_LABEL) == group)


class _Aggregates(dict[str, Any]):
    """``aggregates`` of one policy for one pod, recomputed by ``brute_aggregate``."""

    def __init__(self, policy: Policy, base: dict[str, Any], cluster: Cluster) -> None:
        super().__init__()
        self._policy, self._base, self._cluster = policy, base, cluster

    def __missing__(self, name: str) -> Any:
        spec = self._policy.aggregates_by_name[name]
        value: Any
        if spec.for_each is None:
            value = brute_aggregate(spec, self._base, self._cluster, {})
        else:
            value = [brute_aggregate(spec, self._base, self._cluster, {"item": item})
                     for item in spec.for_each.evaluate(self._base)]
        self[name] = value
        return value


@dataclass(frozen=True)
class Rejection:
    rule: str
    reason: str  # the reasons joined, as kube's status message
    unresolvable: bool
    reasons: tuple[str, ...] = ()


class Harness:
    """One policy evaluated for one pod against a cluster."""

    def __init__(self, policy: str | Policy, the_pod: dict[str, Any],
                 cluster: Cluster | None = None, *, now: int = 2000,
                 params: Mapping[str, Any] | None = None,
                 all_pods: Iterable[dict[str, Any]] | None = None,
                 workload_selector: Mapping[str, Any] | None = None,
                 pod_volumes: Sequence[Mapping[str, Any]] = ()) -> None:
        self.policy = load(policy) if isinstance(policy, str) else policy
        self.pod = the_pod
        self.cluster = cluster or Cluster([])
        pods = list(all_pods) if all_pods is not None else list(self.cluster.pods)
        self.base: dict[str, Any] = {
            "now": now, "pod": the_pod, "params": {**self.policy.params, **(params or {})},
            "pods": pods, "nodes": self.cluster.nodes,
            "podsWithAffinity": [p for p in pods if p["nodeName"] and has_pod_affinity(p)],
            "workloadSelector": workload_selector,
            "podGroupPods": _group_pods(the_pod, pods),
            "podVolumes": list(pod_volumes),
        }
        self.base["variables"] = _Variables(self.policy, self.base)
        self.base["aggregates"] = _Aggregates(self.policy, self.base, self.cluster)

    @property
    def variables(self) -> dict[str, Any]:
        variables: dict[str, Any] = self.base["variables"]
        return variables

    def matches(self) -> bool:
        match = self.policy.match
        act = {k: self.base[k] for k in ("now", "pod", "params")}
        return match is None or match.evaluate(act) is True

    def rules(self, point: ExtensionPoint) -> tuple[Any, ...]:
        return self.policy.rules_for(point)

    def rule(self, point: ExtensionPoint, name: str) -> Any:
        [found] = [r for r in self.rules(point) if r.name == name]
        return found

    def node_activation(self, the_node: dict[str, Any] | str) -> dict[str, Any]:
        n = self.cluster.node(the_node) if isinstance(the_node, str) else the_node
        act = dict(self.base)
        act["node"] = n
        act["nodePods"] = self.cluster.pods_on(n["name"])
        return act

    # filter
    def filter(self, the_node: dict[str, Any] | str) -> Rejection | None:
        """The first failing filter rule (None when the node fits), with its reasons (a
        ``reasons`` rule may give several) and unresolvability on that node."""
        act = self.node_activation(the_node)
        for rule in self.rules(ExtensionPoint.FILTER):
            if rule.reasons is not None:
                reasons = tuple(rule.reasons.evaluate(act))
                assert all(isinstance(r, str) for r in reasons), (rule.name, reasons)
            else:
                value = rule.expression.evaluate(act)
                assert isinstance(value, bool), (rule.name, value)
                reasons = () if value else (rule.reason,)
            if reasons:
                unresolvable = rule.unresolvable
                if rule.unresolvable_expression is not None:
                    unresolvable = rule.unresolvable_expression.evaluate(act)
                return Rejection(rule.name, ", ".join(reasons), unresolvable, reasons)
        return None

    def reasons(self) -> dict[str, str | None]:
        """node name -> reason of the first failing rule (None when it fits)."""
        out: dict[str, str | None] = {}
        for n in self.cluster.nodes:
            rejection = self.filter(n)
            out[n["name"]] = rejection.reason if rejection else None
        return out

    def message(self, point: ExtensionPoint, name: str, the_node: Any = None) -> str:
        rule = self.rule(point, name)
        act = self.node_activation(the_node) if the_node is not None else self.base
        if rule.message_expression is not None:
            return str(rule.message_expression.evaluate(act))
        return str(rule.message)

    # preFilter
    def pre_filter(self) -> Rejection | None:
        for rule in self.rules(ExtensionPoint.PRE_FILTER):
            if rule.expression is not None and rule.expression.evaluate(self.base) is not True:
                return Rejection(rule.name, self.message(ExtensionPoint.PRE_FILTER, rule.name),
                                 rule.unresolvable)
        return None

    def pre_score(self) -> bool:
        return all(r.expression.evaluate(self.base) is True
                   for r in self.rules(ExtensionPoint.PRE_SCORE))

    # score
    def raw_scores(self, name: str | None = None) -> dict[str, Any]:
        """node name -> the score rule's raw value, over every node of the cluster."""
        rules = self.rules(ExtensionPoint.SCORE)
        rule = rules[0] if name is None else self.rule(ExtensionPoint.SCORE, name)
        return {n["name"]: rule.expression.evaluate(self.node_activation(n))
                for n in self.cluster.nodes}

    def evaluate(self, point: ExtensionPoint, name: str, attribute: str = "expression",
                 the_node: Any = None, **extra: Any) -> Any:
        rule = self.rule(point, name)
        act = self.node_activation(the_node) if the_node is not None else dict(self.base)
        act.update(extra)
        return getattr(rule, attribute).evaluate(act)


# --------------------------------------------------------------------------- kube's normalisations


def kube_default_normalize(scores: Mapping[str, int], reverse: bool) -> dict[str, int]:
    """helper.DefaultNormalizeScore(100, reverse, scores), integer arithmetic."""
    top = max(scores.values(), default=0)
    if top == 0:
        return {k: (100 if reverse else v) for k, v in scores.items()}
    out = {}
    for k, v in scores.items():
        s = 100 * v // top
        out[k] = 100 - s if reverse else s
    return out


def kube_minmax(scores: Mapping[str, int]) -> dict[str, int]:
    """InterPodAffinity's NormalizeScore."""
    low, high = min(scores.values()), max(scores.values())
    diff = high - low
    return {k: int(100 * ((v - low) / diff)) if diff > 0 else 0 for k, v in scores.items()}


def ln(x: float) -> float:
    return math.log(x)


# --------------------------------------------------------------------------- huge nodes

INT64_MAX = 2**63 - 1
# amounts around the edges of int64 arithmetic: 2^63-1 is what the cache reads for 8Ei
HUGE_AMOUNTS = (0, 1, 99, 100, 4000, 8 * GI, INT64_MAX // 100, INT64_MAX // 100 + 1, 10**17,
                2**62, INT64_MAX - 1, INT64_MAX)


def huge_cluster(rng: Any) -> tuple[dict[str, Any], Cluster]:
    """A pod and a one-node cluster whose cpu and memory amounts are drawn from
    ``HUGE_AMOUNTS`` (or absent), requested saturated at int64 as the cache does."""
    def amounts() -> dict[str, int]:
        return {r: rng.choice(HUGE_AMOUNTS) for r in ("cpu", "memory") if rng.random() < 0.9}

    running = [pod(f"r{i}", node_name="a", requests=amounts()) for i in range(rng.randint(0, 3))]
    cluster = Cluster([node("a", allocatable={**amounts(), "pods": 110})], running)
    n = cluster.node("a")
    for r, amount in n["requested"].items():
        n["requested"][r] = min(amount, INT64_MAX)
        if r in n["allocatable"]:
            n["free"][r] = n["allocatable"][r] - n["requested"][r]
    for r, amount in n["nonZeroRequested"].items():
        n["nonZeroRequested"][r] = min(amount, INT64_MAX)
    return pod(requests=amounts()), cluster


# --------------------------------------------------------------------------- on API objects


def api_pod(*containers: Mapping[str, str], init: Sequence[Mapping[str, str]] = (),
            sidecars: Sequence[Mapping[str, str]] = (), node: str = "", name: str = "",
            **spec: Any) -> dict[str, Any]:
    """A Pod object with one container per ``containers`` entry (its requests), init
    containers (``init``) after sidecar init containers (``sidecars``); more ``spec``."""
    def container(kind: str, i: int, requests: Mapping[str, str]) -> dict[str, Any]:
        return {"name": f"{kind}{i}", "resources": {"requests": dict(requests)}}

    inits = [{**container("sidecar", i, r), "restartPolicy": "Always"}
             for i, r in enumerate(sidecars)]
    inits += [container("init", i, r) for i, r in enumerate(init)]
    full: dict[str, Any] = {"containers": [container("c", i, r)
                                           for i, r in enumerate(containers)], **spec}
    if inits:
        full["initContainers"] = inits
    if node:
        full["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name or "pod"},
            "spec": full}


def api_node(name: str, **allocatable: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": allocatable, "capacity": allocatable}}


def cap(cpu: str, memory: str) -> dict[str, str]:
    """st.MakeNode().Capacity(...): the allocatable of kube's test nodes (32 pods)."""
    return {"cpu": cpu, "memory": memory, "pods": "32"}


def weights(**by_resource: int) -> dict[str, Any]:
    """The params of a resource score weighting these resources (kube's ResourceSpecs)."""
    return {"resources": [{"name": k.replace("_", "-"), "weight": w}
                          for k, w in by_resource.items()]}


def req(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


def placed_pods(placed: Sequence[tuple[int, Any]]) -> list[dict[str, Any]]:
    """Pods on ``node1``, ``node2`` ... (by index): a container's requests (None: a pod
    without containers, kube's st.MakePod()), or a whole pod."""
    out = []
    for index, what in placed:
        node_name = f"node{index + 1}"
        if what is None:
            out.append(api_pod(node=node_name))
        elif "spec" in what:
            out.append({**what, "spec": {**what["spec"], "nodeName": node_name}})
        else:
            out.append(api_pod(what, node=node_name))
    return out


@cache
def _framework(name: str) -> Framework:
    engine = load_engine([str(POLICIES / f"{name}.yaml")], POLICIES_ONLY)
    return engine.frameworks["policysched"]


@dataclass
class KubeCase:
    """``policy`` in the engine, for the pod ``pod`` on ``nodes`` with ``pods`` on them
    (API objects; a pod's ``nodeName`` places it)."""

    policy: str
    pod: dict[str, Any]
    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def numbered(cls, policy: str, pod: dict[str, Any], nodes: Sequence[dict[str, str]],
                 placed: Sequence[tuple[int, Any]]) -> KubeCase:
        """kube's table-test layout: nodes ``node1``, ``node2`` ... with these allocatables,
        and the ``placed`` pods on them (``placed_pods``)."""
        return cls(policy, pod, [api_node(f"node{i + 1}", **n) for i, n in enumerate(nodes)],
                   placed_pods(placed))

    def infos(self) -> list[NodeInfo]:
        infos = [NodeInfo.of(n) for n in self.nodes]
        for i, p in enumerate(self.pods):
            placed = pod_info({**p, "metadata": {**p["metadata"], "name": f"running-{i}"}})
            next(n for n in infos if n.name == placed.node_name).add_pod(placed)
        return infos

    def state(self) -> tuple[Framework, CycleState]:
        return _framework(self.policy), CycleState(pod_info(self.pod), 0, list, list)

    def filter(self) -> dict[str, Status]:
        """Node name → the policy's filter status."""
        fwk, state = self.state()
        return {n.name: fwk.run_filter(state, n) for n in self.infos()}

    def scores(self, params: Mapping[str, Any] | None = None) -> dict[str, float] | None:
        """Node name → the policy's raw score (its one score rule), with ``params``
        overriding the policy's; None when preScore skips it."""
        fwk, state = self.state()
        if params:
            [instance] = fwk.instances
            fwk = Framework(fwk.scheduler_name, [
                replace(instance, params={**instance.params, **params})])
        fwk.run_pre_score(state)
        infos = self.infos()
        status, _, detail = fwk.run_score(state, infos)
        assert status.is_success, status
        if not detail:
            return None
        [rows] = detail.values()
        return {n.name: raw for n, (raw, _, _) in zip(infos, rows, strict=True)}

    def numbered_scores(self, params: Mapping[str, Any] | None = None) -> list[float] | None:
        """``scores`` in node order (the nodes of ``numbered``)."""
        scores = self.scores(params)
        return None if scores is None else [scores[n["metadata"]["name"]] for n in self.nodes]
