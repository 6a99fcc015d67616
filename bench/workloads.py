"""scheduler_perf's workloads, shared by the benchmarks: pod templates, node shape, init pods,
and a check that a final placement respects what the pods ask for.

The pod templates are copied from kubernetes v1.34 ``test/integration/scheduler_perf``'s
``templates/`` (one ``pause`` container, port 80, requests = limits = 100m / 500Mi); the nodes
are 4 CPU / 32 Gi / 110 pods, labelled ``kubernetes.io/hostname`` and
``topology.kubernetes.io/zone`` (``Workload.zones``, round-robin over the nodes).
``bench/engine.py`` builds them in an in-process cluster, ``bench/e2e.py`` on a real control
plane:

=================  ===========================  ===================================================
workload           scheduler_perf test case     measured pods / nodes
=================  ===========================  ===================================================
basic              SchedulingBasic              pod-default.yaml; nodes in 3 zones (zone-a/b/c) *
node-affinity      SchedulingNodeAffinity       pod-with-node-affinity.yaml: required node affinity
                                                ``topology.kubernetes.io/zone In [zone1, zone2]``;
                                                every node labelled zone=zone1
                                                (labelNodePrepareStrategy, one value)
topology-spread    TopologySpreading            pod-with-topology-spreading.yaml: label
                                                color=blue, one constraint on
                                                topology.kubernetes.io/zone, **maxSkew 5** (the
                                                template's value), DoNotSchedule, selector
                                                color=blue; nodes zoned moon-1/2/3 round-robin
pod-anti-affinity  SchedulingPodAntiAffinity    pod-with-pod-anti-affinity.yaml: label
                                                color=green, required anti-affinity on
                                                kubernetes.io/hostname selecting color=green in
                                                namespaces sched-1 and sched-0; zones as basic *
=================  ===========================  ===================================================

\\* scheduler_perf's nodes for these two carry no zone label; ours keep the 3 zones of the
standard shape (no policy reads them for these pods).

Init pods. scheduler_perf creates and schedules pods before the measured ones (its
``5000Nodes`` parameters): SchedulingBasic 1,000 default pods (nodes / 5),
SchedulingNodeAffinity 5,000 node-affinity pods (one per node), TopologySpreading 5,000
default pods (one per node; they do not match the selector, they only use resources),
SchedulingPodAntiAffinity 1,000 anti-affinity pods in namespace sched-0 (nodes / 5; the
measured pods go to sched-1 and must avoid them). The same ratios apply at every node count.
What matters to the measured pods is where those pods are (resources, and for anti-affinity
the occupied hostnames), so the benchmarks create them *already bound* (``spec.nodeName``),
round-robin over the nodes — pod i on node i mod N, which is where kube-scheduler's
LeastAllocated / BalancedAllocation scoring puts identical pods on identical empty nodes —
and measure every scheduler against the same cluster without timing the unmeasured phase.
Init pods live in namespace ``namespace-1`` and measured pods in ``namespace-2``
(scheduler_perf's per-operation namespaces), except for anti-affinity (sched-0 / sched-1).
Anti-affinity allows one color=green pod per node: its measured pods are capped at
nodes - init pods.

``placement_violations(pods, nodes)`` checks a final pod → node map (Kubernetes API objects):
no node over its allocatable CPU, memory or pod count; every DoNotSchedule topology spread
constraint within its maxSkew; no two pods on one topology domain where a required
anti-affinity term forbids it. It covers what these templates use (label selectors with
matchLabels / matchExpressions, explicit namespace lists), not minDomains,
namespaceSelector or node-affinity-restricted domains.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

START = "2026-11-22T10:00:00Z"
PROFILE = "policysched"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
IMAGE = "registry.k8s.io/pause:3.10.1"


# --------------------------------------------------------------------------- pod templates


def _pod(name: str, namespace: str, *, labels: dict[str, str] | None = None,
         node: str | None = None, **spec: Any) -> dict[str, Any]:
    """scheduler_perf's pod-default.yaml with ``spec`` fields added."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace,
                                "creationTimestamp": START}
    if labels:
        metadata["labels"] = dict(labels)
    body: dict[str, Any] = {
        "schedulerName": PROFILE,
        "containers": [{
            "name": "pause", "image": IMAGE,
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "100m", "memory": "500Mi"},
                          "requests": {"cpu": "100m", "memory": "500Mi"}},
        }],
        **spec,
    }
    if node is not None:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body}


PodTemplate = Callable[[str, str, "str | None"], dict[str, Any]]


