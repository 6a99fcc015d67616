"""kube-scheduler's node resource scores as CEL functions (pkg/scheduler/framework/plugins/
noderesources, resource_allocation.go and its scorers), so that a scoring strategy is one
call instead of a page of integer arithmetic:

* ``leastAllocated(allocatable, requested, podRequests, resources) -> int`` — NodeResourcesFit's
  LeastAllocated: per resource ``(allocatable - requested) * 100 / allocatable`` (0 when the
  node is full), then the weighted mean;
* ``mostAllocated(...)`` — MostAllocated: ``requested * 100 / allocatable``, requested capped
  at allocatable, then the weighted mean;
* ``balancedAllocation(...)`` — NodeResourcesBalancedAllocation: the fractions ``requested /
  allocatable`` (capped at 1) in double precision, ``int((1 - std) * 100)`` where std is
  ``|f1 - f2| / 2`` for two fractions, the standard deviation for more, 0 for fewer.

``allocatable`` and ``requested`` are the node's amounts, ``podRequests`` the pod's (each a
``map(string, int)``, cpu in millicores; requested is the node's plus the pod's);
``resources`` lists the scored resources as kube's ``ResourceSpec``s, ``[{'name': 'cpu',
'weight': 1}, ...]`` (a weight 0 or absent is 1, as kube defaults it; else 1..100). As
kube's ``calculateResourceAllocatableRequest`` a resource is skipped on a node where its
allocatable is 0, an extended resource (``IsScalarResourceName``) when the pod does not
request it, and a name kube does not count (``pods``, a bare unknown name) always.

The arithmetic is kube's but exact: kube-scheduler's int64 products overflow beyond ~92 PB
of memory (see policies/node-resources-fit.yaml). Each function has a ``columns``
implementation for the vectorised tier: one array operation per resource over all nodes,
the node's amounts read once per distinct map (``cel.vector.per_unique``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cel import CelError
from ..cel.library.function import Function, Overload
from ..cel.types import DYN, INT, STRING, map_of
from ..cel.values import INT64_MAX, no_such_overload
from ..cel.vector import FactorisedColumn, NumericColumn, Scalar, Value, per_unique
from ..model.resources import CPU, EPHEMERAL_STORAGE, HUGEPAGES_PREFIX, MEMORY
from ..model.selectors import label_key_errors
from . import messages

MAX_SCORE = 100  # framework.MaxNodeScore
MAX_WEIGHT = 100  # config.MaxResourceWeight
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_NATIVE_NAMESPACE = "kubernetes.io/"
_QUOTA_REQUESTS_PREFIX = "requests."
_SCORE_COST = 10  # a few resources, a few operations each
_INVALID = -1  # an amount that is not a non-negative int (per distinct map)


def is_scalar_resource(name: str) -> bool:
    """kube's ``IsScalarResourceName``: an extended resource (a qualified name outside the
    ``kubernetes.io/`` namespace), ``hugepages-*``, ``attachable-volumes-*`` or a prefixed
    native resource (``*kubernetes.io/*``)."""
    if name.startswith((HUGEPAGES_PREFIX, _ATTACHABLE_VOLUMES_PREFIX)) \
            or _NATIVE_NAMESPACE in name:
        return True
    return ("/" in name and not name.startswith(_QUOTA_REQUESTS_PREFIX)
            and not label_key_errors(_QUOTA_REQUESTS_PREFIX + name))


@dataclass(frozen=True)
class _Spec:
    """One scored resource: its weight, and whether kube counts it only when the pod
    requests it (an extended resource)."""

    name: str
    weight: int
    scalar: bool


def _specs(function: str, resources: Any) -> list[_Spec]:
    """The resources kube scores, from a ``ResourceSpec`` list (those kube never counts
    left out)."""
    if type(resources) is not list:
        raise CelError(messages.RESOURCE_SPECS.format(function=function))
    specs = []
    for spec in resources:
        if type(spec) is not dict or type(spec.get("name")) is not str \
                or type(spec.get("weight", 0)) is not int:
            raise CelError(messages.RESOURCE_SPECS.format(function=function))
        name, weight = spec["name"], spec.get("weight", 0) or 1
        if not 1 <= weight <= MAX_WEIGHT:
            raise CelError(messages.RESOURCE_WEIGHT.format(
                function=function, name=name, weight=weight, limit=MAX_WEIGHT))
        scalar = is_scalar_resource(name)
        if scalar or name in (CPU, MEMORY, EPHEMERAL_STORAGE):
            specs.append(_Spec(name, weight, scalar))
    return specs


def _amount(function: str, amounts: dict[Any, Any], name: str) -> int:
    value = amounts.get(name, 0)
    if type(value) is not int or value < 0:
        raise CelError(messages.RESOURCE_AMOUNT.format(function=function, name=name,
                                                       value=value))
    return value


Scored = list[tuple[int, int, int]]  # per resource scored: weight, allocatable, requested


def _scored(function: str, allocatable: Any, requested: Any, pod_requests: Any,
            resources: Any) -> Scored:
    """Per resource scored on this node: weight, allocatable and requested (the node's
    plus the pod's), as ``calculateResourceAllocatableRequest``."""
    if not (type(allocatable) is dict and type(requested) is dict
            and type(pod_requests) is dict):
        raise no_such_overload(function, allocatable, requested, pod_requests, resources)
    scored = []
    for spec in _specs(function, resources):
        pod = _amount(function, pod_requests, spec.name)
        if spec.scalar and pod == 0:
            continue
        alloc = _amount(function, allocatable, spec.name)
        if alloc:
            scored.append((spec.weight, alloc,
                           _amount(function, requested, spec.name) + pod))
    return scored


def _weighted_mean(scored: Scored, score: Callable[[int, int], int]) -> int:
    total = weights = 0
    for weight, alloc, req in scored:
        total += score(req, alloc) * weight
        weights += weight
    return total // weights if weights else 0


def _least(req: int, alloc: int) -> int:
    return 0 if req > alloc else (alloc - req) * MAX_SCORE // alloc


def _most(req: int, alloc: int) -> int:
    return min(req, alloc) * MAX_SCORE // alloc


def least_allocated(*args: Any) -> int:
    return _weighted_mean(_scored("leastAllocated", *args), _least)


def most_allocated(*args: Any) -> int:
    return _weighted_mean(_scored("mostAllocated", *args), _most)


def balanced_allocation(*args: Any) -> int:
    fractions = [min(float(req) / float(alloc), 1.0)
                 for _, alloc, req in _scored("balancedAllocation", *args)]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for f in fractions:  # in order, as kube's loop adds them (not sum(): Python 3.12
            total += f       # compensates the rounding)
        mean = total / len(fractions)
        deviations = 0.0
        for f in fractions:
            deviations = deviations + (f - mean) * (f - mean)
        std = math.sqrt(deviations / len(fractions))
    return int((1 - std) * MAX_SCORE)


# -- the vectorised tier ------------------------------------------------------------------


def _maps(value: Value, size: int) -> np.ndarray | None:
    """Per node, whether a node-side argument is a map; None when it is a numeric
    column."""
    if isinstance(value, Scalar):
        return np.full(size, type(value.value) is dict)
    if isinstance(value, FactorisedColumn):
        return per_unique(value, "map", lambda m: type(m) is dict, np.bool_)[value.codes]
    return None


def _node_amounts(value: Value, name: str, size: int) -> np.ndarray | None:
    """A node-side map argument's amount of ``name`` per node (``_INVALID`` where it is no
    non-negative int64, or the argument no map); None when it is a numeric column."""
    def amount(m: Any) -> int:
        if type(m) is not dict:
            return _INVALID
        v = m.get(name, 0)
        return v if type(v) is int and 0 <= v <= INT64_MAX else _INVALID

    if isinstance(value, Scalar):
        return np.full(size, amount(value.value), np.int64)
    if isinstance(value, FactorisedColumn):
        return per_unique(value, ("amount", name), amount, np.int64)[value.codes]
    return None  # a numeric column: no maps


Columns = list[tuple[int, np.ndarray, np.ndarray]]  # weight, allocatable, requested


def _vectorised(function: str, score: Callable[[Columns, int, np.ndarray], np.ndarray]
                ) -> Callable[..., NumericColumn | None]:
    """A ``columns`` implementation: ``score(columns, size, err)`` over the resources'
    amounts per node (``err`` flags nodes it cannot compute in int64: those take the
    scalar function)."""
    def columns(size: int, allocatable: Value, requested: Value, pod_requests: Value,
                resources: Value) -> NumericColumn | None:
        if not (isinstance(pod_requests, Scalar) and isinstance(resources, Scalar)
                and type(pod_requests.value) is dict):
            return None
        try:
            specs = _specs(function, resources.value)
            pod = {s.name: _amount(function, pod_requests.value, s.name) for s in specs}
        except CelError:
            return None  # an error on every node: the scalar function says which
        maps = [_maps(value, size) for value in (allocatable, requested)]
        if maps[0] is None or maps[1] is None:
            return None
        err = ~(maps[0] & maps[1])
        found: Columns = []
        for spec in specs:
            if spec.scalar and pod[spec.name] == 0:
                continue
            alloc = _node_amounts(allocatable, spec.name, size)
            used = _node_amounts(requested, spec.name, size)
            assert alloc is not None and used is not None
            # as the scalar function: requested is read where allocatable is not 0
            err |= (alloc == _INVALID) | ((alloc != 0) & (
                (used == _INVALID) | (used > INT64_MAX - pod[spec.name])))
            req = np.where(err, 0, used) + pod[spec.name]
            found.append((spec.weight, np.where(err, 0, alloc), req))
        data = score(found, size, err)
        return NumericColumn(data, err if err.any() else None)

    return columns


def _mean_columns(score: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
                  ) -> Callable[[Columns, int, np.ndarray], np.ndarray]:
    """The weighted mean over the resources of ``score(req, alloc, err)`` per node."""
    def mean(found: Columns, size: int, err: np.ndarray) -> np.ndarray:
        total = np.zeros(size, np.int64)
        weights = np.zeros(size, np.int64)
        for weight, alloc, req in found:
            counted = alloc > 0
            total += np.where(counted, score(req, np.where(counted, alloc, 1), err), 0) * weight
            weights += np.where(counted, weight, 0)
        return np.where(weights > 0, total // np.maximum(weights, 1), 0)

    return mean


_PRODUCT_MAX = INT64_MAX // MAX_SCORE  # beyond, ``x * 100`` leaves int64: the scalar tier


def _least_columns(req: np.ndarray, alloc: np.ndarray, err: np.ndarray) -> np.ndarray:
    left = alloc - np.minimum(req, alloc)  # 0 on a full node
    err |= left > _PRODUCT_MAX
    return np.where(err, 0, left) * MAX_SCORE // alloc


def _most_columns(req: np.ndarray, alloc: np.ndarray, err: np.ndarray) -> np.ndarray:
    used = np.minimum(req, alloc)
    err |= used > _PRODUCT_MAX
    return np.where(err, 0, used) * MAX_SCORE // alloc


def _balanced_columns(found: Columns, size: int, err: np.ndarray) -> np.ndarray:
    """``balanced_allocation`` per node: the fractions of the resources counted on each
    node, in order, with kube's operations in kube's order."""
    fractions: list[tuple[np.ndarray, np.ndarray]] = []  # (counted, fraction) per resource
    count = np.zeros(size, np.int64)
    total = np.zeros(size)
    first, second = np.zeros(size), np.zeros(size)
    for _, alloc, req in found:
        counted = alloc > 0
        fraction = np.minimum(req.astype(np.float64) / np.where(counted, alloc, 1), 1.0)
        fraction = np.where(counted, fraction, 0.0)
        first = np.where(counted & (count == 0), fraction, first)
        second = np.where(counted & (count == 1), fraction, second)
        count += counted
        total += fraction  # + 0.0 where not counted: unchanged
        fractions.append((counted, fraction))
    std = np.where(count == 2, np.abs((first - second) / 2), 0.0)
    many = count > 2
    if many.any():
        mean = total / np.maximum(count, 1)
        deviations = np.zeros(size)
        for counted, fraction in fractions:
            d = fraction - mean
            deviations = deviations + np.where(counted, d * d, 0.0)
        std = np.where(many, np.sqrt(deviations / np.maximum(count, 1)), std)
    return np.trunc((1 - std) * MAX_SCORE).astype(np.int64)


_AMOUNTS = map_of(STRING, INT)
_PARAMS = (_AMOUNTS, _AMOUNTS, _AMOUNTS, DYN)
_RESOURCES_EXAMPLE = "[{'name': 'cpu', 'weight': 1}, {'name': 'memory', 'weight': 1}]"


def _function(name: str, impl: Callable[..., int], columns: Callable[..., Any], doc: str,
              requested: Sequence[str]) -> Function:
    node_requested, pod_requests = requested
    return Function(
        name, (Overload(f"{name}_resources", _PARAMS, INT),), impl, cost=_SCORE_COST,
        doc=doc, columns=columns,
        examples=(f"{name}(node.allocatable, {node_requested}, {pod_requests}, "
                  f"{_RESOURCES_EXAMPLE})",))


FUNCTIONS: tuple[Function, ...] = (
    _function("leastAllocated", least_allocated,
              _vectorised("leastAllocated", _mean_columns(_least_columns)),
              "NodeResourcesFit's LeastAllocated score of a node (0-100): per resource "
              "(allocatable - requested) * 100 / allocatable, requested being the node's "
              "plus the pod's; the weighted mean over `resources` ([{name, weight}])",
              ("node.nonZeroRequested", "pod.nonZeroRequests")),
    _function("mostAllocated", most_allocated,
              _vectorised("mostAllocated", _mean_columns(_most_columns)),
              "NodeResourcesFit's MostAllocated score of a node (0-100): per resource "
              "requested * 100 / allocatable, requested (the node's plus the pod's) capped at "
              "allocatable; the weighted mean over `resources` ([{name, weight}])",
              ("node.nonZeroRequested", "pod.nonZeroRequests")),
    _function("balancedAllocation", balanced_allocation,
              _vectorised("balancedAllocation", _balanced_columns),
              "NodeResourcesBalancedAllocation's score of a node (0-100): 100 times one minus "
              "the standard deviation of the fractions requested / allocatable (each capped "
              "at 1) of `resources` ([{name}]), requested being the node's plus the pod's",
              ("node.requested", "pod.requests")),
)
