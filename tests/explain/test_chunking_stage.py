"""The ladder's ``chunking`` stage on a span-labelled benchmark: an answer that no chunk holds
most of is blamed on chunking; the same miss with an answer inside one chunk passes it (and is
blamed on ranking). Real ingest (16-token chunks that record their spans), the real model, the
embedded store."""

from __future__ import annotations

import json

import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions, evaluate
from ragsonde.explain import explain_report
from ragsonde.explain.ladder import SPLIT_SHARE
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.workspace import Workspace

pytestmark = pytest.mark.slow

HEAD = "# Reactor\n\n"
ANSWER = (
    "The capybara reactor vents xenon gas through its seventh brass valve, which the night "
    "engineer opens by hand every ninety minutes while the coolant pumps idle below the "
    "turbine hall, and the shift log records each opening with the valve's pressure reading."
)
QUERY = "which reactor vents xenon through a brass valve"
WHOLE = "seventh brass valve"


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory, embedder):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("chunking-stage")
    docs = root / "docs"
    docs.mkdir()
    (docs / "reactor.md").write_text(HEAD + ANSWER + "\n", encoding="utf-8")
    (docs / "decoy.md").write_text(
        "# Decoy\n\nWhich reactor vents xenon through a brass valve? Reactors vent xenon "
        "through brass valves.\n",
        encoding="utf-8",
    )
    settings = Settings(home=root / "home", collection="reactor")
    ingest(
        str(docs),
        settings=settings,
        embedder=embedder,
        options=IngestOptions(chunk_size=16, chunk_overlap=0),
    )
    start = len(HEAD)
    whole = start + ANSWER.index(WHOLE)
    rows = [
        {  # the whole paragraph: 16-token chunks split it
            "query_id": "split",
            "query": QUERY,
            "references": [{"doc_id": "reactor", "start": start, "end": start + len(ANSWER)}],
        },
        {  # three words inside the first chunk
            "query_id": "whole",
            "query": QUERY,
            "references": [{"doc_id": "reactor", "start": whole, "end": whole + len(WHOLE)}],
        },
    ]
    bench = root / "bench.jsonl"
    bench.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with Workspace(settings, embedder=embedder) as ws:
        chunks = [p.payload for batch in ws.store.scroll("reactor") for p in batch]
        report = evaluate(bench, workspace=ws, options=EvalOptions(k=[1], throughput=False))
        misses = explain_report(report, bench, k=1, workspace=ws)
    return chunks, misses


def test_the_decoy_outranks_the_answer_so_both_queries_miss_it(ladder) -> None:  # type: ignore[no-untyped-def]
    chunks, misses = ladder
    reactor = [c for c in chunks if c["doc_id"] == "reactor"]
    assert len(reactor) >= 3 and all(isinstance(c["start"], int) for c in reactor)
    assert {qid for qid, q in misses.per_query.items() if q.misses} == {"split", "whole"}


def test_a_split_answer_is_blamed_on_chunking(ladder) -> None:  # type: ignore[no-untyped-def]
    chunks, misses = ladder
    (miss,) = misses.per_query["split"].misses
    assert miss.stage == "chunking", [(s.stage, s.outcome, s.detail) for s in miss.steps]
    # the evidence, recomputed from the chunks' own spans
    lo, hi = len(HEAD), len(HEAD) + len(ANSWER)
    held = [
        max(0, min(hi, c["end"]) - max(lo, c["start"])) for c in chunks if c["doc_id"] == "reactor"
    ]
    assert miss.evidence["answer_chars"] == hi - lo
    assert miss.evidence["chunks_holding"] == sum(1 for h in held if h > 0) >= 3
    assert miss.evidence["best_share"] == pytest.approx(max(held) / (hi - lo), abs=1e-4)
    assert miss.evidence["best_share"] < SPLIT_SHARE
    assert "split over" in miss.steps[-1].detail
    assert misses.counts["chunking"] >= 1 and "chunking" not in misses.not_measurable


def test_an_answer_inside_one_chunk_passes_chunking(ladder) -> None:  # type: ignore[no-untyped-def]
    _, misses = ladder
    (miss,) = misses.per_query["whole"].misses
    step = next(s for s in miss.steps if s.stage == "chunking")
    assert step.outcome == "passed" and "100%" in step.detail
    assert miss.stage == "ranking"
