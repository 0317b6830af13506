"""An open Qdrant Edge shard and what describes it on disk: the collection folder layout, its
name rule, its vectors and index settings (read from ``edge_config.json``), and the lock file.
:mod:`ragsonde.store.edge` (the store) opens and shares these."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsonde.errors import CollectionUnreadableError, QueryValidationError, StoreConnectionError
from ragsonde.models.index import Footprint, IndexConfig
from ragsonde.models.scores import Distance
from ragsonde.models.store import COLLECTION_NAME_PATTERN
from ragsonde.store._convert import DenseVector, VectorLayout
from ragsonde.store._errors import Where, edge_load_table, edge_table, translating
from ragsonde.store.lock import ShardLock, acquire_lock

__all__ = [
    "Layout",
    "Shard",
    "acquire_shard_lock",
    "config_indexes",
    "config_layout",
    "footprint",
    "load_shard",
    "payload_schema",
    "read_config",
    "translate",
    "validate_collection_name",
]

_NAME_RE = re.compile(COLLECTION_NAME_PATTERN)


def validate_collection_name(name: str) -> str:
    """Collection names become folder names: letters, digits, ``_ . -``, at most 255."""
    if not _NAME_RE.match(name) or ".." in name:
        raise QueryValidationError(
            f"Invalid collection name {name!r}: use letters, digits, '_', '.', '-' "
            "(at most 255 characters, starting with a letter or digit).",
            field="collection",
        )
    return name


def translate(collection: str, path: Path) -> AbstractContextManager[None]:
    """Translate qdrant-edge and OS errors raised in the block (see ``_errors``)."""
    return translating(edge_table(), Where(str(path), collection))


def translate_load(collection: str, path: Path) -> AbstractContextManager[None]:
    """As :func:`translate`, for loading a shard whose lock is held: an engine failure there is
    :class:`CollectionUnreadableError`."""
    return translating(edge_load_table(), Where(str(path), collection))


def config_layout(name: str, config: Mapping[str, Any]) -> VectorLayout:
    """A collection's vectors, from its ``edge_config.json``."""
    dense = tuple(
        DenseVector(
            name=vname or None,
            size=int(params["size"]),
            distance=Distance(params.get("distance", "Cosine")),
            multivector=params.get("multivector_config") is not None,
        )
        for vname, params in (config.get("vectors") or {}).items()
    )
    return VectorLayout(name, dense, tuple(config.get("sparse_vectors") or {}))


def config_indexes(config: Mapping[str, Any]) -> dict[str | None, IndexConfig]:
    """Each dense vector's quantization and HNSW graph, from its ``edge_config.json``."""
    return {
        vname or None: IndexConfig.from_wire(p.get("quantization_config"), p.get("hnsw_config"))
        for vname, p in (config.get("vectors") or {}).items()
    }


def read_config(name: str, path: Path) -> tuple[VectorLayout, dict[str | None, IndexConfig]]:
    """The collection's vectors and index settings from its ``edge_config.json``; a file that
    is not that (damaged, truncated, not UTF-8, another shape) is one error naming it, where it
    was a JSONDecodeError traceback in every command and a 500 from the server."""
    config_file = path / "edge_config.json"
    try:
        with translate(name, path):
            config = json.loads(config_file.read_text(encoding="utf-8"))
        return config_layout(name, config), config_indexes(config)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        why = f"{type(e).__name__}: {e}"[:200]
        raise CollectionUnreadableError(
            f"Collection '{name}' cannot be opened: its {config_file} is damaged ({why}). "
            f"Restore it, or delete the collection (ragsonde collections delete {name}) and "
            "ingest it again.",
            collection=name,
        ) from None


class Shard:
    """One open Edge shard plus its lock file; shared within the process."""

    def __init__(
        self,
        name: str,
        path: Path,
        shard: Any,
        lock: ShardLock,
        layout: VectorLayout,
        indexes: Mapping[str | None, IndexConfig],
    ) -> None:
        self.name = name
        self.path = path
        self.shard = shard
        self.lock = lock
        self.layout = layout
        self.indexes = indexes
        self.refs = 0
        self.mutex = threading.Lock()
        self.closed = False  # set (under mutex) when released while a store still names it
        self.asked_for = False  # another process waits for it (a want file beside the lock)
        self.last_used = time.monotonic()

    def close(self) -> None:
        try:
            with translate(self.name, self.path):
                self.shard.flush()
                self.shard.close()
        finally:
            self.lock.release()


def acquire_shard_lock(name: str, path: Path, wait_s: float = 0.0) -> ShardLock:
    with translate(name, path):
        return acquire_lock(name, path, wait_s)


@dataclass(frozen=True)
class Layout:
    home: Path

    def __post_init__(self) -> None:
        # a home that is a file, a FIFO or a device held no collection: "does not exist";
        # a store that cannot be opened, as an unwritable home is (CONNECTION_ERROR)
        if self.home.exists() and not self.home.is_dir():
            raise StoreConnectionError(
                f"The home {self.home} is not a folder: the embedded store keeps its "
                "collections in a folder. Point --home (RAGSONDE_HOME) at one."
            )

    @property
    def root(self) -> Path:
        return self.home / "collections"

    def path(self, name: str) -> Path:
        return self.root / validate_collection_name(name)

    def exists(self, name: str) -> bool:
        return (self.path(name) / "edge_config.json").is_file()


def footprint(path: Path, vector_name: str | None) -> Footprint:
    """What the shard in ``path`` holds on disk: every file but the write-ahead log (allocated
    blocks), the dense vector's quantized codes and its HNSW graph (their sizes)."""
    suffix = f"-{vector_name}" if vector_name else ""
    files = [p for p in path.rglob("*") if p.is_file()]
    return Footprint(
        disk_bytes=sum(int(p.stat().st_blocks) * 512 for p in files if "wal" not in p.parts),
        quantized_bytes=sum(
            p.stat().st_size
            for p in files
            if p.name.startswith("quantized.") and p.parent.name == f"vector_storage{suffix}"
        ),
        index_bytes=sum(
            p.stat().st_size for p in files if p.parent.name == f"vector_index{suffix}"
        ),
    )


def load_shard(name: str, path: Path, lock_wait_s: float = 0.0) -> Shard:
    """Open collection ``name`` at ``path``: its lock (waiting up to ``lock_wait_s``), its
    config, then the Edge shard."""
    import qdrant_edge as qe

    lock = acquire_shard_lock(name, path, lock_wait_s)
    try:
        layout, indexes = read_config(name, path)  # before Edge reads it
        with translate_load(name, path):
            shard = qe.EdgeShard.load(str(path))
    except BaseException:
        lock.release()
        raise
    return Shard(name, path, shard, lock, layout, indexes)


def payload_schema(indexed_fields: Mapping[str, str]) -> dict[str, Any]:
    """The engine's payload index type for each field to index, or VALIDATION_ERROR naming an
    unknown type."""
    import qdrant_edge as qe

    types = {
        "keyword": qe.PayloadSchemaType.Keyword,
        "integer": qe.PayloadSchemaType.Integer,
        "float": qe.PayloadSchemaType.Float,
        "bool": qe.PayloadSchemaType.Bool,
        "text": qe.PayloadSchemaType.Text,
        "datetime": qe.PayloadSchemaType.Datetime,
    }
    for field, kind in indexed_fields.items():
        if kind not in types:
            raise QueryValidationError(
                f"Unknown index type {kind!r} for field '{field}': use one of "
                f"{', '.join(sorted(types))}.",
                field="indexed_fields",
            )
    return {field: types[kind] for field, kind in indexed_fields.items()}
