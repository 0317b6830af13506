"""The chunking sweep on real data: Chroma's state_of_the_union corpus and its 76 span-labelled
questions, the real model, the real embedded store.

The span metrics are checked against an independent implementation of the definitions in
``../shared/data/chunking/README.md``, written here from the README alone (sets of character
positions, nothing imported from ragsonde), on the sweep's own retrieved lists.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jsonschema
import pytest

from ragsonde.chunking import ChunkingReport, SweepOptions, parse_configs, sweep_chunking
from ragsonde.chunking.report import SCHEMA_FILE, schema_text
from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.workspace import Workspace
from tests.support import CHUNKING

pytestmark = pytest.mark.slow

CORPUS = "state_of_the_union"
CONFIGS = ("ragsonde", "recursive 200/0", "fixed 200/100")


def sotu_questions(path: Path) -> Path:
    """The CSV's questions on one corpus, as ragsonde rows with ``references``."""
    rows = []
    with (CHUNKING / "questions.csv").open(encoding="utf-8", newline="") as f:
        for n, row in enumerate(csv.DictReader(f), start=1):
            if row["corpus_id"] != CORPUS:
                continue
            refs = [
                {"doc_id": CORPUS, "start": r["start_index"], "end": r["end_index"]}
                for r in json.loads(row["references"])
            ]
            rows.append({"query_id": str(n), "query": row["question"], "references": refs})
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def setup(tmp_path_factory, embedder):
    if not (CHUNKING / "questions.csv").is_file():
        pytest.skip(f"chunking data not found at {CHUNKING}")
    root = tmp_path_factory.mktemp("chunking")
    bench = sotu_questions(root / "sotu.jsonl")
    settings = Settings(home=root / "home", collection="mine")
    return root, bench, settings


def run(setup, embedder, **kw) -> ChunkingReport:
    _, bench, settings = setup
    options = SweepOptions(configs=tuple(parse_configs(list(CONFIGS))), **kw)
    with Workspace(settings, embedder=embedder) as ws:
        return sweep_chunking(
            str(CHUNKING / "corpora" / f"{CORPUS}.md"), bench, options=options, workspace=ws
        )


@pytest.fixture(scope="module")
def report(setup, embedder) -> ChunkingReport:
    from ragsonde.ingest import ingest

    root, _, settings = setup
    # the user's own collection: the sweep must leave it as it is
    mine = root / "mine.jsonl"
    mine.write_text(json.dumps({"id": "x", "text": "The user's own document."}), encoding="utf-8")
    ingest(str(mine), settings=settings, embedder=embedder)
    return run(setup, embedder)


# -- the definitions, again, from the README alone ---------------------------------------------
def positions(spans) -> set[tuple[str, int]]:
    return {(s["doc_id"], i) for s in spans for i in range(s["start"], s["end"])}


def chroma(references, retrieved, chunking):
    """recall, precision, IoU of ``retrieved``; precision_Ω over ``chunking``."""
    r = positions(references)
    got = positions(retrieved)
    hit = len(r & got)
    total = sum(c["end"] - c["start"] for c in retrieved)
    recall = hit / len(r)
    precision = hit / total if total else 0.0
    iou = hit / (total + len(r - got))
    omega = [c for c in chunking if positions([c]) & r]
    omega_total = sum(c["end"] - c["start"] for c in omega)
    p_omega = len(r & positions(omega)) / omega_total if omega_total else 0.0
    return recall, precision, iou, p_omega


def test_span_metrics_agree_with_an_independent_implementation(report):
    doc = report.model_dump(mode="json")
    k, budget = doc["k"], doc["token_budget"]
    checked = 0
    for config in doc["configurations"]:
        for qid, row in config["per_question"].items():
            refs = doc["references"][qid]
            m = row["metrics"]
            fit = int(m["chunks@budget"])
            for cut, suffix in ((k, str(k)), (fit, f"{budget}t")):
                recall, precision, iou, p_omega = chroma(
                    refs, row["retrieved"][:cut], config["chunks"]
                )
                assert m[f"span_recall@{suffix}"] == pytest.approx(recall, abs=1e-9)
                assert m[f"span_precision@{suffix}"] == pytest.approx(precision, abs=1e-9)
                assert m[f"span_iou@{suffix}"] == pytest.approx(iou, abs=1e-9)
                assert m["span_precision_omega"] == pytest.approx(p_omega, abs=1e-9)
                checked += 1
    assert checked == 2 * 76 * len(CONFIGS)


def test_the_report_per_configuration(report):
    assert [c.label for c in report.configurations] == list(CONFIGS)
    assert report.exact and len(report.questions) == 76
    for c in report.configurations:
        assert c.costs.points == len(c.chunks) > 20
        assert c.costs.vector_memory_mb == pytest.approx(c.costs.points * 384 * 4 / 1e6, abs=1e-3)
        assert 0 < c.costs.search_p50_ms <= c.costs.search_p95_ms
        assert 0 < c.lengths.p5 <= c.lengths.p50 <= c.lengths.p95 <= c.lengths.max
        assert 0.5 < c.metrics["span_recall@5"] <= 1.0
        assert c.metrics["ndcg@10"] == 1.0  # one document: it is always found
        # the document metrics are real: a chunk list of the only document
        assert all(r.retrieved for r in c.per_question.values())
    fixed = report.config("fixed 200/100")
    assert fixed.lengths.p50 == 200 and fixed.lengths.over_window == 0
    # 200-token windows 100 apart: every character but the first and last window's is in two
    assert fixed.costs.points == pytest.approx(
        2 * report.config("recursive 200/0").costs.points, rel=0.25
    )
    best = max(report.configurations, key=lambda c: c.metrics[report.primary])
    assert report.best == best.label and best.versus_best is None
    for c in report.configurations:
        if c is not best:
            assert c.versus_best is not None and c.versus_best.mean_a == pytest.approx(
                best.metrics[report.primary], abs=1e-6
            )
    assert report.recommended in {c.label for c in report.configurations}