def default_pod(name: str, namespace: str, node: str | None = None) -> dict[str, Any]:
    """templates/pod-default.yaml"""
    return _pod(name, namespace, node=node)


def node_affinity_pod(name: str, namespace: str, node: str | None = None) -> dict[str, Any]:
    """templates/pod-with-node-affinity.yaml"""
    return _pod(name, namespace, node=node, affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": ZONE, "operator": "In",
                                  "values": ["zone1", "zone2"]}]}]}}})


def spreading_pod(name: str, namespace: str, node: str | None = None) -> dict[str, Any]:
    """templates/pod-with-topology-spreading.yaml"""
    return _pod(name, namespace, node=node, labels={"color": "blue"},
                topologySpreadConstraints=[{
                    "maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"color": "blue"}}}])


def anti_affinity_pod(name: str, namespace: str, node: str | None = None) -> dict[str, Any]:
    """templates/pod-with-pod-anti-affinity.yaml"""
    return _pod(name, namespace, node=node, labels={"color": "green"}, affinity={
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"color": "green"}},
            "topologyKey": HOSTNAME,
            "namespaces": ["sched-1", "sched-0"]}]}})


@dataclass(frozen=True)
class Workload:
    name: str
    kube: str  # the scheduler_perf test case it mirrors
    zones: tuple[str, ...]  # topology.kubernetes.io/zone values, round-robin over nodes
    init_per_node: float  # init pods per node (scheduler_perf's 5000Nodes parameters)
    init_pod: PodTemplate
    measured_pod: PodTemplate
    init_namespace: str = "namespace-1"
    measured_namespace: str = "namespace-2"
    one_per_node: bool = False  # init + measured pods cannot exceed the node count

    def init_pods(self, nodes: int) -> int:
        return int(nodes * self.init_per_node)

    def measured_pods(self, nodes: int, pods: int) -> int:
        if self.one_per_node:
            return max(0, min(pods, nodes - self.init_pods(nodes)))
        return pods

    def zone(self, index: int) -> str:
        """The zone of the node at ``index`` (round-robin)."""
        return self.zones[index % len(self.zones)]


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("basic", "SchedulingBasic", ("zone-a", "zone-b", "zone-c"), 0.2,
             default_pod, default_pod),
    Workload("node-affinity", "SchedulingNodeAffinity", ("zone1",), 1.0,
             node_affinity_pod, node_affinity_pod),
    Workload("topology-spread", "TopologySpreading", ("moon-1", "moon-2", "moon-3"), 1.0,
             default_pod, spreading_pod),
    Workload("pod-anti-affinity", "SchedulingPodAntiAffinity", ("zone-a", "zone-b", "zone-c"),
             0.2, anti_affinity_pod, anti_affinity_pod, init_namespace="sched-0",
             measured_namespace="sched-1", one_per_node=True),
)}


# --------------------------------------------------------------------------- placement check


