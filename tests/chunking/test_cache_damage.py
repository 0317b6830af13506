"""A damaged chunking embedding cache is one clear error naming the file and what to do (issue
33: a traceback before), whether SQLite finds the damage or a vector is cut short."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ragsonde.chunking.cache import EmbeddingCache
from ragsonde.errors import QueryValidationError

TEXTS = [f"chunk number {i} of a document" for i in range(300)]


def _vectors(texts: Sequence[str]) -> np.ndarray:
    """Eight numbers per text from its hash: what the cache stores is checked byte for byte."""
    return np.asarray(
        [np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.float32) for t in texts]
    )


def _filled(tmp_path: Path) -> Path:
    path = tmp_path / "embeddings.sqlite"
    cache = EmbeddingCache(path)
    stored = cache.embed("e", TEXTS, _vectors)
    cache.close()
    np.testing.assert_array_equal(stored, _vectors(TEXTS))
    again = EmbeddingCache(path)
    np.testing.assert_array_equal(again.embed("e", TEXTS, _vectors), stored)
    assert (again.hits, again.misses) == (len(TEXTS), 0)
    again.close()
    return path


def _use(path: Path) -> None:
    cache = EmbeddingCache(path)
    try:
        cache.embed("e", TEXTS, _vectors)
    finally:
        cache.close()


def _refused(path: Path) -> None:
    with pytest.raises(QueryValidationError, match="cannot be used") as err:
        _use(path)
    assert str(path) in err.value.message and "delete it" in err.value.message


def test_a_cache_whose_pages_are_overwritten_is_one_clear_error(tmp_path: Path):
    path = _filled(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:4096] + bytes((i * 7 + 3) % 256 for i in range(len(data) - 4096)))
    _refused(path)


def test_a_file_that_is_no_database_is_one_clear_error(tmp_path: Path):
    path = tmp_path / "embeddings.sqlite"
    path.write_bytes(b"not a database, " * 64)
    _refused(path)


def test_a_vector_cut_short_is_one_clear_error(tmp_path: Path):
    path = _filled(tmp_path)
    db = sqlite3.connect(path)
    db.execute("UPDATE vectors SET vector = x'000102' WHERE rowid = 7")
    db.commit()
    db.close()
    _refused(path)


def test_a_cache_another_connection_is_writing_says_run_again_not_delete_it(tmp_path: Path):
    """Busy is not damaged: SQLite's "database is locked" said "delete it" before. A second
    connection holds the write lock, as another sweep's commit does; the wait is cut short."""
    path = _filled(tmp_path)
    opened = EmbeddingCache(path, timeout=0.2)  # opened before the lock: the read waits on it
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(QueryValidationError, match="cannot be used now") as err:
            EmbeddingCache(path, timeout=0.2)
        with pytest.raises(QueryValidationError, match="cannot be used now") as err_read:
            opened.embed("e", TEXTS, _vectors)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    for e in (err.value, err_read.value):
        assert str(path) in e.message and "locked" in e.message
        assert "run again when it is done" in e.message and "delete it" not in e.message
    # the lock gone, the same cache reads every vector it had
    np.testing.assert_array_equal(opened.embed("e", TEXTS, _vectors), _vectors(TEXTS))
    assert opened.hits == len(TEXTS)
    opened.close()
