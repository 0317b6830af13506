"""The search-time knobs (the settings ``tune --save-config`` writes) change what they should,
through the store's own search path, on small real collections: the embedded engine (and, where
it can express them, qdrant-client's local mode)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import Settings, load_settings
from ragsonde.config_sources import FlatNameWarning
from ragsonde.errors import ErrorCode, QueryValidationError
from ragsonde.evaluate.aggregation import Aggregation
from ragsonde.models.points import PointRecord, SearchSpec, SparseVector
from ragsonde.models.store import Store
from ragsonde.store import open_store
from ragsonde.tune.measures import overlap_recall
from ragsonde.tune.variants import Hnsw, Quantization, SourcePoints, VariantBuilder, VariantSpec
from tests.tune.support import clustered

TERM = 7


@pytest.fixture(params=["edge", "qdrant-local"])
def hybrid_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """``h``: 20 points, dense (4-d) and BM25-like sparse. ``dense-top`` is the dense query's
    nearest and lacks the query term; ``sparse-top`` has the term most and points elsewhere."""
    url = ":memory:" if request.param == "qdrant-local" else None
    store = open_store(Settings(home=tmp_path, qdrant_url=url))
    store.create_collection("h", 4, sparse_vector_name="bm25")
    rng = np.random.default_rng(3)
    points = [
        PointRecord("1", [1.0, 0.0, 0.0, 0.0], {"name": "dense-top"}, SparseVector([1], [1.0])),
        PointRecord("2", [0.0, 1.0, 0.0, 0.0], {"name": "sparse-top"}, SparseVector([TERM], [9.0])),
    ]
    for i in range(3, 21):
        v = rng.normal(size=4)
        v[0] = abs(v[0]) * 0.5
        points.append(PointRecord(str(i), v.tolist(), {}, SparseVector([TERM], [float(i % 4)])))
    store.upsert("h", points)
    try:
        yield store
    finally:
        store.close()


def _hybrid(store: Store, limit: int = 10, **knobs: object) -> list[tuple[str, float]]:
    spec = SearchSpec(
        vector=[1.0, 0.0, 0.0, 0.0],
        sparse=SparseVector([TERM], [1.0]),
        limit=limit,
        mode="hybrid",
        **knobs,  # type: ignore[arg-type]
    )
    return [(h.id, h.score) for h in store.search("h", [spec])[0]]


def test_rrf_k_changes_the_fused_scores(hybrid_store: Store) -> None:
    sharp = _hybrid(hybrid_store, fusion="rrf", rrf_k=1)
    flat = _hybrid(hybrid_store, fusion="rrf", rrf_k=60)
    # RRF sums 1/(k + rank) over the two lists (rank from 0 or 1): at most 2/k
    assert max(s for _, s in flat) <= 2 / 60 + 1e-6
    assert 2 / 60 < max(s for _, s in sharp) <= 2.0 + 1e-6
    assert [s for _, s in sharp] != pytest.approx([s for _, s in flat])


def test_fusion_weights_shift_toward_one_side(hybrid_store: Store) -> None:
    # Qdrant's weighted RRF: 1 / ((rank + 1) / weight + k - 1), a low weight stretches ranks
    even = _hybrid(hybrid_store, fusion="rrf", rrf_k=1)
    dense_side = _hybrid(hybrid_store, fusion="rrf", rrf_k=1, fusion_weights=(1.0, 0.01))
    sparse_side = _hybrid(hybrid_store, fusion="rrf", rrf_k=1, fusion_weights=(0.01, 1.0))
    assert dense_side[0][0] == "1" and sparse_side[0][0] == "2"
    assert [pid for pid, _ in even] not in ([p for p, _ in dense_side], [p for p, _ in sparse_side])


def test_prefetch_limit_bounds_the_candidates(hybrid_store: Store) -> None:
    assert len(_hybrid(hybrid_store, fusion="dbsf")) == 10
    # two candidates from each side: at most four reach the fusion
    few = _hybrid(hybrid_store, fusion="dbsf", prefetch_limit=2)
    assert 2 <= len(few) <= 4
    assert {"1", "2"} <= {pid for pid, _ in few}


@pytest.mark.parametrize(
    ("knobs", "field"),
    [
        ({}, "fusion_weights"),
        ({"fusion_weights": (0.0, 0.0)}, "fusion_weights"),
        ({"fusion_weights": (-0.5, 1.0)}, "fusion_weights"),
        ({"fusion_weights": (0.5, 0.5), "rrf_k": 10}, "rrf_k"),
    ],
)
def test_bad_linear_fusion_is_refused_naming_the_field(
    hybrid_store: Store, knobs: dict[str, object], field: str
) -> None:
    with pytest.raises(QueryValidationError) as e:
        _hybrid(hybrid_store, fusion="linear", **knobs)
    assert e.value.code is ErrorCode.VALIDATION_ERROR
    assert e.value.field == field and field in e.value.message


def test_rrf_knobs_with_dbsf_are_refused_naming_the_field(hybrid_store: Store) -> None:
    for knob in ({"rrf_k": 5}, {"fusion_weights": (1.0, 2.0)}):
        with pytest.raises(QueryValidationError) as e:
            _hybrid(hybrid_store, fusion="dbsf", **knob)
        assert e.value.code is ErrorCode.VALIDATION_ERROR
        assert e.value.field == next(iter(knob)) and next(iter(knob)) in e.value.message


def test_local_mode_refuses_quantization_knobs(tmp_path: Path) -> None:
    store = open_store(Settings(home=tmp_path, qdrant_url=":memory:"))
    try:
        store.create_collection("d", 3)
        store.upsert("d", [PointRecord("1", [1.0, 0.0, 0.0], {})])
        with pytest.raises(QueryValidationError, match="local mode") as e:
            store.search("d", [SearchSpec(vector=[1.0, 0, 0], limit=1, quantization_rescore=True)])
        assert e.value.field == "quantization_rescore"
    finally:
        store.close()


@pytest.fixture
def edge_home(tmp_path: Path) -> Iterator[tuple[Store, np.ndarray]]:
    """An embedded store holding ``pts`` (600 clustered vectors, not indexed) and, built from
    it into the same home with their HNSW graphs, ``int8`` (scalar-quantized), ``onebit``
    (binary-quantized) and ``weak`` (plain vectors, a poor graph: m=4, ef_construct=8)."""
    store = open_store(Settings(home=tmp_path / "home"))
    x = clustered()
    store.create_collection("pts", x.shape[1])
    store.upsert("pts", [PointRecord(str(i), r.tolist(), {}) for i, r in enumerate(x)])
    source = SourcePoints.read(store, "pts")
    builder = VariantBuilder(source, tmp_path)
    specs = {
        "int8": VariantSpec(quantization=Quantization(kind="scalar")),
        "onebit": VariantSpec(quantization=Quantization(kind="binary", bits=1)),
        "weak": VariantSpec(hnsw=Hnsw(m=4, ef_construct=8)),
    }
    for name, spec in specs.items():
        variant = builder.build(spec, path=tmp_path / "home" / "collections" / name)
        variant._shard.release()  # keep the folder: the store opens it as a collection
    try:
        yield store, x
    finally:
        store.close()


def _dense(store: Store, name: str, queries: np.ndarray, **knobs: object) -> list[list[tuple]]:
    specs = [SearchSpec(vector=q.tolist(), limit=10, **knobs) for q in queries]  # type: ignore[arg-type]
    return [[(h.id, h.score) for h in hits] for hits in store.search(name, specs)]


def test_rescore_gives_the_full_precision_scores(edge_home: tuple[Store, np.ndarray]) -> None:
    store, x = edge_home
    q = x[3]
    truth = np.sort(x @ q)[::-1][:10]
    raw = [s for _, s in _dense(store, "int8", q[None], quantization_rescore=False)[0]]
    full = [s for _, s in _dense(store, "int8", q[None], quantization_rescore=True)[0]]
    assert full == pytest.approx(truth.tolist(), abs=1e-5)
    assert raw != pytest.approx(truth.tolist(), abs=1e-5)  # the int8 codes' scores


def test_oversampling_recovers_recall_lost_to_quantization(
    edge_home: tuple[Store, np.ndarray],
) -> None:
    store, _ = edge_home
    queries = clustered(n=40, seed=99)
    exact = _dense(store, "pts", queries, exact=True)
    once = _dense(store, "onebit", queries, quantization_rescore=True)
    four = _dense(store, "onebit", queries, quantization_rescore=True, quantization_oversampling=4)
    assert overlap_recall(once, exact, 10) < overlap_recall(four, exact, 10)


def test_exact_and_hnsw_ef(edge_home: tuple[Store, np.ndarray]) -> None:
    store, _ = edge_home
    queries = clustered(n=40, seed=99)
    truth = _dense(store, "pts", queries, exact=True)
    assert overlap_recall(_dense(store, "weak", queries, exact=True), truth, 10) == 1.0
    low = overlap_recall(_dense(store, "weak", queries, hnsw_ef=10), truth, 10)
    high = overlap_recall(_dense(store, "weak", queries, hnsw_ef=400), truth, 10)
    assert low < high


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"quantization_oversampling": 0.5}, "quantization_oversampling"),
        ({"rrf_k": 0}, "rrf_k"),
        ({"prefetch_limit": 0}, "prefetch_limit"),
        ({"aggregation": "mean"}, "aggregation"),
        ({"aggregation_n": 0}, "aggregation_n"),
        ({"fusion_weights": [1.0]}, "fusion_weights"),
        ({"fusion_weights": [0.0, 0.0]}, "fusion_weights"),
        ({"mode": "fuzzy"}, "mode"),
        ({"fusion": "dbsf", "rrf_k": 10}, "rrf_k"),
        ({"fusion": "linear"}, "fusion_weights"),
        ({"fusion": "linear", "fusion_weights": [-1.0, 1.0]}, "fusion_weights"),
        ({"fusion": "dbsf", "fusion_weights": [1.0, 1.0]}, "fusion_weights"),
    ],
)
def test_bad_search_settings_are_validation_errors(
    values: dict[str, object], field: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tomli_w

    path = tmp_path / "tuned.toml"
    path.write_text(tomli_w.dumps({"search": values}))
    with pytest.raises(QueryValidationError) as e:
        load_settings(config=path)
    assert e.value.code is ErrorCode.VALIDATION_ERROR
    assert (e.value.field or "").split(".")[:2] == ["search", field]
    assert f"search.{field}" in e.value.message and str(path) in e.value.message


def test_search_settings_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "tuned.toml"
    body = (
        'mode = "hybrid"\nfusion = "rrf"\nrrf_k = 20\nfusion_weights = [2.0, 1.0]\n'
        "prefetch_limit = 50\nquantization_rescore = true\nquantization_oversampling = 2.0\n"
        'exact = true\naggregation = "sum"\naggregation_n = 3\n'
    )
    path.write_text("[search]\n" + body)
    s = load_settings(config=path, collection="mine").search
    assert (s.mode, s.fusion, s.rrf_k, s.fusion_weights) == ("hybrid", "rrf", 20, (2.0, 1.0))
    assert (s.prefetch_limit, s.quantization_rescore, s.quantization_oversampling) == (50, True, 2)
    assert s.exact and load_settings(config=path, collection="mine").collection == "mine"
    assert Aggregation.of(s.aggregation, s.aggregation_n).label == "sum3"
    defaults = Settings().search
    default_aggregation = Aggregation.of(defaults.aggregation, defaults.aggregation_n)
    assert (defaults.mode, defaults.exact, default_aggregation.label) == ("dense", False, "max")
    # ragsonde 0.1's flat keys, at the top of the file, still read the same, with a warning
    # naming the new spelling
    flat = tmp_path / "flat.toml"
    flat.write_text(body)
    with pytest.warns(FlatNameWarning) as said:
        assert load_settings(config=flat).search == s
    assert any("'rrf_k' (" in str(w.message) and "'search.rrf_k'" in str(w.message) for w in said)
    with pytest.raises(QueryValidationError, match="does not exist") as e:
        load_settings(config=tmp_path / "missing.toml")
    assert "missing.toml" in e.value.message
