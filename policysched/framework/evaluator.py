"""Filter and score over the nodes: an evaluation tier is a strategy
(docs/architecture.md#evaluation-tiers).

The scheduling cycle calls one ``Evaluator``: ``find_feasible`` — the filters, over the
candidate nodes in kube-scheduler's round-robin order until ``wanted`` are feasible
(numFeasibleNodesToFind), a node with pods nominated to it passing only with and without
them (``filter_with_nominated``) — and ``score``.
``ScalarEvaluator`` (tier 1) runs each rule's closure node by node and stops as soon as
enough nodes are feasible; ``vectorised.NodeEvaluator`` (tiers 2-4) evaluates every node at
once and picks the same nodes. Both give every node the same status and score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..cache.cache import Snapshot
from ..cache.node_info import NodeInfo
from ..model.objects import PodInfo
from ..policy.model import ExtensionPoint, FilterRule
from .runtime import CycleState, Framework
from .status import Code, Status

NO_ROWS = np.zeros(0, np.int64)
Nominated = Mapping[str, list[PodInfo]]  # node -> pods nominated to it (counted there)


@dataclass(frozen=True)
class Feasible:
    """What the filters found: the feasible rows (at most ``wanted``, in the order met),
    how many candidates were examined, or the Error that ended the search."""

    rows: np.ndarray
    processed: int
    failure: Status | None = None


class Evaluator(Protocol):
    def find_feasible(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
                      order: np.ndarray, wanted: int, nominated: Nominated,
                      statuses: dict[str, Status]) -> Feasible:
        """Filter the snapshot rows ``order`` in that order until ``wanted`` are feasible;
        the statuses of rejected nodes go to ``statuses`` (all of them when none fits)."""
        ...

    def score(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
              rows: np.ndarray) -> tuple[Status, np.ndarray, dict[str, np.ndarray]]:
        """The total weighted score of the nodes ``rows`` (in that order), and each
        score policy's part of it (policy name → weighted score per node; a policy
        preScore skipped has none)."""
        ...

    def reset(self) -> None:
        """The profiles changed: forget what was kept for them."""
        ...


class ScalarEvaluator:
    """Tier 1: one closure call per node and rule."""

    def find_feasible(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
                      order: np.ndarray, wanted: int, nominated: Nominated,
                      statuses: dict[str, Status]) -> Feasible:
        plan = fwk.filter_plan(state)
        feasible: list[int] = []
        processed = 0
        for row in order.tolist():
            node = snapshot.nodes[row]
            processed += 1
            status = filter_with_nominated(fwk, state, node, nominated.get(node.name), plan)
            if status.is_success:
                feasible.append(row)
                if len(feasible) >= wanted:
                    break
            elif status.code is Code.ERROR:
                return Feasible(NO_ROWS, processed, status)
            else:
                statuses[node.name] = status
        return Feasible(np.array(feasible, np.int64), processed)

    def score(self, fwk: Framework, state: CycleState, snapshot: Snapshot,
              rows: np.ndarray) -> tuple[Status, np.ndarray, dict[str, np.ndarray]]:
        status, totals, detail = fwk.run_score(state, [snapshot.nodes[r] for r in rows.tolist()])
        parts: dict[str, np.ndarray] = {}
        for instance, rule in fwk.rules(ExtensionPoint.SCORE):
            found = detail.get(rule.qualified_name)
            if found is not None:
                weighted = np.array([w for _, _, w in found], np.int64)
                parts[instance.name] = parts.get(instance.name, 0) + weighted
        return status, np.array(totals, np.int64), parts

    def reset(self) -> None:
        pass


def filter_with_nominated(fwk: Framework, state: CycleState, node: NodeInfo,
                          nominated: Sequence[PodInfo] | None,
                          plan: list[tuple[FilterRule, dict[str, Any]]] | None = None) -> Status:
    """kube-scheduler's RunFilterPluginsWithNominatedPods: the filters on ``node`` with the
    pods ``nominated`` to it (those of at least the pod's priority) counted there and, when
    they pass, again without them (a pod may need a nominated pod not to be there, as an
    affinity to a pod that may go elsewhere); the first failure, else Success."""
    if nominated:
        snapshot = state.cluster.snapshot if state.cluster is not None else None
        status = fwk.run_filter(state, with_pods(node, nominated, snapshot), plan=plan)
        if not status.is_success:
            return status
    return fwk.run_filter(state, node, plan=plan)


def with_pods(node: NodeInfo, pods: Sequence[PodInfo], snapshot: Snapshot | None = None
              ) -> NodeInfo:
    """A copy of ``node`` with ``pods`` counted on it as well, with their volumes as
    ``snapshot`` has them (their CSI volumes, inline disks and claims count there)."""
    copy = node.clone()
    for pod in pods:
        volumes = snapshot.pod_volumes(pod.key) if snapshot is not None else ()
        if volumes:
            assert snapshot is not None
            copy.add_pod(pod, snapshot.storage.attached_csi_volumes(pod.namespace, volumes),
                         volumes)
        else:
            copy.add_pod(pod)
    return copy
