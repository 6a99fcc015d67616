"""Offsets in a YAML scalar's value → positions in the file, for every scalar style."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
import yaml

from policysched.policy.positions import EmbeddedText, FileText, Position, ScalarMap


def scalar(text: str, key: str = "e") -> yaml.ScalarNode:
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    for k, v in root.value:
        if k.value == key:
            assert isinstance(v, yaml.ScalarNode)
            return v
    raise KeyError(key)


def all_scalars(node: yaml.Node) -> Iterator[yaml.ScalarNode]:
    if isinstance(node, yaml.ScalarNode):
        yield node
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from all_scalars(item)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from all_scalars(key)
            yield from all_scalars(value)


STYLES = {
    "plain": "e: now - pod.creationTimestamp >= 15\n",
    "plain-multiline": "e: now -\n   pod.creationTimestamp\n   >= 15\nf: 1\n",
    "single": "e: 'pod.labels[''app''] == ''x'''\n",
    "single-multiline": "e: 'a &&\n    b ||\n\n    c'\n",
    "double": 'e: "!node.unschedulable && \\"x\\" == \'y\'"\n',
    "double-escapes": 'e: "a\\tb\\x41\\u00e9 \\\n    c\\nd"\n',
    "literal": "e: |\n  pods.exists(p,\n    nodes.exists(n, p.x))\n\n  && true\nf: 1\n",
    "literal-strip": "e: |-\n    a\n      b\n    c\n",
    "literal-keep-indicator": "e: |+2\n    a\n   b\n\n",
    "folded": "e: >\n  node.labels['a'] == 'b' &&\n  nod.x\n\n   more\n  end\n",
    "flow": "e: {x: [a, 'b c', \"d\"]}\ng: [x, y]\n",
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_visible_character_maps_to_the_character_that_wrote_it(style: str) -> None:
    text = STYLES[style]
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    scalars = list(all_scalars(root))
    checked = 0
    for node in scalars:
        mapping = ScalarMap(node, text)
        for offset, ch in enumerate(node.value):
            if ch.isspace():
                continue
            source = text[mapping.source_index(offset)]
            if node.style == '"' and source == "\\":
                continue  # an escape: the backslash is where the character was written
            assert source == ch, (style, offset, ch)
            checked += 1
    assert checked > 0


def test_escapes_map_to_their_backslash() -> None:
    text = 'e: "a\\tb\\x41\\u00e9"\n'
    node = scalar(text)
    assert node.value == "a\tbA\u00e9"
    mapping = ScalarMap(node, text)
    assert text[mapping.source_index(1):].startswith("\\t")
    assert text[mapping.source_index(3):].startswith("\\x41")
    assert text[mapping.source_index(4):].startswith("\\u00e9")


def test_literal_block_lines_and_columns_are_exact() -> None:
    text = "a: 1\ne: |\n  first\n    second x\n  third\n"
    node = scalar(text)
    origin = FileText("f.yaml", text)
    mapping = ScalarMap(node, text)
    x = node.value.index("x")
    assert origin.position(mapping.source_index(x)) == Position("f.yaml", 4, 12)
    third = node.value.index("third")
    assert origin.position(mapping.source_index(third)) == Position("f.yaml", 5, 3)


def test_end_of_value_maps_after_the_last_character() -> None:
    text = "e: pod.name +\n"
    node = scalar(text)
    mapping = ScalarMap(node, text)
    assert mapping.source_index(len(node.value)) == text.index("+") + 1


def test_folded_space_maps_to_the_end_of_the_previous_line() -> None:
    text = "e: >\n  a &&\n  b\n"
    node = scalar(text)
    assert node.value == "a && b\n"
    mapping = ScalarMap(node, text)
    origin = FileText("f", text)
    assert origin.position(mapping.source_index(4)) == Position("f", 2, 7)
    assert origin.position(mapping.source_index(5)) == Position("f", 3, 3)


def test_file_text_counts_lines_like_pyyaml() -> None:
    text = "a: 1\r\nb: [\r\n  2]\r\n"
    origin = FileText("f", text)
    node = yaml.compose(text, Loader=yaml.SafeLoader).value[1][1].value[0]
    mark = node.start_mark
    assert origin.position(mark.index) == Position("f", mark.line + 1, mark.column + 1)
    assert origin.line_text(2) == "b: ["
    assert origin.line_text(9) is None


def test_embedded_text_reports_positions_in_the_outer_file() -> None:
    outer_text = "data:\n  p.yaml: |\n    kind: X\n    spec: {a: 1}\n"
    outer = FileText("cm.yaml", outer_text)
    node = yaml.compose(outer_text, Loader=yaml.SafeLoader).value[0][1].value[0][1]
    embedded = EmbeddedText(outer, ScalarMap(node, outer_text))
    inner = node.value
    assert embedded.position(inner.index("spec")) == Position("cm.yaml", 4, 5)
    assert embedded.label == "cm.yaml"
    assert embedded.line_text(4) == "    spec: {a: 1}"


def test_a_blank_maps_just_after_the_character_before_it() -> None:
    """The end of a block scalar's value (where "unexpected end of expression" is reported)
    stays on the expression's last line, not on the line after the block."""
    text = "e: |\n  pod.priority > 0 &&\n    pod.priority <\n\nf: 1\n"
    node = scalar(text)
    mapping = ScalarMap(node, text)
    origin = FileText("f", text)
    assert origin.position(mapping.source_index(len(node.value))) == Position("f", 3, 19)
    newline = node.value.index("\n")
    assert origin.position(mapping.source_index(newline)) == Position("f", 2, 22)


