"""What a policy expression can see, per extension point: the CEL environments.

``DECLARATIONS`` declares every variable (its type, what it holds, an example) and
``OBJECT_TYPES`` the fields of the object types (``policysched.Pod``, ``policysched.Node``
…), described in ``FIELD_DOCS``; fields are checked at compile time, values are plain dicts
at run time. Each ``Scope`` (one per kind of expression, ``SCOPES``) declares the variables
it sees (docs/architecture.md#the-variable-model). docs/reference.md is generated from these
tables (``commands.reference``). ``policysched.LabelSelector``, ``NodeAffinity``,
``PreferredNodeAffinity`` and ``PodAffinityTerm`` are opaque (no fields): the values of
Kubernetes' matching functions (``kubernetes_functions``).

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
from ..cel.compatibility import DEFAULT_VERSION, KubernetesVersion
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
from . import (
    aggregate_functions,
    kubernetes_functions,
    messages,
    resource_functions,
    volume_functions,
)

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
PRE_FILTER_RAN = "preFilterRan"
POD_VOLUMES = "podVolumes"
VOLUME_BINDER = "volumeBinder"

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
POD_VOLUME_TYPE = Type("policysched.PodVolume")
CLAIM_TYPE = Type("policysched.PersistentVolumeClaim")
PERSISTENT_VOLUME_TYPE = Type("policysched.PersistentVolume")
STORAGE_CLASS_TYPE = Type("policysched.StorageClass")
DISK_TYPE = Type("policysched.Disk")
VOLUME_BINDER_TYPE = volume_functions.VOLUME_BINDER_TYPE
VOLUME_BINDINGS_TYPE = volume_functions.VOLUME_BINDINGS_TYPE
VOLUME_BINDING_TYPE = Type("policysched.VolumeBinding")
VOLUME_PROVISION_TYPE = Type("policysched.VolumeProvision")
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
        "nonZeroRequests": RESOURCES,
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
        "nonZeroRequested": RESOURCES,
        "free": RESOURCES,
        "podCount": INT,
        "usedPorts": list_of(HOST_PORT_TYPE),
        "images": map_of(STRING, INT),
        "csiVolumeLimits": map_of(STRING, INT),
        "attachedCSIVolumes": map_of(STRING, INT),
        "csiVolumes": map_of(STRING, STRING),
        "usedDisks": list_of(DISK_TYPE),
        "usedClaims": map_of(STRING, INT),
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
    POD_VOLUME_TYPE.name: {
        "name": STRING,
        "claimName": STRING,
        "readOnly": BOOL,
        "ephemeral": BOOL,
        "csiDriver": STRING,
        "claim": CLAIM_TYPE,
        "persistentVolume": PERSISTENT_VOLUME_TYPE,
        "storageClass": STORAGE_CLASS_TYPE,
        "csiVolume": STRING,
        "csiVolumeDriver": STRING,
        "disk": DISK_TYPE,
    },
    DISK_TYPE.name: {
        "kind": STRING,
        "id": STRING,
        "readOnly": BOOL,
        "monitors": list_of(STRING),
    },
    CLAIM_TYPE.name: {
        "name": STRING,
        "storageClassName": STRING,
        "accessModes": list_of(STRING),
        "requestedStorage": INT,
        "volumeName": STRING,
        "phase": STRING,
        "selectedNode": STRING,
        "volumeMode": STRING,
        "usedOnNodes": list_of(STRING),
        "bound": BOOL,
        "deleting": BOOL,
        "controllerUID": STRING,
    },
    PERSISTENT_VOLUME_TYPE.name: {
        "name": STRING,
        "labels": MAP_STRING_STRING,
        "storageClassName": STRING,
        "capacity": INT,
        "accessModes": list_of(STRING),
        "volumeMode": STRING,
        "nodeAffinity": NODE_AFFINITY_TYPE,
        "csiDriver": STRING,
        "volumeHandle": STRING,
        "claim": STRING,
        "phase": STRING,
        "topology": map_of(STRING, list_of(STRING)),
    },
    STORAGE_CLASS_TYPE.name: {
        "name": STRING,
        "provisioner": STRING,
        "volumeBindingMode": STRING,
        "allowedTopologies": NODE_AFFINITY_TYPE,
    },
    VOLUME_BINDINGS_TYPE.name: {
        "static": list_of(VOLUME_BINDING_TYPE),
        "provisions": list_of(VOLUME_PROVISION_TYPE),
        "unmatched": list_of(STRING),
        "boundConflict": BOOL,
        "missingVolumes": BOOL,
        "classUtilization": map_of(STRING, INT),
    },
    VOLUME_BINDING_TYPE.name: {
        "claimName": STRING,
        "volumeName": STRING,
        "storageClassName": STRING,
        "requested": INT,
        "capacity": INT,
    },
    VOLUME_PROVISION_TYPE.name: {
        "claimName": STRING,
        "storageClassName": STRING,
        "requested": INT,
    },
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
    "pod.nonZeroRequests": 32,
    "pod.limits": 32,
    "node.name": 253,
    "node.taints": 32,
    "node.usedPorts": 128,
    "node.images": 50,
    "node.allocatable": 32,
    "node.requested": 32,
    "node.nonZeroRequested": 32,
    "node.free": 32,
    "node.csiVolumeLimits": 64,
    "node.attachedCSIVolumes": 64,
    "node.csiVolumes": 256,
    "node.usedDisks": 64,
    "node.usedClaims": 256,
    "policysched.Disk.kind": 20,
    "policysched.Disk.id": 256,
    "policysched.Disk.monitors": 16,
    "policysched.PersistentVolume.topology": 4,
    POD_VOLUMES: 64,
}

# Kubernetes' per-expression cost limit (apiserver's PerCallLimit, used for
# ValidatingAdmissionPolicy and CRD validation rules), for the estimate and at run time.
COST_LIMIT = 1_000_000



@dataclass(frozen=True)
class Declaration:
    """A variable expressions can read: its CEL ``type``, what it holds (``doc``) and an
    ``example`` expression reading it."""

    type: Type
    doc: str
    example: str


_A_B = Declaration(POD_TYPE, "the two pods a queueSort `less` compares", "a.priority > b.priority")

DECLARATIONS: Mapping[str, Declaration] = {
    NOW: Declaration(INT, "Unix seconds, fixed for one scheduling cycle",
                     "now - pod.creationTimestamp >= 30"),
    POD: Declaration(POD_TYPE, "the pod being scheduled (in postFilter: the preemptor)",
                     "pod.priority >= 100"),
    NODE: Declaration(NODE_TYPE, "the node under consideration",
                      "!node.unschedulable && node.podCount < 100"),
    NODE_PODS: Declaration(list_of(POD_TYPE), "the pods on `node`, assumed pods included",
                           "nodePods.all(p, p.labels[?'app'] != pod.labels[?'app'])"),
    PODS: Declaration(list_of(POD_TYPE),
                      "every pod of the cluster: those on nodes (bound or assumed), node by "
                      "node, then the pending ones (`nodeName` '')",
                      "pods.exists(p, p.priority > pod.priority)"),
    NODES: Declaration(list_of(NODE_TYPE), "every node of the cluster",
                       "nodes.filter(n, !n.unschedulable).size()"),
    PODS_WITH_AFFINITY: Declaration(
        list_of(POD_TYPE),
        "the pods on nodes that have pod affinity or anti-affinity terms (kube-scheduler's "
        "PodsWithAffinity): an index the cache keeps, so that a policy need not scan `pods`",
        "podsWithAffinity.size()"),
    WORKLOAD_SELECTOR: Declaration(
        DYN,
        "kube-scheduler's DefaultSelector of `pod`: a label selector (`matchLabels`, "
        "`matchExpressions`) made of the selectors of the Services of its namespace that "
        "select it and of its ReplicationController, ReplicaSet or StatefulSet controller; "
        "null when there is none (what PodTopologySpread's system default constraints count)",
        "workloadSelector != null && labelSelector(workloadSelector).matches(pod.labels)"),
    POD_GROUP_PODS: Declaration(
        INT,
        "the pods of the cluster, in any phase, labelled with the pod's pod group "
        "(`scheduling.x-k8s.io/pod-group`) in its namespace — an index the cache keeps; "
        "0 for a pod of no group",
        "podGroupPods >= pod.podGroup.minMember"),
    PARAMS: Declaration(PARAMS_TYPE,
                        "the policy's parameters: `spec.params`, overridable per profile; "
                        "one `dyn` field per declared key",
                        "nodePods.size() < params.maxPods"),
    VARIABLES: Declaration(VARIABLES_TYPE,
                           "the policy's `spec.variables`, each computed at most once per "
                           "pod and cycle, typed by its expression",
                           "variables.age > 60"),
    A: _A_B,
    B: _A_B,
    VICTIM: Declaration(POD_TYPE, "a pod on the candidate node that preemption might evict",
                        "victim.priority < pod.priority"),
    AGGREGATES: Declaration(
        AGGREGATES_TYPE,
        "the policy's `spec.aggregates`, kept up to date by the engine: one "
        "`policysched.Aggregate` per name (a list of them with `forEach`)",
        "aggregates.sameApp.count(node) - aggregates.sameApp.minimum() <= 1"),
    ITEM: Declaration(DYN, "an element of an aggregate's `forEach` list, in its other fields",
                      "item.topologyKey"),
    POD_VOLUMES: Declaration(
        list_of(POD_VOLUME_TYPE),
        "the pod's volumes that the volume plugins read — those of a PersistentVolumeClaim "
        "(`persistentVolumeClaim`, or `ephemeral`, whose claim is `<pod>-<volume>`) and "
        "inline CSI volumes — each with its claim, the claim's bound PersistentVolume and "
        "its StorageClass as the cycle's snapshot has them ([] for a pod without any)",
        "podVolumes.all(v, v.persistentVolume.nodeAffinity.matches(node))"),
    VOLUME_BINDER: Declaration(
        VOLUME_BINDER_TYPE,
        "kube-scheduler's volume binder for the pod in the cycle's snapshot (bindings that "
        "other pods' reserve assumed included): `volumeBinder.bindings(node)` says which "
        "PersistentVolume each of its unbound WaitForFirstConsumer claims would take on "
        "that node, which would be provisioned, and whether its bound claims admit the node; "
        "a reserve rule's `volumeBindings` assumes them",
        "volumeBinder.bindings(node).unmatched.size() == 0"),
    PRE_FILTER_RAN: Declaration(
        BOOL,
        "whether preFilter got to this policy in this cycle: false when a policy before it "
        "in the profile rejected the pod as unresolvable, or narrowed the nodes to none "
        "(kube-scheduler's PreFilter stops there, so the plugins after it have no PreFilter "
        "state)",
        "preFilterRan"),
    COUNTED_POD: Declaration(
        POD_TYPE, "a pod counted by an aggregate with `termsOf`",
        "p.affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution"
        ".orValue([])"),
}

_RESOURCES_DOC = ("cpu in millicores, memory and ephemeral-storage in bytes, other resources "
                  "as counts")

FIELD_DOCS: Mapping[str, Mapping[str, str]] = {
    POD_TYPE.name: {
        "name": "`metadata.name`",
        "namespace": "`metadata.namespace` (`default` when absent)",
        "uid": "`metadata.uid`",
        "labels": "`metadata.labels`",
        "annotations": "`metadata.annotations`",
        "creationTimestamp": "`metadata.creationTimestamp`, in Unix seconds",
        "priority": "`spec.priority` (set from the PriorityClass by admission)",
        "requests": "the pod's requests as kube-scheduler counts them (containers and sidecars "
                    "summed, init containers as a maximum, pod-level resources, overhead): "
                    f"{_RESOURCES_DOC}; cpu, memory and ephemeral-storage first, then by name",
        "nonZeroRequests": "the requests NodeResourcesFit's scoring counts for the pod: "
                           "its containers' with kube-scheduler's non-zero defaults (a "
                           "container that requests no cpu (memory) counts 100m (200Mi)) "
                           "and overhead, pod-level requests ignored as kube v1.34's does; "
                           "`cpu` and `memory` are always present",
        "limits": f"the pod's limits, computed as `requests`: {_RESOURCES_DOC}",
        "ports": "the ports of its containers and sidecars (init containers with "
                 "`restartPolicy: Always`)",
        "tolerations": "`spec.tolerations`",
        "nodeSelector": "`spec.nodeSelector`",
        "affinity": "`spec.affinity`, the API object (`{}` when absent)",
        "schedulerName": "`spec.schedulerName`",
        "nodeName": "the node the pod is bound or assumed on; '' while pending",
        "ownerReferences": "`metadata.ownerReferences`",
        "podGroup": "the gang the pod belongs to by its `scheduling.x-k8s.io/pod-group` label",
        "metadata": "the API object's `metadata`, as JSON",
        "spec": "the API object's `spec`, as JSON",
        "status": "the API object's `status`, as JSON",
    },
    NODE_TYPE.name: {
        "name": "`metadata.name`",
        "labels": "`metadata.labels`",
        "annotations": "`metadata.annotations`",
        "taints": "`spec.taints`",
        "unschedulable": "`spec.unschedulable` (cordoned)",
        "allocatable": f"`status.allocatable` (else `status.capacity`): {_RESOURCES_DOC}; "
                       "`pods` is the pod capacity",
        "requested": "the requests of the pods on the node summed, assumed pods included; "
                     "`pods` is their number",
        "nonZeroRequested": "`requested` with `cpu` and `memory` summed over the pods' "
                            "non-zero requests (kube-scheduler's NonZeroRequested: a "
                            "container that requests no cpu (memory) counts 100m (200Mi))",
        "free": "`allocatable` minus `requested`, per resource",
        "podCount": "the pods on the node, assumed pods included",
        "usedPorts": "the host ports the pods on the node use",
        "images": "`status.images`: every name of an image to its size in bytes",
        "csiVolumeLimits": "the node's CSINode: each CSI driver's volume limit "
                           "(`allocatable.count`); a driver without one is absent",
        "attachedCSIVolumes": "per CSI driver, the unique volumes the pods on the node use, "
                              "as NodeVolumeLimits counts them: a claim bound to a CSI "
                              "PersistentVolume counts its volume handle, an unbound one "
                              "counts under its StorageClass's provisioner",
        "csiVolumes": "the unique CSI volumes the pods on the node use (`driver/handle`, "
                      "as `attachedCSIVolumes` counts them) to their driver",
        "usedDisks": "the distinct inline disks of the pods on the node (GCE persistent "
                     "disks, AWS EBS volumes, iSCSI and RBD volumes), what "
                     "VolumeRestrictions compares a new pod's disks with",
        "usedClaims": "the claims the pods on the node use through `persistentVolumeClaim` "
                      "volumes, as `namespace/name`, to the number of such references "
                      "(kube-scheduler's NodeInfo.PVCRefCounts)",
        "metadata": "the API object's `metadata`, as JSON",
        "spec": "the API object's `spec`, as JSON",
        "status": "the API object's `status`, as JSON",
    },
    CONTAINER_PORT_TYPE.name: {
        "containerPort": "the port in the container",
        "hostPort": "the port on the node (0: none; the container port with hostNetwork)",
        "protocol": "`TCP` (default), `UDP` or `SCTP`",
        "hostIP": "the host address the port binds ('' for all)",
    },
    HOST_PORT_TYPE.name: {
        "hostIP": "the host address ('' for all)",
        "protocol": "`TCP`, `UDP` or `SCTP`",
        "hostPort": "the port on the node",
    },
    TOLERATION_TYPE.name: {
        "key": "the taint key tolerated ('' with `Exists`: every taint)",
        "operator": "`Equal` (default) or `Exists`",
        "value": "the taint value tolerated with `Equal`",
        "effect": "the taint effect tolerated ('': every effect)",
        "tolerationSeconds": "how long a `NoExecute` taint is tolerated (0 when absent)",
    },
    TAINT_TYPE.name: {
        "key": "the taint's key",
        "value": "the taint's value ('' when absent)",
        "effect": "`NoSchedule`, `PreferNoSchedule` or `NoExecute`",
    },
    POD_GROUP_TYPE.name: {
        "name": "the PodGroup's name ('' for a pod of no group)",
        "minMember": "`spec.minMember` of the PodGroup (0 while it is unknown)",
        "scheduleTimeoutSeconds": "`spec.scheduleTimeoutSeconds` of the PodGroup (0 when "
                                  "unset: the wait is then the plugin's default)",
    },
    POD_VOLUME_TYPE.name: {
        "name": "the volume's name in the pod",
        "claimName": "the claim's name in the pod's namespace ('' for an inline CSI volume)",
        "readOnly": "`persistentVolumeClaim.readOnly` (or the CSI volume's `readOnly`)",
        "ephemeral": "a generic ephemeral volume (its claim is `<pod>-<volume>`)",
        "csiDriver": "an inline CSI volume's driver ('' otherwise)",
        "claim": "the PersistentVolumeClaim (name '' when it does not exist (yet))",
        "persistentVolume": "the PersistentVolume the claim is bound to (`volumeName`; "
                            "name '' while unbound or not known)",
        "storageClass": "the claim's StorageClass (name '' when it has none or it is not "
                        "known)",
        "csiVolume": "the unique CSI volume NodeVolumeLimits counts for the volume "
                     "(`driver/handle` of the bound CSI PersistentVolume, or "
                     "`provisioner/-namespace/claim` while the claim is not bound to a known "
                     "volume; '' when none, as for an inline CSI volume, which kube does not "
                     "count): compare with `node.csiVolumes`",
        "csiVolumeDriver": "the CSI driver `csiVolume` counts under ('' when none)",
        "disk": "the inline disk of the volume (`kind` '' for another source)",
    },
    DISK_TYPE.name: {
        "kind": "the volume source: `gcePersistentDisk`, `awsElasticBlockStore`, `iscsi` "
                "or `rbd`",
        "id": "the disk: `pdName`, `volumeID`, `iqn`, or an RBD volume's `pool/image` "
              "(pool `rbd` when unset)",
        "readOnly": "the source's `readOnly`",
        "monitors": "an RBD volume's Ceph `monitors` ([] for the others)",
    },
    CLAIM_TYPE.name: {
        "name": "`metadata.name`",
        "storageClassName": "the beta annotation `volume.beta.kubernetes.io/storage-class` "
                            "if set, else `spec.storageClassName`",
        "accessModes": "`spec.accessModes`",
        "requestedStorage": "`spec.resources.requests.storage` in bytes (0 when unset)",
        "volumeName": "`spec.volumeName`: the PersistentVolume it is bound to",
        "phase": "`status.phase` (`Pending` when unset)",
        "selectedNode": "the `volume.kubernetes.io/selected-node` annotation",
        "volumeMode": "`spec.volumeMode` (`Filesystem` when unset)",
        "usedOnNodes": "the nodes (sorted) whose scheduled pods — bound or assumed — use "
                       "the claim through a `persistentVolumeClaim` volume: an index the "
                       "cache keeps (kube-scheduler's PVCRefCounts over the nodes)",
        "bound": "fully bound, as kube's volume binder reads it: `volumeName` set and the "
                 "`pv.kubernetes.io/bind-completed` annotation present",
        "deleting": "`metadata.deletionTimestamp` is set",
        "controllerUID": "the uid of the owner reference marked `controller` ('' for none): "
                         "an ephemeral volume's claim is owned by its pod",
    },
    PERSISTENT_VOLUME_TYPE.name: {
        "name": "`metadata.name`",
        "labels": "`metadata.labels` (VolumeZone reads the topology labels)",
        "storageClassName": "the beta storage-class annotation if set, else "
                            "`spec.storageClassName`",
        "capacity": "`spec.capacity.storage` in bytes",
        "accessModes": "`spec.accessModes`",
        "volumeMode": "`spec.volumeMode` (`Filesystem` when unset)",
        "nodeAffinity": "`spec.nodeAffinity.required` as a NodeAffinity (`matches(node)`); "
                        "every node matches when it has none",
        "csiDriver": "`spec.csi.driver` ('' for another volume source)",
        "volumeHandle": "`spec.csi.volumeHandle`",
        "claim": "`spec.claimRef` as `namespace/name` ('' when unclaimed)",
        "phase": "`status.phase` (`Pending` when unset)",
        "topology": "its topology labels as VolumeZone reads them: each of "
                    "`topology.kubernetes.io/zone` and `/region` and "
                    "`failure-domain.beta.kubernetes.io/zone` and `/region` it has, to the "
                    "zones of its value (separated by `__`, volumehelpers.LabelZonesToSet); "
                    "a value with an empty zone is left out, as kube ignores it",
    },
    STORAGE_CLASS_TYPE.name: {
        "name": "`metadata.name`",
        "provisioner": "`provisioner`",
        "volumeBindingMode": "`volumeBindingMode` (`Immediate` when unset)",
        "allowedTopologies": "`allowedTopologies` as a NodeAffinity (`matches(node)`): its "
                             "terms ORed, each of In requirements on node labels; every node "
                             "matches when the class has none",
    },
    VOLUME_BINDINGS_TYPE.name: {
        "static": "the claims that would bind to an existing PersistentVolume, smallest "
                  "request first, each with the smallest matching volume (one pre-bound to "
                  "it first), none taken twice",
        "provisions": "the claims that would be provisioned on the node: no matching volume, "
                      "and a class with a provisioner whose allowedTopologies admit the "
                      "node (or a selected-node annotation naming the node)",
        "unmatched": "the names of the claims with neither (all of them when one is "
                     "already being provisioned for another node)",
        "boundConflict": "a claim already bound has a PersistentVolume whose node affinity "
                         "rejects the node (kube's checkBoundClaims: the first bound claim "
                         "whose volume is missing or rejects the node decides which)",
        "missingVolumes": "a claim already bound names a PersistentVolume that does not "
                          "exist (the same first claim decides)",
        "classUtilization": "per class of `static`, the requests in percent of the volumes' "
                            "capacity (100 when exceeded or 0): what VolumeBinding's "
                            "capacity scoring reads",
    },
    VOLUME_BINDING_TYPE.name: {
        "claimName": "the claim (in the pod's namespace)",
        "volumeName": "the PersistentVolume it would bind to",
        "storageClassName": "the volume's class",
        "requested": "the claim's requested storage in bytes",
        "capacity": "the volume's capacity in bytes",
    },
    VOLUME_PROVISION_TYPE.name: {
        "claimName": "the claim (in the pod's namespace)",
        "storageClassName": "its class",
        "requested": "its requested storage in bytes",
    },
    OWNER_REFERENCE_TYPE.name: {
        "apiVersion": "the owner's API version",
        "kind": "the owner's kind",
        "name": "the owner's name",
        "uid": "the owner's uid",
        "controller": "whether the owner is the pod's controller",
    },
}

_TYPES: Mapping[str, Type] = {name: d.type for name, d in DECLARATIONS.items()}

_POD_LEVEL = frozenset({NOW, POD, PARAMS, VARIABLES})
_CLUSTER = frozenset({PODS, NODES, PODS_WITH_AFFINITY, WORKLOAD_SELECTOR, POD_GROUP_PODS,
                      POD_VOLUMES, VOLUME_BINDER})
_CLUSTER_LEVEL = _POD_LEVEL | _CLUSTER | {AGGREGATES}
# what a node-level expression sees: the pod-level variables, the node, and the pod's
# volumes (per pod, not per node: the snapshot's claims and volumes)
_NODE_LEVEL = _POD_LEVEL | {NODE, NODE_PODS, AGGREGATES, POD_VOLUMES, VOLUME_BINDER}


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
POST_FILTER = Scope("postFilter", _CLUSTER_LEVEL | {PRE_FILTER_RAN},
                    messages.WHY_NO_NODE_POST_FILTER)
POST_FILTER_VICTIMS = Scope("postFilter victims", _NODE_LEVEL | {VICTIM})
PRE_SCORE = Scope("preScore", _CLUSTER_LEVEL, messages.WHY_NO_NODE_PRE_SCORE)
SCORE = Scope("score", _NODE_LEVEL)
RESERVE = Scope("reserve", _NODE_LEVEL)
UNRESERVE = Scope("unreserve", _NODE_LEVEL)
PERMIT = Scope("permit", _NODE_LEVEL | _CLUSTER)
PRE_BIND = Scope("preBind", _NODE_LEVEL)
BIND = Scope("bind", _NODE_LEVEL)
POST_BIND = Scope("postBind", _NODE_LEVEL)

SCOPES: tuple[Scope, ...] = (
    MATCH, VARIABLE, AGGREGATE, AGGREGATE_ITEM, AGGREGATE_TERMS, QUEUE_SORT_LESS,
    QUEUE_SORT_KEYS, PRE_ENQUEUE, PRE_FILTER, FILTER, POST_FILTER, POST_FILTER_VICTIMS,
    PRE_SCORE, SCORE, RESERVE, UNRESERVE, PERMIT, PRE_BIND, BIND, POST_BIND,
)


def unavailable_reason(variable: str, scope: Scope) -> str:
    """Why ``variable`` cannot be used in ``scope`` (shown after "'x' is not available")."""
    template = messages.UNAVAILABLE.get(variable, messages.UNAVAILABLE_DEFAULT)
    if variable == VARIABLES and scope is MATCH:
        template = messages.UNAVAILABLE_VARIABLES_IN_MATCH
    return template.format(where=scope.name, why=scope.why_no_node)


def environment(
    scope: Scope, params: Iterable[str] = (), variables: Mapping[str, Type] | None = None,
    aggregates: Mapping[str, Type] | None = None, version: KubernetesVersion = DEFAULT_VERSION,
) -> Environment:
    """The environment of one expression of a policy with these ``params`` keys, the
    ``variables`` declared so far and its ``aggregates`` (name → type), at the CEL
    compatibility ``version``."""
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
        version=version,
        heterogeneous_literals_in=HETEROGENEOUS_LITERALS_IN,
    )


HETEROGENEOUS_LITERALS_IN = frozenset({
    "format", *kubernetes_functions.OBJECT_ARGUMENT_FUNCTIONS,
    *(f.name for f in resource_functions.FUNCTIONS)})
"""Calls whose arguments may hold mixed list and map literals: string formatting (as in
Kubernetes) and our functions that read a Kubernetes object written as a literal
(``labelSelector({'matchExpressions': [{'key': 'k', 'operator': 'In', 'values': [...]}]})``,
``leastAllocated(..., [{'name': 'cpu', 'weight': 1}])``).
"""


@cache
def _functions() -> Mapping[str, Function]:
    """The standard library and the policy functions."""
    functions = dict(standard_library())
    functions["matches"] = kubernetes_functions.matches_extending(functions["matches"])
    for function in (*aggregate_functions.FUNCTIONS, *kubernetes_functions.FUNCTIONS,
                     *resource_functions.FUNCTIONS, *volume_functions.FUNCTIONS):
        assert function.name not in functions, function.name
        functions[function.name] = function
    return functions


@cache
def _unavailable(scope: Scope) -> Mapping[str, str]:
    return {name: unavailable_reason(name, scope) for name in _TYPES if name not in scope.declared}
