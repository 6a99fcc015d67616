"""YAML text → plain data, remembering where every value and key was written.

PyYAML's composer gives nodes with marks; we build the data ourselves from the nodes so that
each path (``("spec", "filter", 0, "expression")``) keeps its key node and value node.
Duplicate keys are errors (PyYAML silently keeps the last one), keys are strings, YAML
timestamps stay strings (Kubernetes reads YAML as JSON), and aliases may not expand without
bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from . import messages
from .diagnostics import Diagnostic, DiagnosticKind
from .positions import Position, ScalarMap, TextOrigin

PathElement = str | int
Path = tuple[PathElement, ...]

MAX_VALUES = 1_000_000

_TAG = "tag:yaml.org,2002:"
_CONSTRUCTED_TAGS = frozenset(_TAG + t for t in ("str", "int", "float", "bool", "null"))
_TEXT_TAGS = frozenset(_TAG + t for t in ("timestamp", "binary"))


@dataclass(frozen=True, slots=True)
class NodeRef:
    """The node of a value, and the node of its key when it is a mapping value."""

    node: yaml.Node
    key: yaml.Node | None


@dataclass(frozen=True)
class YamlDocument:
    """One YAML document: its data, where it came from, and a node for every path."""

    value: Any
    origin: TextOrigin
    text: str
    nodes: Mapping[Path, NodeRef]
    number: int  # 0-based index of the document in its text

    def ref(self, path: Path) -> tuple[Path, NodeRef]:
        """The node at ``path``, or at its nearest ancestor that exists."""
        while path not in self.nodes and path:
            path = path[:-1]
        return path, self.nodes[path]

    def index(self, path: Path, *, key: bool = False) -> int:
        """Character index (in ``text``) of the value at ``path``, or of its key."""
        found, ref = self.ref(path)
        node = ref.key if key and ref.key is not None and found == path else ref.node
        return int(node.start_mark.index)

    def position(self, path: Path, *, key: bool = False) -> Position:
        return self.origin.position(self.index(path, key=key))

    def diagnostic(
        self, path: Path, kind: DiagnosticKind, message: str, *, key: bool = False
    ) -> Diagnostic:
        return Diagnostic.at(self.origin, self.index(path, key=key), kind, message)

    def scalar_map(self, path: Path) -> ScalarMap | None:
        ref = self.nodes.get(path)
        if ref is None or not isinstance(ref.node, yaml.ScalarNode):
            return None
        return ScalarMap(ref.node, self.text)

    def scalar_index(self, path: Path, offset: int) -> int:
        """Index in ``text`` of character ``offset`` of the string scalar at ``path``."""
        scalar = self.scalar_map(path)
        return scalar.source_index(offset) if scalar else self.index(path)


class _DocumentError(Exception):
    def __init__(self, node: yaml.Node, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


def parse_documents(
    text: str, origin: TextOrigin
) -> tuple[list[YamlDocument], list[Diagnostic]]:
    """All non-empty documents of ``text``, and the errors that prevented reading more."""
    documents: list[YamlDocument] = []
    try:
        for number, root in enumerate(yaml.compose_all(text, Loader=yaml.SafeLoader)):
            if root is None:
                continue
            builder = _Builder()
            try:
                value = builder.build(root, ())
            except _DocumentError as e:
                kind = DiagnosticKind.YAML
                return documents, [Diagnostic.at(origin, e.node.start_mark.index, kind, e.message)]
            if value is None:
                continue
            documents.append(YamlDocument(value, origin, text, builder.nodes, number))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        index = mark.index if mark is not None else 0
        problem = e.problem or e.context or "cannot parse"
        message = messages.INVALID_YAML.format(problem=problem)
        return documents, [Diagnostic.at(origin, index, DiagnosticKind.YAML, message)]
    except yaml.YAMLError as e:  # ReaderError: a non-printable character
        index = getattr(e, "position", 0)
        message = messages.INVALID_YAML.format(problem=str(e).splitlines()[0])
        return documents, [Diagnostic.at(origin, index, DiagnosticKind.YAML, message)]
    return documents, []


class _Builder:
    def __init__(self) -> None:
        self.nodes: dict[Path, NodeRef] = {}
        self._constructor = SafeConstructor()
        self._active: set[int] = set()
        self._count = 0

    def build(self, node: yaml.Node, path: Path, key: yaml.Node | None = None) -> Any:
        self._count += 1
        if self._count > MAX_VALUES:
            raise _DocumentError(node, messages.TOO_MANY_NODES.format(limit=MAX_VALUES))
        self.nodes[path] = NodeRef(node, key)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node)
        if id(node) in self._active:
            raise _DocumentError(node, messages.RECURSIVE_ALIAS)
        self._active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
            assert isinstance(node, yaml.MappingNode)
            return self._mapping(node, path)
        finally:
            self._active.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag in _TEXT_TAGS:
            return node.value
        if node.tag not in _CONSTRUCTED_TAGS:
            raise _DocumentError(node, messages.UNSUPPORTED_TAG.format(tag=node.tag))
        return self._constructor.construct_object(node)

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        seen: dict[str, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _TAG + "merge":
                continue
            name = self._key(key_node)
            if name in seen:
                first = seen[name].start_mark.line + 1
                message = messages.DUPLICATE_KEY.format(key=name, line=first)
                raise _DocumentError(key_node, message)
            seen[name] = key_node
        pairs = node.value
        if any(k.tag == _TAG + "merge" for k, _ in pairs):
            merged = yaml.MappingNode(node.tag, list(pairs), node.start_mark, node.end_mark)
            try:
                self._constructor.flatten_mapping(merged)
            except ConstructorError as e:
                raise _DocumentError(node, messages.INVALID_YAML.format(problem=e.problem)) from e
            pairs = merged.value
        out: dict[str, Any] = {}
        for key_node, value_node in pairs:
            name = self._key(key_node)
            out[name] = self.build(value_node, (*path, name), key_node)
        return out

    @staticmethod
    def _key(node: yaml.Node) -> str:
        if not isinstance(node, yaml.ScalarNode):
            kind = "list" if isinstance(node, yaml.SequenceNode) else "mapping"
            raise _DocumentError(node, messages.NON_SCALAR_KEY.format(kind=kind))
        return str(node.value)
