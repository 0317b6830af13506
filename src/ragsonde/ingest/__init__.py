"""Ingestion: documents (folder, docs site, BEIR corpus, JSON Lines) → chunks → embeddings → Qdrant.

>>> from ragsonde.ingest import ingest                       # doctest: +SKIP
>>> ingest("docs/", collection="rag_embedding").to_json()    # doctest: +SKIP
"""

from __future__ import annotations

from os import PathLike

from ragsonde.config import Settings
from ragsonde.embedders import Embedder
from ragsonde.ingest.document import Document, Failure, Section
from ragsonde.ingest.pipeline import (
    INDEXED_FIELDS,
    IngestOptions,
    IngestReport,
    chunk_id,
    ingest_documents,
)
from ragsonde.ingest.sources import SOURCES, SourceOptions, detect_format, open_source
from ragsonde.models.query import resolve_collection
from ragsonde.models.store import Store
from ragsonde.models.validation import options_of
from ragsonde.progress import Progress
from ragsonde.workspace import Workspace, using

__all__ = [
    "INDEXED_FIELDS",
    "SOURCES",
    "Document",
    "Failure",
    "IngestOptions",
    "IngestReport",
    "Section",
    "SourceOptions",
    "chunk_id",
    "detect_format",
    "ingest",
    "ingest_documents",
    "open_source",
]


def ingest(
    location: str | PathLike[str],
    *,
    collection: str | None = None,
    fmt: str | None = None,
    workspace: Workspace | None = None,
    settings: Settings | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    options: IngestOptions | None = None,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest ``location`` into ``collection`` (default: the configured one).

    With ``workspace``'s store and embedder (left open), or with a workspace built from
    ``settings``, ``store`` and ``embedder`` for this call (closing what it opened).
    """
    with using(workspace, settings, store=store, embedder=embedder) as ws:
        coll = resolve_collection(collection, ws.settings.collection)
        opts = options_of(options, IngestOptions)
        if opts.index is None or opts.bm25 is None:  # from the settings, unless given here
            opts = opts.model_copy(
                update={
                    "index": opts.index or ws.settings.index_config,
                    "bm25": opts.bm25 or ws.settings.bm25_params,
                }
            )
        source = open_source(location, fmt, opts.source)  # before the store opens
        total = source.estimate() if progress is not None else None
        report = ingest_documents(
            source,
            store=ws.store,
            embedder=ws.embedder,
            collection=coll,
            options=opts,
            progress=progress,
            total=total,
        )
        report.warnings += source.notes()
        return report
