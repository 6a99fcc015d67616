"""One decision compared: kube's outcome and ours, aspect by aspect.

* feasibility — the first attempt found a node on both sides, or on neither;
* message — the first FailedScheduling message is the same text (or absent on both);
* node — the same node, or (kube chooses at random among equal top scores) ours is in
  kube's top-score set; both unbound agrees too;
* victims — the same nominated node and the same victims, or a tied nomination;
* volumes — the same claims bound, each to the same PersistentVolume, and the same claims
  given a selected node for provisioning (the pod's node on each side, so the node aspect
  judges it). Another volume of the same capacity agrees too: kube's FindMatchingVolume
  takes the first smallest match of an unordered index listing, so among equal ones it
  picks at random. Where the two sides put the pod on different nodes (a tie kube broke
  elsewhere) the volumes that fit may differ: then only the claims are compared, not
  their volumes. A pod kube left waiting for provisioning has its selected nodes recorded,
  not its bindings: only those are compared.

A nomination is *tied* when kube nominated another node than ours but one our preemption
ranks exactly as good as ours (equal budget violations, highest victim priority, sum of
victim priorities, victim count and earliest start among the highest-priority victims:
kube-scheduler picks any of those) and evicted there exactly the victims we would; then
each side's node agrees too when each bound its pod to its own nominated node.

``scores`` (our per-node totals equal kube's) is reported, not required; where they differ,
``plugins_scored_differently`` says which plugins' parts do. A difference has a
``kind`` that says what differs (the message reasons whose counts differ, ...), so that the
report groups decisions that differ alike.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from policysched.cel.library.quantity import quantity_int

from .outcome import Outcome
from .scenario import PV, Scenario

ASPECTS = ("feasibility", "message", "node", "victims", "volumes")
DRA_POSTFILTER = "no new claims to deallocate, "


@dataclass(frozen=True)
class Comparison:
    scenario: Scenario
    index: int  # of the pending pod
    kube: Outcome
    ours: Outcome
    features: frozenset[str]

    @property
    def id(self) -> str:
        """``<scenario>/<namespace>/<pod>``: names the decision in reports and lists."""
        return f"{self.scenario.id}/{self.kube.pod}"

    @property
    def compared(self) -> bool:
        """Both sides made the decision (no refusal, time-out or replay failure)."""
        return not self.kube.note and not self.ours.note

    def agrees(self, aspect: str) -> bool:
        kube, ours = self.kube, self.ours
        if aspect == "feasibility":
            return kube.feasible == ours.feasible
        if aspect == "message":
            return kube.message == ours.message
        if aspect == "node":
            return (ours.node == kube.node
                    or (ours.node is not None and ours.node in kube.top_nodes())
                    or (self.nomination_tied and kube.node == kube.nominated
                        and ours.node == ours.nominated))
        if aspect == "victims":
            return ((kube.nominated == ours.nominated and kube.victims == ours.victims)
                    or self.nomination_tied)
        if aspect == "volumes":
            return not self.volume_differences
        raise ValueError(aspect)

    @property
    def volume_differences(self) -> list[str]:
        """What differs in the claims each side bound or provisioned (empty: agree), one
        phrase each."""
        kube, ours = self.kube, self.ours
        found = []
        if kube.selected.keys() != ours.selected.keys():
            found.append("provisioned claims differ")
        if not kube.waiting:
            if kube.bindings.keys() != ours.bindings.keys():
                found.append("bound claims differ")
            elif kube.node == ours.node and not all(
                    self._same_or_tied(v, ours.bindings[c]) for c, v in kube.bindings.items()):
                found.append("other PersistentVolume chosen")
        return found

    def _same_or_tied(self, kube: str, ours: str) -> bool:
        """The same volume, or two of the scenario's with the same capacity."""
        if kube == ours:
            return True
        capacity = {o["metadata"]["name"]: (o.get("spec") or {}).get("capacity", {}).get("storage")
                    for o in self.scenario.objects if o["kind"] == PV}
        a, b = capacity.get(kube), capacity.get(ours)
        return a is not None and b is not None and quantity_int(a) == quantity_int(b)

    @property
    def nomination_tied(self) -> bool:
        """kube nominated another of our equally ranked candidates, with the victims we
        would evict there."""
        kube, ours = self.kube, self.ours
        return (kube.nominated is not None and kube.nominated != ours.nominated
                and kube.nominated in ours.tied and kube.victims == ours.tied[kube.nominated])

    def applies(self, aspect: str) -> bool:
        """Whether the aspect says anything about this decision: a message where either
        side failed, a node where either bound, victims where either preempted."""
        kube, ours = self.kube, self.ours
        if aspect == "message":
            return kube.message is not None or ours.message is not None
        if aspect == "node":
            return kube.node is not None or ours.node is not None
        if aspect == "victims":
            return bool(kube.nominated or ours.nominated or kube.victims or ours.victims)
        if aspect == "volumes":
            return bool(kube.bindings or kube.selected or ours.bindings or ours.selected)
        return True

    @property
    def differences(self) -> tuple[str, ...]:
        return tuple(a for a in ASPECTS if self.compared and not self.agrees(a))

    @property
    def scores_equal(self) -> bool:
        return self.kube.scores == self.ours.scores

    @property
    def scores_differ(self) -> bool:
        """Both sides made the decision, kube scored nodes, and some total differs, or some
        plugin's part (equal totals can hide a plugin that scores where kube's skips)."""
        return self.compared and bool(self.kube.scores) and (
            not self.scores_equal
            or (bool(self.kube.plugin_scores) and bool(self.plugins_scored_differently)))

    @property
    def plugins_scored_differently(self) -> list[str]:
        """The plugins whose weighted score differs on some node (a plugin only one side
        ran counts), sorted."""
        kube, ours = self.kube.plugin_scores, self.ours.plugin_scores
        return sorted({plugin for node in kube.keys() | ours.keys()
                       for plugin in kube.get(node, {}).keys() | ours.get(node, {}).keys()
                       if kube.get(node, {}).get(plugin) != ours.get(node, {}).get(plugin)})

    @property
    def kind(self) -> str:
        """What explains the difference (empty when there is none): the ``causes``, or for
        what they do not explain, what differs."""
        return " + ".join(self.causes)

    @property
    def causes(self) -> list[str]:
        kube, ours = self.kube, self.ours
        found = []
        if "feasibility" in self.differences:
            side = "kube" if not kube.feasible else "ours"
            failed = kube if side == "kube" else ours
            reasons = sorted(_reasons(failed.message or "")[0]) or [failed.message or "-"]
            if side == "kube" and PORTS in reasons and _has_sidecar_ports(self):
                found.append("NodePorts: kube counts sidecars' host ports (only kube "
                             "unschedulable)")
            else:
                found.append(f"only {side} unschedulable: {'; '.join(reasons)}")
        elif "message" in self.differences:
            found += message_causes(self, kube.message or "", ours.message or "")
        follows_nomination = (kube.nominated != ours.nominated and kube.node == kube.nominated
                              and ours.node == ours.nominated)
        if ("node" in self.differences and "feasibility" not in self.differences
                and not follows_nomination):
            found.append("node outside kube's top scores"
                         + ("" if self.scores_equal else " (scores differ)"))
        if "victims" in self.differences:
            if kube.nominated == ours.nominated:
                found.append("preemption: other victims")
            elif not (kube.nominated and ours.nominated):
                found.append(f"preemption: only {'kube' if kube.nominated else 'ours'} "
                             "nominates")
            elif kube.nominated in ours.tied:
                found.append("preemption: other victims on a node tied with ours")
            else:
                found.append("preemption: other nominated node")
        if "volumes" in self.differences and "feasibility" not in self.differences:
            found += [f"VolumeBinding: {d}" for d in self.volume_differences]
        return found


