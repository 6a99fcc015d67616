"""Hostile clusters and poison policies through the engine, in both evaluation tiers:
seeded clusters whose objects are mutated within what the API server accepts (quantities up
to 8Ei and 2^63-1, zero, odd labels, taints, tolerations, affinity, ports, missing fields),
and a *poison* policy — a shipped policy, guarded to match only pods labelled ``poison``,
whose CEL is mutated but still valid (operators flipped, constants pushed to extremes,
divisions by zero, NaN / Inf scores, erroring functions, other bind targets).

For every case, ``simulate`` must run to completion in the scalar and the vectorised tier,
in bounded time, and:

- each pod it does not bind has a message;
- no node gets more than its allocatable from the pods the scheduler bound there (the
  built-in resource filter is enabled unchanged), nor a pod whose nodeSelector, taints or
  cordon forbid it;
- every pod the poison does not match and that the same cluster binds without the poison
  (the baseline) is still bound: poison pods only go to tainted nodes of their own, ask for
  little and have priority 0, so they cannot take room any other pod needs;
- a mutated node fails no pod: a pod the baseline cluster binds without its mutated nodes
  is bound with them too, or told that no node fits (more nodes may pack pods
  differently), never given an error;
- a poison policy whose ``match`` errs for every poison pod binds none of them;
- both tiers give every pod the same node, attempts and message.

Failures are collected by class and reported with the seed and a minimised case (see
``tests/mutation.py`` for the knobs).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from policysched.cli import main
from policysched.cluster.memory import MemoryBackend
from policysched.commands.simulate import Simulation, simulate
from policysched.framework.backend import BackendError
from policysched.framework.profiles import build_frameworks
from policysched.framework.runtime import Framework
from policysched.framework.scheduler import SCALAR, VECTORISED, EngineSettings
from policysched.model.objects import (
    ObjectError,
    node_allocatable,
    parse_timestamp,
    pod_resources,
)
from policysched.policy import Policy, build_policy_set, load_policy_set, load_text
from policysched.resources import BUILTIN_POLICIES
from tests.framework.test_tiers import START, random_node, random_pod
from tests.mutation import (
    BOOL_POISON,
    Failures,
    FuzzSettings,
    Run,
    bounded,
    cel_fields,
    error_class,
    minimise,
    poison_cel,
    traceback_text,
)

TEST = "tests/framework/test_hostile_clusters.py"
CASES = 80
HORIZON = 120.0  # simulated seconds: every backoff (at most 10 s) expires many times
POISON = "poison"  # the label that poison policies match
START_SECONDS = float(parse_timestamp(START))
AMPLE = {"cpu": "16", "memory": "64Gi", "pods": "110"}
NOT_POISONED = ("priority-sort",)  # queueSort applies to every pod of the profile
SIMULATION_DEADLINE = 2  # x the per-case deadline of POLICYSCHED_FUZZ_DEADLINE
POISON_NODES = 3  # more than one, so that poison pods are scored
# points every bound pod passes: a policy with rules there stops a pod its match errs for
GATING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit", "preBind", "bind")
DOOM = "int(pod.name) > 0"  # an error for every poison pod (named poison-<i>)
FIT_ERROR = re.compile(r"0/\d+ nodes are available")  # kube's FitError: no node fits
OWN_PRE_SCORE_ERROR = "policy node-affinity rule has-preferred-terms: spec.preScore"


# --------------------------------------------------------------------------- object mutations

HUGE_QUANTITIES = ("8Ei", "9223372036854775807", "9223372036854775807m", "16Ei", "1e18",
                   "999999999999999999999", "7Ei", "1000000000000000000000m", "8E")
SMALL_QUANTITIES = ("0", "0m", "1m", "0.0001", "1e-3", "100n", "1", "0.5")
ODD_LABELS = {"a.b.c/d-e_f.g": "", "x" * 63: "y" * 63, "example.com/zone": "-", "k8s.io/a": "1"}


def _quantity(rng: random.Random) -> Any:
    choice = rng.random()
    if choice < 0.45:
        return rng.choice(HUGE_QUANTITIES)
    if choice < 0.8:
        return rng.choice(SMALL_QUANTITIES)
    return rng.choice((0, 1, 2, 10**18, 0.5, 1e18))  # numbers: the API accepts them too


def mutate_node(node: dict[str, Any], rng: random.Random, *, only_grow: bool) -> str:
    """One mutation of a Node; ``only_grow`` keeps what it can hold (poison nodes)."""
    status = node.setdefault("status", {})
    allocatable = status.setdefault("allocatable", {})
    if only_grow:
        resource = rng.choice(("cpu", "memory", "ephemeral-storage"))
        allocatable[resource] = rng.choice(HUGE_QUANTITIES[:4])
        return f"allocatable {resource} {allocatable[resource]}"
    op = rng.choice(("quantity", "quantity", "quantity", "no-allocatable", "capacity-only",
                     "labels", "taints", "unschedulable", "images", "no-status", "extended"))
    if op == "quantity":
        resource = rng.choice(("cpu", "memory", "pods", "ephemeral-storage"))
        allocatable[resource] = _quantity(rng) if resource != "pods" else \
            rng.choice(("0", "1", "110", "9223372036854775807", 5000))
        return f"allocatable {resource} {allocatable[resource]!r}"
    if op == "no-allocatable":
        del status["allocatable"]
    elif op == "capacity-only":
        status["capacity"] = status.pop("allocatable")
    elif op == "labels":
        node["metadata"].setdefault("labels", {}).update(ODD_LABELS)
    elif op == "taints":
        node.setdefault("spec", {})["taints"] = rng.choice((
            [{"key": "a", "effect": "NoExecute"}],
            [{"key": "x" * 63, "value": "", "effect": "PreferNoSchedule"}] * 3,
            [{"key": f"k{i}", "value": "v", "effect": "NoSchedule"} for i in range(40)],
            [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
        ))
    elif op == "unschedulable":
        node.setdefault("spec", {})["unschedulable"] = True
    elif op == "images":
        status["images"] = [{"names": ["registry.k8s.io/pause:3.10", "busybox"],
                             "sizeBytes": rng.choice((0, 2**63 - 1, 10**15))}]
    elif op == "no-status":
        del node["status"]
    elif op == "extended":
        allocatable.update({"nvidia.com/gpu": rng.choice(("0", "8", "9223372036854775807")),
                            "hugepages-2Mi": _quantity(rng), "example.com/dongle": "1"})
    return op


def _container(pod: dict[str, Any]) -> dict[str, Any]:
    containers = pod["spec"].setdefault("containers", [{"name": "c"}])
    return containers[0] if containers else {}


def mutate_pod(pod: dict[str, Any], rng: random.Random, *, poison: bool) -> str:
    """One mutation of a Pod; a poison pod keeps its small requests and priority 0."""
    spec = pod["spec"]
    ops = ["tolerations", "affinity", "labels", "annotations", "no-resources", "limits",
           "containers", "no-timestamp", "spread", "overhead"]
    if not poison:
        ops += ["requests", "requests", "requests", "priority", "ports", "init"]
    op = rng.choice(ops)
    resources = _container(pod).setdefault("resources", {})
    if op == "requests":
        resource = rng.choice(("cpu", "memory", "ephemeral-storage", "nvidia.com/gpu",
                               "hugepages-2Mi", "example.com/dongle"))
        resources.setdefault("requests", {})[resource] = _quantity(rng)
        return f"request {resource} {resources['requests'][resource]!r}"
    if op == "limits":
        resources["limits"] = {"cpu": rng.choice(HUGE_QUANTITIES), "memory": "0"}
    elif op == "no-resources":
        _container(pod).pop("resources", None)
    elif op == "containers":
        spec["containers"] = [dict(_container(pod), name=f"c{i}") for i in range(30)] \
            if not poison else [{"name": "only"}]
    elif op == "init":
        spec["initContainers"] = [{"name": "init", "resources": {"requests": {
            "cpu": rng.choice(HUGE_QUANTITIES), "memory": rng.choice(SMALL_QUANTITIES)}}}]
    elif op == "overhead":
        spec["overhead"] = {"cpu": rng.choice(SMALL_QUANTITIES), "memory": "1Ki"}
    elif op == "priority":
        spec["priority"] = rng.choice((2**31 - 1, -(2**31), 1_000_000_000))
    elif op == "ports":  # a host port of its own: the pod's fit stays independent
        port = 30000 + int(pod["metadata"]["name"].rsplit("-", 1)[-1])
        _container(pod)["ports"] = [
            {"containerPort": 65535, "hostPort": port, "protocol": "SCTP"},
            {"containerPort": 1, "hostPort": port, "protocol": "UDP", "hostIP": "::1"},
            {"containerPort": 8080}]
    elif op == "tolerations":
        spec["tolerations"] = rng.choice((
            [{"operator": "Exists"}],
            [{"key": "a", "operator": "Exists", "effect": "NoExecute",
              "tolerationSeconds": rng.choice((0, -1, 2**63 - 1))}],
            [{"key": "dedicated", "value": "batch", "effect": ""}] * 5,
        )) + spec.get("tolerations", [])
    elif op == "affinity":
        requirement = rng.choice((
            {"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["zone-x"]},
            {"key": "missing", "operator": "DoesNotExist"},
            {"key": "disk", "operator": "Exists"},
            {"key": "cores", "operator": "Gt", "values": ["9223372036854775806"]},
            {"key": "cores", "operator": "Lt", "values": ["-9223372036854775808"]},
        ))
        preferred = [{"weight": rng.choice((1, 100)),
                      "preference": {"matchExpressions": [requirement]}}] * rng.choice((1, 40))
        spec["affinity"] = {"nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": preferred}}
    elif op == "labels":
        pod["metadata"].setdefault("labels", {}).update(ODD_LABELS)
    elif op == "annotations":
        pod["metadata"]["annotations"] = rng.choice((
            {"delay": rng.choice(("abc", "-5", "9223372036854775807", "1e3", ""))},
            {"x" * 63: "v" * 10_000}))
    elif op == "no-timestamp":
        pod["metadata"].pop("creationTimestamp", None)
    elif op == "spread":
        topology = rng.choice(("topology.kubernetes.io/zone", "kubernetes.io/hostname",
                               "absent"))
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.choice((1, 2**31 - 1)), "topologyKey": topology,
            "whenUnsatisfiable": "ScheduleAnyway" if not poison else "DoNotSchedule",
            "labelSelector": {"matchLabels": pod["metadata"].get("labels", {})},
            "minDomains": rng.choice((1, 5)) if poison else None}]
        if not poison:
            del spec["topologySpreadConstraints"][0]["minDomains"]
    return op


# --------------------------------------------------------------------------- a case


@dataclass
class Case:
    objects: list[dict[str, Any]]
    poison_text: str
    poison_name: str
    weight: int
    position: int
    what: list[str] = field(default_factory=list)
    doomed: bool = False  # the poison's match errs for every poison pod
    poisoned: bool = True  # False: the poison policy is left out (a minimised case)
    mutations: int = 0  # mutations of cluster objects
    refused: int = 0  # mutations the API (the memory backend's admission) refused

    hostile: set[str] = field(default_factory=set)  # names of the mutated nodes

    @property
    def unaffected(self) -> list[dict[str, Any]]:
        """The objects without the poison pods."""
        return [o for o in self.objects if not is_poison(o)]

    @property
    def tame(self) -> list[dict[str, Any]]:
        """The objects without the poison pods, the mutated nodes and the pods on them."""
        return [o for o in self.unaffected if key(o) not in self.hostile and (
            o.get("spec") or {}).get("nodeName") not in self.hostile]


def is_poison(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "Pod" and POISON in (obj["metadata"].get("labels") or {})


def key(obj: dict[str, Any]) -> str:
    """namespace/name of a pod (or pod group), the name of a node."""
    metadata = obj["metadata"]
    if obj.get("kind") == "Node":
        return str(metadata["name"])
    return f"{metadata.get('namespace') or 'default'}/{metadata['name']}"


def accepted(obj: dict[str, Any]) -> bool:
    """Whether the API server (the memory backend's admission) takes ``obj``."""
    try:
        MemoryBackend([obj])
    except (ObjectError, BackendError):
        return False
    return True


def mutated(obj: dict[str, Any], rng: random.Random, mutate: Callable[[dict[str, Any]], str],
            case: Case) -> dict[str, Any]:
    """``obj`` after one or two mutations the API accepts (refused ones are undone)."""
    for _ in range(rng.choice((1, 1, 2))):
        candidate = json.loads(json.dumps(obj))
        what = mutate(candidate)
        if accepted(candidate):
            obj = candidate
            case.mutations += 1
            case.what.append(f"{key(obj)}: {what}")
            if obj["kind"] == "Node":
                case.hostile.add(key(obj))
        else:
            case.refused += 1
    return obj


def unaffected_pod(rng: random.Random, i: int) -> dict[str, Any]:
    """A pending pod whose fit does not depend on where other pods go (no required
    anti-affinity, no DoNotSchedule spreading, no shared host port)."""
    pod = random_pod(rng, i)
    spec = pod["spec"]
    spec.get("affinity", {}).pop("podAntiAffinity", None)
    for constraint in spec.get("topologySpreadConstraints", []):
        constraint["whenUnsatisfiable"] = "ScheduleAnyway"
    for port in _container(pod).get("ports", []):
        port["hostPort"] = 20000 + i
    return pod


def poison_pod(rng: random.Random, i: int, group: str | None) -> dict[str, Any]:
    """A pending pod the poison policy matches: it only fits the poison nodes."""
    pod = random_pod(rng, i)
    pod["metadata"]["name"] = f"poison-{i}"
    labels = {"app": POISON, POISON: "yes"}
    if group:
        labels["scheduling.x-k8s.io/pod-group"] = group
    pod["metadata"]["labels"] = labels
    spec = pod["spec"]
    spec.update(priority=0, nodeSelector={"pool": POISON},
                tolerations=[{"key": POISON, "operator": "Exists"}])
    _container(pod).pop("ports", None)
    for constraint in spec.get("topologySpreadConstraints", []):
        constraint["labelSelector"] = {"matchLabels": {"app": POISON}}
    anti = spec.get("affinity", {}).get("podAntiAffinity")
    if anti:
        for term in anti["requiredDuringSchedulingIgnoredDuringExecution"]:
            term["labelSelector"] = {"matchLabels": {"app": POISON}}
    return pod


def poison_node(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"poison-{i}", "creationTimestamp": START,
                         "labels": {"kubernetes.io/hostname": f"poison-{i}", "pool": POISON,
                                    "topology.kubernetes.io/zone": "zone-p"}},
            "spec": {"taints": [{"key": POISON, "value": "yes", "effect": "NoSchedule"}]},
            "status": {"allocatable": dict(AMPLE)}}


