"""The columnar node table: per node-side expression, one column over all nodes.

Rows are the snapshot's nodes in its order. A column holds the value of one node-only
expression part (``node.allocatable``, ``'cpu' in node.free ? node.free['cpu'] : 0``,
``node.labels``, ``nodePods.filter(...).size()`` ...) on every node, as NumPy arrays where
the values are numbers or bools and factorised otherwise (see ``cel.vector``). A column
is kept up to date incrementally: on use, only rows whose node generation changed since
the column last saw them are recomputed (binding a pod changes one row) — for a column of
what the node view alone gives (``view_only``: not ``nodePods``), only rows whose view
changed (not those where a pod was only replaced by one counted alike: a status update, a
bind confirmed), and for one of what the Node object alone gives (``objects_only``:
labels, taints, allocatable ...), only rows whose Node object changed. Each column also
knows, per row, the epoch at which its value last changed (``modified``): a result computed
from a node's column values stays valid while those values do, even if the node changed.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cel import CelError
from ..cel.values import INT64_MAX, INT64_MIN, detached
from ..cel.vector import Column, FactorisedColumn, NumericColumn, column_of, freeze
from ..model.objects import PodInfo
from .cache import Snapshot
from .node_info import NodeInfo

RowFunction = Callable[[NodeInfo], Any]
LOG_LENGTH = 256  # refreshes remembered by ``changed_since``
# columns kept: one per node-side expression part and per question aggregates ask (a
# selector, a node affinity ...); beyond, the least recently used is dropped
MAX_COLUMNS = 1024
_NO_ROWS = np.zeros(0, np.int64)

_DTYPE_KINDS = {np.dtype(np.int64): int, np.dtype(np.float64): float, np.dtype(np.bool_): bool}


@dataclass
class _Column:
    compute: RowFunction
    values: list[Any]  # the CEL value (or CelError) per row
    epoch: int  # the table's epoch when the values were last brought up to date
    data: Column
    index: dict[Any, int] | None = None  # freeze(value) -> code, for a FactorisedColumn
    used: int = 0  # the table's epoch when last read
    per_row: bool = False  # every row its own value (node views): no factorising
    objects_only: bool = False  # computed from the Node object alone, not from its pods
    view_only: bool = False  # computed from the node view alone, not from ``nodePods``
    # per row, the epoch at which its value last changed (a different value or type)
    modified: np.ndarray = field(default_factory=lambda: _NO_ROWS)


class NodeTable:
    """Columns over the nodes of the latest snapshot ``refresh`` saw."""

    def __init__(self) -> None:
        self.snapshot: Snapshot | None = None
        self.generations = np.zeros(0, np.int64)
        self._columns: dict[Hashable, _Column] = {}
        # rows changed by each refresh: epoch e changed ``_log[e - _log_start]``, the
        # views of ``_view_log[e - _log_start]`` and the Node objects of ``_object_log[…]``
        self.epoch = 0
        self._log: list[np.ndarray] = []
        self._view_log: list[np.ndarray] = []
        self._object_log: list[np.ndarray] = []
        self._log_start = 1
        self._objects: list[Any] = []  # per row, the Node object its node was read from
        self._views: list[int] = []  # per row, the view_generation of its node
        self._per_pod: dict[Hashable, weakref.WeakKeyDictionary[PodInfo, Any]] = {}
        self._answers: dict[Hashable, Any] = {}

    @property
    def size(self) -> int:
        return len(self.generations)

    def refresh(self, snapshot: Snapshot) -> None:
        """Follow ``snapshot``; columns drop everything when nodes were added or deleted."""
        if snapshot is self.snapshot:
            return
        if self.snapshot is None or snapshot.index is not self.snapshot.index:
            self._columns.clear()
            self._log.clear()
            self._view_log.clear()
            self._object_log.clear()
            self._objects = [n.obj for n in snapshot.nodes]
            self._views = [n.view_generation for n in snapshot.nodes]
            changed = None
        else:
            changed = np.flatnonzero(snapshot.generations != self.generations)
        self.snapshot = snapshot
        self.generations = snapshot.generations
        self.epoch += 1
        if changed is None:
            self._log_start = self.epoch + 1
        else:
            objects, views = [], []
            for row in changed.tolist():
                node = snapshot.nodes[row]
                if node.view_generation != self._views[row]:
                    self._views[row] = node.view_generation
                    views.append(row)
                if node.obj is not self._objects[row]:
                    self._objects[row] = node.obj
                    objects.append(row)
            self._log.append(changed)
            self._view_log.append(np.array(views, np.int64) if views else _NO_ROWS)
            self._object_log.append(np.array(objects, np.int64) if objects else _NO_ROWS)
            if len(self._log) > LOG_LENGTH:
                del self._log[0]
                del self._view_log[0]
                del self._object_log[0]
                self._log_start += 1

    def changed_since(self, epoch: int, objects_only: bool = False,
                      view_only: bool = False) -> np.ndarray | None:
        """Rows changed by the refreshes after ``epoch`` (``objects_only``: rows whose
        Node object changed; ``view_only``: rows whose view did); None when not known
        (nodes were added or deleted, or ``epoch`` is too old)."""
        if epoch == self.epoch:
            return _NO_ROWS
        if epoch + 1 < self._log_start:
            return None
        log = self._object_log if objects_only else self._view_log if view_only \
            else self._log
        parts = log[epoch + 1 - self._log_start:]
        if len(parts) == 1:
            return parts[0]
        return np.unique(np.concatenate(parts))

    def clear(self) -> None:
        """Forget every column and per-pod value (the policies changed)."""
        self._columns.clear()
        self._per_pod.clear()
        self._answers.clear()

    def per_pod(self, key: Hashable) -> weakref.WeakKeyDictionary[PodInfo, Any]:
        """Values computed from one pod alone for the question ``key`` (a column's rows
        sum them over the pods of a node): computed once per pod object, kept while it
        lives, until the policies change."""
        found = self._per_pod.get(key)
        if found is None:
            found = self._per_pod[key] = weakref.WeakKeyDictionary()
        return found

    def answer(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The answer to the question ``key`` that depends on the policies alone:
        computed once, until the policies change."""
        if key not in self._answers:
            self._answers[key] = compute()
        return self._answers[key]

    def column(self, key: Hashable, compute: RowFunction, per_row: bool = False,
               objects_only: bool = False, view_only: bool = False
               ) -> tuple[Column, list[Any]]:
        """The column ``key`` (computed by ``compute(node)`` per row, CelError for an
        error), brought up to date with the current snapshot; also as a list of values.
        ``per_row``: the values differ on every row (the node views themselves), so the
        column is not factorised by value (codes are the rows). ``objects_only``:
        ``compute`` reads only what the Node object gives (not the node's pods), so a
        row is recomputed only when its Node object changed; ``view_only``: ``compute``
        reads only the node view (not ``nodePods``), so only when the view changed."""
        col = self._current(key, compute, per_row, objects_only, view_only)
        return col.data, col.values

    def modified(self, key: Hashable, compute: RowFunction, per_row: bool = False,
                 objects_only: bool = False, view_only: bool = False) -> np.ndarray:
        """Per row, the epoch at which the value of column ``key`` (brought up to date, as
        ``column``) last changed: a value computed from the column at epoch ``e`` holds on
        the rows where it is at most ``e``."""
        return self._current(key, compute, per_row, objects_only, view_only).modified

    def _current(self, key: Hashable, compute: RowFunction, per_row: bool,
                 objects_only: bool, view_only: bool) -> _Column:
        assert self.snapshot is not None
        nodes = self.snapshot.nodes
        col = self._columns.get(key)
        if col is None:
            values = [_row(compute, n) for n in nodes]
            data = (FactorisedColumn(np.arange(len(values)), values) if per_row
                    else column_of(values))
            col = _Column(compute, values, self.epoch, data, used=self.epoch, per_row=per_row,
                          objects_only=objects_only and not per_row,
                          view_only=view_only and not per_row,
                          modified=np.full(len(values), self.epoch, np.int64))
            if len(self._columns) >= MAX_COLUMNS:
                del self._columns[min(self._columns, key=lambda k: self._columns[k].used)]
            self._columns[key] = col
            return col
        col.used = self.epoch
        if col.epoch != self.epoch:
            stale = self.changed_since(col.epoch, col.objects_only, col.view_only)
            if stale is None:  # not used for a long time: start over
                col.values = [_row(compute, n) for n in nodes]
                col.data = (FactorisedColumn(np.arange(len(col.values)), col.values)
                            if col.per_row else column_of(col.values))
                col.index = None
                col.modified = np.full(len(col.values), self.epoch, np.int64)
            elif col.per_row:  # the uniques are the values
                for i in stale.tolist():
                    value = _row(compute, nodes[i])
                    if value is not col.values[i]:
                        col.values[i] = value
                        col.modified[i] = self.epoch
            elif len(stale):
                old = [col.values[i] for i in stale.tolist()]
                for i in stale.tolist():
                    col.values[i] = _row(compute, nodes[i])
                changed = _patch(col, stale, old)
                if len(changed):
                    col.modified[changed] = self.epoch
            col.epoch = self.epoch
        return col