REASONS = re.compile(r"^0/\d+ nodes are available: (.*?)\.(?: (?:no new claims to deallocate, )?"
                     r"preemption: (.*))?$")
COUNTED = re.compile(r"^(\d+) (.*)$")


def _histogram(text: str) -> Counter[str]:
    """``1 Insufficient cpu, 2 Too many pods`` → reason → count."""
    counts: Counter[str] = Counter()
    for part in re.split(r", (?=\d+ )", text.rstrip(".")):
        found = COUNTED.match(part)
        if found is None:
            counts[part] += 1
        else:
            counts[found.group(2)] += int(found.group(1))
    return counts


def _reasons(message: str) -> tuple[Counter[str], Counter[str]]:
    """The filter reasons and the preemption reasons of a FailedScheduling message."""
    found = REASONS.match(message)
    if found is None:
        return Counter({message: 1}) if message else Counter(), Counter()
    preemption = found.group(2) or ""
    inner = REASONS.match(preemption)
    return _histogram(found.group(1)), (_histogram(inner.group(1)) if inner
                                        else Counter({preemption: 1}) if preemption
                                        else Counter())


RESOURCE_REASON = re.compile(r"^(Insufficient .*|Too many pods)$")
NODE_AFFINITY_PREFILTER = ("node(s) didn't satisfy plugin(s) [NodeAffinity]",
                           "pod affinity terms conflict")