def make_cluster(rng: random.Random, case: Case) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    regular = rng.randint(4, 7)
    for i in range(regular):
        node = random_node(rng, i)
        if rng.random() < 0.7:
            node["status"]["allocatable"] = dict(AMPLE)
        if rng.random() < 0.4:
            node = mutated(node, rng, partial(mutate_node, rng=rng, only_grow=False), case)
        objects.append(node)
    for i in range(POISON_NODES):
        node = poison_node(i)
        if rng.random() < 0.3:
            node = mutated(node, rng, partial(mutate_node, rng=rng, only_grow=True), case)
        objects.append(node)
    pods: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 5)):
        pod = random_pod(rng, i, f"node-{rng.randrange(regular)}")
        pod["spec"].get("affinity", {}).pop("podAntiAffinity", None)
        pods.append(pod)
    first = len(pods)
    pods += [unaffected_pod(rng, first + i) for i in range(rng.randint(8, 14))]
    group = "gang" if rng.random() < 0.3 else None
    if group:
        objects.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                        "metadata": {"name": group, "namespace": "default"},
                        "spec": {"minMember": rng.choice((1, 2, 3, 2**31 - 1)),
                                 "scheduleTimeoutSeconds": rng.choice((0, 10, 2**31 - 1))}})
    pods += [poison_pod(rng, i, group) for i in range(rng.randint(3, 6))]
    for pod in pods:
        if rng.random() < 0.4:
            pod = mutated(pod, rng, partial(mutate_pod, rng=rng, poison=is_poison(pod)), case)
        objects.append(pod)
    return objects


