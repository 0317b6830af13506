"""The sweep: read the collection once, embed the queries once, build each variant, search it
with every knob setting, score, cross-validate, recommend.

The user's collection is only read (:meth:`Store.scroll`); every variant is a temporary copy
(:mod:`ragsonde.tune.variants`), deleted as soon as it is measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ragsonde.config import Settings
from ragsonde.embedders import Embedder
from ragsonde.embedders.sparse import query_encoder, query_language, recorded_language
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.datasets import Benchmark, load_benchmark
from ragsonde.evaluate.relevance import resolve_relevance
from ragsonde.evaluate.resolve import POINT_ID
from ragsonde.ingest.pipeline import bm25_reencoder
from ragsonde.models.index import DEFAULT_BM25_LANGUAGE
from ragsonde.models.params import SearchParams
from ragsonde.models.payload import PayloadMapping
from ragsonde.models.points import CollectionInfo, SearchSpec, SparseVector
from ragsonde.models.store import Store
from ragsonde.models.validation import options_of
from ragsonde.progress import Progress
from ragsonde.tune.current import versus_current
from ragsonde.tune.grid import Grid
from ragsonde.tune.measures import Hits, aggregate, latency, overlap_recall, score_run
from ragsonde.tune.options import TuneOptions
from ragsonde.tune.report import (
    NOT_MEASURABLE,
    ConfigResult,
    CrossValidation,
    TuneReport,
    VariantResult,
)
from ragsonde.tune.select import cross_validate, pareto_front, recommend
from ragsonde.tune.variants import (
    DEFAULT_FULL_SCAN_KB,
    Bm25Params,
    IndexVariant,
    SourcePoints,
    VariantBuilder,
    VariantSpec,
    measurable,
)
from ragsonde.workspace import Workspace, using

__all__ = [
    "TuneOptions",
    "TuneProgress",
    "collection_warnings",
    "require_indexed",
    "tune",
]

_MiB = 1024 * 1024
_RECALL_K = 10


#: Told about the sweep: ``start(total)`` once (builds + measured configurations), then
#: ``advance(1)`` per step. The one progress protocol of :mod:`ragsonde.progress`.
TuneProgress = Progress


def require_indexed(variant: IndexVariant) -> None:
    """Refuse to measure HNSW on a variant whose graph was not built."""
    if not variant.indexed:
        raise QueryValidationError(
            f"Variant {variant.spec.label} has {variant.stats.indexed_vectors} of "
            f"{variant.stats.points} vectors indexed: its searches would scan every point and "
            "its HNSW figures would be meaningless. Build the index first (ragsonde builds it "
            "at the end of `ingest`; on a Qdrant server, lower the collection's "
            "optimizers_config.indexing_threshold or wait until indexed_vectors_count reaches "
            "points_count).",
            field="collection",
        )


def collection_warnings(info: CollectionInfo, source: SourcePoints, force_index: bool) -> list[str]:
    """Guards on the user's collection: not indexed; too small for HNSW to matter."""
    out = []
    dense = info.dense_indexed
    if dense < info.points_count and info.backend != "qdrant-local":
        out.append(
            f"Collection '{info.name}' is not indexed ({dense} of {info.points_count} dense "
            "vectors in an HNSW graph): its own searches scan every point, "
            "so its speed is not what an indexed collection gives. The variants below are "
            "indexed. To index it: `ragsonde ingest` builds the graph at the end once the "
            "vectors pass Qdrant's indexing threshold (optimizers_config.indexing_threshold, "
            "in KB); on a Qdrant server, lower that threshold for the collection."
        )
    kb = source.vectors.nbytes / 1024
    if kb < DEFAULT_FULL_SCAN_KB:
        out.append(
            f"Collection '{info.name}' is small ({len(source.ids)} points, {kb:.0f} KB of "
            f"vectors, below Qdrant's full-scan threshold of {DEFAULT_FULL_SCAN_KB} KB): in "
            "production Qdrant scans every point and the HNSW settings do not matter. "
            + (
                "The variants force the graph on, to show what it would cost at scale."
                if force_index
                else "The variants keep Qdrant's defaults."
            )
        )
    out.extend(source.unread.warnings("point"))
    return out


@dataclass
class _Context:
    bench: Benchmark
    source: SourcePoints
    queries: np.ndarray
    sparse: list[SparseVector] | None
    grid: Grid
    exact: Sequence[Hits] = field(default_factory=list)

    @property
    def qids(self) -> list[str]:
        return [q.query_id for q in self.bench.queries]


