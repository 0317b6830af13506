"""``tune`` on a German collection: its BM25 variants are re-encoded in the language the collection
records, ``--save-config`` writes that language, and a contradicting setting is refused. A tiny
German BEIR corpus, the real model and real embedded collections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.config import Settings, load_settings
from ragsonde.embedders.base import Embedder
from ragsonde.errors import QueryValidationError
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.tune import Grid, TuneOptions, save_config, tune
from ragsonde.tune.grid import hybrid
from ragsonde.tune.variants import Bm25Params, Hnsw, Quantization

pytestmark = pytest.mark.slow

_CORPUS = {
    "wohnen": ("Wohnen", "Die Familien wohnen seit Jahren in alten Häusern am Fluss."),
    "schule": ("Schule", "Den Kindern gefällt der Unterricht in der neuen Schule."),
    "verkehr": ("Verkehr", "Züge und Busse fahren täglich über die Brücke in die Stadt."),
    "garten": ("Garten", "Im Frühling blühen die Blumen in den Gärten der Nachbarn."),
    "arbeit": ("Arbeit", "Viele Menschen arbeiten in Büros und fahren abends nach Hause."),
    "essen": ("Essen", "Zum Frühstück gibt es Brot mit Käse und frischen Äpfeln."),
}
# each query's word meets its document's only when both are stemmed in German (English query
# tokens meet no German-stemmed document term at all)
_QUERIES = {
    "q1": ("Kinder", "schule"),
    "q2": ("Blume", "garten"),
    "q3": ("Brücken", "verkehr"),
    "q4": ("Menschen", "arbeit"),
}
# linear fusion weighing BM25 alone: the sweep's ranking is its BM25 queries'
GRID = Grid(
    quantization=[Quantization()],
    hnsw=[Hnsw()],
    hnsw_ef=[64],
    fusion=[hybrid("linear", prefetch=10, fusion_weights=(0.0, 1.0))],
    bm25=[Bm25Params(k1=0.9, b=0.4)],
)


def _beir(folder: Path) -> Path:
    folder.mkdir()
    lines = [json.dumps({"_id": i, "title": t, "text": x}) for i, (t, x) in _CORPUS.items()]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = [json.dumps({"_id": q, "text": t}) for q, (t, _) in _QUERIES.items()]
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "qrels").mkdir()
    rows = [f"{q}\t{d}\t1" for q, (_, d) in _QUERIES.items()]
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n", encoding="utf-8"
    )
    return folder


def test_tune_re_encodes_in_the_collections_language_and_saves_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    dataset = _beir(tmp_path / "beir")
    settings = Settings(home=tmp_path / "home", collection="de")
    opts = IngestOptions(sparse=True, bm25=Bm25Params(language="german"))
    ingest(str(dataset), fmt="beir", settings=settings, embedder=embedder, options=opts)

    report = tune(
        dataset,
        settings=settings,
        embedder=embedder,
        options=TuneOptions(grid=GRID, folds=2, modes=("hybrid",)),
    )
    labels = [v.label for v in report.variants]
    assert "none/m16-efc100/bm25-k0.9-b0.4-german" in labels, labels
    assert not any(label.endswith("bm25-k0.9-b0.4") for label in labels)
    [chosen] = [
        c for c in report.configurations if c.variant.endswith("-german") and c.aggregation.n == 1
    ]
    # the queries are encoded in German too: every one finds its document first, in the
    # collection as ingested and in the re-encoded variant
    hybrid = [c for c in report.configurations if c.mode == "hybrid" and c.aggregation.n == 1]
    assert len(hybrid) == 2 and all(c.ndcg == pytest.approx(1.0) for c in hybrid)
    path = tmp_path / "tuned.toml"
    values = save_config(report, path, config_id=chosen.id)
    assert values["index"]["bm25_language"] == "german"
    assert load_settings(config=path).bm25_params == Bm25Params(k1=0.9, b=0.4, language="german")

    contrary = settings.model_copy(
        update={"index": settings.index.overlay({"bm25_language": "english"})}
    )
    with pytest.raises(QueryValidationError, match=r"built for german.*is english"):
        tune(
            dataset,
            settings=contrary,
            embedder=embedder,
            options=TuneOptions(grid=GRID, folds=2, modes=("hybrid",)),
        )
