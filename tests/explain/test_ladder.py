"""Each planted fault gets the stage it was planted for, with its evidence (real model, real
embedded Qdrant Edge). A query's misses are read off its own search at k=2 (fetch: 6 chunks)."""

from __future__ import annotations

from typing import Any

import pytest

from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.errors import QueryValidationError
from ragsonde.explain import LADDER, STAGES, Miss, MissesReport, explain_query
from ragsonde.workspace import Workspace
from tests.explain.support import CROWD, Planted


def _explain(
    planted: Planted, embedder: OnnxEmbedder, qid: str, k: int = 2, **over: Any
) -> MissesReport:
    search = planted.settings.search.overlay(over.pop("search", None))
    settings = planted.settings.model_copy(update={"search": search})
    with Workspace(settings, embedder=embedder) as ws:
        return explain_query(planted.bench, qid, k=k, workspace=ws, **over)


def _only_miss(section: MissesReport, doc: str) -> Miss:
    (q,) = section.per_query.values()
    (miss,) = [m for m in q.misses if m.doc_id == doc]
    assert section.counts[miss.stage] == 1 and section.pairs == len(q.misses)
    return miss


def _outcomes(miss: Miss) -> dict[str, str]:
    return {s.stage: s.outcome for s in miss.steps}


def test_the_ladder_runs_in_the_documented_order() -> None:
    assert tuple(r.stage for r in LADDER) == STAGES
    assert STAGES[0] == "not_in_collection" and STAGES[-1] == "ranking"


def test_a_missing_document_is_not_in_the_collection(planted, embedder) -> None:
    section = _explain(planted, embedder, "ghost")
    miss = _only_miss(section, "ghost")
    assert miss.stage == "not_in_collection" and miss.evidence["path"] == "doc_id"
    # the other relevant document was found, at a 1-based rank
    assert section.per_query["ghost"].found == {"lidar": 1}


def test_an_empty_text_is_no_text(planted, embedder) -> None:
    miss = _only_miss(_explain(planted, embedder, "blank"), "blank")
    assert miss.stage == "no_text" and miss.evidence == {"chunks": 1, "empty": 1}


def test_a_filter_that_excludes_names_its_condition(planted, embedder) -> None:
    miss = _only_miss(_explain(planted, embedder, "filtered"), "lidar")
    assert miss.stage == "filter"
    assert miss.evidence["filter.section"] == (
        "wants Control > PID, the document has Sensors > Lidar"
    )


def test_a_threshold_that_cuts(planted, embedder) -> None:
    plain = _explain(planted, embedder, "threshold")
    assert plain.pairs == 0 and plain.per_query["threshold"].found == {"lidar": 1}
    miss = _only_miss(_explain(planted, embedder, "threshold", score_threshold=0.9), "lidar")
    assert miss.stage == "threshold"
    score = miss.evidence["score"]
    assert isinstance(score, float) and 0.0 < score < 0.9
    assert miss.evidence["rank_without_threshold"] == 1
    assert _outcomes(miss)["filter"] == "not_applicable"


def test_a_chunk_longer_than_the_window_is_truncation(planted, embedder) -> None:
    miss = _only_miss(_explain(planted, embedder, "truncated"), "long")
    assert miss.stage == "truncation"
    tokens, window = miss.evidence["tokens"], miss.evidence["window"]
    assert window == embedder.max_tokens == 256
    assert isinstance(tokens, int) and tokens > window
    # the answer is past the window: no relaxation brought it back first
    assert _outcomes(miss)["ann"] == "passed" and _outcomes(miss)["crowding"] == "passed"


def test_a_fused_list_that_drops_a_branch_hit(planted, embedder) -> None:
    # the same long document in hybrid search: BM25 reads all of it and ranks it first, the
    # dense branch never saw its answer, and the fusion leaves it out of the top k
    section = _explain(planted, embedder, "truncated", search={"mode": "hybrid"})
    miss = _only_miss(section, "long")
    assert miss.stage == "fusion"
    assert miss.evidence["rank_sparse"] == 1
    dense, fused = miss.evidence["rank_dense"], miss.evidence["rank_fused"]
    assert dense is None or (isinstance(dense, int) and dense > 2)
    assert isinstance(fused, int) and fused > 2


def test_crowding_by_a_many_chunk_document(planted, embedder) -> None:
    miss = _only_miss(_explain(planted, embedder, "crowded"), "pid")
    assert miss.stage == "crowding"
    assert miss.evidence["crowded_by"] == "tuning"
    assert miss.evidence["fetched_chunks"] == 6 == miss.evidence["crowder_chunks"]
    assert miss.evidence["documents_in_fetch"] == 1
    assert miss.evidence["rank_deep"] == 2
    deep = miss.evidence["deep_chunks"]
    assert isinstance(deep, int) and deep > CROWD
    # fetched deep enough from the start, nothing is crowded out
    assert _explain(planted, embedder, "crowded", fetch=CROWD + 10).pairs == 0


def test_a_near_miss_is_ranking_at_k_plus_one(planted, embedder) -> None:
    assert _explain(planted, embedder, "near", k=2).per_query["near"].found == {"sonar": 2}
    miss = _only_miss(_explain(planted, embedder, "near", k=1), "sonar")
    assert miss.stage == "ranking" and miss.rank == 2
    assert miss.evidence["near_miss"] is True
    gap = miss.evidence["gap"]
    assert isinstance(gap, float) and gap > 0
    assert miss.best_chunk is not None and "Ultrasonic" in miss.best_chunk
    # every stage before was checked, and says what it found
    assert [s.stage for s in miss.steps] == list(STAGES)
    assert _outcomes(miss)["chunking"] == "not_measurable"


def test_an_unknown_query_id_is_a_validation_error(planted, embedder) -> None:
    with pytest.raises(QueryValidationError, match="no query 'nope'"):
        _explain(planted, embedder, "nope")


def test_a_query_eval_refuses_is_refused_not_explained(planted, embedder, tmp_path) -> None:
    """A 12,000-character query was explained as found at rank 1 and an empty one blamed on
    ranking, where eval refuses both (VALIDATION_ERROR); and a query whose only relevant id is
    missing was a 'set --field' error where eval names it not in the collection."""
    import json

    rows = [
        {"query_id": "long", "query": "lidar " * 2000, "relevant": ["lidar"]},
        {"query_id": "empty", "query": "   ", "relevant": ["lidar"]},
        {"query_id": "gone", "query": "how far does the lidar see", "relevant": ["nowhere"]},
        {"query_id": "fine", "query": "how far does the lidar see", "relevant": ["lidar"]},
    ]
    bench = tmp_path / "b.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with Workspace(planted.settings, embedder=embedder) as ws:
        for qid, says in (("long", "at most 2000 characters"), ("empty", "must not be empty")):
            with pytest.raises(QueryValidationError, match=says) as err:
                explain_query(bench, qid, k=2, workspace=ws)
            assert f"query '{qid}' cannot be searched" in err.value.message
        gone = explain_query(bench, "gone", k=2, workspace=ws)
    assert _only_miss(gone, "nowhere").stage == "not_in_collection"