#: Every search of the sweep searches the full-precision vectors exactly: the reference.
_EXACT = SearchParams(exact=True)


def _config_id(spec: VariantSpec, search: SearchParams, agg: str) -> str:
    fusion = search.fusion_label
    parts = [("hybrid " + fusion) if fusion else "dense", spec.label]
    parts.append("exact" if search.exact else f"ef{search.hnsw_ef}")
    if search.quantization_rescore is True:
        parts.append(f"rescore-x{search.quantization_oversampling or 1:g}")
    elif search.quantization_rescore is False:
        parts.append("no-rescore")
    parts.append(agg)
    return " ".join(parts)


def _spec(search: SearchParams, limit: int, *, full_precision: bool = False) -> SearchSpec:
    """The store search of one grid point (each query's vector is given per request);
    ``full_precision`` searches the original vectors, not the quantized codes."""
    spec = SearchSpec.of(search, vector=None, limit=limit)
    return replace(spec, quantization_ignore=True) if full_precision else spec


def _results(
    ctx: _Context,
    variant: IndexVariant,
    search: SearchParams,
    hits: Sequence[Hits],
    times: Sequence[float],
    *,
    recall: float | None = None,
    hnsw_loss: float | None = None,
    quant_loss: float | str | None = None,
) -> list[ConfigResult]:
    """One result per aggregation of the same hits (aggregation costs no new search)."""
    p50, p95 = latency(times)
    stats = variant.stats
    out = []
    for agg in ctx.grid.aggregation:
        run = {
            qid: aggregate(h, variant.doc_of, agg) for qid, h in zip(ctx.qids, hits, strict=True)
        }
        means, per_query = score_run(ctx.bench.qrels, run)
        out.append(
            ConfigResult(
                id=_config_id(variant.spec, search, agg.label),
                variant=variant.spec.label,
                search=search.overlay({"aggregation": agg.method, "aggregation_n": agg.n}),
                metrics=means,
                recall_vs_exact=recall,
                hnsw_loss=hnsw_loss,
                quantization_loss=quant_loss,
                latency_p50_ms=p50,
                latency_p95_ms=p95,
                vector_memory_mb=stats.vector_ram_bytes / _MiB,
                memory_ratio=stats.memory_ratio,
                disk_mb=stats.disk_bytes / _MiB,
                build_s=stats.build_s,
                per_query_ndcg=per_query,
            )
        )
    return out


def _sweep_dense(
    ctx: _Context, variant: IndexVariant, progress: TuneProgress | None
) -> list[ConfigResult]:
    limit = ctx.grid.limit
    quantized = variant.spec.quantization.kind != "none"
    unquantized: dict[int | None, Sequence[Hits]] = {}
    out: list[ConfigResult] = []
    for search in ctx.grid.dense_searches(variant.spec):
        hits, times = variant.search(ctx.queries, _spec(search, limit))
        if search.hnsw_ef not in unquantized:
            unquantized[search.hnsw_ef] = (
                variant.search(
                    ctx.queries,
                    _spec(SearchParams(hnsw_ef=search.hnsw_ef), limit, full_precision=True),
                )[0]
                if quantized
                else hits
            )
        hnsw_hits = unquantized[search.hnsw_ef]
        out += _results(
            ctx,
            variant,
            search,
            hits,
            times,
            recall=overlap_recall(hits, ctx.exact, _RECALL_K),
            hnsw_loss=1.0 - overlap_recall(hnsw_hits, ctx.exact, _RECALL_K),
            quant_loss=(1.0 - overlap_recall(hits, hnsw_hits, _RECALL_K)) if quantized else 0.0,
        )
        if progress:
            progress.advance(1)
    return out


def _sweep_hybrid(
    ctx: _Context, variant: IndexVariant, progress: TuneProgress | None
) -> list[ConfigResult]:
    if ctx.sparse is None:
        return []
    limit, ef = ctx.grid.limit, max(ctx.grid.hnsw_ef)
    out: list[ConfigResult] = []
    for fusion in ctx.grid.fusion:
        search = fusion.overlay({"hnsw_ef": ef})
        hits, times = variant.hybrid(ctx.queries, ctx.sparse, _spec(search, limit))
        exact = fusion.overlay(_EXACT)
        reference, _ = variant.hybrid(
            ctx.queries, ctx.sparse, _spec(exact, limit, full_precision=True)
        )
        out += _results(
            ctx,
            variant,
            search,
            hits,
            times,
            recall=overlap_recall(hits, reference, _RECALL_K),
        )
        if progress:
            progress.advance(1)
    return out


