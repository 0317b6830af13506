"""Collections a plain qdrant-client script wrote, with payloads no framework writes: numeric
document ids kept as integers. Read through local mode (``QDRANT_URL`` a folder), as a user's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragsonde.evaluate import EvalOptions
from ragsonde.workspace import Workspace
from tests.integrations.support import Built, client_collection, titles_benchmark
from tests.support import evaluate_in, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def int_ids(tmp_path_factory, embedder, scifact_rows) -> Built:
    """SciFact abstracts at ``text``, each with its (all-digit) BEIR id as an integer ``doc_id``
    and integer point ids, as ``client.upsert`` writes them from a pandas frame."""
    from qdrant_client import models

    path = tmp_path_factory.mktemp("int_ids") / "qdrant"
    vectors = embedder.embed_documents([r["text"] for r in scifact_rows])
    points = [
        models.PointStruct(
            id=i,
            vector=v.tolist(),
            payload={"text": r["text"], "doc_id": int(r["_id"]), "title": r["title"]},
        )
        for i, (r, v) in enumerate(zip(scifact_rows, vectors, strict=True))
    ]
    cosine = models.VectorParams(size=384, distance=models.Distance.COSINE)
    client_collection(path, "ints", cosine, points)
    return Built("qdrant-client", path, "ints", scifact_rows)


def test_integer_document_ids_are_found_in_the_collection(int_ids: Built, tmp_path: Path):
    """The ids resolve at ``doc_id`` (read as text), so the lookups that follow must find them
    too: they were all 'not in the collection', and the run exited 1 naming a field to set."""
    env = {"QDRANT_URL": str(int_ids.path), "RAGSONDE_HOME": str(tmp_path / "home")}
    bench = titles_benchmark(int_ids, tmp_path)
    res = run(
        "eval", str(bench), "-c", "ints", "--no-throughput", "--by", "title", "--json", env=env
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["relevance_field"]["path"] == "doc_id"
    assert report["benchmark"]["relevant_missing_from_collection"] == []
    assert report["metrics"]["hit_rate@10"] == 1.0
    groups = report["breakdown"]["by"]["groups"]
    assert "(not in collection)" not in groups
    assert set(groups) == {r["title"] for r in int_ids.rows[:6]}


def test_explain_finds_a_document_kept_under_an_integer_id(
    int_ids: Built, embedder, tmp_path: Path
):
    """A miss is blamed on a later stage, not on 'no point carries it' (the probe's filter
    asked for the id as text only)."""
    from ragsonde.explain import explain_query

    first, second = int_ids.rows[0], int_ids.rows[1]
    bench = tmp_path / "miss.jsonl"
    bench.write_text(
        json.dumps({"query_id": "q", "query": first["title"], "relevant": [second["_id"]]}) + "\n",
        encoding="utf-8",
    )
    with Workspace(int_ids.settings(), embedder=embedder) as ws:
        section = explain_query(bench, "q", k=1, workspace=ws)
    (miss,) = section.per_query["q"].misses
    outcomes = {s.stage: s.outcome for s in miss.steps}
    assert outcomes["not_in_collection"] == "passed", miss
    assert miss.stage not in {"not_in_collection", "no_text"}


def test_by_a_field_groups_langchain_queries_by_their_documents(
    langchain_built: Built, embedder, tmp_path: Path
):
    """LangChain keeps the ids at ``metadata.doc_id``: ``--by`` read that as one top-level key,
    found no relevant chunk, and put every query in '(not in collection)'."""
    report = evaluate_in(
        titles_benchmark(langchain_built, tmp_path),
        settings=langchain_built.settings(),
        embedder=embedder,
        options=EvalOptions(k=[10], throughput=False, by="metadata.title"),
    )
    assert report.relevance_field is not None
    assert report.relevance_field.path == "metadata.doc_id"
    assert report.breakdown is not None and report.breakdown.by is not None
    groups: dict[str, Any] = report.breakdown.by.groups
    assert set(groups) == {r["title"] for r in langchain_built.rows[:6]}


def test_tune_reads_document_ids_where_eval_finds_them(
    langchain_built: Built, int_ids: Built, embedder, tmp_path: Path
):
    """tune read a hit's document at the top-level ``doc_id`` only: on LangChain's collection
    (``metadata.doc_id``) every hit was its own document and every configuration scored nDCG@10
    0.0 against eval's 1.0 for the same search, so it advised keeping what you have."""
    from ragsonde.tune import TuneOptions, tune
    from ragsonde.tune.grid import Grid
    from ragsonde.tune.variants import Hnsw, Quantization

    grid = Grid(quantization=[Quantization()], hnsw=[Hnsw()], hnsw_ef=[64], rescore=[True])
    for built in (langchain_built, int_ids):
        bench = titles_benchmark(built, tmp_path, n=8)
        evaluated = evaluate_in(
            bench,
            settings=built.settings(),
            embedder=embedder,
            options=EvalOptions(k=[10], throughput=False),
        )
        tuned = tune(
            bench,
            settings=built.settings(),
            embedder=embedder,
            options=TuneOptions(grid=grid, folds=2, versus_current=False),
        )
        best = max(c.ndcg for c in tuned.configurations)
        assert best == pytest.approx(evaluated.metrics["ndcg@10"], abs=0.05), built.framework
        assert best > 0.5


