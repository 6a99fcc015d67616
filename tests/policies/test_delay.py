"""delay: the seed article's preFilter, the contract's document verbatim
(docs/architecture.md#the-delay-example)."""

from __future__ import annotations

from typing import Any

import pytest

from policysched.cel import CelError
from policysched.policy import ExtensionPoint

from .helpers import Harness, load, pod

PRE_FILTER = ExtensionPoint.PRE_FILTER


def harness(annotations: dict[str, str], now: int, created: int = 1000) -> Harness:
    return Harness("delay", pod(annotations=annotations, creation=created), now=now)


def test_document_is_the_design_contract() -> None:
    policy = load("delay")
    rule: Any
    [rule] = policy.rules_for(PRE_FILTER)
    assert policy.match is not None and policy.match.text == "'delay' in pod.annotations"
    assert rule.name == "delay-elapsed"
    assert rule.expression.text == "now - pod.creationTimestamp >= int(pod.annotations.delay)"
    assert rule.message == "delay not reached"
    assert rule.retry_after.text == "int(pod.annotations.delay) - (now - pod.creationTimestamp)"


def test_only_annotated_pods_match() -> None:
    assert harness({"delay": "15"}, now=1000).matches()
    assert not harness({}, now=1000).matches()
    assert not harness({"other": "15"}, now=1000).matches()


@pytest.mark.parametrize(("now", "passes", "retry"), [
    (1000, False, 15), (1014, False, 1), (1015, True, None), (1100, True, None)])
def test_waits_until_the_delay_has_passed(now: int, passes: bool, retry: int | None) -> None:
    h = harness({"delay": "15"}, now=now)
    rejection = h.pre_filter()
    assert (rejection is None) == passes
    if not passes:
        assert rejection is not None and rejection.reason == "delay not reached"
        assert not rejection.unresolvable
        assert h.evaluate(PRE_FILTER, "delay-elapsed", "retry_after") == retry


def test_a_non_integer_delay_is_an_evaluation_error() -> None:
    with pytest.raises(CelError):
        harness({"delay": "soon"}, now=1000).pre_filter()
