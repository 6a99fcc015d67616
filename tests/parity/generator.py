"""Seeded scenarios covering the inputs of every plugin of kube-scheduler's default profile.

``generate(seed, count)`` is deterministic: scenario ``i`` of seed ``s`` depends only on
``(s, i)`` and is named ``g<s>-<i>`` (its namespaces, nodes and priority classes carry that
prefix). Each scenario has a theme that shapes its cluster (labelled pods for ``affinity``
and ``spread``, …), and every pod may still use any feature, so that plugins meet each
other. Three themes are preemption's (``PREEMPTION_THEMES``): small nodes full of pods of
several lower priorities, pending pods of higher ones that need room — with
PodDisruptionBudgets over some of the victims (``preemption-budgets``), or blocked by pod
(anti-)affinity and topology spread that only evicting lower-priority pods resolves
(``preemption-placement``):

* resources: cpu/memory requests (or only limits, which the API server copies to requests,
  or none), init containers and sidecars (``restartPolicy: Always``), overhead (through a
  RuntimeClass the oracle creates), pod-level ``spec.resources``, ``example.com/foo``,
  ephemeral storage, nodes with few pod slots;
* nodeSelector, required node affinity (matchExpressions incl. ``Gt``/``Lt``, matchFields
  ``metadata.name``), preferred terms;
* taints (NoSchedule, PreferNoSchedule, NoExecute) and tolerations; unschedulable nodes;
* host ports with protocol and hostIP, on containers and sidecars;
* pod (anti-)affinity, required and preferred, with namespaces, namespaceSelector,
  matchLabelKeys / mismatchLabelKeys; existing pods' anti-affinity;
* topology spread: maxSkew, minDomains, both whenUnsatisfiable, nodeAffinityPolicy /
  nodeTaintsPolicy, matchLabelKeys; nodes without the topology label;
* images (nodes' ``status.images`` with sizes);
* priorities (six levels, one negative), preemption, ``preemptionPolicy: Never``;
  PodDisruptionBudgets with a status (``disruptionsAllowed`` 0 to 2, ``disruptedPods``),
  selectors matching some pods, an empty one (which kube-scheduler reads as matching none);
* start times: each bound pod's ``status.startTime`` (distinct on a node, often equal
  across nodes: preemption ranks candidates by them, and kube picks any of those tied);
* storage, in a share of the scenarios of the themes that do not preempt
  (``generator_storage``): claims bound, waiting for their first consumer or missing,
  volume zones, ReadWriteOncePod, CSI attach limits, disk conflicts.

Every object is one the API server accepts (the oracle reports one it refuses).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .generator_storage import add_storage, wants_storage
from .scenario import (
    NAMESPACE,
    NODE,
    PDB,
    PDB_API_VERSION,
    POD,
    PRIORITY_CLASS,
    SCHEDULER_NAME,
    Object,
    Scenario,
    timestamp,
)

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
FOO = "example.com/foo"
PREEMPTION_THEMES = ("preemption", "preemption-budgets", "preemption-placement")
THEMES = ("resources", "affinity", "preemption", "spread", "taints", "preemption-budgets",
          "ports", "images", "preemption-placement", "mixed")
# the features a theme favours besides its own (``_Context.chance``)
ALSO_FAVOURS = {"preemption-budgets": ("preemption",),
                "preemption-placement": ("preemption", "spread")}
APPS = ("web", "db", "cache")
VERSIONS = ("v1", "v2")
TIERS = ("front", "back")
TEAMS = ("red", "blue")
IMAGES = {  # name → size in bytes (ImageLocality counts 23 MB .. 1000 MB)
    "registry.example/app-a:1.0": 30_000_000,
    "registry.example/app-b:2.1": 250_000_000,
    "registry.example/app-c:3": 800_000_000,
    "registry.example/big:1": 1_500_000_000,
    "registry.example/tiny:1": 5_000_000,
    "docker.io/library/nginx:latest": 180_000_000,
}
POD_IMAGES = (*IMAGES, "nginx", "registry.example/none:1")
TAINTS = (
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "maint", "effect": "NoExecute"},
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
)
TOLERATIONS: tuple[Object, ...] = (
    {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "operator": "Exists"},
    {"operator": "Exists"},
    {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"},
    {"key": "maint", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "spot", "operator": "Equal", "value": "false"},
)
PRIORITIES = {"neg": -10, "low": 10, "mid": 100, "high": 1000, "top": 10000, "never": 1000}
START_SLOTS = 5  # a bound pod starts in one of these minutes, none two pods of a node share
# requests in the preemption themes: bound pods fill small nodes, pending ones need room
VICTIM_REQUESTS = {"cpu": ("100m", "200m", "300m", "500m", "700m"),
                   "memory": ("128Mi", "256Mi", "512Mi", "1Gi")}
PREEMPTOR_REQUESTS = {"cpu": ("300m", "500m", "700m", "700m", "1", "1200m"),
                      "memory": ("256Mi", "512Mi", "1Gi", "1500Mi")}


@dataclass
class _Context:
    """What the pods of one scenario can refer to."""

    rng: random.Random
    sid: str
    theme: str
    namespaces: list[str]
    nodes: list[Object] = field(default_factory=list)
    zones: list[str] = field(default_factory=list)

    @property
    def preempting(self) -> bool:
        return self.theme in PREEMPTION_THEMES

    def chance(self, p: float, *themes: str) -> bool:
        """True with probability ``p`` (three times that, at most 0.9, in ``themes``, in
        ``mixed``, and in the themes that also favour them)."""
        favoured = {self.theme, *ALSO_FAVOURS.get(self.theme, ())}
        boost = bool(favoured.intersection(themes)) or (self.theme == "mixed" and themes)
        return self.rng.random() < (min(0.9, 3 * p) if boost else p)

    def pick(self, *options: Any) -> Any:
        return self.rng.choice(options)


def generate(seed: int, count: int, start: int = 0) -> Iterator[Scenario]:
    """Scenarios ``start`` .. ``start + count - 1`` of ``seed``."""
    for index in range(start, start + count):
        yield scenario(seed, index)


def scenario(seed: int, index: int) -> Scenario:
    rng = random.Random(f"parity-{seed}-{index}")
    sid = f"g{seed}-{index:03d}"
    theme = THEMES[index % len(THEMES)]
    namespaces = [f"{sid}-{suffix}" for suffix in ("a", "b", "c")[:rng.randint(1, 3)]]
    ctx = _Context(rng, sid, theme, namespaces)
    objects: list[Object] = []
    for i, ns in enumerate(namespaces):
        labels = {"team": TEAMS[i % 2]}
        if rng.random() < 0.5:
            labels["env"] = rng.choice(("prod", "dev"))
        objects.append({"apiVersion": "v1", "kind": NAMESPACE,
                        "metadata": {"name": ns, "labels": labels}})
    for name, value in PRIORITIES.items():
        pc: Object = {"apiVersion": "scheduling.k8s.io/v1", "kind": PRIORITY_CLASS,
                      "metadata": {"name": f"{sid}-{name}"}, "value": value}
        if name == "never":
            pc["preemptionPolicy"] = "Never"
        objects.append(pc)
    ctx.zones = [f"zone-{z}" for z in "abc"[:rng.randint(1, 3)]]
    ctx.nodes = [_node(ctx, i) for i in range(rng.randint(2, 8))]
    objects += ctx.nodes
    bound = _bound_pods(ctx)
    objects += _pdbs(ctx, bound)
    objects += bound
    count = rng.randint(5, 9) if ctx.preempting else rng.randint(3, 8)
    pending = [_pod(ctx, f"{sid}-q{i}", pending=True) for i in range(count)]
    storage = wants_storage(seed, index, theme)
    if storage is not None:
        objects += add_storage(storage, sid, ctx.nodes, bound, pending)
    return Scenario(sid, tuple(objects), tuple(pending), f"seed {seed}")


# ------------------------------------------------------------------------------ nodes


def _node(ctx: _Context, i: int) -> Object:
    rng = ctx.rng
    name = f"{ctx.sid}-n{i}"
    labels = {HOSTNAME: name, "kubernetes.io/os": "linux"}
    if rng.random() < 0.9:
        labels[ZONE] = rng.choice(ctx.zones)
    if rng.random() < 0.6:
        labels["disk"] = rng.choice(("ssd", "hdd"))
    if rng.random() < 0.8:
        labels["gen"] = str(rng.randint(1, 6))
    small = ctx.preempting
    allocatable = {
        "cpu": rng.choice(("1", "2", "1500m") if small else ("2", "4", "8", "1500m")),
        "memory": rng.choice(("2Gi", "3Gi", "4Gi") if small else ("4Gi", "8Gi", "16Gi")),
        "pods": rng.choice(("110",) * 8 + ("3", "5")),
        "ephemeral-storage": rng.choice(("20Gi", "100Gi")),
    }
    if ctx.chance(0.3, "resources"):
        allocatable[FOO] = rng.choice(("1", "2", "4"))
    spec: Object = {}
    if ctx.chance(0.08 if ctx.preempting else 0.2, "taints"):  # fewer nodes preemption
        taints: dict[tuple[str, str], Object] = {}  # one taint per key and effect
        for taint in rng.sample(TAINTS, rng.randint(1, 2)):
            taints.setdefault((taint["key"], taint["effect"]), dict(taint))
        spec["taints"] = list(taints.values())
    if ctx.chance(0.06, "taints"):
        spec["unschedulable"] = True
    status: Object = {"allocatable": allocatable, "capacity": dict(allocatable)}
    if ctx.chance(0.3, "images"):
        names = rng.sample(sorted(IMAGES), rng.randint(1, 3))
        status["images"] = [{"names": [n], "sizeBytes": IMAGES[n]} for n in names]
    return {"apiVersion": "v1", "kind": NODE, "metadata": {"name": name, "labels": labels},
            "spec": spec, "status": status}


# ------------------------------------------------------------------------------ pods


def _bound_pods(ctx: _Context) -> list[Object]:
    """Pods on each node, each with a start time no other pod of the node has."""
    pods: list[Object] = []
    per_node = (2, 4) if ctx.preempting else (0, 3)
    for node in ctx.nodes:
        count = ctx.rng.randint(*per_node)
        for slot in ctx.rng.sample(range(START_SLOTS), count):
            pod = _pod(ctx, f"{ctx.sid}-p{len(pods)}", pending=False)
            pod["spec"]["nodeName"] = node["metadata"]["name"]
            pod["status"] = {"startTime": timestamp(60 * slot)}
            pods.append(pod)
    return pods


def _pdbs(ctx: _Context, bound: list[Object]) -> list[Object]:
    """Budgets over bound pods, with the status a disruption controller would write
    (``disruptionsAllowed`` 0 to 2, sometimes a pod already disrupted)."""
    rng = ctx.rng
    always = ctx.theme == "preemption-budgets"
    if not bound or not (always or ctx.chance(0.15, "preemption")):
        return []
    pdbs = []
    for i in range(rng.randint(1, 3 if always else 2)):
        pod = rng.choice(bound)
        labels = pod["metadata"].get("labels", {})
        ns = pod["metadata"]["namespace"]
        selector = _budget_selector(ctx, labels)
        if selector is None:
            continue
        matching = [p for p in bound if p["metadata"]["namespace"] == ns
                    and _selects(selector, p["metadata"].get("labels", {}))]
        allowed = rng.choice((0, 1, 1, 2)) if always else rng.choice((0, 1, 1))
        spec: Object = {"selector": selector}
        if rng.random() < 0.5:
            spec["minAvailable"] = max(0, len(matching) - allowed)
        else:
            spec["maxUnavailable"] = allowed
        status: Object = {"disruptionsAllowed": allowed, "currentHealthy": len(matching),
                          "desiredHealthy": max(0, len(matching) - allowed),
                          "expectedPods": len(matching), "observedGeneration": 1}
        if matching and rng.random() < 0.2:  # an eviction already under way
            status["disruptedPods"] = {rng.choice(matching)["metadata"]["name"]: timestamp(0)}
        pdbs.append({"apiVersion": PDB_API_VERSION, "kind": PDB,
                     "metadata": {"name": f"{ctx.sid}-pdb{i}", "namespace": ns},
                     "spec": spec, "status": status})
    return pdbs


def _budget_selector(ctx: _Context, labels: dict[str, str]) -> Object | None:
    """A selector matching ``labels``' app (or version), rarely an empty one."""
    rng = ctx.rng
    r = rng.random()
    if r < 0.08:
        return {}  # kube-scheduler: a budget with an empty selector covers no pod
    if r < 0.25 and "version" in labels:
        return {"matchLabels": {"version": labels["version"]}}
    if "app" not in labels:
        return None
    if r < 0.4:
        others = [a for a in APPS if a != labels["app"]]
        return {"matchExpressions": [{"key": "app", "operator": "In",
                                      "values": sorted([labels["app"], rng.choice(others)])}]}
    return {"matchLabels": {"app": labels["app"]}}


