"""Build-time settings of ingest: the collection's quantization and HNSW (applied when it is
created, a warning otherwise) and the BM25 parameters of the documents' sparse vectors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.embedders.base import Embedder
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.samples import robotics_docs
from ragsonde.store import SparseVector, Store, open_store
from ragsonde.store.variant_specs import Bm25Params


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("lidar", "imu"):
        shutil.copy(robotics_docs() / f"{name}.md", folder / f"{name}.md")
    return folder


def _sparse(store: Store, name: str) -> dict[str, SparseVector | None]:
    return {p.id: p.sparse for b in store.scroll(name, with_vectors=True) for p in b}


def test_bm25_parameters_shape_the_sparse_vectors_and_re_encode(
    docs: Path, edge_settings: Settings, embedder: Embedder
) -> None:
    store = open_store(edge_settings)
    try:

        def run(collection: str, settings: Settings, bm25: Bm25Params | None = None) -> int:
            opts = IngestOptions(sparse=True, bm25=bm25)
            report = ingest(
                str(docs),
                collection=collection,
                settings=settings,
                store=store,
                embedder=embedder,
                options=opts,
            )
            return report.embedded

        first = run("a", edge_settings)
        assert first > 0 and run("a", edge_settings) == 0  # unchanged: nothing re-encoded
        default = _sparse(store, "a")
        # other parameters re-encode every chunk (they are part of its embed hash)
        assert run("a", edge_settings, Bm25Params(k1=0.5, b=0.2)) == first
        tuned = _sparse(store, "a")
        assert tuned.keys() == default.keys()
        for pid, sv in tuned.items():
            old = default[pid]
            assert sv is not None and old is not None
            assert sorted(sv.indices) == sorted(old.indices)  # same terms ...
        assert any(tuned[p].values != default[p].values for p in tuned)  # ... other weights
        # the same parameters as settings (RAGSONDE_BM25_K1/_B) give the same vectors
        from_settings = edge_settings.model_copy(update={"bm25_k1": 0.5, "bm25_b": 0.2})
        assert run("b", from_settings) == first
        assert _sparse(store, "b") == tuned
    finally:
        store.close()


def test_index_settings_apply_at_creation_and_warn_on_an_existing_collection(
    docs: Path, store_settings: Settings, embedder: Embedder
) -> None:
    store = open_store(store_settings)
    asked = store_settings.model_copy(update={"quantization": "int8", "hnsw_m": 32})
    try:
        report = ingest(str(docs), collection="q", settings=asked, store=store, embedder=embedder)
        info = store.collection_info("q")
        if store.backend == "edge":
            assert report.warnings == []
            assert info.index is not None
            assert (info.index.quantization.label, info.index.hnsw.m) == ("int8", 32)
            assert info.indexed_vectors_count == info.points_count  # built, codes and all
        else:  # qdrant-client's local mode keeps plain vectors, and says so
            assert info.index is None
            [warning] = report.warnings
            assert "not measurable on this backend" in warning
        other = store_settings.model_copy(update={"quantization": "binary-2bit"})
        again = ingest(str(docs), collection="q", settings=other, store=store, embedder=embedder)
        assert again.embedded == 0
        [warning] = again.warnings
        if store.backend == "edge":
            assert "quantization: int8, not binary-2bit" in warning
        plain = ingest(
            str(docs), collection="q", settings=store_settings, store=store, embedder=embedder
        )
        assert plain.warnings == []
    finally:
        store.close()
