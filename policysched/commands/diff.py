"""``policysched diff``: one cluster file simulated with two policy sets (or two
configurations), and what differs — through ``simulate``, run once per side.

The differences are about the pods pending in the file: placed on other nodes, bound on
one side only (the other side's FailedScheduling text says why), unschedulable on both
with other reasons, and running pods evicted by preemption on one side only. Each side also
gets a utilisation summary of the cluster at the end of its run: how full each node is (cpu
and memory requested over allocatable, as NodeResourcesFit counts them) and how the pods
spread over the zones (``topology.kubernetes.io/zone``).
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cache.node_info import NodeInfo
from ..framework.profiles import Engine
from ..model.resources import CPU, MEMORY
from . import messages
from .simulate import PodOutcome, ProgressCallback, Simulation, simulate
from .tables import render_table

ZONE_LABEL = "topology.kubernetes.io/zone"
NO_ZONE = "<none>"  # nodes without the zone label
SIDES = ("a", "b")
QUANTILES = (("min", 0.0), ("p50", 0.5), ("p90", 0.9), ("max", 1.0))


@dataclass(frozen=True)
class NodeFill:
    """One node at the end of a run: its zone, the share of its allocatable cpu and memory
    that pods request (None when it has none), and its pods."""

    node: str
    zone: str
    cpu: float | None
    memory: float | None
    pods: int

    def as_json(self) -> dict[str, Any]:
        return {"node": self.node, "zone": self.zone, "cpu": self.cpu, "memory": self.memory,
                "pods": self.pods}


@dataclass(frozen=True)
class ZoneCount:
    """The pods on one zone's nodes at the end of a run, and how many of them the run
    placed."""

    zone: str
    pods: int
    placed: int


@dataclass(frozen=True)
class Utilisation:
    """One side's cluster at the end of its run."""

    bound: int  # pending pods the run bound
    pending: int  # pending pods at the start
    nodes: tuple[NodeFill, ...]
    zones: tuple[ZoneCount, ...]

    def fill(self, resource: str) -> dict[str, float]:
        """The distribution of the nodes' fill of ``resource`` ("cpu" or "memory"):
        min, p50, p90, max and mean (empty when no node has any allocatable)."""
        values = sorted(v for v in (getattr(n, resource) for n in self.nodes) if v is not None)
        if not values:
            return {}
        found = {name: values[round(q * (len(values) - 1))] for name, q in QUANTILES}
        found["mean"] = statistics.fmean(values)
        return found

    @property
    def zone_spread(self) -> int:
        """The most pods in a zone minus the fewest (0 with fewer than two zones)."""
        counts = [z.pods for z in self.zones]
        return max(counts) - min(counts) if len(counts) > 1 else 0

    def as_json(self) -> dict[str, Any]:
        return {"bound": self.bound, "pending": self.pending,
                "fill": {CPU: self.fill(CPU), MEMORY: self.fill(MEMORY)},
                "zones": {z.zone: {"pods": z.pods, "placed": z.placed} for z in self.zones},
                "zoneSpread": self.zone_spread,
                "nodes": [n.as_json() for n in self.nodes]}


@dataclass(frozen=True)
class PodChange:
    """A pending pod that ended differently: its node on each side (None: unscheduled)
    and each side's FailedScheduling text when it was not bound."""

    pod: str  # namespace/name
    node_a: str | None
    node_b: str | None
    message_a: str | None = None
    message_b: str | None = None

    def as_json(self) -> dict[str, Any]:
        namespace, name = self.pod.split("/", 1)
        return {"namespace": namespace, "name": name,
                "a": {"node": self.node_a, "message": self.message_a},
                "b": {"node": self.node_b, "message": self.message_b}}


