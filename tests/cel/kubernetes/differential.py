"""Both sides on the same cases: our outcome, Kubernetes' outcome, how they compare, and
the per-area table.

Two outcomes *agree* when both are the same value (same CEL type and value, see
``values``), both are compile-time rejections, or both are runtime errors (messages are
not compared: they are shown in the examples). Anything else is one of ``DIFFERENCES`` —
but for the documented exception ``EARLIER``: a constant argument that ``ip()``,
``cidr()``, ``url()``, ``quantity()`` or ``semver()`` refuses is a compile-time error here
(a policy holding one fails ``validate``, not every pod it meets), where Kubernetes 1.34
compiles the call and fails it on every evaluation. Such a case counts as agreeing (both
refuse the expression, with the same reason) and is counted apart (``Tally.earlier``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from policysched.cel import CelCompileError, CelError, Environment, compile_expression

from . import reference
from .values import Canon, canonical, declared_type, from_json, show, to_json

VALUE = "value"
COMPILE_ERROR = "compile error"
RUNTIME_ERROR = "runtime error"
CRASH = "crash"  # a Python exception out of our compiler: always a defect

# (ours, Kubernetes') → the difference's name.
DIFFERENCES: dict[tuple[str, str], str] = {
    (VALUE, VALUE): "different value",
    (VALUE, COMPILE_ERROR): "Kubernetes rejects at compile time, we evaluate",
    (RUNTIME_ERROR, COMPILE_ERROR): "Kubernetes rejects at compile time, we fail at run time",
    (COMPILE_ERROR, VALUE): "we reject at compile time, Kubernetes evaluates",
    (COMPILE_ERROR, RUNTIME_ERROR): "we reject at compile time, Kubernetes fails at run time",
    (VALUE, RUNTIME_ERROR): "Kubernetes fails at run time, we evaluate",
    (RUNTIME_ERROR, VALUE): "we fail at run time, Kubernetes evaluates",
}
EARLIER = "a constant argument refused at compile time here, at run time in Kubernetes"
# our checker's message for a constant argument the function refuses (checker.check_literal)
_EARLIER_MESSAGE = re.compile(r"invalid (ip|cidr|url|quantity|semver) argument: ")


@dataclass(frozen=True)
class Case:
    """One generated (or hand-written) expression: its area, text and variables
    (name → (declared type text, our runtime value))."""

    area: str
    expr: str
    variables: dict[str, tuple[str, object]] = field(default_factory=dict)

    def request(self) -> reference.Request:
        return reference.Request(self.expr, {name: (decl, to_json(value))
                                             for name, (decl, value) in self.variables.items()})


@dataclass(frozen=True)
class Outcome:
    """What one side made of a case: a value (canonical) or an error message."""

    kind: str
    value: Canon | None = None
    message: str = ""

    def __str__(self) -> str:
        if self.kind == VALUE and self.value is not None:
            return show(self.value)
        first_line = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.kind}: {first_line.removeprefix('ERROR: <input>:')}"


def reference_outcome(answer: dict[str, Any]) -> Outcome:
    """cel-reference's answer line as an Outcome."""
    if "value" in answer:
        return Outcome(VALUE, from_json(answer["value"]))
    if "compile_error" in answer:
        return Outcome(COMPILE_ERROR, message=str(answer["compile_error"]))
    return Outcome(RUNTIME_ERROR, message=str(answer["runtime_error"]))


@cache
def _environment(declarations: tuple[tuple[str, str], ...]) -> Environment:
    return Environment(variables={name: declared_type(decl) for name, decl in declarations})


def our_outcome(case: Case) -> Outcome:
    """Our parser, checker, compiler and evaluator on the case."""
    env = _environment(tuple(sorted((n, d) for n, (d, _) in case.variables.items())))
    try:
        program = compile_expression(case.expr, env)
    except CelCompileError as e:
        return Outcome(COMPILE_ERROR, message=str(e))
    except Exception as e:  # a crash is a finding, reported as such
        return Outcome(CRASH, message=f"{type(e).__name__} while compiling: {e}")
    try:
        result = program.evaluate({name: value for name, (_, value) in case.variables.items()})
        return Outcome(VALUE, canonical(result))
    except CelError as e:
        return Outcome(RUNTIME_ERROR, message=e.message)
    except Exception as e:
        return Outcome(CRASH, message=f"{type(e).__name__} while evaluating: {e}")


def difference(ours: Outcome, theirs: Outcome) -> str | None:
    """None when the outcomes agree, else the difference's name."""
    if ours.kind == CRASH:
        return "we crash"
    if ours.kind == theirs.kind and (ours.kind != VALUE or ours.value == theirs.value):
        return None
    if earlier(ours, theirs):
        return None
    return DIFFERENCES[(ours.kind, theirs.kind)]


def earlier(ours: Outcome, theirs: Outcome) -> bool:
    """The documented exception ``EARLIER``: we refuse at compile time a constant argument
    Kubernetes refuses when the call runs."""
    return (ours.kind == COMPILE_ERROR and theirs.kind == RUNTIME_ERROR
            and _EARLIER_MESSAGE.search(ours.message) is not None)