@cache
def library() -> tuple[tuple[Policy, ...], dict[str, Any], tuple[tuple[str, str], ...]]:
    """The built-in policies, configuration, and (name, text) of the policies to poison."""
    policy_set = load_policy_set([BUILTIN_POLICIES])
    assert policy_set.valid, policy_set.diagnostics
    [configuration] = policy_set.configurations
    sources = tuple((p.name, Path(p.source).read_text()) for p in policy_set.policies
                    if p.name not in NOT_POISONED)
    return policy_set.policies, dict(configuration.value), sources


@dataclass(frozen=True)
class Poison:
    text: str
    name: str
    what: list[str]
    doomed: bool


def poison_policy(rng: random.Random, index: int) -> Poison | None:
    """Shipped policy ``index`` (modulo their number) renamed ``poison-*``, matching only
    poison pods, with 1-2 CEL fields mutated but still valid — or, doomed, with a match
    that errs for every poison pod (None when no valid mutant was found)."""
    _, _, sources = library()
    for attempt in range(8):
        name, text = sources[(index + attempt) % len(sources)]
        document = yaml.safe_load(text)
        spec = document["spec"]
        what = [name]
        fields = [f for f in cel_fields(document) if f[0] != ("spec", "match")]
        poison_match = rng.random() < 0.15
        for path, result in rng.sample(fields, min(len(fields), rng.choice((1, 1, 2)))):
            parent = document
            for part in path[:-1]:
                parent = parent[part]
            if path[-1] == "victims":  # only narrower: preemption may not reach further
                poison = rng.choice(BOOL_POISON)
                parent[path[-1]], done = f"({parent[path[-1]]}) && {poison}", poison
            elif path[-1] == "target" and rng.random() < 0.7:  # another node than chosen
                parent[path[-1]] = done = rng.choice(("'node-0'", "'node-1'", "'poison-1'"))
            else:
                parent[path[-1]], done = poison_cel(parent[path[-1]], result, rng)
            what.append(f"{'.'.join(map(str, path))}: {done}")
        for rule in spec.get("score") or ():
            if rng.random() < 0.5:
                rule["normalize"] = rng.choice(("none", "max", "reverse", "minmax"))
                what.append(f"score {rule['name']} normalize {rule['normalize']}")
        doomed = any(spec.get(p) for p in GATING_POINTS) and rng.random() < 0.15
        for point in ("filter", "score", "preFilter", "permit", "bind"):
            for rule in spec.get(point) or ():
                if rng.random() < 0.15 and not doomed:
                    rule["failurePolicy"] = "Ignore"
                    what.append(f"{point} {rule['name']} failurePolicy Ignore")
        match = spec.get("match") or "true"
        if doomed:
            match = DOOM
            what.append(f"match: {DOOM} (doomed)")
        elif poison_match:
            match, done = poison_cel(match, "bool", rng)
            what.append(f"match: {done}")
        spec["match"] = f"'{POISON}' in pod.labels && ({match})"
        document["metadata"]["name"] = f"{POISON}-{name}"
        poisoned = yaml.safe_dump(document, sort_keys=False, width=10**6)
        if build_policy_set(load_text(poisoned, "poison.yaml")).valid:
            return Poison(poisoned, f"{POISON}-{name}", what, doomed)
    return None


