"""Push a collection from one store to another: the embedded store to a Qdrant server.

>>> from ragsonde.store.edge import EdgeStore                        # doctest: +SKIP
>>> from ragsonde.store.push import open_target, push                 # doctest: +SKIP
>>> target = open_target("http://qdrant:6333", api_key="…")           # doctest: +SKIP
>>> push(EdgeStore(".ragsonde"), "docs", target).to_json()            # doctest: +SKIP

The target collection is created like the source (dimension, distance, dense and sparse vector
names, payload indexes); dense vectors, BM25 sparse vectors and payloads are copied in batches.

**Resumable without a checkpoint file.** Point ids are deterministic (ingestion derives them
from the document and chunk index), and an upsert by id replaces, so sending a point twice can
never duplicate it. To avoid sending it twice at all, each batch's ids are looked up in the
target (payloads only, no vectors) and a point is skipped when the target already holds it with
the same payload. The payload is a sound witness of the vector: ingestion stores ``embed_hash``
(a hash of exactly what was embedded, with which embedder) and a fresh ``created_at`` whenever
it rewrites a point, so a point whose vector changed also has a changed payload. (A point written
by hand with a new vector and an identical payload would be skipped; re-push it to a fresh
target collection.)

Why not a checkpoint file of scroll offsets: the target itself is the only record that cannot
drift. A checkpoint goes stale when the source is re-ingested between runs (an offset then
skips changed points), when the target collection is wiped or written from another machine,
and it is one more file that a crash can leave half-written. The lookup costs one small request
per batch, and nothing when the target collection is empty at the start (a first push).

A push never deletes from the target: points that exist only there are left alone.

**Layouts.** ``layout="langchain"`` or ``"llamaindex"`` writes each payload the way that
framework's ``QdrantVectorStore`` writes it, so the framework reads the pushed collection
natively, metadata intact (see :data:`PAYLOAD_WRITERS`); ``"ragsonde"`` (the default) copies
payloads as they are. ragsonde reads all three with no configuration.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ragsonde.errors import (
    CollectionNotFoundError,
    DimensionMismatchError,
    QueryValidationError,
    mask_secrets,
)
from ragsonde.models.index import IndexConfig
from ragsonde.models.payload import DEFAULT_MAPPING
from ragsonde.models.points import CollectionInfo, PointRecord
from ragsonde.models.query import check_collection, resolve_collection
from ragsonde.models.store import Store
from ragsonde.progress import Progress

__all__ = [
    "PAYLOAD_WRITERS",
    "PayloadWriter",
    "PushReport",
    "check_target_folder",
    "describe_target",
    "local_folder_in",
    "open_target",
    "push",
]


@dataclass(frozen=True)
class PayloadWriter:
    """How a layout stores a ragsonde point: its payload, and where a top-level field goes
    (for the target's payload indexes)."""

    convert: Callable[[PointRecord], dict[str, Any]]
    field_path: Callable[[str], str]


def _as_langchain(point: PointRecord) -> dict[str, Any]:
    """langchain-qdrant's layout: ``page_content``, every other field under ``metadata``."""
    text = DEFAULT_MAPPING.read(point.payload).text
    return {
        "page_content": text,
        "metadata": {k: v for k, v in point.payload.items() if k != "text"},
    }


def _as_llamaindex(point: PointRecord) -> dict[str, Any]:
    """llama-index's layout, written by llama-index's own ``node_to_metadata_dict``: the node
    as JSON in ``_node_content``, its metadata flat, ``doc_id``/``ref_doc_id`` its document."""
    try:
        from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
        from llama_index.core.vector_stores.utils import node_to_metadata_dict
    except ImportError as e:
        raise QueryValidationError(
            "--layout llamaindex writes payloads with llama-index's own code: "
            "pip install 'ragsonde[llamaindex]'.",
            field="layout",
        ) from e
    payload = point.payload
    metadata = {k: v for k, v in payload.items() if k != "text"}
    doc_id = payload.get("doc_id")
    node = TextNode(
        id_=point.id,
        text=DEFAULT_MAPPING.read(payload).text,
        metadata=metadata,
        relationships=(
            {NodeRelationship.SOURCE: RelatedNodeInfo(node_id=str(doc_id))}
            if doc_id is not None
            else {}
        ),
    )
    out: dict[str, Any] = node_to_metadata_dict(node, remove_text=False, flat_metadata=False)
    return out


#: ``--layout`` name -> how that layout stores a point.
PAYLOAD_WRITERS: dict[str, PayloadWriter] = {
    "ragsonde": PayloadWriter(lambda p: p.payload, lambda name: name),
    "langchain": PayloadWriter(_as_langchain, lambda name: f"metadata.{name}"),
    "llamaindex": PayloadWriter(_as_llamaindex, lambda name: name),
}


@dataclass
class PushReport:
    """What a push did. ``points`` = ``copied`` + ``skipped`` = the source's points."""

    collection: str
    target: str
    """Where the points went: the target's URL (credentials removed) or backend name."""
    target_collection: str
    points: int = 0
    copied: int = 0
    skipped: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "target": self.target,
            "target_collection": self.target_collection,
            "points": self.points,
            "copied": self.copied,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
            "warnings": list(self.warnings),
        }