def _measure_variant(
    ctx: _Context,
    builder: VariantBuilder,
    spec: VariantSpec,
    *,
    reference: bool,
    hybrid: bool,
    progress: TuneProgress | None,
    dense: bool = True,
    sparse: Sequence[SparseVector] | None = None,
) -> tuple[VariantResult, list[ConfigResult], list[str]]:
    warnings: list[str] = []
    with builder.build(spec, sparse=sparse) as variant:
        require_indexed(variant)
        verified: bool | None = None
        if spec.quantization.kind != "none":
            verified = variant.quantization_in_effect(ctx.queries[:20])
        result = VariantResult(
            label=spec.label,
            spec=spec,
            stats=variant.stats,
            indexed=variant.indexed,
            quantization_verified=verified,
        )
        if progress:
            progress.advance(1)
        if verified is False:
            warnings.append(
                f"Quantization {spec.quantization.label} is not in effect on variant "
                f"{spec.label} (no codes on disk, or scores equal to float32): not measured."
            )
            return result, [], warnings
        configs: list[ConfigResult] = []
        if reference:
            exact = _spec(_EXACT, ctx.grid.limit, full_precision=True)
            ctx.exact, times = variant.search(ctx.queries, exact)
            configs += _results(ctx, variant, _EXACT, ctx.exact, times, recall=1.0, hnsw_loss=0.0)
        if dense:
            configs += _sweep_dense(ctx, variant, progress)
        if hybrid:
            configs += _sweep_hybrid(ctx, variant, progress)
    return result, configs, warnings


def _bm25_language(source: SourcePoints, settings: Settings) -> str:
    """The language the collection's BM25 vectors were encoded in (what its chunks record, else
    the ``bm25_language`` setting): the queries and every re-encoded variant use it."""
    payloads = source.payloads or []
    recorded = recorded_language(payloads[0]) if payloads else None
    return query_language(source.collection, recorded, settings.index.bm25_language)


def _bm25_specs(
    grid: Grid, source: SourcePoints, mapping: PayloadMapping, language: str
) -> tuple[list[VariantSpec], list[str]]:
    """The BM25 variants to build, in the collection's ``language``, and a warning when the
    points have no title to weigh (a title-weight variant would then only repeat its weight-0
    twin)."""
    specs = [
        s.model_copy(update={"bm25": s.bm25.model_copy(update={"language": language})})
        if s.bm25 is not None and s.bm25.language != language
        else s
        for s in grid.bm25_variants()
    ]
    weighted = [s for s in specs if s.bm25 is not None and s.bm25.title_weight]
    if not weighted or any(mapping.read(p).title for p in source.payloads or ()):
        return specs, []
    note = (
        f"Collection '{source.collection}' has no `title` payload: BM25 title weight not "
        f"measurable (skipped {', '.join(s.label for s in weighted)})."
    )
    return [s for s in specs if s not in weighted], [note]


def _not_measurable(spec: VariantSpec, backend: str) -> VariantResult:
    from ragsonde.tune.variants import VariantStats

    return VariantResult(
        label=spec.label,
        spec=spec,
        stats=VariantStats(
            points=0,
            indexed_vectors=0,
            build_s=0.0,
            disk_bytes=0,
            float32_bytes=0,
            vector_ram_bytes=0,
            quantized_bytes=0,
            index_bytes=0,
        ),
        indexed=False,
        measurable=False,
        note=f"{NOT_MEASURABLE} ({backend})",
    )


def _doc_field(
    store: Store, collection: str, bench: Benchmark, mapping: PayloadMapping
) -> tuple[str | None, list[str]]:
    """The payload path of a hit's document (``None``: the point id) found as ``eval`` finds
    it (LangChain keeps it at ``metadata.doc_id``), and the note when it was a guess; a
    RelevanceError when no field holds the benchmark's ids."""
    relevant = sorted({r for q in bench.queries for r in q.relevant})
    if not relevant:
        return "doc_id", []
    found = resolve_relevance(store, collection, relevant, mapping)
    path = None if found.path == POINT_ID else found.path
    return path, [] if found.configured else [found.describe()]


def tune(
    dataset: str | Path,
    *,
    settings: Settings | None = None,
    workspace: Workspace | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    options: TuneOptions | None = None,
    progress: TuneProgress | None = None,
) -> TuneReport:
    """Sweep ``options.grid`` over ``settings.collection`` against ``dataset``'s labels (with
    ``workspace``'s store and embedder, else those of one opened for the call)."""
    with using(workspace, settings, store=store, embedder=embedder) as ws:
        return _tune(dataset, ws, options_of(options, TuneOptions), progress)