def engine(case: Case) -> tuple[dict[str, Framework], EngineSettings]:
    if not case.poisoned:
        return baseline_engine()
    policies, configuration, _ = library()
    [poison] = build_policy_set(load_text(case.poison_text, "poison.yaml")).policies
    return build_frameworks((*policies, poison), with_poison(configuration, case))


def with_poison(configuration: dict[str, Any], case: Case) -> dict[str, Any]:
    """The built-in configuration with the poison policy enabled in the first profile."""
    configuration = json.loads(json.dumps(configuration))
    enabled = configuration["profiles"][0]["policies"]["enabled"]
    enabled.insert(min(case.position, len(enabled)),
                   {"name": case.poison_name, "weight": case.weight})
    return configuration


def baseline_engine() -> tuple[dict[str, Framework], EngineSettings]:
    policies, configuration, _ = library()
    return build_frameworks(policies, configuration)


def make_case(rng: random.Random, index: int) -> Case | None:
    poison = poison_policy(rng, index)
    if poison is None:
        return None
    case = Case([], poison.text, poison.name, rng.choice((1, 2, 10)), rng.randrange(20),
                list(poison.what), doomed=poison.doomed)
    case.objects = make_cluster(rng, case)
    return case


# --------------------------------------------------------------------------- the checks


