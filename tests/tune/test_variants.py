"""Index variants on a real embedded engine: each knob changes what it should, guards fire."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.models.points import CollectionInfo, PointRecord, SearchSpec
from ragsonde.models.store import Store
from ragsonde.store import open_store
from ragsonde.tune.measures import overlap_recall
from ragsonde.tune.runner import collection_warnings, require_indexed
from ragsonde.tune.variants import (
    Hnsw,
    Quantization,
    SourcePoints,
    VariantBuilder,
    VariantSpec,
    build_tuned_copy,
    measurable,
)
from tests.tune.support import clustered


def _spec(**knobs: object) -> SearchSpec:
    """A search of 10 (each query's vector given per request)."""
    return SearchSpec(vector=None, limit=10, **knobs)  # type: ignore[arg-type]


@pytest.fixture
def source(clustered_store: Store) -> SourcePoints:
    return SourcePoints.read(clustered_store, "pts")


@pytest.fixture
def queries() -> np.ndarray:
    return clustered(n=40, seed=99)


def build(source: SourcePoints, tmp_path: Path, **kw: object) -> object:
    return VariantBuilder(source, tmp_path).build(VariantSpec(**kw))  # type: ignore[arg-type]


def test_source_is_read_once_with_documents(source: SourcePoints) -> None:
    assert len(source.ids) == 600 and source.dimension == 64
    assert source.doc_ids[source.ids.index("5")] == "d2"
    assert source.sparse is None


@pytest.mark.parametrize(
    ("quantization", "ratio"),
    [
        (Quantization(kind="scalar"), 0.25),
        (Quantization(kind="binary", bits=1), 1 / 32),
        (Quantization(kind="binary", bits=2), 2 / 32),
        (Quantization(kind="turbo", bits=4), 4 / 32),
    ],
)
def test_quantization_shrinks_vector_memory_and_is_in_effect(
    source: SourcePoints, queries: np.ndarray, tmp_path: Path, quantization, ratio
) -> None:
    with VariantBuilder(source, tmp_path).build(VariantSpec(quantization=quantization)) as v:
        assert v.indexed
        assert v.stats.quantized_bytes > 0
        # the codes, measured on disk, are bits/32 of float32 plus word padding at 64 dims
        assert ratio * 0.9 <= v.stats.memory_ratio <= ratio * 2.2, v.stats
        assert v.quantization_in_effect(queries[:5])


def test_plain_vectors_cost_float32(source: SourcePoints, tmp_path: Path) -> None:
    with VariantBuilder(source, tmp_path).build(VariantSpec()) as v:
        assert v.stats.quantized_bytes == 0
        assert v.stats.memory_ratio == 1.0
        assert v.stats.float32_bytes == 600 * 64 * 4


def test_rescore_and_oversampling_change_results(
    source: SourcePoints, queries: np.ndarray, tmp_path: Path
) -> None:
    spec = VariantSpec(quantization=Quantization(kind="binary", bits=1))
    with VariantBuilder(source, tmp_path).build(spec) as v:
        exact, _ = v.search(queries, _spec(exact=True, quantization_ignore=True))
        raw, _ = v.search(queries, _spec(hnsw_ef=64, quantization_rescore=False))
        rescored, _ = v.search(
            queries, _spec(hnsw_ef=64, quantization_rescore=True, quantization_oversampling=4)
        )
        # without rescoring the scores come from the 1-bit codes, not the cosine
        assert [s for _, s in raw[0]] != pytest.approx([s for _, s in exact[0]], abs=1e-3)
        assert all(-1.0001 <= s <= 1.0001 for _, s in rescored[0])
        assert overlap_recall(rescored, exact, 10) > overlap_recall(raw, exact, 10)


def test_hnsw_ef_trades_recall_for_work(
    source: SourcePoints, queries: np.ndarray, tmp_path: Path
) -> None:
    spec = VariantSpec(hnsw=Hnsw(m=4, ef_construct=8))
    with VariantBuilder(source, tmp_path).build(spec) as v:
        exact, _ = v.search(queries, _spec(exact=True))
        low, _ = v.search(queries, _spec(hnsw_ef=10))
        high, _ = v.search(queries, _spec(hnsw_ef=400))
        assert overlap_recall(exact, exact, 10) == 1.0
        assert overlap_recall(low, exact, 10) < overlap_recall(high, exact, 10)


def test_hnsw_m_changes_the_graph(source: SourcePoints, tmp_path: Path) -> None:
    small = build(source, tmp_path, hnsw=Hnsw(m=4, ef_construct=32))
    big = build(source, tmp_path, hnsw=Hnsw(m=32, ef_construct=32))
    try:
        assert small.stats.index_bytes < big.stats.index_bytes  # type: ignore[attr-defined]
    finally:
        small.close()  # type: ignore[attr-defined]
        big.close()  # type: ignore[attr-defined]


def test_variant_folder_is_removed_and_source_untouched(
    clustered_store: Store, source: SourcePoints, tmp_path: Path
) -> None:
    v = VariantBuilder(source, tmp_path).build(
        VariantSpec(quantization=Quantization(kind="scalar"))
    )
    path = v.path
    assert path.is_dir()
    v.close()
    assert not path.exists()
    assert clustered_store.collection_info("pts").points_count == 600
    assert clustered_store.list_collections() == ["pts"]


def test_unindexed_variant_is_refused(source: SourcePoints, tmp_path: Path) -> None:
    # Qdrant's own thresholds: 600 small vectors never get a graph
    with VariantBuilder(source, tmp_path, force_index=False).build(VariantSpec()) as v:
        assert not v.indexed
        with pytest.raises(QueryValidationError, match="indexed"):
            require_indexed(v)


def test_quantization_not_in_effect_is_detected(
    source: SourcePoints, queries: np.ndarray, tmp_path: Path
) -> None:
    # without optimisation the engine writes no codes: the quantization is configured but off
    spec = VariantSpec(quantization=Quantization(kind="scalar"))
    with VariantBuilder(source, tmp_path, force_index=False).build(spec) as v:
        assert v.stats.quantized_bytes == 0
        assert not v.quantization_in_effect(queries[:5])


def test_hybrid_needs_bm25(source: SourcePoints, queries: np.ndarray, tmp_path: Path) -> None:
    with (
        VariantBuilder(source, tmp_path).build(VariantSpec()) as v,
        pytest.raises(QueryValidationError, match="BM25"),
    ):
        v.hybrid(queries, [], _spec(mode="hybrid"))


def test_measurable_by_backend() -> None:
    assert measurable("edge", "quantization") and measurable("qdrant", "hnsw")
    assert not measurable("qdrant-local", "quantization")


def test_bad_quantization_specs_are_refused() -> None:
    with pytest.raises(ValueError, match="bits"):
        Quantization(kind="binary", bits=3)
    with pytest.raises(ValueError, match="compression"):
        Quantization(kind="product")
    with pytest.raises(ValueError, match="binary"):
        Quantization(kind="scalar", query_encoding="scalar8")


def test_tuned_copy_is_a_new_quantized_collection(clustered_store: Store, queries) -> None:
    spec = VariantSpec(quantization=Quantization(kind="scalar"))
    assert build_tuned_copy(clustered_store, "pts", "pts_tuned", spec) == 600
    assert clustered_store.list_collections() == ["pts", "pts_tuned"]
    info = clustered_store.collection_info("pts_tuned")
    assert (
        info.points_count == 600
        and info.indexed_fields == clustered_store.collection_info("pts").indexed_fields
    )
    with pytest.raises(QueryValidationError, match="already exists"):
        build_tuned_copy(clustered_store, "pts", "pts_tuned", spec)


def test_unindexed_collection_is_flagged_with_how_to_index(tmp_path: Path) -> None:
    store = open_store(Settings(home=tmp_path / "home"))
    try:
        x = clustered(n=1000, dim=64)
        store.create_collection("raw", 64)
        store.upsert("raw", [PointRecord(str(i), r.tolist(), {}) for i, r in enumerate(x)])
        info = store.collection_info("raw")
        assert info.dense_indexed < info.points_count
        warnings = collection_warnings(info, SourcePoints.read(store, "raw"), True)
        assert any("not indexed" in w and "To index it" in w for w in warnings)
        assert any("is small" in w for w in warnings)
    finally:
        store.close()


def test_bm25_vectors_do_not_count_as_a_dense_graph() -> None:
    info = CollectionInfo("c", 384, "Cosine", 100, sparse_vector_name="bm25")
    assert replace(info, indexed_vectors_count=100).dense_indexed == 0
    assert replace(info, indexed_vectors_count=200).dense_indexed == 100
    assert replace(info, sparse_vector_name=None, indexed_vectors_count=100).dense_indexed == 100


def test_search_index_says_how_a_search_finds_its_candidates():
    from ragsonde.models.index import IndexConfig
    from ragsonde.models.points import CollectionInfo
    from ragsonde.models.scores import Distance

    info = CollectionInfo(
        "c", 384, Distance.COSINE, points_count=200, backend="edge", index=IndexConfig()
    )
    assert info.search_index("dense", exact=True) == "exact (brute force)"
    assert info.search_index("dense", exact=False).startswith("full scan (no HNSW graph")
    assert replace(info, indexed_vectors_count=50).search_index("hybrid", False) == (
        "HNSW (50 of 200 points; the rest scanned)"
    )
    assert replace(info, indexed_vectors_count=200).search_index("dense", False) == "HNSW"
    hybrid = replace(info, sparse_vector_name="bm25", indexed_vectors_count=400)
    assert hybrid.search_index("hybrid", False) == "HNSW"
    assert hybrid.search_index("sparse", False) == "sparse inverted index"
    local = replace(info, backend="qdrant-local", index=None)
    assert local.search_index("dense", False) == (
        "exact (brute force: qdrant-local keeps no HNSW graph)"
    )


def test_a_ctrl_c_while_the_scratch_store_opens_leaves_no_folder(
    source: SourcePoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interrupted tune left /tmp/ragsonde-variant-* (640 KB) until the next tune's reaper,
    300 s later: the folder was made before the try that removes it."""
    import ragsonde.tune.variants as variants

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(variants, "EdgeStore", interrupted)
    with pytest.raises(KeyboardInterrupt):
        VariantBuilder(source, tmp_path).build(VariantSpec())
    assert list(tmp_path.glob("ragsonde-variant-*")) == []
