// The History view: a metric run after run (GET /v1/history/trend), one line per benchmark
// (GET /v1/history/runs says which), drawn as SVG with its bootstrap band (and an estimated run's
// own 95 % interval, eval --estimate, as a bar and a band), points marked where
// the fingerprint changed; clicking two points shows their diff (GET /v1/history/diff). Every server value is written as text, never parsed as HTML.
"use strict";

(function () {
  const { $, getJson, setText } = window.ragsondePage;
  const SVG = "http://www.w3.org/2000/svg";
  const WIDTH = 960;
  const HEIGHT = 260;
  const PAD = 44;
  let picked = [];

  function status(text, isError) {
    setText($("history-status"), text);
    $("history-status").classList.toggle("error", Boolean(isError));
  }

  function el(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function html(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) setText(node, text);
    if (cls) node.className = cls;
    return node;
  }

  function query() {
    const params = new URLSearchParams({ metric: $("history-metric").value.trim() });
    for (const name of ["benchmark", "collection"]) {
      const value = $(`history-${name}`).value.trim();
      if (value) params.set(name, value);
    }
    return params;
  }

  const COLORS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777"];
  const LEGEND = 200; // the legend's width, right of the plotting area: never over a line

  /** One line per benchmark: runs of different benchmarks are not one series. `lines` holds
   * each benchmark's trend (its `changed` marks are against its own previous run); the x axis
   * is the order of every run shown, so the lines keep their place in time. */
  function plot(metric, lines) {
    const all = lines.flatMap((l) => l.trend.points);
    const order = [...new Set(all.map((p) => p.run_id))].sort((a, b) => a - b);
    const low = Math.min(...all.map((p) => Math.min(p.ci_low, p.interval ? p.interval.low : p.ci_low)));
    const high = Math.max(...all.map((p) => Math.max(p.ci_high, p.interval ? p.interval.high : p.ci_high)));
    const span = high - low || 1;
    const right = WIDTH - LEGEND;
    const x = (runId) => PAD + (order.indexOf(runId) * (right - 2 * PAD)) / Math.max(order.length - 1, 1);
    const y = (v) => HEIGHT - PAD - ((v - low) / span) * (HEIGHT - 2 * PAD);
    const svg = el("svg", { id: "history-svg", width: WIDTH, height: HEIGHT, role: "img" });
    svg.append(el("title", {}, `${metric} per run, one line per benchmark`));
    svg.append(el("text", { x: 2, y: y(high) + 4, "font-size": 11 }, high.toFixed(3)));
    svg.append(el("text", { x: 2, y: y(low), "font-size": 11 }, low.toFixed(3)));
    lines.forEach((line, n) => {
      const color = COLORS[n % COLORS.length];
      const pts = line.trend.points;
      const band = pts.map((p) => `${x(p.run_id)},${y(p.ci_high)}`).concat(
        pts.map((p) => `${x(p.run_id)},${y(p.ci_low)}`).reverse(),
      );
      svg.append(el("polygon", { class: "band", points: band.join(" "), fill: color, "fill-opacity": 0.15 }));
      estimates(svg, pts, x, y, color);
      svg.append(el("polyline", {
        class: "line", "data-benchmark": line.name,
        points: pts.map((p) => `${x(p.run_id)},${y(p.value)}`).join(" "),
        fill: "none", stroke: color, "stroke-width": 1.5,
      }));
      for (const p of pts) {
        const changed = p.changed.length > 0;
        const dot = el("circle", {
          class: changed ? "run changed" : "run", "data-run": p.run_id, cx: x(p.run_id), cy: y(p.value),
          r: 6, fill: changed ? "#c0392b" : color, tabindex: 0,
        });
        const what = changed ? `changed: ${p.changed.join(", ")}` : "no change";
        const est = p.interval ? `, ${describe(p.interval)}` : "";
        dot.append(el("title", {}, `${line.name}, run ${p.run_id}: ${p.value.toFixed(4)} ` +
          `[${p.ci_low.toFixed(4)}, ${p.ci_high.toFixed(4)}]${est}, ${what}`));
        dot.addEventListener("click", () => pick(p.run_id, dot));
        dot.addEventListener("keydown", (e) => { if (e.key === "Enter") pick(p.run_id, dot); });
        svg.append(dot);
      }
      const item = el("g", { class: "legend", transform: `translate(${right + 12},${24 + 34 * n})` });
      item.append(el("rect", { x: 0, y: -9, width: 10, height: 10, fill: color }));
      item.append(el("text", { x: 16, y: 0, "font-size": 11 }, `${line.name} (${pts.length} run${pts.length === 1 ? "" : "s"})`));
      item.append(sparkline(pts.map((p) => p.value), color));
      svg.append(item);
    });
    for (const runId of order) {
      svg.append(el("text", { x: x(runId) - 4, y: HEIGHT - PAD + 18, "font-size": 10 }, runId));
    }
    $("history-plot").replaceChildren(svg);
  }

  /** `estimate 0.6512 [0.6011, 0.7013] (cross-ppi++, 20 labelled + 26 predicted)`. */
  function describe(e) {
    const rests = `${e.n_labeled} labelled` + (e.n_predicted ? ` + ${e.n_predicted} predicted` : "");
    return `estimate ${e.estimate.toFixed(4)} [${e.low.toFixed(4)}, ${e.high.toFixed(4)}] (${e.method}, ${rests})`;
  }

  /** An estimated run's 95 % interval (eval --estimate): a bar at the run, and a band over each
   * stretch of consecutive estimated runs (the bootstrap band stays drawn beneath). */
  function estimates(svg, pts, x, y, color) {
    let stretch = [];
    const close = () => {
      if (stretch.length > 0) {
        const upper = stretch.map((p) => `${x(p.run_id)},${y(p.interval.high)}`);
        const lower = stretch.map((p) => `${x(p.run_id)},${y(p.interval.low)}`).reverse();
        svg.append(el("polygon", {
          class: "estimate-band", points: upper.concat(lower).join(" "), fill: color, "fill-opacity": 0.3,
        }));
      }
      stretch = [];
    };
    for (const p of pts) {
      if (!p.interval) { close(); continue; }
      stretch.push(p);
      const bar = el("line", {
        class: "interval", "data-run": p.run_id, x1: x(p.run_id), x2: x(p.run_id),
        y1: y(p.interval.low), y2: y(p.interval.high), stroke: color, "stroke-width": 3,
      });
      bar.append(el("title", {}, `run ${p.run_id}: ${describe(p.interval)}`));
      svg.append(bar);
    }
    close();
  }

  /** A small line of the values under a legend entry: drawn, not block characters, so every
   * font shows it the same (the server's text sparkline is for terminals). */
  function sparkline(values, color) {
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    const w = 120;
    const h = 14;
    const sx = (i) => 16 + (i * w) / Math.max(values.length - 1, 1);
    const sy = (v) => 6 + h - (hi > lo ? ((v - lo) / (hi - lo)) * h : h / 2);
    return el("polyline", {
      class: "sparkline", points: values.map((v, i) => `${sx(i)},${sy(v)}`).join(" "),
      fill: "none", stroke: color, "stroke-width": 1.2,
    });
  }

  async function load() {
    picked = [];
    $("history-diff").replaceChildren();
    status("loading…");
    try {
      const metric = $("history-metric").value.trim();
      const params = query();
      const chosen = params.get("benchmark");
      const runsParams = new URLSearchParams(params);
      runsParams.delete("metric");
      const runs = (await getJson(`/v1/history/runs?${runsParams}`)).runs;
      // each benchmark (by its content: two versions of a file are two lines) and its name
      const benchmarks = new Map();
      for (const r of runs) {
        if (r.metrics[metric] === undefined) continue;
        if (!benchmarks.has(r.benchmark_sha256)) benchmarks.set(r.benchmark_sha256, r.benchmark);
      }
      if (chosen === null && benchmarks.size === 0) throw new Error(`no recorded run has ${metric}`);
      const names = [...benchmarks.values()];
      const lines = [];
      for (const [sha, name] of chosen === null ? benchmarks : new Map([[chosen, chosen]])) {
        const one = new URLSearchParams(params);
        one.set("benchmark", chosen === null ? sha : chosen);
        const trend = await getJson(`/v1/history/trend?${one}`);
        const twice = names.filter((x) => x === name).length > 1;
        lines.push({ name: twice ? `${name} ${sha.slice(0, 7)}` : name, trend });
      }
      plot(metric, lines);
      const count = lines.reduce((n, l) => n + l.trend.points.length, 0);
      status(`${count} runs of ${metric}, ${lines.length} benchmark${lines.length === 1 ? "" : "s"}`);
    } catch (err) {
      $("history-plot").replaceChildren();
      status(err.message, true);
    }
  }

  function pick(runId, dot) {
    if (picked.length === 2) {
      picked = [];
      for (const d of document.querySelectorAll("#history-svg .picked")) d.classList.remove("picked");
    }
    picked.push(runId);
    dot.classList.add("picked");
    dot.setAttribute("stroke", "#f1c40f");
    dot.setAttribute("stroke-width", 3);
    if (picked.length === 2) diff(Math.min(...picked), Math.max(...picked));
    else status(`run ${runId} picked: click another run to compare`);
  }

  async function diff(a, b) {
    status(`comparing run ${b} with run ${a}…`);
    try {
      const d = await getJson(`/v1/history/diff?a=${a}&b=${b}`);
      render(d);
      status(`run ${b} vs run ${a}`);
    } catch (err) {
      status(err.message, true);
    }
  }

  // as FlipWhy.describe: the stage --explain blamed, and the changes that bear on it
  function whyText(w, direction) {
    const what = direction === "lost" ? `\`${w.stage}\` miss` : `was a \`${w.stage}\` miss`;
    const changes = w.changes.map(
      (c) => `${c.field}: ${JSON.stringify(c.a)} → ${JSON.stringify(c.b)}`);
    const cause = changes.length
      ? ` ${direction === "lost" ? "after" : "until"} ${changes.join("; ")}`
      : " (no fingerprint change bears on this stage)";
    const evidence = Object.entries(w.evidence).map(([k, v]) => `${k}=${v}`).join(", ");
    return `why (run ${w.run_id}): doc ${w.doc_id}: ${what}${cause}${evidence ? ` [${evidence}]` : ""}`;
  }

  function render(d) {
    const out = [html("h3", `run ${d.b.run_id} vs run ${d.a.run_id}`)];
    const changes = html("ul", undefined, "history-changes");
    for (const c of d.changes) {
      changes.append(html("li", `${c.field}: ${JSON.stringify(c.a)} → ${JSON.stringify(c.b)}`));
    }
    if (!d.changes.length) changes.append(html("li", "the fingerprints are identical"));
    out.push(changes);
    if (d.refused) {
      out.push(html("p", d.refused, "status error"));
      $("history-diff").replaceChildren(...out);
      return;
    }
    const table = html("table", undefined, "history-metrics");
    const head = html("tr");
    for (const h of ["metric", "A", "B", "Δ", "W/T/L", "p t", "p perm", "CI of Δ", "verdict"]) {
      head.append(html("th", h));
    }
    table.append(head);
    for (const m of d.metrics) {
      const row = html("tr");
      for (const v of [m.metric, m.mean_a.toFixed(3), m.mean_b.toFixed(3), m.delta.toFixed(3),
        `${m.wins}/${m.ties}/${m.losses}`, m.p_ttest.toFixed(3), m.p_permutation.toFixed(3),
        `${m.ci_low.toFixed(3)}…${m.ci_high.toFixed(3)}`, m.verdict]) row.append(html("td", v));
      table.append(row);
    }
    out.push(table);
    for (const m of d.metrics) {
      if (!m.ppi) continue; // runs of a partly labelled benchmark: PPI++ over every query
      const p = m.ppi;
      const verdict = p.low > 0 || p.high < 0 ? "significant" : "n.s.: the interval holds 0";
      const sign = (v) => (v >= 0 ? "+" : "") + v.toFixed(4);
      out.push(html("p", `${m.metric}: B - A by ${p.method} over every query ${sign(p.estimate)} ` +
        `[${sign(p.low)}, ${sign(p.high)}] (${verdict}; rests on ${p.n_labeled} labelled queries, ` +
        `${p.n_predicted} predicted)`, "history-ppi"));
    }
    const flips = html("ul", undefined, "history-flips");
    for (const f of d.flips) {
      const arrow = f.direction === "lost" ? "hit → miss" : "miss → hit";
      const item = html("li", `${f.query_id}: ${arrow}  ${f.query}`);
      if (f.why && f.why.length) {
        const why = html("ul", undefined, "history-why");
        for (const w of f.why) why.append(html("li", whyText(w, f.direction)));
        item.append(why);
      }
      flips.append(item);
    }
    out.push(html("p", d.flips.length
      ? `queries that flipped on ${d.flip_metric}:` : `no query flipped on ${d.flip_metric}`));
    out.push(flips);
    $("history-diff").replaceChildren(...out);
  }

  $("history-setup").addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  document.addEventListener("ragsonde:history-view", load);
})();
