"""Seeded mutation of policies (YAML text, document structure, CEL text, type-preserving
poison), and what the hostile-input tests share: settings from the environment, a per-case
deadline, failure classes with counts and a minimised reproducer.

Every case draws from its own ``random.Random(f"{seed}:{test}:{case}")``, so one case can be
re-run alone (``POLICYSCHED_FUZZ_CASE``) and gives the same mutant as in the full run.

Environment (all optional):

- ``POLICYSCHED_FUZZ_SEED``: the base seed (default 9);
- ``POLICYSCHED_FUZZ_SCALE``: multiplies each test's number of cases (default 1; e.g. 20 for
  a long local run);
- ``POLICYSCHED_FUZZ_CASE``: run only this case index (to reproduce a reported failure);
- ``POLICYSCHED_FUZZ_DEADLINE``: seconds one case may take (default 3; the engine test
  gives each simulation twice that);
- ``POLICYSCHED_FUZZ_MEMORY``: MiB by which one case may raise the process's peak RSS, and
  the whole run its RSS (default 256);
- ``POLICYSCHED_FUZZ_MINIMISE``: seconds spent minimising the first case of each failure
  class (default 20 in all).
"""

from __future__ import annotations

import logging
import os
import random
import re
import resource
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

import policysched
from policysched.policy import ExtensionPoint

T = TypeVar("T")

PACKAGE = Path(policysched.__file__).resolve().parent
REPOSITORY = PACKAGE.parent


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class FuzzSettings:
    seed: int
    scale: float
    only: int | None
    deadline: float
    memory: int  # bytes one case may add to the peak RSS
    minimise: float  # seconds of minimisation per test run

    @classmethod
    def from_environment(cls) -> FuzzSettings:
        only = os.environ.get("POLICYSCHED_FUZZ_CASE")
        return cls(
            seed=int(os.environ.get("POLICYSCHED_FUZZ_SEED", "9")),
            scale=float(os.environ.get("POLICYSCHED_FUZZ_SCALE", "1")),
            only=int(only) if only else None,
            deadline=float(os.environ.get("POLICYSCHED_FUZZ_DEADLINE", "3")),
            memory=int(float(os.environ.get("POLICYSCHED_FUZZ_MEMORY", "256")) * 2**20),
            minimise=float(os.environ.get("POLICYSCHED_FUZZ_MINIMISE", "20")),
        )

    def cases(self, default: int) -> list[int]:
        """The case indices to run: ``default`` scaled, or the one asked for."""
        if self.only is not None:
            return [self.only]
        return list(range(max(1, round(default * self.scale))))

    def rng(self, test: str, case: int) -> random.Random:
        return random.Random(f"{self.seed}:{test}:{case}")

    def reproduce(self, test: str, case: int) -> str:
        return (f"POLICYSCHED_FUZZ_SEED={self.seed} POLICYSCHED_FUZZ_CASE={case} "
                f".venv/bin/pytest {test} -q")


# --------------------------------------------------------------------------- running one case


