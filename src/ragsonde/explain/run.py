"""Run the ladder: over an evaluation's misses (:func:`explain_report`), or for one benchmark
query (:func:`explain_query`).

Both embed each query that has a miss once (one model call for all of them), build its search as
the run made it (:class:`~ragsonde.explain.pipeline.Pipeline`), let :func:`.probe.probe` ask the
store in batches, and climb each missed document up the ladder (:func:`.ladder.climb`). The parts
come from a :class:`~ragsonde.workspace.Workspace`, the one place that opens them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.misses import MissesReport, QueryMisses
from ragsonde.evaluate.resolve import POINT_ID
from ragsonde.explain.ladder import climb
from ragsonde.explain.pipeline import Pipeline
from ragsonde.explain.probe import Case, Probe, Setup, TokenWindow, probe
from ragsonde.explain.retrievability import collection_documents, retrievability
from ragsonde.models.points import SparseVector
from ragsonde.models.query import parse_query, resolve_collection
from ragsonde.models.text import UnicodeStr
from ragsonde.models.validation import options_error
from ragsonde.progress import Progress
from ragsonde.workspace import Workspace, using

if TYPE_CHECKING:
    from ragsonde.config import Settings
    from ragsonde.evaluate.datasets import Benchmark, BenchQuery
    from ragsonde.evaluate.options import EvalOptions
    from ragsonde.evaluate.report import EvalReport

__all__ = ["DEFAULT_EXPLAIN_K", "evaluate_explained", "explain_query", "explain_report"]

#: The cutoff a miss is counted at unless told (``--explain-k``).
DEFAULT_EXPLAIN_K = 10


def _benchmark(
    benchmark: Benchmark | str | Path,
    split: str,
    queries: Path | None,
    shown_as: str | None = None,
) -> Benchmark:
    from ragsonde.evaluate.datasets import Benchmark, load_benchmark

    if isinstance(benchmark, Benchmark):
        return benchmark
    return load_benchmark(benchmark, split=split, queries=queries, shown_as=shown_as)


def _cases(ws: Workspace, setup: Setup, queries: Sequence[BenchQuery]) -> list[Case]:
    """Each query embedded once (dense: one model call; BM25: one encoder call), its filter
    resolved on the collection, its search as the run made it."""
    from ragsonde.embedders.sparse import query_encoder, query_language, recorded_language
    from ragsonde.retriever.filters import FilterResolver

    if not queries:
        return []
    mode = setup.pipeline.mode
    texts = [q.text for q in queries]
    vectors: list[list[float] | None] = [None] * len(texts)
    if mode != "sparse":
        vectors = list(ws.embedder.embed_queries(texts).tolist())
    sparse: list[SparseVector | None] = [None] * len(texts)
    if mode != "dense":
        first = next(iter(setup.store.scroll(setup.collection, batch_size=1)), [])
        recorded = recorded_language(first[0].payload) if first else None
        language = query_language(setup.collection, recorded, ws.settings.index.bm25_language)
        sparse = list(query_encoder(language).embed_queries(texts))
    resolver = FilterResolver(setup.mapping)
    cases = []
    for q, vec, sv in zip(queries, vectors, sparse, strict=True):
        filt = resolver.resolve(q.filters, setup.info, setup.store)
        spec = setup.pipeline.spec(vec, sv, filt)
        cases.append(Case(q.query_id, q.text, dict(q.relevant), filt, spec, q.references))
    return cases


def _explain(
    setup: Setup, cases: Sequence[Case]
) -> tuple[dict[str, QueryMisses], dict[str, list[str]]]:
    """Each case's misses up the ladder; and per query the misses its search as run does not
    reproduce (the document is within k after all), which no stage can be blamed for."""
    out: dict[str, QueryMisses] = {}
    unreproduced: dict[str, list[str]] = {}
    for p in probe(setup, cases):
        held = [d for d in p.case.missed or [] if p.base.within(d, setup.k, kept=True)]
        if held:
            unreproduced[p.case.query_id] = held
        out[p.case.query_id] = _query(setup, p, held)
    return out, unreproduced


def _query(setup: Setup, p: Probe, held: Sequence[str] = ()) -> QueryMisses:
    c = p.case
    relevant = {d: g for d, g in c.relevant.items() if g > 0}
    missed = [d for d in c.missed or [] if d not in held]
    found = {d: r for d in relevant if d not in missed and (r := p.base.rank(d, kept=True))}
    return QueryMisses(
        query=c.text,
        relevant=len(relevant),
        found=found,
        misses=[climb(setup, p, d, relevant[d], p.facts[d]) for d in missed],
    )


def _doc_path(report: EvalReport, settings: Settings) -> str:
    if report.relevance_field is not None:
        return report.relevance_field.path
    if report.relevance_by == "chunk":
        return POINT_ID
    if report.relevance_by == "url":
        return "url"
    return settings.payload_mapping.paths.get("doc_id", ("doc_id",))[0]


def explain_report(
    report: EvalReport,
    benchmark: Benchmark | str | Path,
    *,
    k: int = DEFAULT_EXPLAIN_K,
    split: str = "test",
    queries: Path | None = None,
    workspace: Workspace | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> MissesReport:
    """The ``misses`` section for ``report``, an evaluation of ``benchmark`` (which must be the
    one it ran: the same queries). Sets ``report.misses`` and returns it.

    A miss is a relevant document (grade > 0) outside the top ``k`` of the report's run; a query
    that failed in the run is listed under ``unexplained_queries``, not counted. ``k`` may not
    exceed the largest cutoff the run ranked to.
    """
    started = time.perf_counter()
    _check_k(k, max(report.ks))
    bench = _benchmark(benchmark, split, queries)
    with using(workspace, settings) as ws:
        store = ws.store
        doc_path = _doc_path(report, ws.settings)
        setup = Setup(
            store=store,
            collection=report.collection,
            info=store.collection_info(report.collection),
            pipeline=Pipeline.of_report(report.search, ws.settings, doc_path),
            k=k,
            mapping=ws.settings.payload_mapping,
            tokens=TokenWindow.of(ws.embedder),
            spans=any(q.references for q in bench.queries),
        )
        failed = dict(report.benchmark.errors)
        todo: list[BenchQuery] = []
        missed: dict[str, list[str]] = {}
        for q in bench.queries:
            if q.query_id in failed or q.query_id not in report.per_query:
                continue
            top = list(report.run.get(q.query_id, {}))[:k]
            gone = [d for d, g in q.relevant.items() if g > 0 and d not in top]
            if gone:
                todo.append(q)
                missed[q.query_id] = gone
        if progress is not None:
            progress.start(len(todo))
        cases = _cases(ws, setup, todo)
        for c in cases:
            c.missed = missed[c.query_id]
        per_query, unreproduced = _explain(setup, cases)
        if progress is not None:
            progress.advance(len(todo))
        tops = {qid: list(run)[:k] for qid, run in report.run.items() if qid not in failed}
        docs = collection_documents(store, report.collection, doc_path)
        section = MissesReport.build(
            k,
            per_query,
            not_measurable=setup.unmeasurable,
            unexplained_queries={qid: f"the query failed: {why}" for qid, why in failed.items()},
            not_reproduced=unreproduced,
            searches=setup.searches,
            seconds=round(time.perf_counter() - started, 3),
            retrievability=retrievability(tops, docs, k),
        )
    report.misses = section
    return section


def evaluate_explained(
    dataset: str | Path,
    options: EvalOptions,
    workspace: Workspace,
    *,
    k: int = DEFAULT_EXPLAIN_K,
    extend: Callable[[EvalReport], None] | None = None,
    shown_as: str | None = None,
    **evaluate_kwargs: Any,
) -> EvalReport:
    """:func:`~ragsonde.evaluate.evaluate` with the miss ladder (:func:`explain_report`) run on
    the finished report before it is timed and recorded: ``eval --explain`` and a ``/v1/eval``
    job with ``explain``. The report's ``seconds`` covers the ladder, and the run is recorded
    once, misses included (``history diff`` reads them to say why a query flipped).

    ``k`` is checked against the options' cutoffs before any query runs. ``extend``: a
    further step after the ladder (``--estimate``'s, :func:`ragsonde.estimate.estimating`),
    timed and recorded with it. ``shown_as``: as :func:`~ragsonde.evaluate.evaluate`'s.
    """
    from ragsonde.evaluate import evaluate

    _check_k(k, max(options.k))
    bench = _benchmark(dataset, options.split, options.queries_file, shown_as)

    def explain(report: EvalReport) -> None:
        explain_report(report, bench, k=k, workspace=workspace)
        if extend is not None:
            extend(report)

    return evaluate(
        dataset, options, workspace, extend=explain, shown_as=shown_as, **evaluate_kwargs
    )


def _check_k(k: int, depth: int) -> None:
    if not 1 <= k <= depth:
        raise QueryValidationError(
            f"explain_k: {k} is outside 1..{depth}, the largest cutoff the evaluation ranked "
            f"to; raise --k or lower --explain-k.",
            field="explain_k",
        )


class _Asked(BaseModel):
    """:func:`explain_query`'s numbers, checked where they enter (a NaN ``k`` or a negative
    ``fetch`` was a pydantic error from deep in the pipeline)."""

    model_config = ConfigDict(strict=True)
    query_id: UnicodeStr
    k: int = Field(ge=1)
    fetch: int | None = Field(default=None, ge=1)
    score_threshold: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)


def explain_query(
    benchmark: Benchmark | str | Path,
    query_id: str,
    *,
    collection: str | None = None,
    k: int = DEFAULT_EXPLAIN_K,
    split: str = "test",
    queries: Path | None = None,
    fetch: int | None = None,
    score_threshold: float | None = None,
    workspace: Workspace | None = None,
    settings: Settings | None = None,
) -> MissesReport:
    """One benchmark query's ladder, searched as ``ragsonde eval`` would search it with the
    settings (``fetch``: chunks fetched before collapsing into documents, default ``k`` × 3;
    ``score_threshold``: the similarity results must reach, default none).
    Its misses are read off that search's own top ``k``."""
    from ragsonde.evaluate.relevance import resolve_relevance

    try:
        _Asked(query_id=query_id, k=k, fetch=fetch, score_threshold=score_threshold)
    except ValidationError as e:
        raise options_error(e) from e
    started = time.perf_counter()
    bench = _benchmark(benchmark, split, queries)
    q = next((x for x in bench.queries if x.query_id == query_id), None)
    if q is None:
        why = next((s for s in bench.skipped if s.startswith(f"{query_id}: ")), None)
        raise QueryValidationError(  # a row left out says why ("q30: unlabelled")
            f"query_id: '{query_id}' of {bench.name} was left out ({why.split(': ', 1)[1]}): "
            "there is nothing to explain without its relevant ids."
            if why
            else f"query_id: no query '{query_id}' in {bench.name} ({len(bench.queries)} queries).",
            field="query_id",
        )
    with using(workspace, settings) as ws:
        store, cfg = ws.store, ws.settings
        try:  # checked as eval checks it: a 12,000-character query was explained as a hit
            parse_query({"query_text": q.text}, cfg.limits)
        except QueryValidationError as e:
            raise QueryValidationError(
                f"query '{query_id}' cannot be searched: {e.message}", field="query_id"
            ) from e
        coll = resolve_collection(collection, cfg.collection)
        info = store.collection_info(coll)
        mapping = cfg.payload_mapping
        # the path of the relevant ids read from the whole benchmark's, as eval reads it: one
        # query's id missing from the collection was a "set --field" error, not a miss
        wanted = sorted({r for x in bench.queries for r in x.relevant})
        relevance = resolve_relevance(store, coll, wanted, mapping)
        pipeline = Pipeline.of_settings(
            cfg, k, relevance.path, fetch=fetch, score_threshold=score_threshold
        )
        setup = Setup(
            store=store,
            collection=coll,
            info=info,
            pipeline=pipeline,
            k=k,
            mapping=mapping,
            tokens=TokenWindow.of(ws.embedder),
            spans=bool(q.references),
        )
        per_query, _ = _explain(setup, _cases(ws, setup, [q]))
        return MissesReport.build(
            k,
            per_query,
            not_measurable=setup.unmeasurable,
            searches=setup.searches,
            seconds=round(time.perf_counter() - started, 3),
        )
