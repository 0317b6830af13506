"""Collections created with a chosen quantization and HNSW graph, on the real engines: the
embedded Qdrant Edge store honours them (codes on disk, used by search), qdrant-client's local
mode creates the collection with plain vectors and says so (typed, not by message)."""

from __future__ import annotations

from pathlib import Path

import pytest
from qdrant_client import models as m

from ragsonde.models.index import (
    QUANTIZATIONS,
    Hnsw,
    IndexConfig,
    Quantization,
    quantization_named,
)
from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.store.client import QdrantClientStore
from ragsonde.store.edge import EdgeStore
from ragsonde.store.inspect import inspect_collection
from tests.tune.support import clustered

N, DIM = 2000, 128


def _fill(store: EdgeStore | QdrantClientStore, name: str, index: IndexConfig | None) -> None:
    store.create_collection(name, DIM, index=index, indexed_fields={"doc_id": "keyword"})
    x = clustered(n=N, dim=DIM)
    store.upsert(
        name, [PointRecord(str(i), r.tolist(), {"doc_id": f"d{i}"}) for i, r in enumerate(x)]
    )
    store.build_index(name)


def _code_bytes(home: Path, name: str) -> int:
    """Bytes of quantized codes the engine wrote for the collection's dense vector."""
    root = home / "collections" / name / "segments"
    return sum(p.stat().st_size for p in root.rglob("quantized.data"))


def _quantized_scores_differ(home: Path, name: str) -> bool:
    """The probe of ``IndexVariant.quantization_in_effect``, on the created collection's shard:
    scores from the codes (no rescoring) differ from the exact float32 ones."""
    import qdrant_edge as qe

    shard = qe.EdgeShard.load(str(home / "collections" / name))
    try:
        queries = clustered(n=5, dim=DIM, seed=7)

        def scores(quant: object) -> list[list[float]]:
            params = qe.SearchParams(hnsw_ef=128, quantization=quant)
            return [
                [
                    round(p.score, 4)
                    for p in shard.query(
                        qe.QueryRequest(
                            limit=10, query=qe.Query.Nearest(q.tolist(), using=""), params=params
                        )
                    )
                ]
                for q in queries
            ]

        raw = scores(qe.QuantizationSearchParams(rescore=False))
        exact = scores(qe.QuantizationSearchParams(ignore=True))
        return raw != exact
    finally:
        shard.close()


def test_every_quantization_name_round_trips_through_both_engines() -> None:
    import qdrant_edge as qe

    assert {"none", "scalar", "int8", "binary-1bit", "binary-1.5bit", "binary-2bit"} <= set(
        QUANTIZATIONS
    )
    for name, q in QUANTIZATIONS.items():
        assert Quantization.from_wire(q.wire()) == q, name
        client = q.client_config(m)
        assert (client is None) == (q.kind == "none")
        if client is not None:  # qdrant-client's model serialises back to the same wire form
            assert client.model_dump(mode="json", exclude_none=True) == q.wire()
        qe.EdgeVectorParams(
            size=8, distance=qe.Distance.Cosine, quantization_config=q.engine_config(qe)
        )
    with pytest.raises(ValueError, match=r"unknown quantization 'int4'.*binary-1\.5bit"):
        quantization_named("int4")


@pytest.mark.parametrize(("name", "most"), [("scalar", 0.30), ("binary-1bit", 0.05)])
def test_edge_collection_created_quantized_keeps_codes_and_searches_them(
    tmp_path: Path, name: str, most: float
) -> None:
    home = tmp_path / "home"
    store = EdgeStore(home)
    try:
        _fill(store, "plain", None)
        _fill(store, "q", IndexConfig(quantization=quantization_named(name)))
        info = store.collection_info("q")
        assert info.index is not None and info.index.quantization == quantization_named(name)
        assert store.collection_info("plain").index == IndexConfig()
        assert info.points_count == info.indexed_vectors_count == N
        query = clustered(n=1, dim=DIM, seed=3)[0].tolist()
        hits = store.search("q", [SearchSpec(vector=query, limit=5)])
        assert len(hits[0]) == 5
    finally:
        store.close()
    f32 = N * DIM * 4
    assert _code_bytes(home, "plain") == 0
    assert 0 < _code_bytes(home, "q") <= most * f32  # vector memory drops
    assert _quantized_scores_differ(home, "q")


