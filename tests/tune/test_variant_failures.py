"""Tune's variants are collections of a scratch embedded store: built, measured, searched and
deleted through the store interface, their engine and disk failures translated by the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.errors import ErrorCode, StoreConnectionError
from ragsonde.models.index import Quantization
from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.store import open_store
from ragsonde.tune.variants import SourcePoints, VariantBuilder, VariantSpec
from tests.tune.support import clustered

SCALAR = VariantSpec(quantization=Quantization(kind="scalar"))


@pytest.fixture
def small_source(tmp_path: Path) -> SourcePoints:
    """300 clustered 8-d points, read from a store (the engine's own thresholds would never
    give them a graph)."""
    store = open_store(Settings(home=tmp_path / "home"))
    try:
        x = clustered(n=300, dim=8)
        store.create_collection("pts", 8)
        store.upsert("pts", [PointRecord(str(i), r.tolist(), {}) for i, r in enumerate(x)])
        return SourcePoints.read(store, "pts")
    finally:
        store.close()


def test_build_search_measure_and_close(small_source: SourcePoints, tmp_path: Path):
    x = small_source.vectors
    variant = VariantBuilder(small_source, tmp_path).build(SCALAR)
    try:
        assert variant.stats.indexed_vectors == 300  # force_index: even 300 points get a graph
        assert variant.stats.quantized_bytes > 0 and variant.stats.index_bytes > 0
        assert variant.stats.disk_bytes >= variant.stats.quantized_bytes
        hits, times = variant.search(x[:5], SearchSpec(vector=None, limit=3, hnsw_ef=64))
        assert len(times) == 5 and all(t > 0 for t in times)
        assert [h[0][0] for h in hits] == ["0", "1", "2", "3", "4"]  # each finds itself first
    finally:
        variant.close()
    assert not variant.path.exists()
    assert list(tmp_path.glob("ragsonde-variant-*")) == []  # its scratch home went with it
    variant.close()  # twice: nothing left to do, no error


def test_the_engine_s_own_thresholds_leave_a_small_variant_unindexed(
    small_source: SourcePoints, tmp_path: Path
):
    with VariantBuilder(small_source, tmp_path, force_index=False).build(SCALAR) as v:
        assert v.stats.indexed_vectors == 0 and not v.indexed


def test_an_unwritable_folder_is_a_connection_error_and_leaves_nothing(
    small_source: SourcePoints, tmp_path: Path
):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    target = blocker / "home" / "collections" / "variant"
    with pytest.raises(StoreConnectionError, match="a-file") as caught:
        VariantBuilder(small_source, tmp_path).build(SCALAR, path=target)
    assert caught.value.code is ErrorCode.CONNECTION_ERROR
    assert blocker.read_text() == "not a folder"
