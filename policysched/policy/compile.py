"""A SchedulingPolicy document → a compiled ``Policy``, or positioned diagnostics.

Every CEL field is compiled in the environment of its extension point (``variables.py``)
with the result type the engine expects; a ``CelCompileError``'s offset into the expression
is mapped through the YAML scalar to the line and column in the file. Compilation runs even
when the schema found errors, so one run reports every mistake; a ``Policy`` is only built
from a document without any.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..cel import CelCompileError, Environment, Program, compile_expression
from ..cel.compatibility import DEFAULT_VERSION, KubernetesVersion
from ..cel.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    STRING,
    TIMESTAMP,
    UINT,
    Type,
    list_of,
    optional_of,
)
from . import messages, variables, warnings
from .diagnostics import Diagnostic, DiagnosticKind
from .documents import LoadedDocument
from .model import (
    AUDITABLE_POINTS,
    RULE_TYPES,
    Aggregate,
    CelExpression,
    Enforcement,
    ExtensionPoint,
    FailurePolicy,
    Normalization,
    PermitOnFalse,
    Policy,
    Rule,
    Variable,
)
from .variables import Scope
from .yaml_documents import Path

NUMBER = (INT, DOUBLE, UINT)
SORT_KEY = (INT, UINT, DOUBLE, STRING, BOOL, BYTES, TIMESTAMP, DURATION)


class Shape(Enum):
    ONE = "one"    # a CEL string
    LIST = "list"  # a list of CEL strings (queueSort keys)
    MAP = "map"    # a map of names to CEL strings (preBind labels / annotations)


@dataclass(frozen=True)
class CelField:
    """A CEL-valued field of a rule: the scope it is evaluated in and its result types."""

    key: str
    scope: Scope
    expected: tuple[Type, ...] | None
    shape: Shape = Shape.ONE


def _fields(scope: Scope, **extra: tuple[Type, ...] | CelField) -> tuple[CelField, ...]:
    """``expression`` (bool) and ``messageExpression`` (string) in ``scope``, plus extras."""
    out = {
        "expression": CelField("expression", scope, (BOOL,)),
        "messageExpression": CelField("messageExpression", scope, (STRING,)),
    }
    for key, spec in extra.items():
        out[key] = spec if isinstance(spec, CelField) else CelField(key, scope, spec)
    return tuple(out.values())


RULE_FIELDS: Mapping[ExtensionPoint, tuple[CelField, ...]] = {
    ExtensionPoint.QUEUE_SORT: (
        CelField("less", variables.QUEUE_SORT_LESS, (BOOL,)),
        CelField("keys", variables.QUEUE_SORT_KEYS, SORT_KEY, Shape.LIST),
    ),
    ExtensionPoint.PRE_ENQUEUE: _fields(variables.PRE_ENQUEUE),
    ExtensionPoint.PRE_FILTER: _fields(
        variables.PRE_FILTER, retryAfter=(INT,),
        nodeNames=(list_of(STRING), optional_of(list_of(STRING))),
    ),
    ExtensionPoint.FILTER: _fields(
        variables.FILTER, reasons=(list_of(STRING),), unresolvableExpression=(BOOL,)
    ),
    ExtensionPoint.POST_FILTER: _fields(
        variables.POST_FILTER,
        victims=CelField("victims", variables.POST_FILTER_VICTIMS, (BOOL,)),
    ),
    ExtensionPoint.PRE_SCORE: _fields(variables.PRE_SCORE),
    ExtensionPoint.SCORE: _fields(
        variables.SCORE, expression=CelField("expression", variables.SCORE, NUMBER)
    ),
    ExtensionPoint.RESERVE: _fields(
        variables.RESERVE, counter=(STRING,), amount=(INT,), limit=(INT,),
        volumeBindings=(variables.VOLUME_BINDINGS_TYPE,),
    ),
    ExtensionPoint.UNRESERVE: _fields(variables.UNRESERVE),
    ExtensionPoint.PERMIT: _fields(
        variables.PERMIT, group=(STRING,), minMember=(INT,), timeoutSeconds=(INT,)
    ),
    ExtensionPoint.PRE_BIND: _fields(
        variables.PRE_BIND,
        labels=CelField("labels", variables.PRE_BIND, (STRING,), Shape.MAP),
        annotations=CelField("annotations", variables.PRE_BIND, (STRING,), Shape.MAP),
        volumeBindingTimeoutSeconds=(INT,),
    ),
    ExtensionPoint.BIND: _fields(variables.BIND, target=(STRING,)),
    ExtensionPoint.POST_BIND: _fields(variables.POST_BIND),
}

_ENUMS: Mapping[str, Callable[[Any], Any]] = {
    "failurePolicy": FailurePolicy,
    "normalize": Normalization,
    "onFalse": PermitOnFalse,
    "enforcement": Enforcement,
}

_KIND = {
    "syntax": DiagnosticKind.CEL_SYNTAX,
    "reference": DiagnosticKind.CEL_REFERENCE,
    "type": DiagnosticKind.CEL_TYPE,
    "cost": DiagnosticKind.CEL_COST,
    "argument": DiagnosticKind.CEL_ARGUMENT,
}


Checkpoint = Callable[[Path], None]
"""Called with an expression's path before it is compiled; raises to stop compiling (a
compile deadline)."""


def compile_policy(
    document: LoadedDocument, *, schema_valid: bool = True, checkpoint: Checkpoint | None = None,
    version: KubernetesVersion = DEFAULT_VERSION,
) -> tuple[Policy | None, list[Diagnostic]]:
    """Compile every CEL field of ``document`` at the CEL compatibility ``version``; the
    policy is built only when neither the schema (``schema_valid``) nor the compilation
    found an error. The diagnostics include warnings (``warnings.py``), which do not
    prevent building."""
    compiler = _PolicyCompiler(document, build=schema_valid, checkpoint=checkpoint,
                               version=version)
    compiler.run()
    if compiler.diagnostics or not schema_valid:
        return None, compiler.diagnostics + compiler.warnings
    return compiler.build(), compiler.warnings


def snake_case(name: str) -> str:
    """``retryAfter`` → ``retry_after`` (document keys → model attributes)."""
    return re.sub(r"([A-Z])", r"_\1", name).lower()


def path_text(path: Path) -> str:
    """``("spec", "filter", 0, "expression")`` → ``spec.filter[0].expression``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


