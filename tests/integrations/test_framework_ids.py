"""Production ids as each framework's own retriever answers them, read by ``ragsonde traffic``
on that framework's collection: what production served is what the replay serves, so they agree.

LangChain and LlamaIndex answer the Qdrant point id; Haystack answers its document id (a SHA-256
of the content) and derives the point id from it. A log of Haystack's own answers read as if the
ids were point ids agreed with nothing, and the report said production ran another
configuration: a false alarm on every query.

Oracle: the framework's own retriever, the same k as the replay, over the same vectors (the
replay's top k is theirs: ``test_foreign_traffic``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integrations.support import Built, framework_search, quiet_local_mode
from tests.support import run

pytestmark = pytest.mark.slow
K = 5


def test_production_ids_of_the_frameworks_own_retriever_agree_with_the_replay(
    built: Built, embedder, scifact_queries: list[str], tmp_path: Path
) -> None:
    with quiet_local_mode():
        theirs = framework_search(built, embedder, scifact_queries, K)
    log = tmp_path / "chat.jsonl"
    rows = [
        {"query": q, "ids": [i for i, _ in hits], "scores": [s for _, s in hits]}
        for q, hits in zip(scifact_queries, theirs, strict=True)
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    env = {"QDRANT_URL": str(built.path), "RAGSONDE_HOME": str(built.path.parent / "home")}
    args = ("traffic", str(log), "-c", built.collection, "--no-record", "--json", "--top-k", str(K))
    done = run(*args, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_queries"] == len(scifact_queries)
    for q in report["queries"]:
        assert q["production_agreement"] == 1.0, (q["query"], q["top_ids"])
        assert q["mismatch"] == []
    assert report["production"]["mean_agreement"] == 1.0
    assert report["production"]["explained_by"] == {}


def test_the_haystack_point_id_is_haystacks_own() -> None:
    """The derivation is Haystack's (its converter, not a copy of its constant, is the oracle)."""
    import uuid

    pytest.importorskip("haystack_integrations.document_stores.qdrant")
    from haystack_integrations.document_stores.qdrant.converters import convert_id

    from ragsonde.models.payload import haystack_point_id

    for doc_id in ("a" * 64, "doc-1", "3896d314-1e95-4a3a-b45a-945f9f0b541d", "é ✓"):
        assert uuid.UUID(haystack_point_id(doc_id)) == uuid.UUID(convert_id(doc_id))
