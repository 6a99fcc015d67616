"""Hostile policies through the path ``policysched validate`` takes (``load_policy_set`` on
a file, then ``render_text`` / ``render_json``): seeded mutants of the shipped policies —
YAML text, document structure, CEL text, ConfigMaps holding them, and size bombs. Each must,
in bounded time and memory and without raising or logging an error:

- be valid, or give diagnostics that are positioned: the file, a line and column inside its
  text, the policy and rule around the position (unless the text was refused while it was
  read), and for a mutated rule expression an error inside that expression;
- be refused when it must be: an invalid RE2 constant pattern, a ConfigMap key the API
  server refuses;
- inside a ConfigMap, point at the same character as the same policy on its own.

A sample goes through the CLI: exit 1 with the errors (0 when valid), never a traceback.
Failures are collected by class over the whole run and reported together with the seed and
a minimised case (see ``tests/mutation.py`` for the knobs: seed, scale, one case).
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from policysched.cli import main
from policysched.policy import (
    Diagnostic,
    DiagnosticKind,
    load_policy_set,
    render_json,
    render_text,
)
from policysched.policy import messages as policy_messages
from tests.mutation import (
    POINTS,
    REPOSITORY,
    Failures,
    FuzzSettings,
    bad_regex_conjunct,
    bounded,
    cel_fields,
    error_class,
    minimise,
    mutate_cel,
    mutate_data,
    mutate_yaml_text,
    traceback_text,
    where,
    write_text,
)

TEST = "tests/policy/test_hostile_policies.py"
CASES = 1500
CLI_SAMPLE = 12
SOURCES = sorted((REPOSITORY / "policies").glob("*.yaml"))
UNPOSITIONED = frozenset({policy_messages.NO_POLICIES, policy_messages.NO_YAML_FILES})
NOT_ATTRIBUTED = frozenset({DiagnosticKind.YAML, DiagnosticKind.IO, DiagnosticKind.DOCUMENT})
# limits found while the YAML is read: like YAML errors, before any policy exists
PARSE_LIMITS = tuple(t.split("{")[0] for t in (
    policy_messages.TOO_DEEP, policy_messages.ALIAS_EXPANSION, policy_messages.TOO_MANY_BYTES,
    policy_messages.TOO_MANY_DOCUMENTS))
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the test's own parsing (same marks)
MAX_TEST_DEPTH = 500  # deeper texts are not parsed by the test itself (libyaml recurses)
YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
VALID_KEYS = ("policy.yaml", "a-b_c.d", "p" * 253)
INVALID_KEYS = ("../../etc/passwd", "", "a\nb", ".", "..", "a/b", "p" * 254, "with space",
                "é.yaml")


# --------------------------------------------------------------------------- the mutants


@dataclass
class Mutant:
    strategy: str
    text: str
    what: list[str] = field(default_factory=list)
    cel_path: tuple[Any, ...] | None = None  # the mutated CEL field, in the document
    must_reject: str = ""                    # what validate must report as an error
    inner: str | None = None                 # a ConfigMap's embedded policy text


class _Styled(str):
    """A string dumped in a chosen scalar style (None: PyYAML's choice)."""

    style: str | None = None


class _Dumper(yaml.SafeDumper):
    """The Python emitter: it escapes lone surrogates, which the C one refuses."""


class _FastDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The C emitter when PyYAML has it (only the test's speed depends on it)."""


def _represent_styled(dumper: yaml.SafeDumper, data: _Styled) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style=data.style)


_Dumper.add_representer(_Styled, _represent_styled)
_FastDumper.add_representer(_Styled, _represent_styled)


def styled(text: str, rng: random.Random) -> _Styled:
    value = _Styled(text)
    value.style = rng.choice((None, "'", '"', "|", ">"))
    return value


def dump(document: Any, rng: random.Random) -> str:
    options = {"sort_keys": False, "allow_unicode": rng.random() < 0.7,
               "default_flow_style": rng.random() < 0.15, "width": rng.choice((80, 10**6))}
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))  # PyYAML's representer recurses per level
    try:
        return yaml.dump(document, Dumper=_FastDumper, **options)  # type: ignore[call-overload]
    except UnicodeEncodeError:  # a lone surrogate: only the Python emitter escapes it
        return yaml.dump(document, Dumper=_Dumper, **options)  # type: ignore[call-overload]
    finally:
        sys.setrecursionlimit(limit)