def _tune(
    dataset: str | Path, ws: Workspace, options: TuneOptions, progress: TuneProgress | None
) -> TuneReport:
    import time

    t0 = time.perf_counter()
    grid = options.grid
    settings = ws.settings
    bench = load_benchmark(dataset, split=options.split)
    collection = settings.collection
    info = ws.store.collection_info(collection)
    emb = ws.embedder
    info.require_dimension(emb.dimension, emb.name)
    doc_field, field_notes = _doc_field(ws.store, collection, bench, settings.payload_mapping)
    source = SourcePoints.read(ws.store, collection, doc_field=doc_field)
    texts = [q.text for q in bench.queries]
    queries = np.asarray(emb.embed_queries(texts), dtype=np.float32)
    hybrid = "hybrid" in options.modes and source.sparse_name is not None and bool(grid.fusion)
    language = _bm25_language(source, settings) if hybrid else DEFAULT_BM25_LANGUAGE
    sparse = query_encoder(language).embed_queries(texts) if hybrid else None
    ctx = _Context(bench, source, queries, sparse, grid)
    warnings = field_notes + collection_warnings(info, source, options.force_index)
    backend = source.backend
    specs = grid.variants()
    quant_ok = measurable(backend, "quantization")
    hnsw_ok = measurable(backend, "hnsw")
    builder = VariantBuilder(source, options.workdir, force_index=options.force_index)
    mapping = settings.payload_mapping
    bm25_specs: list[VariantSpec] = []
    if hybrid and source.payloads is not None:
        bm25_specs, notes = _bm25_specs(grid, source, mapping, language)
        warnings += notes
    if progress:
        progress.start(
            len(specs)
            + sum(len(grid.dense_searches(s)) for s in specs)
            + ((1 + len(bm25_specs)) * len(grid.fusion) + len(bm25_specs) if hybrid else 0)
        )
    variants: list[VariantResult] = []
    configs: list[ConfigResult] = []
    for i, spec in enumerate(specs):
        skip = (spec.quantization.kind != "none" and not quant_ok) or (
            i > 0 and spec.hnsw != specs[0].hnsw and not hnsw_ok
        )
        if skip:
            variants.append(_not_measurable(spec, backend))
            if progress:
                for _ in range(1 + len(grid.dense_searches(spec))):
                    progress.advance(1)
            continue
        result, found, notes = _measure_variant(
            ctx, builder, spec, reference=i == 0, hybrid=hybrid and i == 0, progress=progress
        )
        variants.append(result)
        configs += found
        warnings += notes
    for spec in bm25_specs:
        # the documents' vectors re-encoded from what ingest encoded (see bm25_reencoder)
        encode = bm25_reencoder(spec.bm25 or Bm25Params(), mapping)
        result, found, notes = _measure_variant(
            ctx,
            builder,
            spec,
            reference=False,
            hybrid=True,
            progress=progress,
            dense=False,
            sparse=encode(source.payloads or []),
        )
        variants.append(result)
        configs += found
        warnings += notes
    if not quant_ok:
        warnings.append(
            f"The {backend} backend has no quantization: quantized variants are {NOT_MEASURABLE}."
        )
    admitted = [c for c in configs if options.constraints.admits(c)]
    qids = ctx.qids
    cv: dict[str, CrossValidation] = {}
    for scope, pool in (
        ("all", admitted),
        ("dense", [c for c in admitted if c.mode == "dense"]),
        ("hybrid", [c for c in admitted if c.mode == "hybrid"]),
    ):
        result_cv = cross_validate(pool, qids, options.folds, scope)
        if result_cv is not None:
            cv[scope] = result_cv
    versus = None
    if options.versus_current and admitted:
        versus = versus_current(dataset, ws, options, admitted, qids)
    rec = recommend(configs, options.constraints, cv.get("all"))
    if versus is not None:
        rec = rec.model_copy(update={"reason": f"{rec.reason} {versus.reason}"})
    return TuneReport(
        dataset=bench.name,
        collection=collection,
        backend=backend,
        embedder=emb.name,
        n_queries=len(qids),
        n_points=len(source.ids),
        dimension=source.dimension,
        grid=grid,
        variants=variants,
        configurations=configs,
        pareto=pareto_front(configs),
        cross_validation=cv,
        recommendation=rec,
        versus_current=versus,
        warnings=warnings,
        seconds=time.perf_counter() - t0,
    )
