"""priority-sort: kube-scheduler's PrioritySort as sort keys."""

from __future__ import annotations

from typing import Any

from policysched.policy import ExtensionPoint

from .helpers import load, pod


def keys(p: dict[str, Any]) -> list[int]:
    rule: Any
    [rule] = load("priority-sort").rules_for(ExtensionPoint.QUEUE_SORT)
    return [k.evaluate({"now": 0, "pod": p, "params": {}}) for k in rule.keys]


def test_higher_priority_first_then_older_first() -> None:
    pods = [pod("old-low", priority=0, creation=100),
            pod("new-high", priority=1000, creation=900),
            pod("new-low", priority=0, creation=500), pod("old-high", priority=1000, creation=200),
            pod("negative", priority=-5, creation=1)]
    ordered = sorted(pods, key=keys)
    assert [p["name"] for p in ordered] == [
        "old-high", "new-high", "old-low", "new-low", "negative"]


def test_keys() -> None:
    assert keys(pod(priority=7, creation=990)) == [-7, 990]
