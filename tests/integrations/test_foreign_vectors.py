"""A collection a qdrant-client script built with two named dense vectors: ``body`` (each
abstract's embedding) and ``flipped`` (its negation, so a query's best match there is its worst
in ``body``). ``tune``, ``judge``, ``generate`` and ``mcp`` took the vector to search from
RAGSONDE_VECTOR only, while the error they gave said "Choose one with --vector NAME". Read
through local mode (``QDRANT_URL`` a folder), as a user's. Oracle: the relevant abstract of each
title query is the top hit in ``body`` and not in ``flipped`` (the embeddings say so, not
ragsonde)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.integrations.support import Built, client_collection, titles_benchmark
from tests.support import home_env, run

pytestmark = pytest.mark.slow  # processes that load the model

MODEL = "openai:gpt-4o-mini"


@pytest.fixture(scope="module")
def two_vectors(tmp_path_factory, embedder, scifact_rows) -> Built:
    from qdrant_client import models

    folder = tmp_path_factory.mktemp("two") / "qdrant"
    rows = scifact_rows[:12]
    vectors = embedder.embed_documents([r["text"] for r in rows])
    cosine = models.VectorParams(size=384, distance=models.Distance.COSINE)
    points = [
        models.PointStruct(
            id=i,
            vector={"body": v.tolist(), "flipped": (-v).tolist()},
            payload={"text": r["text"], "doc_id": r["_id"], "title": r["title"]},
        )
        for i, (r, v) in enumerate(zip(rows, vectors, strict=True))
    ]
    client_collection(folder, "two", {"body": cosine, "flipped": cosine}, points)
    return Built("qdrant-client", folder, "two", rows)


def _env(b: Built, tmp_path: Path, **more: str) -> dict[str, str]:
    return {**home_env(tmp_path / "home"), "QDRANT_URL": str(b.path), **more}


def _refused(res: Any, *names: str) -> None:
    """A clean VALIDATION_ERROR naming ``names`` and the vectors the collection has."""
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    assert "VALIDATION_ERROR" in res.stderr
    for name in (*names, "'body'", "'flipped'"):
        assert name in res.stderr, res.stderr


def test_tune_searches_the_vector_it_is_given(two_vectors: Built, tmp_path: Path):
    bench = titles_benchmark(two_vectors, tmp_path)
    env = _env(two_vectors, tmp_path)
    args = ("tune", str(bench), "-c", "two", "--folds", "2", "--mode", "dense")
    _refused(run(*args, env=env), "--vector NAME")
    _refused(run(*args, "--vector", "nope", env=env), "'nope'")
    best = {}
    for name in ("body", "flipped"):
        res = run(*args, "--vector", name, "--json", env=env)
        assert res.returncode == 0, res.stderr
        report = json.loads(res.stdout)
        best[name] = max(c["metrics"]["ndcg@10"] for c in report["configurations"])
    assert best["body"] == pytest.approx(1.0)
    assert best["flipped"] < 0.5  # every title's own abstract is its farthest there
    # the environment variable still works, and the flag wins over it
    res = run(*args, "--vector", "body", "--json", env={**env, "RAGSONDE_VECTOR": "flipped"})
    assert res.returncode == 0, res.stderr
    assert max(c["metrics"]["ndcg@10"] for c in json.loads(res.stdout)["configurations"]) == 1.0


def test_judge_pools_the_vector_it_is_given(two_vectors: Built, tmp_path: Path):
    """Each query's human-labelled abstract is in its ``body`` pool (already labelled, not
    paid for) and never in its ``flipped`` pool; the LLM is a fake speaking OpenAI's wire
    format, as everywhere in the suite."""
    from ragsonde.testing.fake_chat_api import FakeChatAPI

    bench = titles_benchmark(two_vectors, tmp_path)
    with FakeChatAPI() as api:
        env = _env(two_vectors, tmp_path, OPENAI_BASE_URL=f"{api.url}/v1", OPENAI_API_KEY="k")
        args = ("judge", str(bench), "-c", "two", "--llm", MODEL, "--mode", "dense")
        args += ("--depth", "2")
        _refused(run(*args, "--out", str(tmp_path / "x.jsonl"), env=env), "--vector NAME")
        _refused(run(*args, "--vector", "nope", env=env), "'nope'")
        assert api.completions == 0  # refused before any call was paid for
        pools = {}
        for name in ("body", "flipped"):
            out = tmp_path / f"{name}.jsonl"
            res = run(*args, "--vector", name, "--out", str(out), "--json", env=env)
            assert res.returncode == 0, res.stderr
            pools[name] = json.loads(res.stdout)
    assert pools["body"]["already_labelled"] == 6 and pools["body"]["judged"] == 6
    assert pools["flipped"]["already_labelled"] == 0 and pools["flipped"]["judged"] == 12


def test_judge_plan_and_generate_take_the_vector(two_vectors: Built, tmp_path: Path):
    bench = titles_benchmark(two_vectors, tmp_path)
    with bench.open("a", encoding="utf-8") as f:  # queries to plan labels for
        for r in two_vectors.rows[6:]:
            f.write(json.dumps({"query_id": f"u{r['_id']}", "query": r["title"]}) + "\n")
    env = _env(two_vectors, tmp_path)
    plan = ("judge", str(bench), "-c", "two", "--plan", "2", "--out", str(tmp_path / "p.json"))
    _refused(run(*plan, env=env), "--vector NAME")
    res = run(*plan, "--vector", "body", env=env)
    assert res.returncode == 0, res.stderr
    out = tmp_path / "g.jsonl"
    gen = ("generate", "-c", "two", "--n", "3", "--method", "gist", "--out", str(out))
    _refused(run(*gen, env=env), "--vector NAME")
    res = run(*gen, "--vector", "body", env=env)
    assert res.returncode == 0, res.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_the_mcp_server_searches_the_vector_it_is_given(two_vectors: Built, tmp_path: Path):
    """``ragsonde mcp --vector``: the search tool's top hit for a title is its abstract in
    ``body`` and never in ``flipped`` (the server's settings carry the vector, as they carry the
    payload mapping: no tool takes either per call)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    row = two_vectors.rows[0]

    def top(vector: str) -> str:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ragsonde", "mcp", "--collection", "two", "--vector", vector],
            env=_env(two_vectors, tmp_path),
        )

        async def main() -> str:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                got = await s.call_tool("search", {"query": row["title"], "top_k": 1})
                assert not got.is_error and got.structured_content is not None, got.content
                return str(got.structured_content["results"][0]["metadata"]["doc_id"])

        return anyio.run(main)

    assert top("body") == row["_id"]
    assert top("flipped") != row["_id"]


def test_chunking_searches_its_own_collections_under_the_vector_setting(tmp_path: Path):
    """RAGSONDE_VECTOR, exported for a user's collection with several vectors, made every
    ``chunking`` run fail: its temporary collections had an unnamed vector, searched by name."""
    import ragsonde.samples

    docs = Path(ragsonde.samples.__file__).parent / "robotics" / "docs"
    env = {**home_env(tmp_path / "home"), "RAGSONDE_VECTOR": "body"}
    res = run("chunking", str(docs), "-g", "recursive 256/0", "--questions", "5", env=env)
    assert res.returncode == 0, res.stderr
    assert "recommended: recursive 256/0" in res.stdout
