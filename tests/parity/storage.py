"""Storage objects of a scenario as pure data: which claims are pre-bound to which volumes,
the states binding gives a claim and a volume (what the PV controller writes: kube's
``pv_controller.go`` bind), and the cluster after kube's earlier decisions bound claims or
selected nodes for them (``Outcome.bindings`` / ``Outcome.selected``), and what a decision
did to the pod's claims (``volume_decisions``: the same record on either side).

A *pre-bound pair* is a claim whose ``spec.volumeName`` names a volume of the scenario and
whose ``status.phase`` is ``Bound``: the oracle makes the API server hold both bound to each
other (the volume's ``claimRef`` with the claim's uid, the claim's bind-completed annotation)
before any pod uses them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .scenario import PV, PVC, STORAGE_CLASS, Object

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
NO_PROVISIONER = "kubernetes.io/no-provisioner"  # a class of static volumes only
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BOUND = "Bound"
YES = "yes"


def claim_key(claim: Object) -> str:
    metadata = claim["metadata"]
    return f"{metadata.get('namespace') or 'default'}/{metadata['name']}"


def claim_ref(claim: Object, uid: str = "") -> Object:
    """The ``claimRef`` of a volume bound to ``claim`` (with its uid when known)."""
    ref: Object = {"kind": PVC, "namespace": claim["metadata"].get("namespace") or "default",
                   "name": claim["metadata"]["name"]}
    if uid:
        ref["uid"] = uid
    return ref


def prebound_pairs(objects: Iterable[Object]) -> list[tuple[Object, Object]]:
    """(claim, volume) of each pre-bound pair among ``objects``."""
    objects = list(objects)
    volumes = {o["metadata"]["name"]: o for o in objects if o["kind"] == PV}
    pairs = []
    for claim in objects:
        if claim["kind"] != PVC:
            continue
        name = (claim.get("spec") or {}).get("volumeName")
        if name in volumes and (claim.get("status") or {}).get("phase") == BOUND:
            pairs.append((claim, volumes[name]))
    return pairs


def bound_claim(claim: Object, volume: Object, by_controller: bool = True) -> Object:
    """``claim`` as the PV controller leaves it bound to ``volume``: its name, the
    bind-completed (and bound-by-controller) annotation, phase Bound with the volume's
    capacity and access modes."""
    out = copy.deepcopy(claim)
    out.setdefault("spec", {})["volumeName"] = volume["metadata"]["name"]
    annotations = out["metadata"].setdefault("annotations", {})
    annotations[BIND_COMPLETED] = YES
    if by_controller:
        annotations[BOUND_BY_CONTROLLER] = YES
    spec = volume.get("spec") or {}
    out["status"] = {"phase": BOUND, "accessModes": list(spec.get("accessModes", [])),
                     "capacity": dict(spec.get("capacity", {}))}
    return out


def bound_volume(volume: Object, claim: Object, by_controller: bool = True) -> Object:
    """``volume`` as bound to ``claim``: its ``claimRef``, phase Bound (and the
    bound-by-controller annotation VolumeBinding's preBind writes)."""
    out = copy.deepcopy(volume)
    out.setdefault("spec", {})["claimRef"] = claim_ref(claim)
    if by_controller:
        out["metadata"].setdefault("annotations", {})[BOUND_BY_CONTROLLER] = YES
    out["status"] = {"phase": BOUND}
    return out


def with_storage_decisions(objects: Iterable[Object], bindings: Mapping[str, str],
                           selected: Mapping[str, str]) -> list[Object]:
    """``objects`` after kube's decisions bound the claims of ``bindings`` (claim →
    volume) and selected nodes for those of ``selected`` (claim → node)."""
    objects = list(objects)
    claims = {claim_key(o): o for o in objects if o["kind"] == PVC}
    volumes = {o["metadata"]["name"]: o for o in objects if o["kind"] == PV}
    changed: dict[int, Object] = {}
    for key, name in bindings.items():
        claim, volume = claims.get(key), volumes.get(name)
        if claim is None or volume is None:
            continue
        changed[id(claim)] = bound_claim(claim, volume)
        changed[id(volume)] = bound_volume(volume, claim)
    for key, node in selected.items():
        claim = claims.get(key)
        if claim is None:
            continue
        out = copy.deepcopy(changed.get(id(claim), claim))
        out["metadata"].setdefault("annotations", {})[SELECTED_NODE] = node
        changed[id(claim)] = out
    return [changed.get(id(o), o) for o in objects]


def storage_class_of(claim: Object, objects: Iterable[Object]) -> Object | None:
    """The StorageClass a claim names (``spec.storageClassName``) among ``objects``."""
    name = (claim.get("spec") or {}).get("storageClassName")
    return next((o for o in objects if o["kind"] == STORAGE_CLASS
                 and o["metadata"]["name"] == name), None) if name else None


def claims_of(pod: Object) -> list[str]:
    """The claim names (in the pod's namespace) of the pod's ``persistentVolumeClaim``
    volumes."""
    out: list[str] = []
    for volume in (pod.get("spec") or {}).get("volumes", []) or []:
        source: Any = volume.get("persistentVolumeClaim")
        if source and source.get("claimName"):
            out.append(source["claimName"])
    return out


def volume_decisions(pod: Object, before: Iterable[Object],
                     held: Callable[[str, str], Object | None]
                     ) -> tuple[dict[str, str], dict[str, str]]:
    """What a decision did to the pod's claims: (claim → the volume it bound the claim
    to, claim → the node it selected for provisioning). ``before`` holds the claims as the
    scenario gives them; ``held(namespace, name)`` a claim after the decision (None: gone).
    A claim is *selected* when its ``volume.kubernetes.io/selected-node`` annotation
    changed, else *bound* when it names a volume it did not name before (a claim the
    in-process cluster provisioned is bound too, to a volume of its own making: it counts
    as selected only, kube's side has no provisioner)."""
    namespace = pod["metadata"].get("namespace") or "default"
    claims = {claim_key(o): o for o in before if o["kind"] == PVC}
    bindings: dict[str, str] = {}
    selected: dict[str, str] = {}
    for name in claims_of(pod):
        key = f"{namespace}/{name}"
        claim, after = claims.get(key), held(namespace, name)
        if claim is None or after is None:
            continue
        was = (claim["metadata"].get("annotations") or {}).get(SELECTED_NODE)
        node = (after["metadata"].get("annotations") or {}).get(SELECTED_NODE)
        volume = (after.get("spec") or {}).get("volumeName")
        if node and node != was:
            selected[key] = node
        elif volume and not (claim.get("spec") or {}).get("volumeName"):
            bindings[key] = volume
    return bindings, selected