@dataclass(frozen=True)
class Result:
    case: Case
    ours: Outcome
    theirs: Outcome
    difference: str | None

    @property
    def cause(self) -> str:
        """The difference in a few words, for grouping: the message of the side that
        failed (positions and numbers blanked), or the area for a different value."""
        if self.difference is None:
            return ""
        if self.ours.kind == VALUE and self.theirs.kind == VALUE:
            return f"different value ({self.case.area})"
        # the side that failed; when both did, the one that failed at compile time
        errors = [(side, o) for side, o in (("ours", self.ours), ("Kubernetes", self.theirs))
                  if o.kind != VALUE]
        side, failed = min(errors, key=lambda error: error[1].kind != COMPILE_ERROR)
        return f"{self.difference} — {side}: {_gist(failed.message)}"


def _gist(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = re.sub(r"^ERROR: <input>:\d+:\d+: |^\w+ error at offset \d+: ", "", first)
    first = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", first) if "undeclared" not in first else first
    return re.sub(r"\d+", "N", first)[:110]


def run(cases: Sequence[Case], program: Path) -> list[Result]:
    """Every case through both sides."""
    answers = reference.evaluate(program, [c.request() for c in cases])
    results = []
    for case, answer in zip(cases, answers, strict=True):
        ours, theirs = our_outcome(case), reference_outcome(answer)
        results.append(Result(case, ours, theirs, difference(ours, theirs)))
    return results


@dataclass
class Tally:
    """Counts per area and per difference, with the first examples of each."""

    examples_per_kind: int = 3
    top_causes: int = 40
    total: Counter[str] = field(default_factory=Counter)
    agree: Counter[str] = field(default_factory=Counter)
    kinds: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    examples: dict[tuple[str, str], list[Result]] = field(
        default_factory=lambda: defaultdict(list))
    causes: Counter[str] = field(default_factory=Counter)
    cause_example: dict[str, Result] = field(default_factory=dict)
    earlier: Counter[str] = field(default_factory=Counter)  # agreeing by ``EARLIER``

    def add(self, results: Sequence[Result]) -> None:
        for r in results:
            self.total[r.case.area] += 1
            if r.difference is None:
                self.agree[r.case.area] += 1
                if earlier(r.ours, r.theirs):
                    self.earlier[r.case.area] += 1
                continue
            self.kinds[r.case.area][r.difference] += 1
            shown = self.examples[(r.case.area, r.difference)]
            if len(shown) < self.examples_per_kind and \
                    all(x.case.expr != r.case.expr for x in shown):
                shown.append(r)
            self.causes[r.cause] += 1
            self.cause_example.setdefault(r.cause, r)

    @property
    def agreement(self) -> float:
        total = sum(self.total.values())
        return sum(self.agree.values()) / total if total else 1.0

    def summary(self) -> str:
        total, agree = sum(self.total.values()), sum(self.agree.values())
        return (f"Kubernetes CEL differential: {agree}/{total} agree "
                f"({100 * self.agreement:.1f} %)")

    def table(self) -> str:
        """The per-area table (Markdown), then the differences of each area with examples."""
        lines = ["| area | total | agree | of which earlier | differ | agreement |",
                 "|---|---:|---:|---:|---:|---:|"]
        for area in sorted(self.total):
            n, ok, early = self.total[area], self.agree[area], self.earlier[area]
            lines.append(f"| {area} | {n} | {ok} | {early} | {n - ok} | "
                         f"{100 * ok / n:.1f} % |")
        n, ok = sum(self.total.values()), sum(self.agree.values())
        early = sum(self.earlier.values())
        lines.append(f"| **all** | **{n}** | **{ok}** | **{early}** | **{n - ok}** | "
                     f"**{100 * self.agreement:.1f} %** |")
        lines += ["", f"*of which earlier*: {EARLIER} (a documented exception, counted as "
                  "agreeing: both refuse the expression for the same reason)."]
        overall: Counter[str] = Counter()
        for kinds in self.kinds.values():
            overall.update(kinds)
        if overall:
            lines += ["", "| difference | count |", "|---|---:|"]
            lines += [f"| {kind} | {count} |" for kind, count in overall.most_common()]
            lines += ["", f"Most frequent causes ({self.top_causes} first):", "",
                      "| cause | count | example |", "|---|---:|---|"]
            for cause, count in self.causes.most_common(self.top_causes):
                r = self.cause_example[cause]
                lines.append(f"| {_table_cell(cause)} | {count} | "
                             f"`{_table_cell(r.case.expr, 70)}` |")
        for area in sorted(self.kinds):
            lines += ["", f"**{area}**", ""]
            for kind, count in self.kinds[area].most_common():
                lines.append(f"- {kind} ({count}):")
                for r in self.examples[(area, kind)]:
                    lines.append(f"  - `{_cell(r.case.expr)}` — ours: `{_cell(str(r.ours))}`;"
                                 f" Kubernetes: `{_cell(str(r.theirs))}`")
        return "\n".join(lines)


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table_cell(text: str, limit: int = 160) -> str:
    return _cell(text, limit).replace("|", "\\|")
