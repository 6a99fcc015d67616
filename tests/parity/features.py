"""The features a decision exercises, read from its pod and cluster (so hand-written cases
need no tags), each under the default-profile plugin it belongs to: the rows of the
per-feature table."""

from __future__ import annotations

from collections.abc import Iterator

from .outcome import Outcome
from .scenario import CSI_NODE, PDB, PV, PVC, Object, Scenario
from .storage import (
    NO_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    claim_key,
    claims_of,
    storage_class_of,
)

# feature → plugin, in table order
FEATURES: dict[str, str] = {
    "requests": "NodeResourcesFit",
    "no-requests": "NodeResourcesFit",
    "limits-only": "NodeResourcesFit",
    "init-containers": "NodeResourcesFit",
    "sidecars": "NodeResourcesFit",
    "overhead": "NodeResourcesFit",
    "pod-level-resources": "NodeResourcesFit",
    "extended-resources": "NodeResourcesFit",
    "ephemeral-storage": "NodeResourcesFit",
    "pods-capacity": "NodeResourcesFit",
    "unschedulable-nodes": "NodeUnschedulable",
    "node-selector": "NodeAffinity",
    "node-affinity": "NodeAffinity",
    "match-fields": "NodeAffinity",
    "gt-lt": "NodeAffinity",
    "node-affinity-preferred": "NodeAffinity",
    "taints": "TaintToleration",
    "tolerations": "TaintToleration",
    "host-ports": "NodePorts",
    "sidecar-host-ports": "NodePorts",
    "pod-affinity": "InterPodAffinity",
    "pod-anti-affinity": "InterPodAffinity",
    "pod-affinity-preferred": "InterPodAffinity",
    "existing-anti-affinity": "InterPodAffinity",
    "affinity-namespaces": "InterPodAffinity",
    "namespace-selector": "InterPodAffinity",
    "affinity-match-label-keys": "InterPodAffinity",
    "spread-hard": "PodTopologySpread",
    "spread-soft": "PodTopologySpread",
    "min-domains": "PodTopologySpread",
    "spread-inclusion-policies": "PodTopologySpread",
    "spread-match-label-keys": "PodTopologySpread",
    "images": "ImageLocality",
    "bound-volumes": "VolumeBinding",
    "missing-claim": "VolumeBinding",
    "unbound-immediate": "VolumeBinding",
    "wffc-static": "VolumeBinding",
    "wffc-provision": "VolumeBinding",
    "volume-zones": "VolumeZone",
    "rwop": "VolumeRestrictions",
    "disk-conflicts": "VolumeRestrictions",
    "csi-limits": "NodeVolumeLimits",
    "priority": "PrioritySort",
    "preemption": "DefaultPreemption",
    "pdb": "DefaultPreemption",
    "preemption-never": "DefaultPreemption",
}
FEW_PODS = 10  # a node with fewer pod slots than this exercises the pods capacity
# the volume sources VolumeRestrictions checks for conflicts (GCE PD, EBS, ISCSI, RBD)
DISK_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd")
# node labels VolumeZone compares with a volume's (kube's topology and beta labels)
ZONE_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region",
               "failure-domain.beta.kubernetes.io/zone",
               "failure-domain.beta.kubernetes.io/region")


def _containers(spec: Object) -> Iterator[tuple[Object, bool]]:
    """Every container with whether it is a sidecar (init, ``restartPolicy: Always``)."""
    for c in spec.get("containers", []):
        yield c, False
    for c in spec.get("initContainers", []):
        yield c, c.get("restartPolicy") == "Always"


def features(scenario: Scenario, pod: Object, *outcomes: Outcome) -> frozenset[str]:
    """The features of the decision of ``pod``; ``preemption`` (and ``pdb``) where either
    side's ``outcomes`` preempted."""
    spec = pod["spec"]
    found: set[str] = set()
    requests: set[str] = set()
    for container, sidecar in _containers(spec):
        resources = container.get("resources", {})
        requests |= set(resources.get("requests", {}))
        if resources.get("limits") and not resources.get("requests"):
            found.add("limits-only")
            requests |= set(resources["limits"])
        if container.get("ports") and any(p.get("hostPort") for p in container["ports"]):
            found.add("sidecar-host-ports" if sidecar else "host-ports")
        if sidecar:
            found.add("sidecars")
    if any(c.get("restartPolicy") != "Always" for c in spec.get("initContainers", [])):
        found.add("init-containers")
    found.add("requests" if requests or spec.get("resources") else "no-requests")
    if "example.com/foo" in requests:
        found.add("extended-resources")
    if "ephemeral-storage" in requests:
        found.add("ephemeral-storage")
    if spec.get("overhead"):
        found.add("overhead")
    if spec.get("resources"):
        found.add("pod-level-resources")
    nodes = scenario.nodes
    if any(int(n["status"]["allocatable"].get("pods", "110")) < FEW_PODS for n in nodes):
        found.add("pods-capacity")
    if any(n.get("spec", {}).get("unschedulable") for n in nodes):
        found.add("unschedulable-nodes")
    if any(n.get("spec", {}).get("taints") for n in nodes):
        found.add("taints")
    if spec.get("tolerations"):
        found.add("tolerations")
    if spec.get("nodeSelector"):
        found.add("node-selector")
    found |= _node_affinity(spec.get("affinity", {}).get("nodeAffinity", {}))
    found |= _pod_affinity(spec.get("affinity", {}))
    if any(p["spec"].get("affinity", {}).get("podAntiAffinity") for p in scenario.bound_pods):
        found.add("existing-anti-affinity")
    found |= _spread(spec.get("topologySpreadConstraints", []))
    images = {name for n in nodes for i in n["status"].get("images", []) for name in i["names"]}
    if any(c["image"] in images or f"docker.io/library/{c['image']}:latest" in images
           for c, _ in _containers(spec)):
        found.add("images")
    if spec.get("priorityClassName"):
        found.add("priority")
        if spec["priorityClassName"].endswith("-never"):
            found.add("preemption-never")
    found |= _volumes(scenario, pod)
    if any(o.nominated or o.victims for o in outcomes):
        found.add("preemption")
        if scenario.of_kind(PDB):
            found.add("pdb")
    return frozenset(found)