def run(objects: Sequence[dict[str, Any]], frameworks: dict[str, Framework],
        settings: EngineSettings, tier: str, deadline: float) -> Any:
    copies = json.loads(json.dumps(list(objects)))
    return bounded(lambda: simulate(copies, frameworks, replace(settings, evaluation=tier),
                                    START_SECONDS, horizon=HORIZON), deadline)


def invariant_problems(sim: Simulation) -> list[tuple[str, str]]:
    """No silent failure, no over-commitment, no pod where its node forbids it:
    (failure class, details) pairs."""
    problems = [(f"silent: unscheduled pod without a message ({p.attempts} attempts)",
                 f"pod {p.namespace}/{p.name}")
                for p in sim.pods if p.node is None and not (p.message or "").strip()]
    placed = {f"{p.namespace}/{p.name}" for p in sim.pods if p.node}
    nodes = {n["metadata"]["name"]: n for n in sim.backend.objects("Node")}
    on_node: dict[str, list[dict[str, Any]]] = {}
    for pod in sim.backend.objects("Pod"):
        name = (pod.get("spec") or {}).get("nodeName")
        if name and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            on_node.setdefault(name, []).append(pod)
    for name, pods in on_node.items():
        ours = [p for p in pods if key(p) in placed]
        if not ours:
            continue
        node = nodes.get(name)
        if node is None:
            problems.append(("placement: bound to a node that does not exist", name))
            continue
        problems += [(p, f"node {name}: {', '.join(key(o) for o in ours)}")
                     for p in _overcommit(node, pods, ours) + _forbidden(node, ours)]
    return problems


