"""``eval`` on collections LangChain and LlamaIndex built, with no mapping flags, gives the
nDCG@10 that pytrec_eval computes from the framework's own retriever (issue 12.3, done-when)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

from ragsonde.evaluate import EvalOptions
from tests.integrations.support import Built, lc_embeddings, li_embeddings, quiet_local_mode
from tests.support import evaluate_in, run

pytestmark = pytest.mark.slow
DEPTH = 30  # every document of the slice: both sides rank the same candidates


def _benchmark(b: Built, scifact_dir: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """SciFact claims whose qrels fall in the slice, plus each abstract's title as a
    known-item query: ``(benchmark file, {qid: (text, qrels)})``."""
    ids = {r["_id"] for r in b.rows}
    with (scifact_dir / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        qrels: dict[str, dict[str, int]] = {}
        for row in csv.DictReader(f, delimiter="\t"):
            if row["corpus-id"] in ids:
                qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    with (scifact_dir / "queries.jsonl").open(encoding="utf-8") as f:
        texts = {q["_id"]: q["text"] for q in map(json.loads, f) if q["_id"] in qrels}
    queries = {qid: (texts[qid], rel) for qid, rel in qrels.items()}
    assert queries, "no SciFact claim in the slice"
    for r in b.rows:
        queries[f"title-{r['_id']}"] = (r["title"], {r["_id"]: 1})
    path = tmp_path / f"{b.framework}.jsonl"
    path.write_text(
        "".join(
            json.dumps({"query_id": qid, "query": text, "relevant": list(rel)}) + "\n"
            for qid, (text, rel) in queries.items()
        ),
        encoding="utf-8",
    )
    return path, queries


def _framework_doc_ids(b: Built, embedder, texts: list[str]) -> list[list[str]]:
    """The framework's own retriever: ranked source-document ids per query."""
    out: list[list[str]] = []
    with quiet_local_mode():
        if b.framework == "langchain":
            from langchain_qdrant import QdrantVectorStore

            store = QdrantVectorStore.from_existing_collection(
                embedding=lc_embeddings(embedder), path=str(b.path), collection_name=b.collection
            )
            try:
                for t in texts:
                    hits = store.similarity_search_with_score(t, k=DEPTH)
                    out.append([d.metadata["doc_id"] for d, _ in hits])
            finally:
                store.client.close()
        else:
            from llama_index.core import VectorStoreIndex
            from llama_index.vector_stores.qdrant import QdrantVectorStore
            from qdrant_client import QdrantClient

            client = QdrantClient(path=str(b.path))
            try:
                index = VectorStoreIndex.from_vector_store(
                    QdrantVectorStore(client=client, collection_name=b.collection),
                    embed_model=li_embeddings(embedder),
                )
                retriever = index.as_retriever(similarity_top_k=DEPTH)
                for t in texts:
                    out.append([str(n.node.ref_doc_id) for n in retriever.retrieve(t)])
            finally:
                client.close()
    return [list(dict.fromkeys(ids)) for ids in out]  # a document split in nodes counts once


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_eval_with_no_mapping_matches_pytrec_eval_on_the_frameworks_retriever(
    framework: str, request, embedder, scifact_dir: Path, tmp_path: Path
):
    b: Built = request.getfixturevalue(f"{framework}_built")
    bench, queries = _benchmark(b, scifact_dir, tmp_path)
    qids = list(queries)
    ranked = _framework_doc_ids(b, embedder, [queries[q][0] for q in qids])
    run_ = {
        q: {d: float(len(r) - i) for i, d in enumerate(r)}
        for q, r in zip(qids, ranked, strict=True)
    }
    qrels = {q: rel for q, (_, rel) in queries.items()}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run_)
    expected = sum(v["ndcg_cut_10"] for v in ref.values()) / len(ref)

    report = evaluate_in(
        bench,
        settings=b.settings(),
        embedder=embedder,
        options=EvalOptions(k=[10], throughput=False),
    )
    assert report.metrics["ndcg@10"] == pytest.approx(expected, abs=1e-6)
    assert report.metrics["ndcg@10"] > 0.5  # not a quiet 0.0
    for q in qids:
        assert report.per_query[q].metrics["ndcg@10"] == pytest.approx(
            ref[q]["ndcg_cut_10"], abs=1e-6
        )
    field = report.relevance_field
    assert field is not None and field.matched == field.total == len(b.rows)
    assert field.path == {"langchain": "metadata.doc_id", "llamaindex": "doc_id"}[framework]
    assert report.benchmark.relevant_missing_from_collection == []
    # the layout's gaps are one note, not thousands of problems; text is never empty
    integ = report.integrity
    assert integ.problems == 0 and integ.counts["text_empty"] == 0
    assert "content_hash" in integ.absent_fields
    assert any("content_hash" in w for w in report.warnings)


