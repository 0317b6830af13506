// The Judge view: pool a query blind, grade each hit 0-3 with the keyboard, each grade saved at
// once (POST /v1/judge/benchmarks/NAME/grades). Like app.js, every server value is written as
// text, never parsed as HTML. Loaded after app.js, whose helpers it uses (window.ragsondePage).
"use strict";

(function () {
  const { $, headers, getJson, postJson, setText, options } = window.ragsondePage;
  const GRADE_KEYS = { 0: 0, 1: 1, 2: 2, 3: 3 };
  const hitsList = $("hits");
  const judgeStatus = $("judge-status");
  const JUDGE_STORE = "ragsonde.judge";
  let pooled = null; // the PoolResponse shown
  let pooledBenchmark = ""; // the benchmark its grades are shown from, and saved to

  function judgeStatusText(text, isError) {
    judgeStatus.textContent = text;
    judgeStatus.classList.toggle("error", Boolean(isError));
  }

  function benchName() {
    return $("judge-benchmark").value.trim().replace(/\.jsonl$/, "");
  }

  function judgeCollection() {
    return $("judge-collection").value.trim() || undefined;
  }

  /** The benchmark's queries, each with how many hits are judged. */
  async function loadJudged() {
    const name = benchName();
    const list = $("judge-queries-list");
    if (name === "") {
      list.replaceChildren();
      $("judge-agreement").hidden = true;
      return;
    }
    try {
      const bench = await getJson(`/v1/judge/benchmarks/${encodeURIComponent(name)}`);
      options("judge-queries", bench.queries.map((q) => q.query));
      list.replaceChildren(
        ...bench.queries.map((q) => {
          const li = document.createElement("li");
          li.className = "judged-query";
          li.dataset.judged = String(q.judged);
          setText(li, `${q.judged} judged · ${q.query}`);
          return li;
        }),
      );
      await loadAgreement(name);
    } catch (err) {
      judgeStatusText(String(err.message || err), true);
    }
  }

  /** Where the benchmark has both human and LLM labels: the judge's agreement with people
   * (kappa, the confusion per grade, the position bias its run recorded). */
  async function loadAgreement(name) {
    const panel = $("judge-agreement");
    let found = null;
    try {
      found = (await getJson(`/v1/judge/benchmarks/${encodeURIComponent(name)}/agreement`)).agreement;
    } catch (err) {
      judgeStatusText(String(err.message || err), true);
    }
    panel.hidden = !found;
    panel.dataset.queries = found ? String(found.queries) : "0";
    if (!found) return;
    const kappa = found.kappa === null ? "undefined (one class only)" : found.kappa.toFixed(3);
    const raw = found.raw_agreement === null ? "-" : found.raw_agreement.toFixed(3);
    setText(
      $("agreement-summary"),
      `Cohen's kappa ${kappa} on relevant or not (LLM grade ≥ ${found.llm_relevant_from}) · ` +
        `raw agreement ${raw} · ${found.pairs} pairs on ${found.queries} queries`,
    );
    $("agreement-confusion").tBodies[0].replaceChildren(
      ...["0", "1", "2", "3"].map((h) => {
        const tr = document.createElement("tr");
        const th = document.createElement("th");
        setText(th, h);
        tr.append(th);
        for (const m of ["0", "1", "2", "3"]) {
          const td = document.createElement("td");
          td.dataset.human = h;
          td.dataset.llm = m;
          td.classList.toggle("agree", h === m);
          setText(td, String((found.confusion[h] || {})[m] || 0));
          tr.append(td);
        }
        return tr;
      }),
    );
    const p = found.position;
    setText(
      $("agreement-position"),
      p
        ? `position bias: ${p.changed} of ${p.pairs} pairs change grade with the passage first ` +
            `(${p.changed_share === null ? "-" : (100 * p.changed_share).toFixed(1)} %: ` +
            `${p.higher_passage_first} higher, ${p.lower_passage_first} lower); ` +
            `${p.relevance_flipped} cross the relevance threshold`
        : "position bias not measured: ragsonde judge … --agreement --position-bias measures it",
    );
  }

  function showGrade(node, grade) {
    if (grade === null || grade === undefined) delete node.dataset.grade;
    else node.dataset.grade = String(grade);
    for (const b of node.querySelectorAll(".grade")) {
      b.classList.toggle("on", b.dataset.grade === String(grade));
    }
  }

  function judgedCount() {
    return hitsList.querySelectorAll(".hit[data-grade]").length;
  }

  function showCount() {
    const n = pooled ? pooled.hits.length : 0;
    judgeStatusText(`${judgedCount()} of ${n} hits judged · modes ${pooled ? pooled.modes.join(", ") : ""}`);
  }

  // Grades are written one at a time, in the order they were given: a judge typing faster
  // than the server answers must not have a later grade overtaken by an earlier one (the page
  // would then show one grade and the file hold another).
  let saving = Promise.resolve();

  /** Queue one grade of `node`; what is sent (benchmark, query, judge) is fixed now, at the
   * key press, so editing the form while grades are in flight cannot redirect them. */
  function saveGrade(node, grade) {
    const bench = pooledBenchmark;
    const body = {
      query: pooled.query,
      chunk_id: node.dataset.chunkId,
      doc_id: node.dataset.docId,
      grade,
      judge: $("judge-name").value.trim() || "web",
    };
    node.dataset.pending = String(Number(node.dataset.pending || "0") + 1);
    saving = saving.then(async () => {
      try {
        await postJson(`/v1/judge/benchmarks/${encodeURIComponent(bench)}/grades`, body);
        delete node.dataset.unsaved;
        showGrade(node, grade);
        showCount();
        hitsList.dataset.saved = String(Number(hitsList.dataset.saved || "0") + 1);
        loadJudged();
      } catch (err) {
        node.dataset.unsaved = String(grade); // the hit whose grade was lost, marked
        const rank = node.querySelector(".rank").textContent;
        judgeStatusText(`Not saved: grade ${grade} of hit ${rank}: ${err.message || err}`, true);
      } finally {
        const left = Number(node.dataset.pending) - 1;
        if (left > 0) node.dataset.pending = String(left);
        else delete node.dataset.pending;
      }
    });
    return saving;
  }

  function select(node) {
    for (const n of hitsList.querySelectorAll(".hit.selected")) n.classList.remove("selected");
    if (node) {
      node.classList.add("selected");
      node.focus();
    }
  }

  function hitCard(hit, n) {
    const node = $("hit").content.firstElementChild.cloneNode(true);
    setText(node.querySelector(".rank"), `#${n + 1}`);
    setText(node.querySelector(".doc"), hit.doc_id);
    setText(node.querySelector(".text"), hit.text);
    node.dataset.chunkId = hit.chunk_id;
    node.dataset.docId = hit.doc_id;
    showGrade(node, hit.grade);
    for (const b of node.querySelectorAll(".grade")) {
      b.addEventListener("click", () => {
        select(node);
        saveGrade(node, Number(b.dataset.grade));
      });
    }
    node.addEventListener("click", () => select(node));
    return node;
  }

  async function poolQuery() {
    const name = benchName();
    const query = $("judge-query").value.trim();
    if (name === "" || query === "") return;
    sessionStorage.setItem(
      JUDGE_STORE,
      JSON.stringify({ benchmark: name, collection: $("judge-collection").value, query }),
    );
    $("judge-go").disabled = true;
    judgeStatusText("Pooling…");
    try {
      const body = { query, benchmark: name };
      if (judgeCollection()) body.collection = judgeCollection();
      await saving; // the grades still being saved are in the pool's answer
      pooled = await postJson("/v1/judge/pool", body);
      pooledBenchmark = name;
      hitsList.replaceChildren(...pooled.hits.map(hitCard));
      if (pooled.hits.length === 0) {
        judgeStatusText(`Nothing to judge: collection ${pooled.collection} returned no hit for this query.`, true);
      } else showCount();
      select(hitsList.querySelector(".hit"));
    } catch (err) {
      hitsList.replaceChildren();
      judgeStatusText(String(err.message || err), true);
    } finally {
      $("judge-go").disabled = false;
      hitsList.dataset.seq = String(Number(hitsList.dataset.seq || "0") + 1);
    }
  }

  async function exportBenchmark() {
    try {
      const answer = await fetch(`/v1/judge/benchmarks/${encodeURIComponent(benchName())}/export`, {
        headers: headers(),
      });
      if (!answer.ok) {
        const data = await answer.json();
        throw new Error(data.error ? data.error.message : `HTTP ${answer.status}`);
      }
      const link = document.createElement("a");
      link.href = URL.createObjectURL(await answer.blob());
      link.download = `${benchName()}.jsonl`;
      document.body.appendChild(link);
      link.click();
      link.remove();
    } catch (err) {
      judgeStatusText(String(err.message || err), true);
    }
  }

  hitsList.addEventListener("keydown", (event) => {
    const node = event.target.closest(".hit");
    if (!node || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key in GRADE_KEYS) {
      event.preventDefault();
      saveGrade(node, GRADE_KEYS[event.key]);
      select(node.nextElementSibling || node); // at once: the next key grades the next hit
    } else if (event.key === "j" || event.key === "ArrowDown") {
      event.preventDefault();
      select(node.nextElementSibling || node);
    } else if (event.key === "k" || event.key === "ArrowUp") {
      event.preventDefault();
      select(node.previousElementSibling || node);
    }
  });
  $("judge-setup").addEventListener("submit", (event) => {
    event.preventDefault();
    poolQuery();
  });
  $("judge-benchmark").addEventListener("change", () => {
    loadJudged();
    // The hits shown carry the grades of the benchmark they were pooled for, and grades are
    // saved there: pool again, so the hits shown are the named benchmark's.
    if (pooled && benchName() !== "") poolQuery();
  });
  $("judge-export").addEventListener("click", exportBenchmark);
  $("judge-name").value = localStorage.getItem("ragsonde.judge_name") || "";
  $("judge-name").addEventListener("change", () =>
    localStorage.setItem("ragsonde.judge_name", $("judge-name").value.trim()),
  );

  // Nothing is lost on reload: the view, the benchmark and the query come back, and the
  // grades come from the server.
  const saved = JSON.parse(sessionStorage.getItem(JUDGE_STORE) || "null");
  if (saved) {
    $("judge-benchmark").value = saved.benchmark || "";
    $("judge-collection").value = saved.collection || "";
    $("judge-query").value = saved.query || "";
  }
  document.addEventListener("ragsonde:judge-view", () => {
    loadJudged();
    if (saved && !pooled) poolQuery();
  });
})();
