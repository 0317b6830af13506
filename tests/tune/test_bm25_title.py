"""The BM25 title weight in ``tune``: the grid axis, its file form, and the sweep, which measures
it where chunks have titles and says why it cannot where they have none."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragsonde.config import Settings, load_settings
from ragsonde.embedders.sparse import Bm25Encoder
from ragsonde.errors import QueryValidationError
from ragsonde.ingest.pipeline import bm25_reencoder
from ragsonde.store import open_store
from ragsonde.tune import Grid, TuneOptions, TuneReport, save_config, tune
from ragsonde.tune.grid import DEFAULT_GRID, hybrid, load_grid
from ragsonde.tune.variants import Bm25Params, Hnsw, Quantization, build_tuned_copy


def test_default_grid_sweeps_a_title_weight() -> None:
    assert [p.label for p in DEFAULT_GRID.bm25] == [
        "bm25-k0.9-b0.4",
        "bm25-k1.2-b0.75-t2",
        "bm25-k0.9-b0.4-t2",
    ]
    assert [s.label for s in DEFAULT_GRID.bm25_variants()][
        -1
    ] == "none/m16-efc100/bm25-k0.9-b0.4-t2"


def test_grid_file_with_a_title_weight(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    path.write_text("bm25 = [{k1 = 0.9, b = 0.4}, {k1 = 0.9, b = 0.4, title_weight = 3}]\n")
    assert load_grid(path).bm25 == [
        Bm25Params(k1=0.9, b=0.4),
        Bm25Params(k1=0.9, b=0.4, title_weight=3),
    ]


@pytest.mark.parametrize("weight", [6, -1, 1.5])
def test_a_bad_title_weight_is_a_validation_error_naming_the_field(
    tmp_path: Path, weight: float
) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(f"bm25 = [{{k1 = 0.9, b = 0.4, title_weight = {weight}}}]\n")
    with pytest.raises(QueryValidationError, match=r"bm25\.0\.title_weight") as err:
        load_grid(path)
    assert err.value.code.value == "VALIDATION_ERROR"


GRID = Grid(
    quantization=[Quantization()],
    hnsw=[Hnsw()],
    hnsw_ef=[64],
    fusion=[hybrid("dbsf", prefetch=100)],
    bm25=[Bm25Params(k1=0.9, b=0.4), Bm25Params(k1=0.9, b=0.4, title_weight=2)],
)


def _tune(home: Path, collection: str, dataset: Path, embedder) -> TuneReport:
    settings = Settings(home=home, collection=collection)
    return tune(
        dataset, settings=settings, embedder=embedder, options=TuneOptions(grid=GRID, folds=3)
    )


def _hybrid_ndcg(report: TuneReport, bm25: str) -> float:
    [config] = [c for c in report.configurations if c.mode == "hybrid" and c.variant.endswith(bm25)]
    return config.ndcg


@pytest.mark.slow
def test_tune_measures_the_title_weight_only_where_chunks_have_titles(
    slice_home: Path, scifact_slice: Path, embedder, tmp_path: Path
) -> None:
    # the slice's points carry no `title`: the weight would change nothing, and is skipped
    untitled = _tune(slice_home, "slice", scifact_slice, embedder)
    labels = [v.label for v in untitled.variants]
    assert "none/m16-efc100/bm25-k0.9-b0.4" in labels
    assert not any(label.endswith("-t2") for label in labels)
    [note] = [w for w in untitled.warnings if "title weight" in w]
    assert "no `title` payload: BM25 title weight not measurable" in note
    assert "bm25-k0.9-b0.4-t2" in note

    # the same points with their documents' titles: the weighted variant is built and ranks
    # otherwise than its unweighted twin
    titles = {
        row["_id"]: row["title"]
        for row in map(json.loads, (scifact_slice / "corpus.jsonl").read_text().splitlines())
    }
    source = open_store(Settings(home=slice_home))
    try:
        points = [p for batch in source.scroll("slice", with_vectors=True) for p in batch]
        info = source.collection_info("slice")
    finally:
        source.close()
    home = tmp_path / "home"
    target = open_store(Settings(home=home))
    try:
        target.create_collection(
            "titled",
            info.dimension,
            sparse_vector_name=info.sparse_vector_name,
            indexed_fields={"doc_id": "keyword"},
        )
        target.upsert(
            "titled",
            [
                replace(p, payload={**p.payload, "title": titles[p.payload["doc_id"]]})
                for p in points
            ],
        )
        target.build_index("titled")
    finally:
        target.close()
    titled = _tune(home, "titled", scifact_slice, embedder)
    assert not any("title weight" in w for w in titled.warnings)
    assert "none/m16-efc100/bm25-k0.9-b0.4-t2" in [v.label for v in titled.variants]
    # without the weight, the titles change nothing: the same vectors, the same ranking
    assert _hybrid_ndcg(titled, "bm25-k0.9-b0.4") == pytest.approx(
        _hybrid_ndcg(untitled, "bm25-k0.9-b0.4")
    )
    weighted = [c for c in titled.configurations if c.variant.endswith("-t2")]
    plain = {
        c.id.replace("-t2", ""): c for c in titled.configurations if not c.variant.endswith("-t2")
    }
    assert weighted and all(c.mode == "hybrid" for c in weighted)
    assert any(c.per_query_ndcg != plain[c.id.replace("-t2", "")].per_query_ndcg for c in weighted)

    # --save-config writes the weight as a build key, which settings read back
    [chosen] = [c for c in weighted if c.aggregation.n == 1]
    path = tmp_path / "tuned.toml"
    values = save_config(titled, path, config_id=chosen.id)
    assert values["index"]["bm25_title_weight"] == 2
    assert load_settings(config=path).bm25_params == Bm25Params(k1=0.9, b=0.4, title_weight=2)
    # --apply builds the copy with the titles weighed in
    spec = titled.variant(chosen.variant).spec
    assert spec.bm25 is not None
    store = open_store(Settings(home=home))
    try:
        build_tuned_copy(store, "titled", "applied", spec, reencode=bm25_reencoder(spec.bm25))
        before = {p.id: p for b in store.scroll("titled", with_vectors=True) for p in b}
        after = {p.id: p.sparse for b in store.scroll("applied", with_vectors=True) for p in b}
    finally:
        store.close()
    assert after.keys() == before.keys()
    ids = list(before)
    twin = bm25_reencoder(Bm25Params(k1=0.9, b=0.4))([before[p].payload for p in ids])
    titles_terms = Bm25Encoder().embed_queries([str(before[p].payload["title"]) for p in ids])
    for pid, plain, terms in zip(ids, twin, titles_terms, strict=True):
        new, old = (dict(zip(v.indices, v.values, strict=True)) for v in (after[pid], plain))
        assert terms.indices and all(new[t] > old[t] for t in terms.indices)
