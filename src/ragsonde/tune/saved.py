"""``--save-config``: the chosen configuration as a ragsonde settings file (TOML).

Every command reads it with ``--config tuned.toml`` (or ``RAGSONDE_CONFIG=tuned.toml``). The
``[search]`` table takes effect in ``query``, ``batch``, ``eval`` and ``serve``; the ``[index]``
table (:data:`PENDING_KEYS`) describes how the collection itself must be built: it acts where a
collection is created (``ingest``, ``push``, ``tune --apply``), and a command run against a
collection built otherwise warns, naming each difference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.models.index import DEFAULT_BM25_LANGUAGE
from ragsonde.models.params import IndexParams, SearchParams
from ragsonde.models.query import check_collection
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
    """The settings that reproduce ``config``: ``collection``, a ``search`` table and an
    ``index`` table (:data:`PENDING_KEYS`, how the collection must be built), with the names of
    :class:`~ragsonde.models.params.SearchParams` and
    :class:`~ragsonde.models.params.IndexParams`."""
    spec = report.variant(config.variant).spec
    search: dict[str, Any] = {"mode": config.mode} | config.search.set_fields()
    if "fusion_weights" in search:
        search["fusion_weights"] = list(search["fusion_weights"])
    index: dict[str, Any] = {
        "quantization": spec.quantization.label,
        "hnsw_m": spec.hnsw.m,
        "hnsw_ef_construct": spec.hnsw.ef_construct,
    }
    if spec.bm25 is not None:  # the documents' BM25 vectors must be re-encoded (re-ingest)
        index["bm25_k1"] = spec.bm25.k1
        index["bm25_b"] = spec.bm25.b
        index["bm25_title_weight"] = spec.bm25.title_weight
        if spec.bm25.language != DEFAULT_BM25_LANGUAGE:  # the collection's own language
            index["bm25_language"] = spec.bm25.language
    # validated here, so a file tune writes is one every command reads
    SearchParams.model_validate(search)
    IndexParams.model_validate(index)
    return {"collection": report.collection, "search": search, "index": index}


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
    if collection is not None:  # "" is no collection to point at: refused, not left out
        values["collection"] = check_collection(collection)
    header = (
        f"# ragsonde tune: {chosen}\n"
        f"# nDCG@10 {report.config(chosen).ndcg:.4f} on {report.dataset} "
        f"({report.n_queries} queries), collection {report.collection}.\n"
        f"# Use it with --config {path.name} (query, batch, eval, serve, ...). [index] says how "
        "the collection must be built: a collection built otherwise is warned about, by name.\n"
    )
    from ragsonde.outputs import write_text

    write_text(path, header + tomli_w.dumps(values))
    return values