def _selects(selector: Object, labels: dict[str, str]) -> bool:
    """Whether the generator's selectors (matchLabels, ``In`` expressions) match."""
    if not selector:
        return False
    return (all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())
            and all(labels.get(e["key"]) in e["values"]
                    for e in selector.get("matchExpressions", [])))


def _labels(ctx: _Context) -> dict[str, str]:
    rng = ctx.rng
    labels = {}
    if rng.random() < 0.85:
        labels["app"] = rng.choice(APPS)
    if rng.random() < 0.6:
        labels["version"] = rng.choice(VERSIONS)
    if rng.random() < 0.4:
        labels["tier"] = rng.choice(TIERS)
    return labels


def _pod(ctx: _Context, name: str, *, pending: bool) -> Object:
    rng = ctx.rng
    namespace = rng.choice(ctx.namespaces)
    metadata: Object = {"name": name, "namespace": namespace}
    labels = _labels(ctx)
    if labels:
        metadata["labels"] = labels
    spec: Object = {"containers": [], "terminationGracePeriodSeconds": 0}
    if pending:
        spec["schedulerName"] = SCHEDULER_NAME
    ports = _PortPicker(ctx)
    pod_level = ctx.chance(0.06, "resources")
    for i in range(1 if ctx.preempting and rng.random() < 0.8 else rng.randint(1, 2)):
        spec["containers"].append(_container(ctx, f"c{i}", ports, light=pod_level,
                                             pending=pending))
    if ctx.chance(0.12, "resources") and not pod_level:
        spec["initContainers"] = [_container(ctx, "init", _PortPicker(ctx, never=True))]
    if ctx.chance(0.1, "resources", "ports"):
        sidecar = _container(ctx, "sidecar", ports, light=pod_level)
        sidecar["restartPolicy"] = "Always"
        spec.setdefault("initContainers", []).insert(0, sidecar)
    if pod_level:
        spec["resources"] = {"requests": {"cpu": rng.choice(("1", "1500m")),
                                          "memory": rng.choice(("512Mi", "1Gi"))}}
    if ctx.chance(0.05, "resources"):
        spec["runtimeClassName"] = f"{ctx.sid}-rc"
        spec["overhead"] = {"cpu": "250m", "memory": "64Mi"}
    priority = _priority(ctx, pending)
    if priority:
        spec["priorityClassName"] = f"{ctx.sid}-{priority}"
    placing = ctx.theme == "preemption-placement"
    if pending:
        _placement(ctx, spec, labels)
        if placing:
            _victim_placement(ctx, spec, labels)
    elif ctx.chance(0.25 if placing else 0.1, "affinity"):
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                                [_pod_term(ctx, labels)]}}
    return {"apiVersion": "v1", "kind": POD, "metadata": metadata, "spec": spec}


