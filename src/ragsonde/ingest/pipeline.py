"""The ingestion pipeline: documents → chunks → (changed ones) embedded → upserted, in batches.

Idempotent by construction: a chunk's id is a UUID derived from its document id and position, so
running again is an upsert. Before embedding, the stored points of a batch are read back: a chunk
whose embedded text (``embed_hash``) and embedder are unchanged is not embedded again, and a chunk
whose payload is unchanged too is not written at all. A document that shrank loses its chunks past
its new end (one read empty, all of them); ``prune`` deletes documents that left the source. A
document with a field of a name ingest writes itself is a failure naming it (:mod:`.reserved`).
Killed at any point, a run started again converges to the same collection, since every write is an
idempotent upsert.

:func:`encoded_text` reads back, from a stored payload, the text a chunk was embedded from (its
``title: section`` prefix included where the ``embed_hash`` proves it), and
:func:`bm25_reencoder` re-encodes stored chunks' BM25 vectors with other parameters exactly as
ingest would have: ``tune`` measures and ``tune --apply`` builds with it.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from ragsonde.embedders import Embedder
from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
from ragsonde.errors import CollectionNotFoundError, QueryValidationError
from ragsonde.ingest.chunker import Chunker, ChunkerConfig
from ragsonde.ingest.document import Document, Failure
from ragsonde.ingest.options import IngestOptions
from ragsonde.ingest.reserved import RESERVED_FIELDS, reserved_fields
from ragsonde.models.index import Bm25Params, IndexConfig
from ragsonde.models.payload import DEFAULT_MAPPING, ChunkFields, PayloadMapping
from ragsonde.models.points import PointRecord, SparseVector
from ragsonde.models.store import Store
from ragsonde.models.text import counted
from ragsonde.progress import Progress

__all__ = [
    "INDEXED_FIELDS",
    "PREFIX_PIECES",
    "ChunkRecord",
    "IngestOptions",
    "IngestReport",
    "bm25_reencoder",
    "chunk_document",
    "chunk_id",
    "encoded_text",
    "ingest_documents",
]

#: Payload indexes every ingested collection gets (filters on these are fast).
INDEXED_FIELDS: dict[str, str] = {
    "doc_id": "keyword",
    "url": "keyword",
    "section": "keyword",
    "title": "keyword",
    "chunk_index": "integer",
}
_NAMESPACE = uuid.UUID("6f1c6a52-2a3e-4d0b-9a57-5b0d7c3e8a11")


def chunk_id(doc_id: str, index: int) -> str:
    """The point id of chunk ``index`` of ``doc_id``: stable across runs and machines."""
    return str(uuid.uuid5(_NAMESPACE, f"{doc_id}\x1f{index}"))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _embed_hash(embedder_name: str, sparse: bool | str, embed_text: str) -> str:
    """What ``embed_hash`` holds: the embedder, the BM25 key and the text embedded."""
    return _sha256(f"{embedder_name}\x1f{sparse}\x1f{embed_text}")


#: The most word pieces a chunk's ``title: section`` prefix takes (an eighth of all-MiniLM-L6-v2's
#: 256; four characters a piece for embedders chunked by characters; never over half a chunk).
PREFIX_PIECES = 32


def _title_prefix(title: str | None, section: str | None, cut: int | None = None) -> str:
    """The ``title: section`` line a document with ``embed_title`` puts before each chunk; its
    first ``cut`` characters when ingest bounded it (the payload's ``title_cut``)."""
    label = ": ".join(p for p in (title, section) if p)[:cut]
    return f"{label}\n" if label else ""


def _bounded_prefix(doc: Document, section: str | None, chunker: Chunker) -> tuple[str, int | None]:
    """The prefix of ``section``'s chunks, at most :data:`PREFIX_PIECES` word pieces long, and
    the characters of the label it keeps when it had to be cut (``None``: whole).

    A heading can be a whole paragraph (CommonMark makes a paragraph over a ``---`` line a
    setext heading): unbounded, its prefix would fill the model's window and push the chunk's
    own text out of what is embedded. Cut between words, the prefix keeps the heading's start."""
    if not doc.embed_title:
        return "", None
    label = _title_prefix(doc.title, section).rstrip("\n")
    config = chunker.config
    budget = PREFIX_PIECES if config.unit == "tokens" else 4 * PREFIX_PIECES
    head = chunker.head(label, min(budget, config.size // 2))
    if head == label:
        return _title_prefix(doc.title, section), None
    return (f"{head}\n" if head else ""), len(head)


def _jsonable(value: Any) -> Any:
    """Front matter may hold dates and other YAML types; payloads are JSON."""
    return json.loads(json.dumps(value, default=str))


@dataclass(frozen=True)
class ChunkRecord:
    id: str
    embed_text: str
    payload: dict[str, Any]


@dataclass
class IngestReport:
    """What an ingest did. Each chunk read is counted once: ``embedded`` (embedded and
    written), ``rewritten`` (its embedded text unchanged, its payload not: written again with
    its stored vector, not embedded) or ``skipped`` (stored as it is: nothing written), so
    ``embedded + rewritten + skipped == chunks``."""

    collection: str
    documents: int = 0
    chunks: int = 0
    embedded: int = 0
    rewritten: int = 0
    skipped: int = 0
    deleted: int = 0
    failed: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "documents": self.documents,
            "chunks": self.chunks,
            "embedded": self.embedded,
            "rewritten": self.rewritten,
            "skipped": self.skipped,
            "deleted": self.deleted,
            "failed": [f.to_json() for f in self.failed],
            "seconds": round(self.seconds, 3),
            "warnings": list(self.warnings),
        }


def chunk_document(
    doc: Document, chunker: Chunker, embedder_name: str, sparse: bool | str = False
) -> list[ChunkRecord]:
    """``doc``'s chunks, in order, with their full payloads (``created_at`` aside).

    A chunk of a section with an ``offset`` records its span, ``start`` and ``end`` (``str``
    indices into the parsed document's text), next to ``chunk_index``.

    ``sparse``: whether BM25 vectors are written, or (a string) which non-default BM25 parameters
    encode them: part of ``embed_hash``, so changing them re-encodes the chunks; such a label is
    also kept as the ``bm25`` payload field (:func:`encoded_text` needs it to check the hash)."""
    records: list[ChunkRecord] = []
    # ingest refuses a document with such a field (reserved_fields); here it cannot override
    meta = {k: _jsonable(v) for k, v in doc.metadata.items() if k not in RESERVED_FIELDS}
    for section in doc.sections:
        prefix, cut = _bounded_prefix(doc, section.name, chunker)
        reserved = chunker.length(prefix) if prefix else 0
        for at, piece in chunker.split_at(section.text, reserved):
            index = len(records)
            embed_text = prefix + piece
            # the chunk's span in the parsed document's text (where the section has one)
            span = (
                {"start": section.offset + at, "end": section.offset + at + len(piece)}
                if section.offset is not None
                else {}
            )
            payload = {
                **meta,
                "text": piece,
                "url": doc.url,
                "title": doc.title,
                "section": section.name,
                "chunk_index": index,
                **span,
                "doc_id": doc.doc_id,
                "content_hash": _sha256(piece),
                "embedder": embedder_name,
                "embed_hash": _embed_hash(embedder_name, sparse, embed_text),
            }
            if isinstance(sparse, str):
                payload["bm25"] = sparse
            if cut is not None:  # encoded_text rebuilds the bounded prefix from it
                payload["title_cut"] = cut
            records.append(ChunkRecord(chunk_id(doc.doc_id, index), embed_text, payload))
    return records


def _same(stored: dict[str, Any], new: dict[str, Any]) -> bool:
    return {k: v for k, v in stored.items() if k != "created_at"} == new


class _Writer:
    """Buffers documents' chunks and writes them in batches."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        collection: str,
        report: IngestReport,
        sparse: Bm25Encoder | None = None,
        batch_size: int = 256,
    ) -> None:
        self.batch_size = batch_size
        self.sparse = sparse
        self.store = store
        self.embedder = embedder
        self.collection = collection
        self.report = report
        self.docs: list[tuple[str, list[ChunkRecord]]] = []
        self.size = 0

    def add(self, doc_id: str, records: list[ChunkRecord]) -> None:
        self.docs.append((doc_id, records))
        self.size += len(records)

    def flush(self) -> None:
        if not self.docs:
            return
        docs, self.docs, self.size = self.docs, [], 0
        records = [r for _, rs in docs for r in rs]
        tails = {chunk_id(d, len(rs)): d for d, rs in docs}
        stored = {
            p.id: p.payload
            for p in self.store.retrieve(self.collection, [r.id for r in records] + list(tails))
        }
        _let_go(self.store)  # embedding takes long: hold no lock meanwhile
        to_embed = [
            r for r in records if stored.get(r.id, {}).get("embed_hash") != r.payload["embed_hash"]
        ]
        rewrite = [
            r
            for r in records
            if r.id in stored
            and stored[r.id].get("embed_hash") == r.payload["embed_hash"]
            and not _same(stored[r.id], r.payload)
        ]
        now = datetime.now(UTC).isoformat()
        # batch_size chunks at a time: one document of 40,000 chunks (a 46 MB text) held all its
        # tokens and vectors at once (over 2 GB), and a 256 MB one could not be ingested
        for at in range(0, len(to_embed), self.batch_size):
            part = to_embed[at : at + self.batch_size]
            vectors = self.embedder.embed_documents([r.embed_text for r in part])
            embedded = [
                PointRecord(r.id, v.tolist(), {**r.payload, "created_at": now}, s)
                for r, v, s in zip(part, vectors, self._sparse(part), strict=True)
            ]
            self.store.upsert(self.collection, embedded)
            _let_go(self.store)  # the next part embeds: hold no lock meanwhile
        points: list[PointRecord] = []
        if rewrite:  # payload changed (url, title, …), text did not: keep the vector
            old = {
                p.id: p.vector
                for p in self.store.retrieve(
                    self.collection, [r.id for r in rewrite], with_vectors=True
                )
            }
            kept = [r for r in rewrite if old.get(r.id) is not None]
            points += [
                PointRecord(r.id, old[r.id], {**r.payload, "created_at": now}, s)
                for r, s in zip(kept, self._sparse(kept), strict=True)
            ]
        if points:
            self.store.upsert(self.collection, points)
        self.report.embedded += len(to_embed)
        self.report.rewritten += len(points)
        self.report.skipped += len(records) - len(to_embed) - len(points)
        for tail_id, doc_id in tails.items():
            if tail_id in stored:  # the document shrank
                self._delete_tail(doc_id, len(dict(docs)[doc_id]))
        _let_go(self.store)  # reading the next documents takes long too

    def _sparse(self, records: Sequence[ChunkRecord]) -> list[SparseVector | None]:
        if self.sparse is None:
            return [None] * len(records)
        texts = [r.embed_text for r in records]
        return list(self.sparse.embed_chunks(texts, [r.payload.get("title") for r in records]))

    def _delete_tail(self, doc_id: str, keep: int) -> None:
        ids = [
            p.id
            for batch in self.store.scroll(self.collection, filter={"doc_id": [doc_id]})
            for p in batch
            if int(p.payload.get("chunk_index", -1)) >= keep
        ]
        if ids:
            self.store.delete_points(self.collection, ids)
            self.report.deleted += len(ids)


@runtime_checkable
class _Shared(Protocol):
    """A store whose collections other processes may be waiting for (the embedded store)."""

    def release_unused(self) -> None: ...


def _let_go(store: Store) -> None:
    """Let a server on the same home have the collection while this ingest reads files and
    embeds: the lock is held only while it writes (see ragsonde.store.edge)."""
    if isinstance(store, _Shared):
        store.release_unused()


def ensure_collection(
    store: Store,
    embedder: Embedder,
    collection: str,
    sparse: bool = False,
    index: IndexConfig | None = None,
) -> list[str]:
    """Create ``collection`` for ``embedder`` (with ``index``), or check that the existing one
    fits it; return warnings (an existing collection built with another ``index``)."""
    try:
        info = store.collection_info(collection)
    except CollectionNotFoundError:
        try:
            created = store.create_collection(
                collection,
                embedder.dimension,
                indexed_fields=INDEXED_FIELDS,
                sparse_vector_name=SPARSE_VECTOR_NAME if sparse else None,
                index=index,
            )
        except QueryValidationError:
            if collection not in store.list_collections():
                raise
            # another process (a second ingest) created it meanwhile: check that one instead
            info = store.collection_info(collection)
        else:
            return created.index_warnings(index)  # a backend that keeps plain vectors
    if sparse and info.sparse_vector_name is None:
        raise QueryValidationError(
            f"Collection '{collection}' was built without BM25 vectors, so --sparse cannot add "
            "them. Ingest into a new collection (or delete this one first).",
            field="sparse",
        )
    info.require_dimension(embedder.dimension, embedder.name)
    return info.index_warnings(index)


def ingest_documents(
    documents: Iterable[Document | Failure],
    *,
    store: Store,
    embedder: Embedder,
    collection: str,
    options: IngestOptions | None = None,
    progress: Progress | None = None,
    total: int | None = None,
) -> IngestReport:
    """Write ``documents`` into ``collection`` (created when missing) and build its index."""
    opts = options or IngestOptions()
    started = time.perf_counter()
    report = IngestReport(collection=collection)
    chunker = Chunker(
        ChunkerConfig.for_embedder(embedder, opts.chunk_size, opts.chunk_overlap, opts.splitter)
    )
    report.warnings += ensure_collection(store, embedder, collection, opts.sparse, opts.index)
    _let_go(store)
    bm25 = opts.bm25 or Bm25Params()
    encoder = Bm25Encoder.for_params(bm25) if opts.sparse else None
    # the hash keeps its old form for default parameters, so existing chunks are not re-encoded
    sparse_key: bool | str = opts.sparse and (bm25 == Bm25Params() or bm25.label)
    writer = _Writer(store, embedder, collection, report, encoder, opts.batch_size)
    seen: dict[str, str] = {}  # each document's id -> where it was read from
    if progress is not None:
        progress.start(total)
    for item in documents:
        if not isinstance(item, Failure) and item.doc_id in seen:
            item = _same_id(item, seen[item.doc_id])
        if not isinstance(item, Failure):
            item = reserved_fields(item) or item
        if isinstance(item, Failure):
            report.failed.append(item)
            if item.doc_id is not None and item.doc_id not in seen:
                # emptied: it shrank to no chunk, so it loses them all (they stayed, searchable)
                seen[item.doc_id] = item.source
                writer.add(item.doc_id, [])
            if progress is not None:
                progress.advance(1, 0)
            continue
        report.warnings += [f"{item.doc_id}: {w}" for w in item.warnings]
        records = chunk_document(item, chunker, embedder.name, sparse_key)
        seen[item.doc_id] = _where(item)
        report.documents += 1
        report.chunks += len(records)
        writer.add(item.doc_id, records)
        if writer.size >= opts.batch_size:
            writer.flush()
        if progress is not None:
            progress.advance(1, len(records))
    writer.flush()
    unknown = [f for f in report.failed if f.doc_id is None]  # an empty document's id is known
    if opts.prune and unknown:
        report.warnings.append(
            f"--prune deleted nothing: {counted(len(unknown), 'source')} could not be "
            "read, and which documents they held is not known, so none is taken for gone. "
            "Fix them (the failures above) and run again to prune."
        )
    elif opts.prune:  # documents read empty are in `seen`: their chunks went with the batch
        report.deleted += _prune(store, collection, set(seen))
    store.build_index(collection)
    report.seconds = time.perf_counter() - started
    return report


def _same_id(doc: Document, first: str) -> Failure:
    """A document whose id one read before already has: both would write the same chunks, the
    later silently replacing the earlier (``guide.md`` and ``guide.txt`` are both ``guide``)."""
    return Failure(
        _where(doc),
        f"not ingested: its id {doc.doc_id!r} is also the id of {first}, read before it (ids "
        "come from the file name without its suffix, or the line's id): rename one of them",
    )


def _where(doc: Document) -> str:
    return doc.source or doc.url or doc.doc_id


def _prune(store: Store, collection: str, keep: set[str]) -> int:
    """Delete the chunks of documents no longer in the source (only after a run in which every
    source was read: a failure's documents are unknown, so nothing is taken for gone)."""
    ids = [
        p.id
        for batch in store.scroll(collection, batch_size=1024)
        for p in batch
        if str(p.payload.get("doc_id")) not in keep
    ]
    if ids:
        store.delete_points(collection, ids)
    return len(ids)


def encoded_text(payload: Mapping[str, Any], mapping: PayloadMapping = DEFAULT_MAPPING) -> str:
    """The text a stored chunk was embedded from, read back from its payload.

    Ingest embeds ``title: section`` + newline + text for documents with ``embed_title`` (the
    label's first ``title_cut`` characters where ingest bounded it, see :data:`PREFIX_PIECES`),
    and stores only the text; the prefix is put back when the payload's ``embed_hash`` proves it
    (for the BM25 key of default parameters, or the payload's own ``bm25`` label). Anything
    else, a foreign collection's payload included, is its plain (mapped) text.
    """
    return _encoded_text(payload, mapping.read(payload))


def _encoded_text(payload: Mapping[str, Any], fields: ChunkFields) -> str:
    """:func:`encoded_text`, from the payload's fields as the mapping read them."""
    cut = payload.get("title_cut")
    prefix = _title_prefix(
        fields.title, fields.section, cut if isinstance(cut, int) and cut >= 0 else None
    )
    stored, embedder = payload.get("embed_hash"), payload.get("embedder")
    if prefix and isinstance(stored, str) and isinstance(embedder, str):
        candidate = prefix + fields.text
        keys = dict.fromkeys(("True", str(payload.get("bm25") or "True")))
        if any(_embed_hash(embedder, key, candidate) == stored for key in keys):
            return candidate
    return fields.text


def bm25_reencoder(
    params: Bm25Params, mapping: PayloadMapping = DEFAULT_MAPPING
) -> Callable[[Sequence[Mapping[str, Any]]], list[SparseVector]]:
    """Stored payloads -> BM25 vectors with ``params``, encoded as ingest would encode them:
    :func:`encoded_text`, with the (mapped) title counted ``params.title_weight`` extra times."""
    encoder = Bm25Encoder.for_params(params)

    def encode(payloads: Sequence[Mapping[str, Any]]) -> list[SparseVector]:
        fields = [mapping.read(p) for p in payloads]
        texts = [_encoded_text(p, f) for p, f in zip(payloads, fields, strict=True)]
        return encoder.embed_chunks(texts, [f.title for f in fields])

    return encode
