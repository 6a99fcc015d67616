"""The HTML report of ``simulate``, ``explain`` and ``diff`` (``--html FILE``): one
self-contained page (its CSS and script inline, nothing fetched when it is viewed) drawn by
its script from the command's JSON output, embedded in a ``<script type="application/json">``
block.

The page's data is the JSON output itself, with each list of objects (the nodes, the pods)
packed by column so that 5,000 nodes stay a few hundred kilobytes: every distinct value is
stored once and each column is a list of indexes into that table (or one index, when every
row has the same value). The page's script unpacks them into the very objects of the JSON
output before it draws anything, so the page and ``-o json`` never disagree.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from .diff import Comparison, summary, utilisation
from .explain import Explanation
from .simulate import Simulation

PACKED = "$packed"  # the key of a packed list of objects
ABSENT = -1  # the row has no value at this path

Path = tuple[str, ...]


@dataclass
class _Table:
    """The distinct values of a packed list, each stored once."""

    values: list[Any] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)

    def intern(self, value: Any) -> int:
        key = json.dumps(value, sort_keys=True)  # 1, 1.0 and true stay distinct
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = len(self.values)
            self.values.append(value)
        return found


def pack(document: Any) -> Any:
    """``document`` with every non-empty list of objects packed by column (see the module
    docstring); what is not such a list is kept as it is, but for a NaN or an infinity
    (a score rule's raw value can be one), given as its text."""
    if isinstance(document, Mapping):
        return {key: pack(value) for key, value in document.items()}
    if isinstance(document, list | tuple):
        if document and all(isinstance(row, Mapping) for row in document):
            return {PACKED: pack_rows(document)}
        return [pack(value) for value in document]
    if isinstance(document, float) and not math.isfinite(document):
        return str(document)  # "nan", "inf": JSON has no such number
    return document


def pack_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"rows": n, "values": [...], "columns": [[path, column], ...]}``: nested objects
    are flattened into one column per path (an empty object, a list or a scalar is a
    value); a column holds an index into ``values`` per row, ``ABSENT`` where the row has
    nothing at that path, or a single index when it is the same for every row."""
    flat = [dict(_flatten(row, ())) for row in rows]
    paths: dict[Path, None] = {}
    for row in flat:
        paths.update(dict.fromkeys(row))
    table = _Table()
    columns: list[list[Any]] = []
    for path in paths:
        column = [ABSENT if path not in row else table.intern(row[path]) for row in flat]
        same = all(i == column[0] for i in column)
        columns.append([list(path), column[0] if same else column])
    return {"rows": len(rows), "values": table.values, "columns": columns}


def _flatten(value: Mapping[str, Any], path: Path) -> list[tuple[Path, Any]]:
    out: list[tuple[Path, Any]] = []
    for key, item in value.items():
        if isinstance(item, Mapping) and item:
            out += _flatten(item, (*path, key))
        else:
            out.append(((*path, key), pack(item)))
    return out


def script_json(data: Any) -> str:
    """``data`` as JSON that can sit inside a ``<script>`` element: no ``<`` (so neither
    ``</script>`` nor ``<!--`` can end or change it), no ``>`` or ``&``, and no line or
    paragraph separators."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def render(kind: str, title: str, data: Mapping[str, Any]) -> str:
    """The page of a ``kind`` ("simulate", "explain" or "diff") report on ``data`` (the
    command's JSON output, and what the page adds to it)."""
    assets = resources.files(__package__)
    style = assets.joinpath("html_report.css").read_text(encoding="utf-8")
    script = assets.joinpath("html_report.js").read_text(encoding="utf-8")
    payload = script_json({"kind": kind, "title": title, "report": pack(data)})
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)}</title>\n<style>\n{style}</style>\n</head>\n"
        f"<body data-kind=\"{html.escape(kind)}\" data-state=\"loading\">\n"
        f"<header><h1>{html.escape(title)}</h1></header>\n"
        "<main id=\"report\"><p class=\"note\">This report is drawn by its script: "
        "enable JavaScript to see it.</p></main>\n"
        "<div id=\"tooltip\" hidden></div>\n<pre id=\"errors\" hidden></pre>\n"
        f"<script type=\"application/json\" id=\"data\">{payload}</script>\n"
        f"<script>\n{script}</script>\n</body>\n</html>\n")


def simulation_page(run: Simulation, title: str) -> str:
    """``simulate``'s report: the pods as ``-o json`` has them, and the cluster at the end
    (``diff``'s utilisation of the run)."""
    return render("simulate", title, {"pods": [p.as_json() for p in run.pods],
                                      "elapsed": run.end - run.start,
                                      "utilisation": utilisation(run).as_json()})


def explanation_page(result: Explanation, title: str) -> str:
    """``explain``'s report: its ``-o json`` output."""
    return render("explain", title, result.as_json())


def comparison_page(result: Comparison, label_a: str, label_b: str, title: str) -> str:
    """``diff``'s report: its ``-o json`` output and its one-line summary."""
    return render("diff", title, {"sides": {"a": label_a, "b": label_b}, **result.as_json(),
                                  "summary": summary(result)})