class _PolicyCompiler:
    def __init__(self, document: LoadedDocument, *, build: bool,
                 checkpoint: Checkpoint | None = None,
                 version: KubernetesVersion = DEFAULT_VERSION) -> None:
        self.document = document
        self.version = version
        self.building = build  # build model objects (only for schema-valid documents)
        self.checkpoint = checkpoint
        self.diagnostics: list[Diagnostic] = []  # errors
        self.warnings: list[Diagnostic] = []
        self.match_guards: frozenset[warnings.Key] = frozenset()
        value = document.value if isinstance(document.value, dict) else {}
        spec = value.get("spec")
        self.spec: dict[str, Any] = spec if isinstance(spec, dict) else {}
        params = self.spec.get("params")
        self.params: dict[str, Any] = params if isinstance(params, dict) else {}
        self.variable_types: dict[str, Type] = {}
        self.aggregate_types: dict[str, Type] = {}
        self.aggregates: list[Aggregate] = []
        self.match: CelExpression | None = None
        self.variables: list[Variable] = []
        self.rules: dict[ExtensionPoint, list[Rule]] = {}
        self._environments: dict[str, Environment] = {}

    # -- walking -------------------------------------------------------------------------

    def run(self) -> None:
        match = self.spec.get("match")
        if isinstance(match, str):
            self.match = self.compile(("spec", "match"), "match", variables.MATCH, (BOOL,))
            if self.match is not None:
                self.match_guards = warnings.guards(self.match.program.tree)
        self.compile_variables()
        self.compile_aggregates()
        for point in ExtensionPoint:
            rules = self.spec.get(point.value)
            if not isinstance(rules, list):
                continue
            self.check_unique_names(point, rules)
            for i, rule in enumerate(rules):
                if isinstance(rule, dict):
                    built = self.compile_rule(point, i, rule)
                    if built is not None:
                        self.rules.setdefault(point, []).append(built)

    def named(self, key: str, duplicate: str) -> Iterator[tuple[Path, str, dict[str, Any]]]:
        """The entries of ``spec.<key>`` with a name, each with its path; a name already
        used is reported (message ``duplicate``) and its entry skipped."""
        declared = self.spec.get(key)
        if not isinstance(declared, list):
            return
        first_line: dict[str, int] = {}
        for i, item in enumerate(declared):
            name = item.get("name") if isinstance(item, dict) else None
            if not isinstance(name, str):
                continue
            path: Path = ("spec", key, i)
            if name in first_line:
                message = duplicate.format(name=name, line=first_line[name])
                self.report(self.document.diagnostic((*path, "name"),
                                                     DiagnosticKind.DUPLICATE_NAME, message))
                continue
            first_line[name] = self.document.yaml.position((*path, "name")).line
            yield path, name, item

    def compile_variables(self) -> None:
        for path, name, item in self.named("variables", messages.DUPLICATE_VARIABLE):
            text = item.get("expression")
            expression = None
            if isinstance(text, str):
                label = messages.VARIABLE_FIELD.format(name=name)
                expression = self.compile((*path, "expression"), label, variables.VARIABLE, None)
            # A variable that failed to compile is still declared, so that its uses are not
            # reported again as undefined.
            self.variable_types[name] = expression.program.type if expression else DYN
            if expression is not None:
                self.variables.append(Variable(name=name, expression=expression))

    def compile_aggregates(self) -> None:
        for path, name, item in self.named("aggregates", messages.DUPLICATE_AGGREGATE):
            aggregate = self.compile_aggregate(path, name, item)
            self.aggregate_types[name] = (list_of(variables.AGGREGATE_TYPE)
                                          if "forEach" in item else variables.AGGREGATE_TYPE)
            if aggregate is not None:
                self.aggregates.append(aggregate)

    def compile_aggregate(self, path: Path, name: str, item: dict[str, Any]
                          ) -> Aggregate | None:
        failed = len(self.diagnostics)

        each = variables.AGGREGATE_ITEM if "forEach" in item else variables.AGGREGATE

        def field(key: str, expected: tuple[Type, ...] | None, at: Path = (),
                  scope: Scope = each) -> CelExpression | None:
            full = (*path, *at, key)
            if not isinstance(_get(self.document.value, full), str):
                return None
            label = messages.AGGREGATE_FIELD.format(name=name, field=".".join((*map(str, at), key)))
            return self.compile(full, label, scope, expected)

        nodes = ("nodes",)
        built = dict(
            for_each=field("forEach", (list_of(DYN),), scope=variables.AGGREGATE),
            pods=field("pods", None),
            group_by=field("groupBy", (STRING,)),
            node_affinity=field("matchingNodeAffinity", (BOOL,), nodes),
            node_taints=field("toleratingTaints", (BOOL,), nodes),
            node_labels=field("withLabels", (list_of(STRING),), nodes),
            terms_of=field("termsOf", (list_of(DYN),), scope=variables.AGGREGATE_TERMS),
        )
        if not self.building or len(self.diagnostics) > failed:
            return None
        return Aggregate(name=name, position=self.document.yaml.position(path),
                         skip_terminating=item.get("skipTerminating") is True, **built)

    def check_unique_names(self, point: ExtensionPoint, rules: list[Any]) -> None:
        first_line: dict[str, int] = {}
        for i, rule in enumerate(rules):
            name = rule.get("name") if isinstance(rule, dict) else None
            if not isinstance(name, str):
                continue
            path: Path = ("spec", point.value, i, "name")
            if name in first_line:
                message = messages.DUPLICATE_RULE.format(
                    name=name, point=point.value, line=first_line[name]
                )
                self.report(self.document.diagnostic(path, DiagnosticKind.DUPLICATE_NAME, message))
            else:
                first_line[name] = self.document.yaml.position(path).line

    def enforcement(self, point: ExtensionPoint, base: Path, rule: dict[str, Any]
                    ) -> Enforcement | None:
        """The rule's enforcement (its own, else the policy's ``spec.enforcement``, else
        Enforce); None, and an error at the field that asks for it, when the rule cannot be
        audited (a value outside the enum is the schema's to report)."""
        own = rule.get("enforcement")
        at: Path = (*base, "enforcement") if own is not None else ("spec", "enforcement")
        value = own if own is not None else self.spec.get("enforcement", "Enforce")
        if value not in tuple(Enforcement):
            return None
        enforcement = Enforcement(value)
        if enforcement is Enforcement.AUDIT:
            if point not in AUDITABLE_POINTS:
                why = messages.AUDIT_UNSUPPORTED_WHY[point.value]
            elif point is ExtensionPoint.PERMIT and "group" in rule:
                why = messages.AUDIT_UNSUPPORTED_GANG
            else:
                return enforcement
            self.report(self.document.diagnostic(at, DiagnosticKind.SCHEMA, (
                messages.AUDIT_UNSUPPORTED if own is not None
                else messages.POLICY_AUDIT_UNSUPPORTED).format(
                    point=point.value, rule=rule.get("name"), why=why)))
            return None
        return enforcement

    def compile_rule(self, point: ExtensionPoint, index: int, rule: dict[str, Any]) -> Rule | None:
        base: Path = ("spec", point.value, index)
        attributes: dict[str, Any] = {}
        enforcement = self.enforcement(point, base, rule)
        if enforcement is not None:
            attributes["enforcement"] = enforcement
        for spec in RULE_FIELDS[point]:
            value = rule.get(spec.key)
            if value is None:
                continue
            compiled = self.compile_field((*base, spec.key), spec, value)
            if compiled is not None:
                attributes[snake_case(spec.key)] = compiled
        if not self.building or self.diagnostics:
            return None
        for key, value in rule.items():
            # a field that takes a number or an expression keeps a number as it is
            if key == "name" or snake_case(key) in attributes:
                continue
            attributes[snake_case(key)] = _ENUMS[key](value) if key in _ENUMS else value
        if point is ExtensionPoint.FILTER:
            attributes["reason"] = (
                rule.get("reason")
                or rule.get("message")
                or messages.DEFAULT_FILTER_REASON.format(
                    policy=self.document.name, rule=rule["name"]
                )
            )
        try:
            return RULE_TYPES[point](
                policy=self.document.name or "",
                point=point,
                name=rule["name"],
                position=self.document.yaml.position(base),
                **attributes,
            )
        except (TypeError, ValueError):
            return None  # a shape the schema rejects; its diagnostic is reported there

    def compile_field(self, path: Path, spec: CelField, value: Any) -> Any:
        if spec.shape is Shape.ONE:
            if not isinstance(value, str):
                return None
            return self.compile(path, str(path[-1]), spec.scope, spec.expected)
        if spec.shape is Shape.LIST:
            if not isinstance(value, list):
                return None
            items = [
                self.compile((*path, i), f"{path[-1]}[{i}]", spec.scope, spec.expected)
                if isinstance(text, str) else None
                for i, text in enumerate(value)
            ]
            return tuple(items) if all(x is not None for x in items) else None
        if not isinstance(value, dict):
            return None
        compiled = {
            key: self.compile((*path, key), f"{path[-1]}[{key}]", spec.scope, spec.expected)
            if isinstance(text, str) else None
            for key, text in value.items()
        }
        return compiled if all(x is not None for x in compiled.values()) else None

    # -- one expression ------------------------------------------------------------------

    def environment(self, scope: Scope) -> Environment:
        key = f"{scope.name}/{len(self.variable_types)}/{len(self.aggregate_types)}"
        env = self._environments.get(key)
        if env is None:
            env = variables.environment(scope, self.params, dict(self.variable_types),
                                        dict(self.aggregate_types), self.version)
            self._environments[key] = env
        return env

    def compile(
        self, path: Path, label: str, scope: Scope, expected: tuple[Type, ...] | None
    ) -> CelExpression | None:
        text = _get(self.document.value, path)
        if not isinstance(text, str) or not text:
            return None
        if self.checkpoint is not None:
            self.checkpoint(path)
        yaml_document = self.document.yaml
        try:
            program = compile_expression(text, self.environment(scope), expected=expected)
        except CelCompileError as e:
            index = yaml_document.scalar_index(path, e.offset)
            message = messages.CEL_ERROR.format(
                field=label, kind=messages.CEL_KINDS[e.kind.value], message=e.message
            )
            diagnostic = Diagnostic.at(yaml_document.origin, index, _KIND[e.kind.value], message)
            self.report(self.document.attribute(diagnostic, path))
            return None
        self.warn_unguarded(path, program)
        position = yaml_document.origin.position(yaml_document.scalar_index(path, 0))
        return CelExpression(text=text, field=path_text(path), position=position, program=program)

    def report(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def warn_unguarded(self, path: Path, program: Program) -> None:
        """A warning per map key read that fails on objects without that key."""
        yaml_document = self.document.yaml
        for access in warnings.unguarded_accesses(program.tree, program.types,
                                                  self.match_guards):
            index = yaml_document.scalar_index(path, access.offset)
            diagnostic = Diagnostic.at(yaml_document.origin, index, DiagnosticKind.ABSENT_KEY,
                                       access.message())
            self.warnings.append(dataclasses.replace(
                self.document.attribute(diagnostic, path), severity="warning"))

    # -- result --------------------------------------------------------------------------

    def build(self) -> Policy:
        metadata = self.document.value.get("metadata", {})
        return Policy(
            name=self.document.name or "",
            source=self.document.source,
            position=self.document.position,
            origin=self.document.origin,
            labels=dict(metadata.get("labels") or {}),
            plugin_name=str(self.spec.get("pluginName") or ""),
            enforcement=Enforcement(self.spec.get("enforcement", "Enforce")),
            match=self.match,
            params=dict(self.params),
            variables=tuple(self.variables),
            aggregates=tuple(self.aggregates),
            rules={point: tuple(rules) for point, rules in self.rules.items()},
            document=self.document.value,
        )


def _get(value: Any, path: Path) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                return None
        elif not isinstance(value, dict):
            return None
        value = value[part] if isinstance(part, int) else value.get(part)
    return value