@cache
def _documents() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(file name, data) of every shipped SchedulingPolicy."""
    out = []
    for path in SOURCES:
        data = yaml.safe_load(path.read_text())
        if data.get("kind") == "SchedulingPolicy":
            out.append((path.name, data))
    return tuple(out)


def mini_policy(rng: random.Random) -> dict[str, Any]:
    """A shipped policy cut down to 1-3 of its rules (params, variables, aggregates, match
    kept)."""
    _, data = rng.choice(_documents())
    spec = data["spec"]
    rules = [(p, r) for p in POINTS for r in spec.get(p) or ()]
    chosen = rng.sample(rules, min(len(rules), rng.randint(1, 3)))
    out_spec: dict[str, Any] = {k: v for k, v in spec.items() if k not in POINTS}
    for point, rule in chosen:
        out_spec.setdefault(point, []).append(dict(rule))
    if "variables" in spec:  # (aggregates, all kept, read variables too)
        readers = [r for _, r in chosen] + spec.get("aggregates", [])
        used = _used_variables(json.dumps(readers), spec["variables"])
        out_spec["variables"] = [v for v in spec["variables"] if v["name"] in used]
    return {"apiVersion": data["apiVersion"], "kind": data["kind"],
            "metadata": {"name": data["metadata"]["name"]}, "spec": _deep_copy(out_spec)}


def _used_variables(text: str, declared: list[dict[str, Any]]) -> set[str]:
    """The variables ``text`` reads, and those they read in turn."""
    expressions = {v["name"]: v["expression"] for v in declared}
    used: set[str] = set()
    pending = set(re.findall(r"variables\.(\w+)", text))
    while pending:
        name = pending.pop()
        if name in expressions and name not in used:
            used.add(name)
            pending |= set(re.findall(r"variables\.(\w+)", expressions[name]))
    return used


def _deep_copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def cel_mutant(rng: random.Random) -> Mutant:
    document = mini_policy(rng)
    path, result = rng.choice(cel_fields(document))
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    text: str = parent[path[-1]]
    mutant = Mutant("cel", "", cel_path=path)
    if result == "bool" and rng.random() < 0.12:
        text, what = bad_regex_conjunct(text, rng)
        mutant.must_reject = "invalid RE2 constant pattern"
        mutant.what.append(what)
    else:
        for _ in range(rng.choice((1, 1, 2, 3))):
            text, what = mutate_cel(text, rng)
            mutant.what.append(what)
    parent[path[-1]] = styled(text, rng)
    mutant.text = dump(document, rng)
    return mutant


def structure_mutant(rng: random.Random) -> Mutant:
    document = mini_policy(rng)
    mutant = Mutant("structure", "")
    for _ in range(rng.choice((1, 1, 2, 3))):
        mutant.what.append(mutate_data(document, rng, POINTS))
    mutant.text = dump(document, rng)
    return mutant


def text_mutant(rng: random.Random) -> Mutant:
    source = rng.choice(SOURCES)
    text = source.read_text()
    mutant = Mutant("text", "", what=[source.name])
    for _ in range(rng.choice((1, 1, 2, 3))):
        text, what = mutate_yaml_text(text, rng)
        mutant.what.append(what)
    mutant.text = text
    return mutant


def configmap_mutant(rng: random.Random) -> Mutant:
    """A ConfigMap whose key holds a policy (shipped, or mutated), in a chosen style."""
    invalid = rng.random() < 0.2  # then a valid policy: the key is the only error
    inner = _shipped(rng) if invalid else \
        rng.choice((cel_mutant, structure_mutant, text_mutant, _shipped))(rng)
    key = rng.choice(INVALID_KEYS if invalid else VALID_KEYS)
    value = _Styled(inner.text)
    value.style = rng.choice(("|", "|", ">", '"'))
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "policies", "namespace": "kube-system"},
                 "data": {key: value}}
    text = dump(configmap, rng)
    mutant = Mutant("configmap", text, inner=embedded(text, key),
                    what=[f"{inner.strategy} in {value.style} key {key!r}", *inner.what])
    if invalid:
        mutant.must_reject = "ConfigMap key the API server refuses"
    return mutant


def embedded(text: str, key: str) -> str | None:
    """The value of ``key`` in the ConfigMap ``text`` as YAML reads it (PyYAML's emitter
    does not always give back what it was given, e.g. in folded scalars)."""
    try:
        value = yaml.load(text, Loader=LOADER)["data"][key]
    except (yaml.YAMLError, KeyError, TypeError, UnicodeEncodeError):
        return None
    return value if isinstance(value, str) else None


def _shipped(rng: random.Random) -> Mutant:
    source = rng.choice([s for s in SOURCES if s.name != "scheduler-config.yaml"])
    return Mutant("shipped", source.read_text(), what=[source.name])


BOMB_HEAD = ("apiVersion: policysched.io/v1alpha1\nkind: SchedulingPolicy\n"
             "metadata: {name: bomb}\nspec:\n")


def alias_bomb(width: int, depth: int) -> str:
    lines = [f"    l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, depth)]
    return BOMB_HEAD + "  params:\n" + "\n".join(lines) + "\n"


def flow_nesting(depth: int) -> str:
    return BOMB_HEAD + "  params:\n    deep: " + "[" * depth + "1" + "]" * depth + "\n"


def block_nesting(depth: int) -> str:
    return BOMB_HEAD + "  params:\n    deep:\n" + "".join(
        " " * (6 + 2 * i) + "-\n" for i in range(depth)) + " " * (6 + 2 * depth) + "x\n"


def many_rules(count: int) -> str:
    return BOMB_HEAD + "  filter:\n" + "".join(
        f"  - {{name: r{i}, expression: 'pod.priority > {i}'}}\n" for i in range(count))


def many_documents(count: int) -> str:
    return "---\n".join(BOMB_HEAD.replace("bomb", f"bomb-{i}")
                        + "  filter:\n  - {name: r, expression: 'true'}\n"
                        for i in range(count))


def long_expression(terms: int) -> str:
    return (BOMB_HEAD + "  filter:\n  - name: long\n    expression: "
            + " + ".join(["pod.priority"] * terms) + " > 0\n")


def long_message(size: int) -> str:
    return (BOMB_HEAD + "  filter:\n  - name: long\n    expression: 'true'\n    message: "
            + "x" * size + "\n")


# Size and shape, the same in every run (the first cases): some within the loader's limits,
# some far past them; either way validate must answer (valid, or a positioned error) in time.
BOMBS: tuple[tuple[str, Callable[[], str]], ...] = (
    ("alias bomb 10^3", lambda: alias_bomb(10, 3)),
    ("alias bomb 9^9", lambda: alias_bomb(9, 9)),
    ("alias bomb 2^40", lambda: alias_bomb(2, 40)),
    ("flow nesting 50", lambda: flow_nesting(50)),
    ("flow nesting 100000", lambda: flow_nesting(100_000)),
    ("block nesting 40", lambda: block_nesting(40)),
    ("block nesting 2000", lambda: block_nesting(2000)),
    ("200 rules", lambda: many_rules(200)),
    ("20000 rules", lambda: many_rules(20_000)),
    ("150 documents", lambda: many_documents(150)),
    ("3000 documents", lambda: many_documents(3000)),
    ("expression of 500 terms", lambda: long_expression(500)),
    ("expression of 400000 terms", lambda: long_expression(400_000)),
    ("5000000-char message", lambda: long_message(5_000_000)),
)


def bomb_mutant(case: int) -> Mutant:
    label, make = BOMBS[case]
    return Mutant("bomb", make(), what=[label])


STRATEGIES: tuple[tuple[Callable[[random.Random], Mutant], float], ...] = (
    (cel_mutant, 0.45), (structure_mutant, 0.2), (text_mutant, 0.22),
    (configmap_mutant, 0.13),
)


def make_mutant(case: int, rng: random.Random) -> Mutant:
    if case < len(BOMBS):
        return bomb_mutant(case)
    makers, weights = zip(*STRATEGIES, strict=True)
    return rng.choices(makers, weights)[0](rng)


# --------------------------------------------------------------------------- the checks


def validate(path: Path) -> tuple[Any, str, str]:
    """What ``policysched validate`` computes: the policy set and both renderings."""
    policy_set = load_policy_set([path])
    return (policy_set, render_text(policy_set.diagnostics, color=True),
            render_json(policy_set.diagnostics))


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in YAML_BREAK.finditer(text)]


def source_index(starts: list[int], diagnostic: Diagnostic) -> int:
    assert diagnostic.line is not None and diagnostic.column is not None
    return starts[diagnostic.line - 1] + diagnostic.column - 1


def position_problems(d: Diagnostic, label: str, text: str, starts: list[int]) -> list[str]:
    if d.path != label:
        return [f"position: path {d.path!r} is not the file"]
    if d.line is None or d.column is None:
        if d.message in UNPOSITIONED:
            return []
        return [f"position: {d.kind} without line/column"]
    if not 1 <= d.line <= len(starts):
        return [f"position: {d.kind} line {d.line} outside 1..{len(starts)}"]
    end = starts[d.line] if d.line < len(starts) else len(text)
    line_text = YAML_BREAK.sub("", text[starts[d.line - 1]:end])
    if not 1 <= d.column <= len(line_text) + 1:
        return [f"position: {d.kind} column {d.column} outside 1..{len(line_text) + 1}"]
    if d.line_text is not None and not line_text.startswith(d.line_text):
        return [f"position: {d.kind} caret line is not line {d.line} of the file"]
    return []


@dataclass(frozen=True)
class RuleSpan:
    start: int
    end: int
    policy: str | None
    rule: str


def compose_all(text: str) -> list[yaml.Node] | None:
    """The YAML nodes of ``text``; None when it is not YAML or too deep for the test's own
    (C) parser to read safely."""
    depth = deepest = 0
    for char in text:
        depth += 1 if char in "[{" else -1 if char in "]}" else 0
        deepest = max(deepest, depth)
    indent = max((len(line) - len(line.lstrip(" ")) for line in text.split("\n")), default=0)
    if deepest > MAX_TEST_DEPTH or indent > 2 * MAX_TEST_DEPTH:
        return None
    try:
        return list(yaml.compose_all(text, Loader=LOADER))
    except (yaml.YAMLError, RecursionError):
        return None


def rule_spans(text: str) -> list[RuleSpan] | None:
    """Where each rule of each SchedulingPolicy of ``text`` is (None when the text is not
    YAML the test can read, or shares nodes through aliases)."""
    roots = compose_all(text)
    if roots is None or any(_shares_nodes(root) for root in roots):
        return None
    spans: list[RuleSpan] = []
    for root in roots:
        top = _mapping(root)
        if top is None or _scalar(top.get("kind")) != "SchedulingPolicy":
            continue
        metadata = _mapping(top.get("metadata"))
        name_node = metadata.get("name") if metadata else None
        name = _scalar(name_node) if isinstance(name_node, yaml.ScalarNode) and \
            name_node.tag.endswith(":str") else None
        spec = _mapping(top.get("spec")) or {}
        for point in POINTS:
            rules = spec.get(point)
            if not isinstance(rules, yaml.SequenceNode):
                continue
            for i, item in enumerate(rules.value):
                fields = _mapping(item) or {}
                rule_node = fields.get("name")
                rule = _scalar(rule_node) if isinstance(rule_node, yaml.ScalarNode) and \
                    rule_node.tag.endswith(":str") else None
                spans.append(RuleSpan(item.start_mark.index, item.end_mark.index,
                                      name or None, rule or f"{point}[{i}]"))
    return spans


def _shares_nodes(root: yaml.Node) -> bool:
    """Whether an alias makes a node appear twice (its errors then point at the anchor)."""
    seen: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            pending += node.value
        elif isinstance(node, yaml.MappingNode):
            pending += [n for pair in node.value for n in pair]
    return False


def _mapping(node: Any) -> dict[str, yaml.Node] | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return {str(k.value): v for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _scalar(node: Any) -> str | None:
    return str(node.value) if isinstance(node, yaml.ScalarNode) else None


def unparsed(diagnostics: tuple[Diagnostic, ...]) -> bool:
    """Whether the text was refused while it was read (invalid YAML, a parse-time limit):
    no policy exists yet, nor a rule to name."""
    return any(d.kind is DiagnosticKind.YAML or d.message.startswith(PARSE_LIMITS)
               for d in diagnostics)


def attribution_problems(diagnostics: tuple[Diagnostic, ...], text: str,
                         starts: list[int]) -> list[str]:
    """Diagnostics inside a rule must name its policy and rule."""
    if unparsed(diagnostics):
        return []
    spans = rule_spans(text)
    if not spans:
        return []
    problems = []
    for d in diagnostics:
        if d.kind in NOT_ATTRIBUTED or d.line is None:
            continue
        index = source_index(starts, d)
        inside = [s for s in spans if s.start <= index < s.end]
        if not inside:
            continue
        span = min(inside, key=lambda s: s.end - s.start)
        if (d.policy, d.rule) != (span.policy, span.rule):
            problems.append(f"attribution: {d.kind} inside {span.policy}/{span.rule} names "
                            f"{d.policy}/{d.rule}")
    return problems


def field_span(text: str, path: tuple[Any, ...]) -> tuple[int, int] | None:
    """Start and end index of the value at ``path`` of the (only) document of ``text``."""
    roots = compose_all(text)
    if not roots or len(roots) != 1:
        return None
    node: Any = roots[0]
    for part in path:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if part < len(node.value) else None
        else:
            return None
        if node is None:
            return None
    return node.start_mark.index, node.end_mark.index


def caret(d: Diagnostic) -> str | None:
    """The character under the caret (None at the end of a line)."""
    if d.line_text is None or d.column is None or d.column > len(d.line_text):
        return None
    return d.line_text[d.column - 1]


def configmap_problems(outer: tuple[Diagnostic, ...], inner: tuple[Diagnostic, ...]
                       ) -> list[str]:
    """An error inside a ConfigMap key points at the same character as the same error in
    the policy on its own."""
    pending: dict[str, list[Diagnostic]] = {}
    for d in inner:
        pending.setdefault(d.message, []).append(d)
    problems = []
    for d in outer:
        same = pending.get(d.message)
        if not same:
            continue
        alone = same.pop(0)
        want = caret(alone)
        if want is None or want.isspace() or want in "\"\\" or not want.isprintable():
            continue  # folding and escapes write these differently in the ConfigMap
        if caret(d) not in (want, "\\"):  # "\\": an escape in a double-quoted scalar
            problems.append(f"position: {d.kind} in a ConfigMap points at {caret(d)!r} "
                            f"({d.line}:{d.column}), alone at {want!r} "
                            f"({alone.line}:{alone.column})")
    return problems


@dataclass
class Checker:
    """Validates mutants in ``directory`` and says which failure classes each shows."""

    directory: Path
    settings: FuzzSettings

    def problems(self, mutant: Mutant, name: str = "case.yaml") -> tuple[list[str], Any]:
        """Failure classes of ``mutant`` (empty when it behaved), and the validate run."""
        path = self.directory / name
        write_text(path, mutant.text)
        run = bounded(lambda: validate(path), self.settings.deadline)
        if run.error is not None:
            return [error_class(run.error)], run
        found = list(run.logged_errors())
        if run.seconds > self.settings.deadline:
            found.append("timeout: validate (uninterruptible)")
        if run.rss_growth > self.settings.memory:
            found.append("memory: peak RSS growth")
        policy_set = run.value[0]
        diagnostics: tuple[Diagnostic, ...] = policy_set.diagnostics
        text = path.read_bytes().decode("utf-8", "replace")
        starts = line_starts(text)
        for d in diagnostics:
            found += position_problems(d, str(path), text, starts)
        if not any(f.startswith("position") for f in found):
            found += attribution_problems(diagnostics, text, starts)
        if mutant.must_reject and policy_set.valid:
            found.append(f"accepted: {mutant.must_reject}")
        # (a variable's new type may instead fail where it is used)
        in_rule = mutant.cel_path is not None and mutant.cel_path[1] in POINTS
        errors = tuple(d for d in diagnostics if d.severity == "error")  # not a warning
        if in_rule and errors and not unparsed(diagnostics):
            assert mutant.cel_path is not None
            span = field_span(text, mutant.cel_path)
            if span is not None and not any(
                    d.line is not None and span[0] <= source_index(starts, d) <= span[1]
                    for d in errors):
                found.append("position: no error inside the mutated CEL field")
        if mutant.inner is not None and diagnostics:
            alone = self.problems(Mutant("inner", mutant.inner), "inner.yaml")[1]
            if alone.error is None:
                found += configmap_problems(diagnostics, alone.value[0].diagnostics)
        return sorted(set(found)), run

    def minimal(self, mutant: Mutant, key: str, seconds: float) -> str:
        """``mutant``'s text with as many lines dropped as keep failure ``key``."""
        if key.startswith(("accepted", "position: no error inside")) or "ConfigMap" in key:
            return mutant.text  # these depend on the mutant's own bookkeeping
        lines = mutant.text.split("\n")

        def still_fails(candidate: list[str]) -> bool:
            probe = Mutant(mutant.strategy, "\n".join(candidate))
            return key in self.problems(probe, "minimise.yaml")[0]

        return "\n".join(minimise(lines, still_fails, seconds))