def test_eval_explain_and_traffic_take_the_vector_their_error_names(
    scifact_rows, embedder, tmp_path: Path
):
    """A collection with two named vectors: the error of ``eval``, ``explain`` and ``traffic``
    said "Choose one with --vector NAME", a flag only ``query``, ``batch`` and ``inspect`` had."""
    from qdrant_client import QdrantClient, models

    folder = tmp_path / "qdrant"
    rows = scifact_rows[:10]
    vectors = embedder.embed_documents([r["text"] for r in rows])
    client = QdrantClient(path=str(folder))
    try:
        cosine = models.VectorParams(size=384, distance=models.Distance.COSINE)
        client.create_collection("two", vectors_config={"body": cosine, "flipped": cosine})
        client.upsert(
            "two",
            [
                models.PointStruct(
                    id=i,
                    vector={"body": v.tolist(), "flipped": (-v).tolist()},
                    payload={"text": r["text"], "doc_id": r["_id"]},
                )
                for i, (r, v) in enumerate(zip(rows, vectors, strict=True))
            ],
        )
    finally:
        client.close()
    built = Built("qdrant-client", folder, "two", rows)
    bench = titles_benchmark(built, tmp_path, n=4)
    env = {"QDRANT_URL": str(folder), "RAGSONDE_HOME": str(tmp_path / "home")}
    unnamed = run("eval", str(bench), "-c", "two", "--no-throughput", env=env)
    assert unnamed.returncode == 2 and "--vector NAME" in unnamed.stderr, unnamed.stderr
    res = run(
        "eval", str(bench), "-c", "two", "--vector", "body", "--no-throughput", "--json", env=env
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["metrics"]["hit_rate@1"] == 1.0
    first = f"t{rows[0]['_id']}"
    res = run("explain", str(bench), "-q", first, "-c", "two", "--vector", "body", env=env)
    assert res.returncode == 0, res.stderr
    res = run("traffic", str(bench), "-c", "two", "--vector", "flipped", "--json", env=env)
    assert res.returncode == 0, res.stderr


def test_ids_that_are_point_ids_and_document_numbers_alike_are_not_guessed(
    scifact_rows, embedder, tmp_path: Path
):
    """A script numbered its chunks (point ids 0..19) and their documents (``source_doc``
    0..9): the ids "0".."5" are both. eval picked the point ids and reported MRR 0.31 for a
    search whose every first hit is the right document (1.0 read at ``source_doc``)."""
    from qdrant_client import QdrantClient, models

    rows = scifact_rows[:10]
    halves = [(d, part) for d, r in enumerate(rows) for part in _halves(r["text"])]
    vectors = embedder.embed_documents([t for _, t in halves])
    folder = tmp_path / "qdrant"
    client = QdrantClient(path=str(folder))
    try:
        client.create_collection(
            "numbered",
            vectors_config=models.VectorParams(size=384, distance=models.Distance.COSINE),
        )
        client.upsert(
            "numbered",
            [
                models.PointStruct(id=i, vector=v.tolist(), payload={"text": t, "source_doc": d})
                for i, ((d, t), v) in enumerate(zip(halves, vectors, strict=True))
            ],
        )
    finally:
        client.close()
    bench = tmp_path / "numbered.jsonl"
    bench.write_text(
        "".join(
            json.dumps({"query_id": f"q{d}", "query": r["title"], "relevant": [str(d)]}) + "\n"
            for d, r in enumerate(rows[:6])
        ),
        encoding="utf-8",
    )
    env = {"QDRANT_URL": str(folder), "RAGSONDE_HOME": str(tmp_path / "home")}
    res = run("eval", str(bench), "-c", "numbered", "--no-throughput", env=env)
    assert res.returncode == 1, res.stderr
    assert "--field doc_id=source_doc" in res.stderr and "--relevance-by chunk" in res.stderr
    res = run(
        "eval",
        str(bench),
        "-c",
        "numbered",
        "--field",
        "doc_id=source_doc",
        "--no-throughput",
        "--json",
        env=env,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["metrics"]["hit_rate@10"] == 1.0


def _halves(text: str) -> tuple[str, str]:
    return text[: len(text) // 2], text[len(text) // 2 :]
