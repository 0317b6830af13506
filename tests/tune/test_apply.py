"""``tune --apply``: a tuned copy of a collection, built through the store interface on every
backend (the embedded store and qdrant-client's local mode), the source never touched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragsonde.embedders.sparse import Bm25Encoder
from ragsonde.errors import QueryValidationError
from ragsonde.ingest.pipeline import bm25_reencoder
from ragsonde.models.index import Bm25Params, Hnsw, Quantization
from ragsonde.models.points import PointRecord, SearchSpec, SparseVector
from ragsonde.models.store import Store
from ragsonde.store.client import QdrantClientStore
from ragsonde.store.edge import EdgeStore
from ragsonde.tune.variants import VariantSpec, build_tuned_copy
from tests.tune.support import clustered

N = 600


class Counting:
    """A real progress receiver: what the copy reported."""

    def __init__(self) -> None:
        self.total: int | None = None
        self.done = 0

    def start(self, total: int | None, /) -> None:
        self.total = total

    def advance(self, n: int, /, *counts: int) -> None:
        self.done += n


@pytest.fixture(params=["edge", "qdrant-local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s: Store = (
        EdgeStore(tmp_path / "home")
        if request.param == "edge"
        else QdrantClientStore(f"path:{tmp_path / 'local'}")
    )
    x = clustered()
    s.create_collection(
        "pts", x.shape[1], sparse_vector_name="bm25", indexed_fields={"doc_id": "keyword"}
    )
    s.upsert(
        "pts",
        [
            PointRecord(
                str(i),
                row.tolist(),
                {"doc_id": f"d{i // 2}", "text": f"point {i} cluster {i % 7}"},
                SparseVector([i % 50, 100 + i % 3], [1.0, 0.5]),
            )
            for i, row in enumerate(x)
        ],
    )
    s.build_index("pts")
    try:
        yield s
    finally:
        s.close()


def _snapshot(store: Store, name: str) -> dict[str, tuple[dict[str, object], list[int] | None]]:
    return {
        p.id: (p.payload, p.sparse.indices if p.sparse else None)
        for batch in store.scroll(name, with_vectors=True)
        for p in batch
    }


def test_apply_copies_points_payloads_and_sparse_and_leaves_the_source(store: Store) -> None:
    before = _snapshot(store, "pts")
    spec = VariantSpec(quantization=Quantization(kind="scalar"), hnsw=Hnsw(m=32))
    progress = Counting()
    assert build_tuned_copy(store, "pts", "tuned", spec, progress=progress, batch_size=100) == N
    assert (progress.total, progress.done) == (N, N)
    assert sorted(store.list_collections()) == ["pts", "tuned"]
    assert _snapshot(store, "tuned") == before  # same ids, payloads and BM25 vectors
    assert _snapshot(store, "pts") == before  # the source is never changed
    src, copy = store.collection_info("pts"), store.collection_info("tuned")
    assert copy.points_count == src.points_count == N
    assert (copy.dimension, copy.sparse_vector_name) == (src.dimension, "bm25")
    assert dict(copy.indexed_fields) == dict(src.indexed_fields)
    if store.backend == "edge":
        assert copy.index is not None
        assert (copy.index.quantization.label, copy.index.hnsw.m) == ("int8", 32)
    else:  # local mode keeps plain vectors: nothing to report, not a made-up config
        assert copy.index is None
    vector = clustered(n=1, seed=5)[0].tolist()
    [hits] = store.search("tuned", [SearchSpec(vector=vector, limit=5)])
    assert len(hits) == 5 and all("doc_id" in h.payload for h in hits)


def test_apply_refuses_an_existing_target_and_changes_nothing(store: Store) -> None:
    build_tuned_copy(store, "pts", "tuned", VariantSpec())
    before = _snapshot(store, "tuned"), _snapshot(store, "pts")
    with pytest.raises(QueryValidationError, match="already exists") as err:
        build_tuned_copy(
            store, "pts", "tuned", VariantSpec(quantization=Quantization(kind="scalar"))
        )
    assert err.value.code.value == "VALIDATION_ERROR"
    assert (_snapshot(store, "tuned"), _snapshot(store, "pts")) == before
    with pytest.raises(QueryValidationError, match="already exists"):
        build_tuned_copy(store, "pts", "pts", VariantSpec())
    assert _snapshot(store, "pts") == before[1]


def test_apply_with_bm25_parameters_reencodes_the_sparse_vectors(store: Store) -> None:
    encoder = Bm25Encoder(k=0.9, b=0.4)
    spec = VariantSpec(bm25=Bm25Params(k1=0.9, b=0.4))
    reencode = bm25_reencoder(Bm25Params(k1=0.9, b=0.4))
    build_tuned_copy(store, "pts", "tuned", spec, reencode=reencode)
    texts = {p.id: p.payload["text"] for batch in store.scroll("pts") for p in batch}
    copied = {p.id: p.sparse for batch in store.scroll("tuned", with_vectors=True) for p in batch}
    assert len(copied) == N
    for pid, sparse in copied.items():
        [expected] = encoder.embed_documents([str(texts[pid])])
        assert sparse is not None and sorted(sparse.indices) == sorted(expected.indices)
    # without BM25 parameters in the spec, the stored vectors are copied as they are
    build_tuned_copy(store, "pts", "plain", VariantSpec(), reencode=reencode)
    assert _snapshot(store, "plain") == _snapshot(store, "pts")


@pytest.mark.slow
def test_cli_tune_apply_against_qdrant_url_local_mode(
    scifact_slice: Path, embedder, tmp_path: Path
) -> None:
    import json
    import os
    import subprocess
    import sys

    from tests.tune.support import fill_from_slice

    url = f"path:{tmp_path / 'local'}"
    store = QdrantClientStore(url)
    try:
        n = fill_from_slice(store, "slice", scifact_slice, embedder)
        before = _snapshot(store, "slice")
    finally:
        store.close()
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'quantization = [{kind = "none"}, {kind = "scalar"}]\nhnsw = [{m = 16, ef_construct = 100}]\n'
        "hnsw_ef = [64]\nrescore = [true]\noversampling = [2.0]\nfusion = []\n"
        'aggregation = [{method = "max"}]\nbm25 = []\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RAGSONDE_HOME", "QDRANT_URL")}
    env |= {"QDRANT_URL": url, "RAGSONDE_HOME": str(tmp_path / "edge")}
    args = [sys.executable, "-m", "ragsonde", "tune", str(scifact_slice), "-c", "slice"]
    args += ["--grid", str(grid), "--folds", "2", "--mode", "dense", "--json", "--apply", "tuned"]
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900, cwd=root)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["backend"] == "qdrant-local"
    assert any(not v["measurable"] for v in data["variants"])  # scalar: not measurable here
    assert "built tuned copy 'tuned'" in out.stderr
    assert "not measurable on this backend" in out.stderr
    store = QdrantClientStore(url)
    try:
        assert store.count("tuned") == store.count("slice") == n
        assert _snapshot(store, "tuned") == before == _snapshot(store, "slice")
    finally:
        store.close()
    again = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900, cwd=root)
    assert again.returncode == 2
    assert json.loads(again.stdout)["error"]["code"] == "VALIDATION_ERROR"
    assert "already exists" in json.loads(again.stdout)["error"]["message"]
