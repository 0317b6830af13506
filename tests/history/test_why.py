"""``history diff`` says why a query flipped, from ``eval --explain`` data, and only from it.

On a copy of the sample collection: a baseline ``eval --explain``, then the same eval with a
score threshold set just above the score of the relevant document of the query the baseline
held least surely (computed from the baseline's own run, so exactly those queries must go from
hit to miss), with and without ``--explain``. The miss ladder blames the threshold; the diff
names the stage, the field that changed and the evidence, both ways round, and says nothing
when the run that missed was not explained.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.evaluate.misses import STAGES
from ragsonde.evaluate.schema import get_schema
from ragsonde.history.models import Fingerprint
from ragsonde.history.why import STAGE_FIELDS, bears_on
from ragsonde.samples import robotics_benchmark
from tests.support import Cli


@dataclass(frozen=True)
class Threshold:
    history: Path
    runs: dict[str, int]
    threshold: float
    lost: set[str]  # the queries the threshold must turn from hit to miss


def _least_sure(report: dict[str, Any]) -> tuple[float, set[str]]:
    """A threshold just above the lowest best score of a relevant document within the top 10
    among the queries that hit, and the queries it must lose."""
    best = {
        qid: max(score for doc, score in row["retrieved"][:10] if doc in row["relevant"])
        for qid, row in report["per_query"].items()
        if any(doc in row["relevant"] for doc, _ in row["retrieved"][:10])
    }
    low, above = sorted(set(best.values()))[:2]
    threshold = round((low + above) / 2, 6)
    return threshold, {q for q, s in best.items() if s < threshold}


@pytest.fixture(scope="module")
def thresholded(cli: Cli, sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Threshold:
    root = tmp_path_factory.mktemp("why")
    home = root / "home"
    shutil.copytree(sample_home, home, ignore=shutil.ignore_patterns("history.sqlite*"))
    history = root / "history.sqlite"
    where = ("-c", "robotics", "--home", str(home), "--history", str(history))

    def run(*args: str) -> dict[str, Any]:
        r = cli("eval", str(robotics_benchmark()), *where, "--no-throughput", "--json", *args)
        assert r.exit_code == 0, r.output
        return dict(json.loads(r.stdout))

    explain = ("--explain", "--explain-k", "10")
    base = run(*explain)
    threshold, lost = _least_sure(base)
    explained = run("--threshold", str(threshold), *explain)
    plain = run("--threshold", str(threshold))
    listed = cli("history", "list", "--history", str(history), "--json")
    ids = [r["run_id"] for r in json.loads(listed.stdout)["runs"]]
    assert len(ids) == 3 and explained["search"]["score_threshold"] == threshold
    assert plain["misses"] is None and explained["misses"] is not None
    runs = dict(zip(("base", "explained", "plain"), ids, strict=True))
    return Threshold(history, runs, threshold, lost)


def _diff(cli: Cli, t: Threshold, a: str, b: str, *more: str) -> Any:
    args = ("history", "diff", str(t.runs[a]), str(t.runs[b]), "--history", str(t.history))
    r = cli(*args, *more)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout) if "--json" in more else r.stdout


def test_a_lost_query_says_which_stage_and_which_change(cli: Cli, thresholded: Threshold):
    t = thresholded
    diff = _diff(cli, t, "base", "explained", "--json")
    jsonschema.Draft202012Validator(get_schema("history-diff")).validate(diff)
    assert [c["field"] for c in diff["changes"]] == ["search.score_threshold"]
    flips = {f["query_id"]: f for f in diff["flips"]}
    assert {q for q, f in flips.items() if f["direction"] == "lost"} == t.lost
    for qid in t.lost:
        (why,) = flips[qid]["why"]  # one relevant document each, missed by the threshold
        assert why["run_id"] == t.runs["explained"] and why["stage"] == "threshold"
        assert why["changes"] == [{"field": "search.score_threshold", "a": 0.0, "b": t.threshold}]
        assert why["evidence"]["threshold"] == t.threshold
        assert why["evidence"]["score"] < t.threshold
    text = _diff(cli, t, "base", "explained")
    qid = sorted(t.lost)[0]
    assert f"{qid}: hit → miss" in text
    assert (
        f"why (run {t.runs['explained']}): doc {flips[qid]['why'][0]['doc_id']}: `threshold` "
        f"miss after search.score_threshold: 0.0 -> {t.threshold}"
    ) in text


def test_a_gained_query_reads_the_run_where_it_missed(cli: Cli, thresholded: Threshold):
    t = thresholded
    diff = _diff(cli, t, "explained", "base", "--json")
    gained = [f for f in diff["flips"] if f["direction"] == "gained"]
    assert {f["query_id"] for f in gained} == t.lost
    for f in gained:
        assert [(w["run_id"], w["stage"]) for w in f["why"]] == [(t.runs["explained"], "threshold")]
        assert f["why"][0]["changes"][0]["b"] == 0.0
    assert "was a `threshold` miss until search.score_threshold" in _diff(
        cli, t, "explained", "base"
    )


def test_without_explain_data_the_diff_says_nothing(cli: Cli, thresholded: Threshold):
    t = thresholded
    diff = _diff(cli, t, "base", "plain", "--json")
    lost = [f for f in diff["flips"] if f["direction"] == "lost"]
    assert {f["query_id"] for f in lost} == t.lost
    assert all(f["why"] == [] for f in diff["flips"])
    assert "why" not in _diff(cli, t, "base", "plain")


def test_every_stage_names_fields_a_fingerprint_has():
    """A new stage of the ladder cannot be forgotten, and no entry names a field that does
    not exist (a misspelt prefix would silently never match)."""
    from ragsonde.evaluate.report import SearchInfo
    from ragsonde.history.models import BenchmarkPart, EmbedderPart, IndexPart
    from ragsonde.models.index import Hnsw, Quantization
    from ragsonde.models.params import SearchParams

    assert set(STAGE_FIELDS) == set(STAGES)
    known = {
        *(f"search.{n}" for n in (*SearchParams.model_fields, *SearchInfo.model_fields)),
        *(f"index.{n}" for n in IndexPart.model_fields),
        *(f"index.hnsw.{n}" for n in Hnsw.model_fields),
        *(f"index.quantization.{n}" for n in Quantization.model_fields),
        *(f"embedder.{n}" for n in EmbedderPart.model_fields),
        *(f"benchmark.{n}" for n in BenchmarkPart.model_fields),
        "content.sampled",
        "content.sample_sha256",
    }
    assert set(Fingerprint.model_fields) == {
        "search", "index", "embedder", "chunking", "content", "benchmark", "code"
    }  # fmt: skip
    for stage, entries in STAGE_FIELDS.items():
        for entry in entries:
            if entry == "chunking.":  # the block the collection records, free form
                continue
            assert any(bears_on(stage, f) for f in known if f.startswith(entry)), (stage, entry)
    assert bears_on("ann", "index.hnsw.m") and not bears_on("ann", "index.points_count")
    assert bears_on("quantization", "search.quantization_rescore")
    assert not bears_on("threshold", "search.score_threshold_x")


def test_the_page_shows_why_under_the_flip(
    thresholded: Threshold, embedder: OnnxEmbedder, tmp_path: Path
):
    from playwright.sync_api import expect

    from ragsonde.config import Settings
    from ragsonde.retriever import Retriever
    from ragsonde.server import create_app
    from ragsonde.store import open_store
    from tests.browser import chromium_page
    from tests.support import run_server

    t = thresholded
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(t.history, home / "history.sqlite")  # the server's own history file
    settings = Settings(home=home, collection="robotics")
    store = open_store(settings)
    try:
        retriever = Retriever(settings, store=store, embedder=embedder)
        with run_server(create_app(settings, retriever)) as url, chromium_page() as page:
            page.goto(f"{url}/")
            page.click("#show-history")
            for run_id in (t.runs["base"], t.runs["explained"]):
                page.locator(f'circle[data-run="{run_id}"]').click()
            why = page.locator("#history-diff .history-why li")
            expect(why.first).to_contain_text("`threshold` miss after", timeout=30_000)
            assert why.count() == len(t.lost)
            assert f"search.score_threshold: 0 → {t.threshold}" in why.first.text_content()
    finally:
        store.close()
