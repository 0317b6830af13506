"""``generate``: a benchmark from a collection's own chunks, offline or with an LLM.

Chunks are sampled across the collection (:mod:`.sampling`), each becomes one query whose source
document is relevant, and the file is written in ragsonde's benchmark format with provenance.
"""

from __future__ import annotations

import time
from pathlib import Path

from ragsonde.config import Settings, load_settings
from ragsonde.labels.benchfile import write_entries
from ragsonde.labels.models import GenerateReport
from ragsonde.labels.offline import OFFLINE_GENERATOR, generate_offline
from ragsonde.labels.sampling import read_chunks, stratified_sample
from ragsonde.store import Store, open_store

__all__ = ["generate"]


def generate(
    out: Path,
    *,
    collection: str | None = None,
    n: int = 200,
    seed: int = 0,
    settings: Settings | None = None,
    store: Store | None = None,
) -> GenerateReport:
    """Write ``n`` offline known-item queries sampled from ``collection`` to ``out``."""
    from ragsonde.errors import QueryValidationError

    if n < 1:
        raise QueryValidationError("--n must be at least 1.", field="n")
    started = time.perf_counter()
    cfg = settings or load_settings()
    coll = collection or cfg.collection
    own = store is None
    st = store if store is not None else open_store(cfg)
    try:
        chunks = read_chunks(st, coll)
    finally:
        if own:
            st.close()
    sample = stratified_sample(chunks, n, seed)
    if not sample:
        raise QueryValidationError(
            f"Collection '{coll}' has no chunk long enough to make a query from.",
            field="collection",
        )
    entries = generate_offline(chunks, sample, seed=seed)
    write_entries(out, entries)
    return GenerateReport(
        collection=coll,
        generator=OFFLINE_GENERATOR,
        seed=seed,
        requested=n,
        written=len(entries),
        chunks_in_collection=len(chunks),
        documents_in_collection=len({c.doc_id for c in chunks}),
        documents_sampled=len({c.doc_id for c in sample}),
        sections_sampled=len({(c.doc_id, c.section) for c in sample}),
        out=str(out),
        seconds=round(time.perf_counter() - started, 3),
    )
