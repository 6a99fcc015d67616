// The report page of policysched simulate / explain / diff (policysched/commands/html_report.py).
// Reads the JSON output embedded in <script id="data">, unpacks its packed lists and draws
// the page with DOM nodes (text only: names and messages are never parsed as HTML) and one
// canvas per zone for the node heat maps. Sets body[data-state] to "rendered" when done;
// a script error is shown in #errors and counted in body[data-errors].
"use strict";
(function () {
  const errorBox = document.getElementById("errors");
  function showError(text) {
    errorBox.hidden = false;
    errorBox.textContent += text + "\n";
    document.body.dataset.errors = String(Number(document.body.dataset.errors || 0) + 1);
  }
  window.addEventListener("error", (e) => showError("script error: " + e.message));

  // -- the data ---------------------------------------------------------------------------
  function unpack(value) {
    if (Array.isArray(value)) return value.map(unpack);
    if (value === null || typeof value !== "object") return value;
    if ("$packed" in value) return unpackRows(value["$packed"]);
    const out = {};
    for (const key of Object.keys(value)) out[key] = unpack(value[key]);
    return out;
  }

  function unpackRows(packed) {
    const values = packed.values.map(unpack);
    const rows = Array.from({ length: packed.rows }, () => ({}));
    for (const [path, column] of packed.columns) {
      const last = path.length - 1;
      for (let i = 0; i < rows.length; i++) {
        const index = typeof column === "number" ? column : column[i];
        if (index < 0) continue;
        let target = rows[i];
        for (let j = 0; j < last; j++) target = target[path[j]] || (target[path[j]] = {});
        const value = values[index];
        const empty = value !== null && typeof value === "object" && !Array.isArray(value) &&
          Object.keys(value).length === 0;
        target[path[last]] = empty ? {} : value;
      }
    }
    return rows;
  }

  // -- DOM helpers --------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else node[key] = value;
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function section(title, id, ...children) {
    return el("section", { id }, el("h2", {}, title), ...children);
  }

  function table(headers, rows, numeric) {
    const isNum = (i) => (numeric || []).includes(i);
    return el("table", {},
      el("thead", {}, el("tr", {}, headers.map((h, i) => el("th", isNum(i) ? { class: "num" } : {}, h)))),
      el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell, i) =>
        el("td", isNum(i) ? { class: "num" } : {}, cell))))));
  }

  function kv(pairs) {
    return el("dl", { class: "kv" }, pairs.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  }

  // A share as the text output has it (Python's f"{v:.0%}": v * 100 as a double, then its
  // exact value rounded half to even; Math.round would take 2.5 to 3, Python to 2).
  function pct(v) {
    if (v === null || v === undefined) return "-";
    const x = Math.abs(v) * 100;
    let whole = Math.floor(x);
    const fraction = x - whole;  // exact
    if (fraction > 0.5 || (fraction === 0.5 && whole % 2 === 1)) whole += 1;
    return (v < 0 && whole > 0 ? "-" : "") + whole + "%";
  }
  const dash = (v) => (v === null || v === undefined ? "-" : String(v));
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

  // -- colours ------------------------------------------------------------------------------
  const RULE_COLOURS = ["#d1495b", "#edae49", "#8f5db7", "#e07a1f", "#c2185b", "#795548",
    "#5c6bc0", "#b8860b", "#ef6c8f", "#6d4c41", "#9e9d24", "#ad1457"];
  const NO_VALUE = "#c9ced6";

  function ramp(t, from, to) {  // t in 0..1 between two [r, g, b]
    const c = from.map((f, i) => Math.round(f + (to[i] - f) * Math.max(0, Math.min(1, t))));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }
  const fillColour = (v) => (v === null || v === undefined ? NO_VALUE : ramp(v, [234, 243, 251], [8, 48, 107]));
  const scoreColour = (t) => ramp(t, [199, 233, 192], [0, 109, 44]);

  // -- the heat map -------------------------------------------------------------------------
  // One canvas per zone, one cell per node; hover shows a one-line summary, a click shows the
  // node in full. `colour(node)` is the cell's colour, `chosen` the node outlined.
  function heatMap(nodes, options) {
    const box = el("div", { class: "heatmap" });
    const zones = new Map();
    nodes.forEach((node) => {
      const zone = node.zone === undefined ? "<none>" : node.zone;
      if (!zones.has(zone)) zones.set(zone, []);
      zones.get(zone).push(node);
    });
    const cell = nodes.length > 2000 ? 7 : nodes.length > 500 ? 10 : nodes.length > 100 ? 14 : 22;
    const step = cell + 1;
    const canvases = [];
    for (const zone of [...zones.keys()].sort()) {
      const members = zones.get(zone);
      const canvas = el("canvas", { class: "heat" });
      box.append(el("div", { class: "zone-label" }, `zone ${zone} · ${members.length} node${members.length === 1 ? "" : "s"}`), canvas);
      canvases.push({ canvas, members });
    }
    const tooltip = document.getElementById("tooltip");
    let marked = null, last = null;  // the node found by name, the colouring drawn
    function draw(colour) {
      last = colour;
      const width = Math.max(200, options.width || 640);
      const columns = Math.max(1, Math.floor(width / step));
      const ratio = window.devicePixelRatio || 1;
      let drawn = 0;
      for (const { canvas, members } of canvases) {
        const rows = Math.ceil(members.length / columns);
        const w = Math.min(members.length, columns) * step + 1, h = rows * step + 1;
        canvas.width = w * ratio; canvas.height = h * ratio;
        canvas.style.width = w + "px"; canvas.style.height = h + "px";
        const ctx = canvas.getContext("2d");
        ctx.scale(ratio, ratio);
        members.forEach((node, i) => {
          const x = (i % columns) * step + 1, y = Math.floor(i / columns) * step + 1;
          ctx.fillStyle = colour(node);
          ctx.fillRect(x, y, cell, cell);
          if (node.node === marked) {
            ctx.lineWidth = 2; ctx.strokeStyle = "#0b63c5";
            ctx.strokeRect(x - 0.5, y - 0.5, cell + 1, cell + 1);
          }
          if (node.node === options.chosen) {  // black around white: seen on any colour
            ctx.lineWidth = 2; ctx.strokeStyle = "#000";
            ctx.strokeRect(x + 1, y + 1, cell - 2, cell - 2);
            if (cell > 8) {
              ctx.lineWidth = 1; ctx.strokeStyle = "#fff";
              ctx.strokeRect(x + 2.5, y + 2.5, cell - 5, cell - 5);
            }
          }
          drawn++;
        });
        canvas.onmousemove = (e) => {
          const node = members[Math.floor(e.offsetY / step) * columns + Math.floor(e.offsetX / step)];
          if (!node || Math.floor(e.offsetX / step) >= columns) { tooltip.hidden = true; return; }
          tooltip.textContent = options.describe(node);
          tooltip.hidden = false;
          tooltip.style.left = Math.min(e.clientX + 14, window.innerWidth - 300) + "px";
          tooltip.style.top = e.clientY + 14 + "px";
        };
        canvas.onmouseleave = () => { tooltip.hidden = true; };
        canvas.onclick = (e) => {
          const node = members[Math.floor(e.offsetY / step) * columns + Math.floor(e.offsetX / step)];
          if (node && Math.floor(e.offsetX / step) < columns) options.pick(node);
        };
      }
      box.dataset.cells = String(drawn);
    }
    function mark(name) { marked = name; if (last) draw(last); }
    return { box, draw, mark };
  }

  function legend(items) {
    return el("div", { class: "legend" }, items.map(([colour, label]) =>
      el("span", {}, el("span", { class: "swatch", style: `background:${colour}` }), label)));
  }

  const FILL_MODES = { cpu: "cpu fill", memory: "memory fill", pods: "pods" };
  function fillModeColour(mode, maxPods) {
    if (mode === "pods") return (n) => fillColour(maxPods ? n.pods / maxPods : 0);
    return (n) => fillColour(n[mode]);
  }
  function fillLegend(mode, maxPods) {
    if (mode === "pods") return legend([[fillColour(0), "0 pods"], [fillColour(1), `${maxPods} pods`]]);
    return legend([[fillColour(0), "0% requested"], [fillColour(0.5), "50%"], [fillColour(1), "100%"],
      [NO_VALUE, "no allocatable"]]);
  }

  // An input that finds a node by name (exact, else the first that contains the text).
  function nodeFinder(nodes, found) {
    const input = el("input", { type: "search", placeholder: "find a node by name" });
    input.onchange = () => {
      const text = input.value.trim();
      const node = nodes.find((n) => n.node === text) || (text && nodes.find((n) => n.node.includes(text)));
      input.setCustomValidity(node || !text ? "" : "no such node");
      input.reportValidity();
      if (node) found(node);
    };
    return input;
  }

  // The node a link names: report.html#node=NAME opens it.
  function linkedNode() {
    const found = /^#node=(.+)$/.exec(window.location.hash);
    return found ? decodeURIComponent(found[1]) : null;
  }

  function modeSelect(modes, onChange) {
    const select = el("select", {}, Object.entries(modes).map(([value, label]) => el("option", { value }, label)));
    select.onchange = () => onChange(select.value);
    return el("label", {}, "colour by ", select);
  }

  // Nodes per zone, their pods and mean fill; `extra` adds columns per zone.
  function zoneTable(nodes, extra) {
    const zones = new Map();
    nodes.forEach((n) => {
      const zone = n.zone === undefined ? "<none>" : n.zone;
      if (!zones.has(zone)) zones.set(zone, []);
      zones.get(zone).push(n);
    });
    const names = [...zones.keys()].sort();
    const headers = ["zone", "nodes", "pods", "mean cpu fill", "mean memory fill", ...extra.map((e) => e[0])];
    const rows = names.map((zone) => {
      const members = zones.get(zone);
      const fills = (key) => members.map((n) => n[key]).filter((v) => v !== null && v !== undefined);
      return [zone, members.length, members.reduce((a, n) => a + (n.pods || 0), 0),
        pct(mean(fills("cpu"))), pct(mean(fills("memory"))), ...extra.map((e) => e[1](zone, members))];
    });
    return table(headers, rows, headers.map((_, i) => i).slice(1));
  }

  // -- explain --------------------------------------------------------------------------------
  function renderExplain(root, r) {
    const moment = r.attempt ? `attempt ${r.attempt} of ${r.attempts} at ${r.at}s` :
      `never attempted; the cluster at ${r.at}s`;
    const head = section(`Pod ${r.pod}`, "pod",
      el("p", { class: "note" }, `profile ${r.profile}, ${moment}`),
      r.chosen ? el("p", { class: "callout", id: "chosen" }, "chosen node: ", el("strong", { class: "ok" }, r.chosen))
        : el("p", { class: "callout", id: "unschedulable" }, el("strong", { class: "bad" }, "unschedulable"), ": ", r.message || ""),
      kv([["preEnqueue", r.preEnqueue], ["preFilter", r.preFilter]]));
    if (r.audits.length) {
      head.append(el("h3", {}, "audit findings (rules in audit mode decided nothing)"),
        el("ul", { id: "audits" }, r.audits.map((a) => el("li", {}, a))));
    }
    root.append(head);

    const rejections = r.rejections || [];
    root.append(section("Reasons by rule", "reasons", rejections.length ?
      table(["filter rule", "nodes rejected", "reasons (nodes)"], rejections.map((x) => [
        el("code", {}, x.rule), x.nodes,
        el("ul", {}, x.reasons.map((why) => el("li", { class: "reason" }, x.reasons.length > 1 ? `${why.reason} (${why.nodes})` : why.reason)))]), [1])
      : el("p", { class: "note" }, "no filter rule rejected a node")));

    const nodes = r.nodes;
    root.append(section("Zones (topology.kubernetes.io/zone)", "zones", zoneTable(nodes, [
      ["feasible", (zone, members) => members.filter((n) => n.feasible).length],
      ["rejected", (zone, members) => members.filter((n) => !n.feasible).length]])));
    const rules = rejections.map((x) => x.rule);
    const ruleColour = new Map(rules.map((rule, i) => [rule, RULE_COLOURS[i % RULE_COLOURS.length]]));
    const totals = nodes.map((n) => n.total).filter((t) => t !== null && t !== undefined);
    const lo = Math.min(...totals), hi = Math.max(...totals);
    const maxPods = Math.max(0, ...nodes.map((n) => n.pods || 0));
    const modes = { verdict: "verdict and score", ...FILL_MODES };
    function colourFor(mode) {
      if (mode !== "verdict") return fillModeColour(mode, maxPods);
      return (n) => {
        if (n.rejectedBy) return ruleColour.get(n.rejectedBy) || RULE_COLOURS[0];
        if (n.total === null || n.total === undefined) return NO_VALUE;
        return scoreColour(hi > lo ? (n.total - lo) / (hi - lo) : 1);
      };
    }
    function legendFor(mode) {
      if (mode !== "verdict") return fillLegend(mode, maxPods);
      return legend([["#fff", "outlined: chosen"],
        ...(hi > lo ? [[scoreColour(0), `feasible, total ${lo}`], [scoreColour(1), `total ${hi}`]]
          : totals.length ? [[scoreColour(1), `feasible, total ${hi}`]] : []),
        ...rejections.map((x) => [ruleColour.get(x.rule), `rejected by ${x.rule} (${x.nodes})`]),
        [NO_VALUE, "not scored"]]);
    }
    const detail = el("div", { class: "detail", id: "node-detail" },
      el("p", { class: "note" }, "Click a node to see every rule's verdict and score."));
    const describe = (n) => `${n.node} (zone ${dash(n.zone)})\n` + (n.rejectedBy ?
      `rejected by ${n.rejectedBy}: ${n.filters[n.rejectedBy]}` :
      `feasible, total ${dash(n.total)}, rank ${dash(n.rank)}`) +
      `\ncpu ${pct(n.cpu)}, memory ${pct(n.memory)}, ${dash(n.pods)} pods`;
    const map = heatMap(nodes, { chosen: r.chosen, describe, pick: (n) => showNode(n), width: 1100 });
    const legendBox = el("div", {}, legendFor("verdict"));
    function showNode(n) {
      const parts = [el("h3", {}, `node ${n.node}${n.node === r.chosen ? " (chosen)" : ""}: ${n.feasible ? "feasible" : "rejected"}, total ${dash(n.total)}${n.rank ? ", rank " + n.rank : ""}`),
        kv([["zone", dash(n.zone)], ["cpu fill", pct(n.cpu)], ["memory fill", pct(n.memory)], ["pods", dash(n.pods)]])];
      const rows = [
        ...Object.entries(n.filters || {}).map(([rule, v]) => [el("code", {}, rule), "filter", el("span", { class: v === "pass" ? "ok" : "bad" }, v)]),
        ...Object.entries(n.scores || {}).map(([rule, s]) => [el("code", {}, rule), "score", `${s.raw}/${s.normalized}/${s.weighted}`]),
        ...Object.entries(n.auditFilters || {}).map(([rule, v]) => [el("code", {}, rule), "filter (audit)", v]),
        ...Object.entries(n.auditScores || {}).map(([rule, s]) => [el("code", {}, rule), "score (audit)", `${s.raw}/${s.normalized}/${s.weighted}`]),
        ...Object.entries(n.aggregates || {}).map(([name, a]) => [el("code", {}, name), "aggregate", `${a.count} in the node's domain, ${a.onNode} on the node`])];
      parts.push(table(["rule", "point", "result"], rows));
      if (n.scores && Object.keys(n.scores).length) parts.push(el("p", { class: "note" }, "scores are raw/normalised/weighted"));
      detail.replaceChildren(...parts);
    }
    root.append(section(`Nodes (${nodes.length})`, "nodes",
      el("div", { class: "controls" }, modeSelect(modes, (mode) => { map.draw(colourFor(mode)); legendBox.replaceChildren(legendFor(mode)); }),
        nodeFinder(nodes, (n) => { map.mark(n.node); showNode(n); }), legendBox),
      map.box, detail));
    map.draw(colourFor("verdict"));
    const linked = nodes.find((n) => n.node === linkedNode());
    if (linked) map.mark(linked.node);
    const first = linked || nodes.find((n) => n.node === r.chosen);
    if (first) showNode(first);

    const ranked = nodes.filter((n) => n.rank).sort((a, b) => a.rank - b.rank || (a.node < b.node ? -1 : 1)).slice(0, 10);
    if (ranked.length) {
      root.append(section("Best scored nodes", "ranked", table(["", "node", "zone", "total", "rank"],
        ranked.map((n) => [n.node === r.chosen ? "★" : "", el("code", {}, n.node), dash(n.zone), n.total, n.rank]), [3, 4])));
    }
  }

  // -- simulate -------------------------------------------------------------------------------
  function podTable(pods, columns) {
    const box = el("div", {});
    const LIMIT = 500;
    const search = el("input", { type: "search", placeholder: "filter pods by name or node" });
    const body = el("div", {});
    function fill() {
      const text = search.value.trim();
      const shown = pods.filter((p) => !text || columns.some((c) => String(c[1](p) || "").includes(text)));
      body.replaceChildren(table(columns.map((c) => c[0]), shown.slice(0, LIMIT).map((p) => columns.map((c) => c[1](p)))),
        shown.length > LIMIT ? el("p", { class: "note" }, `${shown.length - LIMIT} more (filter to see them)`) : "");
    }
    search.oninput = fill;
    fill();
    box.append(pods.length > 20 ? el("div", { class: "controls" }, search) : "", body);
    return box;
  }

  function renderSimulate(root, r) {
    const pods = r.pods || [];
    const bound = pods.filter((p) => p.node).length;
    const unscheduled = pods.filter((p) => !p.node);
    root.append(section("Outcome", "outcome",
      el("p", { class: "callout" }, `${bound}/${pods.length} pending pods bound in ${r.elapsed}s of simulated time`),
      unscheduled.length ? [el("h3", {}, `unscheduled (${unscheduled.length}): kube-scheduler's FailedScheduling text`),
        table(["pod", "attempts", "message"], unscheduled.map((p) => [el("code", {}, `${p.namespace}/${p.name}`), p.attempts, el("span", { class: "reason" }, p.message || "")]), [1])] : ""));
    const audited = pods.filter((p) => p.audits && p.audits.length);
    if (audited.length) {
      root.append(section("Audit findings (rules in audit mode decided nothing)", "audits",
        el("ul", {}, audited.flatMap((p) => p.audits.map((a) => el("li", {}, `${p.namespace}/${p.name}: ${a}`))))));
    }
    const nodes = r.utilisation.nodes || [];
    const placed = new Map();
    pods.forEach((p) => { if (p.node) { if (!placed.has(p.node)) placed.set(p.node, []); placed.get(p.node).push(`${p.namespace}/${p.name}`); } });
    root.append(nodeMaps([{ label: "", nodes, placed }], "simulate"));
    root.append(section("Zones (topology.kubernetes.io/zone)", "zones", zoneTable(nodes, [
      ["placed by the run", (zone) => (r.utilisation.zones[zone] || { placed: 0 }).placed]])));
    root.append(section(`Pods (${pods.length})`, "pods", podTable(pods, [
      ["pod", (p) => `${p.namespace}/${p.name}`], ["node", (p) => p.node || "<unscheduled>"],
      ["attempts", (p) => p.attempts], ["bound at", (p) => (p.boundAt === null ? "-" : p.boundAt + "s")],
      ["message", (p) => p.message || ""]])));
  }

  // Fill heat maps of one or more sides (simulate: one; diff: A and B), one colour mode.
  function nodeMaps(sides, id) {
    const maxPods = Math.max(0, ...sides.flatMap((s) => s.nodes.map((n) => n.pods || 0)));
    const detail = el("div", { class: "detail", id: "node-detail" }, el("p", { class: "note" }, "Click a node to see it on each side."));
    const byName = sides.map((s) => new Map(s.nodes.map((n) => [n.node, n])));
    function showNode(name) {
      detail.replaceChildren(el("h3", {}, `node ${name}`), table(["", "zone", "cpu fill", "memory fill", "pods", "pending pods placed there"],
        sides.map((s, i) => {
          const n = byName[i].get(name) || {};
          return [s.label || "", dash(n.zone), pct(n.cpu), pct(n.memory), dash(n.pods), (s.placed.get(name) || []).join(", ")];
        })));
    }
    const width = sides.length > 1 ? 520 : 1100;
    const maps = sides.map((s) => heatMap(s.nodes, { width, pick: (n) => showNode(n.node),
      describe: (n) => `${n.node} (zone ${dash(n.zone)})\ncpu ${pct(n.cpu)}, memory ${pct(n.memory)}, ${dash(n.pods)} pods` +
        (s.placed.has(n.node) ? `\nplaced: ${s.placed.get(n.node).length} pending pod(s)` : "") }));
    const legendBox = el("div", {}, fillLegend("cpu", maxPods));
    const draw = (mode) => { maps.forEach((m) => m.draw(fillModeColour(mode, maxPods))); legendBox.replaceChildren(fillLegend(mode, maxPods)); };
    const box = section(`Nodes at the end (${sides[0].nodes.length})`, id + "-nodes",
      el("div", { class: "controls" }, modeSelect(FILL_MODES, draw),
        nodeFinder(sides.flatMap((s) => s.nodes), (n) => { maps.forEach((m) => m.mark(n.node)); showNode(n.node); }), legendBox),
      el("div", { class: "maps" }, sides.map((s, i) => el("div", { class: "map" }, s.label ? el("h3", {}, s.label) : "", maps[i].box))),
      detail);
    draw("cpu");
    const linked = linkedNode();
    if (byName.some((m) => m.has(linked))) { maps.forEach((m) => m.mark(linked)); showNode(linked); }
    return box;
  }

  // -- diff -----------------------------------------------------------------------------------
  function renderDiff(root, r) {
    const key = (c) => `${c.namespace}/${c.name}`;
    root.append(section("Sides", "sides", kv([["A", r.sides.a], ["B", r.sides.b]]),
      el("p", { class: "callout", id: "summary" }, el("strong", { class: r.identical ? "ok" : "bad" }, r.summary))));
    const lists = [
      ["placed differently", r.placedDifferently, ["pod", "node (A)", "node (B)"], (c) => [key(c), c.a.node, c.b.node]],
      ["unschedulable only with A", r.unschedulableOnlyA, ["pod", "node (B)", "message (A)"], (c) => [key(c), c.b.node, el("span", { class: "reason" }, c.a.message || "")]],
      ["unschedulable only with B", r.unschedulableOnlyB, ["pod", "node (A)", "message (B)"], (c) => [key(c), c.a.node, el("span", { class: "reason" }, c.b.message || "")]],
      ["unschedulable on both, for other reasons", r.otherReasons, ["pod", "message (A)", "message (B)"], (c) => [key(c), c.a.message, c.b.message]]];
    for (const [title, changes, headers, row] of lists) {
      if (changes.length) root.append(section(`${title} (${changes.length})`, "", table(headers, changes.map(row))));
    }
    for (const [title, evicted] of [["evicted only by A's preemptions", r.evictedOnlyA], ["evicted only by B's preemptions", r.evictedOnlyB]]) {
      if (evicted.length) root.append(section(`${title} (${evicted.length})`, "", el("ul", {}, evicted.map((p) => el("li", {}, p)))));
    }
    const ua = r.utilisation.a, ub = r.utilisation.b;
    const quantiles = (u, resource) => {
      const f = u.fill[resource] || {};
      return ["min", "p50", "p90", "max"].map((q) => pct(f[q])).join(" ");
    };
    const zones = [...new Set([...Object.keys(ua.zones), ...Object.keys(ub.zones)])].sort();
    const zone = (u, z) => (u.zones[z] ? `${u.zones[z].pods} (${u.zones[z].placed})` : "0");
    root.append(section("Utilisation at the end", "utilisation", table(["", "A", "B"], [
      ["pending pods bound", `${ua.bound}/${ua.pending}`, `${ub.bound}/${ub.pending}`],
      ["cpu fill min p50 p90 max", quantiles(ua, "cpu"), quantiles(ub, "cpu")],
      ["memory fill min p50 p90 max", quantiles(ua, "memory"), quantiles(ub, "memory")],
      ...zones.map((z) => [`pods in zone ${z} (placed)`, zone(ua, z), zone(ub, z)]),
      ["zone spread (max - min pods)", ua.zoneSpread, ub.zoneSpread]], [1, 2])));
    const placed = (side) => {
      const out = new Map();
      const add = (node, pod) => { if (node) { if (!out.has(node)) out.set(node, []); out.get(node).push(pod); } };
      r.placedDifferently.forEach((c) => add(c[side].node, key(c)));
      (side === "a" ? r.unschedulableOnlyB : r.unschedulableOnlyA).forEach((c) => add(c[side].node, key(c)));
      return out;
    };
    root.append(nodeMaps([{ label: "A", nodes: ua.nodes || [], placed: placed("a") },
      { label: "B", nodes: ub.nodes || [], placed: placed("b") }], "diff"));
    const placedIn = (u) => [["placed by the run", (z) => (u.zones[z] || { placed: 0 }).placed]];
    root.append(section("Zones (topology.kubernetes.io/zone), side A", "zones-a", zoneTable(ua.nodes || [], placedIn(ua))),
      section("Zones (topology.kubernetes.io/zone), side B", "zones-b", zoneTable(ub.nodes || [], placedIn(ub))));
  }

  // -- the page -------------------------------------------------------------------------------
  try {
    const data = JSON.parse(document.getElementById("data").textContent);
    const report = unpack(data.report);
    const root = document.getElementById("report");
    root.replaceChildren();
    ({ explain: renderExplain, simulate: renderSimulate, diff: renderDiff })[data.kind](root, report);
    document.body.dataset.state = "rendered";
  } catch (e) {
    showError("script error: " + (e && e.stack ? e.stack : e));
    document.body.dataset.state = "failed";
  }
})();