class CaseTimeout(BaseException):  # not an Exception: product code must not catch it
    """A case ran past its deadline (raised by SIGALRM in the main thread)."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ``CaseTimeout`` where the code is when ``seconds`` have passed (main thread
    only; elsewhere the caller's elapsed-time check still reports the case)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def peak_rss() -> int:
    """The process's peak resident set size, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss() -> int:
    """The process's resident set size now, in bytes (the peak where /proc is missing)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return peak_rss()


@dataclass
class Run:
    """What one bounded call did: its value or exception, its time and peak-RSS growth,
    and the errors the product logged (an exception it caught as a last resort)."""

    value: Any = None
    error: BaseException | None = None
    seconds: float = 0.0
    rss_growth: int = 0
    logged: list[logging.LogRecord] = field(default_factory=list)

    def logged_errors(self) -> dict[str, str]:
        """``logged error: Type at module:function`` → the first such record's message
        and traceback, per distinct logged error."""
        out: dict[str, str] = {}
        for record in self.logged:
            error = record.exc_info[1] if record.exc_info else None
            shown = where(error) if error is not None else record.getMessage()[:80]
            detail = record.getMessage()
            if error is not None:
                detail += "\n" + traceback_text(error)
            out.setdefault(f"logged error: {shown}", detail)
        return out


class _Collect(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def bounded(call: Callable[[], T], seconds: float) -> Run:
    """Call ``call`` under a deadline, catching everything it raises and collecting the
    errors the product logs."""
    run = Run()
    handler = _Collect(run.logged)
    logger = logging.getLogger(policysched.__name__)
    logger.addHandler(handler)
    before = peak_rss()
    started = time.perf_counter()
    try:
        with deadline(seconds):
            run.value = call()
    except (Exception, CaseTimeout) as e:
        run.error = e
    finally:
        logger.removeHandler(handler)
    run.seconds = time.perf_counter() - started
    run.rss_growth = peak_rss() - before
    return run


def where(error: BaseException) -> str:
    """``Type at policysched/module.py:function``: the innermost frame of the product (the
    test's own frame when the product is not on the stack)."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if Path(f.filename).resolve().is_relative_to(PACKAGE)]
    if not (inside or frames):
        return type(error).__name__
    frame = (inside or frames)[-1]
    path = Path(frame.filename).resolve()
    shown = path.relative_to(REPOSITORY) if path.is_relative_to(REPOSITORY) else path.name
    return f"{type(error).__name__} at {shown}:{frame.name}"


def error_class(error: BaseException) -> str:
    """The failure class of an exception: a time-out, or a crash, and where."""
    if isinstance(error, CaseTimeout):
        return f"timeout: {where(error).removeprefix('CaseTimeout ')}"
    return f"exception: {where(error)}"


def traceback_text(error: BaseException, lines: int = 12) -> str:
    text = "".join(traceback.format_exception(error)).rstrip().splitlines()
    return "\n".join(text[-lines:])


# --------------------------------------------------------------------------- failures


@dataclass
class Failure:
    case: int
    detail: str
    reproducer: str = ""


@dataclass
class Failures:
    """Failures grouped by class (``kind: where``), each with the cases that showed it; the
    first case of a class keeps a reproducer (minimised when ``minimiser`` is given)."""

    test: str
    settings: FuzzSettings
    classes: dict[str, list[Failure]] = field(default_factory=dict)
    tried: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    rss_at_start: int = field(default_factory=current_rss)
    _minimise_left: float = -1.0

    def count(self, outcome: str, n: int = 1) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + n

    def add(self, key: str, case: int, detail: str,
            reproducer: Callable[[float], str] | str = "") -> None:
        """Record a failure of class ``key``; ``reproducer(seconds)`` is called (with a
        time budget) only for the first case of a class."""
        failures = self.classes.setdefault(key, [])
        text = ""
        if not failures:
            if self._minimise_left < 0:
                self._minimise_left = self.settings.minimise
            if callable(reproducer):
                started = time.perf_counter()
                text = reproducer(max(0.0, self._minimise_left))
                self._minimise_left -= time.perf_counter() - started
            else:
                text = reproducer
        failures.append(Failure(case, detail, text))

    def finish(self) -> None:
        """Check that the whole batch kept its memory, print the summary, and fail the
        test with the report when any case failed."""
        grown = current_rss() - self.rss_at_start
        if grown > self.settings.memory:
            self.add("memory: RSS grew over the batch", -1, f"{grown >> 20} MiB")
        print(self.summary())
        if self.classes:
            pytest.fail(self.report(), pytrace=False)

    def summary(self) -> str:
        seconds = time.perf_counter() - self.started
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        return (f"{self.test}: seed {self.settings.seed}, {self.tried} cases in "
                f"{seconds:.1f} s ({outcomes})")

    def report(self) -> str:
        lines = [self.summary(), f"{len(self.classes)} failure class(es):"]
        for key, failures in sorted(self.classes.items(), key=lambda kv: -len(kv[1])):
            first = failures[0]
            cases = ", ".join(str(f.case) for f in failures[:12])
            more = f" (+{len(failures) - 12})" if len(failures) > 12 else ""
            lines += [
                "",
                f"== {key}: {len(failures)} case(s): {cases}{more}",
                f"   first: case {first.case}: {first.detail}",
                f"   reproduce: {self.settings.reproduce(self.test, first.case)}",
            ]
            if first.reproducer:
                lines += ["   minimal case:", indent(first.reproducer, "   | ")]
        return "\n".join(lines)


def indent(text: str, prefix: str, limit: int = 60) -> str:
    lines = text.splitlines() or [""]
    shown = [prefix + line[:240] for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"{prefix}... ({len(lines) - limit} more lines)")
    return "\n".join(shown)


def minimise(items: Sequence[T], still_fails: Callable[[list[T]], bool],
             seconds: float) -> list[T]:
    """Greedy delta debugging: drop chunks of ``items`` (halves, quarters, ... single
    items) while ``still_fails`` holds, until nothing more can go or time runs out."""
    current = list(items)
    stop = time.perf_counter() + seconds
    chunk = max(1, len(current) // 2)
    while chunk >= 1 and time.perf_counter() < stop:
        i = 0
        while i < len(current) and time.perf_counter() < stop:
            candidate = current[:i] + current[i + chunk:]
            if candidate and still_fails(candidate):
                current = candidate
            else:
                i += chunk
        chunk //= 2
    return current


# --------------------------------------------------------------------------- CEL text

_CEL_TOKEN = re.compile(
    r"""(?P<string>[rRbB]{0,2}(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
      |(?P<number>0x[0-9a-fA-F]+u?|\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?
         |\d+[eE][+-]?\d+|\d+u?)
      |(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      |(?P<op>&&|\|\||==|!=|<=|>=|[-+*/%<>!?:.,()\[\]{}])
      |(?P<space>\s+)
      |(?P<other>.)""",
    re.X | re.S,
)

Token = tuple[str, str]  # (kind, text)


def cel_tokens(text: str) -> list[Token]:
    return [(m.lastgroup or "other", m.group()) for m in _CEL_TOKEN.finditer(text)]


FLIPS = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "==", "&&": "||",
         "||": "&&", "+": "-", "-": "+", "*": "/", "/": "%", "%": "*", "!": "", "?": ":",
         ":": "?", ".": ",", ",": ".", "(": "[", "[": "(", ")": "]", "]": ")"}
EXTREME_NUMBERS = (
    "0", "-1", "1", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
    "18446744073709551615u", "18446744073709551616u", "0u", "0x7fffffffffffffff",
    "0xffffffffffffffff", "1e308", "1e309", "-1e308", "0.0", "-0.0", "4.9e-324", "1.0e-400",
    "99999999999999999999999999999999", "00", "1__0", "1e", ".5",
)
BAD_REGEXES = ("a**", "[z-a]", "(?<=a)b", "(", "a{2,1}", "\\\\8",
               "[[:foo:]]", "x{1001}", "\\\\p{Nope}", "*")
HOSTILE_STRINGS = (
    *(f"'{r}'" for r in BAD_REGEXES),
    "'8Ei'", "'9999999999999999999999Ei'", "'1.5.5'", "'-'", "''", "'1e400'", "'0.0001m'",
    "'\\u0000'", "'\\xff'", "'\\U0010ffff'", "'\\ud800'", "'é'", "'\U0001f600'", "'%'",
    "'%s%d'", "b'\\xff'", "r'\\'", "'''x'''", '"\\"', "'a' * 3",
)
IDENTIFIERS = ("pod", "node", "nodes", "pods", "nodePods", "now", "params", "variables",
               "a", "b", "victim", "self", "has", "size", "int", "double", "string", "null",
               "true", "in", "dyn", "type", "cel", "math", "quantity", "__import__",
               "podsWithAffinity", "x")
INSERTS = ("(", ")", "[", "]", "{", "}", ".", "!", "?", ":", ",", "-", "in", "null", "1/0",
           "has(", "&&", "||", "==", "'", '"', "`", "\\", "#", ";", "@", "$", "=", "=>",
           ".?", "?.", "..", "[]", "{}", "()")
ODD_CHARS = ("\u00e9", "\u200b", "\u202e", "\U0001f600", "\x00", "\t", "\r", "\u2028",
             "\ufeff", "\x85", "\x7f", "\x1b", "\uffff", "\u0301")


# size mutations are rare: each costs the product (rightly) far more than the others
CEL_OPS = ("delete", "duplicate", "swap", "flip", "number", "string", "insert", "truncate",
           "odd-char", "identifier", "nest", "repeat", "huge-literal")
CEL_OP_WEIGHTS = (2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 0.15, 0.1, 0.05)


def _non_space(tokens: list[Token]) -> list[int]:
    return [i for i, (kind, _) in enumerate(tokens) if kind != "space"]


def mutate_cel(text: str, rng: random.Random) -> tuple[str, str]:
    """One syntactic mutation of CEL ``text``: the new text and what was done."""
    tokens = cel_tokens(text)
    solid = _non_space(tokens)
    if not solid:
        return rng.choice(INSERTS), "replace empty"
    op = rng.choices(CEL_OPS, CEL_OP_WEIGHTS)[0]
    i = rng.choice(solid)
    kind, token = tokens[i]
    if op == "delete":
        del tokens[i]
    elif op == "duplicate":
        tokens.insert(i, (kind, token))
    elif op == "swap" and len(solid) > 1:
        j = solid[min(solid.index(i) + 1, len(solid) - 1)]
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif op == "flip":
        ops = [j for j in solid if tokens[j][1] in FLIPS]
        if ops:
            i = rng.choice(ops)
            tokens[i] = ("op", FLIPS[tokens[i][1]])
    elif op == "number":
        numbers = [j for j in solid if tokens[j][0] == "number"] or [i]
        tokens[rng.choice(numbers)] = ("number", rng.choice(EXTREME_NUMBERS))
    elif op == "string":
        strings = [j for j in solid if tokens[j][0] == "string"] or [i]
        tokens[rng.choice(strings)] = ("string", rng.choice(HOSTILE_STRINGS))
    elif op == "insert":
        tokens.insert(rng.randrange(len(tokens) + 1), ("op", rng.choice(INSERTS)))
    elif op == "truncate":
        cut = rng.randrange(len(text) + 1)
        return text[:cut], f"truncate at {cut}"
    elif op == "odd-char":
        at = rng.randrange(len(text) + 1)
        char = rng.choice(ODD_CHARS)
        return text[:at] + char + text[at:], f"insert {char!r} at {at}"
    elif op == "identifier":
        idents = [j for j in solid if tokens[j][0] == "ident"] or [i]
        tokens[rng.choice(idents)] = ("ident", rng.choice(IDENTIFIERS))
    elif op == "nest":
        depth = rng.choice((10, 60, 250, 1000, 5000))
        opener, closer = rng.choice((("(", ")"), ("[", "][0]"), ("!", ""), ("-", ""),
                                     ("{'k': ", "}['k']")))
        return f"{opener * depth}{text}{closer * depth}", f"nest {opener!r} x{depth}"
    elif op == "repeat":
        count = rng.choice((10, 200, 2000))
        joiner = rng.choice((" && ", " || ", " + ", ", "))
        return joiner.join([f"({text})"] * count), f"repeat x{count} with {joiner.strip()}"
    elif op == "huge-literal":
        size = rng.choice((10_000, 200_000))
        literal = "'" + "x" * size + "'"
        return f"{text} && {literal}.size() > 0", f"{size}-char literal"
    out = "".join(t for _, t in tokens)
    return out, f"{op} token {i} ({token!r})"


def bad_regex_conjunct(text: str, rng: random.Random) -> tuple[str, str]:
    """``text`` (a bool expression) && a regex function on an invalid constant pattern:
    ``validate`` must reject it (RE2 syntax of constant patterns)."""
    pattern = rng.choice(BAD_REGEXES)
    call = rng.choice(("pod.name.matches('{p}')", "matches(pod.name, '{p}')",
                       "pod.name.find('{p}') != ''", "pod.name.findAll('{p}').size() > 0"))
    return f"({text}) && {call.format(p=pattern)}", f"invalid RE2 pattern {pattern!r}"


# --- type-preserving poison for the engine: the policy stays valid, its values do not

BOOL_POISON = (
    "1 / (size(pod.name) - size(pod.name)) == 0",   # division by zero
    "int(pod.name) > 0",                              # bad conversion
    "sign(quantity(pod.name)) > 0",                   # bad quantity
    "pod.name.matches(pod.name + '(')",               # invalid pattern at run time
    "[1, 2, 3][size(pod.name) + 2] > 0",              # index out of range
    "{'a': 1}[pod.name] > 0",                         # no such key
    "9223372036854775807 + size(pod.name) > 0",       # int64 overflow
    "double(size(pod.name)) / 0.0 > 0.0",             # +Inf, no error
    "timestamp(pod.name) > timestamp('2000-01-01T00:00:00Z')",
    "pod.labels['no-such-label'] == 'x'",
)
NUMBER_POISON = (
    "double({e}) / 0.0",                   # +-Inf, or NaN when the value is 0
    "-double({e}) / 0.0",
    "(double({e}) - double({e})) / 0.0",   # NaN
    "double({e}) * 1e308 * 1e308",         # Inf
    "double({e}) * (0.0 / 0.0)",           # NaN
    "int(double({e}) / 0.0)",              # error: Inf to int
    "int({e}) * 9223372036854775807",      # overflow error (or a huge value)
    "int({e}) - 9223372036854775807 - 1",  # -2^63
    "9223372036854775807",
    "-9223372036854775807 - 1",
    "1e308",
    "-1e308",
)
INT_POISON = ("({e}) * 9223372036854775807", "({e}) / 0", "-9223372036854775807 - 1 - ({e})",
              "9223372036854775807", "-1", "0", "int(pod.name)")
STRING_POISON = ("({e}) + '\\u0000'", "'node-0'", "'node-1'", "'poison-0'", "''",
                 "'no-such-node'", "string(1 / (size(pod.name) - size(pod.name)))",
                 "({e}) + ({e})", "'x' + string(9223372036854775807)")


def poison_cel(text: str, result: str, rng: random.Random) -> tuple[str, str]:
    """A mutation of ``text`` that keeps its ``result`` type ("bool", "number", "int",
    "string" or "any") but may err, overflow, or give NaN / Inf at run time."""
    e = f"({text})"
    choice = rng.random()
    if choice < 0.25:  # flip an operator or push a number to an extreme: still well-typed
        tokens = cel_tokens(text)
        flips = [i for i, (_, t) in enumerate(tokens) if t in ("<", "<=", ">", ">=", "==",
                                                                 "!=", "&&", "||", "+", "-")]
        numbers = [i for i, (k, _) in enumerate(tokens) if k == "number"]
        if numbers and (not flips or rng.random() < 0.5):
            i = rng.choice(numbers)
            extreme = rng.choice(("0", "-1", "9223372036854775807", "-9223372036854775807",
                                  "4611686018427387904")) if "." not in tokens[i][1] else \
                rng.choice(("0.0", "1e308", "-1e308", "5e-324"))
            tokens[i] = ("number", extreme)
            return "".join(t for _, t in tokens), f"constant -> {extreme}"
        if flips:
            i = rng.choice(flips)
            tokens[i] = ("op", FLIPS[tokens[i][1]])
            return "".join(t for _, t in tokens), f"flip to {tokens[i][1]!r}"
    if choice < 0.35:  # any type: an error for every pod the rule sees
        return f"[{e}][size(pod.name)]", "index out of range around the expression"
    if result == "bool":
        poison = rng.choice(BOOL_POISON)
        joined = rng.choice(("{e} && {p}", "{p} && {e}", "{e} || {p}", "{p}"))
        return joined.format(e=e, p=poison), f"bool poison {poison!r}"
    if result == "number":
        poison = rng.choice(NUMBER_POISON)
        return poison.format(e=e), f"number poison {poison!r}"
    if result == "int":
        poison = rng.choice(INT_POISON)
        return poison.format(e=e), f"int poison {poison!r}"
    if result == "string":
        poison = rng.choice(STRING_POISON)
        return poison.format(e=e), f"string poison {poison!r}"
    return f"[{e}][size(pod.name)]", "index out of range around the expression"


# where CEL is in a SchedulingPolicy, and the type of its value
CEL_RESULTS = {"expression": "bool", "messageExpression": "string", "retryAfter": "int",
               "nodeNames": "any", "victims": "bool", "target": "string", "group": "string",
               "minMember": "int", "counter": "string", "amount": "int", "limit": "int",
               "less": "bool", "reasons": "any", "unresolvableExpression": "bool"}
POINTS = tuple(p.value for p in ExtensionPoint)


def cel_fields(document: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """(path, result type: "bool", "number", "int", "string" or "any") of every CEL text
    of a SchedulingPolicy document."""
    spec = document["spec"]
    out: list[tuple[tuple[Any, ...], str]] = []
    if isinstance(spec.get("match"), str):
        out.append((("spec", "match"), "bool"))
    for i in range(len(spec.get("variables") or ())):
        out.append((("spec", "variables", i, "expression"), "any"))
    for point in POINTS:
        for i, rule in enumerate(spec.get(point) or ()):
            for key, value in rule.items():
                path = ("spec", point, i, key)
                if key in CEL_RESULTS and isinstance(value, str):
                    number = point == "score" and key == "expression"
                    out.append((path, "number" if number else CEL_RESULTS[key]))
                elif key == "keys" and isinstance(value, list):
                    out += [((*path, j), "any") for j in range(len(value))]
                elif key in ("labels", "annotations") and isinstance(value, dict):
                    out += [((*path, k), "string") for k in value]
    return out


# --------------------------------------------------------------------------- YAML text

YAML_SPECIALS = (":", "- ", "&a ", "*a", "!foo ", "!!python/object/apply:os.system ", "{",
                 "}", "[", "]", "|", ">", "%", "@", "`", '"', "'", "# ", "? ", ",", "<<: *a",
                 "!!binary ", "!!timestamp ", "\\")


def mutate_yaml_text(text: str, rng: random.Random) -> tuple[str, str]:
    """One mutation of YAML ``text`` as lines and characters."""
    lines = text.split("\n")
    op = rng.choice(("delete-line", "duplicate-line", "duplicate-line", "swap-lines",
                     "indent", "dedent", "tab", "insert", "insert", "delete-char",
                     "truncate", "odd-char", "crlf", "anchor", "document", "directive"))
    n = rng.randrange(len(lines))
    if op == "delete-line":
        del lines[n]
    elif op == "duplicate-line":
        lines.insert(n, lines[n])
    elif op == "swap-lines" and n + 1 < len(lines):
        lines[n], lines[n + 1] = lines[n + 1], lines[n]
    elif op == "indent":
        lines[n] = " " * rng.choice((1, 2, 4)) + lines[n]
    elif op == "dedent":
        lines[n] = lines[n][rng.choice((1, 2)):] if lines[n].startswith("  ") else lines[n]
    elif op == "tab":
        lines[n] = "\t" + lines[n].lstrip(" ")
    elif op == "insert":
        at = rng.randrange(len(lines[n]) + 1)
        lines[n] = lines[n][:at] + rng.choice(YAML_SPECIALS) + lines[n][at:]
    elif op == "delete-char" and lines[n]:
        at = rng.randrange(len(lines[n]))
        lines[n] = lines[n][:at] + lines[n][at + 1:]
    elif op == "truncate":
        cut = rng.randrange(len(text) + 1)
        return text[:cut], f"truncate at {cut}"
    elif op == "odd-char":
        at = rng.randrange(len(text) + 1)
        char = rng.choice((*ODD_CHARS, "\ud800"))  # a lone surrogate: not UTF-8 once written
        return text[:at] + char + text[at:], f"insert {char!r} at {at}"
    elif op == "crlf":
        return text.replace("\n", rng.choice(("\r\n", "\r", "\u2028"))), "line breaks"
    elif op == "anchor":
        m = rng.randrange(len(lines))
        lines[n] = re.sub(r":( |$)", r": &a\1", lines[n], count=1)
        lines[m] = re.sub(r": .*$", ": *a", lines[m], count=1)
    elif op == "document":
        lines.insert(n, rng.choice(("---", "...", "--- |", "--- !foo", "---\n---")))
    elif op == "directive":
        lines.insert(0, rng.choice(("%YAML 1.1", "%YAML 1.3", "%TAG ! tag:x,2000:",
                                    "%FOO bar", "%YAML 1.1\n%YAML 1.1")))
        if not text.lstrip().startswith("---"):
            lines.insert(1, "---")
    return "\n".join(lines), f"{op} at line {n + 1}"


def write_text(path: Path, text: str) -> None:
    """``text`` as UTF-8, lone surrogates kept as the bytes they stand for (invalid
    UTF-8: the loader must say so, not crash)."""
    path.write_bytes(text.encode("utf-8", "surrogatepass"))


# --------------------------------------------------------------------------- document data

ODD_VALUES: tuple[Any, ...] = (
    0, -1, 2**63, -(2**63) - 1, 1.5e308, float("inf"), float("nan"), True, False, None, [],
    {}, "", " ", "x" * 70, "\u00e9\U0001f600", "\x00", [[[]]], {"a": {"b": {}}}, "0x1F",
    "1e3", "yes", "~", "null", "!!str", "*a",
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def nested(depth: int, leaf: Any = 1, rng: random.Random | None = None) -> Any:
    value = leaf
    for i in range(depth):
        as_list = rng.random() < 0.5 if rng else i % 2 == 0
        value = [value] if as_list else {"k": value}
    return value


def mutate_data(document: Any, rng: random.Random, points: Sequence[str]) -> str:
    """One structural mutation of ``document`` (mutated in place); ``points`` are the
    extension point names, for moving a rule to the wrong one. Returns what was done."""
    paths = [p for p in _paths(document) if p]
    if not paths:
        return "nothing to mutate"
    path = rng.choice(paths)
    parent, key = _at(document, path[:-1]), path[-1]
    op = rng.choice(("drop", "drop", "duplicate", "retype", "retype", "retype", "rename",
                     "nest", "huge", "unicode", "wrong-point", "enum"))
    if op == "drop":
        del parent[key]
    elif op == "duplicate" and isinstance(parent, list):
        parent.insert(key, _copy(parent[key]))
    elif op == "retype":
        parent[key] = _copy(rng.choice(ODD_VALUES))
    elif op == "rename" and isinstance(parent, dict):
        new = rng.choice((f"{key}x", str(key).upper(), f"{key}\u00e9", "", " ", f"{key}:",
                          "<<", "?", str(key)[:-1]))
        parent[new] = parent.pop(key)
    elif op == "nest":
        parent[key] = nested(rng.choice((5, 50, 200)), parent[key], rng)
    elif op == "huge":
        parent[key] = rng.choice(("x", "é", "a b ")) * rng.choice((1000, 30_000))
    elif op == "unicode" and isinstance(parent[key], str):
        s = parent[key]
        at = rng.randrange(len(s) + 1)
        parent[key] = s[:at] + rng.choice(ODD_CHARS) + s[at:]
    elif op == "wrong-point":
        spec = document.get("spec") if isinstance(document, dict) else None
        if isinstance(spec, dict):
            moved = [k for k in spec if k in points]
            if moved:
                old = rng.choice(moved)
                spec[rng.choice(points)] = spec.pop(old)
    elif op == "enum":
        for p in paths:
            if p[-1] in ("normalize", "failurePolicy", "onFalse", "kind", "apiVersion"):
                _at(document, p[:-1])[p[-1]] = rng.choice(("maximum", "ignore", "", "Fail ",
                                                           "SchedulingPolicyX", "v1"))
                break
    return f"{op} at {'.'.join(map(str, path))}"


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
