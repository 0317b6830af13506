"""What makes a sweep resumable: embeddings cached on disk, and finished configurations kept.

Under ``<home>/chunking/``:

* ``embeddings.sqlite``: vectors by (embedder, SHA-256 of the text embedded). Written after
  every batch, so a sweep stopped in the middle of a configuration embeds only what it had
  not embedded yet. SQLite's own locking lets two sweeps share it.
* ``runs/<run key>/<configuration>.json``: a configuration's finished result. The run key
  hashes everything a result depends on (embedder, documents, questions, k, token budget),
  so a changed corpus or benchmark never reuses a stale result.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragsonde.sqlite_cache import cache_errors

__all__ = ["EmbeddingCache", "text_hash"]

Vectors = npt.NDArray[np.float32]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors by (embedder name, text hash), in one SQLite file; ``timeout``: how long to wait
    for another process's write to end (SQLite's busy timeout), in seconds."""

    def __init__(self, path: Path, *, timeout: float = 60.0) -> None:
        self.path = path
        with self._mapped():
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=timeout)
            try:
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS vectors (embedder TEXT, hash TEXT, vector BLOB, "
                    "PRIMARY KEY (embedder, hash))"
                )
                self._db.commit()
            except BaseException:
                self._db.close()
                raise
        self.hits = 0
        self.misses = 0

    def _mapped(self) -> AbstractContextManager[None]:
        """SQLite errors and vectors that are not whole (a blob cut short) as one clear error
        naming the file: busy (another process writing it: run again) or damaged (delete it),
        as the LLM answer cache says (:mod:`ragsonde.sqlite_cache`)."""
        return cache_errors(
            "chunking embedding cache",
            self.path,
            "the vectors are computed anew",
            (sqlite3.Error, ValueError, OSError),
        )

    def close(self) -> None:
        self._db.close()

    def _get(self, embedder: str, hashes: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for i in range(0, len(hashes), 500):
            part = list(hashes[i : i + 500])
            marks = ",".join("?" * len(part))  # placeholders only: the values are bound
            sql = f"SELECT hash, vector FROM vectors WHERE embedder = ? AND hash IN ({marks})"  # noqa: S608
            rows = self._db.execute(sql, [embedder, *part])
            out.update(dict(rows.fetchall()))
        return out

    def embed(
        self,
        embedder: str,
        texts: Sequence[str],
        compute: Callable[[Sequence[str]], Vectors],
        batch: int = 256,
        done: Callable[[int], None] | None = None,
    ) -> Vectors:
        """``texts``' vectors: the cached ones read, the others computed by ``compute`` a
        ``batch`` at a time and stored after each (``done(n)`` told of every text)."""
        hashes = [text_hash(t) for t in texts]
        with self._mapped():
            known = self._get(embedder, hashes)
        todo = [i for i, h in enumerate(hashes) if h not in known]
        self.hits += len(texts) - len(todo)
        self.misses += len(todo)
        if done is not None and len(texts) > len(todo):
            done(len(texts) - len(todo))
        for start in range(0, len(todo), batch):
            part = todo[start : start + batch]
            vectors = np.asarray(compute([texts[i] for i in part]), dtype=np.float32)
            rows = [(embedder, hashes[i], v.tobytes()) for i, v in zip(part, vectors, strict=True)]
            with self._mapped():
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
                self._db.commit()
            known.update({hashes[i]: v.tobytes() for i, v in zip(part, vectors, strict=True)})
            if done is not None:
                done(len(part))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._mapped():  # a blob of another length than the rest: the cache is damaged
            return np.stack([np.frombuffer(known[h], dtype=np.float32) for h in hashes])
