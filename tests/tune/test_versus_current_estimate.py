"""Tune's verdict against the current configuration on a partly labelled benchmark: "adopt"
rests on the PPI++ interval of the held-out gain over every query, reported with how many
labelled queries it rests on. The SciFact slice of the tune tests, the real model and engine."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.tune import Grid, TuneOptions, tune
from ragsonde.tune.grid import Aggregation, hybrid
from ragsonde.tune.variants import Hnsw, Quantization
from tests.tune.support import SLICE_QUERIES

pytestmark = pytest.mark.slow
LABELLED = 15

#: Two configurations far apart (plain dense, and an RRF hybrid), so the gain can go either way.
TINY = Grid(
    quantization=[Quantization()],
    hnsw=[Hnsw()],
    hnsw_ef=[64],
    rescore=[True],
    fusion=[hybrid("rrf", rrf_k=60)],
    aggregation=[Aggregation()],
)


def _partly(slice_dir: Path, folder: Path) -> Path:
    """The slice as a ragsonde benchmark, ``relevant`` kept on its first LABELLED queries."""
    grades: dict[str, dict[str, int]] = {}
    for line in (slice_dir / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        grades.setdefault(q, {})[d] = int(g)
    queries = [json.loads(x) for x in (slice_dir / "queries.jsonl").read_text().splitlines() if x]
    rows = [{"query_id": q["_id"], "query": q["text"]} for q in queries if q["_id"] in grades]
    for row in rows[:LABELLED]:
        row["relevant"] = grades[row["query_id"]]
    path = folder / "partly.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _runs(history: Path) -> int:
    """The runs recorded in ``history`` (0 when there is none yet)."""
    import sqlite3

    if not history.exists():
        return 0
    with contextlib.closing(sqlite3.connect(history)) as db:
        return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])


def test_adopt_rests_on_the_ppi_interval_of_the_held_out_gain(
    slice_home: Path, scifact_slice: Path, embedder, tmp_path: Path
) -> None:
    bench = _partly(scifact_slice, tmp_path)
    history = slice_home / "history.sqlite"
    runs_before = _runs(history)
    report = tune(
        bench,
        settings=Settings(home=slice_home, collection="slice"),
        embedder=embedder,
        options=TuneOptions(grid=TINY, folds=3),
    )
    assert _runs(history) == runs_before  # its yardstick eval is not an eval run of the user's
    assert report.n_queries == LABELLED  # tune chooses on the labelled queries
    vs = report.versus_current
    assert vs is not None
    c = vs.comparison
    assert c.wins + c.ties + c.losses == LABELLED  # the paired tests: the labelled queries
    p = c.ppi
    assert p is not None
    if c.ties < LABELLED:
        assert (p.n_labeled, p.n_predicted) == (LABELLED, SLICE_QUERIES - LABELLED)
        assert p.sources == ["current ranking's signals"]
    else:  # a gain of 0 on every label: the exact bound, from the labels alone
        bound = 1 - 0.025 ** (1 / LABELLED)
        assert (p.n_labeled, p.n_predicted, p.method) == (LABELLED, 0, "classical")
        assert (p.low, p.high) == pytest.approx((-bound, bound))
    # the classical side of the estimate is the labelled queries' mean gain
    assert p.classical.estimate == pytest.approx(c.delta, abs=1e-9)
    assert c.classical is not None and c.classical.estimate == pytest.approx(c.delta, abs=1e-9)
    # "adopt" when, and only when, the interval of the gain over every query is above 0
    assert (vs.verdict == "adopt") is (p.low > 0)
    assert c.significant is (p.low > 0 or p.high < 0)
    assert f"{LABELLED} labelled queries" in vs.reason
    assert f"{p.low:+.4f} to {p.high:+.4f}" in vs.reason
    assert np.isfinite([p.low, p.high]).all() and p.low <= p.estimate <= p.high


def test_a_benchmark_with_llm_labels_keeps_the_paired_tests(
    slice_home: Path, scifact_slice: Path, embedder, tmp_path: Path
) -> None:
    """Tune scores with an LLM's labels as ``relevant`` says; an estimate never takes them as
    gold: the two sides would differ, so the verdict stays the paired tests'."""
    from ragsonde.labels import BenchmarkEntry, Label, write_entries

    rows = [json.loads(x) for x in _partly(scifact_slice, tmp_path).read_text().splitlines()]
    entries = []
    for row in rows:
        if "relevant" in row:
            labels = [Label(id=d, grade=g, source="human", judge="qrels")
                      for d, g in row["relevant"].items()]  # fmt: skip
            entries.append(BenchmarkEntry(**row, labels=labels))
        else:  # judged by an LLM only: grade 2 on the corpus's first document
            labels = [Label(id="4983", grade=2, source="llm", judge="local:x")]
            entries.append(BenchmarkEntry(**row, relevant={"4983": 2}, labels=labels))
    bench = tmp_path / "judged.jsonl"
    write_entries(bench, entries)
    report = tune(bench, settings=Settings(home=slice_home, collection="slice"),
                  embedder=embedder, options=TuneOptions(grid=TINY, folds=3))  # fmt: skip
    assert report.n_queries == SLICE_QUERIES  # tune takes the LLM's labels as relevant
    vs = report.versus_current
    assert vs is not None and vs.comparison.ppi is None
    assert vs.comparison.wins + vs.comparison.ties + vs.comparison.losses == SLICE_QUERIES
    c = vs.comparison
    assert (vs.verdict == "adopt") is (c.significant and c.delta > 0)