def _row(compute: RowFunction, node: NodeInfo) -> Any:
    try:
        return compute(node)
    except CelError as e:
        return detached(e)


def _patch(col: _Column, rows: np.ndarray, old: list[Any]) -> np.ndarray:
    """Write the recomputed ``rows`` into the column's arrays (rebuilt when a value no
    longer fits the column's type); ``old`` are their values before. Returns the rows whose
    value changed: to another value or type (an error always counts as a change)."""
    data = col.data
    values = col.values
    listed = rows.tolist()
    if isinstance(data, NumericColumn):
        kind = _DTYPE_KINDS[data.data.dtype]
        if all(type(values[i]) is CelError
               or (type(values[i]) is kind and (kind is not int or _in_int64(values[i])))
               for i in listed):
            changed = []
            for i, before in zip(listed, old, strict=True):
                v = values[i]
                error = type(v) is CelError
                if error and data.err is None:
                    data.err = np.zeros(len(values), bool)
                if data.err is not None:
                    data.err[i] = error
                if not error:
                    data.data[i] = v
                if error or type(before) is not kind or before != v:
                    changed.append(i)
            return np.array(changed, np.int64)
    elif isinstance(data, FactorisedColumn) and len(data.uniques) < 2 * len(values) + 16:
        if col.index is None:
            col.index = {freeze(u): c for c, u in enumerate(data.uniques)}
        changed = []
        for i in listed:
            v = values[i]
            key = freeze(v)
            code = col.index.get(key)
            if code is None:
                code = col.index[key] = len(data.uniques)
                data.uniques.append(v)
            if code != data.codes[i] or type(v) is CelError:
                changed.append(i)
            data.codes[i] = code
            if type(v) is CelError and data.err is None:
                data.err = np.zeros(len(values), bool)
            if data.err is not None:
                data.err[i] = type(v) is CelError
        return np.array(changed, np.int64)
    col.data = column_of(values)
    col.index = None
    return rows


def _in_int64(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX
