"""What a policy expression can see, per extension point: the CEL environments.

Variables (docs/architecture.md#the-variable-model):

===========  ==================================================================
``now``      int, Unix seconds, fixed for one scheduling cycle
``pod``      ``policysched.Pod``: the pod being scheduled (preemptor in postFilter)
``node``     ``policysched.Node``: the node under consideration (node-level points)
``nodePods`` list(Pod): the pods on ``node``, assumed pods included
``pods``     list(Pod): every pod of the cluster (pod-level points only)
``nodes``    list(Node): every node of the cluster (pod-level points only)
``podsWithAffinity`` list(Pod): the pods counted on a node that have pod affinity or
             anti-affinity terms (kube-scheduler's PodsWithAffinity; an index the cache
             keeps, so that policies need not scan ``pods``)
``workloadSelector`` dyn: kube-scheduler's DefaultSelector of ``pod`` — the selector
             (``metav1.LabelSelector``: matchLabels, matchExpressions) of the Services
             selecting it and of its ReplicationController, ReplicaSet or StatefulSet
             controller; null when none does (pod-level points, as ``pods``)
``podGroupPods`` int: the pods of the cluster, in any phase, labelled with the pod's pod
             group (``scheduling.x-k8s.io/pod-group``) in its namespace — an index the
             cache keeps; 0 for a pod of no group (pod-level points, as ``pods``)
``params``   the policy's parameters: one ``dyn`` field per key of ``spec.params``
``variables`` the policy's variables: one field per declared variable, typed by its
             expression
``aggregates`` the policy's aggregates (``spec.aggregates``): one field per aggregate, a
             ``policysched.Aggregate`` (a list of them with ``forEach``); not in
             ``spec.variables`` nor where there is no cluster snapshot
``item``     an element of an aggregate's ``forEach`` list (in its other fields)
``p``        a pod counted by an aggregate with ``termsOf``
``a``, ``b`` Pod: the two pods compared by a queueSort ``less``
``victim``   Pod: the candidate victim in a postFilter ``victims`` expression
===========  ==================================================================

Object types (fields are checked at compile time; values are plain dicts at run time).
``policysched.Pod``: name, namespace, uid, schedulerName, nodeName (string); labels,
annotations, nodeSelector (map(string, string)); creationTimestamp (int, Unix seconds);
priority (int); requests, limits (map(string, int): cpu in millicores, memory and
ephemeral-storage in bytes, others as counts); ports (list(ContainerPort)); tolerations
(list(Toleration)); affinity (dyn: the API object); ownerReferences (list(OwnerReference));
podGroup (the gang the pod belongs to by its ``scheduling.x-k8s.io/pod-group`` label: name,
minMember and scheduleTimeoutSeconds of the PodGroup object; name "" when none);
metadata, spec, status (dyn: the API object as JSON).
``policysched.Node``: name (string); labels, annotations (map(string, string)); taints
(list(Taint)); unschedulable (bool); allocatable, requested, free (map(string, int), units
as for pods; requested sums the pods on the node, assumed pods included); podCount (int);
usedPorts (list(HostPort)); images (map(string, int): image name to size in bytes);
metadata, spec, status (dyn).
``ContainerPort``: containerPort, hostPort (int), protocol, hostIP (string). ``HostPort``:
hostIP, protocol (string), hostPort (int). ``Toleration``: key, operator, value, effect
(string), tolerationSeconds (int). ``Taint``: key, value, effect (string).
``OwnerReference``: apiVersion, kind, name, uid (string), controller (bool).
``policysched.LabelSelector``, ``NodeAffinity``, ``PreferredNodeAffinity``,
``PodAffinityTerm``: opaque (no fields), the values of Kubernetes' matching functions
(``kubernetes_functions``).

Whoever builds the activation (the cache) must fill every declared field: a field the API
object lacks is the empty string, 0, false, or an empty list/map (a toleration without an
operator gets ``"Equal"``, a port without a protocol ``"TCP"``, as the API defaults them),
so that ``t.effect == ''`` works instead of failing with "no such key".

A variable that exists at other points but not here is declared ``unavailable`` with the
reason, so ``node`` in a preFilter rule is a compile error that says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from ..cel import Environment
from ..cel.library import standard_library
from ..cel.library.function import Function
from ..cel.types import (
    BOOL,
    DYN,
    INT,
    MAP_STRING_STRING,
    STRING,
    Type,
    list_of,
    map_of,
)
from . import aggregate_functions, kubernetes_functions, messages

NOW = "now"
POD = "pod"
NODE = "node"
NODE_PODS = "nodePods"
PODS = "pods"
NODES = "nodes"
PODS_WITH_AFFINITY = "podsWithAffinity"
WORKLOAD_SELECTOR = "workloadSelector"
POD_GROUP_PODS = "podGroupPods"
PARAMS = "params"
VARIABLES = "variables"
A = "a"
B = "b"
VICTIM = "victim"
AGGREGATES = "aggregates"
ITEM = "item"
COUNTED_POD = "p"

POD_TYPE = Type("policysched.Pod")
NODE_TYPE = Type("policysched.Node")
PARAMS_TYPE = Type("policysched.Params")
VARIABLES_TYPE = Type("policysched.Variables")
AGGREGATES_TYPE = Type("policysched.Aggregates")
AGGREGATE_TYPE = aggregate_functions.AGGREGATE_TYPE
CONTAINER_PORT_TYPE = Type("policysched.ContainerPort")
HOST_PORT_TYPE = Type("policysched.HostPort")
TOLERATION_TYPE = Type("policysched.Toleration")
TAINT_TYPE = Type("policysched.Taint")
OWNER_REFERENCE_TYPE = Type("policysched.OwnerReference")
POD_GROUP_TYPE = Type("policysched.PodGroup")
# opaque: values of Kubernetes' matching functions (kubernetes_functions), no fields
LABEL_SELECTOR_TYPE = kubernetes_functions.LABEL_SELECTOR_TYPE
NODE_AFFINITY_TYPE = kubernetes_functions.NODE_AFFINITY_TYPE
PREFERRED_NODE_AFFINITY_TYPE = kubernetes_functions.PREFERRED_NODE_AFFINITY_TYPE
POD_AFFINITY_TERM_TYPE = kubernetes_functions.POD_AFFINITY_TERM_TYPE

RESOURCES = map_of(STRING, INT)

OBJECT_TYPES: Mapping[str, Mapping[str, Type]] = {
    POD_TYPE.name: {
        "name": STRING,
        "namespace": STRING,
        "uid": STRING,
        "labels": MAP_STRING_STRING,
        "annotations": MAP_STRING_STRING,
        "creationTimestamp": INT,
        "priority": INT,
        "requests": RESOURCES,
        "limits": RESOURCES,
        "ports": list_of(CONTAINER_PORT_TYPE),
        "tolerations": list_of(TOLERATION_TYPE),
        "nodeSelector": MAP_STRING_STRING,
        "affinity": DYN,
        "schedulerName": STRING,
        "nodeName": STRING,
        "ownerReferences": list_of(OWNER_REFERENCE_TYPE),
        "podGroup": POD_GROUP_TYPE,
        "metadata": DYN,
        "spec": DYN,
        "status": DYN,
    },
    NODE_TYPE.name: {
        "name": STRING,
        "labels": MAP_STRING_STRING,
        "annotations": MAP_STRING_STRING,
        "taints": list_of(TAINT_TYPE),
        "unschedulable": BOOL,
        "allocatable": RESOURCES,
        "requested": RESOURCES,
        "free": RESOURCES,
        "podCount": INT,
        "usedPorts": list_of(HOST_PORT_TYPE),
        "images": map_of(STRING, INT),
        "metadata": DYN,
        "spec": DYN,
        "status": DYN,
    },
    CONTAINER_PORT_TYPE.name: {
        "containerPort": INT,
        "hostPort": INT,
        "protocol": STRING,
        "hostIP": STRING,
    },
    HOST_PORT_TYPE.name: {"hostIP": STRING, "protocol": STRING, "hostPort": INT},
    TOLERATION_TYPE.name: {
        "key": STRING,
        "operator": STRING,
        "value": STRING,
        "effect": STRING,
        "tolerationSeconds": INT,
    },
    TAINT_TYPE.name: {"key": STRING, "value": STRING, "effect": STRING},
    POD_GROUP_TYPE.name: {"name": STRING, "minMember": INT, "scheduleTimeoutSeconds": INT},
    OWNER_REFERENCE_TYPE.name: {
        "apiVersion": STRING,
        "kind": STRING,
        "name": STRING,
        "uid": STRING,
        "controller": BOOL,
    },
}

# Bounds for the cost estimate. Cluster-wide lists: Kubernetes' documented scalability
# limits ("Considerations for large clusters": 150,000 pods, 5,000 nodes) and kubelet
# max-pods as commonly raised on large nodes (the default is 110). Names: the API's length
# limits (DNS-1123 subdomain 253, label 63, UID 36). node.images: the kubelet reports at most
# 50 images (nodeStatusMaxImages). The other lists have no API limit; the bounds are
# generous for real objects and keep pairwise checks (taints x tolerations) affordable.
# Elements of lists (a toleration's key) keep the estimator's defaults.
SIZE_HINTS: Mapping[str, int] = {
    PODS: 150_000,
    NODES: 5_000,
    PODS_WITH_AFFINITY: 150_000,
    NODE_PODS: 256,
    "pod.name": 253,
    "pod.namespace": 63,
    "pod.uid": 36,
    "pod.schedulerName": 253,
    "pod.nodeName": 253,
    "pod.ports": 32,
    "pod.tolerations": 32,
    "pod.ownerReferences": 16,
    "pod.requests": 32,
    "pod.limits": 32,
    "node.name": 253,
    "node.taints": 32,
    "node.usedPorts": 128,
    "node.images": 50,
    "node.allocatable": 32,
    "node.requested": 32,
    "node.free": 32,
}

# Kubernetes' per-expression cost limit (apiserver's PerCallLimit, used for
# ValidatingAdmissionPolicy and CRD validation rules), for the estimate and at run time.
COST_LIMIT = 1_000_000

_TYPES: Mapping[str, Type] = {
    NOW: INT,
    POD: POD_TYPE,
    NODE: NODE_TYPE,
    NODE_PODS: list_of(POD_TYPE),
    PODS: list_of(POD_TYPE),
    NODES: list_of(NODE_TYPE),
    PODS_WITH_AFFINITY: list_of(POD_TYPE),
    WORKLOAD_SELECTOR: DYN,
    POD_GROUP_PODS: INT,
    PARAMS: PARAMS_TYPE,
    VARIABLES: VARIABLES_TYPE,
    A: POD_TYPE,
    B: POD_TYPE,
    VICTIM: POD_TYPE,
    AGGREGATES: AGGREGATES_TYPE,
    ITEM: DYN,
    COUNTED_POD: POD_TYPE,
}

_POD_LEVEL = frozenset({NOW, POD, PARAMS, VARIABLES})
_CLUSTER = frozenset({PODS, NODES, PODS_WITH_AFFINITY, WORKLOAD_SELECTOR, POD_GROUP_PODS})
_CLUSTER_LEVEL = _POD_LEVEL | _CLUSTER | {AGGREGATES}
_NODE_LEVEL = _POD_LEVEL | {NODE, NODE_PODS, AGGREGATES}


@dataclass(frozen=True)
class Scope:
    """Where an expression runs: its ``name`` in messages, the variables it sees, and
    why the node-level ones are missing when they are."""

    name: str
    declared: frozenset[str]
    why_no_node: str = ""


MATCH = Scope("spec.match", frozenset({NOW, POD, PARAMS}), messages.WHY_NO_NODE_MATCH)
VARIABLE = Scope("spec.variables", _POD_LEVEL | _CLUSTER, messages.WHY_NO_NODE_VARIABLES)
AGGREGATE = Scope("spec.aggregates", _POD_LEVEL | _CLUSTER, messages.WHY_NO_NODE_AGGREGATES)
AGGREGATE_ITEM = Scope("spec.aggregates forEach", _POD_LEVEL | _CLUSTER | {ITEM},
                       messages.WHY_NO_NODE_AGGREGATES)
AGGREGATE_TERMS = Scope("spec.aggregates termsOf", frozenset({COUNTED_POD, PARAMS}),
                        messages.WHY_NO_NODE_AGGREGATES)
QUEUE_SORT_LESS = Scope("queueSort less", frozenset({NOW, A, B, PARAMS}),
                        messages.WHY_NO_NODE_QUEUE_SORT)
QUEUE_SORT_KEYS = Scope("queueSort keys", frozenset({NOW, POD, PARAMS}),
                        messages.WHY_NO_NODE_QUEUE_SORT)
PRE_ENQUEUE = Scope("preEnqueue", _POD_LEVEL, messages.WHY_NO_NODE_PRE_ENQUEUE)
PRE_FILTER = Scope("preFilter", _CLUSTER_LEVEL, messages.WHY_NO_NODE_PRE_FILTER)
FILTER = Scope("filter", _NODE_LEVEL)
POST_FILTER = Scope("postFilter", _CLUSTER_LEVEL, messages.WHY_NO_NODE_POST_FILTER)
POST_FILTER_VICTIMS = Scope("postFilter victims", _NODE_LEVEL | {VICTIM})
PRE_SCORE = Scope("preScore", _CLUSTER_LEVEL, messages.WHY_NO_NODE_PRE_SCORE)
SCORE = Scope("score", _NODE_LEVEL)
RESERVE = Scope("reserve", _NODE_LEVEL)
UNRESERVE = Scope("unreserve", _NODE_LEVEL)
PERMIT = Scope("permit", _NODE_LEVEL | _CLUSTER)
PRE_BIND = Scope("preBind", _NODE_LEVEL)
BIND = Scope("bind", _NODE_LEVEL)
POST_BIND = Scope("postBind", _NODE_LEVEL)


def unavailable_reason(variable: str, scope: Scope) -> str:
    """Why ``variable`` cannot be used in ``scope`` (shown after "'x' is not available")."""
    template = messages.UNAVAILABLE.get(variable, messages.UNAVAILABLE_DEFAULT)
    if variable == VARIABLES and scope is MATCH:
        template = messages.UNAVAILABLE_VARIABLES_IN_MATCH
    return template.format(where=scope.name, why=scope.why_no_node)


def environment(
    scope: Scope, params: Iterable[str] = (), variables: Mapping[str, Type] | None = None,
    aggregates: Mapping[str, Type] | None = None,
) -> Environment:
    """The environment of one expression of a policy with these ``params`` keys, the
    ``variables`` declared so far and its ``aggregates`` (name → type)."""
    objects = dict(OBJECT_TYPES)
    objects[PARAMS_TYPE.name] = {name: DYN for name in params}
    objects[VARIABLES_TYPE.name] = dict(variables or {})
    objects[AGGREGATES_TYPE.name] = dict(aggregates or {})
    return Environment(
        variables={name: _TYPES[name] for name in scope.declared},
        functions=_functions(),
        objects=objects,
        size_hints=SIZE_HINTS,
        unavailable=_unavailable(scope),
        cost_limit=COST_LIMIT,
        runtime_cost_limit=COST_LIMIT,
    )


@cache
def _functions() -> Mapping[str, Function]:
    """The standard library and the policy functions."""
    functions = dict(standard_library())
    functions["matches"] = kubernetes_functions.matches_extending(functions["matches"])
    for function in (*aggregate_functions.FUNCTIONS, *kubernetes_functions.FUNCTIONS):
        assert function.name not in functions, function.name
        functions[function.name] = function
    return functions


@cache
def _unavailable(scope: Scope) -> Mapping[str, str]:
    return {name: unavailable_reason(name, scope) for name in _TYPES if name not in scope.declared}