def _node_affinity(affinity: Object) -> set[str]:
    found = set()
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = list(required.get("nodeSelectorTerms", [])) if required else []
    if terms:
        found.add("node-affinity")
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution", [])
    if preferred:
        found.add("node-affinity-preferred")
    for term in [*terms, *(p["preference"] for p in preferred)]:
        if term.get("matchFields"):
            found.add("match-fields")
        if any(r["operator"] in ("Gt", "Lt") for r in term.get("matchExpressions", [])):
            found.add("gt-lt")
    return found


def _pod_affinity(affinity: Object) -> set[str]:
    found = set()
    terms = []
    for kind, name in (("podAffinity", "pod-affinity"), ("podAntiAffinity", "pod-anti-affinity")):
        section = affinity.get(kind, {})
        required = section.get("requiredDuringSchedulingIgnoredDuringExecution", [])
        preferred = section.get("preferredDuringSchedulingIgnoredDuringExecution", [])
        if required:
            found.add(name)
        if preferred:
            found.add("pod-affinity-preferred")
        terms += [*required, *(p["podAffinityTerm"] for p in preferred)]
    for term in terms:
        if term.get("namespaces"):
            found.add("affinity-namespaces")
        if "namespaceSelector" in term:
            found.add("namespace-selector")
        if term.get("matchLabelKeys") or term.get("mismatchLabelKeys"):
            found.add("affinity-match-label-keys")
    return found


def _spread(constraints: list[Object]) -> set[str]:
    found = set()
    for c in constraints:
        found.add("spread-hard" if c["whenUnsatisfiable"] == "DoNotSchedule" else "spread-soft")
        if "minDomains" in c:
            found.add("min-domains")
        if "nodeAffinityPolicy" in c or "nodeTaintsPolicy" in c:
            found.add("spread-inclusion-policies")
        if c.get("matchLabelKeys"):
            found.add("spread-match-label-keys")
    return found


def _volumes(scenario: Scenario, pod: Object) -> set[str]:
    """The volume features of the pod's claims (as the scenario starts) and disks."""
    found = set()
    volumes = pod["spec"].get("volumes") or []
    if any(source in v for v in volumes for source in DISK_SOURCES):
        found.add("disk-conflicts")
    namespace = pod["metadata"].get("namespace") or "default"
    claims = {claim_key(c): c for c in scenario.of_kind(PVC)}
    pvs = {v["metadata"]["name"]: v for v in scenario.of_kind(PV)}
    limited = {d["name"] for n in scenario.of_kind(CSI_NODE)
               for d in (n.get("spec") or {}).get("drivers") or []
               if (d.get("allocatable") or {}).get("count") is not None}
    for name in claims_of(pod):
        claim = claims.get(f"{namespace}/{name}")
        if claim is None:
            found.add("missing-claim")
            continue
        spec = claim.get("spec") or {}
        if "ReadWriteOncePod" in spec.get("accessModes", []):
            found.add("rwop")
        storage_class = storage_class_of(claim, scenario.objects) or {}
        volume = pvs.get(spec.get("volumeName", ""))
        driver = storage_class.get("provisioner")
        if spec.get("volumeName"):
            found.add("bound-volumes")
            labels = (volume or {}).get("metadata", {}).get("labels") or {}
            if any(key in labels for key in ZONE_LABELS):
                found.add("volume-zones")
            driver = ((volume or {}).get("spec") or {}).get("csi", {}).get("driver")
        elif storage_class.get("volumeBindingMode") != WAIT_FOR_FIRST_CONSUMER:
            found.add("unbound-immediate")
        elif storage_class.get("provisioner") == NO_PROVISIONER:
            found.add("wffc-static")
        else:
            found.add("wffc-provision")
        if driver in limited:
            found.add("csi-limits")
    return found