STYLES_FOR_FUZZ = (None, "'", '"', "|", ">")
FUZZ_CHARACTERS = "ab xy  ()'\"\\#:-,.[]{}&|!?*%@`\t\né€😀"


def _value_node(root: yaml.Node | None, *keys: str) -> yaml.ScalarNode:
    node = root
    for key in keys:
        assert isinstance(node, yaml.MappingNode)
        node = next(v for k, v in node.value if k.value == key)
    assert isinstance(node, yaml.ScalarNode)
    return node


@pytest.mark.parametrize("loader", [yaml.SafeLoader, getattr(yaml, "CSafeLoader", None)])
def test_positions_through_two_levels_of_yaml_in_every_style(loader: type | None) -> None:
    """Seeded: random expressions in a policy document (every scalar style, folded at
    random widths) in a ConfigMap value (every style again): each visible character of
    the expression maps to the character of the outer file that wrote it."""
    if loader is None:
        pytest.skip("PyYAML without libyaml")
    rnd = random.Random(9)
    checked = 0
    for _ in range(300):
        value = "".join(rnd.choice(FUZZ_CHARACTERS) for _ in range(rnd.randint(1, 40)))
        inner = yaml.safe_dump({"spec": {"e": value}}, default_style=rnd.choice(STYLES_FOR_FUZZ),
                               width=rnd.choice((12, 30, 80)), allow_unicode=True)
        outer = yaml.safe_dump({"data": {"p.yaml": inner}},
                               default_style=rnd.choice(STYLES_FOR_FUZZ),
                               width=rnd.choice((12, 30, 80)), allow_unicode=True)
        outer_node = _value_node(yaml.compose(outer, Loader=loader), "data", "p.yaml")
        inner_node = _value_node(yaml.compose(inner, Loader=loader), "spec", "e")
        if outer_node.value != inner or inner_node.value != value:
            continue  # a string PyYAML cannot round-trip in that style
        outer_map, inner_map = ScalarMap(outer_node, outer), ScalarMap(inner_node, inner)
        embedded = EmbeddedText(FileText("cm.yaml", outer), outer_map)
        for offset, ch in enumerate(value):
            if ch.isspace():
                continue
            written = outer[outer_map.source_index(inner_map.source_index(offset))]
            # an escaped character is where its backslash (or doubled quote) is
            assert written == ch or written in "\\'\"", (value, inner, outer, offset)
            position = embedded.position(inner_map.source_index(offset))
            line = embedded.line_text(position.line)
            assert line is not None and line[position.column - 1] == written
            checked += 1
    assert checked > 1000
