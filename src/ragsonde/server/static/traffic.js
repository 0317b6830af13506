// The Traffic view: query log rows (JSON Lines, pasted or from a file) posted to /v1/traffic;
// shows the weak share with its interval, the weakest queries with their evidence, and the
// weak queries' topics. Every server value is written as text, never parsed as HTML.
"use strict";

(function () {
  const { $, postJson, setText } = window.ragsondePage;

  function status(text, isError) {
    setText($("traffic-status"), text);
    $("traffic-status").classList.toggle("error", Boolean(isError));
  }

  function cell(row, text) {
    const td = document.createElement("td");
    setText(td, text);
    row.append(td);
  }

  function rows() {
    const out = [];
    const lines = $("traffic-rows").value.split("\n");
    for (const [i, line] of lines.entries()) {
      if (!line.trim()) continue;
      try {
        out.push(JSON.parse(line));
      } catch (err) {
        throw new Error(`line ${i + 1} is not JSON`);
      }
    }
    return out;
  }

  /** The rows that were not read (no query text, not a query row), counted and exemplified:
   * the summary's counts are of the rows read, not of the lines sent. */
  function skipped(read) {
    const n = (read.malformed || 0) + (read.no_query_text || 0);
    if (n === 0) return "";
    const first = read.examples && read.examples.length ? ` (first: ${read.examples[0]})` : "";
    return `. ${n} row${n === 1 ? "" : "s"} not read${first}`;
  }

  function clear() {
    setText($("traffic-summary"), "");
    $("traffic-weakest").replaceChildren();
    $("traffic-topics").replaceChildren();
  }

  function render(report) {
    const pct = (v) => `${(100 * v).toFixed(1)}%`;
    const [lo, hi] = report.weak_share_interval;
    setText($("traffic-summary"),
      `${report.n_queries} distinct queries (${report.n_records} asked): weak share ` +
      `${pct(report.weak_share)} (95% ${pct(lo)}–${pct(hi)}), weak = predicted < ${report.weak_below}` +
      skipped(report.read || {}) +
      (report.production ? `. ${report.production.verdict}` : ""));
    const byId = new Map(report.queries.map((q) => [q.query_id, q]));
    const body = $("traffic-weakest");
    body.replaceChildren();
    for (const id of report.weakest) {
      const q = byId.get(id);
      const tr = document.createElement("tr");
      tr.className = q.weak ? "weak" : "";
      cell(tr, q.query);
      cell(tr, q.predicted === null ? "–" : q.predicted.toFixed(3));
      cell(tr, String(q.weight));
      const evidence = ["top1", "gap", "nqc", "rbo"]
        .filter((n) => n in q.signals).map((n) => `${n} ${q.signals[n].toPrecision(3)}`);
      cell(tr, evidence.concat(q.mismatch).join("; "));
      body.append(tr);
    }
    const topics = $("traffic-topics");
    topics.replaceChildren();
    for (const t of report.topics) {
      const li = document.createElement("li");
      setText(li, `${t.name}: ${t.n_queries} weak queries`);
      topics.append(li);
    }
  }

  async function analyse() {
    $("traffic-go").disabled = true;
    clear(); // an error must not sit above the last answer's figures, as if they were its own
    try {
      const body = { records: rows() };
      const collection = $("traffic-collection").value.trim();
      if (collection) body.collection = collection;
      status("Replaying…");
      render(await postJson("/v1/traffic", body));
      status("Done.");
    } catch (err) {
      status(String(err.message || err), true);
    } finally {
      $("traffic-go").disabled = false;
    }
  }

  $("traffic-file").addEventListener("change", async () => {
    const file = $("traffic-file").files[0];
    if (file) $("traffic-rows").value = await file.text();
  });
  $("traffic-setup").addEventListener("submit", (event) => {
    event.preventDefault();
    analyse();
  });
})();