def _overcommit(node: dict[str, Any], pods: list[dict[str, Any]],
                ours: list[dict[str, Any]]) -> list[str]:
    allocatable = node_allocatable(node.get("status") or {})
    totals: dict[str, int] = {"pods": len(pods)}
    asked: set[str] = {"pods"}
    for pod in pods:
        try:
            requests = pod_resources(pod.get("spec") or {}).requests
        except ObjectError:
            continue
        for resource, amount in requests.items():
            totals[resource] = totals.get(resource, 0) + amount
            if pod in ours and amount > 0:
                asked.add(resource)
    return [f"overcommit: {resource} over allocatable" for resource in sorted(asked)
            if totals.get(resource, 0) > allocatable.get(resource, 0)]


def _forbidden(node: dict[str, Any], pods: list[dict[str, Any]]) -> list[str]:
    labels = node["metadata"].get("labels") or {}
    spec = node.get("spec") or {}
    problems = []
    for pod in pods:
        pod_spec = pod.get("spec") or {}
        selector = pod_spec.get("nodeSelector") or {}
        if any(labels.get(k) != v for k, v in selector.items()):
            problems.append("placement: nodeSelector does not match")
        tolerations = pod_spec.get("tolerations") or []
        taints = list(spec.get("taints") or [])
        if spec.get("unschedulable"):
            taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        if any(t.get("effect") in ("NoSchedule", "NoExecute")
               and not any(_tolerates(x, t) for x in tolerations) for t in taints):
            problems.append("placement: untolerated NoSchedule/NoExecute taint")
    return problems


