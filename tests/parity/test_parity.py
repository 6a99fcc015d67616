"""The bounded parity sample of ``make test``: the hand-written cases and generated
scenarios of seed 1 (``SAMPLE_DECISIONS`` decisions), kube's side from the committed cache
(a private control plane runs the oracle only for scenarios not in it). Every decision
agrees with kube-scheduler except the committed known differences — and each of those must
still differ."""

from __future__ import annotations

import pytest

from .known_differences import KNOWN_FILE, load_known
from .run import run, scenarios

SAMPLE_DECISIONS = 400
SAMPLE_SEED = 1


@pytest.mark.e2e
def test_policysched_agrees_with_kube_scheduler_but_for_the_known_differences() -> None:
    result = run(scenarios(SAMPLE_DECISIONS, SAMPLE_SEED))
    assert not result.oracle_errors, result.oracle_errors
    not_compared = [f"{c.id}: {c.kube.note or c.ours.note}" for c in result.comparisons
                    if not c.compared]
    assert not not_compared, "decisions not compared:\n" + "\n".join(not_compared)
    known = load_known()
    sample = {c.id for c in result.comparisons}
    found = {c.id: c for c in result.comparisons if c.differences}
    new = [f"{c.id} ({', '.join(c.differences)}): {c.kind}" for c in found.values()
           if c.id not in known or known[c.id].differs != c.differences]
    fixed = [f"{k.decision} ({', '.join(k.differs)}): {k.reason}" for k in known.values()
             if k.decision in sample and k.decision not in found]
    problems = []
    if new:
        problems.append("new differences (see .parity/failures/ after `python -m tests.parity"
                        f" --decisions {SAMPLE_DECISIONS}`):\n  " + "\n  ".join(new))
    if fixed:
        problems.append(f"known differences that now agree (remove them from "
                        f"{KNOWN_FILE.name}):\n  " + "\n  ".join(fixed))
    assert not problems, "\n".join(problems)