PORTS = "node(s) didn't have free ports for the requested pod ports"
NO_VICTIMS = "No preemption victims found for incoming pod"


def _has_sidecar_ports(c: Comparison) -> bool:
    return any(p.get("hostPort") for pod in (*c.scenario.bound_pods, *c.scenario.pending)
               for ctr in pod["spec"].get("initContainers", [])
               if ctr.get("restartPolicy") == "Always" for p in ctr.get("ports", []))


def message_causes(c: Comparison, kube: str, ours: str) -> list[str]:
    """What explains the difference of two FailedScheduling messages, known causes first."""
    found = []
    if DRA_POSTFILTER in kube and DRA_POSTFILTER not in ours:
        found.append("DynamicResources PostFilter reason missing")
    (kube_filter, kube_pre), (our_filter, our_pre) = _reasons(kube), _reasons(ours)
    differing = {r for r in kube_filter.keys() | our_filter.keys()
                 if kube_filter[r] != our_filter[r]}
    if any(kube_filter[r] > our_filter[r] for r in differing
           if any(r.startswith(p) or p in r for p in NODE_AFFINITY_PREFILTER)):
        # nodes kube's PreFilter excludes report nothing else: other reasons follow
        found.append("NodeAffinity PreFilter narrowing (didn't satisfy plugin(s) [NodeAffinity])")
        differing = set()
    if PORTS in differing and kube_filter[PORTS] > our_filter[PORTS]:
        found.append("NodePorts: kube finds more port conflicts"
                     + (" (sidecar host ports)" if _has_sidecar_ports(c) else ""))
        # kube stops at NodePorts on those nodes: the later filters' reasons, and what
        # preemption says of them, follow
        differing, kube_pre, our_pre = set(), Counter(), Counter()
    resources = {r for r in differing if RESOURCE_REASON.match(r)}
    if resources:
        if sum(kube_filter[r] for r in resources) > sum(our_filter[r] for r in resources):
            found.append("NodeResourcesFit: kube lists every insufficient resource")
        else:
            found.append("NodeResourcesFit reasons differ: " + "; ".join(sorted(resources)))
        differing -= resources
    if differing:
        found.append("filter reasons differ: " + "; ".join(sorted(differing)))
    pre = {r for r in kube_pre.keys() | our_pre.keys() if kube_pre[r] != our_pre[r]}
    if pre:
        if our_pre[NO_VICTIMS] > kube_pre[NO_VICTIMS]:
            found.append("preemption: kube reports the filter's reason where we say "
                         "No preemption victims found")
        else:
            found.append("preemption reasons differ: " + "; ".join(sorted(pre)))
    if not found:
        found.append("message text differs")
    return found
