"""Run a benchmark against a collection the way a user would, and score it.

Each query goes through :class:`~ragsonde.retriever.Retriever` one at a time, embedding
included, so the latency percentiles are what a chatbot sees (one warm-up query first, not
counted). Batched throughput is measured separately. When relevance is by document (or url), the
ranked chunks are collapsed to documents, the first occurrence keeping its rank, fetching more
chunks than k as needed, so a document split into many chunks counts once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragsonde.evaluate.aggregation import Aggregation, collapse
from ragsonde.evaluate.breakdown import build_breakdown, group_by_field
from ragsonde.evaluate.datasets import Benchmark, BenchQuery, load_benchmark, require_labelled
from ragsonde.evaluate.ict_match import ict_mismatch
from ragsonde.evaluate.ingest_first import ensure_collection
from ragsonde.evaluate.integrity import IntegrityReport
from ragsonde.evaluate.metrics import (
    by_rank,
    compute_metrics,
    metric_names,
    parse_metric,
    percentiles,
)
from ragsonde.evaluate.options import EvalOptions
from ragsonde.evaluate.relevance import (
    check_missing,
    left_out,
    resolve_relevance,
    result_key,
    unread_ids,
)
from ragsonde.evaluate.report import (
    BenchmarkInfo,
    EvalReport,
    IndexHealth,
    Latency,
    QueryRow,
    RelevanceField,
    SearchInfo,
    SpanRef,
    StageTimings,
    Throughput,
)
from ragsonde.evaluate.resolve import POINT_ID, id_values
from ragsonde.evaluate.run_file import run_sources
from ragsonde.evaluate.span_eval import SpanCollector
from ragsonde.models import Limits, Response, Result
from ragsonde.models.params import IndexParams, SearchParams, index_differences
from ragsonde.models.payload import PayloadMapping, build_mapping
from ragsonde.models.query import resolve_collection
from ragsonde.models.scores import is_distance
from ragsonde.models.store import Store
from ragsonde.models.unread import Unread, id_text
from ragsonde.models.validation import options_of
from ragsonde.progress import Progress
from ragsonde.retriever import Retriever
from ragsonde.workspace import Workspace, using

__all__ = ["RELEVANCE_KEYS", "evaluate"]

_STAGES = ("embedding_ms", "search_ms", "post_processing_ms", "total_ms")
_MAX_FETCH = 5000
_OVERSAMPLE = 3
_SHOWN = 10
_BEST_CHUNK = Aggregation()
_LIMITS = Limits(max_top_k=_MAX_FETCH, max_batch_size=100)

#: ``--relevance-by`` -> (payload field counted in the store, key of a result).
RELEVANCE_KEYS: dict[str, tuple[str | None, Any]] = {
    "doc": ("doc_id", lambda r: id_text(r.metadata.get("doc_id"))),
    "url": ("url", lambda r: r.url),
    "chunk": (None, lambda r: r.chunk_id),
}


def _collapse(
    results: Sequence[Result], key: Any, how: Aggregation = _BEST_CHUNK, raw: bool = False
) -> dict[str, float]:
    """Ranked results -> ranked ids by the ``aggregation`` setting
    (:func:`~ragsonde.evaluate.aggregation.collapse`, which ``explain`` ranks by too)."""
    return collapse(((key(r), r.similarity_score, r.raw_score) for r in results), how, raw=raw)


@dataclass
class _Ran:
    """Every query's ranking, its row of the report, and each stage's latencies."""

    run: dict[str, dict[str, float]] = field(default_factory=dict)
    per_query: dict[str, QueryRow] = field(default_factory=dict)
    timings: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in _STAGES})


class _Evaluation:
    def __init__(
        self,
        bench: Benchmark,
        retriever: Retriever,
        store: Store,
        collection: str,
        o: EvalOptions,
        params: SearchParams,
    ) -> None:
        self.bench = bench
        self.retriever = retriever
        self.store = store
        self.collection = collection
        self.o = o
        self.params = params
        self.depth = max(o.k)
        self.key = RELEVANCE_KEYS[o.relevance_by][1]
        self.field_path = RELEVANCE_KEYS[o.relevance_by][0]
        self.relevance: RelevanceField | None = None
        self.integrity = IntegrityReport(mapping=retriever.mapping)
        self.errors: dict[str, str] = {}
        self.cut_short = 0  # queries whose ranking the fetch cap ended before max(k)
        self.unread = Unread()  # payload values of a type their field cannot be read as
        self.aggregation = Aggregation.of(params.aggregation, params.aggregation_n)
        info = store.collection_info(collection)
        # a sum adds the engine's scores where they are similarities (not Euclid/Manhattan)
        self.raw_scores = params.mode != "dense" or not is_distance(info.distance)
        self.index = info.search_index(params.mode, params.exact)  # how candidates are found

    def body(self, q: BenchQuery, top_k: int) -> dict[str, Any]:
        return {
            "query_text": q.text,
            "top_k": top_k,
            "filters": q.filters,
            "query_id": q.query_id,
            "mode": self.params.mode,
            "score_threshold": self.params.score_threshold,
        }

    def run_all(self, spans: SpanCollector | None, progress: Progress | None) -> _Ran:
        """Each query once, one at a time as a chatbot asks (after one warm-up query, not
        counted: the model and the caches)."""
        queries = self.bench.queries
        self.retriever.retrieve(self.body(queries[0], 1), collection=self.collection)
        if progress is not None:
            progress.start(len(queries))
        ran = _Ran()
        for q in queries:
            ranked, resp = self.run_query(q)
            ran.run[q.query_id] = ranked
            found: dict[str, int] = {}
            if resp.status == "error" and resp.error is not None:
                self.errors[q.query_id] = f"{resp.error.code.value}: {resp.error.message}"
            else:
                for s in _STAGES:
                    ran.timings[s].append(float(getattr(resp.timings, s)))
                found = self.integrity.check(resp, q.filters)
                self.unread.merge(resp.unread)
                if self.relevance is not None:
                    unread_ids(resp.results, self.relevance.path, self.unread)
                if spans is not None:
                    spans.add(q, resp.results)
            ran.per_query[q.query_id] = QueryRow(
                query=q.text,
                relevant=q.relevant,
                retrieved=[(d, round(s, 4)) for d, s in list(ranked.items())[:_SHOWN]],
                total_ms=round(resp.timings.total_ms, 3),
                timings=StageTimings(
                    **{s: round(float(getattr(resp.timings, s)), 3) for s in _STAGES}
                ),
                filters=q.filters or None,
                filter_violations=found.get("filter_violated", 0) if q.filters else None,
                references=(
                    [SpanRef(doc_id=x.doc_id, start=x.start, end=x.end) for x in q.references]
                    if spans is not None
                    else None
                ),
            )
            if progress is not None:
                progress.advance(1)
        return ran

    def search_info(self, built: IndexParams) -> SearchInfo:
        """How this run searched: the parameters every query ran with, and the index."""
        params = self.params
        return SearchInfo(
            mode=params.mode,
            exact=params.exact,
            index=self.index,
            backend=self.store.backend,
            fetch_chunks=self.fetch_size(),
            score_threshold=params.score_threshold,
            aggregation=self.aggregation.label if self.o.relevance_by != "chunk" else "chunk",
            fusion=params.fusion_label,
            params=params,
            collection_index=built,
        )

    def fetch_size(self) -> int:
        wanted = self.depth if self.o.relevance_by == "chunk" else self.depth * _OVERSAMPLE
        return min(wanted, _MAX_FETCH)

    def run_query(self, q: BenchQuery) -> tuple[dict[str, float], Response]:
        want = min(q.top_k or self.depth, self.depth)
        fetch = self.fetch_size()
        while True:
            resp = self.retriever.retrieve(self.body(q, fetch), collection=self.collection)
            ranked = _collapse(resp.results, self.key, self.aggregation, self.raw_scores)
            exhausted = len(resp.results) < fetch
            if resp.status == "error" or len(ranked) >= want or exhausted or fetch >= _MAX_FETCH:
                break
            fetch = min(fetch * 2, _MAX_FETCH)
        self.cut_short += resp.status != "error" and not exhausted and len(ranked) < want
        return dict(list(ranked.items())[:want]), resp

    def resolve(self, mapping: PayloadMapping) -> None:
        """By document: find the payload path of the relevant ids (RelevanceError if none)."""
        if self.o.relevance_by != "doc":
            return
        wanted = sorted({r for q in self.bench.queries for r in q.relevant})
        self.relevance = resolve_relevance(self.store, self.collection, wanted, mapping)
        self.field_path = None if self.relevance.path == POINT_ID else self.relevance.path
        self.key = result_key(self.relevance.path)

    def check(self, mapping: PayloadMapping) -> tuple[list[str], list[str], dict[str, str] | None]:
        """Before any query runs: the relevant ids missing from the collection, the warnings,
        and the ``by`` groups. Ids that resolve nowhere, or mostly missing, or a ``by`` field no
        relevant chunk has, fail the run here."""
        self.resolve(mapping)
        missing = self.missing_relevant()
        warnings: list[str] = []
        if self.relevance is not None and not self.relevance.configured:
            warnings.append(self.relevance.describe())
        unmatched = ict_mismatch(self.store, self.collection, self.bench.queries)
        if unmatched is not None:
            warnings.append(unmatched)
        # a minority missing is a note (relevant_missing_from_collection); a majority fails
        wanted = {r for q in self.bench.queries for r in q.relevant}
        check_missing(missing, len(wanted), self.o.allow_missing)
        by_groups = None
        if self.o.by:
            by_groups = group_by_field(
                self.store, self.collection, self.bench.queries, self.field_path, self.o.by
            )
        return missing, warnings, by_groups

    def missing_relevant(self) -> list[str]:
        field_name = self.field_path
        wanted = sorted({r for q in self.bench.queries for r in q.relevant})
        if field_name is None:
            found = {p.id for p in self.store.retrieve(self.collection, wanted)}
            return [w for w in wanted if w not in found]
        return [
            w
            for w in wanted
            if self.store.count(self.collection, {field_name: id_values([w])}) == 0
        ]

    def index_health(self, ann_search_ms: Sequence[float]) -> IndexHealth:
        """Every query again with exact search: recall@k of the HNSW index against it (of a
        full scan, on a collection too small for a graph: 1.0, and the note says which)."""
        exact = Retriever(
            workspace=self.retriever.workspace,
            limits=self.retriever.limits,
            search=self.params.overlay({"exact": True}),
            mapping=self.retriever.mapping,
        )
        overlap: dict[int, list[float]] = {k: [] for k in self.o.k}
        exact_ms: list[float] = []
        for q in self.bench.queries:
            body = self.body(q, self.depth)
            approx = self.retriever.retrieve(body, collection=self.collection)
            truth = exact.retrieve(body, collection=self.collection)
            exact_ms.append(truth.timings.search_ms)
            a_ids = [r.chunk_id for r in approx.results]
            t_ids = [r.chunk_id for r in truth.results]
            for k in self.o.k:
                want = set(t_ids[:k])
                if want:
                    overlap[k].append(len(set(a_ids[:k]) & want) / len(want))
        return IndexHealth(
            recall_vs_exact={
                f"recall@{k}": round(float(np.mean(v)), 4) if v else None
                for k, v in overlap.items()
            },
            ann_search_ms=percentiles(ann_search_ms),
            exact_search_ms=percentiles(exact_ms),
            note=f"chunk-level overlap of the top k, {self.index} vs exact search, same queries",
        )

    def throughput(self) -> Throughput:
        size = self.retriever.limits.max_batch_size
        queries = self.bench.queries
        start = time.perf_counter()
        for i in range(0, len(queries), size):
            part = queries[i : i + size]
            self.retriever.retrieve_batch(
                {
                    "queries": [self.body(q, self.fetch_size()) for q in part],
                    "collection": self.collection,
                }
            )
        wall = time.perf_counter() - start
        return Throughput(
            batch_size=size, queries_per_s=round(len(queries) / wall, 2) if wall > 0 else 0.0
        )


def _record(
    report: EvalReport, bench: Benchmark, ws: Workspace, record: bool | None, history: Any
) -> None:
    """The run into the history, after the report is finished (nothing in it changes)."""
    from ragsonde.history.record import record_eval, recording_on

    if recording_on(record):
        report.history_run = record_eval(
            report,
            bench,
            store=ws.store,
            embedder=ws.embedder,
            settings=ws.settings,
            history=history,
        )


def evaluate(
    dataset: str | Path,
    options: EvalOptions | None = None,
    workspace: Workspace | None = None,
    *,
    collection: str | None = None,
    progress: Progress | None = None,
    ingest: bool = False,
    corpus: str | None = None,
    record: bool | None = None,
    history: Path | str | None = None,
    extend: Callable[[EvalReport], None] | None = None,
    started: float | None = None,
    shown_as: str | None = None,
) -> EvalReport:
    """Evaluate retrieval on ``dataset`` against ``collection`` (default: the workspace's
    ``settings.collection``) with ``options``; see :class:`EvalReport`.

    The store and the embedder are ``workspace``'s (its owner closes it), else those of a
    workspace opened from the settings for this call (:func:`~ragsonde.workspace.using`). The
    search is the settings' (``ragsonde.toml``, environment) with ``options.search`` on top.
    With ``ingest``, a missing collection is first ingested from ``corpus`` (any ``ragsonde
    ingest`` source), else the benchmark's BEIR corpus.

    The finished report is recorded in the run history (``history``, else ``RAGSONDE_HISTORY``,
    else ``<home>/history.sqlite``) unless ``record`` is False (or ``RAGSONDE_RECORD=0``); its
    id is ``report.history_run``. See :mod:`ragsonde.history`.

    ``extend`` completes the finished report before it is timed and recorded (``--explain``
    adds its misses section: :func:`ragsonde.explain.evaluate_explained`), so the report's
    ``seconds`` and the recorded run cover that work too. The clock starts at ``started`` (a
    :func:`time.perf_counter` reading; the CLI passes its command's start, so ``seconds`` also
    covers loading the libraries and the benchmark), else at this call.

    ``shown_as``: what an error about the benchmark calls it instead of its path
    (:func:`~ragsonde.evaluate.datasets.load_benchmark`'s; the server's ``"the uploaded
    benchmark"``, read from a copy in its own folders).
    """
    o = options_of(options, EvalOptions)
    names = _metric_names(o)  # an unknown metric in a gate fails before any work
    started = time.perf_counter() if started is None else started
    with using(workspace) as ws:
        cfg = ws.settings
        # the settings' search (ragsonde.toml, environment, --config, the server's) with what the
        # options set on top: the one search every query of this run makes
        params = o.effective_search(cfg.search)
        coll = resolve_collection(collection, cfg.collection)
        bench = load_benchmark(
            dataset,
            split=o.split,
            queries=o.queries_file,
            keep_unlabelled=o.estimate,
            shown_as=shown_as,
        )
        if o.estimate:
            require_labelled(bench, dataset, shown_as=shown_as)
        st = ws.store
        ingested = (
            ensure_collection(bench, ws, coll, params.mode != "dense", corpus) if ingest else None
        )
        mapping = build_mapping({**cfg.mapping, **(o.mapping or {})})
        retriever = Retriever(workspace=ws, limits=_LIMITS, search=params, mapping=mapping)
        # a mode the collection cannot serve fails every query alike: refused once, never a
        # table of zeros with 'N queries failed' under it
        retriever.require_mode(coll, params.mode)
        ev = _Evaluation(bench, retriever, st, coll, o, params)
        built = retriever.index_params(coll)
        missing, warnings, by_groups = ev.check(mapping)
        spans = SpanCollector(bench, o.k, ev.key, mapping) if bench.span_labelled else None
        ran = ev.run_all(spans, progress)
        means, per_metric = compute_metrics(  # the labelled queries (all, unless estimate)
            names,
            {q: r for q, r in bench.qrels.items() if r},
            by_rank(ran.run),
            judged_only=o.judged_only,
        )
        span_summary = None
        if spans is not None:  # beside the document metrics, in the same per-query rows
            span_summary, span_rows = spans.score(st, coll, ev.field_path)
            for qid, values in span_rows.items():
                per_metric.setdefault(qid, {}).update(values)
            for qid, row in ran.per_query.items():  # what the report marks the answer in
                row.hits = spans.hits(qid)
        for qid, values in per_metric.items():
            ran.per_query[qid].metrics = {k: round(v, 6) for k, v in values.items()}
        report = EvalReport(
            dataset=str(dataset),
            collection=coll,
            embedder=ws.embedder.name,
            relevance_by=o.relevance_by,
            ks=o.k,
            metrics={k: round(v, 6) for k, v in means.items()},
            per_query=ran.per_query,
            latency=Latency(**{s: percentiles(v) for s, v in ran.timings.items()}),
            throughput=ev.throughput() if o.throughput else None,
            integrity=ev.integrity.summary(),
            benchmark=BenchmarkInfo(
                name=bench.name,
                queries=len(bench.queries),
                skipped_queries=bench.skipped,
                relevant_ids=len({r for q in bench.queries for r in q.relevant}),
                relevant_missing_from_collection=missing,
                errors=ev.errors,
                ingested=ingested,
                pooled=bench.pooled,
                machine_labels={
                    q.query_id: q.machine_labels
                    for q in bench.queries
                    if q.machine_labels and q.relevant
                },
            ),
            search=ev.search_info(built),
            breakdown=build_breakdown(bench.queries, ran.per_query, o.by, by_groups),
            spans=span_summary,
            relevance_field=ev.relevance,
            warnings=[
                *left_out(bench.skipped, len(bench.queries), ingested),
                *index_differences(cfg.index, built, coll),
                *warnings,
                *ev.integrity.warnings(),
                *ev.unread.warnings(),
            ],
            judged_only=o.judged_only,
            created_at=datetime.now(UTC).isoformat(),
        ).with_run(ran.run, run_sources((o.queries_file, o.plan_file, corpus), cfg.home, history))
        _finish(report, ev, ran, o)
        if extend is not None:
            extend(report)
        report.seconds = round(time.perf_counter() - started, 3)
        _record(report, bench, ws, record, history)
        return report


def _metric_names(o: EvalOptions) -> list[str]:
    """The metrics of the cutoffs, and those the gates name (an unknown one fails here)."""
    names = metric_names(o.k)
    for gate in o.parsed_gates:
        if "." not in gate.path:
            parse_metric(gate.path)
            names.append(gate.path)
    return list(dict.fromkeys(names))


def _finish(report: EvalReport, ev: _Evaluation, ran: _Ran, o: EvalOptions) -> None:
    """What the options add to a scored report: the coverage warning, the threshold sweep,
    the index's health, and the gates' verdicts (last: they read the rest)."""
    if ev.cut_short:  # scored as misses below the cap: said, never silent
        report.warnings.append(
            f"{ev.cut_short} of {len(ev.bench.queries)} queries ranked fewer than "
            f"{ev.depth} {o.relevance_by}s: a query fetches at most {_MAX_FETCH} chunks, so "
            f"metrics @{ev.depth} count the rest as misses. Use smaller cutoffs (--k)."
        )
    low = report.low_coverage()
    if low is not None:
        report.warnings.append(
            f"Low label coverage: judged@{low[0]} is {low[1]:.2f} on a pooled benchmark, so "
            f"most top-{low[0]} hits fell outside the judged pools and count as misses. Judge "
            "them (`ragsonde judge`, or the page's Judge view), or score with judged_only."
        )
    if o.sweep_thresholds:
        from ragsonde.evaluate.sweep import sweep_thresholds

        report.threshold_sweep = sweep_thresholds(
            ran.run, ev.bench.qrels, max_recall_loss=o.max_recall_loss
        )
    if o.ann_vs_exact:
        report.index_health = ev.index_health(ran.timings["search_ms"])
    report.gates = [g.evaluate(report) for g in o.parsed_gates]