def _priority(ctx: _Context, pending: bool) -> str | None:
    """A priority class (None: none, priority 0): in the preemption themes, bound pods of
    the four lower levels and pending pods mostly of the higher ones."""
    r = ctx.rng.random()
    if ctx.preempting:
        if not pending:
            return "neg" if r < 0.15 else "low" if r < 0.55 else "mid" if r < 0.85 else "high"
        return ("top" if r < 0.2 else "high" if r < 0.65 else "never" if r < 0.76
                else "mid" if r < 0.94 else None)
    if r < 0.2:
        return ctx.rng.choice(("low", "mid", "high", "top") if pending else ("neg", "low", "mid"))
    return None


class _PortPicker:
    """Host ports for one pod: never the same (hostPort, protocol) twice in a pod, which
    the API server refuses."""

    def __init__(self, ctx: _Context, never: bool = False) -> None:
        self.ctx, self.never, self.used = ctx, never, set[tuple[int, str]]()

    def ports(self) -> list[Object]:
        ctx = self.ctx
        if self.never or not ctx.chance(0.12, "ports"):
            return []
        host_port = ctx.pick(8080, 8081, 9000)
        protocol = ctx.pick("TCP", "TCP", "UDP")
        if (host_port, protocol) in self.used:
            return []
        self.used.add((host_port, protocol))
        port: Object = {"containerPort": 80, "hostPort": host_port, "protocol": protocol}
        host_ip = ctx.pick("", "", "127.0.0.1", "0.0.0.0", "10.1.2.3")
        if host_ip:
            port["hostIP"] = host_ip
        return [port]