def test_a_wrong_doc_id_path_is_replaced_by_the_field_that_holds_the_ids(
    langchain_built: Built, embedder, scifact_dir: Path, tmp_path: Path
):
    bench, _ = _benchmark(langchain_built, scifact_dir, tmp_path)
    report = evaluate_in(
        bench,
        settings=langchain_built.settings(),
        embedder=embedder,
        options=EvalOptions(k=[10], throughput=False, mapping={"doc_id": "metadata.nope"}),
    )
    field = report.relevance_field
    assert field is not None and not field.configured
    assert field.path == "metadata.doc_id"
    assert field.tried[0] == "metadata.nope"
    assert any("metadata.doc_id" in w and "sampling" in w for w in report.warnings)
    assert report.metrics["ndcg@10"] > 0.5


def test_cli_eval_fails_loudly_when_ids_match_nothing_or_mostly_miss(
    langchain_built: Built, tmp_path: Path
):
    env = {
        "QDRANT_URL": str(langchain_built.path),
        "RAGSONDE_HOME": str(tmp_path / "home"),
    }
    nothing = tmp_path / "nothing.jsonl"
    nothing.write_text(
        '{"query_id": "1", "query": "x", "relevant": ["nope-1"]}\n'
        '{"query_id": "2", "query": "y", "relevant": ["nope-2"]}\n'
    )
    res = run("eval", str(nothing), "-c", langchain_built.collection, env=env)
    assert res.returncode == 1, res.stderr
    assert "metadata.doc_id" in res.stderr and "page_content" in res.stderr  # fields tried
    assert "--field doc_id=" in res.stderr
    # two of three ids missing: more than half, so the run fails unless --allow-missing
    some = tmp_path / "some.jsonl"
    real = langchain_built.rows[0]
    some.write_text(
        json.dumps({"query_id": "1", "query": real["title"], "relevant": [real["_id"]]})
        + "\n"
        + '{"query_id": "2", "query": "y", "relevant": ["nope-1", "nope-2"]}\n'
    )
    res = run("eval", str(some), "-c", langchain_built.collection, "--no-throughput", env=env)
    assert res.returncode == 1
    assert "2 of 3 relevant ids" in res.stderr and "--allow-missing" in res.stderr
    res = run(
        "eval",
        str(some),
        "-c",
        langchain_built.collection,
        "--no-throughput",
        "--allow-missing",
        "--json",
        env=env,
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["relevance_field"]["path"] == "metadata.doc_id"
    assert sorted(report["benchmark"]["relevant_missing_from_collection"]) == ["nope-1", "nope-2"]
    # --field reaches the evaluation: a path holding none of the ids falls back by sampling
    res = run(
        "eval",
        str(some),
        "-c",
        langchain_built.collection,
        "--no-throughput",
        "--allow-missing",
        "--field",
        "doc_id=metadata.title",
        "--json",
        env=env,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["relevance_field"]["tried"][0] == "metadata.title"
