"""What one scheduling decision came to, on either side: the pod's node (``None``: not
bound), the first FailedScheduling message, the node preemption nominated, the victims it
deleted, and the final score of each scored node (empty when fewer than two nodes were
feasible: kube-scheduler then scores nothing). kube's side also has the bound pod's
``status.startTime`` (what later decisions' preemption ranks it by); ours, the preemption
candidates as good as the nominated one (kube-scheduler nominates any of them).

Storage, either side: the claims its decision bound (claim → PersistentVolume, the PV
controller completing what VolumeBinding's preBind wrote) and the claims it gave a
``volume.kubernetes.io/selected-node`` (claim → node: a class with a provisioner, which no
one runs on kube's side); on kube's side a pod whose claims wait for provisioning is
``waiting``: its ``node`` is the selected node, never bound (the oracle deleted it), so
later decisions do not see it, and its ``bindings`` are not read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Outcome:
    pod: str  # namespace/name
    node: str | None = None
    message: str | None = None  # the first FailedScheduling message
    nominated: str | None = None
    victims: tuple[str, ...] = ()  # namespace/name, sorted
    scores: dict[str, int] = field(default_factory=dict)
    # each scored node's weighted score per plugin (kube: from its V(10) log; ours: per
    # policy, named as the plugin it reproduces)
    plugin_scores: dict[str, dict[str, int]] = field(default_factory=dict)
    # the decision could not be made: the API server refused the pod (kube), the oracle
    # timed out, or the replay failed; such a decision is not compared
    note: str = ""
    start_time: str | None = None  # kube only: the bound pod's status.startTime
    # ours only: node → victims (namespace/name, sorted) of each preemption candidate as
    # good as the nominated one on every criterion (the nominated one included)
    tied: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # claim (namespace/name) → the PersistentVolume the decision bound it to (ours: not
    # the claims our in-process cluster provisioned, which are in ``selected``)
    bindings: dict[str, str] = field(default_factory=dict)
    # claim → the node the decision wrote as its selected-node annotation
    selected: dict[str, str] = field(default_factory=dict)
    waiting: bool = False  # kube only: chose ``node``, waited for provisioning, not bound

    @property
    def feasible(self) -> bool:
        """The first attempt found a node (no FailedScheduling message)."""
        return self.message is None and self.node is not None

    def top_nodes(self) -> set[str]:
        """The nodes with the highest score (where a random choice picks one of)."""
        if not self.scores:
            return {self.node} if self.node else set()
        best = max(self.scores.values())
        return {n for n, s in self.scores.items() if s == best}

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pod": self.pod, "node": self.node, "message": self.message}
        if self.nominated:
            out["nominated"] = self.nominated
        if self.victims:
            out["victims"] = list(self.victims)
        if self.scores:
            out["scores"] = dict(sorted(self.scores.items()))
        if self.plugin_scores:
            out["pluginScores"] = {n: dict(sorted(p.items()))
                                   for n, p in sorted(self.plugin_scores.items())}
        if self.note:
            out["note"] = self.note
        if self.start_time:
            out["startTime"] = self.start_time
        if self.tied:
            out["tied"] = {n: list(v) for n, v in sorted(self.tied.items())}
        if self.bindings:
            out["bindings"] = dict(sorted(self.bindings.items()))
        if self.selected:
            out["selected"] = dict(sorted(self.selected.items()))
        if self.waiting:
            out["waiting"] = True
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        return cls(data["pod"], data.get("node"), data.get("message"), data.get("nominated"),
                   tuple(data.get("victims", ())), dict(data.get("scores", {})),
                   dict(data.get("pluginScores", {})), data.get("note", ""),
                   data.get("startTime"),
                   {n: tuple(v) for n, v in data.get("tied", {}).items()},
                   dict(data.get("bindings", {})), dict(data.get("selected", {})),
                   bool(data.get("waiting", False)))
