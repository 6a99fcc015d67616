"""Policy sources → documents: files, directories, multi-document YAML and ConfigMaps.

A directory is searched recursively for ``*.yaml`` and ``*.yml`` files, in sorted order;
entries whose name starts with ``.`` are skipped (a ConfigMap mounted as a volume has
``..data`` links to a timestamped ``..2024_…`` copy of its files, which would otherwise be
read twice). A file holds any number of documents: SchedulingPolicy and
SchedulerConfiguration documents, ConfigMaps whose data keys hold such documents, and
``List``s of those (``kubectl get -o yaml``). Anything else is an error.

Positions inside a ConfigMap key are reported on the real line of the file when the policy
was read from a file; ConfigMaps read from the API are shown as ``namespace/name[key]``.
ConfigMap data keys are checked as the API server checks them.

Input is bounded (``PolicyLimits``): a file or ConfigMap value larger than ``maxBytes`` is
not parsed (a file is not even read past it); nesting, aliases and documents are bounded
while parsing; a policy with too many rules or variables or too long an expression is
refused before it is compiled.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Any

import yaml

from . import messages
from .compile import RULE_FIELDS, Shape
from .diagnostics import Diagnostic, DiagnosticKind
from .documents import CONFIGURATION_KIND, POLICY_KIND, LoadedDocument
from .limits import DEFAULT_LIMITS, PolicyLimits
from .model import ExtensionPoint
from .positions import EmbeddedText, FileText, ScalarMap, TextOrigin
from .schema import json_type
from .yaml_documents import NodeRef, Path, YamlDocument, parse_documents

YAML_SUFFIXES = (".yaml", ".yml")
CONFIGMAP_KIND = "ConfigMap"
DOCUMENT_KINDS = (POLICY_KIND, CONFIGURATION_KIND)
_POINT_NAMES = frozenset(p.value for p in ExtensionPoint)

# The API server's rule for ConfigMap keys (IsConfigMapKey, k8s.io/apimachinery).
CONFIGMAP_KEY_MAX_LENGTH = 253  # bytes
_CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")


@dataclass
class LoadResult:
    """What was found: documents in load order, errors, and the files read."""

    documents: list[LoadedDocument] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def extend(self, other: LoadResult) -> None:
        self.documents += other.documents
        self.diagnostics += other.diagnostics
        self.files += other.files


def load_paths(paths: Iterable[str | os.PathLike[str]],
               limits: PolicyLimits = DEFAULT_LIMITS) -> LoadResult:
    """Load files and directories, each file once (a file inside a directory given too,
    or a directory given twice, is read once); a path that yields no policy at all is an
    error."""
    result = LoadResult()
    seen: set[str] = set()
    for path in paths:
        files = yaml_files(path) if os.path.isdir(path) else [os.fspath(path)]
        fresh = [f for f in files if os.path.realpath(f) not in seen]
        seen.update(os.path.realpath(f) for f in fresh)
        if files and not fresh:
            continue  # read already, through another path
        found = LoadResult()
        for file in fresh:
            found.extend(load_file(file, limits))
        if not found.diagnostics and not found.documents:
            label = os.fspath(path)
            message = messages.NO_YAML_FILES if not files else messages.NO_POLICIES
            found.diagnostics.append(Diagnostic(DiagnosticKind.DOCUMENT, message, label))
        result.extend(found)
    return result


KUSTOMIZATION_FILES = frozenset({"kustomization.yaml", "kustomization.yml"})


def yaml_files(directory: str | os.PathLike[str]) -> list[str]:
    """``*.yaml`` / ``*.yml`` under ``directory``, recursively, sorted, hidden entries and
    kustomize's own files (a policy directory may be a kustomization that turns the
    policies into ConfigMaps) skipped."""
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [
            os.path.join(root, f)
            for f in files
            if f.endswith(YAML_SUFFIXES) and not f.startswith(".")
            and f not in KUSTOMIZATION_FILES
        ]
    return sorted(found, key=lambda f: FilePath(f).parts)


def load_file(path: str | os.PathLike[str], limits: PolicyLimits = DEFAULT_LIMITS
              ) -> LoadResult:
    label = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read(limits.max_bytes + 1)
    except OSError as e:
        reason = e.strerror or str(e)
        message = messages.CANNOT_READ.format(reason=reason)
        return LoadResult(diagnostics=[Diagnostic(DiagnosticKind.IO, message, label)])
    if len(data) > limits.max_bytes:
        message = limits.message(messages.TOO_MANY_BYTES, "max_bytes")
        return LoadResult(diagnostics=[Diagnostic(DiagnosticKind.LIMIT, message, label, 1, 1)],
                          files=[label])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        readable = data[: e.start].decode("utf-8")
        message = messages.NOT_UTF8.format(offset=e.start)
        diagnostic = Diagnostic.at(FileText(label, readable), len(readable), DiagnosticKind.IO,
                                   message)
        return LoadResult(diagnostics=[diagnostic], files=[label])
    result = load_text(text, label, limits)
    result.files.append(label)
    return result


def load_text(text: str, label: str, limits: PolicyLimits = DEFAULT_LIMITS) -> LoadResult:
    """Documents of a YAML text shown as ``label`` (a file's path)."""
    too_large = _too_large(text, limits)
    if too_large is not None:
        return LoadResult(diagnostics=[Diagnostic(DiagnosticKind.LIMIT, too_large, label, 1, 1)])
    origin = FileText(label, text)
    documents, diagnostics = parse_documents(text, origin, limits)
    result = LoadResult(diagnostics=diagnostics)
    result.extend(_classify_all(documents, limits))
    return result


def load_configmap(configmap: Mapping[str, Any],
                   limits: PolicyLimits = DEFAULT_LIMITS) -> LoadResult:
    """Documents of a ConfigMap fetched from the API (a dict as in its JSON form):
    positions are lines inside each key's text, shown as ``namespace/name[key]``."""
    result = LoadResult()
    data = configmap.get("data") or {}
    if not isinstance(data, Mapping):
        return result
    metadata = configmap.get("metadata") or {}
    for key, text in data.items():
        label = _configmap_label(metadata, str(key))
        problem = configmap_key_problem(str(key))
        if problem is not None:
            result.diagnostics.append(Diagnostic(DiagnosticKind.DOCUMENT, problem, label))
            continue
        if not isinstance(text, str):
            actual = messages.JSON_TYPES[json_type(text)]
            message = messages.CONFIGMAP_VALUE_NOT_STRING.format(key=key, actual=actual)
            result.diagnostics.append(Diagnostic(DiagnosticKind.DOCUMENT, message, label))
            continue
        too_large = _too_large(text, limits)
        if too_large is not None:
            result.diagnostics.append(Diagnostic(DiagnosticKind.LIMIT, too_large, label, 1, 1,
                                                 origin=label))
            continue
        result.extend(_embedded(text, FileText(label, text), str(key), label, limits))
    return result


def configmap_key_problem(key: str) -> str | None:
    """Why the API server would refuse ``key`` as a ConfigMap data key (its messages), or
    None."""
    reasons: list[str] = []
    if len(key.encode()) > CONFIGMAP_KEY_MAX_LENGTH:
        reasons.append(messages.CONFIGMAP_KEY_TOO_LONG.format(limit=CONFIGMAP_KEY_MAX_LENGTH))
    if not _CONFIGMAP_KEY.fullmatch(key):
        reasons.append(messages.CONFIGMAP_KEY_CHARACTERS.format(pattern=_CONFIGMAP_KEY.pattern))
    if key in (".", ".."):
        reasons.append(messages.CONFIGMAP_KEY_DOTS.format(key=key))
    elif key.startswith(".."):
        reasons.append(messages.CONFIGMAP_KEY_DOT_DOT)
    if not reasons:
        return None
    quoted = json.dumps(key, ensure_ascii=False)
    return messages.CONFIGMAP_KEY_INVALID.format(key=quoted, reasons="; ".join(reasons))


def _too_large(text: str, limits: PolicyLimits) -> str | None:
    """Why ``text`` is not parsed when it is more than ``maxBytes`` long (checked before
    anything else looks at it)."""
    if len(text) <= limits.max_bytes and len(text.encode()) <= limits.max_bytes:
        return None
    return limits.message(messages.TOO_MANY_BYTES, "max_bytes")


def _configmap_label(metadata: Any, key: str) -> str:
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name = str(metadata.get("name") or "")
    namespace = metadata.get("namespace")
    if namespace:
        return messages.CONFIGMAP_ORIGIN.format(namespace=namespace, name=name, key=key)
    return f"{name}[{key}]"


def _classify(document: YamlDocument, origin: str | None, limits: PolicyLimits) -> LoadResult:
    value = document.value
    if not isinstance(value, dict):
        actual = "a list" if isinstance(value, list) else "a single value"
        message = messages.DOCUMENT_NOT_MAPPING.format(actual=actual)
        return _error(document, (), message, origin)
    kind = value.get("kind")
    if kind in DOCUMENT_KINDS:
        loaded = LoadedDocument(str(kind), document, origin)
        beyond = _beyond_limits(loaded, limits) if kind == POLICY_KIND else []
        return LoadResult(diagnostics=beyond) if beyond else LoadResult(documents=[loaded])
    if origin is not None:  # inside a ConfigMap: only policies and configurations
        message = messages.EMBEDDED_WRONG_KIND.format(origin=origin, kind=kind)
        return _error(document, ("kind",) if kind else (), message, origin)
    if kind == CONFIGMAP_KIND:
        return _configmap_in_file(document, limits)
    if isinstance(kind, str) and kind.endswith("List") and "items" in value:
        return _list(document, limits)
    if kind is None:
        return _error(document, (), messages.DOCUMENT_NO_KIND, origin)
    return _error(document, ("kind",), messages.DOCUMENT_WRONG_KIND.format(kind=kind), origin)


def _list(document: YamlDocument, limits: PolicyLimits) -> LoadResult:
    items = document.value["items"]
    if not isinstance(items, list):
        return _error(document, ("items",), messages.LIST_ITEMS_NOT_LIST, None)
    if len(items) > limits.max_documents:
        message = limits.message(messages.TOO_MANY_DOCUMENTS, "max_documents")
        return _error(document, ("items", limits.max_documents), message, None,
                      DiagnosticKind.LIMIT)
    nodes: list[dict[Path, NodeRef]] = [{} for _ in items]
    for path, ref in document.nodes.items():
        if len(path) > 1 and path[0] == "items" and isinstance(path[1], int):
            nodes[path[1]][path[2:]] = ref
    return _classify_all([YamlDocument(item, document.origin, document.text, item_nodes,
                                       document.number)
                          for item, item_nodes in zip(items, nodes, strict=True)], limits)


def _classify_all(documents: Sequence[YamlDocument], limits: PolicyLimits) -> LoadResult:
    """The documents of a file (or a List's items): several documents of other kinds (a
    cluster file's Nodes and Pods) make one error, at the first, not one each."""
    foreign = [(d, k) for d in documents if (k := _foreign_kind(d.value)) is not None]
    result = LoadResult()
    for document in documents:
        if len(foreign) < 2:
            result.extend(_classify(document, None, limits))
        elif document is foreign[0][0]:
            kinds = Counter(kind for _, kind in foreign)
            listed = ", ".join(f"{k} ({n})" if n > 1 else k for k, n in kinds.items())
            message = messages.NOT_POLICIES.format(count=len(foreign), kinds=listed)
            result.extend(_error(document, ("kind",), message, None))
        elif _foreign_kind(document.value) is None:
            result.extend(_classify(document, None, limits))
    return result


def _foreign_kind(value: Any) -> str | None:
    """The kind of a document that is neither a policy source document nor a List."""
    kind = value.get("kind") if isinstance(value, dict) else None
    if not isinstance(kind, str) or kind in (*DOCUMENT_KINDS, CONFIGMAP_KIND):
        return None
    return None if kind.endswith("List") and "items" in value else kind


def _configmap_in_file(configmap: YamlDocument, limits: PolicyLimits) -> LoadResult:
    data = configmap.value.get("data")
    if data is None:
        return LoadResult()
    if not isinstance(data, dict):
        return _error(configmap, ("data",), messages.CONFIGMAP_DATA_NOT_MAPPING, None)
    result = LoadResult()
    for key, text in data.items():
        origin_label = _configmap_label(configmap.value.get("metadata"), key)
        problem = configmap_key_problem(key)
        if problem is not None:
            diagnostic = configmap.diagnostic(("data", key), DiagnosticKind.DOCUMENT, problem,
                                              key=True)
            result.diagnostics.append(diagnostic.within(origin=origin_label))
            continue
        if not isinstance(text, str):
            actual = messages.JSON_TYPES[json_type(text)]
            message = messages.CONFIGMAP_VALUE_NOT_STRING.format(key=key, actual=actual)
            result.extend(_error(configmap, ("data", key), message, origin_label))
            continue
        too_large = _too_large(text, limits)
        if too_large is not None:
            result.extend(_error(configmap, ("data", key), too_large, origin_label,
                                 DiagnosticKind.LIMIT))
            continue
        node = configmap.nodes[("data", key)].node
        assert isinstance(node, yaml.ScalarNode)
        origin = EmbeddedText(configmap.origin, ScalarMap(node, configmap.text))
        result.extend(_embedded(text, origin, key, origin_label, limits))
    return result


def _embedded(text: str, origin: TextOrigin, key: str, origin_label: str,
              limits: PolicyLimits) -> LoadResult:
    documents, diagnostics = parse_documents(text, origin, limits)
    result = LoadResult(diagnostics=[d.within(origin=origin_label) for d in diagnostics])
    for document in documents:
        result.extend(_classify(document, origin_label, limits))
    return result


def _beyond_limits(document: LoadedDocument, limits: PolicyLimits) -> list[Diagnostic]:
    """The limits a SchedulingPolicy document exceeds (checked before anything is
    compiled): its rules, its variables, or else the length of each expression."""
    spec = document.value.get("spec")
    if not isinstance(spec, dict):
        return []
    out: list[Diagnostic] = []
    variables = spec.get("variables")
    if isinstance(variables, list) and len(variables) > limits.max_variables:
        message = limits.message(messages.TOO_MANY_VARIABLES, "max_variables",
                                 count=len(variables))
        out.append(document.diagnostic(("spec", "variables", limits.max_variables),
                                       DiagnosticKind.LIMIT, message))
    rules = [(key, i) for key, value in spec.items()
             if key in _POINT_NAMES and isinstance(value, list) for i in range(len(value))]
    if len(rules) > limits.max_rules:
        key, i = rules[limits.max_rules]
        message = limits.message(messages.TOO_MANY_RULES, "max_rules", count=len(rules))
        out.append(document.diagnostic(("spec", key, i), DiagnosticKind.LIMIT, message))
    if out:  # not one diagnostic per expression of thousands of rules
        return out
    for path, label, text in _expressions(spec):
        if len(text) > limits.max_expression_length:
            message = limits.message(messages.EXPRESSION_TOO_LONG, "max_expression_length",
                                     field=label, length=len(text))
            out.append(document.diagnostic(path, DiagnosticKind.LIMIT, message))
    return out


def _expressions(spec: dict[str, Any]) -> Iterator[tuple[Path, str, str]]:
    """(path, field label, text) of every CEL expression of a policy's spec."""
    match = spec.get("match")
    if isinstance(match, str):
        yield ("spec", "match"), "match", match
    variables = spec.get("variables")
    for i, variable in enumerate(variables if isinstance(variables, list) else []):
        text = variable.get("expression") if isinstance(variable, dict) else None
        if isinstance(text, str):
            label = messages.VARIABLE_FIELD.format(name=variable.get("name"))
            yield ("spec", "variables", i, "expression"), label, text
    for point in ExtensionPoint:
        rules = spec.get(point.value)
        for i, rule in enumerate(rules if isinstance(rules, list) else []):
            if not isinstance(rule, dict):
                continue
            for cel in RULE_FIELDS[point]:
                value = rule.get(cel.key)
                path: Path = ("spec", point.value, i, cel.key)
                if cel.shape is Shape.ONE:
                    entries: Iterable[tuple[Any, Any]] = [(None, value)]
                elif cel.shape is Shape.LIST:
                    entries = enumerate(value) if isinstance(value, list) else []
                else:
                    entries = value.items() if isinstance(value, dict) else []
                for part, text in entries:
                    if isinstance(text, str):
                        where = path if part is None else (*path, part)
                        label = cel.key if part is None else f"{cel.key}[{part}]"
                        yield where, label, text


def _error(document: YamlDocument, path: Path, message: str, origin: str | None,
           kind: DiagnosticKind = DiagnosticKind.DOCUMENT) -> LoadResult:
    diagnostic = document.diagnostic(path, kind, message).within(origin=origin)
    return LoadResult(diagnostics=[diagnostic])
