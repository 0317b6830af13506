"""``eval --ingest``: the collection is built from the corpus when it is missing, and a
collection the corpus would have built but that lacks some of its documents is refused.

An ``eval --ingest`` stopped by Ctrl-C leaves the chunks it wrote; run again, it found the
collection present, evaluated the partial one and recorded it (nDCG@10 0.59 against 0.69 for
the whole corpus), with only a note that some relevant ids were missing. It is not resumed
here: the collection may have been built with other chunking settings (``ragsonde ingest
--chunk-size``), and ingesting the corpus again with the defaults would rewrite it.
"""

from __future__ import annotations

from ragsonde.errors import CollectionNotFoundError, QueryValidationError
from ragsonde.evaluate.datasets import Benchmark
from ragsonde.evaluate.report import IngestSummary
from ragsonde.ingest.document import Failure
from ragsonde.models.text import counted
from ragsonde.workspace import Workspace

__all__ = ["ensure_collection"]


def ensure_collection(
    bench: Benchmark, ws: Workspace, collection: str, sparse: bool, corpus: str | None
) -> IngestSummary | None:
    """Ingest ``corpus`` (else the benchmark's BEIR corpus) when ``collection`` is missing;
    when it exists, refuse it if it lacks documents of a local corpus (a collection of another
    pipeline's layout, which records no ``doc_id`` of ragsonde's, is not checked)."""
    from ragsonde.ingest import IngestOptions, ingest_documents, open_source
    from ragsonde.ingest.sources import detect_format

    location = corpus if corpus is not None else bench.corpus and str(bench.corpus)
    fmt = None if corpus is not None else "beir"
    try:
        ws.store.collection_info(collection)
    except CollectionNotFoundError:
        if not location:
            raise QueryValidationError(
                f"ingest: benchmark '{bench.name}' has no corpus to ingest (a BEIR folder has "
                "corpus.jsonl). Name the documents in corpus, or ingest them with "
                "`ragsonde ingest` first.",
                field="ingest",
            ) from None
        report = ingest_documents(
            open_source(location, fmt),
            store=ws.store,
            embedder=ws.embedder,
            collection=collection,
            options=IngestOptions(sparse=sparse),
        )
        return IngestSummary.model_validate(report.to_json())
    if location and (fmt or detect_format(location)) != "web":  # a site is not fetched to check
        docs = open_source(location, fmt)
        command = f"ragsonde ingest {location} -c {collection}" + (" --sparse" if sparse else "")
        _require_whole(ws, collection, location, command, {
            d.doc_id for d in docs if not isinstance(d, Failure)
        })  # fmt: skip
    return None


def _require_whole(
    ws: Workspace, collection: str, location: str, command: str, wanted: set[str]
) -> None:
    stored = {
        str(p.payload["doc_id"])
        for batch in ws.store.scroll(collection, batch_size=1024)
        for p in batch
        if "doc_id" in p.payload
    }
    missing = wanted - stored
    if stored and missing:  # none: another pipeline's layout, which --ingest never builds
        raise QueryValidationError(
            f"ingest: collection '{collection}' exists but lacks "
            f"{counted(len(missing), 'document')} of the {len(wanted):,} in {location} (an "
            f"ingest stopped mid-way?), so it was not evaluated. Complete it with `{command}` "
            "(only what is missing is embedded; add the chunking options it was built with), "
            "or evaluate it as it is without --ingest.",
            field="ingest",
        )