@dataclass(frozen=True)
class Comparison:
    """Two runs of one cluster and what differs between them."""

    moved: tuple[PodChange, ...]  # bound on both sides, to other nodes
    unschedulable_a: tuple[PodChange, ...]  # unscheduled with A, bound with B
    unschedulable_b: tuple[PodChange, ...]  # bound with A, unscheduled with B
    reasons: tuple[PodChange, ...]  # unscheduled on both, other messages
    evicted_a: tuple[str, ...]  # pods only A's preemptions evicted
    evicted_b: tuple[str, ...]
    utilisation: Mapping[str, Utilisation]  # "a", "b"

    @property
    def identical(self) -> bool:
        return not (self.moved or self.unschedulable_a or self.unschedulable_b
                    or self.reasons or self.evicted_a or self.evicted_b)

    def as_json(self) -> dict[str, Any]:
        return {"identical": self.identical,
                "placedDifferently": [c.as_json() for c in self.moved],
                "unschedulableOnlyA": [c.as_json() for c in self.unschedulable_a],
                "unschedulableOnlyB": [c.as_json() for c in self.unschedulable_b],
                "otherReasons": [c.as_json() for c in self.reasons],
                "evictedOnlyA": list(self.evicted_a), "evictedOnlyB": list(self.evicted_b),
                "utilisation": {s: u.as_json() for s, u in self.utilisation.items()}}


def compare(objects: Sequence[Mapping[str, Any]], a: Engine, b: Engine, start: float,
            on_progress: Callable[[str], ProgressCallback | None] | None = None
            ) -> Comparison:
    """Simulate ``objects`` with each engine from ``start`` and compare the runs;
    ``on_progress(side)`` gives the progress callback of side "a" or "b"."""
    runs = {}
    for side, engine in zip(SIDES, (a, b), strict=True):
        callback = on_progress(side) if on_progress is not None else None
        runs[side] = simulate(copy.deepcopy(list(objects)), engine.frameworks,
                              engine.settings, start, on_progress=callback)
    return comparison(runs["a"], runs["b"])


def comparison(run_a: Simulation, run_b: Simulation) -> Comparison:
    """What differs between two runs of the same cluster."""
    moved, only_a, only_b, reasons = [], [], [], []
    outcomes_b = {_key(p): p for p in run_b.pods}
    for pod_a in run_a.pods:
        pod_b = outcomes_b.get(_key(pod_a))
        if pod_b is None:
            continue
        change = PodChange(_key(pod_a), pod_a.node, pod_b.node, pod_a.message, pod_b.message)
        if pod_a.node and pod_b.node:
            if pod_a.node != pod_b.node:
                moved.append(PodChange(change.pod, pod_a.node, pod_b.node))
        elif pod_b.node:
            only_a.append(change)
        elif pod_a.node:
            only_b.append(change)
        elif pod_a.message != pod_b.message:
            reasons.append(change)
    victims_a, victims_b = _victims(run_a), _victims(run_b)
    return Comparison(tuple(moved), tuple(only_a), tuple(only_b), tuple(reasons),
                      tuple(sorted(victims_a - victims_b)),
                      tuple(sorted(victims_b - victims_a)),
                      {"a": utilisation(run_a), "b": utilisation(run_b)})


def _key(pod: PodOutcome) -> str:
    return f"{pod.namespace}/{pod.name}"


def _victims(run: Simulation) -> set[str]:
    return {victim for pod in run.pods for victim in pod.victims}


def utilisation(run: Simulation) -> Utilisation:
    """The cluster at the end of ``run``: node fill and pods per zone."""
    placed = {_key(p) for p in run.pods if p.node}
    nodes: list[NodeFill] = []
    zones: dict[str, int] = {}
    placed_in: dict[str, int] = {}
    for info in run.scheduler.cache.nodes():
        fill = node_fill(info)
        zone = fill.zone
        nodes.append(fill)
        zones[zone] = zones.get(zone, 0) + info.pod_count
        placed_in[zone] = placed_in.get(zone, 0) + sum(1 for key in info.pods if key in placed)
    return Utilisation(len(placed), len(run.pods), tuple(nodes),
                       tuple(ZoneCount(z, zones[z], placed_in[z]) for z in sorted(zones)))


def node_fill(info: NodeInfo) -> NodeFill:
    """How full ``info`` is: its zone, cpu and memory requested over allocatable, pods."""
    return NodeFill(info.name, info.view["labels"].get(ZONE_LABEL, NO_ZONE),
                    _share(info.requested, info.allocatable, CPU),
                    _share(info.requested, info.allocatable, MEMORY), info.pod_count)


