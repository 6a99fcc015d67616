"""PodDisruptionBudgets (``policy/v1``) as kube-scheduler's preemption reads them
(``filterPodsWithPDBViolation`` in plugins/defaultpreemption/default_preemption.go): which
pods a budget covers, how many more disruptions it allows (``status.disruptionsAllowed``, as
the disruption controller last wrote it; 0 when unset) and the pods whose eviction the API
server already processed (``status.disruptedPods``, by name), which preemption does not
count against the budget again.

A budget covers the pods of its own namespace whose labels its ``spec.selector`` matches; a
budget without a selector, or with an empty one, covers no pod (kube-scheduler's reading,
not the Eviction API's), nor does any budget cover a pod without labels. A malformed budget
raises ``ObjectError`` naming the field, as the API server would have refused it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .objects import ObjectError, _get_int, _get_map, child_path, pod_key
from .selectors import LabelSelector, SelectorError, label_selector

POD_DISRUPTION_BUDGET: Final = "PodDisruptionBudget"
API_VERSION = "policy/v1"


@dataclass(frozen=True)
class DisruptionBudget:
    """One PodDisruptionBudget: what preemption reads of it."""

    namespace: str
    name: str
    selector: LabelSelector
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def covers(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether the budget covers a pod of ``namespace`` with ``labels``."""
        return (namespace == self.namespace and bool(labels)
                and bool(self.selector.requirements)
                and self.selector.matches(labels))


def disruption_budget(obj: dict[str, Any]) -> DisruptionBudget:
    """The ``DisruptionBudget`` of a PodDisruptionBudget object; raises ``ObjectError``."""
    namespace, _, name = pod_key(obj).partition("/")
    spec = _get_map(obj, "spec", "")
    status = _get_map(obj, "status", "")
    try:
        selector = label_selector(spec.get("selector"))
    except SelectorError as e:
        raise ObjectError(child_path("spec", "selector"), str(e)) from None
    allowed = _get_int(status, "disruptionsAllowed", "status")
    disrupted = _get_map(status, "disruptedPods", "status")
    return DisruptionBudget(namespace, name, selector, allowed, frozenset(map(str, disrupted)))
