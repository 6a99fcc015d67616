"""Policy sources → documents: files, directories, multi-document YAML and ConfigMaps.

A directory is searched recursively for ``*.yaml`` and ``*.yml`` files, in sorted order;
entries whose name starts with ``.`` are skipped (a ConfigMap mounted as a volume has
``..data`` links to a timestamped ``..2024_…`` copy of its files, which would otherwise be
read twice). A file holds any number of documents: SchedulingPolicy and
SchedulerConfiguration documents, ConfigMaps whose data keys hold such documents, and
``List``s of those (``kubectl get -o yaml``). Anything else is an error.

Positions inside a ConfigMap key are reported on the real line of the file when the policy
was read from a file; ConfigMaps read from the API are shown as ``namespace/name[key]``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Any

import yaml

from . import messages
from .diagnostics import Diagnostic, DiagnosticKind
from .documents import CONFIGURATION_KIND, POLICY_KIND, LoadedDocument
from .positions import EmbeddedText, FileText, ScalarMap, TextOrigin
from .schema import json_type
from .yaml_documents import Path, YamlDocument, parse_documents

YAML_SUFFIXES = (".yaml", ".yml")
CONFIGMAP_KIND = "ConfigMap"
DOCUMENT_KINDS = (POLICY_KIND, CONFIGURATION_KIND)


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


def load_paths(paths: Iterable[str | os.PathLike[str]]) -> LoadResult:
    """Load files and directories; a path that yields no policy at all is an error."""
    result = LoadResult()
    for path in paths:
        found = load_path(path)
        if not found.diagnostics and not found.documents:
            label = os.fspath(path)
            message = (
                messages.NO_YAML_FILES if os.path.isdir(path) and not found.files
                else messages.NO_POLICIES
            )
            found.diagnostics.append(Diagnostic(DiagnosticKind.DOCUMENT, message, label))
        result.extend(found)
    return result


def load_path(path: str | os.PathLike[str]) -> LoadResult:
    if os.path.isdir(path):
        result = LoadResult()
        for file in yaml_files(path):
            result.extend(load_file(file))
        return result
    return load_file(path)


def yaml_files(directory: str | os.PathLike[str]) -> list[str]:
    """``*.yaml`` / ``*.yml`` under ``directory``, recursively, sorted, hidden entries
    skipped."""
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [
            os.path.join(root, f)
            for f in files
            if f.endswith(YAML_SUFFIXES) and not f.startswith(".")
        ]
    return sorted(found, key=lambda f: FilePath(f).parts)


def load_file(path: str | os.PathLike[str]) -> LoadResult:
    label = os.fspath(path)
    try:
        data = FilePath(path).read_bytes()
    except OSError as e:
        reason = e.strerror or str(e)
        message = messages.CANNOT_READ.format(reason=reason)
        return LoadResult(diagnostics=[Diagnostic(DiagnosticKind.IO, message, label)])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        readable = data[: e.start].decode("utf-8")
        message = messages.NOT_UTF8.format(offset=e.start)
        diagnostic = Diagnostic.at(FileText(label, readable), len(readable), DiagnosticKind.IO,
                                   message)
        return LoadResult(diagnostics=[diagnostic], files=[label])
    result = load_text(text, label)
    result.files.append(label)
    return result


def load_text(text: str, label: str) -> LoadResult:
    """Documents of a YAML text shown as ``label`` (a file's path)."""
    origin = FileText(label, text)
    documents, diagnostics = parse_documents(text, origin)
    result = LoadResult(diagnostics=diagnostics)
    for document in documents:
        result.extend(_classify(document, None))
    return result


def load_configmap(configmap: Mapping[str, Any]) -> LoadResult:
    """Documents of a ConfigMap fetched from the API (a dict as in its JSON form):
    positions are lines inside each key's text, shown as ``namespace/name[key]``."""
    result = LoadResult()
    data = configmap.get("data") or {}
    if not isinstance(data, Mapping):
        return result
    metadata = configmap.get("metadata") or {}
    for key, text in data.items():
        label = _configmap_label(metadata, str(key))
        if not isinstance(text, str):
            actual = messages.JSON_TYPES[json_type(text)]
            message = messages.CONFIGMAP_VALUE_NOT_STRING.format(key=key, actual=actual)
            result.diagnostics.append(Diagnostic(DiagnosticKind.DOCUMENT, message, label))
            continue
        result.extend(_embedded(text, FileText(label, text), str(key), label))
    return result


def _configmap_label(metadata: Any, key: str) -> str:
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name = str(metadata.get("name") or "")
    namespace = metadata.get("namespace")
    if namespace:
        return messages.CONFIGMAP_ORIGIN.format(namespace=namespace, name=name, key=key)
    return f"{name}[{key}]"


def _classify(document: YamlDocument, origin: str | None) -> LoadResult:
    value = document.value
    if not isinstance(value, dict):
        actual = "a list" if isinstance(value, list) else "a single value"
        message = messages.DOCUMENT_NOT_MAPPING.format(actual=actual)
        return _error(document, (), message, origin)
    kind = value.get("kind")
    if kind in DOCUMENT_KINDS:
        return LoadResult(documents=[LoadedDocument(str(kind), document, origin)])
    if origin is not None:  # inside a ConfigMap: only policies and configurations
        message = messages.EMBEDDED_WRONG_KIND.format(origin=origin, kind=kind)
        return _error(document, ("kind",) if kind else (), message, origin)
    if kind == CONFIGMAP_KIND:
        return _configmap_in_file(document)
    if isinstance(kind, str) and kind.endswith("List") and "items" in value:
        return _list(document)
    if kind is None:
        return _error(document, (), messages.DOCUMENT_NO_KIND, origin)
    return _error(document, ("kind",), messages.DOCUMENT_WRONG_KIND.format(kind=kind), origin)


def _list(document: YamlDocument) -> LoadResult:
    items = document.value["items"]
    if not isinstance(items, list):
        return _error(document, ("items",), messages.LIST_ITEMS_NOT_LIST, None)
    result = LoadResult()
    for i in range(len(items)):
        result.extend(_classify(_sub(document, ("items", i)), None))
    return result


def _configmap_in_file(configmap: YamlDocument) -> LoadResult:
    data = configmap.value.get("data")
    if data is None:
        return LoadResult()
    if not isinstance(data, dict):
        return _error(configmap, ("data",), messages.CONFIGMAP_DATA_NOT_MAPPING, None)
    result = LoadResult()
    for key, text in data.items():
        origin_label = _configmap_label(configmap.value.get("metadata"), key)
        if not isinstance(text, str):
            actual = messages.JSON_TYPES[json_type(text)]
            message = messages.CONFIGMAP_VALUE_NOT_STRING.format(key=key, actual=actual)
            result.extend(_error(configmap, ("data", key), message, origin_label))
            continue
        node = configmap.nodes[("data", key)].node
        assert isinstance(node, yaml.ScalarNode)
        origin = EmbeddedText(configmap.origin, ScalarMap(node, configmap.text))
        result.extend(_embedded(text, origin, key, origin_label))
    return result


def _embedded(text: str, origin: TextOrigin, key: str, origin_label: str) -> LoadResult:
    documents, diagnostics = parse_documents(text, origin)
    result = LoadResult(diagnostics=[d.within(origin=origin_label) for d in diagnostics])
    for document in documents:
        result.extend(_classify(document, origin_label))
    return result


def _sub(document: YamlDocument, path: Path) -> YamlDocument:
    """The part of ``document`` at ``path`` as a document of its own."""
    if not path:
        return document
    n = len(path)
    value: Any = document.value
    for part in path:
        value = value[part]
    nodes = {p[n:]: ref for p, ref in document.nodes.items() if p[:n] == path}
    return YamlDocument(value, document.origin, document.text, nodes, document.number)


def _error(document: YamlDocument, path: Path, message: str, origin: str | None) -> LoadResult:
    diagnostic = document.diagnostic(path, DiagnosticKind.DOCUMENT, message).within(origin=origin)
    return LoadResult(diagnostics=[diagnostic])

