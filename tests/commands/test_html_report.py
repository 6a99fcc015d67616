"""The HTML report of simulate / explain / diff (``--html``): its data block is the JSON
output, packed losslessly and safe inside ``<script>``; the page needs no network; and,
rendered in a real headless Chromium (the ``e2e`` tests: ``make test`` runs them), it shows
what a person looks for — the chosen node, the reasons by rule, the heat map drawn, per-zone
utilisation — without a script error, at 5,000 nodes too."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from policysched.cli import main
from policysched.commands.diff import NodeFill
from policysched.commands.explain import Explanation, NodeExplanation
from policysched.commands.html_report import (
    ABSENT,
    PACKED,
    explanation_page,
    pack,
    render,
    script_json,
)
from tests import browser

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo-cluster.yaml"
PORTS_REASON = "node(s) didn't have free ports for the requested pod ports"  # kube's text

HOSTILE = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: hostile
  labels: {policysched.io/profile: policysched}
spec:
  filter:
  - name: no-zone-a
    expression: "node.labels[?'topology.kubernetes.io/zone'].orValue('') != 'zone-a'"
    reason: "</script><script>document.body.dataset.owned = 1</script><!-- & zone-a"
"""

NOT_ZONE_B = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: not-zone-b
  labels: {policysched.io/profile: policysched}
spec:
  filter:
  - name: avoid-zone-b
    expression: "node.labels[?'topology.kubernetes.io/zone'].orValue('') != 'zone-b'"
    reason: node(s) are in zone-b
"""


def unpack(value: Any) -> Any:
    """What the page's script does with a packed document (html_report.js: unpack)."""
    if isinstance(value, list):
        return [unpack(v) for v in value]
    if not isinstance(value, dict):
        return value
    if PACKED not in value:
        return {k: unpack(v) for k, v in value.items()}
    packed = value[PACKED]
    values = [unpack(v) for v in packed["values"]]
    rows: list[dict[str, Any]] = [{} for _ in range(packed["rows"])]
    for path, column in packed["columns"]:
        for i, row in enumerate(rows):
            index = column if isinstance(column, int) else column[i]
            if index == ABSENT:
                continue
            for key in path[:-1]:
                row = row.setdefault(key, {})
            row[path[-1]] = values[index]
    return rows


def data_block(page: str) -> Any:
    (found,) = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page,
                          re.S)
    return json.loads(found)


def visible(dom: str) -> str:
    """The rendered DOM without its scripts (the data block holds every text too)."""
    return re.sub(r"<script\b.*?</script>", "", dom, flags=re.S)


# -- the page, without a browser --------------------------------------------------------------


def test_packing_keeps_every_row_and_key_and_stores_each_value_once() -> None:
    rows = [{"node": f"n{i}", "feasible": i % 2 == 0, "total": None if i % 2 else i,
             "filters": {"a/x": "pass", "b/y": "pass" if i % 2 == 0 else "no"},
             "reasons": {} if i % 2 == 0 else {"b/y": ["no"]},
             "scores": {} if i % 2 else {"s/z": {"raw": 1.5, "normalized": 100, "weighted": i}}}
            for i in range(6)]
    document = {"pod": "default/p", "nodes": rows, "audits": [], "empty": {}}
    packed = pack(document)
    assert unpack(packed) == document
    columns = {tuple(path): column for path, column in packed["nodes"][PACKED]["columns"]}
    assert isinstance(columns[("filters", "a/x")], int)  # the same on every row: one index
    values = packed["nodes"][PACKED]["values"]
    assert values.count("pass") == 1 and len(values) == len({json.dumps(v) for v in values})


def test_a_nan_or_infinite_score_is_written_as_text() -> None:
    packed = pack({"nodes": [{"raw": float("nan")}, {"raw": float("-inf")}]})
    assert unpack(json.loads(script_json(packed))) == {"nodes": [{"raw": "nan"},
                                                                 {"raw": "-inf"}]}


def test_script_json_cannot_end_the_script_element() -> None:
    data = {"reason": "</script><script>alert(1)</script><!-- \u2028 & >"}
    text = script_json(data)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == data


