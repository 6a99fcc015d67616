"""Score normalisation variants (kube-scheduler's NormalizeScore helpers)."""

from __future__ import annotations

from policysched.framework.runner import normalise
from policysched.policy.model import Normalization


def test_none_keeps_scores() -> None:
    assert normalise([3.0, 7.0], Normalization.NONE) == [3.0, 7.0]


def test_max_scales_to_100() -> None:
    assert normalise([5.0, 10.0, 0.0], Normalization.MAX) == [50.0, 100.0, 0.0]
    assert normalise([0.0, 0.0], Normalization.MAX) == [0.0, 0.0]


def test_reverse_prefers_small() -> None:
    assert normalise([0.0, 5.0, 10.0], Normalization.REVERSE) == [100.0, 50.0, 0.0]
    assert normalise([0.0, 0.0], Normalization.REVERSE) == [100.0, 100.0]


def test_min_max() -> None:
    assert normalise([2.0, 4.0, 6.0], Normalization.MIN_MAX) == [0.0, 50.0, 100.0]
    assert normalise([4.0, 4.0], Normalization.MIN_MAX) == [0.0, 0.0]