def test_the_chunks_are_spans_of_the_document(report):
    text = (CHUNKING / "corpora" / f"{CORPUS}.md").read_text(encoding="utf-8")
    for c in report.configurations:
        assert all(0 <= s.start < s.end <= len(text) for s in c.chunks)
        covered = set()
        for s in c.chunks:
            covered.update(range(s.start, s.end))
        # every non-blank character is in some chunk
        assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_the_users_collection_is_untouched(report, setup, embedder):
    _, _, settings = setup
    with Workspace(settings, embedder=embedder) as ws:
        assert ws.store.list_collections() == ["mine"]
        assert ws.store.count("mine") == 1


def test_json_matches_its_schema(report):
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "regenerate: python -m ragsonde.chunking.report"
    )
    jsonschema.validate(report.model_dump(mode="json"), json.loads(schema_text()))


def test_a_rerun_reads_every_configuration_back(report, setup, embedder):
    again = run(setup, embedder)
    assert again.resumed == list(CONFIGS)
    for a, b in zip(report.configurations, again.configurations, strict=True):
        assert a.metrics == b.metrics and a.costs == b.costs


def test_a_stopped_sweep_resumes_without_embedding_again(report, setup, embedder):
    _, _, settings = setup
    saved = next((settings.home / "chunking" / "runs").glob("*/fixed-200-100.json"))
    saved.unlink()  # as if the sweep had stopped before finishing it
    again = run(setup, embedder)
    assert again.resumed == ["ragsonde", "recursive 200/0"]
    redone = again.config("fixed 200/100")
    assert redone.costs.cached_chunks == redone.costs.points  # nothing embedded again
    assert redone.metrics == report.config("fixed 200/100").metrics


def test_a_benchmark_without_spans_is_refused(setup, embedder, tmp_path):
    bench = tmp_path / "docs.jsonl"
    bench.write_text(json.dumps({"query": "q", "relevant": [CORPUS]}), encoding="utf-8")
    with pytest.raises(QueryValidationError, match="labels no answer by span"):
        run((setup[0], bench, setup[2]), embedder)


def test_the_cli_reads_the_sweep_back_and_ingest_uses_its_choice(report, setup, embedder):
    """``ragsonde chunking`` (the finished configurations read back: same inputs), its JSON,
    HTML plot and saved choice; ``ragsonde ingest --chunking`` chunks with that choice."""
    from typer.testing import CliRunner

    import ragsonde.cli
    from ragsonde.cli.app import app

    root, bench, settings = setup
    ragsonde.cli._register()
    env = {"RAGSONDE_HOME": None, "QDRANT_URL": None, "RAGSONDE_QDRANT_URL": None}
    corpus = str(CHUNKING / "corpora" / f"{CORPUS}.md")
    grid = [a for c in CONFIGS for a in ("-g", c)]
    toml, html = root / "chunking.toml", root / "chunking.html"
    home = ["--home", str(settings.home)]
    files = ["--save-config", str(toml), "--html", str(html)]
    out = CliRunner().invoke(
        app, ["chunking", corpus, str(bench), *grid, *home, "--json", *files], env=env
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["resumed"] == list(CONFIGS)
    assert doc["recommended"] == report.recommended
    assert "<svg" in html.read_text(encoding="utf-8")
    saved = toml.read_text(encoding="utf-8")
    assert "[chunking]" in saved and 'splitter = "' in saved
    table = CliRunner().invoke(app, ["chunking", corpus, str(bench), *grid, *home], env=env)
    assert table.exit_code == 0, table.output
    assert "recommended:" in table.stdout and "fixed 200/100" in table.stdout

    out = CliRunner().invoke(
        app, ["ingest", corpus, "-c", "chosen", "--chunking", str(toml), *home], env=env
    )
    assert out.exit_code == 0, out.output
    chosen = report.config(report.recommended)
    with Workspace(settings, embedder=embedder) as ws:
        points = [p for batch in ws.store.scroll("chosen") for p in batch]
    text = (CHUNKING / "corpora" / f"{CORPUS}.md").read_text(encoding="utf-8")
    assert all(text[p.payload["start"] : p.payload["end"]] == p.payload["text"] for p in points)
    if chosen.config.splitter != "ragsonde":  # ingest's own reserves room for its title line
        assert abs(len(points) - chosen.costs.points) <= 0.2 * chosen.costs.points


def test_references_past_the_end_of_their_document_are_refused(setup, embedder, tmp_path):
    bench = tmp_path / "far.jsonl"
    refs = [{"doc_id": CORPUS, "start": 10, "end": 10**7}]
    bench.write_text(json.dumps({"query": "q", "references": refs}), encoding="utf-8")
    with pytest.raises(QueryValidationError, match="end past the text"):
        run((setup[0], bench, setup[2]), embedder)
