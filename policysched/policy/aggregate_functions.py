"""The CEL functions of ``policysched.Aggregate`` values (docs/architecture.md#aggregates).

The values are computed by the engine (``framework.aggregates``); here they are only a
protocol, so that the policy layer can type-check and compile rules reading them.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..cel.library.function import Function, member_overload
from ..cel.types import INT, Type
from ..cel.values import no_such_overload

# as declared in ``variables`` (which imports this module): types compare by name
AGGREGATE_TYPE = Type("policysched.Aggregate")
NODE_TYPE = Type("policysched.Node")


class AggregateValue(Protocol):
    """An aggregate for one pod and one scheduling cycle."""

    def count(self, node: dict[str, Any]) -> int: ...
    def on_node(self, node: dict[str, Any]) -> int: ...
    def minimum(self) -> int: ...
    def domains(self) -> int: ...
    def total(self) -> int: ...
    def domains_scored(self) -> int: ...
    def count_column(self, size: int, node: Any) -> Any: ...
    def on_node_column(self, size: int, node: Any) -> Any: ...


def _check(value: Any, function: str) -> AggregateValue:
    if not hasattr(value, "count_column"):
        raise no_such_overload(function, value)
    return value


def _count(aggregate: Any, node: Any) -> int:
    return _check(aggregate, "count").count(node)


def _on_node(aggregate: Any, node: Any) -> int:
    return _check(aggregate, "onNode").on_node(node)


def _count_columns(size: int, aggregate: Any, node: Any) -> Any:
    value: Any = getattr(aggregate, "value", None)
    return value.count_column(size, node) if hasattr(value, "count_column") else None


def _on_node_columns(size: int, aggregate: Any, node: Any) -> Any:
    value: Any = getattr(aggregate, "value", None)
    return value.on_node_column(size, node) if hasattr(value, "on_node_column") else None


FUNCTIONS: tuple[Function, ...] = (
    Function("count", (member_overload("aggregate_count_node", (AGGREGATE_TYPE, NODE_TYPE),
                                       INT),),
             _count, doc="pods counted in the node's domain (0 without one)",
             columns=_count_columns, examples=("aggregates.sameApp.count(node)",)),
    Function("onNode", (member_overload("aggregate_on_node", (AGGREGATE_TYPE, NODE_TYPE),
                                        INT),),
             _on_node, doc="pods counted on the node itself", columns=_on_node_columns,
             examples=("aggregates.sameApp.onNode(node) == 0",)),
    Function("minimum", (member_overload("aggregate_minimum", (AGGREGATE_TYPE,), INT),),
             lambda a: _check(a, "minimum").minimum(),
             doc="the smallest count over the domains (0 without domains)",
             examples=("aggregates.sameApp.count(node) + 1 - aggregates.sameApp.minimum() <= 1",)),
    Function("domains", (member_overload("aggregate_domains", (AGGREGATE_TYPE,), INT),),
             lambda a: _check(a, "domains").domains(), doc="the number of domains",
             examples=("aggregates.sameApp.domains() >= 2",)),
    Function("total", (member_overload("aggregate_total", (AGGREGATE_TYPE,), INT),),
             lambda a: _check(a, "total").total(), doc="pods counted over all domains",
             examples=("aggregates.sameApp.total() == 0",)),
    Function("scoredDomains", (member_overload("aggregate_scored_domains", (AGGREGATE_TYPE,),
                                               INT),),
             lambda a: _check(a, "scoredDomains").domains_scored(),
             doc="the domains of the nodes being scored (preScore and score)",
             examples=("aggregates.sameApp.scoredDomains()",)),
)