def describe_target(url: str, api_key: str | None = None) -> str:
    """``url`` fit to print: no user or password, no query string, the API key masked."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.hostname:
        netloc = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
        url = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return mask_secrets(url, [api_key])


def open_target(url: str, *, api_key: str | None = None, timeout_s: float = 60.0) -> Store:
    """A qdrant-client store for ``url``: ``http(s)://host:port`` (a server or cluster),
    ``:memory:``, or a folder (``path:/dir`` or ``/dir``) for qdrant-client's on-disk local mode.
    Close it when done."""
    from ragsonde.store.client import QdrantClientStore

    scheme = urlsplit(url).scheme
    if not url.strip() or ("://" in url and scheme not in ("http", "https")):
        raise QueryValidationError(
            f"Cannot push to {describe_target(url, api_key)!r}: give http(s)://host:port for a "
            "Qdrant server, ':memory:', or a folder (path:/dir) for qdrant-client's local mode.",
            field="to",
        )
    folder = _local_folder(url)
    if folder is not None and folder.exists() and not folder.is_dir():
        raise QueryValidationError(  # it was a CONNECTION_ERROR asking if the server runs
            f"Cannot push to {url!r}: {folder} is a file; name a folder (path:/dir) for "
            "qdrant-client's local mode.",
            field="to",
        )
    store: Store = QdrantClientStore(url, api_key=api_key, timeout_s=timeout_s)
    return store


def _local_folder(url: str) -> Path | None:
    """The folder of a qdrant-client local-mode target (``path:/dir`` or ``/dir``), else None."""
    if url.startswith("path:"):
        return Path(url.removeprefix("path:"))
    if url.startswith(("/", "./", "../")):
        return Path(url)
    return None


def local_folder_in(url: str, home: Path) -> Path | None:
    """The folder of ``url`` when it is a qdrant-client local store inside ragsonde's embedded
    ``home`` (where qdrant-client would write ``collection/`` and ``meta.json`` among the
    embedded store's files), else None."""
    folder = _local_folder(url)
    if folder is None:
        return None
    try:
        return folder if folder.resolve().is_relative_to(home.resolve()) else None
    except OSError:
        return None


def check_target_folder(url: str, home: Path) -> None:
    """Refuse a local-mode target inside ragsonde's own embedded home (``home``), the source of
    the push (:func:`local_folder_in`)."""
    if local_folder_in(url, home) is not None:
        raise QueryValidationError(
            f"Cannot push to {url!r}: it is inside the embedded store's folder {home}, the "
            "source of the push; name another folder.",
            field="to",
        )


def push(
    source: Store,
    collection: str,
    target: Store,
    *,
    target_collection: str | None = None,
    target_label: str | None = None,
    batch_size: int = 256,
    progress: Progress | None = None,
    layout: str = "ragsonde",
    index: IndexConfig | None = None,
) -> PushReport:
    """Copy ``collection`` from ``source`` into ``target`` (see the module docstring).

    Raises CollectionNotFoundError when the source collection does not exist,
    DimensionMismatchError when the target collection exists with another vector size,
    QueryValidationError when it exists but cannot hold the source's points, and whatever the
    target raises when it cannot be reached (StoreConnectionError, AuthError). Run it again after
    a failure: what was copied is skipped. ``layout`` names a :data:`PAYLOAD_WRITERS` entry.
    ``index``: the quantization and HNSW of a target collection this push creates (an existing
    one keeps its own; a difference is in ``PushReport.warnings``).
    """
    if batch_size < 1:
        raise QueryValidationError("Batch size must be at least 1.", field="batch_size")
    writer = PAYLOAD_WRITERS.get(layout)
    if writer is None:
        raise QueryValidationError(
            f"Unknown layout {layout!r}: one of {', '.join(PAYLOAD_WRITERS)}.", field="layout"
        )
    started = time.perf_counter()
    name = resolve_collection(target_collection, check_collection(collection))
    report = PushReport(collection, target_label or target.backend, name)
    info = source.collection_info(collection)
    total = source.count(collection)
    batches = source.scroll(collection, batch_size=batch_size, with_vectors=True)
    first = next(batches, None)
    if first is not None:
        _check_sparse(info, first)
    fresh = _ensure_target(info, target, name, writer, index, report.warnings)
    if progress is not None:
        progress.start(total)
    for read in itertools.chain([first] if first is not None else [], batches):
        batch = read if layout == "ragsonde" else [_rewrite(p, writer) for p in read]
        todo = batch if fresh else _changed(target, name, batch)
        if todo:
            target.upsert(name, todo)
        report.copied += len(todo)
        report.skipped += len(batch) - len(todo)
        if progress is not None:
            progress.advance(len(todo), len(batch) - len(todo))
    report.points = report.copied + report.skipped
    target.build_index(name)
    report.seconds = time.perf_counter() - started
    return report


def _check_sparse(info: CollectionInfo, batch: Sequence[PointRecord]) -> None:
    """Refuse rather than push a hybrid collection without its BM25 vectors."""
    if info.sparse_vector_name is None or any(p.sparse is not None for p in batch):
        return
    raise QueryValidationError(
        f"Collection '{info.name}' has BM25 vectors ('{info.sparse_vector_name}'), but the "
        f"{info.backend or 'source'} store returned none of them when read back, so pushing "
        "would lose them and break modes sparse and hybrid on the target. Nothing was pushed.",
        field="sparse",
    )


def _rewrite(point: PointRecord, writer: PayloadWriter) -> PointRecord:
    return replace(point, payload=writer.convert(point))


def _ensure_target(
    info: CollectionInfo,
    target: Store,
    name: str,
    writer: PayloadWriter,
    index: IndexConfig | None,
    warnings: list[str],
) -> bool:
    """Create the target collection like the source (with ``index``), or check the existing one
    fits (adding to ``warnings``). True when the target collection is empty."""
    try:
        existing = target.collection_info(name)
    except CollectionNotFoundError:
        created = target.create_collection(
            name,
            info.dimension,
            vector_name=info.vector_name,
            sparse_vector_name=info.sparse_vector_name,
            indexed_fields={writer.field_path(k): v for k, v in info.indexed_fields.items()},
            distance=info.distance,
            index=index,
        )
        warnings += created.index_warnings(index)  # a backend that keeps plain vectors
        return True
    try:
        existing.require_dimension(info.dimension, f"collection '{info.name}'")
    except DimensionMismatchError as err:
        raise _retold(err, info, existing) from None
    if existing.distance.lower() != info.distance.lower():
        raise QueryValidationError(
            f"Target collection '{name}' uses {existing.distance} distance, but '{info.name}' "
            f"uses {info.distance}. Push to another --target-collection.",
            field="target_collection",
        )
    if info.sparse_vector_name is not None and existing.sparse_vector_name is None:
        raise QueryValidationError(
            f"Target collection '{name}' has no sparse vector for the BM25 vectors of "
            f"'{info.name}'. Push to another --target-collection.",
            field="target_collection",
        )
    warnings += existing.index_warnings(index)
    return target.count(name) == 0


def _retold(
    err: DimensionMismatchError, info: CollectionInfo, existing: CollectionInfo
) -> DimensionMismatchError:
    # The stock message is about embedders and advises re-ingesting; here the fix is elsewhere.
    err.message = (
        f"Target collection '{existing.name}' holds {existing.dimension}-dimensional vectors, "
        f"but '{info.name}' holds {info.dimension}-dimensional ones. Push to another "
        "--target-collection, or delete the target collection first."
    )
    err.args = (err.message,)
    return err


def _changed(target: Store, name: str, batch: Sequence[PointRecord]) -> list[PointRecord]:
    """The points of ``batch`` that the target lacks, or holds with another payload."""
    stored = {_canonical(p.id): p.payload for p in target.retrieve(name, [p.id for p in batch])}
    return [p for p in batch if stored.get(_canonical(p.id)) != p.payload]


def _canonical(point_id: str) -> str:
    """Ids as stores print them back: UUIDs lower-case and hyphenated, integers as digits."""
    if point_id.isdigit():
        return str(int(point_id))
    try:
        return str(uuid.UUID(point_id))
    except ValueError:
        return point_id
