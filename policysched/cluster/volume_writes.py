"""The API side of kube-scheduler's VolumeBinding PreBind (binder.go BindPodVolumes), shared
by the backends: the objects to write for a pod's assumed volume bindings, and whether the
PersistentVolume controller has completed them.

* a static binding: the PersistentVolume with the claim as its claimRef (kind, namespace,
  name, uid, apiVersion, resourceVersion) and the ``pv.kubernetes.io/bound-by-controller``
  annotation, unless already bound to that claim (GetBindVolumeToClaim);
* a claim to provision: the ``volume.kubernetes.io/selected-node`` annotation;
* complete (checkBindings): every claim has a volume name and the
  ``pv.kubernetes.io/bind-completed`` annotation. A volume whose claimRef lost its uid, a
  claim whose selected-node annotation went or changed, fail the binding with kube's words.

Objects are plain API dicts; these functions return changed copies and never write.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..framework.backend import BackendError
from ..model.volumes import (
    BIND_COMPLETED_ANNOTATION,
    BOUND_BY_CONTROLLER_ANNOTATION,
    SELECTED_NODE_ANNOTATION,
)
from . import messages

POLL_INTERVAL = 1.0  # seconds: kube polls the bindings every second


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    found = _meta(obj).get("annotations")
    return found if isinstance(found, dict) else {}


def claim_reference(claim: dict[str, Any]) -> dict[str, Any]:
    """The ObjectReference of a claim (reference.GetReference)."""
    meta = _meta(claim)
    return {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
            "namespace": meta.get("namespace", ""), "name": meta.get("name", ""),
            "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}


def bind_volume_to_claim(volume: dict[str, Any], claim: dict[str, Any]
                         ) -> dict[str, Any] | None:
    """The volume bound to ``claim`` (GetBindVolumeToClaim), None when it already is;
    raises ``BackendError`` when another claim has it."""
    ref = (volume.get("spec") or {}).get("claimRef") or {}
    meta = _meta(claim)
    name, namespace, uid = meta.get("name"), meta.get("namespace"), meta.get("uid", "")
    if ref and (ref.get("name"), ref.get("namespace")) != (name, namespace):
        raise BackendError(messages.VOLUME_CLAIMED_ELSEWHERE.format(
            volume=_meta(volume).get("name"), claim=f"{ref.get('namespace')}/{ref.get('name')}"))
    bound_to_it = bool(ref) and (not ref.get("uid") or ref.get("uid") == uid)
    changed = copy.deepcopy(volume)
    dirty = False
    if not ref or ref.get("uid") != uid:
        changed.setdefault("spec", {})["claimRef"] = claim_reference(claim)
        dirty = True
    if not bound_to_it and BOUND_BY_CONTROLLER_ANNOTATION not in _annotations(volume):
        changed.setdefault("metadata", {}).setdefault("annotations", {})[
            BOUND_BY_CONTROLLER_ANNOTATION] = "yes"
        dirty = True
    return changed if dirty else None


def select_node(claim: dict[str, Any], node: str) -> dict[str, Any] | None:
    """The claim annotated for provisioning on ``node``, None when it already is."""
    if _annotations(claim).get(SELECTED_NODE_ANNOTATION) == node:
        return None
    changed = copy.deepcopy(claim)
    changed.setdefault("metadata", {}).setdefault("annotations", {})[
        SELECTED_NODE_ANNOTATION] = node
    return changed


def fully_bound(claim: dict[str, Any]) -> bool:
    """isPVCFullyBound: a volume name and the bind-completed annotation."""
    return bool((claim.get("spec") or {}).get("volumeName")) \
        and BIND_COMPLETED_ANNOTATION in _annotations(claim)


def check_static(volume: dict[str, Any], claim: dict[str, Any]) -> bool:
    """One static binding of checkBindings: done, not yet, or ``BackendError``."""
    ref = (volume.get("spec") or {}).get("claimRef") or {}
    if not ref.get("uid"):
        raise BackendError(messages.CLAIM_REF_RESET.format(volume=_meta(volume).get("name")))
    return fully_bound(claim)


def check_provision(claim: dict[str, Any], node: str) -> bool:
    """One provisioned claim of checkBindings: done, not yet, or ``BackendError``."""
    name = _meta(claim).get("name")
    annotations = _annotations(claim)
    if not annotations:
        raise BackendError(messages.SELECTED_NODE_RESET.format(claim=name))
    if annotations.get(SELECTED_NODE_ANNOTATION) != node:
        raise BackendError(messages.PROVISIONING_FAILED.format(claim=name))
    return fully_bound(claim)


def wait_until_bound(check: Callable[[], bool], timeout: float,
                     now: Callable[[], float], sleep: Callable[[float], None]) -> None:
    """Poll ``check`` every ``POLL_INTERVAL`` s (first after one interval, as kube's
    PollUntilContextTimeout without immediate) until true; raises ``BackendError`` with
    kube's text when ``timeout`` passes, or what ``check`` raises."""
    deadline = now() + timeout
    while True:
        remaining = deadline - now()
        if remaining <= 0:
            raise BackendError(messages.VOLUME_BINDING_TIMEOUT)
        sleep(min(POLL_INTERVAL, remaining))
        if check():
            return
