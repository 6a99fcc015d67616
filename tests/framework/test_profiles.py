"""profiles: a SchedulerConfiguration and policies -> one Framework per profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from policysched.framework.profiles import build_frameworks
from policysched.policy import load_policy_set
from policysched.policy.selection import ConfigurationError

POLICY = """
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {{name: heavy}}
spec:
  score:
  - {{name: a, expression: "1", weight: {weight}}}
  - {{name: b, expression: "2", weight: {weight}}}
"""


@pytest.mark.parametrize(("weight", "multiplier", "fits"), [
    (2147483647, 1, True),
    (2147483647, 21474836, True),  # 2 x 2147483647 x 21474836 x 100 < 2^63
    (2147483647, 21474837, False),
    (2147483647, 2147483647, False),
])
def test_a_profile_whose_total_score_could_overflow_int64_is_refused(
        tmp_path: Path, weight: int, multiplier: int, fits: bool) -> None:
    # as kube-scheduler's "total score of Score plugins could overflow"
    path = tmp_path / "heavy.yaml"
    path.write_text(POLICY.format(weight=weight))
    policies = load_policy_set([path]).policies
    config = {"profiles": [{"schedulerName": "p", "policies": {
        "enabled": [{"name": "heavy", "weight": multiplier}]}}]}
    if fits:
        assert "p" in build_frameworks(policies, config)[0]
    else:
        with pytest.raises(ConfigurationError, match=r"profile p: .*could overflow int64"):
            build_frameworks(policies, config)
