"""Small real collections with planted faults, built once per session with the real model.

- ``planted``: the support corpus (dense and BM25) plus a chunk with no text, a chunk far longer
  than the model's window whose answer sits past it, and a 30-chunk document that crowds the
  fetch; a benchmark whose queries each meet one fault.
- ``scifact_indexes``: a SciFact slice (titles, embedded once) in two collections: ``binary``
  (1-bit binary quantization, with 4,000 of the fillers below) and ``weak_hnsw`` (a sparse HNSW graph, m=4 and ef_construct=8,
  plus 8,000 filler points, noisy copies of the titles' vectors, so that the engine searches
  its graph: below Qdrant's full-scan threshold of 10 MB of vectors it scans every point).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
from ragsonde.models.index import Hnsw, IndexConfig, Quantization
from ragsonde.models.points import PointRecord
from ragsonde.store import open_store
from ragsonde.testing import beir_slice
from tests.explain.support import FILLERS, PLANTED_QUERIES, Indexes, Planted, planted_rows
from tests.support import INDEXED


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Planted:
    root = tmp_path_factory.mktemp("planted")
    settings = Settings(home=root / "home", collection="planted")
    rows = planted_rows()
    texts = [text for _, _, text in rows]
    # a chunk with no text still has a vector (another pipeline embedded its title, say)
    dense = embedder.embed_documents([t or "untitled" for t in texts])
    sparse = Bm25Encoder().embed_documents(texts)
    store = open_store(settings)
    try:
        store.create_collection(
            "planted",
            embedder.dimension,
            sparse_vector_name=SPARSE_VECTOR_NAME,
            indexed_fields=INDEXED,
        )
        store.upsert(
            "planted",
            [
                PointRecord(
                    str(i + 1),
                    dense[i].tolist(),
                    {"text": text, "doc_id": doc, "section": section, "chunk_index": 0},
                    sparse[i],
                )
                for i, (doc, section, text) in enumerate(rows)
            ],
        )
        store.build_index("planted")
    finally:
        store.close()  # the CLI tests take the store's lock
    bench = root / "planted.jsonl"
    bench.write_text("".join(json.dumps(q) + "\n" for q in PLANTED_QUERIES), encoding="utf-8")
    return Planted(settings, bench)


@pytest.fixture(scope="session")
def scifact_indexes(
    tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder, scifact_dir: Path
) -> Indexes:
    root = tmp_path_factory.mktemp("scifact_indexes")
    bench = beir_slice(scifact_dir, root / "slice", 25, 200)
    rows = [json.loads(x) for x in (bench / "corpus.jsonl").read_text().splitlines() if x]
    vectors = embedder.embed_documents([r["title"] for r in rows])
    points = [
        PointRecord(str(i + 1), vectors[i].tolist(), {"doc_id": r["_id"], "text": r["title"]})
        for i, r in enumerate(rows)
    ]
    rng = np.random.default_rng(0)
    near = vectors[rng.integers(0, len(rows), FILLERS)]
    noise = near + 0.08 * rng.standard_normal(near.shape).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    fillers = [
        PointRecord(str(100_000 + i), noise[i].tolist(), {"doc_id": f"filler-{i}", "text": "x"})
        for i in range(FILLERS)
    ]
    settings = Settings(home=root / "home")
    store = open_store(settings)
    try:
        for name, index, extra in (
            # half the fillers: crowded enough for 1-bit codes to err, below the full-scan
            # threshold (the engine scans every code, so only quantization can lose a document)
            ("binary", IndexConfig(quantization=Quantization(kind="binary")), fillers[:4000]),
            ("weak_hnsw", IndexConfig(hnsw=Hnsw(m=4, ef_construct=8)), fillers),
        ):
            store.create_collection(
                name, embedder.dimension, index=index, indexed_fields={"doc_id": "keyword"}
            )
            everything = points + extra
            for start in range(0, len(everything), 1000):
                store.upsert(name, everything[start : start + 1000])
            store.build_index(name)
    finally:
        store.close()
    return Indexes(settings, bench)
