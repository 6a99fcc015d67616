"""The order in which Go's ``sort.Slice`` leaves equal elements.

cel-go's ``sort()`` and ``sortBy`` sort with ``sort.Slice``, Go's pattern-defeating quicksort,
which is not stable: beyond 12 elements, elements with equal keys (``sortBy(e, e % 2)``)
come out in an order of its own, and a comparison that is never true (NaN) leaves its
elements where the algorithm happens to put them. ``go_sort_order`` is a faithful port of
Go's ``pdqsort_func`` (sort/zsortfunc.go) over a list of indices, so these orders are
Kubernetes' exactly; it is deterministic (its "random" pivot breaking is seeded by the
length).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

_MAX_INSERTION = 12
_U64 = (1 << 64) - 1
_INCREASING, _DECREASING, _UNKNOWN = 1, 2, 0


def go_sort_order(keys: Sequence[Any], less: Callable[[Any, Any], bool]) -> list[int]:
    """The positions of ``keys`` in the order Go's ``sort.Slice`` puts them, with
    ``less(a, b)`` as its comparison."""
    idx = list(range(len(keys)))
    _Sorter(idx, keys, less).pdqsort(0, len(idx), len(idx).bit_length())
    return idx


class _Sorter:
    def __init__(self, idx: list[int], keys: Sequence[Any],
                 less: Callable[[Any, Any], bool]) -> None:
        self.idx = idx
        self.keys = keys
        self.key_less = less

    def less(self, i: int, j: int) -> bool:
        return self.key_less(self.keys[self.idx[i]], self.keys[self.idx[j]])

    def swap(self, i: int, j: int) -> None:
        idx = self.idx
        idx[i], idx[j] = idx[j], idx[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, hi = a, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(0, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = was_partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING \
                    and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i += 1
            j -= 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        max_steps, shortest_shifting = 5, 50
        i = a + 1
        for _ in range(max_steps):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < shortest_shifting:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        for i in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
            state ^= (state << 13) & _U64
            state ^= state >> 7
            state ^= (state << 17) & _U64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(i, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        n = b - a
        swaps = [0]
        i, j, k = a + n // 4, a + n // 4 * 2, a + n // 4 * 3
        if n >= 8:
            if n >= 50:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == 12:
            return j, _DECREASING
        return j, _UNKNOWN

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
