"""The columnar node table follows the cache's snapshots and recomputes only the rows of
nodes that changed."""

from __future__ import annotations

from typing import Any

import numpy as np

from policysched.cache.cache import Cache
from policysched.cache.node_info import NodeInfo
from policysched.cache.node_table import NodeTable
from policysched.cel import CelError
from policysched.cel.vector import FactorisedColumn, NumericColumn
from policysched.model.events import ClusterEvent


def node(name: str, zone: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, node_name: str = "") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"nodeName": node_name, "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "500m"}}}]}}


def cluster(n: int) -> Cache:
    cache = Cache()
    for i in range(n):
        cache.apply(ClusterEvent("ADDED", "Node", node(f"n{i}", "abc"[i % 3])))
    return cache


def test_a_bind_recomputes_one_row_of_each_column() -> None:
    cache = cluster(6)
    table = NodeTable()
    calls: list[str] = []

    def pods_on(n: NodeInfo) -> int:
        calls.append(n.name)
        return n.pod_count

    table.refresh(cache.snapshot())
    column, values = table.column("pods", pods_on)
    assert isinstance(column, NumericColumn) and column.data.tolist() == [0] * 6
    assert len(calls) == 6
    cache.apply(ClusterEvent("ADDED", "Pod", pod("p1", "n4")))
    table.refresh(cache.snapshot())
    column, values = table.column("pods", pods_on)
    assert calls[6:] == ["n4"]
    assert isinstance(column, NumericColumn) and column.data.tolist() == [0, 0, 0, 0, 1, 0]
    assert values[4] == 1
    table.refresh(cache.snapshot())  # nothing changed
    table.column("pods", pods_on)
    assert len(calls) == 7


def test_other_values_are_factorised_and_errors_flagged() -> None:
    from policysched.cel import CelError

    cache = cluster(4)
    table = NodeTable()
    table.refresh(cache.snapshot())
    zones, _ = table.column("zone", lambda n: n.view["labels"]["zone"])
    assert isinstance(zones, FactorisedColumn)
    assert [zones.uniques[c] for c in zones.codes.tolist()] == ["a", "b", "c", "a"]

    def fails_on_b(n: NodeInfo) -> Any:
        if n.view["labels"]["zone"] == "b":
            raise CelError("no")
        return 1

    column, _ = table.column("maybe", fails_on_b)
    assert isinstance(column, NumericColumn) and column.err is not None
    assert np.flatnonzero(column.err).tolist() == [1]


def test_nodes_added_start_the_columns_over_and_changes_are_logged() -> None:
    cache = cluster(3)
    table = NodeTable()
    table.refresh(cache.snapshot())
    epoch = table.epoch
    cache.apply(ClusterEvent("ADDED", "Pod", pod("p1", "n2")))
    cache.apply(ClusterEvent("ADDED", "Pod", pod("p2", "n0")))
    table.refresh(cache.snapshot())
    changed = table.changed_since(epoch)
    assert changed is not None and sorted(changed.tolist()) == [0, 2]
    cache.apply(ClusterEvent("ADDED", "Node", node("n3", "a")))
    table.refresh(cache.snapshot())
    assert table.size == 4 and table.changed_since(epoch) is None
    column, _ = table.column("pods", lambda n: n.pod_count)
    assert isinstance(column, NumericColumn) and column.data.tolist() == [1, 0, 1, 0]


def test_ints_beyond_int64_are_factorised_not_overflowed() -> None:
    # CEL ints are int64, but a raw view may hold any int: the column must still hold it
    cache = cluster(3)
    table = NodeTable()
    table.refresh(cache.snapshot())
    huge = {"n0": 2**70}
    column, _ = table.column("big", lambda n: huge.get(n.name, n.pod_count))
    assert isinstance(column, FactorisedColumn)
    assert [column.uniques[c] for c in column.codes.tolist()] == [2**70, 0, 0]
    column, _ = table.column("small", lambda n: huge.get(n.name, 0) if n.pod_count else 1)
    assert isinstance(column, NumericColumn) and column.data.tolist() == [1, 1, 1]
    cache.apply(ClusterEvent("ADDED", "Pod", pod("p1", "n0")))  # n0's row becomes 2**70
    table.refresh(cache.snapshot())
    column, values = table.column("small", lambda n: huge.get(n.name, 0) if n.pod_count else 1)
    assert values == [2**70, 1, 1]
    assert isinstance(column, FactorisedColumn)
    assert [column.uniques[c] for c in column.codes.tolist()] == [2**70, 1, 1]


def test_a_row_is_modified_only_when_its_value_changes() -> None:
    cache = cluster(4)
    table = NodeTable()
    given: dict[str, Any] = {"n0": 1, "n1": 1, "n2": "a", "n3": {"k": [1]}}

    def read(n: NodeInfo) -> Any:
        return given[n.name]

    table.refresh(cache.snapshot())
    created = table.epoch
    assert table.modified("numbers", lambda n: given[n.name] if n.name < "n2" else 0
                          ).tolist() == [created] * 4
    assert table.modified("any", read).tolist() == [created] * 4
    # every node changes (a pod on each); n0's value changes type, n2's value, n3's
    # value is an equal copy, n1's stays
    given.update(n0=1.0, n2="b", n3={"k": [1]})
    for i in range(4):
        cache.apply(ClusterEvent("ADDED", "Pod", pod(f"p{i}", f"n{i}")))
    table.refresh(cache.snapshot())
    now = table.epoch
    assert table.modified("any", read).tolist() == [now, created, now, created]
    # a numeric column: a new int, the same int, an error
    given.update(n0=2, n1=0)
    assert table.modified("ints", lambda n: given[n.name] if n.name < "n2" else 0
                          ).tolist() == [now] * 4  # new column: every row
    given.update(n0=3)
    cache.apply(ClusterEvent("ADDED", "Pod", pod("q0", "n0")))
    cache.apply(ClusterEvent("ADDED", "Pod", pod("q1", "n1")))
    cache.apply(ClusterEvent("ADDED", "Pod", pod("q2", "n2")))
    table.refresh(cache.snapshot())
    later = table.epoch

    def ints(n: NodeInfo) -> Any:
        if n.name == "n2":
            raise CelError("no")
        return given[n.name] if n.name < "n2" else 0

    assert table.modified("ints", ints).tolist() == [later, now, later, now]
    # the node views themselves: a new view on every change of the node
    views = table.modified("views", lambda n: n.view, per_row=True)
    assert views.tolist() == [later] * 4
    cache.apply(ClusterEvent("ADDED", "Pod", pod("r3", "n3")))
    table.refresh(cache.snapshot())
    assert table.modified("views", lambda n: n.view, per_row=True).tolist() == \
        [later, later, later, table.epoch]


def test_per_pod_values_live_as_long_as_their_pod_until_the_policies_change() -> None:
    cache = cluster(1)
    cache.apply(ClusterEvent("ADDED", "Pod", pod("p1", "n0")))
    table = NodeTable()
    info = cache.pod("default/p1")
    assert info is not None
    table.per_pod("terms")[info] = "terms of p1"
    assert table.per_pod("terms").get(info) == "terms of p1"
    assert table.per_pod("other").get(info) is None
    table.clear()  # the policies changed: their questions may mean something else
    assert table.per_pod("terms").get(info) is None
    table.per_pod("terms")[info] = "terms of p1"
    cache.apply(ClusterEvent("DELETED", "Pod", pod("p1", "n0")))
    del info
    assert len(table.per_pod("terms")) == 0


def test_a_column_of_the_node_object_is_recomputed_only_when_the_object_changes() -> None:
    cache = cluster(4)
    table = NodeTable()
    calls: list[str] = []

    def zone(n: NodeInfo) -> str:
        calls.append(n.name)
        return str(n.view["labels"]["zone"])

    table.refresh(cache.snapshot())
    table.column("zone", zone, objects_only=True)
    table.column("pods", lambda n: n.pod_count)
    assert len(calls) == 4
    epoch = table.epoch
    cache.apply(ClusterEvent("ADDED", "Pod", pod("p1", "n2")))  # the node's pods change
    table.refresh(cache.snapshot())
    table.column("zone", zone, objects_only=True)
    assert len(calls) == 4  # not read again
    assert table.column("pods", lambda n: n.pod_count)[0].data.tolist() == [0, 0, 1, 0]
    assert table.changed_since(epoch).tolist() == [2]
    assert table.changed_since(epoch, objects_only=True).tolist() == []
    relabelled = node("n1", "z")
    cache.apply(ClusterEvent("MODIFIED", "Node", relabelled))  # the Node object changes
    table.refresh(cache.snapshot())
    _, values = table.column("zone", zone, objects_only=True)
    assert calls[4:] == ["n1"] and values == ["a", "z", "c", "a"]
    assert table.modified("zone", zone, objects_only=True).tolist() == [
        epoch, table.epoch, epoch, epoch]
    assert table.changed_since(epoch, objects_only=True).tolist() == [1]


def test_a_column_of_the_node_view_is_not_recomputed_when_a_pod_is_only_replaced() -> None:
    """A status update of a bound pod changes ``nodePods`` but not the view: a column of
    view fields keeps its rows, one of ``nodePods`` recomputes the node's."""
    cache = cluster(3)
    bound = pod("p1", "n1")
    cache.apply(ClusterEvent("ADDED", "Pod", bound))
    table = NodeTable()
    calls: list[str] = []

    def free(n: NodeInfo) -> int:
        calls.append(n.name)
        return int(n.view["free"]["pods"])

    def phases(n: NodeInfo) -> list[str]:
        return [p["status"].get("phase", "") for p in n.pod_views]

    table.refresh(cache.snapshot())
    table.column("free", free, view_only=True)
    table.column("phases", phases)
    epoch = table.epoch
    running = {**bound, "status": {"phase": "Running"}}
    cache.apply(ClusterEvent("MODIFIED", "Pod", running))
    table.refresh(cache.snapshot())
    _, values = table.column("free", free, view_only=True)
    assert calls == ["n0", "n1", "n2"] and values == [110, 109, 110]  # not read again
    assert table.column("phases", phases)[1] == [[], ["Running"], []]
    assert table.changed_since(epoch).tolist() == [1]
    assert table.changed_since(epoch, view_only=True).tolist() == []
    cache.apply(ClusterEvent("ADDED", "Pod", pod("p2", "n1")))  # the view changes
    table.refresh(cache.snapshot())
    _, values = table.column("free", free, view_only=True)
    assert calls[3:] == ["n1"] and values == [110, 108, 110]
    assert table.changed_since(epoch, view_only=True).tolist() == [1]
