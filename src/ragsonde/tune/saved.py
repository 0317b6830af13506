"""``--save-config``: the chosen configuration as a ragsonde settings file (TOML).

Every command reads it with ``--config tuned.toml`` (or ``RAGSONDE_CONFIG=tuned.toml``). The
search-time keys take effect in ``query``, ``batch``, ``eval`` and ``serve``: ``collection``,
``mode``, ``exact``, ``hnsw_ef``, ``quantization_rescore``, ``quantization_oversampling``,
``fusion``, ``rrf_k``, ``fusion_weights``, ``prefetch_limit`` (the retriever's search) and
``aggregation``, ``aggregation_n`` (eval's chunk -> document scoring). The build-time keys
(:data:`PENDING_KEYS`) describe how the collection itself must be built; they act where a
collection is created (``ingest``, ``push``, ``tune --apply``), not at search time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.store.index_spec import DEFAULT_BM25_LANGUAGE
from ragsonde.tune.report import ConfigResult, TuneReport

__all__ = ["PENDING_KEYS", "save_config", "settings_values"]

#: Build-time keys: how the collection is built (quantization, HNSW graph, BM25 document
#: vectors). Searching cannot change them; they are honoured at collection creation (the
#: collection-building work on ingest/push/--apply), and ignored by search-time Settings.
PENDING_KEYS = (
    "quantization",
    "hnsw_m",
    "hnsw_ef_construct",
    "bm25_k1",
    "bm25_b",
    "bm25_title_weight",
    "bm25_language",
)


def settings_values(config: ConfigResult, report: TuneReport) -> dict[str, Any]:
    """The settings that reproduce ``config``: search-time keys and :data:`PENDING_KEYS`."""
    spec = report.variant(config.variant).spec
    values: dict[str, Any] = {"collection": report.collection}
    if config.knobs.hnsw_ef is not None:
        values["hnsw_ef"] = config.knobs.hnsw_ef
    if config.fusion is not None:
        values["fusion"] = config.fusion.method
    values["mode"] = config.mode
    if config.knobs.exact:
        values["exact"] = True
    values["quantization"] = spec.quantization.label
    if config.knobs.rescore is not None:
        values["quantization_rescore"] = config.knobs.rescore
    if config.knobs.oversampling is not None:
        values["quantization_oversampling"] = config.knobs.oversampling
    values["hnsw_m"] = spec.hnsw.m
    values["hnsw_ef_construct"] = spec.hnsw.ef_construct
    if config.fusion is not None:
        if config.fusion.method == "rrf":
            values["rrf_k"] = config.fusion.k
        if config.fusion.weights is not None:
            values["fusion_weights"] = list(config.fusion.weights)
        values["prefetch_limit"] = config.fusion.prefetch
    if spec.bm25 is not None:  # the documents' BM25 vectors must be re-encoded (re-ingest)
        values["bm25_k1"] = spec.bm25.k1
        values["bm25_b"] = spec.bm25.b
        values["bm25_title_weight"] = spec.bm25.title_weight
        if spec.bm25.language != DEFAULT_BM25_LANGUAGE:  # the collection's own language
            values["bm25_language"] = spec.bm25.language
    values["aggregation"] = config.aggregation.method
    values["aggregation_n"] = config.aggregation.n
    return values


def save_config(
    report: TuneReport, path: Path, *, config_id: str | None = None, collection: str | None = None
) -> dict[str, Any]:
    """Write the recommended (or ``config_id``) configuration to ``path``; return the values.

    ``collection``: the tuned copy built by ``--apply``, which the file then points at.
    """
    import tomli_w

    chosen = config_id or report.recommendation.config
    if chosen is None:
        raise QueryValidationError(
            "No configuration to save: none met the constraints.", field="save_config"
        )
    values = settings_values(report.config(chosen), report)
    if collection:
        values["collection"] = collection
    header = (
        f"# ragsonde tune: {chosen}\n"
        f"# nDCG@10 {report.config(chosen).ndcg:.4f} on {report.dataset} "
        f"({report.n_queries} queries), collection {report.collection}.\n"
        f"# Use it with --config {path.name} (query, batch, eval, serve, ...). Build-time "
        f"keys, for creating a collection: {', '.join(k for k in PENDING_KEYS if k in values)}.\n"
    )
    try:
        path.write_text(header + tomli_w.dumps(values), encoding="utf-8")
    except OSError as e:
        raise QueryValidationError(
            f"Cannot write {path}: {e.strerror or e}", field="save_config"
        ) from e
    return values
