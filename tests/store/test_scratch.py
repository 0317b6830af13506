"""Tune's scratch shards: built, searched and deleted by the store, and their engine failures
translated by type at the store boundary (never every ``Exception``: a bug propagates)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragsonde.errors import ErrorCode, StoreConnectionError
from ragsonde.models.index import IndexConfig, Quantization
from ragsonde.models.points import SearchSpec
from ragsonde.store._errors import Where, scratch_table, translate, translating
from ragsonde.store.scratch import ScratchShard
from tests.tune.support import clustered

WHERE = Where("/tmp/ragsonde-variant-x", "int8/m16-efc100")


def _build(path: Path, vectors: np.ndarray, dimension: int) -> ScratchShard:
    ids = [str(i) for i in range(len(vectors))]
    return ScratchShard.build(
        path,
        label="int8/m16-efc100",
        index=IndexConfig(quantization=Quantization(kind="scalar")),
        vector_name="",
        dimension=dimension,
        ids=ids,
        vectors=vectors,
    )


def test_the_table_maps_the_engine_class_exactly_and_the_os():
    engine = translate(scratch_table(), Exception("Vector dimension error"), WHERE)
    assert isinstance(engine, StoreConnectionError)
    assert "temporary index variant int8/m16-efc100" in engine.message
    assert "Vector dimension error" in engine.message
    disk = translate(scratch_table(), OSError(28, "No space left on device"), WHERE)
    assert isinstance(disk, StoreConnectionError) and "No space left" in disk.message

    class Subclass(Exception):
        pass

    for bug in (TypeError("x"), AttributeError("x"), KeyError("x"), Subclass("ours")):
        assert translate(scratch_table(), bug, WHERE) is None
        with pytest.raises(type(bug)), translating(scratch_table(), WHERE):
            raise bug


def test_a_real_engine_failure_is_a_connection_error_and_leaves_no_folder(tmp_path: Path):
    target = tmp_path / "variant"
    with pytest.raises(StoreConnectionError) as caught:
        _build(target, clustered(n=20, dim=8), dimension=16)  # rows of 8 into a 16-d shard
    assert caught.value.code is ErrorCode.CONNECTION_ERROR
    assert type(caught.value.__cause__) is Exception  # the engine's own class, translated
    assert "int8/m16-efc100" in caught.value.message and str(target) in caught.value.message
    assert not target.exists()


def test_an_unwritable_folder_is_a_connection_error(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreConnectionError, match="a-file"):
        _build(blocker / "variant", clustered(n=20, dim=8), dimension=8)


def test_build_search_measure_and_close(tmp_path: Path):
    x = clustered(n=300, dim=8)
    shard = _build(tmp_path / "variant", x, dimension=8)
    try:
        assert shard.indexed_vectors == 300  # force_index: even 300 points get their graph
        files = shard.footprint()
        assert files.quantized_bytes > 0 and files.index_bytes > 0
        assert files.disk_bytes >= files.quantized_bytes
        hits, times = shard.search(x[:5], SearchSpec(vector=None, limit=3, hnsw_ef=64))
        assert len(times) == 5 and all(t > 0 for t in times)
        assert [h[0][0] for h in hits] == ["0", "1", "2", "3", "4"]  # each finds itself first
    finally:
        shard.close()
    assert not shard.path.exists()
    shard.close()  # twice: nothing left to do, no error
