"""The seed 001 flow of VolumeBinding through the framework (policies/volume-binding.yaml in
the built-in profile): reserve assumes the bindings in the cache, unreserve reverts them on
a later failure, preBind hands them to the bind (written, then waited for), postBind forgets
the assumption; two pods of one burst never take the same volume."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cluster.memory import MemoryBackend
from policysched.commands.loading import load_engine
from policysched.framework.profiles import Engine
from policysched.framework.scheduler import Scheduler
from policysched.model.clock import SimulatedClock

from ..cache.objects_builder import make_node, make_pod
from . import DeferredBackend

PROFILE = "policysched"
ZONE = "topology.kubernetes.io/zone"
NO_VOLUME = "node(s) didn't find available persistent volumes to bind"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine([], None)


def zone_node(name: str, zone: str) -> dict[str, Any]:
    found = make_node(name)
    found["metadata"]["labels"] = {ZONE: zone, "kubernetes.io/hostname": name}
    return found


def storage_class(name: str = "local", provisioner: str = "kubernetes.io/no-provisioner"
                  ) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": provisioner,
            "volumeBindingMode": "WaitForFirstConsumer"}


def claim(name: str, cls: str = "local", mode: str = "ReadWriteOnce") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": cls, "accessModes": [mode],
                     "resources": {"requests": {"storage": "1Gi"}}}}


def volume(name: str, zone: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"storageClassName": "local", "accessModes": ["ReadWriteOnce"],
                     "capacity": {"storage": "5Gi"}, "nodeAffinity": {"required": {
                         "nodeSelectorTerms": [{"matchExpressions": [
                             {"key": ZONE, "operator": "In", "values": [zone]}]}]}}}}


def claiming_pod(name: str, claim_name: str) -> dict[str, Any]:
    return make_pod(name, cpu="100m", schedulerName=PROFILE, volumes=[
        {"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}])


def start(engine: Engine, objects: list[dict[str, Any]], deferred: bool = True
          ) -> tuple[Scheduler, MemoryBackend]:
    backend = DeferredBackend(objects) if deferred else MemoryBackend(
        objects, SimulatedClock(1_700_000_000))
    scheduler = Scheduler(backend, engine.frameworks, engine.settings)
    scheduler.sync()
    return scheduler, backend


def run(scheduler: Scheduler) -> None:
    while scheduler.schedule_one() or scheduler.sync():
        pass


def assumed_claim(scheduler: Scheduler, volume_name: str) -> str:
    return scheduler.cache.snapshot().storage.volumes[volume_name].claim


def test_reserve_assumes_and_the_next_pod_of_the_burst_sees_the_volume_taken(
        engine: Engine) -> None:
    scheduler, backend = start(engine, [
        zone_node("n1", "a"), storage_class(), volume("pv1", "a"), claim("c1"), claim("c2"),
        claiming_pod("p1", "c1"), claiming_pod("p2", "c2")])
    assert isinstance(backend, DeferredBackend)
    assert scheduler.schedule_one()
    (request,) = backend.started
    # assumed in the cache (the snapshot shows the volume taken), not written yet
    assert assumed_claim(scheduler, "pv1") == "default/c1"
    assert "claimRef" not in backend.get("PersistentVolume", "pv1")["spec"]
    assert request.volumes is not None and request.volumes.timeout == 600
    assert [a.static for a in request.volumes.assumptions] == [(("c1", "pv1"),)]

    assert scheduler.schedule_one()  # p2, in the same burst: the only volume is taken
    message = scheduler.records["default/p2"].message or ""
    assert message.startswith(f"0/1 nodes are available: 1 {NO_VOLUME}.")
    assert len(backend.started) == 1

    backend.finish(request)  # preBind writes, the in-process controller binds, then the pod
    scheduler.sync()
    written = backend.get("PersistentVolume", "pv1")
    bound_claim = backend.get("PersistentVolumeClaim", "c1")
    assert written["spec"]["claimRef"]["uid"] == bound_claim["metadata"]["uid"]
    assert written["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert bound_claim["spec"]["volumeName"] == "pv1"
    assert "pv.kubernetes.io/bind-completed" in bound_claim["metadata"]["annotations"]
    assert [b.pod for b in backend.bindings] == ["default/p1"]
    # postBind forgot the assumption; the informer's object now carries the binding
    assert scheduler.cache.assumed_volumes("default/p1") == []
    assert assumed_claim(scheduler, "pv1") == "default/c1"


def test_a_failure_after_reserve_reverts_the_assumption(engine: Engine) -> None:
    scheduler, backend = start(engine, [
        zone_node("n1", "a"), storage_class(), volume("pv1", "a"), claim("c1"),
        claiming_pod("p1", "c1")])
    assert isinstance(backend, DeferredBackend)
    assert scheduler.schedule_one()
    (request,) = backend.started
    assert assumed_claim(scheduler, "pv1") == "default/c1"
    backend.finish(request, error="the API server said no")
    scheduler.sync()
    assert assumed_claim(scheduler, "pv1") == ""  # unreserve reverted it
    assert scheduler.cache.assumed_volumes("default/p1") == []
    assert "the API server said no" in (scheduler.records["default/p1"].message or "")
    assert "claimRef" not in backend.get("PersistentVolume", "pv1")["spec"]


def test_two_pods_racing_for_one_volume_only_one_binds(engine: Engine) -> None:
    scheduler, backend = start(engine, [
        zone_node("n1", "a"), zone_node("n2", "a"), storage_class(), volume("pv1", "a"),
        claim("c1"), claim("c2"), claiming_pod("p1", "c1"), claiming_pod("p2", "c2")],
        deferred=False)
    run(scheduler)
    assert [b.pod for b in backend.bindings] == ["default/p1"]
    message = scheduler.records["default/p2"].message or ""
    assert message.startswith(f"0/2 nodes are available: 2 {NO_VOLUME}.")


def test_a_static_volume_pulls_its_pod_to_its_zone(engine: Engine) -> None:
    scheduler, backend = start(engine, [
        zone_node("n1", "a"), zone_node("n2", "b"), storage_class(), volume("pv-b", "b"),
        claim("c1"), claiming_pod("p1", "c1")], deferred=False)
    run(scheduler)
    assert [(b.pod, b.node) for b in backend.bindings] == [("default/p1", "n2")]


def test_a_provisioned_claim_gets_the_chosen_node(engine: Engine) -> None:
    scheduler, backend = start(engine, [
        zone_node("n1", "a"), storage_class("dynamic", "csi.example.com"),
        claim("c1", "dynamic"), claiming_pod("p1", "c1")], deferred=False)
    run(scheduler)
    provisioned = backend.get("PersistentVolumeClaim", "c1")
    annotations = provisioned["metadata"]["annotations"]
    assert annotations["volume.kubernetes.io/selected-node"] == "n1"
    assert provisioned["spec"]["volumeName"].startswith("pvc-")
    assert [b.pod for b in backend.bindings] == ["default/p1"]


@pytest.mark.parametrize(("objects", "message"), [
    ([claim("c1", "")], "pod has unbound immediate PersistentVolumeClaims"),
    ([], 'persistentvolumeclaim "c1" not found'),
])
def test_pre_filter_rejections_use_kube_texts(engine: Engine, objects: list[dict[str, Any]],
                                              message: str) -> None:
    scheduler, _ = start(engine, [zone_node("n1", "a"), storage_class(), *objects,
                                  claiming_pod("p1", "c1")], deferred=False)
    run(scheduler)
    assert (scheduler.records["default/p1"].message or "").startswith(
        f"0/1 nodes are available: {message}.")


def test_pods_of_one_template_each_see_the_others_assumption(engine: Engine) -> None:
    """Ephemeral volumes: two pods of one template (their claims are <pod>-<volume>),
    owned by them; the vectorised tier must not reuse the first pod's bindings."""
    objects: list[dict[str, Any]] = [zone_node("n1", "a"), storage_class(), volume("pv1", "a")]
    for name in ("p1", "p2"):
        owned = claim(f"{name}-data")
        owned["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": f"uid-{name}",
             "controller": True}]
        ephemeral = make_pod(name, cpu="100m", uid=f"uid-{name}", schedulerName=PROFILE,
                             volumes=[{"name": "data", "ephemeral": {"volumeClaimTemplate": {
                                 "spec": {"accessModes": ["ReadWriteOnce"]}}}}])
        objects += [owned, ephemeral]
    scheduler, backend = start(engine, objects)
    assert isinstance(backend, DeferredBackend)
    assert scheduler.schedule_one() and scheduler.schedule_one()
    assert len(backend.started) == 1
    message = scheduler.records["default/p2"].message or ""
    assert message.startswith(f"0/1 nodes are available: 1 {NO_VOLUME}.")