def _container(ctx: _Context, name: str, ports: _PortPicker, light: bool = False,
               pending: bool = False) -> Object:
    rng = ctx.rng
    container: Object = {"name": name, "image": rng.choice(POD_IMAGES)}
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if light:  # under pod-level resources: at most a little cpu per container
        if rng.random() < 0.5:
            requests["cpu"] = "100m"
    elif ctx.preempting and rng.random() < 0.85:
        sizes = PREEMPTOR_REQUESTS if pending else VICTIM_REQUESTS
        requests["cpu"] = rng.choice(sizes["cpu"])
        if rng.random() < 0.6:
            requests["memory"] = rng.choice(sizes["memory"])
    elif rng.random() < 0.8:
        if rng.random() < 0.85:
            requests["cpu"] = rng.choice(("50m", "100m", "250m", "500m", "1", "1500m"))
        if rng.random() < 0.75:
            requests["memory"] = rng.choice(("64Mi", "128Mi", "512Mi", "1Gi", "3Gi"))
    elif rng.random() < 0.4:  # limits only: the API server copies them to requests
        limits["cpu"] = rng.choice(("200m", "1"))
        limits["memory"] = rng.choice(("256Mi", "1Gi"))
    if not light and ctx.chance(0.1, "resources"):
        requests["ephemeral-storage"] = rng.choice(("1Gi", "30Gi"))
    if not light and ctx.chance(0.03 if ctx.preempting else 0.08, "resources"):
        amount = rng.choice(("1", "2", "3"))
        requests[FOO] = limits[FOO] = amount  # extended resources: requests == limits
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    if resources:
        container["resources"] = resources
    found = ports.ports()
    if found:
        container["ports"] = found
    return container


