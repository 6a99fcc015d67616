"""Our side: each of kube's decisions replayed by policysched's engine.

For decision ``i`` the cluster is the one kube had: the initial objects, the earlier
pending pods bound where kube bound them (those kube left unbound are absent, as the oracle
deleted them, and so are those kube left waiting for a volume to be provisioned), every
earlier victim removed, the claims earlier decisions bound (or selected a node for) as kube
left them (``storage.with_storage_decisions``), and pod ``i`` pending; every bound pod with
the start time it had there (``scenario.started``). It is written as a cluster file and run
through what ``policysched simulate --cluster`` runs (the cluster-file parser, the built-in
configuration and policies, ``commands.simulate.simulate``); recorded: the node, the first
FailedScheduling message, the nominated node, the victims, the final score of each node of
the cycle that bound the pod with its parts per policy (named as kube's plugins), and the
preemption candidates tied with the nominated one; and what the decision did to the pod's
claims (``storage.volume_decisions``, read from the in-process cluster, which is its own PV
controller and provisioner: a claim bound to a static volume names it, one provisioned has
the selected-node annotation), relative to the scenario's claims as kube's record is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from policysched.cluster.cluster_file import ClusterFileError, parse_cluster, start_time
from policysched.commands.loading import load_engine
from policysched.commands.simulate import simulate
from policysched.framework.profiles import Engine
from policysched.framework.runtime import CycleState, Framework
from policysched.framework.scheduler import Decision, Scheduler

from .outcome import Outcome
from .scenario import POD, PVC, Object, Scenario, cluster_text, pending_start, pod_key, started
from .storage import volume_decisions, with_storage_decisions

FAILED_SCHEDULING = "FailedScheduling"
# our score policies by the name of the kube-scheduler plugin each reproduces
PLUGIN_OF_POLICY = {
    "taint-toleration": "TaintToleration",
    "node-affinity": "NodeAffinity",
    "node-resources-fit": "NodeResourcesFit",
    "pod-topology-spread": "PodTopologySpread",
    "inter-pod-affinity": "InterPodAffinity",
    "node-resources-balanced-allocation": "NodeResourcesBalancedAllocation",
    "image-locality": "ImageLocality",
}


def state_before(scenario: Scenario, kube: Sequence[Outcome], index: int) -> list[Object]:
    """The objects of the cluster kube scheduled pending pod ``index`` in."""
    gone = {victim for outcome in kube[:index] for victim in outcome.victims}
    objects: list[Object] = [started(o) if o["kind"] == POD else o for o in scenario.objects]
    bindings: dict[str, str] = {}
    selected: dict[str, str] = {}
    for i, (pod, outcome) in enumerate(zip(scenario.pending[:index], kube[:index],
                                           strict=True)):
        bindings.update(outcome.bindings)
        selected.update(outcome.selected)
        if outcome.node and not outcome.note and not outcome.waiting:
            placed = started(pod, outcome.start_time or pending_start(i))
            placed["spec"]["nodeName"] = outcome.node
            objects.append(placed)
    objects = [o for o in objects if o["kind"] != POD or pod_key(o) not in gone]
    if bindings or selected:
        objects = with_storage_decisions(objects, bindings, selected)
    return [*objects, scenario.pending[index]]


@dataclass
class _Observed:
    """The scores of the cycle that bound one pod: the totals, and their parts by kube's
    plugin names; and the preemption candidates tied with the first nomination (node →
    victims)."""

    key: str
    scores: dict[str, int] | None = None
    plugin_scores: dict[str, dict[str, int]] | None = None
    tied: dict[str, tuple[str, ...]] | None = None

    def __call__(self, scheduler: Scheduler, fwk: Framework, state: CycleState, snapshot: object,
                 decision: Decision) -> None:
        if state.pod.key != self.key:
            return
        if decision.node is not None:
            self.scores = {n: round(s) for n, s in decision.scores.items()}
            self.plugin_scores = {n: {PLUGIN_OF_POLICY.get(p, p): s for p, s in parts.items()}
                                  for n, parts in decision.policy_scores.items()}
        elif decision.tied and self.tied is None:
            self.tied = {c.node: tuple(sorted(v.key for v in c.victims)) for c in decision.tied}


class Replay:
    """policysched's engine with the built-in configuration, loaded once."""

    def __init__(self, engine: Engine | None = None) -> None:
        self.engine = engine if engine is not None else load_engine([], None)

    def decide(self, objects: list[Object], header: Sequence[str] = (),
               before: Sequence[Object] | None = None) -> Outcome:
        """Our outcome for the last pending pod of ``objects``; its claims bound or
        selected relative to those of ``before`` (the scenario's objects; default:
        ``objects``)."""
        key = pod_key(objects[-1])
        try:
            parsed = parse_cluster(cluster_text(objects, header), key)
        except ClusterFileError as e:
            return Outcome(key, note=f"cluster file refused: {e}")
        observed = _Observed(key)
        result = simulate(parsed, self.engine.frameworks, self.engine.settings,
                          float(start_time(parsed)), on_decision=observed)
        outcome = result.pod(key)
        message = next((e.message for e in result.backend.events
                        if e.pod == key and e.reason == FAILED_SCHEDULING), None)
        if outcome is None:
            return Outcome(key, note="not in the simulation's outcomes")
        node = outcome.node
        bindings, selected = volume_decisions(
            objects[-1], objects if before is None else before,
            lambda namespace, name: result.backend.get(PVC, name, namespace))
        return Outcome(key, node, message, outcome.nominated_node, tuple(sorted(outcome.victims)),
                       observed.scores or {} if node else {},
                       observed.plugin_scores or {} if node else {}, tied=observed.tied or {},
                       bindings=bindings, selected=selected)

    def scenario(self, scenario: Scenario, kube: Sequence[Outcome]) -> list[Outcome]:
        """Our outcome of each of kube's decisions (a decision kube could not make is
        copied, not replayed)."""
        ours = []
        for i, theirs in enumerate(kube):
            if theirs.note:
                ours.append(Outcome(theirs.pod, note="not replayed: " + theirs.note))
            else:
                ours.append(self.decide(state_before(scenario, kube, i),
                                        before=scenario.objects))
        return ours
