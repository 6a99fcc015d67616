"""A pod's requests and limits as kube-scheduler v1.34 counts them, from the parsed amounts
of its containers: k8s.io/component-helpers' ``resource.PodRequests`` / ``PodLimits``
(containers and sidecars summed, init containers as a maximum, pod-level resources,
overhead), the API server's defaulting of pod-level requests and hugepage limits
(``SetDefaults_Pod``, PodLevelResources on), and the scheduler's non-zero requests
(``schedutil.DefaultMilliCPURequest`` / ``DefaultMemoryRequest`` for every container that
requests no cpu / memory).

Every amount is an int (cpu in millicores), saturated at the int64 maximum; maps list cpu,
memory and ephemeral-storage first, then the other resources by name, so that whoever
walks them (the NodeResourcesFit policy's reasons) does so in kube-scheduler's order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..cel.values import INT64_MAX

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
HUGEPAGES_PREFIX = "hugepages-"
# what a container without a cpu / memory request counts as when scoring (schedutil)
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_ZERO_DEFAULTS = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}

Resources = dict[str, int]

_FIRST = {CPU: 0, MEMORY: 1, EPHEMERAL_STORAGE: 2}


@dataclass(frozen=True)
class ContainerResources:
    """One container's requests (a request defaults to its limit, as the API server
    defaults it) and limits; ``sidecar``: an init container with restartPolicy Always."""

    requests: Resources
    limits: Resources
    sidecar: bool = False


@dataclass(frozen=True)
class PodResources:
    """``requests`` and ``limits`` as kube-scheduler's filters read them;
    ``non_zero_requests`` the requests NodeResourcesFit's scoring reads for the pod being
    scheduled (``resourceAllocationScorer``: every container without a cpu / memory request
    counts the defaults; pod-level requests ignored, as Fit's scorer leaves PodLevelResources
    off — see ``pod_resources``); ``counted_non_zero`` the cpu and memory a node's
    ``NonZeroRequested`` counts for the pod (``PodInfo.CalculateResource``: with pod-level
    requests, which count there, a resource the pod requests anywhere, even 0, gets no
    default)."""

    requests: Resources
    limits: Resources
    non_zero_requests: Resources
    counted_non_zero: Resources


def is_pod_level_resource(name: str) -> bool:
    """A resource pod-level ``spec.resources`` may set (``IsSupportedPodLevelResource``)."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def _add_into(total: Resources, more: Resources) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


def _max_into(total: Resources, other: Resources) -> None:
    for name, amount in other.items():
        if name not in total or amount > total[name]:
            total[name] = amount


def aggregate(containers: Iterable[Resources], inits: Iterable[tuple[Resources, bool]]
              ) -> Resources:
    """``AggregateContainerRequests`` / ``Limits``: containers and sidecars summed, at least
    the largest init container plus the sidecars started before it (``inits``: amounts and
    whether the init container is a sidecar, in order)."""
    total: Resources = {}
    for amounts in containers:
        _add_into(total, amounts)
    sidecars: Resources = {}
    init_max: Resources = {}
    for amounts, sidecar in inits:
        if sidecar:
            _add_into(total, amounts)
            _add_into(sidecars, amounts)
            _max_into(init_max, sidecars)
        else:
            current = dict(amounts)
            _add_into(current, sidecars)
            _max_into(init_max, current)
    _max_into(total, init_max)
    return total


def _requests(containers: list[ContainerResources], inits: list[ContainerResources],
              defaults: Resources | None = None) -> Resources:
    """The containers' requests aggregated, each container's missing ``defaults`` applied
    first (``NonMissingContainerRequests``: an explicit request, even 0, is kept)."""
    def own(c: ContainerResources) -> Resources:
        return c.requests if not defaults else {**defaults, **c.requests}

    return aggregate((own(c) for c in containers), ((own(c), c.sidecar) for c in inits))


def default_pod_level(containers: list[ContainerResources], inits: list[ContainerResources],
                      requests: Resources, limits: Resources) -> tuple[Resources, Resources]:
    """Pod-level ``spec.resources`` (requests, limits) as the API server defaults them
    (``defaultHugePagePodLimits`` then ``defaultPodRequests``): with pod-level resources,
    a hugepage limit the containers set and the pod does not request becomes the pod's
    limit; with pod-level limits, a cpu / memory request the pod does not set is the
    containers' request, and any other supported limit it does not request its request."""
    if not requests and not limits:
        return requests, limits
    limits = dict(limits)
    container_limits = aggregate((c.limits for c in containers),
                                 ((c.limits, c.sidecar) for c in inits))
    for name, amount in container_limits.items():
        if name.startswith(HUGEPAGES_PREFIX) and name not in requests:
            limits.setdefault(name, amount)
    if not limits:
        return requests, limits
    requests = dict(requests)
    for name, amount in _requests(containers, inits).items():
        # the pod-level resources that may be overcommitted (IsOvercommitAllowed)
        if name not in requests and name in (CPU, MEMORY):
            requests[name] = amount
    for name, amount in limits.items():
        if name not in requests and is_pod_level_resource(name):
            requests[name] = amount
    return requests, limits


def pod_resources(containers: list[ContainerResources], inits: list[ContainerResources],
                  pod_requests: Resources, pod_limits: Resources,
                  overhead: Resources) -> PodResources:
    """The pod's ``PodResources`` from its containers, its pod-level requests and limits
    (``spec.resources``, before defaulting) and its ``spec.overhead``.

    kube-scheduler v1.34 builds NodeResourcesFit's scorer (``nodeResourceStrategyTypeMap``)
    without the plugin's feature flags, so the pod being scored counts its containers'
    non-zero requests and its overhead but not its pod-level requests, while the pods on
    the node count theirs (``NodeInfo.NonZeroRequested``); BalancedAllocation, built with
    them, counts pod-level requests (``requests``). Reproduced, as kube does it."""
    pod_requests, pod_limits = default_pod_level(containers, inits, pod_requests, pod_limits)
    level_requests = {n: a for n, a in pod_requests.items() if is_pod_level_resource(n)}
    level_limits = {n: a for n, a in pod_limits.items() if is_pod_level_resource(n)}
    requests = _requests(containers, inits)
    requests.update(level_requests)
    _add_into(requests, overhead)
    non_zero = _requests(containers, inits, NON_ZERO_DEFAULTS)
    _add_into(non_zero, overhead)
    for name in NON_ZERO_DEFAULTS:  # present even in a pod without containers
        non_zero.setdefault(name, 0)
    limits = aggregate((c.limits for c in containers), ((c.limits, c.sidecar) for c in inits))
    if level_requests or level_limits:  # IsPodLevelResourcesSet
        limits.update(level_limits)
    for name, amount in overhead.items():  # overhead is added to the limits that are set
        if limits.get(name):
            limits[name] += amount
    counted = {name: requests[name] if level_requests and name in requests else
               non_zero[name] for name in NON_ZERO_DEFAULTS}
    return PodResources(ordered(requests), ordered(limits), ordered(non_zero),
                        ordered(counted))


def ordered(amounts: Resources) -> Resources:
    """``amounts`` saturated at the int64 maximum, cpu, memory and ephemeral-storage
    first, then by name."""
    names = sorted(amounts, key=lambda name: (_FIRST.get(name, len(_FIRST)), name))
    return {name: min(amounts[name], INT64_MAX) for name in names}
