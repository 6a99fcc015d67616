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