def test_policy_text_stays_data_and_the_page_needs_no_network(tmp_path: Path) -> None:
    policy = tmp_path / "hostile.yaml"
    policy.write_text(HOSTILE)
    page = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["explain", "--cluster", str(DEMO), "--pod", "web-0",
                                       "--policies", str(policy), "--html", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert text.count("</script>") == 2  # the data block's and the script's own
    assert not re.search(r"\b(src|href)=|@import|url\(|https?://", text)
    report = unpack(data_block(text)["report"])
    json_output = json.loads(CliRunner().invoke(main, [
        "explain", "--cluster", str(DEMO), "--pod", "web-0", "--policies", str(policy),
        "-o", "json"]).stdout)
    assert report == json_output  # the page's data is the JSON output, nothing else


def test_each_command_writes_its_report_and_a_bad_path_is_an_error_that_loses_nothing(
        tmp_path: Path) -> None:
    runner = CliRunner()
    policy = tmp_path / "not-zone-b.yaml"
    policy.write_text(NOT_ZONE_B)
    cases = [(["simulate", "--cluster", str(DEMO)], 0, "simulate", "9/10 pods bound"),
             (["explain", "--cluster", str(DEMO), "--pod", "too-big"], 0, "explain",
              "unschedulable: 0/4 nodes are available"),
             (["diff", "--cluster", str(DEMO), "--policies", str(policy)], 1, "diff",
              "different: ")]
    for args, code, kind, output in cases:
        page = tmp_path / f"{kind}.html"
        result = runner.invoke(main, [*args, "--html", str(page)])
        assert result.exit_code == code, result.output
        assert f"wrote {page}" in result.stderr
        assert data_block(page.read_text())["kind"] == kind
        missing = tmp_path / "no-such-dir" / "r.html"
        result = runner.invoke(main, [*args, "--html", str(missing)])
        assert result.exit_code == (2 if kind == "diff" else 1)
        assert f"{missing}: No such file or directory" in result.stderr
        assert output in result.stdout  # the output is printed all the same
        assert "Traceback" not in result.output


def big_explanation(count: int) -> Explanation:
    """An explanation over ``count`` nodes in three zones: a third rejected by one of two
    rules, the rest scored by three rules."""
    rules = ("node-unschedulable/not-cordoned", "taint-toleration/tolerated",
             "node-resources-fit/fits-request")
    scores = ("node-resources-fit/least-allocated", "taint-toleration/prefer-no-schedule",
              "image-locality/image-locality")
    nodes = []
    for i in range(count):
        node = NodeExplanation(f"node-{i:05d}", fill=NodeFill(
            f"node-{i:05d}", f"zone-{'abc'[i % 3]}", (i % 97) / 97, (i % 89) / 89, i % 30))
        rejected = rules[1 + i % 2] if i % 3 == 0 else None
        for rule in rules:
            reason = "Insufficient cpu" if "fits" in rule else "node(s) had untolerated taint(s)"
            node.filters[rule] = reason if rule == rejected else "pass"
            if rule == rejected:
                node.reasons[rule] = (reason,)
        if rejected is None:
            node.scores = {rule: (float(i % 50), (i * 7) % 101, (i * 7) % 101) for rule in scores}
            node.total = sum(s[2] for s in node.scores.values())
        nodes.append(node)
    totals = sorted((n.total for n in nodes if n.total is not None), reverse=True)
    for node in nodes:
        if node.total is not None:
            node.rank = 1 + totals.index(node.total)
    chosen = min((n for n in nodes if n.rank == 1), key=lambda n: n.node).node
    return Explanation("default/big", "policysched", "pass", "pass", nodes, chosen, "", 1, 1,
                       0.0)


# -- in a real browser --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    try:
        return browser.find_chromium()
    except browser.BrowserMissing as e:
        pytest.fail(str(e))  # not a skip: `make test` installs it


def rendered(path: Path, fragment: str = "") -> browser.RenderedPage:
    page = browser.render(path, fragment)
    body = body_tag(page.dom)
    errors = re.search(r'<pre id="errors"[^>]*>(.*?)</pre>', page.dom, re.S)
    assert 'data-state="rendered"' in body and "data-errors" not in body, (
        body, errors and errors.group(1))
    assert not page.console, page.console  # the page writes nothing there, errors neither
    return page


def body_tag(dom: str) -> str:
    found = re.search(r"<body[^>]*>", dom)
    assert found is not None
    return found.group()


@pytest.mark.e2e
def test_explain_report_shows_the_chosen_node_the_reasons_and_the_heat_map(
        chromium: str, tmp_path: Path) -> None:
    path = tmp_path / "explain.html"
    result = CliRunner().invoke(main, ["explain", "--cluster", str(DEMO), "--pod", "ingress-b",
                                       "--html", str(path)])
    assert result.exit_code == 0, result.output
    dom = visible(rendered(path).dom)
    assert re.search(r'id="chosen">chosen node: <strong[^>]*>node-b1</strong>', dom)
    reasons = re.search(r'<section id="reasons">.*?</section>', dom, re.S)
    assert reasons is not None
    assert "<code>node-ports/free-host-ports</code>" in reasons.group()
    assert f'<li class="reason">{PORTS_REASON}</li>' in reasons.group()
    assert 'data-cells="4"' in dom  # one cell per node
    assert "node node-b1 (chosen): feasible" in dom  # the chosen node's detail, opened
    zones = re.search(r'<section id="zones">.*?</section>', dom, re.S)
    assert zones is not None and ">zone-a<" in zones.group() and ">zone-c<" in zones.group()
    # a link to a node opens its detail: every rule's verdict, the rejection among them
    detail = re.search(r'<div class="detail" id="node-detail">.*?</table>',
                       visible(rendered(path, "node=node-a1").dom), re.S)
    assert detail is not None and "node node-a1: rejected, total -" in detail.group()
    assert ('<td><code>node-ports/free-host-ports</code></td><td>filter</td>'
            f'<td><span class="bad">{PORTS_REASON}</span></td>') in detail.group()


@pytest.mark.e2e
def test_a_policy_reason_is_shown_as_text_never_run(chromium: str, tmp_path: Path) -> None:
    policy = tmp_path / "hostile.yaml"
    policy.write_text(HOSTILE)
    path = tmp_path / "explain.html"
    result = CliRunner().invoke(main, ["explain", "--cluster", str(DEMO), "--pod", "web-0",
                                       "--policies", str(policy), "--html", str(path)])
    assert result.exit_code == 0, result.output
    dom = visible(rendered(path).dom)
    assert ('<li class="reason">&lt;/script&gt;&lt;script&gt;document.body.dataset.owned = 1'
            "&lt;/script&gt;&lt;!-- &amp; zone-a</li>") in dom
    assert "data-owned" not in body_tag(dom)


@pytest.mark.e2e
def test_simulate_and_diff_reports_render_both_sides(chromium: str, tmp_path: Path) -> None:
    runner = CliRunner()
    simulated = tmp_path / "simulate.html"
    assert runner.invoke(main, ["simulate", "--cluster", str(DEMO), "--html",
                                str(simulated)]).exit_code == 0
    dom = visible(rendered(simulated).dom)
    assert "9/10 pending pods bound" in dom
    assert "0/4 nodes are available: 1 node(s) had untolerated taint(s)" in dom  # too-big
    assert 'data-cells="4"' in dom
    policy = tmp_path / "not-zone-b.yaml"
    policy.write_text(NOT_ZONE_B)
    compared = tmp_path / "diff.html"
    result = runner.invoke(main, ["diff", "--cluster", str(DEMO), "--policies", str(policy),
                                  "--html", str(compared)])
    assert result.exit_code == 1, result.output
    dom = visible(rendered(compared).dom)
    assert f"--policies {policy}" in dom and "the built-in configuration" in dom
    assert "placed differently" in dom
    assert dom.count('data-cells="4"') == 2  # a heat map per side
    assert 'id="zones-a"' in dom and 'id="zones-b"' in dom


@pytest.mark.e2e
def test_the_diff_page_shows_the_fill_the_text_output_shows(
        chromium: str, tmp_path: Path) -> None:
    """Shares are rounded as Python's {:.0%} rounds them (v * 100, then half to even): here
    a node's cpu fill is 0.025, 2% in the text and not 3%."""
    maintenance = ROOT / "examples" / "maintenance"
    args = ["diff", "--cluster", str(maintenance / "cluster.yaml"), "--policies",
            str(maintenance / "maintenance.yaml")]
    text = CliRunner().invoke(main, args).stdout
    page = tmp_path / "diff.html"
    assert CliRunner().invoke(main, [*args, "--html", str(page)]).exit_code == 1
    dom = visible(rendered(page).dom)
    rows = [line.split("  ") for line in text.splitlines() if " fill min p50 p90 max " in line]
    assert len(rows) == 2
    for row in rows:
        label, a, b = (cell.strip() for cell in row if cell.strip())
        assert f"<td>{label}</td><td class=\"num\">{a}</td><td class=\"num\">{b}</td>" in dom


@pytest.mark.e2e
def test_a_5000_node_report_stays_small_and_draws_every_node(
        chromium: str, tmp_path: Path) -> None:
    explanation = big_explanation(5000)
    path = tmp_path / "big.html"
    path.write_text(explanation_page(explanation, "big"))
    assert path.stat().st_size < 1_000_000
    dom = visible(rendered(path).dom)
    assert 'data-cells="5000"' in dom
    assert f"chosen node: <strong class=\"ok\">{explanation.chosen}</strong>" in dom
    assert "Insufficient cpu" in dom and "node(s) had untolerated taint(s)" in dom


@pytest.mark.e2e
def test_a_script_error_is_seen(chromium: str, tmp_path: Path) -> None:
    """The checks above can fail: a page whose drawing throws says so."""
    path = tmp_path / "broken.html"
    path.write_text(render("no-such-kind", "broken", {}))
    page = browser.render(path)
    body = body_tag(page.dom)
    assert 'data-state="failed"' in body and 'data-errors="1"' in body
    assert "script error: TypeError" in page.dom


@pytest.mark.e2e
def test_an_uncaught_error_is_in_the_console_log(chromium: str, tmp_path: Path) -> None:
    path = tmp_path / "throws.html"
    path.write_text("<!DOCTYPE html><script>null.f();</script>")
    assert any("Uncaught TypeError" in line for line in browser.render(path).console)