# ------------------------------------------------------------------------------ placement


def _placement(ctx: _Context, spec: Object, labels: dict[str, str]) -> None:
    """nodeSelector, node and pod (anti-)affinity, tolerations, spread constraints."""
    rng = ctx.rng
    if ctx.chance(0.1, "affinity"):
        spec["nodeSelector"] = rng.choice(({"disk": "ssd"}, {ZONE: rng.choice(ctx.zones)},
                                           {"disk": "hdd", "kubernetes.io/os": "linux"}))
    affinity: Object = {}
    node_affinity = _node_affinity(ctx)
    if node_affinity:
        affinity["nodeAffinity"] = node_affinity
    for kind, p in (("podAffinity", 0.08), ("podAntiAffinity", 0.1)):
        if not ctx.chance(p, "affinity"):
            continue
        terms: Object = {}
        if rng.random() < 0.6:
            terms["requiredDuringSchedulingIgnoredDuringExecution"] = [_pod_term(ctx, labels)]
        if rng.random() < 0.6 or not terms:
            terms["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.choice((1, 10, 50, 100)), "podAffinityTerm": _pod_term(ctx, labels)}
                for _ in range(rng.randint(1, 2))]
        affinity[kind] = terms
    if affinity:
        spec["affinity"] = affinity
    if ctx.chance(0.2, "taints"):
        spec["tolerations"] = [dict(t) for t in rng.sample(TOLERATIONS, rng.randint(1, 2))]
    if ctx.chance(0.12, "spread"):
        spec["topologySpreadConstraints"] = _spread(ctx, labels)