_SUFFIXES = {"m": Decimal("0.001"), "": Decimal(1), "k": Decimal(10) ** 3,
             "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
             "P": Decimal(10) ** 15, "E": Decimal(10) ** 18, "Ki": Decimal(2) ** 10,
             "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40,
             "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60}


def quantity(text: str | int | float) -> Decimal:
    """A Kubernetes resource quantity (``100m``, ``500Mi``, ``4``, ``1e3``) as a number."""
    text = str(text).strip()
    number = text.rstrip("kMGTPEim")
    suffix = text[len(number):]
    if suffix not in _SUFFIXES:
        raise ValueError(f"unsupported quantity {text!r}")
    return Decimal(number) * _SUFFIXES[suffix]


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector: a null selector matches nothing, an empty one everything."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        present = key in labels
        if (op == "In" and not (present and labels[key] in values)) \
                or (op == "NotIn" and present and labels[key] in values) \
                or (op == "Exists" and not present) \
                or (op == "DoesNotExist" and present):
            return False
    return True


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


def _key(pod: Mapping[str, Any]) -> str:
    return f"{pod['metadata'].get('namespace', '')}/{pod['metadata']['name']}"


def placement_violations(pods: Iterable[Mapping[str, Any]],
                         nodes: Iterable[Mapping[str, Any]], limit: int = 5) -> list[str]:
    """What the final placement of ``pods`` (bound or not) on ``nodes`` breaks, at most
    ``limit`` messages per kind; empty when every constraint holds (the module docstring
    says what is checked)."""
    node_list = list(nodes)
    node_labels = {n["metadata"]["name"]: _labels(n) for n in node_list}
    bound = [p for p in pods if p.get("spec", {}).get("nodeName") in node_labels]
    return (_resource_violations(bound, node_list, limit)
            + _spread_violations(bound, node_labels, limit)
            + _anti_affinity_violations(bound, node_labels, limit))


def _resource_violations(bound: Sequence[Mapping[str, Any]],
                         nodes: Sequence[Mapping[str, Any]], limit: int) -> list[str]:
    """Nodes whose pods request more CPU or memory, or are more, than they allow."""
    used: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for pod in bound:
        totals = used[pod["spec"]["nodeName"]]
        totals["pods"] += 1
        for container in pod["spec"].get("containers") or []:
            requests = (container.get("resources") or {}).get("requests") or {}
            for resource in ("cpu", "memory"):
                if resource in requests:
                    totals[resource] += quantity(requests[resource])
    out: list[str] = []
    for node in nodes:
        status = node.get("status") or {}
        allocatable = status.get("allocatable") or status.get("capacity") or {}
        name = node["metadata"]["name"]
        for resource, value in used.get(name, {}).items():
            if resource in allocatable and value > quantity(allocatable[resource]):
                out.append(f"node {name}: {resource} {value} requested, "
                           f"{allocatable[resource]} allocatable")
    return out[:limit]


def _spread_violations(bound: Sequence[Mapping[str, Any]],
                       node_labels: Mapping[str, Mapping[str, str]], limit: int) -> list[str]:
    """DoNotSchedule topology spread constraints whose skew (pods of the constraint's
    namespace matching its selector, per domain of the nodes carrying its key) exceeds
    maxSkew. The final skew is a fair check: each placement kube allows keeps it within
    maxSkew, since the global minimum never decreases."""
    constraints: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for pod in bound:
        namespace = pod["metadata"].get("namespace", "")
        for c in pod["spec"].get("topologySpreadConstraints") or []:
            if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule":
                constraints.setdefault(json.dumps([namespace, c], sort_keys=True),
                                       (namespace, c))
    out: list[str] = []
    for namespace, c in constraints.values():
        key = c["topologyKey"]
        counts = dict.fromkeys(sorted({labels[key] for labels in node_labels.values()
                                       if key in labels}), 0)
        for pod in bound:
            domain = node_labels[pod["spec"]["nodeName"]].get(key)
            if domain is not None and pod["metadata"].get("namespace", "") == namespace \
                    and selector_matches(c.get("labelSelector"), _labels(pod)):
                counts[domain] += 1
        if counts and max(counts.values()) - min(counts.values()) > int(c["maxSkew"]):
            out.append(f"topology spread on {key} in {namespace} "
                       f"(selector {json.dumps(c.get('labelSelector'), sort_keys=True)}): "
                       f"skew {max(counts.values()) - min(counts.values())} > maxSkew "
                       f"{c['maxSkew']} ({', '.join(f'{d} {n}' for d, n in counts.items())})")
    return out[:limit]


def _anti_affinity_violations(bound: Sequence[Mapping[str, Any]],
                              node_labels: Mapping[str, Mapping[str, str]],
                              limit: int) -> list[str]:
    """Pods sharing a topology domain with a pod their required anti-affinity term selects
    (in the term's namespaces, else the pod's own). Checking every pod's terms covers both
    directions (the incoming pod's terms and the existing pods')."""
    by_term: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    terms: dict[str, Mapping[str, Any]] = {}
    for pod in bound:
        anti = (pod["spec"].get("affinity") or {}).get("podAntiAffinity") or {}
        for term in anti.get("requiredDuringSchedulingIgnoredDuringExecution") or []:
            term = {**term, "namespaces": sorted(term.get("namespaces")
                                                 or [pod["metadata"].get("namespace", "")])}
            text = json.dumps(term, sort_keys=True)
            terms[text] = term
            by_term[text].append(pod)
    out: list[str] = []
    for text, term in terms.items():
        key, namespaces = term["topologyKey"], set(term["namespaces"])
        selected: dict[str, list[str]] = defaultdict(list)  # domain → matching pods
        for pod in bound:
            domain = node_labels[pod["spec"]["nodeName"]].get(key)
            if domain is not None and pod["metadata"].get("namespace", "") in namespaces \
                    and selector_matches(term.get("labelSelector"), _labels(pod)):
                selected[domain].append(_key(pod))
        for pod in by_term[text]:
            domain = node_labels[pod["spec"]["nodeName"]].get(key)
            others = [k for k in selected.get(domain or "", []) if k != _key(pod)]
            if domain is not None and others:
                out.append(f"anti-affinity of {_key(pod)} on {key}={domain}: "
                           f"{', '.join(others[:3])} there too")
    return out[:limit]