def test_hnsw_settings_show_in_collection_info_and_inspect(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "home")
    try:
        _fill(store, "g", IndexConfig(hnsw=Hnsw(m=32, ef_construct=200)))
        info = store.collection_info("g")
        assert info.index is not None and (info.index.hnsw.m, info.index.hnsw.ef_construct) == (
            32,
            200,
        )
        report = inspect_collection(store, "g", sample=10)
        assert report.index_measurable and report.index == info.index
        dumped = report.model_dump(mode="json")
        assert dumped["index"]["hnsw"] == {"m": 32, "ef_construct": 200}
        assert dumped["index"]["quantization"]["kind"] == "none"
    finally:
        store.close()


def test_existing_collection_with_other_settings_warns_naming_the_difference(
    tmp_path: Path,
) -> None:
    store = EdgeStore(tmp_path / "home")
    try:
        store.create_collection("c", 8, index=IndexConfig(hnsw=Hnsw(m=32)))
        info = store.collection_info("c")
        asked = IndexConfig(quantization=quantization_named("scalar"), hnsw=Hnsw(m=32))
        [warning] = info.index_warnings(asked)
        assert "quantization: none, not int8" in warning and "hnsw" not in warning
        [warning] = info.index_warnings(IndexConfig(hnsw=Hnsw(m=16)))
        assert "hnsw m: 32, not 16" in warning and "quantization" not in warning
        # only the fields asked for are compared: ef_construct was not asked for
        assert info.index_warnings(IndexConfig(hnsw=Hnsw(m=32))) == []
        assert info.index_warnings(None) == []
    finally:
        store.close()


def test_client_local_mode_creates_plain_vectors_and_says_not_measurable() -> None:
    store = QdrantClientStore(":memory:")
    try:
        asked = IndexConfig(quantization=quantization_named("scalar"), hnsw=Hnsw(m=32))
        created = store.create_collection("c", DIM, index=asked)
        assert created.index is None  # local mode keeps plain vectors: nothing to report
        x = clustered(n=50, dim=DIM)
        store.upsert(
            "c", [PointRecord(str(i), r.tolist(), {"doc_id": str(i)}) for i, r in enumerate(x)]
        )
        assert store.count("c") == 50
        report = inspect_collection(store, "c", sample=10)
        assert report.index is None and report.index_measurable is False
        [warning] = created.index_warnings(asked)
        assert "not measurable on this backend" in warning
    finally:
        store.close()


def test_a_servers_collection_info_reads_back_its_quantization_and_hnsw() -> None:
    """No Qdrant server runs here: its GET /collections/{name} body (the REST wire format),
    parsed by qdrant-client's own model, is what the server backend reads."""
    from ragsonde.store.client import _index_of

    body = {
        "status": "green",
        "optimizer_status": "ok",
        "indexed_vectors_count": 0,
        "points_count": 0,
        "segments_count": 2,
        "config": {
            "params": {"vectors": {"size": 384, "distance": "Cosine"}},
            "hnsw_config": {"m": 32, "ef_construct": 200, "full_scan_threshold": 10000},
            "optimizer_config": {
                "deleted_threshold": 0.2,
                "vacuum_min_vector_number": 1000,
                "default_segment_number": 0,
                "flush_interval_sec": 5,
            },
            "wal_config": {"wal_capacity_mb": 32, "wal_segments_ahead": 0},
            "quantization_config": {
                "binary": {"always_ram": True, "encoding": "one_and_half_bits"}
            },
        },
        "payload_schema": {},
    }
    index = _index_of(m.CollectionInfo.model_validate(body), None)
    assert index == IndexConfig(
        quantization=quantization_named("binary-1.5bit"), hnsw=Hnsw(m=32, ef_construct=200)
    )
    # a named vector's own settings win over the collection's
    body["config"]["params"]["vectors"] = {  # type: ignore[index]
        "dense": {
            "size": 384,
            "distance": "Cosine",
            "hnsw_config": {"m": 8},
            "quantization_config": {"scalar": {"type": "int8", "always_ram": True}},
        }
    }
    index = _index_of(m.CollectionInfo.model_validate(body), "dense")
    assert (index.quantization.label, index.hnsw.m, index.hnsw.ef_construct) == ("int8", 8, 200)
