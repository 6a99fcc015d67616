"""Score normalisation variants (kube-scheduler's NormalizeScore helpers)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from policysched.framework.runtime import normalise
from policysched.framework.vectorised import _normalise
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


def test_huge_finite_scores_normalise_without_overflow() -> None:
    # x * 100 overflows a double beyond ~1.8e306: the results are those of exact arithmetic
    assert normalise([1e308, 5e307, 0.0], Normalization.MAX) == [100.0, 50.0, 0.0]
    assert normalise([1e308, 5e307, 0.0], Normalization.REVERSE) == [0.0, 50.0, 100.0]
    assert normalise([-1e308, 0.0, 1e308], Normalization.MIN_MAX) == [0.0, 50.0, 100.0]
    assert normalise([1.7e308, 1.0], Normalization.NONE) == [1.7e308, 1.0]
    # out of 0..100 by far (an Error for the pod), but no exception
    assert normalise([-1.7e308, 1.0], Normalization.MAX) == [-math.inf, 100.0]


@pytest.mark.parametrize("how", list(Normalization))
def test_both_tiers_normalise_to_the_same_floats(how: Normalization) -> None:
    rng = random.Random(str(how))
    for _ in range(200):
        scale = rng.choice((1.0, 1e6, 1e300, 1.7e308))
        raw = [rng.choice((0.0, -0.0, 1.0)) if rng.random() < 0.2
               else scale * rng.uniform(-1, 1) for _ in range(rng.randint(1, 6))]
        assert _normalise(np.array(raw), how).tolist() == normalise(raw, how), raw
