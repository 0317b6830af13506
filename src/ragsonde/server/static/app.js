// The ragsonde search page. Every value from the server is untrusted (stored documents are
// input from anywhere): it is written with textContent, never parsed as HTML, and only
// http(s) URLs become links.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const form = $("search");
  const statusLine = $("status");
  const timingsLine = $("timings");
  const results = $("results");
  const cardTemplate = $("card");
  const keyInput = $("api_key");
  const KEY_STORE = "ragsonde.api_key";

  /** An http(s) URL as a safe href, or null (javascript:, data:, relative, garbage). */
  function safeHref(value) {
    if (typeof value !== "string" || value === "") return null;
    try {
      const url = new URL(value);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (_) {
      return null;
    }
  }

  /** A filter value: integers and booleans as such, everything else a string (like the CLI). */
  function scalar(text) {
    if (/^-?\d+$/.test(text)) return Number.parseInt(text, 10);
    if (text === "true") return true;
    if (text === "false") return false;
    return text;
  }

  /** "a=1; b=x; b=y" (a field twice means any of) or a JSON object; null when empty. */
  function parseFilters(text) {
    const raw = text.trim();
    if (raw === "") return null;
    if (raw.startsWith("{")) {
      let value;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        throw new Error(`filters: not JSON (${err.message})`);
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw new Error("filters: a JSON filter must be an object");
      }
      return value;
    }
    const out = {};
    for (const part of raw.split(";")) {
      if (part.trim() === "") continue;
      const at = part.indexOf("=");
      const key = at < 0 ? "" : part.slice(0, at).trim();
      if (key === "") throw new Error(`filters: write FIELD=VALUE, not "${part.trim()}"`);
      const value = scalar(part.slice(at + 1).trim());
      if (!(key in out)) out[key] = value;
      else if (Array.isArray(out[key])) out[key].push(value);
      else out[key] = [out[key], value];
    }
    return out;
  }

  function headers() {
    const h = { "Content-Type": "application/json", Accept: "application/json" };
    const key = keyInput.value.trim();
    if (key !== "") h["X-API-Key"] = key;
    return h;
  }

  function showStatus(text, isError) {
    statusLine.textContent = text;
    statusLine.classList.toggle("error", Boolean(isError));
  }

  function ms(value) {
    return `${Number(value || 0).toFixed(1)} ms`;
  }

  function showTimings(resp) {
    const t = resp.timings || {};
    timingsLine.textContent =
      `embed ${ms(t.embedding_ms)} · search ${ms(t.search_ms)} · ` +
      `post ${ms(t.post_processing_ms)} · total ${ms(t.total_ms)} · ` +
      `${resp.collection} · ${resp.model}`;
  }

  function setText(node, value) {
    node.textContent = value === null || value === undefined ? "" : String(value);
  }

  function card(result) {
    const node = cardTemplate.content.firstElementChild.cloneNode(true);
    const score = Math.min(1, Math.max(0, Number(result.similarity_score) || 0));
    // People count from 1; the JSON's rank stays 0-based.
    setText(node.querySelector(".rank"), `#${Number(result.rank) + 1}`);
    setText(node.querySelector(".score"), score.toFixed(3));
    node.querySelector(".bar-fill").style.width = `${(score * 100).toFixed(1)}%`;
    const href = safeHref(result.url);
    const title = node.querySelector(".title");
    setText(title, result.title || result.url || result.chunk_id);
    const url = node.querySelector(".url");
    setText(url, result.url);
    for (const link of [title, url]) {
      if (href) link.href = href;
      else link.removeAttribute("href");
    }
    setText(node.querySelector(".section"), result.section);
    setText(node.querySelector(".text"), result.text);
    const extra = Object.assign({ chunk_id: result.chunk_id }, result.metadata || {});
    if (result.chunk_index !== undefined) extra.chunk_index = result.chunk_index;
    if (result.created_at) extra.created_at = result.created_at;
    setText(node.querySelector(".metadata"), JSON.stringify(extra, null, 2));
    node.dataset.score = String(score);
    return node;
  }

  const chunkCounts = new Map(); // collection -> points_count, from the collections list

  /** Why a search found nothing, as far as the page knows: the threshold, the filters, or a
   * collection listed as empty. */
  function noResults(body, resp) {
    if (body.score_threshold > 0) return `No results at or above the threshold ${body.score_threshold}.`;
    if (body.filters) return "No results match the filters.";
    if (chunkCounts.get(resp.collection) === 0) return `No results: collection ${resp.collection} holds no chunk.`;
    return "No results.";
  }

  function render(body, resp) {
    results.replaceChildren(...(resp.results || []).map(card));
    showTimings(resp);
    if (resp.status === "error" && resp.error) {
      showStatus(`${resp.error.code}: ${resp.error.message}`, true);
    } else {
      const n = resp.total_results;
      showStatus(n === 0 ? noResults(body, resp) : `${n} result${n === 1 ? "" : "s"}`);
    }
  }

  function queryBody() {
    const body = {
      query_text: $("q").value,
      top_k: Number.parseInt($("top_k").value, 10),
      score_threshold: Number.parseFloat($("threshold").value || "0"),
    };
    const collection = $("collection").value.trim();
    if (collection !== "") body.collection = collection;
    const filters = parseFilters($("filters").value);
    if (filters !== null) body.filters = filters;
    return body;
  }

  let latest = 0; // answers to older searches are dropped, so the page shows the newest

  async function search() {
    const mine = ++latest;
    let body;
    try {
      body = queryBody();
    } catch (err) {
      // Results of an earlier form would read as this one's; a search in flight is dropped.
      results.replaceChildren();
      timingsLine.textContent = "";
      showStatus(String(err.message || err), true);
      $("go").disabled = false;
      return;
    }
    $("go").disabled = true;
    showStatus("Searching…");
    try {
      const answer = await fetch("/v1/query", {
        method: "POST",
        headers: headers(),
        body: JSON.stringify(body),
      });
      const resp = await answer.json();
      if (mine !== latest) return;
      if (answer.status === 401) $("auth").open = true;
      render(body, resp);
    } catch (err) {
      if (mine !== latest) return;
      results.replaceChildren();
      timingsLine.textContent = "";
      showStatus(`The server did not answer: ${err.message || err}`, true);
    } finally {
      if (mine === latest) {
        $("go").disabled = false;
        results.dataset.seq = String(Number(results.dataset.seq || "0") + 1);
      }
    }
  }

  async function loadCollections() {
    try {
      const answer = await fetch("/v1/collections", { headers: headers() });
      if (!answer.ok) return;
      const data = await answer.json();
      const list = $("collections");
      chunkCounts.clear();
      for (const c of data.collections) chunkCounts.set(c.name, c.points_count);
      const option = (name, label) => {
        const o = document.createElement("option");
        o.value = name;
        setText(o, label);
        return o;
      };
      list.replaceChildren(
        ...data.collections.map((c) => option(c.name, `${c.points_count} points, ${c.dimension}-dim`)),
        ...(data.in_use || []).map((c) => option(c.name, `in use by ${c.holder}`)),
      );
      $("collection").placeholder = data.default;
      const served = data.collections.find((c) => c.name === data.default);
      if (served) describeServed(served);
    } catch (_) {
      // The list is a convenience: typing a name still works.
    }
  }

  /** The search placeholders from the collection served, not from any sample: its name and
   * size, and the payload fields it can be filtered on (its keyword indexes, else its mapped
   * section and doc_id fields). */
  async function describeServed(summary) {
    $("q").placeholder = `Ask ${summary.name} a question (${summary.points_count} chunks)`;
    try {
      const info = await getJson(`/v1/collections/${encodeURIComponent(summary.name)}?sample=50`);
      let fields = info.fields.filter((f) => f.indexed === "keyword").map((f) => f.field);
      if (fields.length === 0) {
        fields = [info.mapping.section, info.mapping.doc_id].filter((f) => typeof f === "string");
      }
      fields = fields.slice(0, 2);
      if (fields.length === 0) {
        $("filters").placeholder = `this collection has no field to filter on`;
        return;
      }
      const pairs = fields.map((f) => `${f}=VALUE`).join("; ");
      $("filters").placeholder = `${pairs}  or  {"${fields[0]}": ["A", "B"]}`;
    } catch (_) {
      // The placeholder is a hint; the generic one stays.
    }
  }

  function cell(row, value) {
    const td = document.createElement("td");
    setText(td, value);
    row.appendChild(td);
    return td;
  }

  /** Open a report: a plain link without a key; with one, fetched with the key first. */
  async function openReport(path) {
    const key = keyInput.value.trim();
    if (key === "") {
      window.open(path, "_blank", "noopener");
      return;
    }
    const answer = await fetch(path, { headers: { "X-API-Key": key } });
    const blob = new Blob([await answer.text()], { type: "text/html" });
    window.open(URL.createObjectURL(blob), "_blank", "noopener");
  }

  /** One row of the reports view, from an EvalJobSummary (`GET /v1/eval`; see the OpenAPI). */
  function reportRow(job) {
    const row = document.createElement("tr");
    row.id = `report-${job.job_id}`;
    // A saved report was read from the server's eval-reports folder (e.g. from before a restart).
    row.className = job.saved ? `job ${job.status} saved` : `job ${job.status}`;
    row.dataset.jobId = job.job_id;
    cell(row, (job.created_at || "").replace("T", " ").slice(0, 19));
    cell(row, job.dataset);
    cell(row, job.collection || (job.saved ? "" : "default"));
    const status = job.saved && job.status === "done" ? "saved" : job.status;
    cell(row, job.error ? `${status}: ${job.error.message}` : status);
    cell(row, `${job.progress.done}/${job.progress.total}`);
    for (const name of ["ndcg@10", "judged@10"]) {
      const value = job.metrics ? job.metrics[name] : undefined;
      cell(row, typeof value === "number" ? value.toFixed(4) : "");
    }
    cell(row, job.passed === null ? "" : job.passed ? "pass" : "FAIL");
    const td = cell(row, "");
    if (job.links.html) {
      const link = document.createElement("a");
      link.href = job.links.html;
      link.className = "open-report";
      link.textContent = "open";
      link.addEventListener("click", (event) => {
        event.preventDefault();
        openReport(job.links.html);
      });
      td.appendChild(link);
      const here = document.createElement("a");
      here.href = `#reports/${encodeURIComponent(job.job_id)}`;
      here.className = "report-address";
      here.title = "this report's address on this page";
      here.textContent = "#";
      td.append(" ", here);
    }
    return row;
  }

  async function loadReports() {
    const statusNode = $("reports-status");
    try {
      const answer = await fetch("/v1/eval", { headers: headers() });
      const data = await answer.json();
      if (!answer.ok) {
        setText(statusNode, data.error ? data.error.message : `HTTP ${answer.status}`);
        return;
      }
      $("reports").tBodies[0].replaceChildren(...data.map(reportRow));
      const saved = data.filter((j) => j.saved).length;
      const count = `${data.length} evaluation${data.length === 1 ? "" : "s"}`;
      setText(
        statusNode,
        data.length === 0 ? "No evaluations yet." : saved ? `${count} (${saved} saved earlier)` : count,
      );
      markReport();
      return data;
    } catch (err) {
      setText(statusNode, `The server did not answer: ${err.message || err}`);
    }
  }

  /** fetch, with a failure to connect said as such (not the browser's bare "Failed to fetch"). */
  async function request(path, init) {
    try {
      return await fetch(path, init);
    } catch (err) {
      throw new Error(`The server did not answer: ${err.message || err}`);
    }
  }

  /** POST a JSON body; the parsed answer, or an Error carrying the contract's message. */
  async function postJson(path, body) {
    const answer = await request(path, { method: "POST", headers: headers(), body: JSON.stringify(body) });
    const data = await answer.json();
    if (!answer.ok) {
      const err = data && data.error ? `${data.error.code}: ${data.error.message}` : `HTTP ${answer.status}`;
      throw new Error(err);
    }
    return data;
  }

  async function getJson(path) {
    const answer = await request(path, { headers: headers() });
    const data = await answer.json();
    if (!answer.ok) throw new Error(data && data.error ? data.error.message : `HTTP ${answer.status}`);
    return data;
  }

  function options(listId, values) {
    $(listId).replaceChildren(
      ...values.map((v) => {
        const option = document.createElement("option");
        option.value = v;
        return option;
      }),
    );
  }

  /** The benchmark files under RAGSONDE_HOME/benchmarks, as names and as server paths. */
  let benchmarks = [];
  async function loadBenchmarks() {
    try {
      benchmarks = await getJson("/v1/judge/benchmarks");
      options("benchmark-names", benchmarks.map((b) => b.name));
      options("benchmark-paths", benchmarks.map((b) => b.name));
    } catch (_) {
      // A convenience list, like the collections.
    }
  }

  async function startEval() {
    const statusNode = $("reports-status");
    const typed = $("eval-dataset").value.trim();
    const known = benchmarks.find((b) => b.name === typed || `${b.name}.jsonl` === typed);
    const body = { dataset: known ? known.path : typed, mode: $("eval-mode").value };
    const collection = $("eval-collection").value.trim();
    if (collection !== "") body.collection = collection;
    $("eval-go").disabled = true;
    try {
      const job = await postJson("/v1/eval", body);
      setText(statusNode, `Started ${job.job_id}`);
      await pollReports();
    } catch (err) {
      setText(statusNode, String(err.message || err));
    } finally {
      $("eval-go").disabled = false;
    }
  }

  /** Refresh the reports until no job is queued or running (the view may be left meanwhile). */
  async function pollReports() {
    for (;;) {
      const data = await loadReports();
      if (!data || !data.some((j) => j.status === "queued" || j.status === "running")) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  const VIEWS = ["search", "judge", "reports", "history", "traffic"];

  /** The view (and report) the address names: #judge, #reports, #reports/JOB_ID, #history,
   * #traffic. */
  function fromHash() {
    let hash = location.hash.replace(/^#/, "");
    try {
      hash = decodeURIComponent(hash);
    } catch (_) {
      // A malformed escape (#%E0) names no view: the search view, not an uncaught error.
    }
    const [view, ...rest] = hash.split("/");
    return { view: VIEWS.includes(view) ? view : "search", report: rest.join("/") || null };
  }

  /** The report the address names, marked and scrolled to (once the list has it). */
  function markReport() {
    const { view, report } = fromHash();
    for (const row of document.querySelectorAll("#reports tr.selected")) row.classList.remove("selected");
    if (view !== "reports" || report === null) return;
    const row = $(`report-${report}`);
    if (row === null) {
      setText($("reports-status"), `No report ${report} on this server.`);
      return;
    }
    row.classList.add("selected");
    row.scrollIntoView({ block: "nearest" });
  }

  function showView(name) {
    for (const view of VIEWS) {
      $(`${view}-view`).hidden = view !== name;
      $(`show-${view}`).classList.toggle("active", view === name);
    }
    if (name === "reports") {
      loadBenchmarks();
      loadReports();
    }
    if (name === "judge") {
      loadBenchmarks();
      document.dispatchEvent(new CustomEvent("ragsonde:judge-view"));
    }
    if (name === "history") document.dispatchEvent(new CustomEvent("ragsonde:history-view"));
  }

  // Each view has its own address: a tab sets it, the address shows the view (links, reloads,
  // the back button).
  for (const view of VIEWS) {
    $(`show-${view}`).addEventListener("click", () => {
      location.hash = view === "search" ? "" : view;
      if (view === "search") showView("search");
    });
  }
  window.addEventListener("hashchange", () => showView(fromHash().view));
  $("refresh-reports").addEventListener("click", loadReports);
  $("start-eval").addEventListener("submit", (event) => {
    event.preventDefault();
    startEval();
  });

  // The Judge view lives in judge.js, the History view in history.js; both use these.
  window.ragsondePage = { $, headers, getJson, postJson, setText, options, showView };

  // Deferred scripts have all run by DOMContentLoaded: judge.js is listening by then.
  document.addEventListener("DOMContentLoaded", () => {
    const { view } = fromHash();
    if (view !== "search") showView(view);
  });

  keyInput.value = sessionStorage.getItem(KEY_STORE) || "";
  keyInput.addEventListener("change", () => {
    sessionStorage.setItem(KEY_STORE, keyInput.value.trim());
    loadCollections();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });
  for (const id of ["top_k", "threshold"]) {
    $(id).addEventListener("change", () => {
      if ($("q").value.trim() !== "") search();
    });
  }
  loadCollections();
})();