def test_hostile_policies_give_positioned_errors_never_a_traceback(tmp_path: Path) -> None:
    settings = FuzzSettings.from_environment()
    failures = Failures(TEST, settings)
    checker = Checker(tmp_path, settings)
    cli_sample: list[tuple[int, Path, bool]] = []
    for case in settings.cases(CASES):
        rng = settings.rng(TEST, case)
        mutant = make_mutant(case, rng)
        found, run = checker.problems(mutant)
        failures.tried += 1
        valid = run.error is None and run.value[0].valid
        failures.count(f"{mutant.strategy} {'valid' if valid else 'rejected'}")
        for key in found:
            detail = f"{mutant.strategy}: {'; '.join(mutant.what)[:300]}"
            if run.error is not None:
                detail += "\n" + traceback_text(run.error)
            failures.add(key, case, detail, partial(checker.minimal, mutant, key))
        if run.error is None and len(cli_sample) < CLI_SAMPLE and (
                not valid or case % 10 == 0):
            kept = tmp_path / f"cli-{case}.yaml"
            write_text(kept, mutant.text)
            cli_sample.append((case, kept, valid))
    for case, path, valid in cli_sample:
        for key in cli_problems(path, valid):
            failures.add(key, case, f"policysched validate {path.name}",
                         path.read_bytes().decode("utf-8", "replace"))
    failures.finish()


def cli_problems(path: Path, valid: bool) -> list[str]:
    """``policysched validate`` (text and JSON): exit 0 or 1 as the set is valid or not,
    the errors printed, no traceback."""
    found = []
    for args in (["validate", str(path)], ["validate", "-o", "json", str(path)]):
        result = CliRunner().invoke(main, args)
        output = result.output
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            found.append(f"cli: {where(result.exception)}")
            continue
        if "Traceback" in output:
            found.append("cli: traceback printed")
        if result.exit_code != (0 if valid else 1):
            found.append(f"cli: exit {result.exit_code} for a {'valid' if valid else 'bad'} "
                         "policy")
        if "json" in args:
            try:
                document = json.loads(result.stdout)
            except ValueError:
                found.append("cli: JSON output does not parse")
                continue
            if document["valid"] != valid:
                found.append("cli: JSON 'valid' disagrees")
    return found
