"""``simulate``'s run to quiescence: the 5-minute flush of unschedulable pods is a due
event while it might help, and a run whose flushes change nothing ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from policysched.commands.loading import load_engine
from policysched.commands.simulate import Simulation, simulate

from ..cache.objects_builder import make_node, make_pod

START = 1_800_000_000.0
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def run(*objects: dict[str, Any]) -> Simulation:
    engine = load_engine([], None)
    return simulate(objects, engine.frameworks, engine.settings, START)


def pending(name: str, cpu: str = "1", group: str | None = None, **spec: Any
            ) -> dict[str, Any]:
    labels = {GROUP_LABEL: group} if group else None
    return make_pod(name, cpu=cpu, labels=labels, schedulerName="policysched", **spec)


def host(name: str, cpu: str) -> dict[str, Any]:
    node = make_node(name, cpu=cpu)
    node["metadata"]["labels"] = {"kubernetes.io/hostname": name}
    return node


def test_a_bind_moves_a_pod_whose_rules_count_pods() -> None:
    """The follower needs a leader on its node, and is tried first: the leader's bind
    moves it (InterPodAffinity's queueing hint on AssignedPodAdd), it binds after its
    1-second backoff."""
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "leader"}},
         "topologyKey": "kubernetes.io/hostname"}]}}
    leader = make_pod("leader", cpu="1", labels={"app": "leader"}, schedulerName="policysched")
    simulation = run(host("n1", "4"), pending("follower", affinity=affinity, priority=10),
                     leader)
    follower = simulation.pod("default/follower")
    assert follower is not None and (follower.node, follower.bound_at) == ("n1", 1.0)


COMPANY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: company}
spec:
  filter:
  - name: not-alone
    expression: "node.podCount >= 1 || 'leader' in pod.labels"
"""


def test_a_pod_left_unschedulable_by_a_later_bind_is_flushed_after_five_minutes(
        tmp_path: Path) -> None:
    """The follower needs a pod on its node, and is tried first: the leader's bind only
    takes room, which moves no pod rejected for the room a node has (as kube's
    NodeResourcesFit), but the flush 5 minutes after its attempt binds it."""
    (tmp_path / "company.yaml").write_text(COMPANY)
    engine = load_engine([str(tmp_path)], None, enable=("company",))
    leader = make_pod("leader", cpu="1", labels={"leader": ""}, schedulerName="policysched")
    simulation = simulate((host("n1", "4"), pending("follower", priority=10), leader),
                          engine.frameworks, engine.settings, START)
    follower = simulation.pod("default/follower")
    assert follower is not None and (follower.node, follower.bound_at) == ("n1", 300.0)


def test_a_gang_that_never_assembles_ends_the_run_when_its_flush_changes_nothing() -> None:
    """train-0 and train-1 hold 2 of 4 CPUs for train-big, which fits nowhere; held waits
    for the room. At 3 s the gang times out and held binds; the flush at 303 s (held's bind
    changed the cluster) lets train-0 wait again, its release lets train-1 wait, and then
    nothing changes any more: the run ends at 309 s, not at the hour-long horizon."""
    simulation = run(
        host("n1", "4"),
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "train", "namespace": "default"},
         "spec": {"minMember": 3, "scheduleTimeoutSeconds": 3}},
        pending("train-big", cpu="64", group="train"), pending("train-0", group="train"),
        pending("train-1", group="train"), pending("held", cpu="3"))
    held = simulation.pod("default/held")
    assert held is not None and (held.node, held.bound_at) == ("n1", 3.0)
    assert simulation.end - START == 309.0
    train = [simulation.pod(f"default/train-{i}") for i in (0, 1)]
    assert [(p.node, p.message) for p in train if p is not None] == [
        (None, "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at "
               "plugin coscheduling/gang.")] * 2
