"""The compiled evaluator leaves no reference cycles behind an error: an error an
expression absorbs (``||``, ``&&``, ``exists``, ``all``) or raises is kept as a copy without
a traceback, so its frames do not hold it (the scheduler's pacing of full collections
relies on reference counting to free what an evaluation allocates)."""

from __future__ import annotations

import gc

import pytest

from policysched.cel import CelError, compile_expression
from policysched.cel import types as t
from policysched.cel.environment import Environment

ENV = Environment(variables={"l": t.list_of(t.INT), "z": t.INT})


@pytest.mark.parametrize(("text", "value"), [
    ("1 / z == 1 || true", True),
    ("true || 1 / z == 1", True),
    ("1 / z == 1 && false", False),
    ("l.exists(x, 1 / x == 1)", True),
    ("l.all(x, 1 / x == 2)", False),
    ("1 / z == 1 || false", None),  # None: the error
    ("l.all(x, 1 / x == 1)", None),
    ("l.exists(x, 1 / x == 2)", None),
])
def test_an_error_leaves_no_reference_cycle(text: str, value: bool | None) -> None:
    program = compile_expression(text, ENV)
    act = {"l": [0, 1], "z": 0}
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        try:
            result: bool | None = program.evaluate(act)
        except CelError as e:
            assert "division by zero" in e.message
            result = None
        gc.collect()
        garbage = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert result is value
    assert [type(o).__qualname__ for o in garbage] == []


@pytest.mark.parametrize(
    ("text", "want"),
    [  # Kubernetes 1.34 (cel-go): a repeated key keeps the last value, an absent optional
        # entry removes an earlier one
        ("{'a': 1, 'a': 2}", {"a": 2}),
        ("{'a': 1, 'b': 2, 'a': 3}", {"a": 3, "b": 2}),
        ("size({'a': 1, 'a': 2})", 1),
        ("{'a': 1, ?'a': optional.none()}", {}),
        ("{?'a': optional.of(1), 'a': 2}", {"a": 2}),
        ("{'a': 1, ?'a': optional.of(5)}", {"a": 5}),
        ("{dyn(1): 'a', ?dyn(1u): optional.none()}", {1: "a"}),
    ],
)
def test_repeated_map_keys_as_kubernetes(text: str, want: object) -> None:
    assert compile_expression(text, Environment()).evaluate({}) == want


@pytest.mark.parametrize("text", ["{dyn(1): 'a', dyn(1u): 'b'}", "{dyn(true): 'a', dyn(1): 'b'}"])
def test_map_keys_python_cannot_tell_apart_are_an_error(text: str) -> None:
    # distinct CEL keys (Kubernetes builds a two-entry map) but one Python dict key
    with pytest.raises(CelError, match="cannot be in one map here"):
        compile_expression(text, Environment()).evaluate({})


def test_repeated_map_keys_rejected_as_the_cel_specification() -> None:
    env = Environment(version=None)  # the CEL specification alone
    with pytest.raises(CelError, match="Failed with repeated key: true"):
        compile_expression("{true: 1, false: 2, true: 3}[true]", env).evaluate({})
    with pytest.raises(CelError, match="Failed with repeated key: 1u"):
        compile_expression("{dyn(1): 'a', dyn(1u): 'b'}", env).evaluate({})
