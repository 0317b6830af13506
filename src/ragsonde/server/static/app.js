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

  /** An integer's digits as a JSON number, exactly: past 2**53 a JS number rounds
   * (9007199254740993 was sent as ...992 and matched another document's id). */
  function exactInteger(digits) {
    const n = Number.parseInt(digits, 10);
    if (Number.isSafeInteger(n)) return n;
    if (typeof JSON.rawJSON !== "function") {
      throw new Error(`filters: ${digits} is too large for this browser to send exactly`);
    }
    return JSON.rawJSON(BigInt(digits).toString());
  }

  /** A filter value: integers and booleans as such, everything else a string (like the CLI). */
  function scalar(text) {
    if (/^-?\d+$/.test(text)) return exactInteger(text);
    if (text === "true") return true;
    if (text === "false") return false;
    return text;
  }

  /** JSON.parse keeping integers past 2**53 exact (the reviver sees their source text). */
  function exactJson(raw) {
    return JSON.parse(raw, (_key, value, context) =>
      typeof value === "number" && !Number.isSafeInteger(value) && context &&
      /^-?\d+$/.test(context.source)
        ? exactInteger(context.source)
        : value,
    );
  }

  /** "a=1; b=x; b=y" (a field twice means any of) or a JSON object; null when empty. */
  function parseFilters(text) {
    const raw = text.trim();
    if (raw === "") return null;
    if (raw.startsWith("{")) {
      let value;
      try {
        value = exactJson(raw);
      } catch (err) {
        throw new Error(`filters: not JSON (${err.message})`);
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw new Error("filters: a JSON filter must be an object");
      }
      return value;
    }
    // No prototype: a field named __proto__ or constructor is a field like any other (they
    // were taken as already given, and __proto__=1 was lost).
    const out = Object.create(null);
    for (const part of raw.split(";")) {
      if (part.trim() === "") continue;
      const at = part.indexOf("=");
      const key = at < 0 ? "" : part.slice(0, at).trim();
      if (key === "") throw new Error(`filters: write FIELD=VALUE, not "${part.trim()}"`);
      const value = scalar(part.slice(at + 1).trim());
      if (!Object.hasOwn(out, key)) out[key] = value;
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

  /** The search that ran, as the server reports it: "hybrid search, dbsf fusion (fused scores)". */
  function ranWith(resp) {
    const s = resp.search;
    if (!s || typeof s.mode !== "string") return "";
    if (s.mode === "hybrid") return `hybrid search, ${s.fusion} fusion (fused scores)`;
    return s.mode === "sparse" ? "sparse search (BM25 scores)" : `${s.mode} search`;
  }

  function showTimings(resp) {
    const t = resp.timings || {};
    const ran = ranWith(resp);
    timingsLine.textContent =
      (ran ? `${ran} · ` : "") +
      `embed ${ms(t.embedding_ms)} · search ${ms(t.search_ms)} · ` +
      `post ${ms(t.post_processing_ms)} · total ${ms(t.total_ms)} · ` +
      `${resp.collection} · ${resp.model}`;
  }

  function setText(node, value) {
    node.textContent = value === null || value === undefined ? "" : String(value);
  }

  /** The score a card shows and its bar's share: the similarity for dense search; for sparse
   * and hybrid the engine's own score (BM25, fused), whose similarity_score is clamped to 1
   * for nearly every hit, with the bar relative to the best hit. */
  function shownScore(result, unbounded, best) {
    const score = Math.min(1, Math.max(0, Number(result.similarity_score) || 0));
    const raw = Number(result.raw_score);
    if (!unbounded || !Number.isFinite(raw)) return { text: score.toFixed(3), share: score, title: "similarity" };
    return { text: raw.toFixed(3), share: best > 0 ? Math.max(0, raw) / best : 0, title: unbounded };
  }

  function card(result, unbounded, best) {
    const node = cardTemplate.content.firstElementChild.cloneNode(true);
    const score = Math.min(1, Math.max(0, Number(result.similarity_score) || 0));
    const shown = shownScore(result, unbounded, best);
    // People count from 1; the JSON's rank stays 0-based.
    setText(node.querySelector(".rank"), `#${Number(result.rank) + 1}`);
    setText(node.querySelector(".score"), shown.text);
    node.querySelector(".score").title = shown.title;
    node.querySelector(".bar-fill").style.width = `${(shown.share * 100).toFixed(1)}%`;
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

  const collectionsByName = new Map(); // name -> its summary, from the collections list
  let defaultCollection = null; // the one a query that names none searches
  let serverSearch = null; // the server's search settings (GET /v1/health), once read
  let ready = Promise.resolve(); // the settings and collections read (loadServer)

  /** Why a search found nothing, as far as the page knows: the threshold, the filters, or a
   * collection listed as empty. The threshold is the one that ran (the server's own when the
   * field was left empty). */
  function noResults(body, resp) {
    const threshold = resp.search ? resp.search.score_threshold : body.score_threshold;
    if (threshold > 0) return `No results at or above the threshold ${threshold}.`;
    if (body.filters) return "No results match the filters.";
    const listed = collectionsByName.get(resp.collection);
    if (listed && listed.points_count === 0) return `No results: collection ${resp.collection} holds no chunk.`;
    return "No results.";
  }

  function render(body, resp) {
    const mode = resp.search && typeof resp.search.mode === "string" ? resp.search.mode : "dense";
    const unbounded =
      mode === "sparse" ? "BM25 score" : mode === "hybrid" ? `fused score (${resp.search.fusion})` : null;
    const found = resp.results || [];
    const best = Math.max(0, ...found.map((r) => Number(r.raw_score)).filter(Number.isFinite));
    results.replaceChildren(...found.map((r) => card(r, unbounded, best)));
    showTimings(resp);
    results.dataset.mode = resp.search && typeof resp.search.mode === "string" ? resp.search.mode : "";
    if (resp.status === "error" && resp.error) {
      showStatus(`${resp.error.code}: ${resp.error.message}`, true);
    } else {
      const n = resp.total_results;
      showStatus(n === 0 ? noResults(body, resp) : `${n} result${n === 1 ? "" : "s"}`);
    }
  }

  const MODES = ["dense", "sparse", "hybrid"];
  const modeSelect = $("mode");
  let wantedMode = ""; // what the user (or the address) chose; "" is the server's default

  /** The collection the search names: the one typed, else the server's default. */
  function collectionName() {
    return $("collection").value.trim() || defaultCollection;
  }

  /** Offer the modes the collection answers; a mode it lacks is disabled and the note says
   * why. Unknown collections (not listed, held by another process) offer every mode: the
   * server's answer says what it refuses. */
  function updateModes() {
    const name = collectionName();
    const listed = name === null ? undefined : collectionsByName.get(name);
    const offers = (mode) => listed === undefined || listed.modes.includes(mode);
    const serverMode = serverSearch ? serverSearch.mode : null;
    for (const option of modeSelect.options) {
      const mode = option.value === "" ? serverMode : option.value;
      option.disabled = mode !== null && !offers(mode);
      if (option.value === "") setText(option, serverMode ? `default (${serverMode})` : "server default");
    }
    const wanted = [...modeSelect.options].find((o) => o.value === wantedMode);
    const usable = wanted && !wanted.disabled ? wanted : [...modeSelect.options].find((o) => !o.disabled);
    modeSelect.value = usable ? usable.value : "";
    const lacking = MODES.filter((m) => !offers(m));
    let note = "";
    if (lacking.length > 0) {
      const why = listed.sparse
        ? "its sparse vector is not a BM25 ragsonde can query"
        : "it has no sparse (BM25) vectors (`ragsonde ingest --sparse` adds them)";
      const modes = lacking.join(" and ");
      note = `${modes[0].toUpperCase()}${modes.slice(1)} search: not available on collection ${name}, as ${why}.`;
      if (wanted && usable && wanted !== usable) {
        note += ` Searching ${usable.value || serverMode} instead of ${wantedMode || serverMode}.`;
      }
    }
    setText($("mode-note"), note);
  }

  function queryBody() {
    const body = { query_text: $("q").value };
    // An empty field is the server's default (GET /v1/health), not one written here.
    const topK = $("top_k").value.trim();
    if (topK !== "") body.top_k = Number(topK);
    const threshold = $("threshold").value.trim();
    if (threshold !== "") body.score_threshold = Number(threshold);
    if (modeSelect.value !== "") body.mode = modeSelect.value;
    const collection = $("collection").value.trim();
    if (collection !== "") body.collection = collection;
    const filters = parseFilters($("filters").value);
    if (filters !== null) body.filters = filters;
    return body;
  }

  // -- the search's own address: #search?q=…&mode=…&top_k=…&threshold=…&collection=…&filters=…
  // It names the last search that was answered, so a reload or a shared link shows it again.
  // Each is the id of its form field.
  const ADDRESS_FIELDS = ["q", "mode", "top_k", "threshold", "collection", "filters"];
  let shownAddress = ""; // the address this page wrote last (without the #)

  /** A value of the address as its field takes it, or null (ignored) when malformed. */
  function addressValue(field, value) {
    if (field === "mode") return MODES.includes(value) ? value : null;
    if (field === "top_k") return /^[1-9][0-9]{0,5}$/.test(value) ? value : null;
    if (field === "threshold") {
      const t = Number(value);
      return /^[0-9.]{1,20}$/.test(value) && Number.isFinite(t) && t >= 0 && t <= 1 ? value : null;
    }
    return value;
  }

  function writeAddress() {
    const params = new URLSearchParams();
    for (const field of ADDRESS_FIELDS) {
      const value = field === "mode" ? modeSelect.value : $(field).value.trim();
      if (value !== "") params.set(field, value);
    }
    const address = `search?${params}`;
    if (address === shownAddress && location.hash === `#${address}`) return;
    try {
      // replaceState: no hashchange, no history entry per search
      history.replaceState(null, "", `#${address}`);
      shownAddress = address;
    } catch (_) {
      // An address too long to keep (Chromium stops at 2 MB): the page works without it.
    }
  }

  /** Fill the form from an address (a link, a reload) and search when it names a query;
   * malformed values are ignored, a field it does not name is left empty. */
  async function openAddress(params, raw) {
    if (raw === shownAddress) return; // the page's own: already shown
    shownAddress = raw;
    for (const field of ADDRESS_FIELDS) {
      const given = params.get(field);
      const value = given === null ? null : addressValue(field, given);
      if (field === "mode") wantedMode = value || "";
      else $(field).value = value === null ? "" : value;
    }
    await ready;
    updateModes();
    if ($("q").value.trim() !== "") search();
  }

  let latest = 0; // answers to older searches are dropped, so the page shows the newest

  async function search() {
    const mine = ++latest;
    await ready; // the modes the collection offers, when a listing is being read
    if (mine !== latest) return;
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
      if (resp.status !== "error") writeAddress();
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

  /** The server's search settings: the mode, top_k and threshold a search that names none
   * runs with, shown as the form's defaults. */
  async function loadConfig() {
    try {
      const config = await getJson("/v1/health");
      serverSearch = config.search;
      $("top_k").placeholder = String(serverSearch.top_k);
      $("threshold").placeholder = String(serverSearch.score_threshold);
      if (defaultCollection === null) defaultCollection = config.collection;
    } catch (_) {
      // Without them the fields still work: left empty, the server decides.
    }
  }

  async function loadCollections() {
    try {
      const answer = await fetch("/v1/collections", { headers: headers() });
      if (!answer.ok) return;
      const data = await answer.json();
      const list = $("collections");
      collectionsByName.clear();
      for (const c of data.collections) collectionsByName.set(c.name, c);
      defaultCollection = data.default;
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
   * #traffic; a search's fields after "?" (#search?q=…). */
  function fromHash() {
    const raw = location.hash.replace(/^#/, "");
    const at = raw.indexOf("?");
    let path = at < 0 ? raw : raw.slice(0, at);
    try {
      path = decodeURIComponent(path);
    } catch (_) {
      // A malformed escape (#%E0) names no view: the search view, not an uncaught error.
    }
    const [view, ...rest] = path.split("/");
    return {
      view: VIEWS.includes(view) ? view : "search",
      report: rest.join("/") || null,
      raw,
      // URLSearchParams decodes a malformed escape to U+FFFD; it never throws
      params: new URLSearchParams(at < 0 ? "" : raw.slice(at + 1)),
    };
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
      // the search tab goes back to the search shown, by its address
      location.hash = view === "search" ? shownAddress : view;
      if (view === "search") showView("search");
    });
  }
  window.addEventListener("hashchange", () => {
    const where = fromHash();
    showView(where.view);
    if (where.view === "search" && where.params.toString() !== "") openAddress(where.params, where.raw);
  });
  $("refresh-reports").addEventListener("click", loadReports);
  $("start-eval").addEventListener("submit", (event) => {
    event.preventDefault();
    startEval();
  });

  // The Judge view lives in judge.js, the History view in history.js; both use these.
  window.ragsondePage = { $, headers, getJson, postJson, setText, options, showView };

  // Deferred scripts have all run by DOMContentLoaded: judge.js is listening by then.
  document.addEventListener("DOMContentLoaded", () => {
    const where = fromHash();
    if (where.view !== "search") showView(where.view);
    else if (where.params.toString() !== "") openAddress(where.params, where.raw);
  });

  /** The server's settings and collections; the modes are offered once both are read. */
  function loadServer() {
    return Promise.all([loadConfig(), loadCollections()]).then(updateModes);
  }

  keyInput.value = sessionStorage.getItem(KEY_STORE) || "";
  keyInput.addEventListener("change", () => {
    sessionStorage.setItem(KEY_STORE, keyInput.value.trim());
    ready = loadServer();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });
  modeSelect.addEventListener("change", () => {
    wantedMode = modeSelect.value;
    updateModes();
    if ($("q").value.trim() !== "") search();
  });
  $("collection").addEventListener("input", updateModes);
  // A collection made since the page opened: the list read again when a name is typed in.
  $("collection").addEventListener("change", () => {
    if (!collectionsByName.has(collectionName())) ready = loadCollections().then(updateModes);
  });
  for (const id of ["top_k", "threshold"]) {
    $(id).addEventListener("change", () => {
      if ($("q").value.trim() !== "") search();
    });
  }
  ready = loadServer();
})();