def _tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """v1.Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    if toleration.get("operator") == "Exists":
        return True
    return bool(toleration.get("key")) and (toleration.get("value") or "") == (
        taint.get("value") or "")


def lost_details(sim: Simulation, keys: list[str]) -> str:
    return "; ".join(f"{k}: {p.node or p.message if (p := sim.pod(k)) else '?'}"
                     for k in keys[:3])


def fit_error(sim: Simulation, pod: str) -> bool:
    """Whether ``pod`` was told that no node fits it, or an error of its own that only
    more feasible nodes reveal: preScore, which runs only with two or more (kube's
    PreScore fails a pod whose preferred node affinity it cannot parse)."""
    outcome = sim.pod(pod)
    message = "" if outcome is None else outcome.message or ""
    return FIT_ERROR.match(message) is not None or message.startswith(OWN_PRE_SCORE_ERROR)


def bound(sim: Simulation) -> set[str]:
    return {f"{p.namespace}/{p.name}" for p in sim.pods if p.node}


def outcomes(sim: Simulation) -> dict[str, tuple[Any, ...]]:
    return {f"{p.namespace}/{p.name}": (p.node, p.attempts, p.message) for p in sim.pods}


@dataclass
class Checker:
    settings: FuzzSettings

    @property
    def deadline(self) -> float:
        """Seconds one simulation may take (a case runs three)."""
        return SIMULATION_DEADLINE * self.settings.deadline

    def problems(self, case: Case, tiers: Sequence[str] = (SCALAR, VECTORISED),
                 with_baseline: bool = True) -> dict[str, str]:
        """Failure classes of ``case``, each with the details of its first occurrence."""
        found: dict[str, str] = {}
        baseline_bound: set[str] | None = None
        if with_baseline:
            frameworks, settings = baseline_engine()
            base = run(case.unaffected, frameworks, settings, SCALAR, self.deadline)
            if base.error is not None:
                found[f"baseline {error_class(base.error)}"] = traceback_text(base.error)
            else:
                found.update(self.invariants("baseline", base))
                baseline_bound = bound(base.value)
            if case.hostile and baseline_bound is not None:
                # more nodes may pack pods differently (a fit failure), never fail a pod
                tame = run(case.tame, frameworks, settings, SCALAR, self.deadline)
                lost = sorted(k for k in bound(tame.value) - baseline_bound
                              if not fit_error(base.value, k)) if tame.error is None else []
                if lost:
                    found["baseline: a mutated node fails pods that fit elsewhere"] = \
                        lost_details(base.value, lost)
        try:
            frameworks, settings = engine(case)
        except Exception as e:  # building the profile from a valid policy must not fail
            return {f"engine: {error_class(e)}": traceback_text(e)}
        runs = {}
        for tier in tiers:
            result = run(case.objects, frameworks, settings, tier, self.deadline)
            if result.error is not None:
                found[f"{tier}: {error_class(result.error)}"] = traceback_text(result.error)
                continue
            found.update(self.invariants(tier, result))
            sim: Simulation = result.value
            runs[tier] = sim
            lost = sorted(baseline_bound - bound(sim)) if baseline_bound is not None else []
            if lost:
                found[f"{tier}: unaffected pods not bound"] = lost_details(sim, lost)
            if case.doomed and case.poisoned:
                doomed = sorted(k for k in bound(sim) if k.startswith(f"default/{POISON}-"))
                if doomed:
                    found[f"{tier}: pod bound though the poison's match errs"] = \
                        lost_details(sim, doomed)
        if len(runs) == 2:
            scalar, vectorised = outcomes(runs[SCALAR]), outcomes(runs[VECTORISED])
            differ = sorted(k for k in scalar if scalar[k] != vectorised.get(k))
            if differ:
                first = differ[0]
                found["tiers: outcomes differ"] = (f"{first}: scalar {scalar[first]}, "
                                                   f"vectorised {vectorised.get(first)}")
        return found

    def invariants(self, label: str, result: Run) -> dict[str, str]:
        found = {f"{label}: {k}": v for k, v in result.logged_errors().items()}
        if result.rss_growth > self.settings.memory:
            found[f"{label}: memory: peak RSS growth"] = f"{result.rss_growth >> 20} MiB"
        for problem, detail in invariant_problems(result.value):
            found.setdefault(f"{label}: {problem}", detail)
        return found

    def minimal(self, case: Case, failure: str, seconds: float) -> str:
        """The case with as few objects as keep ``failure``, as files to re-run."""
        tiers = [t for t in (SCALAR, VECTORISED) if failure.startswith(t)] or \
            [SCALAR, VECTORISED]
        baseline = "unaffected" in failure or failure.startswith("baseline")

        def still_fails(objects: list[dict[str, Any]], poisoned: bool = True) -> bool:
            probe = replace(case, objects=objects, poisoned=poisoned)
            return failure in self.problems(probe, tiers, baseline)

        def still_fails_without_poison(objects: list[dict[str, Any]]) -> bool:
            return still_fails(objects, poisoned=False)

        objects = minimise(case.objects, still_fails, seconds)
        cluster = yaml.safe_dump_all(objects, sort_keys=False, width=10**6)
        if failure.startswith("baseline") or (
                not baseline and still_fails_without_poison(objects)):
            return f"# the built-in policies alone; cluster:\n{cluster}"
        return (f"# poison policy, enabled at position {case.position} with weight "
                f"{case.weight}:\n{case.poison_text}\n# cluster:\n{cluster}")


def test_hostile_clusters_and_poison_policies_never_stop_scheduling(tmp_path: Path) -> None:
    settings = FuzzSettings.from_environment()
    failures = Failures(TEST, settings)
    checker = Checker(settings)
    objects = 0
    for index in settings.cases(CASES):
        rng = settings.rng(TEST, index)
        case = make_case(rng, index)
        if case is None:
            failures.count("no valid poison")
            continue
        failures.tried += 1
        objects += len(case.objects)
        failures.count("object mutations", case.mutations)
        failures.count("refused mutations", case.refused)
        failures.count("doomed poison", case.doomed)
        for failure, details in checker.problems(case).items():
            failures.add(failure, index, f"{'; '.join(case.what)[:400]}\n{details}".rstrip(),
                         partial(checker.minimal, case, failure))
        if index == 0:
            for problem, details in cli_problems(case, tmp_path, checker.deadline).items():
                failures.add(problem, index, details)
    failures.count("cluster objects", objects)
    failures.finish()


def cli_problems(case: Case, directory: Path, seconds: float) -> dict[str, str]:
    """``policysched simulate`` on the case's files (its one-hour horizon, in ``seconds``):
    exit 0, JSON that parses, no traceback."""
    cluster, poison, config = (directory / n for n in ("cluster.yaml", "poison.yaml",
                                                       "config.yaml"))
    cluster.write_text(yaml.safe_dump_all(case.objects, sort_keys=False))
    poison.write_text(case.poison_text)
    _, configuration, _ = library()
    configuration = with_poison(configuration, case)
    configuration.pop("policySources", None)  # the policies are given on the command line
    config.write_text(yaml.safe_dump(configuration, sort_keys=False))
    args = ["simulate", "--cluster", str(cluster), "--policies", str(BUILTIN_POLICIES),
            "--policies", str(poison), "--config", str(config), "-o", "json"]
    command = "policysched " + " ".join(args)
    result = bounded(lambda: CliRunner().invoke(main, args), seconds)
    if result.error is not None:
        return {f"cli: {error_class(result.error)}": command}
    invoked = result.value
    if invoked.exception is not None and not isinstance(invoked.exception, SystemExit):
        return {f"cli: {error_class(invoked.exception)}": command}
    if invoked.exit_code != 0 or "Traceback" in invoked.output:
        return {f"cli: exit {invoked.exit_code}": f"{command}\n{invoked.output[-2000:]}"}
    try:
        json.loads(invoked.stdout)
    except ValueError:
        return {"cli: JSON output does not parse": command}
    return {}
