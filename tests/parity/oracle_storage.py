"""The oracle's storage: a scenario's StorageClasses, CSIDrivers, PersistentVolumes,
PersistentVolumeClaims and CSINodes in the API server, and what kube's decisions do to its
claims.

Creation (``create`` before the Nodes, ``create_csi_nodes`` after them): classes and
drivers; the volumes, without status or a ``claimRef`` uid; once kube-controller-manager's
PV binder has seen each (it makes a volume ``Available``), the claims, without status or the
binding annotations. The binder then binds each pre-bound pair itself (the claim names its
volume, the volume's ``claimRef`` its claim: kube's "user asked for a specific PV" path of
``syncUnboundClaim``), giving the volume the claim's uid and the claim its
``pv.kubernetes.io/bind-completed`` annotation — what a scenario writes as a pre-bound
pair. The oracle waits until every volume and claim has the phase the scenario gives it
(a claim bound to a volume the scenario lacks, say, becomes ``Lost``): a scenario whose
storage the binder would change otherwise (an Immediate claim a free volume matches) is
refused rather than run on another cluster than the replay's.

A decision: the claims the pod's binding bound (kube-scheduler binds a pod only once its
claims are), or, for a claim of a class with a provisioner (none runs here), the node
kube-scheduler's preBind wrote as its ``volume.kubernetes.io/selected-node`` before it
waits for a provisioned volume (``selected``).

Deletion: claims and volumes with their protection finalizers dropped first (no
protection controller runs), CSINodes, drivers and classes.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from .control_plane import OracleError
from .scenario import CSI_DRIVER, CSI_NODE, PV, PVC, STORAGE_CLASS, Object, Scenario
from .storage import (
    BIND_COMPLETED,
    BOUND_BY_CONTROLLER,
    NO_PROVISIONER,
    SELECTED_NODE,
    WAIT_FOR_FIRST_CONSUMER,
    claim_key,
    claims_of,
    storage_class_of,
)

if TYPE_CHECKING:
    from .oracle import Rest

SETTLE_TIMEOUT = 20.0  # seconds for the PV binder to see volumes and bind pre-bound pairs
POLL = 0.05
AVAILABLE, PENDING = "Available", "Pending"
BINDING_ANNOTATIONS = (BIND_COMPLETED, BOUND_BY_CONTROLLER)


def storage_path(obj: Object) -> str | None:
    """The collection path of a storage object (None for another kind)."""
    kind = obj["kind"]
    if kind == PVC:
        return f"/api/v1/namespaces/{obj['metadata'].get('namespace') or 'default'}/" \
               "persistentvolumeclaims"
    return {
        STORAGE_CLASS: "/apis/storage.k8s.io/v1/storageclasses",
        CSI_DRIVER: "/apis/storage.k8s.io/v1/csidrivers",
        CSI_NODE: "/apis/storage.k8s.io/v1/csinodes",
        PV: "/api/v1/persistentvolumes",
    }.get(kind)


def for_kube(obj: Object, volumes: Collection[str] = ()) -> Object:
    """A storage object as the oracle creates it: no status; a volume's ``claimRef``
    without uid, a claim of a pre-bound pair (naming one of ``volumes``) without the
    annotations the binder writes."""
    obj = copy.deepcopy(obj)
    obj.pop("status", None)
    if obj["kind"] == PV:
        ref = (obj.get("spec") or {}).get("claimRef")
        if ref:
            for key in ("uid", "resourceVersion"):
                ref.pop(key, None)
    elif obj["kind"] == PVC and (obj.get("spec") or {}).get("volumeName") in volumes:
        annotations = obj["metadata"].get("annotations") or {}
        for key in BINDING_ANNOTATIONS:
            annotations.pop(key, None)
    return obj


def expected_phase(obj: Object) -> str:
    """The phase the binder gives an object: the scenario's, else Available for a volume,
    Pending for a claim."""
    phase = (obj.get("status") or {}).get("phase")
    return str(phase or (AVAILABLE if obj["kind"] == PV else PENDING))


def waits_for_provisioning(scenario: Scenario, pod: Object) -> list[str]:
    """The pod's claims (namespace/name) that kube-scheduler would have provisioned: unbound,
    of a WaitForFirstConsumer class with a provisioner."""
    namespace = pod["metadata"].get("namespace") or "default"
    claims = {claim_key(c): c for c in scenario.of_kind(PVC)}
    found = []
    for name in claims_of(pod):
        claim = claims.get(f"{namespace}/{name}")
        if claim is None or (claim.get("spec") or {}).get("volumeName"):
            continue
        cls = storage_class_of(claim, scenario.objects)
        if (cls is not None and cls.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER
                and cls.get("provisioner") != NO_PROVISIONER):
            found.append(claim_key(claim))
    return found


class StorageOracle:
    def __init__(self, rest: Rest) -> None:
        self.rest = rest

    def _url(self, obj: Object) -> str:
        path = storage_path(obj)
        assert path is not None
        return f"{path}/{obj['metadata']['name']}"

    def create(self, scenario: Scenario) -> None:
        """Classes, drivers, volumes and claims, settled as the scenario gives them."""
        for obj in [*scenario.of_kind(STORAGE_CLASS), *scenario.of_kind(CSI_DRIVER)]:
            self._post(obj)
        volumes, claims = scenario.of_kind(PV), scenario.of_kind(PVC)
        for obj in volumes:
            self._post(obj)
        self._settle(volumes, lambda _: AVAILABLE)  # the binder has seen them
        names = {v["metadata"]["name"] for v in volumes}
        for obj in claims:
            self._post(obj, names)
        self._settle([*volumes, *claims], expected_phase)
        for claim in claims:
            if (claim.get("spec") or {}).get("volumeName") in names and BIND_COMPLETED in (
                    claim["metadata"].get("annotations") or {}):
                self._settle_annotation(claim)

    def create_csi_nodes(self, scenario: Scenario) -> None:
        for obj in scenario.of_kind(CSI_NODE):
            self._post(obj)

    def _post(self, obj: Object, volumes: Collection[str] = ()) -> None:
        self.rest.must("POST", storage_path(obj) or "", for_kube(obj, volumes))

    def _settle(self, objects: Iterable[Object], phase_of: Callable[[Object], str]) -> None:
        """Until every object has its phase (``phase_of(obj)``)."""
        deadline = time.monotonic() + SETTLE_TIMEOUT
        pending = list(objects)
        while pending:
            held = {id(o): (self.rest.must("GET", self._url(o)).get("status") or {}).get("phase")
                    for o in pending}
            pending = [o for o in pending if held[id(o)] != phase_of(o)]
            if not pending:
                return
            if time.monotonic() > deadline:
                wrong = ", ".join(f"{o['kind']} {o['metadata']['name']}: {held[id(o)]} "
                                  f"(not {phase_of(o)})" for o in pending)
                raise OracleError(f"storage not settled after {SETTLE_TIMEOUT:.0f} s: {wrong}")
            time.sleep(POLL)

    def _settle_annotation(self, claim: Object) -> None:
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while BIND_COMPLETED not in (self.rest.must("GET", self._url(claim))["metadata"]
                                     .get("annotations") or {}):
            if time.monotonic() > deadline:
                raise OracleError(f"claim {claim_key(claim)}: not bound after "
                                  f"{SETTLE_TIMEOUT:.0f} s")
            time.sleep(POLL)

    def _claims(self, scenario: Scenario, pod: Object) -> list[tuple[Object, Object]]:
        """(scenario's claim, the API server's) of the pod's claims that exist."""
        namespace = pod["metadata"].get("namespace") or "default"
        claims = {claim_key(c): c for c in scenario.of_kind(PVC)}
        out = []
        for name in claims_of(pod):
            claim = claims.get(f"{namespace}/{name}")
            if claim is None:
                continue
            status, held = self.rest.call("GET", self._url(claim))
            if status == 200:
                out.append((claim, held))
        return out

    def bindings(self, scenario: Scenario, pod: Object) -> dict[str, str]:
        """The pod's claims its decision bound (claim → volume): those the scenario has
        unbound that now name a volume."""
        return {claim_key(claim): held["spec"]["volumeName"]
                for claim, held in self._claims(scenario, pod)
                if not (claim.get("spec") or {}).get("volumeName")
                and (held.get("spec") or {}).get("volumeName")}

    def selected(self, scenario: Scenario, pod: Object) -> dict[str, str]:
        """The pod's claims given a selected node by its decision (claim → node)."""
        out = {}
        for claim, held in self._claims(scenario, pod):
            before = (claim["metadata"].get("annotations") or {}).get(SELECTED_NODE)
            node = (held["metadata"].get("annotations") or {}).get(SELECTED_NODE)
            if node and node != before:
                out[claim_key(claim)] = node
        return out

    def delete(self, scenario: Scenario) -> None:
        """The scenario's storage objects (claims and volumes without their finalizers)."""
        for obj in [*scenario.of_kind(PVC), *scenario.of_kind(PV)]:
            self._drop_finalizers(obj)
            self.rest.call("DELETE", self._url(obj))
        for obj in [*scenario.of_kind(CSI_NODE), *scenario.of_kind(CSI_DRIVER),
                    *scenario.of_kind(STORAGE_CLASS)]:
            self.rest.call("DELETE", self._url(obj))

    def _drop_finalizers(self, obj: Object) -> None:
        for _ in range(10):
            status, held = self.rest.call("GET", self._url(obj))
            if status != 200 or not held["metadata"].get("finalizers"):
                return
            held["metadata"]["finalizers"] = []
            if self.rest.call("PUT", self._url(obj), held)[0] != 409:
                return