def _share(requested: Mapping[str, int], allocatable: Mapping[str, int],
           resource: str) -> float | None:
    total = allocatable.get(resource, 0)
    return requested.get(resource, 0) / total if total > 0 else None


# -- the text report -----------------------------------------------------------------------


def render_text(result: Comparison, label_a: str, label_b: str) -> str:
    """The report for people: the two sides, each kind of difference as a table, then
    the utilisation of each side side by side."""
    parts = [f"A: {label_a}\nB: {label_b}", summary(result)]
    if result.moved:
        rows = [("POD", "NODE (A)", "NODE (B)")]
        rows += [(c.pod, c.node_a or "", c.node_b or "") for c in result.moved]
        parts.append(messages.DIFF_MOVED.format(count=len(result.moved)) + "\n"
                     + render_table(rows))
    for title, changes, side in ((messages.DIFF_ONLY_A, result.unschedulable_a, "a"),
                                 (messages.DIFF_ONLY_B, result.unschedulable_b, "b")):
        if changes:
            other = "A" if side == "b" else "B"
            rows = [("POD", f"NODE ({other})", f"MESSAGE ({side.upper()})")]
            rows += [(c.pod, (c.node_a if side == "b" else c.node_b) or "",
                      (c.message_b if side == "b" else c.message_a) or "") for c in changes]
            parts.append(title.format(count=len(changes)) + "\n" + render_table(rows))
    if result.reasons:
        lines = [messages.DIFF_REASONS.format(count=len(result.reasons))]
        for c in result.reasons:
            lines += [f"  {c.pod}", f"    A: {c.message_a}", f"    B: {c.message_b}"]
        parts.append("\n".join(lines))
    for title, evicted in ((messages.DIFF_EVICTED_A, result.evicted_a),
                           (messages.DIFF_EVICTED_B, result.evicted_b)):
        if evicted:
            parts.append(title.format(count=len(evicted)) + "\n"
                         + "\n".join(f"  {key}" for key in evicted))
    parts.append(_utilisation_table(result.utilisation["a"], result.utilisation["b"]))
    return "\n\n".join(parts)


def summary(result: Comparison) -> str:
    """One line: identical, or how many pods differ in each way."""
    if result.identical:
        return messages.DIFF_IDENTICAL
    counts = [(len(result.moved), messages.DIFF_COUNT_MOVED),
              (len(result.unschedulable_a), messages.DIFF_COUNT_ONLY_A),
              (len(result.unschedulable_b), messages.DIFF_COUNT_ONLY_B),
              (len(result.reasons), messages.DIFF_COUNT_REASONS),
              (len(result.evicted_a) + len(result.evicted_b), messages.DIFF_COUNT_EVICTED)]
    return messages.DIFF_DIFFERENT.format(
        counts=", ".join(f"{n} {what}" for n, what in counts if n))


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _fill_cell(utilisation: Utilisation, resource: str) -> str:
    fill = utilisation.fill(resource)
    if not fill:
        return "-"
    return " ".join(_percent(fill[name]) for name, _ in QUANTILES)


def _utilisation_table(a: Utilisation, b: Utilisation) -> str:
    rows: list[tuple[str, str, str]] = [(messages.DIFF_UTILISATION, "A", "B")]
    rows.append((messages.DIFF_BOUND, f"{a.bound}/{a.pending}", f"{b.bound}/{b.pending}"))
    for resource in (CPU, MEMORY):
        rows.append((messages.DIFF_FILL.format(resource=resource), _fill_cell(a, resource),
                     _fill_cell(b, resource)))
    zones_a = {z.zone: z for z in a.zones}
    zones_b = {z.zone: z for z in b.zones}
    for zone in sorted(zones_a.keys() | zones_b.keys()):
        rows.append((messages.DIFF_ZONE.format(zone=zone), _zone_cell(zones_a.get(zone)),
                     _zone_cell(zones_b.get(zone))))
    rows.append((messages.DIFF_ZONE_SPREAD, str(a.zone_spread), str(b.zone_spread)))
    return render_table(rows)


def _zone_cell(zone: ZoneCount | None) -> str:
    return "0" if zone is None else messages.DIFF_ZONE_CELL.format(pods=zone.pods,
                                                                   placed=zone.placed)
