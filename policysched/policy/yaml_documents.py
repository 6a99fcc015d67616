"""YAML text → plain data, remembering where every value and key was written.

The parser's events (libyaml's when it is installed, else PyYAML's own parser, which
gives the same positions) are composed into nodes with marks here, without recursion, and
the data is built from the nodes so that each path (``("spec", "filter", 0,
"expression")``) keeps its key node and value node. Duplicate keys are errors (PyYAML
silently keeps the last one), keys are strings, YAML timestamps stay strings (Kubernetes
reads YAML as JSON). Untrusted text cannot exhaust the process: the number of documents,
the nesting depth and what aliases add are bounded (``PolicyLimits``) as the events
arrive, each excess an error at the event that goes too far.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar, cast

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

from . import messages
from .diagnostics import Diagnostic, DiagnosticKind
from .limits import DEFAULT_LIMITS, PolicyLimits
from .positions import Position, ScalarMap, TextOrigin

PathElement = str | int
Path = tuple[PathElement, ...]

_TAG = "tag:yaml.org,2002:"
_CONSTRUCTED_TAGS = frozenset(_TAG + t for t in ("str", "int", "float", "bool", "null"))
_NUMBER_TAGS = frozenset(_TAG + t for t in ("int", "float"))
_TEXT_TAGS = frozenset(_TAG + t for t in ("timestamp", "binary"))
_BOM = "\ufeff"

_N = TypeVar("_N", bound=yaml.Node)

_PURE_LOADER: type[yaml.SafeLoader] = yaml.SafeLoader
_FAST_LOADER: type[Any] | None = getattr(yaml, "CSafeLoader", None)


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
    """A problem of the text that is not a YAML syntax error, at character ``index``."""

    def __init__(self, index: int, message: str,
                 kind: DiagnosticKind = DiagnosticKind.YAML) -> None:
        super().__init__(message)
        self.index = index
        self.message = message
        self.kind = kind


def parse_documents(
    text: str, origin: TextOrigin, limits: PolicyLimits | None = None
) -> tuple[list[YamlDocument], list[Diagnostic]]:
    """All non-empty documents of ``text``, and the errors that prevented reading more.

    ``limits`` bound policy input; without them (other YAML, such as cluster files) the
    number of documents is not bounded, nesting and aliases are, by the default limits."""
    # libyaml leaves a leading byte order mark out of its indices, and reads one elsewhere
    # unlike PyYAML: such (rare) text goes to PyYAML's parser.
    loader = _FAST_LOADER if _FAST_LOADER is not None and _BOM not in text else _PURE_LOADER
    documents, diagnostics, syntax = _parse(text, origin, limits, loader)
    if syntax and loader is not _PURE_LOADER:
        # libyaml words (and sometimes places) syntax errors differently: report the one
        # PyYAML's parser gives, as everywhere libyaml is not installed.
        again = _parse(text, origin, limits, _PURE_LOADER)
        if again[1]:
            return again[0], again[1]
    return documents, diagnostics


def _parse(
    text: str, origin: TextOrigin, limits: PolicyLimits | None, loader: type[Any]
) -> tuple[list[YamlDocument], list[Diagnostic], bool]:
    """Documents, errors, and whether the error is a YAML syntax error."""
    documents: list[YamlDocument] = []
    composer = _Composer(len(text), limits)
    try:
        for number, root in composer.documents(yaml.parse(text, Loader=loader)):
            builder = _Builder()
            value = builder.build(root, ())
            if value is not None:
                documents.append(YamlDocument(value, origin, text, builder.nodes, number))
    except _DocumentError as e:
        return documents, [Diagnostic.at(origin, e.index, e.kind, e.message)], False
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        index = mark.index if mark is not None else 0
        problem = e.problem or e.context or "cannot parse"
        message = messages.INVALID_YAML.format(problem=problem)
        return documents, [Diagnostic.at(origin, index, DiagnosticKind.YAML, message)], True
    except yaml.YAMLError as e:  # ReaderError: a non-printable character
        index = getattr(e, "position", 0)
        message = messages.INVALID_YAML.format(problem=str(e).splitlines()[0])
        return documents, [Diagnostic.at(origin, index, DiagnosticKind.YAML, message)], True
    return documents, [], False


# -- events → nodes ----------------------------------------------------------------------


@dataclass(slots=True)
class _Open:
    """A mapping or sequence being composed: the key waiting for its value, and its size
    (values and characters) and height (levels) so far, aliases expanded."""

    node: yaml.MappingNode | yaml.SequenceNode
    anchor: str | None
    key: yaml.Node | None = None
    size: int = 1
    height: int = 1


class _Composer:
    """PyYAML's composer with an explicit stack instead of recursion, which bounds what a
    text may cost as each event arrives: the number of documents, the nesting depth and
    what aliases add (both with aliases expanded: an alias stands for the size and height
    of its anchored node). Each excess is an error at the event that goes too far."""

    def __init__(self, text_length: int, limits: PolicyLimits | None) -> None:
        self.limits = limits or DEFAULT_LIMITS
        self.max_documents = limits.max_documents if limits is not None else None
        self.budget = self.limits.max_alias_expansion * text_length
        self.expanded = 0  # what aliases added so far
        self.resolver = Resolver()
        self.anchors: dict[str, yaml.Node] = {}
        self.complete: dict[int, tuple[int, int]] = {}  # anchored node id → (size, height)
        self.stack: list[_Open] = []
        self.root: yaml.Node | None = None

    def documents(self, events: Iterator[yaml.Event]) -> Iterator[tuple[int, yaml.Node]]:
        """(document number, root node) per document."""
        number = -1
        for event in events:
            if isinstance(event, yaml.DocumentStartEvent):
                number += 1
                if self.max_documents is not None and number >= self.max_documents:
                    self._limit(event, messages.TOO_MANY_DOCUMENTS, "max_documents")
            elif isinstance(event, yaml.DocumentEndEvent):
                assert self.root is not None
                yield number, self.root
                self.root, self.anchors, self.complete = None, {}, {}
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                done = self.stack.pop()
                done.node.end_mark = _end(event)
                self._add(done.node, done.size, done.height, done.anchor)
            elif isinstance(event, yaml.AliasEvent):
                self._alias(event)
            elif isinstance(event, yaml.ScalarEvent):
                node = self._scalar(event)
                self._add(node, 1 + len(event.value), 0, event.anchor)
            elif isinstance(event, yaml.CollectionStartEvent):
                if len(self.stack) >= self.limits.max_depth:
                    self._limit(event, messages.TOO_DEEP, "max_depth")
                self.stack.append(_Open(self._collection(event), event.anchor))

    def _add(self, node: yaml.Node, size: int, height: int, anchor: str | None) -> None:
        """``node`` is complete: into its parent (or the document's root)."""
        if anchor is not None:
            self.complete[id(node)] = (size, height)
        if not self.stack:
            self.root = node
            return
        top = self.stack[-1]
        top.size += size
        top.height = max(top.height, 1 + height)
        if isinstance(top.node, yaml.SequenceNode):
            top.node.value.append(node)
        elif top.key is None:
            top.key = node
        else:
            top.node.value.append((top.key, node))
            top.key = None

    def _alias(self, event: yaml.AliasEvent) -> None:
        anchor = event.anchor
        if anchor not in self.anchors:
            raise ComposerError(None, None, f"found undefined alias {anchor!r}", _start(event))
        node = self.anchors[anchor]
        if id(node) not in self.complete:  # an alias inside its own anchored node
            raise _DocumentError(_start(event).index, messages.RECURSIVE_ALIAS)
        size, height = self.complete[id(node)]
        self.expanded += size
        if self.expanded > self.budget:
            self._limit(event, messages.ALIAS_EXPANSION, "max_alias_expansion")
        if len(self.stack) + height > self.limits.max_depth:
            self._limit(event, messages.TOO_DEEP, "max_depth")
        self._add(node, size, height, None)

    def _scalar(self, event: yaml.ScalarEvent) -> yaml.ScalarNode:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
        node = yaml.ScalarNode(tag, event.value, _start(event), _end(event),
                               style=event.style or None)
        return self._anchored(event, node)

    def _collection(self, event: yaml.CollectionStartEvent
                    ) -> yaml.SequenceNode | yaml.MappingNode:
        kind = yaml.SequenceNode if isinstance(event, yaml.SequenceStartEvent) else (
            yaml.MappingNode)
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(kind, None, event.implicit)
        node = kind(tag, [], _start(event), None, flow_style=event.flow_style)
        return self._anchored(event, node)

    def _anchored(self, event: yaml.NodeEvent, node: _N) -> _N:
        anchor = event.anchor
        if anchor is None:
            return node
        if anchor in self.anchors:
            raise ComposerError(
                f"found duplicate anchor {anchor!r}; first occurrence",
                self.anchors[anchor].start_mark, "second occurrence", _start(event))
        self.anchors[anchor] = node
        return node

    def _limit(self, event: yaml.Event, template: str, name: str) -> NoReturn:
        raise _DocumentError(_start(event).index, self.limits.message(template, name),
                             DiagnosticKind.LIMIT)


def _start(event: yaml.Event) -> yaml.Mark:
    """Where ``event`` starts (libyaml's marks have the index, line and column of PyYAML's)."""
    return cast(yaml.Mark, event.start_mark)


def _end(event: yaml.Event) -> yaml.Mark:
    return cast(yaml.Mark, event.end_mark)


# -- nodes → data ------------------------------------------------------------------------


class _Builder:
    """Data from a composed document (whose nesting and aliases the composer bounded)."""

    def __init__(self) -> None:
        self.nodes: dict[Path, NodeRef] = {}
        self._constructor = SafeConstructor()

    def build(self, node: yaml.Node, path: Path, key: yaml.Node | None = None) -> Any:
        self.nodes[path] = NodeRef(node, key)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, yaml.MappingNode)
        return self._mapping(node, path)

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag in _TEXT_TAGS:
            return node.value
        if node.tag not in _CONSTRUCTED_TAGS:
            raise _DocumentError(node.start_mark.index,
                                 messages.UNSUPPORTED_TAG.format(tag=node.tag))
        if node.tag in _NUMBER_TAGS:
            return self._number(node)
        return self._constructor.construct_object(node)

    def _number(self, node: yaml.ScalarNode) -> Any:
        """An int or float; one too long to convert (Python reads at most 4,300 digits, and
        sexagesimal ``1:2:3`` in quadratic time) or out of range is an error."""
        limit = sys.get_int_max_str_digits() or sys.maxsize
        if len(node.value) > limit:
            raise _DocumentError(node.start_mark.index,
                                 messages.NUMBER_TOO_LONG.format(limit=limit))
        try:
            return self._constructor.construct_object(node)
        except (ValueError, OverflowError) as e:
            raise _DocumentError(node.start_mark.index,
                                 messages.INVALID_NUMBER.format(reason=e)) from None

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        seen: dict[str, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _TAG + "merge":
                continue
            name = self._key(key_node)
            if name in seen:
                first = seen[name].start_mark.line + 1
                message = messages.DUPLICATE_KEY.format(key=name, line=first)
                raise _DocumentError(key_node.start_mark.index, message)
            seen[name] = key_node
        pairs = node.value
        if any(k.tag == _TAG + "merge" for k, _ in pairs):
            merged = yaml.MappingNode(node.tag, list(pairs), node.start_mark, node.end_mark)
            try:
                self._constructor.flatten_mapping(merged)
            except ConstructorError as e:
                raise _DocumentError(node.start_mark.index,
                                     messages.INVALID_YAML.format(problem=e.problem)) from e
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
            raise _DocumentError(node.start_mark.index, messages.NON_SCALAR_KEY.format(kind=kind))
        return str(node.value)
