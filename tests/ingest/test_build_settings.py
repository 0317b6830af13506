"""Build-time settings of ingest: the collection's quantization and HNSW (applied when it is
created, a warning otherwise) and the BM25 parameters of the documents' sparse vectors."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.embedders.base import Embedder
from ragsonde.embedders.sparse import Bm25Encoder
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.ingest.pipeline import bm25_reencoder, encoded_text
from ragsonde.models.index import Bm25Params
from ragsonde.models.points import SparseVector
from ragsonde.models.store import Store
from ragsonde.samples import robotics_docs
from ragsonde.store import open_store


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
        from_settings = edge_settings.model_copy(
            update={"index": edge_settings.index.overlay({"bm25_k1": 0.5, "bm25_b": 0.2})}
        )
        assert run("b", from_settings) == first
        assert _sparse(store, "b") == tuned
    finally:
        store.close()


def test_index_settings_apply_at_creation_and_warn_on_an_existing_collection(
    docs: Path, store_settings: Settings, embedder: Embedder
) -> None:
    store = open_store(store_settings)
    asked = store_settings.model_copy(
        update={"index": store_settings.index.overlay({"quantization": "int8", "hnsw_m": 32})}
    )
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
        other = store_settings.model_copy(
            update={"index": store_settings.index.overlay({"quantization": "binary-2bit"})}
        )
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


def _title_weight(sparse: SparseVector, title: str) -> float:
    [term] = Bm25Encoder().embed_queries([title])
    return dict(zip(sparse.indices, sparse.values, strict=True)).get(term.indices[0], 0.0)


def test_title_weight_re_encodes_counts_the_title_and_is_what_tune_re_encodes(
    docs: Path, edge_settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    import ragsonde.cli
    from ragsonde.cli.app import app

    def payloads(store: Store, name: str) -> dict[str, dict[str, Any]]:
        return {p.id: p.payload for b in store.scroll(name) for p in b}

    store = open_store(edge_settings)
    try:
        opts = IngestOptions(sparse=True)
        common = {"store": store, "embedder": embedder, "options": opts}
        first = ingest(str(docs), collection="a", settings=edge_settings, **common).embedded
        default, before = _sparse(store, "a"), payloads(store, "a")
        weighted = edge_settings.model_copy(
            update={"index": edge_settings.index.overlay({"bm25_title_weight": 2})}
        )
        # a new title weight re-encodes every chunk: it is part of the embed hash
        assert ingest(str(docs), collection="a", settings=weighted, **common).embedded == first
        after, tuned = payloads(store, "a"), _sparse(store, "a")
        assert all(after[p]["embed_hash"] != before[p]["embed_hash"] for p in after)
        assert {p["bm25"] for p in after.values()} == {"bm25-k1.2-b0.75-t2"}
        assert "bm25" not in next(iter(before.values()))  # default parameters: as before
        assert ingest(str(docs), collection="a", settings=weighted, **common).embedded == 0
        # the title's words weigh more in every chunk
        for pid, sv in tuned.items():
            old, title = default[pid], str(after[pid]["title"])
            assert sv is not None and old is not None
            assert _title_weight(sv, title) > _title_weight(old, title) > 0
        # tune (and --apply) re-encode stored payloads into exactly what ingest wrote, the
        # chunks' "title: section" prefix put back from the embed hash
        ids = list(after)
        again = bm25_reencoder(Bm25Params(title_weight=2))([after[p] for p in ids])
        assert again == [tuned[p] for p in ids]
        for p in ids:
            text, title = after[p]["text"], after[p]["title"]
            assert encoded_text(after[p]) != text and encoded_text(after[p]).startswith(title)
    finally:
        store.close()
    # the CLI option gives the same vectors as the setting
    ragsonde.cli._register()
    result = CliRunner().invoke(
        app,
        [
            *("ingest", str(docs), "-c", "b", "--home", str(edge_settings.home)),
            *("--sparse", "--bm25-title-weight", "2", "--json"),
        ],
        env={"RAGSONDE_HOME": None, "QDRANT_URL": None, "RAGSONDE_QDRANT_URL": None},
    )
    assert result.exit_code == 0, result.output
    store = open_store(edge_settings)
    try:
        assert _sparse(store, "b") == tuned
    finally:
        store.close()
    bad = CliRunner().invoke(app, ["ingest", str(docs), "--bm25-title-weight", "6"])
    assert bad.exit_code == 2 and "--bm25-title-weight" in bad.output
