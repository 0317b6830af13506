"""The grid's expansion, grid files, aggregation, Pareto front, cross-validation, selection."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.models.params import SearchParams
from ragsonde.tune.grid import DEFAULT_GRID, Aggregation, Grid, GridNameWarning, load_grid
from ragsonde.tune.measures import aggregate, overlap_recall
from ragsonde.tune.report import ConfigResult, Constraints
from ragsonde.tune.select import SEED, best, cross_validate, folds_of, pareto_front, recommend
from ragsonde.tune.variants import Hnsw, Quantization, VariantSpec


def test_default_grid_builds_each_quantization_once_and_each_hnsw_once() -> None:
    specs = DEFAULT_GRID.variants()
    labels = [s.label for s in specs]
    assert len(labels) == len(set(labels)) == len(DEFAULT_GRID.quantization) + 2
    assert specs[0] == VariantSpec()  # the reference: plain vectors, Qdrant's default HNSW
    assert {s.quantization.kind for s in specs} == {"none", "scalar", "binary", "turbo"}
    assert {(s.hnsw.m, s.hnsw.ef_construct) for s in specs} == {(16, 100), (8, 64), (32, 200)}


def test_cross_grid_is_the_full_product() -> None:
    grid = DEFAULT_GRID.model_copy(update={"cross": True})
    assert len(grid.variants()) == len(grid.quantization) * len(grid.hnsw)


def test_quantized_variants_sweep_rescore_and_oversampling() -> None:
    plain = DEFAULT_GRID.dense_searches(VariantSpec())
    assert plain == [SearchParams(hnsw_ef=ef) for ef in (32, 64, 128)]
    knobs = DEFAULT_GRID.dense_searches(VariantSpec(quantization=Quantization(kind="scalar")))
    # per hnsw_ef: rescoring off, or on at 1x, 2x, 4x oversampling
    assert len(knobs) == 3 * 4
    assert (
        SearchParams(hnsw_ef=64, quantization_rescore=True, quantization_oversampling=4.0) in knobs
    )
    assert SearchParams(hnsw_ef=64, quantization_rescore=False) in knobs


def test_grid_file_toml_and_yaml(tmp_path: Path) -> None:
    toml = tmp_path / "grid.toml"
    toml.write_text(
        'quantization = [{kind = "none"}, {kind = "binary", bits = 1.5}]\n'
        "hnsw_ef = [16]\n"
        'fusion = [{fusion = "rrf", rrf_k = 20, prefetch_limit = 30}]\n'
    )
    grid = load_grid(toml)
    assert [v.label for v in grid.variants()] == [
        "none/m16-efc100",
        "binary-1.5bit/m16-efc100",
        "none/m8-efc64",
        "none/m32-efc200",
    ]
    assert grid.hnsw_ef == [16] and grid.fusion[0].fusion_label == "rrf-k20/pf30"
    yaml = tmp_path / "grid.yaml"
    yaml.write_text("hnsw:\n  - {m: 4, ef_construct: 16}\naggregation:\n  - {method: sum, n: 2}\n")
    grid = load_grid(yaml)
    assert grid.hnsw == [Hnsw(m=4, ef_construct=16)] and grid.aggregation[0].label == "sum2"


def test_default_grid_sweeps_tm2c2_linear_fusion_on_deep_lists() -> None:
    linear = [f for f in DEFAULT_GRID.fusion if f.fusion == "linear"]
    assert sorted((f.fusion_weights, f.prefetch_limit) for f in linear) == sorted(
        (w, p) for w in ((0.6, 0.4), (0.7, 0.3), (0.8, 0.2)) for p in (200, 1000)
    )
    assert "linear/w0.7:0.3/pf1000" in {f.fusion_label for f in linear}
    # RRF and DBSF stay at each of their prefetch depths
    others = [f for f in DEFAULT_GRID.fusion if f.fusion != "linear"]
    assert len(others) == 15 and {f.prefetch_limit for f in others} == {50, 100, 200}
    assert sum(f.fusion == "dbsf" for f in others) == 3


def test_grid_file_with_linear_fusion(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(
        'fusion = [{fusion = "linear", fusion_weights = [0.6, 0.4], prefetch_limit = 80}]\n'
    )
    (search,) = load_grid(path).fusion
    assert search.fusion_label == "linear/w0.6:0.4/pf80" and search.mode == "hybrid"


def test_grid_file_with_the_old_fusion_names_reads_them_and_warns(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    path.write_text('fusion = [{method = "rrf", k = 20, weights = [2.0, 1.0]}]\n')
    with pytest.warns(GridNameWarning, match="method -> fusion, k -> rrf_k"):
        (search,) = load_grid(path).fusion
    assert search == SearchParams(
        mode="hybrid", fusion="rrf", rrf_k=20, fusion_weights=(2.0, 1.0), prefetch_limit=100
    )


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('fusion = [{fusion = "linear"}]\n', "fusion_weights"),
        ('fusion = [{fusion = "dbsf", fusion_weights = [1.0, 1.0]}]\n', "fusion_weights"),
        ('fusion = [{fusion = "dbsf", mode = "dense"}]\n', "hybrid search"),
        ("hnsw_ef = []\n", "hnsw_ef"),
        ('quantization = [{kind = "binary", bits = 3}]\n', "bits"),
        ("colour = 1\n", "colour"),
        ("hnsw_ef = [\n", "Cannot read"),
    ],
)
def test_bad_grid_files_say_what_is_wrong(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(text)
    with pytest.raises(QueryValidationError, match=match):
        load_grid(path)


def test_aggregation_best_chunk_or_sum_of_top_n() -> None:
    hits = [("a1", 0.9), ("b1", 0.8), ("a2", 0.7), ("b2", 0.6), ("a3", 0.5)]

    def doc(point: str) -> str:
        return point[0]

    assert aggregate(hits, doc, Aggregation()) == {"a": 0.9, "b": 0.8}
    two = aggregate(hits, doc, Aggregation(method="sum", n=2))
    assert two == pytest.approx({"a": 1.6, "b": 1.4})
    assert aggregate(hits, doc, Aggregation(method="sum", n=3))["a"] == pytest.approx(2.1)


def test_overlap_recall_by_hand() -> None:
    ref = [[("1", 1.0), ("2", 0.9)], [("3", 1.0), ("4", 0.5)]]
    got = [[("1", 1.0), ("9", 0.9)], [("4", 1.0), ("3", 0.5)]]
    assert overlap_recall(got, ref, 2) == pytest.approx((0.5 + 1.0) / 2)


def cfg(cid: str, per_query: dict[str, float], p95: float = 1.0, mb: float = 1.0, **kw):
    ndcg = sum(per_query.values()) / len(per_query)
    return ConfigResult(
        id=cid,
        variant="none/m16-efc100",
        search=SearchParams(mode=kw.get("mode", "dense"), hnsw_ef=64),
        metrics={"ndcg@10": ndcg, "recall@10": 0.0, "recall@100": 0.0},
        recall_vs_exact=kw.get("recall", 1.0),
        latency_p50_ms=p95 / 2,
        latency_p95_ms=p95,
        vector_memory_mb=mb,
        memory_ratio=mb,
        disk_mb=mb,
        build_s=0.0,
        per_query_ndcg=per_query,
    )


def test_pareto_front_keeps_only_the_undominated() -> None:
    configs = [
        cfg("best", {"q": 0.9}, p95=5, mb=10),
        cfg("fast", {"q": 0.8}, p95=1, mb=10),
        cfg("small", {"q": 0.8}, p95=5, mb=1),
        cfg("dominated", {"q": 0.7}, p95=6, mb=11),
        cfg("tie-worse", {"q": 0.8}, p95=5, mb=10),
    ]
    assert pareto_front(configs) == ["best", "fast", "small"]


def test_near_ties_go_to_the_cheaper_configuration() -> None:
    a = cfg("big", {"q": 0.80001}, mb=10)
    b = cfg("small", {"q": 0.8}, mb=1)
    assert best([a, b]) is b
    assert best([cfg("better", {"q": 0.81}, mb=10), b]).id == "better"


def test_folds_cover_every_query_once_and_repeat() -> None:
    ids = [f"q{i}" for i in range(23)]
    folds = folds_of(ids, 5)
    assert sorted(q for f in folds for q in f) == sorted(ids)
    assert folds == folds_of(ids, 5) and max(map(len, folds)) - min(map(len, folds)) <= 1


def test_cross_validation_reports_held_out_not_training_scores() -> None:
    ids = [f"q{i}" for i in range(10)]
    # "lucky" is perfect on half the queries and 0 elsewhere; "steady" is 0.6 everywhere
    lucky = cfg("lucky", {q: (1.0 if i % 2 else 0.0) for i, q in enumerate(ids)})
    steady = cfg("steady", dict.fromkeys(ids, 0.6))
    cv = cross_validate([lucky, steady], ids, 5, "dense")
    assert cv is not None and cv.folds == 5 and len(cv.per_fold) == 5
    assert sum(f.n_held_out for f in cv.per_fold) == 10
    for fold in cv.per_fold:
        chosen = lucky if fold.chosen == "lucky" else steady
        held = folds_of(ids, 5)[fold.fold]
        assert fold.held_out_ndcg == pytest.approx(
            sum(chosen.per_query_ndcg[q] for q in held) / len(held)
        )
    assert cv.held_out_ndcg == pytest.approx(
        sum(f.held_out_ndcg * f.n_held_out for f in cv.per_fold) / 10
    )
    assert cross_validate([], ids, 5, "none") is None


def test_recommendation_obeys_constraints() -> None:
    configs = [
        cfg("slow-best", {"q": 0.9}, p95=50, mb=100, recall=0.99),
        cfg("fast-ok", {"q": 0.85}, p95=2, mb=100, recall=0.95),
        cfg("small-ok", {"q": 0.8}, p95=2, mb=5, recall=0.9),
    ]
    assert recommend(configs, Constraints(), None).config == "slow-best"
    assert recommend(configs, Constraints(max_latency_ms=10), None).config == "fast-ok"
    limited = recommend(configs, Constraints(max_latency_ms=10, max_memory_mb=10), None)
    assert limited.config == "small-ok" and limited.feasible == 1
    assert recommend(configs, Constraints(min_recall=0.96), None).config == "slow-best"
    none = recommend(configs, Constraints(max_memory_mb=1), None)
    assert none.config is None and "relax" in none.reason


def test_grid_rejects_unknown_axes() -> None:
    with pytest.raises(ValueError, match="extra"):
        Grid.model_validate(DEFAULT_GRID.model_dump() | {"colour": 1})


def test_scatter_plot_marks_front_and_choice() -> None:
    from ragsonde.tune.html import scatter_svg

    configs = [
        cfg("a", {"q": 0.9}, mb=10),
        cfg("b", {"q": 0.8}, mb=0.3),
        cfg("c <x>", {"q": 0.7}, mb=5),
    ]
    svg = scatter_svg(configs, lambda c: c.vector_memory_mb, "MB", {"a", "b"}, "b")
    assert svg.startswith("<svg") and svg.count("<circle") == 4  # three dots + one ring
    assert svg.count('fill="#1f6feb"') == 2 and "(log)" in svg  # 10 / 0.3 > 20: log axis
    assert "c &lt;x&gt;" in svg and "<x>" not in svg
    assert scatter_svg([], lambda c: 0.0, "MB", set(), None) == ""


def test_cross_validation_reports_its_standard_error_and_spread_over_fold_splits() -> None:
    ids = [f"q{i}" for i in range(40)]
    rng = random.Random(7)
    configs = [cfg(f"c{j}", {q: rng.random() for q in ids}) for j in range(6)]
    cv = cross_validate(configs, ids, 5, "dense")
    assert cv is not None and cv.spread is not None and cv.held_out_se is not None
    held = {q: 0.0 for q in ids}
    for fold in cv.per_fold:
        chosen = next(c for c in configs if c.id == fold.chosen)
        for q in folds_of(ids, 5)[fold.fold]:
            held[q] = chosen.per_query_ndcg[q]
    values = list(held.values())
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    assert cv.held_out_se == pytest.approx(sd / len(values) ** 0.5)
    # the spread repeats the same selection (``best`` on the training folds) on other splits
    figures = []
    for seed in range(SEED + 1, SEED + 11):
        folds = folds_of(ids, 5, seed)
        scores = []
        for i, held_out in enumerate(folds):
            train = [q for j, f in enumerate(folds) if j != i for q in f]
            chosen = best(configs, train)
            assert chosen is not None
            scores += [chosen.per_query_ndcg[q] for q in held_out]
        figures.append(sum(scores) / len(scores))
    assert cv.spread.splits == 10
    assert cv.spread.mean == pytest.approx(sum(figures) / 10)
    assert (cv.spread.min, cv.spread.max) == (
        pytest.approx(min(figures)),
        pytest.approx(max(figures)),
    )
    assert cv.spread.max > cv.spread.min  # random configurations: one split is one draw
    quiet = cross_validate(configs, ids, 5, "dense", spread_splits=0)
    assert quiet is not None and quiet.spread is None
