"""Collections that LangChain, LlamaIndex and Haystack built are read, queried and resolved
correctly with no configuration (issue 12.1, 12.3)."""

from __future__ import annotations

import json

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.resolve import resolve_doc_id_field
from ragsonde.models.payload import build_mapping
from ragsonde.retriever import Retriever
from ragsonde.store.client import QdrantClientStore
from ragsonde.store.inspect import inspect_collection
from tests.integrations.support import Built, framework_search, quiet_local_mode
from tests.support import run

pytestmark = pytest.mark.slow

#: Where each framework's layout keeps the text and the document id.
EXPECTED = {
    "langchain": ("page_content", "metadata.doc_id"),
    "llamaindex": ("_node_content.text", "doc_id"),
    "haystack": ("content", "meta.doc_id"),
}


def test_inspect_names_the_layout_and_the_paths(built: Built):
    store = QdrantClientStore(str(built.path))
    try:
        report = inspect_collection(store, built.collection)
    finally:
        store.close()
    text_path, doc_path = EXPECTED[built.framework]
    assert report.layout == built.framework
    assert report.layout_share == 1.0
    assert report.mapping["text"] == text_path
    assert report.mapping["doc_id"] == doc_path
    assert report.mapping["title"] is not None
    assert report.empty_text_share == 0.0
    assert report.warnings == []


def test_query_gives_the_frameworks_own_top_k(built: Built, embedder, scifact_queries):
    k = 5
    with quiet_local_mode():
        theirs = framework_search(built, embedder, scifact_queries, k)
    by_text = {r["text"]: r for r in built.rows}
    with Retriever(built.settings(), embedder=embedder) as retriever:
        for q, expected in zip(scifact_queries, theirs, strict=True):
            resp = retriever.retrieve({"query_text": q, "top_k": k})
            assert resp.status == "success", resp.error
            if built.framework == "haystack":  # Haystack's document id is kept in the payload
                ids = [r.metadata["id"] for r in resp.results]
            else:
                ids = [r.chunk_id for r in resp.results]
            assert ids == [i for i, _ in expected]
            for r, (_, score) in zip(resp.results, expected, strict=True):
                assert r.raw_score == pytest.approx(score, abs=1e-5)
                # the text is the abstract exactly as the framework stored it, never empty
                assert r.text in by_text
                assert r.title == by_text[r.text]["title"]


def test_relevance_ids_resolve_on_each_layout(built: Built):
    ids = [r["_id"] for r in built.rows[:10]]
    store = QdrantClientStore(str(built.path))
    try:
        resolved = resolve_doc_id_field(store, built.collection, ids)
        assert resolved.path == EXPECTED[built.framework][1]
        assert resolved.configured
        assert resolved.matched == resolved.total == 10
        # a wrong mapped path: the field that holds the ids is found by sampling instead
        wrong = build_mapping({"doc_id": "no.such.field"})
        found = resolve_doc_id_field(store, built.collection, ids, wrong)
        assert not found.configured
        assert found.matched == 10
        assert {r["_id"] for r in built.rows} >= {
            str(v) for v in _values_at(store, built, found.path)
        }
        # ids that match nothing: a loud error naming the fields tried and the flag
        with pytest.raises(QueryValidationError) as err:
            resolve_doc_id_field(store, built.collection, ["nope-1", "nope-2"])
    finally:
        store.close()
    message = err.value.message
    assert EXPECTED[built.framework][1] in message
    assert "--field doc_id=" in message


def _values_at(store: QdrantClientStore, built: Built, path: str) -> list[object]:
    from ragsonde.models.payload import get_path

    return [get_path(p.payload, path) for batch in store.scroll(built.collection) for p in batch]


def test_cli_inspect_and_field_flags(langchain_built: Built):
    env = {
        "QDRANT_URL": str(langchain_built.path),
        "RAGSONDE_HOME": str(langchain_built.path.parent / "h"),
    }
    res = run("inspect", "-c", langchain_built.collection, "--json", env=env)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["layout"] == "langchain"
    assert report["mapping"]["doc_id"] == "metadata.doc_id"
    table = run("inspect", "-c", langchain_built.collection, env=env)
    assert "layout: langchain" in table.stdout
    # --field moves a field to another path; the environment's mapping merges with it
    res = run(
        "query",
        "methylation",
        "-c",
        langchain_built.collection,
        "--json",
        "--field",
        "text=metadata.title",
        env={**env, "RAGSONDE_MAPPING__URL": "metadata.doc_id"},
    )
    assert res.returncode == 0, res.stderr
    results = json.loads(res.stdout)["results"]
    titles = {r["title"] for r in langchain_built.rows}
    ids = {r["_id"] for r in langchain_built.rows}
    assert results and all(r["text"] in titles and r["url"] in ids for r in results)
    bad = run(
        "query", "x", "-c", langchain_built.collection, "--field", "txt=page_content", env=env
    )
    assert bad.returncode == 2
    assert "Unknown mapping field" in bad.stderr
