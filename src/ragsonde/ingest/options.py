"""How to ingest: one frozen, validated options model, like every workflow's (``EvalOptions``,
``TuneOptions``).

:class:`IngestOptions` holds how documents are chunked, embedded and written, and (``source``)
how a source reads them (:class:`SourceOptions`). Bad values are a VALIDATION_ERROR naming the
field (``chunk_size: …``); a copy with changes is ``options.model_copy(update=…)``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragsonde.models.index import Bm25Params, IndexConfig
from ragsonde.models.validation import options_error

__all__ = ["IngestOptions", "SourceOptions"]


class _Options(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise options_error(e) from e


class SourceOptions(_Options):
    """Options every source may read."""

    base_url: str | None = Field(
        default=None, description="The site's URL, for the pages of a local folder."
    )
    concurrency: int = Field(default=8, ge=1, description="Web pages fetched at once.")
    timeout_s: float = Field(default=15.0, gt=0, description="Seconds per web request.")
    retries: int = Field(default=2, ge=0, description="Retries of a failed web request.")
    max_pages: int | None = Field(default=None, ge=1, description="Stop after this many pages.")


class IngestOptions(_Options):
    """Options of :func:`~ragsonde.ingest.ingest` and
    :func:`~ragsonde.ingest.ingest_documents`."""

    chunk_size: int | None = Field(
        default=None, description="Chunk size (word pieces, or characters): default the model's."
    )
    chunk_overlap: int | None = Field(default=None, description="Overlap between chunks.")
    splitter: str = Field(
        default="recursive",
        description="A key of ragsonde.ingest.splitters.SPLITTERS (what `ragsonde chunking` "
        "recommends).",
    )
    batch_size: int = Field(default=256, ge=1, description="Chunks per embed call and upsert.")
    prune: bool = Field(
        default=False, description="Delete the chunks of documents no longer in the source."
    )
    sparse: bool = Field(
        default=False,
        description="Also write BM25 sparse vectors (for mode=sparse and mode=hybrid).",
    )
    index: IndexConfig | None = Field(
        default=None,
        description="Quantization and HNSW of a collection this ingest creates (an existing "
        "one keeps its own; a difference becomes a warning).",
    )
    bm25: Bm25Params | None = Field(
        default=None,
        description="BM25 k1/b/title_weight of the documents' sparse vectors (None: 1.2, 0.75, 0).",
    )
    source: SourceOptions = Field(
        default_factory=SourceOptions, description="How the source reads the documents."
    )
