"""docs/reference.md, generated from the code's own tables so that it cannot drift: the
variables and where they are visible (``policy.variables``), the fields of the object
types, every CEL function of a policy's environment with its overloads, description and
examples (the ``Function`` declarations), the macros, and every field of a SchedulingPolicy
and of a SchedulerConfiguration (their JSON Schemas: descriptions, defaults, ``examples``).

Every example is compiled in a policy's environment and evaluated, here, against a small
sample cluster (``SAMPLE_CLUSTER``) as an expression of ``SAMPLE_POLICY``, through the
engine's own activation (``framework.runtime.CycleState``): the values shown are what a
rule would read. An example that fails to compile or evaluate stops the generation.

Usage: ``python -m policysched.commands.reference`` (write docs/reference.md) or
``python -m policysched.commands.reference --check`` (exit 1 when it is out of date).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..cache.cache import Cache
from ..cache.node_table import NodeTable
from ..cel import CelCompileError, CelError, Program, compile_expression
from ..cel.checker import format_type
from ..cel.library import (
    collections,
    comparisons,
    core,
    encoders,
    formatting,
    network,
    quantity,
    regex,
    semver,
    strings,
    time,
    url,
)
from ..cel.library import format as cel_format
from ..cel.library import math as cel_math
from ..cel.library.function import Function, Overload
from ..cel.library.time import format_duration, format_timestamp
from ..cel.values import EXTENSION_TYPES, Duration, OptionalValue, Timestamp, TypeValue, UInt
from ..cluster.cluster_file import parse_cluster
from ..framework.aggregates import ClusterView
from ..framework.runtime import CycleState
from ..model.events import ClusterEvent
from ..model.selectors import NodeAffinity
from ..policy import (
    aggregate_functions,
    kubernetes_functions,
    resource_functions,
    volume_functions,
)
from ..policy import variables as v
from ..policy.compile import RULE_FIELDS, CelField
from ..policy.documents import CONFIGURATION_KIND, POLICY_KIND
from ..policy.loader import load_text
from ..policy.model import ExtensionPoint, Policy
from ..policy.policy_set import build_policy_set
from ..policy.schema import load_schema
from ..policy.selection import PolicyInstance

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference.md"
COMMAND = "python -m policysched.commands.reference"

OUT_OF_DATE = "docs/reference.md is out of date: run {command}"
WROTE = "wrote docs/reference.md"
NO_CHECKOUT = "{path} does not exist: docs/reference.md is generated in a source checkout"

HEADER = f"""\
<!-- Generated from the code's own tables (policysched/policy/variables.py, the CEL
     function declarations, schemas/*.schema.json) by
     `.venv/bin/{COMMAND}`: do not edit.
     Run it again after changing any of them; tests/commands/test_reference.py fails
     while this file is out of date. -->
"""

# The cluster and policy every example is evaluated in: the pod is web-1, the node node-1.
SAMPLE_CLUSTER = """\
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {disktype: ssd, kubernetes.io/hostname: node-1, topology.kubernetes.io/zone: zone-a}
spec:
  taints: [{key: dedicated, value: web, effect: NoSchedule}]
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: node-2
  labels: {kubernetes.io/hostname: node-2, topology.kubernetes.io/zone: zone-b}
spec:
  unschedulable: true
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: db-1
  namespace: shop
  labels: {app: db}
  creationTimestamp: "2025-01-01T11:00:00Z"
spec:
  nodeName: node-1
  priority: 1000
  containers:
  - {name: db, image: postgres:17, resources: {requests: {cpu: "1", memory: 2Gi}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: shop
  labels: {app: web}
  creationTimestamp: "2025-01-01T11:30:00Z"
spec:
  nodeName: node-1
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}
  containers:
  - name: web
    image: nginx:1.27
    resources: {requests: {cpu: 500m, memory: 256Mi}}
    ports: [{containerPort: 8443, hostPort: 8443}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data-web-0}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: shop
  labels: {app: web}
  annotations: {example.com/owner: team-web}
  creationTimestamp: "2025-01-01T12:00:00Z"
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-5d8f, uid: 0b6c1c1e, controller: true}
spec:
  priority: 100
  nodeSelector: {disktype: ssd}
  tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule}]
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
  containers:
  - name: web
    image: nginx:1.27
    resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {memory: 512Mi}}
    ports: [{containerPort: 8080}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data-web-1}}
  - {name: cache, persistentVolumeClaim: {claimName: cache-web-1}}
  - {name: scratch, persistentVolumeClaim: {claimName: scratch-web-1}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [zone-a, zone-b]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-web-0
  namespace: shop
  annotations: {pv.kubernetes.io/bind-completed: "yes"}
spec: {storageClassName: zonal, accessModes: [ReadWriteOnce], volumeName: pv-web-0,
       resources: {requests: {storage: 10Gi}}}
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-web-1
  namespace: shop
  annotations: {volume.kubernetes.io/selected-node: node-1,
                pv.kubernetes.io/bind-completed: "yes"}
spec: {storageClassName: zonal, accessModes: [ReadWriteOnce], volumeName: pv-web-1,
       resources: {requests: {storage: 10Gi}}}
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: cache-web-1, namespace: shop}
spec: {storageClassName: zonal, accessModes: [ReadWriteOnce],
       resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch-web-1, namespace: shop}
spec: {storageClassName: zonal, accessModes: [ReadWriteOnce],
       resources: {requests: {storage: 50Gi}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-cache-a}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: zonal
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-4e5f}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
status: {phase: Available}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-web-0, labels: {topology.kubernetes.io/zone: zone-a}}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: zonal
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-0a1b}
  claimRef: {namespace: shop, name: data-web-0}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-web-1, labels: {topology.kubernetes.io/zone: zone-a}}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: zonal
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-2c3d}
  claimRef: {namespace: shop, name: data-web-1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
status: {phase: Bound}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-1}
spec:
  drivers: [{name: ebs.csi.aws.com, nodeID: i-0123, allocatable: {count: 25}}]
"""

SAMPLE_POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: reference
spec:
  params: {maxPods: 20}
  variables:
  - {name: age, expression: now - pod.creationTimestamp}
  aggregates:
  - name: sameApp
    pods: "{'labelSelector': {'matchLabels': {'app': pod.labels[?'app'].orValue('')}}}"
    groupBy: "'topology.kubernetes.io/zone'"
"""

SAMPLE_POD = "shop/web-1"
SAMPLE_NODE = "node-1"
SAMPLE_NOW_DELAY = 45  # now: seconds after the pod's creation
# the single-pod variables of other scopes, by pod key; ``item`` is the pod's first
# topology spread constraint (what the aggregate ``forEach`` of the docs iterates)
SAMPLE_PODS = {v.A: "shop/web-1", v.B: "shop/db-1", v.VICTIM: "shop/web-0",
               v.COUNTED_POD: "shop/web-0"}

# where each object type is read on the sample, to show its fields' values
TYPE_PATHS = {
    v.POD_TYPE.name: "pod",
    v.NODE_TYPE.name: "node",
    v.CONTAINER_PORT_TYPE.name: "pod.ports[0]",
    v.HOST_PORT_TYPE.name: "node.usedPorts[0]",
    v.TOLERATION_TYPE.name: "pod.tolerations[0]",
    v.TAINT_TYPE.name: "node.taints[0]",
    v.OWNER_REFERENCE_TYPE.name: "pod.ownerReferences[0]",
    v.POD_GROUP_TYPE.name: "pod.podGroup",
    v.POD_VOLUME_TYPE.name: "podVolumes[0]",
    v.CLAIM_TYPE.name: "podVolumes[0].claim",
    v.PERSISTENT_VOLUME_TYPE.name: "podVolumes[0].persistentVolume",
    v.STORAGE_CLASS_TYPE.name: "podVolumes[0].storageClass",
    v.DISK_TYPE.name: "podVolumes[0].disk",
    v.VOLUME_BINDINGS_TYPE.name: "volumeBinder.bindings(node)",
    v.VOLUME_BINDING_TYPE.name: "volumeBinder.bindings(node).static[0]",
    v.VOLUME_PROVISION_TYPE.name: "volumeBinder.bindings(node).provisions[0]",
}

# the function libraries, in the order the reference lists them
LIBRARIES: Sequence[tuple[str, Sequence[Function]]] = (
    ("Standard functions and conversions", core.FUNCTIONS),
    ("Strings", [*strings.FUNCTIONS, *formatting.FUNCTIONS]),
    ("Regular expressions (RE2)", regex.FUNCTIONS),
    ("Lists and sets", collections.FUNCTIONS),
    ("Math", cel_math.FUNCTIONS),
    ("Encoders", encoders.FUNCTIONS),
    ("Timestamps and durations", time.FUNCTIONS),
    ("Kubernetes quantities", quantity.FUNCTIONS),
    ("Semantic versions", semver.FUNCTIONS),
    ("Comparisons of quantities and versions", comparisons.FUNCTIONS),
    ("IP addresses and CIDRs", network.FUNCTIONS),
    ("URLs", url.FUNCTIONS),
    ("Kubernetes named formats", cel_format.FUNCTIONS),
    ("Kubernetes matching", kubernetes_functions.FUNCTIONS),
    ("Node resource scores", resource_functions.FUNCTIONS),
    ("Aggregates", aggregate_functions.FUNCTIONS),
    ("Volume binding", volume_functions.FUNCTIONS),
)


@dataclass(frozen=True)
class Macro:
    """A macro of the parser (not a function declaration): its forms and an example."""

    forms: tuple[str, ...]
    doc: str
    example: str


MACROS: Mapping[str, Macro] = {
    "has": Macro(("has(e.f)",), "whether field or map key `f` is present (never an error)",
                 "has(pod.spec.priorityClassName)"),
    "all": Macro(("list.all(x, p)", "map.all(k, p)", "list.all(i, x, p)"),
                 "whether `p` holds for every element (or key)",
                 "pod.tolerations.all(t, t.operator in ['Equal', 'Exists'])"),
    "exists": Macro(("list.exists(x, p)", "map.exists(k, p)", "list.exists(i, x, p)"),
                    "whether `p` holds for some element (or key)",
                    "nodePods.exists(p, p.labels[?'app'] == optional.of('db'))"),
    "exists_one": Macro(("list.exists_one(x, p)", "list.existsOne(x, p)"),
                        "whether `p` holds for exactly one element (or key)",
                        "nodes.exists_one(n, n.unschedulable)"),
    "map": Macro(("list.map(x, e)", "list.map(x, p, e)", "map.map(k, e)"),
                 "`e` of every element (of those where `p` holds)",
                 "nodePods.map(p, p.name)"),
    "filter": Macro(("list.filter(x, p)", "map.filter(k, p)"),
                    "the elements (keys) where `p` holds",
                    "nodes.filter(n, !n.unschedulable).map(n, n.name)"),
    "transformList": Macro(("list.transformList(i, x, e)", "list.transformList(i, x, p, e)",
                            "map.transformList(k, v, e)"),
                           "a list of `e` over indices (keys) and values",
                           "['a', 'b'].transformList(i, x, string(i) + x)"),
    "transformMap": Macro(("list.transformMap(i, x, e)", "map.transformMap(k, v, e)",
                           "map.transformMap(k, v, p, e)"),
                          "a map with the same keys (indices), the values replaced by `e`",
                          "pod.requests.transformMap(k, v, v * 2)"),
    "transformMapEntry": Macro(("list.transformMapEntry(i, x, e)",
                                "map.transformMapEntry(k, v, e)"),
                               "a map made of the one-entry maps `e` returns",
                               "pod.labels.transformMapEntry(k, v, {v: k})"),
    "sortBy": Macro(("list.sortBy(x, key)",),
                    "the elements ordered by `key` (int, uint, double, bool, string, bytes, "
                    "duration or timestamp), as cel-go's ext lists",
                    "nodes.sortBy(n, -n.podCount).map(n, n.name)"),
    "optMap": Macro(("optional.optMap(x, e)",),
                    "`optional.of(e)` of the held value, or `optional.none()`",
                    "pod.labels[?'app'].optMap(a, a + '-svc')"),
    "optFlatMap": Macro(("optional.optFlatMap(x, e)",),
                        "`e` (an optional) of the held value, or `optional.none()`",
                        "pod.labels[?'app'].optFlatMap(a, node.labels[?a])"),
    "cel.bind": Macro(("cel.bind(x, init, e)",), "`e` with `x` bound to `init`, computed once",
                      "cel.bind(free, node.free[?'cpu'].orValue(0), free >= 500 && free < 4000)"),
}


# ----------------------------------------------------------------------------- the sample


class ExampleError(ValueError):
    """An example that does not compile or evaluate on the sample."""


class Sample:
    """The sample cluster and policy: compiles and evaluates examples."""

    def __init__(self) -> None:
        loaded = build_policy_set(load_text(SAMPLE_POLICY, "sample-policy.yaml"))
        if not loaded.valid:
            raise ValueError(f"SAMPLE_POLICY: {loaded.errors[0]}")
        policy: Policy = loaded.policies[0]
        cache = Cache()
        for obj in parse_cluster(SAMPLE_CLUSTER, "SAMPLE_CLUSTER"):
            cache.apply(ClusterEvent("ADDED", obj["kind"], obj))
        snapshot = cache.snapshot()
        pod = cache.pod(SAMPLE_POD)
        node = snapshot.node(SAMPLE_NODE)
        assert pod is not None and node is not None
        cluster = ClusterView(snapshot, NodeTable())
        cluster.scored = np.arange(len(snapshot.nodes))  # as if every node were scored
        state = CycleState(pod=pod, now=pod.creation + SAMPLE_NOW_DELAY,
                           pod_views=snapshot.pod_views, node_views=snapshot.node_views,
                           affinity_pod_views=snapshot.pods_with_affinity_views,
                           cluster=cluster)
        self.state = state  # what preFilterRan reads
        self.activation = state.base(PolicyInstance(policy, dict(policy.params))).copy()
        self.activation[v.NODE] = node.view
        self.activation[v.NODE_PODS] = list(node.pod_views)
        for name, key in SAMPLE_PODS.items():
            other = cache.pod(key)
            assert other is not None
            self.activation[name] = other.view
        self.activation[v.ITEM] = pod.view["spec"]["topologySpreadConstraints"][0]
        self.environment = v.environment(
            v.Scope("reference", frozenset(v.DECLARATIONS)), policy.params,
            {variable.name: variable.expression.program.type for variable in policy.variables},
            {aggregate.name: v.AGGREGATE_TYPE for aggregate in policy.aggregates})

    def compile(self, text: str) -> Program:
        return compile_expression(text, self.environment)

    def evaluate(self, text: str) -> Any:
        """The value of ``text`` on the sample; raises ``ExampleError`` naming it."""
        try:
            return self.compile(text).evaluate(self.activation)
        except (CelCompileError, CelError) as e:
            raise ExampleError(f"example {text!r}: {e}") from e


def cel_text(value: Any) -> str:
    """A CEL value as CEL text (a literal, or the call that makes it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, UInt):
        return f"{int(value)}u"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"
    if isinstance(value, bytes):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(cel_text(x) for x in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{cel_text(k)}: {cel_text(x)}" for k, x in value.items()) + "}"
    if isinstance(value, Timestamp):
        return f"timestamp('{format_timestamp(value)}')"
    if isinstance(value, Duration):
        return f"duration('{format_duration(value)}')"
    if isinstance(value, OptionalValue):
        return f"optional.of({cel_text(value.value)})" if value.has else "optional.none()"
    if isinstance(value, TypeValue) or type(value) in EXTENSION_TYPES:
        return repr(value)
    if isinstance(value, NodeAffinity):  # opaque, as nodeAffinity(…) makes it
        return "nodeAffinity(…)"
    raise TypeError(f"no CEL text for {type(value).__name__}")


# ----------------------------------------------------------------------------- markdown


def code(text: str) -> str:
    """``text`` as inline code in a table cell."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def anchor(title: str) -> str:
    """The anchor GitHub gives a heading."""
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def yaml_text(value: Any) -> str:
    return yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


class _Dumper(yaml.SafeDumper):
    """Block style; CEL strings quoted with double quotes when they hold single ones."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = '"' if "'" in text and '"' not in text and "\n" not in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


# ----------------------------------------------------------------------------- variables


def variables_section(sample: Sample) -> str:
    rows = []
    for name, declaration in v.DECLARATIONS.items():
        value = sample.evaluate(declaration.example)
        rows.append([code(name), code(format_type(declaration.type)), cell(declaration.doc),
                     f"{code(declaration.example)} → {code(cel_text(value))}"])
    out = ["## Variables\n",
           "What an expression can read. Each example is evaluated on "
           "[the sample](#the-sample-examples-are-evaluated-on).\n",
           table(["variable", "type", "what it holds", "example → value on the sample"], rows),
           "\n### Where each variable is visible\n",
           "An expression that uses a variable its place does not see is a compile error "
           "that says why (`'node' is not available in preFilter: …`).\n"]
    names = list(v.DECLARATIONS)
    visible = [[code(scope.name)] + ["✓" if n in scope.declared else "" for n in names]
               for scope in v.SCOPES]
    out.append(table(["expression", *(code(n) for n in names)], visible))
    return "\n".join(out)


def object_types_section(sample: Sample) -> str:
    out = ["## Object types\n",
           "The fields of the objects variables hold; a field the API object lacks reads as "
           "'', 0, false or an empty list or map, never as an error. A key of a map field "
           "(`labels`, `requests` …) that is absent *is* an error (`no such key`): guard it "
           "with `'k' in map`, `has(map.k)` or read it with `map[?'k'].orValue(…)`.\n"]
    for type_name, fields in v.OBJECT_TYPES.items():
        path = TYPE_PATHS[type_name]
        docs = v.FIELD_DOCS[type_name]
        rows = []
        for field, field_type in fields.items():
            shown = "(the API object)" if field_type.name == "dyn" else \
                code(cel_text(sample.evaluate(f"{path}.{field}")))
            rows.append([code(field), code(format_type(field_type)), cell(docs[field]), shown])
        out.append(f"### {type_name}\n")
        out.append(table(["field", "type", "what it holds", f"`{path}` on the sample"], rows))
    return "\n".join(out)


# ----------------------------------------------------------------------------- functions


def signature(name: str, overload: Overload) -> str:
    params = [format_type(p) for p in overload.params]
    if overload.varargs and params:
        params[-1] += ", ..."
    result = format_type(overload.result)
    if overload.member:
        receiver, *rest = params
        return f"{receiver}.{name}({', '.join(rest)}) -> {result}"
    return f"{name}({', '.join(params)}) -> {result}"


def functions_section(sample: Sample) -> str:
    declared = sample.environment.functions
    out = ["## Functions\n",
           "Every function a policy can call, by library: its overloads (`A`, `B` stand for "
           "any type; a receiver type before the dot is a method), what it does, and "
           "examples with their value on [the sample](#the-sample-examples-are-evaluated-on). "
           "CEL's operators (`+`, `==`, `in`, `? :`, indexing, `.?` …) are those of the "
           "[CEL language definition](https://github.com/google/cel-spec/blob/master/doc/"
           "langdef.md).\n"]
    for title, functions in LIBRARIES:
        rows = []
        for name in dict.fromkeys(f.name for f in functions):
            function = declared[name]
            signatures = "<br>".join(code(signature(name, o)) for o in function.overloads)
            examples = "<br>".join(f"{code(e)} → {code(cel_text(sample.evaluate(e)))}"
                                   for e in function.examples)
            rows.append([code(name), signatures, cell(function.doc), examples])
        out.append(f"### {title}\n")
        out.append(table(["function", "overloads", "what it does", "examples"], rows))
    rows = [[code(name), "<br>".join(code(f) for f in macro.forms), cell(macro.doc),
             f"{code(macro.example)} → {code(cel_text(sample.evaluate(macro.example)))}"]
            for name, macro in MACROS.items()]
    out.append("### Macros\n")
    out.append("Expanded by the parser; `x`, `i`, `k`, `v` name the element, index, key and "
               "value.\n")
    out.append(table(["macro", "forms", "what it does", "example"], rows))
    return "\n".join(out)


# ----------------------------------------------------------------------------- schemas


CEL_RESULTS = {"celBool": "bool", "celInt": "int", "celString": "string"}
"""The schema's definitions of CEL fields by result type."""

CelAnnotation = Callable[[tuple[str, ...], str], str | None]
"""The CEL result types and scope of a field (path of the object, field name), or None."""


@dataclass(frozen=True)
class SchemaWalk:
    """Sections of field tables for one JSON Schema, nested objects and lists included."""

    schema: Mapping[str, Any]
    cel: CelAnnotation | None = None

    def resolve(self, node: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
        """``node`` with its ``$ref`` chain merged in (the nearer keys win), and the names
        of the definitions it went through."""
        merged: dict[str, Any] = {}
        refs: list[str] = []
        current: Mapping[str, Any] | None = node
        while current is not None:
            for key, value in current.items():
                merged.setdefault(key, value)
            ref = current.get("$ref")
            if ref is None:
                break
            name = ref.rsplit("/", 1)[-1]
            refs.append(name)
            current = self.schema["$defs"][name]
        merged.pop("$ref", None)
        return merged, tuple(refs)

    def type_text(self, node: Mapping[str, Any], path: tuple[str, ...], field: str,
                  link: str = "") -> str:
        """The field's type; ``link``: the section of its object (or its items')."""
        resolved, refs = self.resolve(node)
        if "celExpression" in refs:
            result = next((CEL_RESULTS[r] for r in refs if r in CEL_RESULTS), "")
            annotated = self.cel(path, field) if self.cel else None
            return annotated or ("CEL → " + result if result else "CEL")
        if "anyOf" in resolved and "type" not in resolved:  # a number or a CEL expression
            return " or ".join(self.type_text(b, path, field, link) for b in resolved["anyOf"])
        if "const" in resolved:
            return code(json.dumps(resolved["const"]))
        if "enum" in resolved:
            return " \\| ".join(code(str(x)) for x in resolved["enum"])
        kind = resolved.get("type", "")
        if kind == "array":
            return "list of " + self.type_text(resolved.get("items", {}), path, field, link)
        if kind == "object" and link:
            return f"[object](#{link})"
        if kind == "object" and "properties" not in resolved:
            values = resolved.get("additionalProperties")
            if isinstance(values, dict):
                return "map of string to " + self.type_text(values, path, field)
            return "map of string to any"
        return {"integer": "int", "number": "number", "boolean": "bool", "string": "string",
                "object": "object"}.get(kind, kind or "any")

    def sections(self, title: str, node: Mapping[str, Any], path: tuple[str, ...] = ()
                 ) -> Iterator[str]:
        """One section per object, depth first: ``title`` names the object by its path."""
        resolved, _ = self.resolve(node)
        properties: Mapping[str, Any] = resolved.get("properties", {})
        required = set(resolved.get("required", ()))
        rows = []
        nested: list[tuple[str, Mapping[str, Any], tuple[str, ...]]] = []
        for field, field_node in properties.items():
            field_resolved, _ = self.resolve(field_node)
            inner, suffix = field_resolved, ""
            if field_resolved.get("type") == "array":
                inner, _ = self.resolve(field_resolved.get("items", {}))
                suffix = "[]"
            link = ""
            if "properties" in inner:
                nested_title = f"{title}.{field}{suffix}" if path else f"{field}{suffix}"
                nested.append((nested_title, inner, (*path, field)))
                link = anchor(nested_title)
            default = field_resolved.get("default")
            rows.append([code(field) + (" (required)" if field in required else ""),
                         self.type_text(field_node, path, field, link),
                         "" if default is None else code(
                             default if isinstance(default, str) else json.dumps(default)),
                         cell(field_resolved.get("description", ""))])
        text = [f"### `{title}`" + ("\n" if path else " document\n")]
        if path and resolved.get("description"):
            text.append(cell(resolved["description"]) + "\n")
        text.append(table(["field", "type", "default", "description"], rows))
        examples = list(resolved.get("examples", ()))
        key = path[-1] if path else None
        # list items: one list under their key; objects: each under its key
        shown = ([{key: examples}] if examples and title.endswith("[]") else
                 [e if key is None else {key: e} for e in examples])
        for example in shown:
            text.append("Example:\n\n```yaml\n" + yaml_text(example) + "```\n")
        yield "\n".join(text)
        for nested_title, nested_node, nested_path in nested:
            yield from self.sections(nested_title, nested_node, nested_path)


def rule_cel(path: tuple[str, ...], field: str) -> str | None:
    """A rule field's result types and the scope it is compiled in (``RULE_FIELDS``)."""
    if len(path) != 2 or path[0] != "spec":
        return None
    point = next((p for p in ExtensionPoint if p.value == path[1]), None)
    if point is None:
        return None
    spec: CelField | None = next((f for f in RULE_FIELDS[point] if f.key == field), None)
    if spec is None:
        return None
    names = [format_type(t) for t in spec.expected or ()]
    results = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else \
        (names[0] if names else "any")
    return f"CEL → {results}, sees [{code(spec.scope.name)}](#where-each-variable-is-visible)"


def schema_section(kind: str, intro: str, cel: CelAnnotation | None = None) -> str:
    schema = load_schema(kind)
    walk = SchemaWalk(schema, cel)
    out = [f"## {kind}\n", " ".join(filter(None, (schema.get("description"), intro))) + "\n"]
    out += walk.sections(kind, schema)
    return "\n".join(out)


# ----------------------------------------------------------------------------- the page


def sample_section() -> str:
    return "\n".join([
        "## The sample examples are evaluated on\n",
        "Every CEL example above is compiled as an expression of this policy (its `params`, "
        "`variables` and `aggregates`) and evaluated for the pending pod `web-1` on the node "
        f"`node-1` of this cluster, at `now` = `web-1`'s creation + {SAMPLE_NOW_DELAY} s, as "
        "if every node were being scored; `a` is web-1, `b` db-1, `victim` and `p` web-0, "
        "and `item` web-1's first topology spread constraint. (The YAML examples of policy "
        "fields are checked by `validate`: the tests load each as a policy.)\n",
        "```yaml\n" + SAMPLE_POLICY + "```\n",
        "```yaml\n" + SAMPLE_CLUSTER + "```\n"])


def render() -> str:
    """The text of docs/reference.md."""
    sample = Sample()
    parts = [
        HEADER,
        "# Reference\n",
        "Every variable, object field and function a policy expression can use, and every "
        "field of a SchedulingPolicy and of a SchedulerConfiguration, each with an example. "
        "[authoring.md](authoring.md) walks through writing a first policy; "
        "[troubleshooting.md](troubleshooting.md) explains the errors.\n",
        "- [Variables](#variables) — [where each is visible](#where-each-variable-is-visible)"
        "\n- [Object types](#object-types)\n- [Functions](#functions) — "
        + ", ".join(f"[{title.lower()}](#{anchor(title)})" for title, _ in LIBRARIES)
        + ", [macros](#macros)\n"
        f"- [SchedulingPolicy](#{anchor(POLICY_KIND)})\n"
        f"- [SchedulerConfiguration](#{anchor(CONFIGURATION_KIND)})\n"
        "- [The sample examples are evaluated on](#the-sample-examples-are-evaluated-on)\n",
        variables_section(sample),
        object_types_section(sample),
        functions_section(sample),
        schema_section(POLICY_KIND, "Each CEL field says what its expression must return "
                       "and which variables it sees.", rule_cel),
        schema_section(CONFIGURATION_KIND, "Complete examples: the built-in configuration, "
                       "[policies/scheduler-config.yaml](../policies/scheduler-config.yaml), "
                       "and the Deployment's, "
                       "[deploy/scheduler-config.yaml](../deploy/scheduler-config.yaml)."),
        sample_section(),
    ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that docs/reference.md is up to date")
    args = parser.parse_args(argv)
    if not REFERENCE.parent.is_dir():
        print(NO_CHECKOUT.format(path=REFERENCE.parent), file=sys.stderr)
        return 2
    text = render()
    current = REFERENCE.read_text(encoding="utf-8") if REFERENCE.exists() else None
    if args.check:
        if current != text:
            print(OUT_OF_DATE.format(command=COMMAND), file=sys.stderr)
            return 1
        return 0
    if current != text:
        REFERENCE.write_text(text, encoding="utf-8")
        print(WROTE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