def _victim_placement(ctx: _Context, spec: Object, labels: dict[str, str]) -> None:
    """Required pod anti-affinity (and sometimes affinity) to an app of the bound pods,
    which evicting them resolves (or, for affinity, never: kube's dry run removes every
    lower-priority pod first)."""
    rng = ctx.rng
    affinity = spec.setdefault("affinity", {})
    for kind, p in (("podAntiAffinity", 0.5), ("podAffinity", 0.15)):
        if rng.random() < p:
            term = {"labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                    "topologyKey": HOSTNAME if rng.random() < 0.75 else ZONE}
            affinity.setdefault(kind, {})["requiredDuringSchedulingIgnoredDuringExecution"] = [
                term]
    if not affinity:
        del spec["affinity"]


def _node_affinity(ctx: _Context) -> Object:
    rng = ctx.rng
    out: Object = {}
    if ctx.chance(0.1, "affinity"):
        terms = [{"matchExpressions": [_node_requirement(ctx)
                                       for _ in range(rng.randint(1, 2))]}
                 for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.35:  # matchFields metadata.name: one value per requirement
            for term in terms:
                name = rng.choice(ctx.nodes)["metadata"]["name"]
                term["matchFields"] = [{"key": "metadata.name", "operator":
                                        rng.choice(("In", "In", "NotIn")), "values": [name]}]
                if rng.random() < 0.5:
                    del term["matchExpressions"]
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if ctx.chance(0.12, "affinity"):
        preferred = []
        for _ in range(rng.randint(1, 2)):
            preference: Object = {"matchExpressions": [_node_requirement(ctx)]}
            if rng.random() < 0.15:
                preference = {"matchFields": [{"key": "metadata.name", "operator": "In",
                                         "values": [rng.choice(ctx.nodes)["metadata"]["name"]]}]}
            preferred.append({"weight": rng.choice((1, 5, 20, 100)), "preference": preference})
        out["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return out


def _node_requirement(ctx: _Context) -> Object:
    rng = ctx.rng
    choice = rng.randint(0, 6)
    if choice == 0:
        return {"key": ZONE, "operator": "In",
                "values": sorted(rng.sample(ctx.zones, rng.randint(1, len(ctx.zones))))}
    if choice == 1:
        return {"key": ZONE, "operator": "NotIn", "values": [rng.choice(ctx.zones)]}
    if choice == 2:
        return {"key": "disk", "operator": rng.choice(("Exists", "DoesNotExist"))}
    if choice in (3, 4):
        return {"key": "gen", "operator": rng.choice(("Gt", "Lt")),
                "values": [str(rng.randint(1, 5))]}
    if choice == 5:
        return {"key": "disk", "operator": "In", "values": ["ssd"]}
    return {"key": HOSTNAME, "operator": "In",
            "values": [rng.choice(ctx.nodes)["metadata"]["name"]]}


def _pod_term(ctx: _Context, own: dict[str, str]) -> Object:
    """A pod affinity term; its matchLabelKeys/mismatchLabelKeys name keys its selector does
    not use (the API server merges them in)."""
    rng = ctx.rng
    selector: Object
    if rng.random() < 0.7:
        selector = {"matchLabels": {"app": rng.choice(APPS)}}
    else:
        selector = {"matchExpressions": [{"key": "app", "operator": rng.choice(("In", "NotIn")),
                                          "values": sorted(rng.sample(APPS, 2))}]}
    term: Object = {"labelSelector": selector,
                    "topologyKey": rng.choice((HOSTNAME, HOSTNAME, ZONE))}
    r = rng.random()
    if r < 0.15:
        term["namespaces"] = sorted(rng.sample(ctx.namespaces, rng.randint(1, len(ctx.namespaces))))
    elif r < 0.3:
        term["namespaceSelector"] = rng.choice(({}, {"matchLabels": {"team": rng.choice(TEAMS)}}))
    if rng.random() < 0.15:
        term["matchLabelKeys"] = ["version"]
    elif rng.random() < 0.1:
        term["mismatchLabelKeys"] = ["tier"]
    return term


def _spread(ctx: _Context, labels: dict[str, str]) -> list[Object]:
    rng = ctx.rng
    constraints = []
    used = set()
    for _ in range(rng.randint(1, 2)):
        key = rng.choice((ZONE, HOSTNAME))
        when = rng.choice(("DoNotSchedule", "ScheduleAnyway"))
        if (key, when) in used:
            continue
        used.add((key, when))
        constraint: Object = {"maxSkew": rng.choice((1, 1, 2)), "topologyKey": key,
                              "whenUnsatisfiable": when,
                              "labelSelector": {"matchLabels": {"app": labels.get(
                                  "app", rng.choice(APPS))}}}
        if when == "DoNotSchedule" and rng.random() < 0.25:
            constraint["minDomains"] = rng.randint(2, 4)
        if rng.random() < 0.2:
            constraint["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            constraint["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            constraint["matchLabelKeys"] = ["version"]
        constraints.append(constraint)
    return constraints
