"""The checks that say when a chunking sweep's answer is empty, on hand-made results whose
right answers are known, and whole-document splitting on a real parsed page."""

from __future__ import annotations

from typing import Any

from ragsonde.chunking import parse_configs
from ragsonde.chunking.checks import (
    budget_warning,
    identical_warning,
    longer_chunks_notes,
    signature,
    tie_warning,
    whole_document,
)
from ragsonde.chunking.report import ConfigResult
from ragsonde.ingest.document import Document
from ragsonde.ingest.parse import parse
from tests.sectioned import page


def result(label: str, r_k: float, r_b: float, p50: float, points: int = 40, **kw: Any):
    return ConfigResult.model_validate(
        {
            "config": parse_configs([label])[0].model_dump(),
            "label": label,
            "metrics": {"span_recall@5": r_k, "span_recall@1000t": r_b},
            "costs": {"points": points, "vector_memory_mb": 0, "ingest_s": 0, "embed_s": 0,
                      "search_p50_ms": 0, "search_p95_ms": 0},
            "lengths": {"p5": p50, "p50": p50, "p95": p50, "max": int(p50), "over_window": 0,
                        "single_chunk_docs": 0},
            "per_question": {},
            "chunks": [],
            **kw,
        }
    )  # fmt: skip


def test_whole_document_keeps_offsets_and_blanks_the_headings():
    text = page("sync")
    parsed = parse("markdown", text)
    doc = Document("sync", parsed.sections)
    whole = whole_document(doc)
    assert whole is not None and whole.offset is not None
    for s in parsed.sections:  # every section where the document has it
        at = s.offset - whole.offset
        assert (
            whole.text[at : at + len(s.text)] == s.text == text[s.offset : s.offset + len(s.text)]
        )
    covered = {i for s in parsed.sections for i in range(s.offset, s.offset + len(s.text))}
    gaps = {whole.text[i - whole.offset] for i in range(whole.offset, whole.offset + len(whole.text)) if i not in covered}  # fmt: skip
    assert gaps == {"\n"}  # the "## ..." heading lines, blanked
    assert "## " not in whole.text


def test_identical_chunks_have_one_signature():
    a = [("d", 0, 10, "some text"), ("d", 10, 20, "more text")]
    assert signature(a) == signature(list(a))
    assert signature(a) != signature([("d", 0, 10, "some text"), ("d", 10, 21, "more text")])
    assert signature(a) != signature([("d", 0, 10, "title: some text"), ("d", 10, 20, "more text")])
    merged = [result("recursive 200/0", 0.9, 0.9, 100, same_as=["fixed 800/0", "markdown 200/0"])]
    w = identical_warning(merged, within_sections=True)
    assert w is not None and "recursive 200/0 = fixed 800/0 = markdown 200/0" in w
    assert "configurations that differ can cut the same chunks" in w
    assert "--across-sections" in w
    assert identical_warning([result("fixed 200/0", 0.9, 0.9, 100)], True) is None


def test_a_budget_that_reads_most_of_the_corpus_is_flagged():
    rows = [result("fixed 200/0", 1, 1, 150), result("fixed 800/400", 1, 1, 600, points=5)]
    # k=5 chunks of 600 word pieces = 3,000 of a 4,000-piece corpus: 75 %
    w = budget_warning(rows, 5, 1000, 4000)
    assert w is not None and "3000 (75%)" in w and "1000 (25%)" in w
    assert budget_warning(rows, 5, 1000, 100_000) is None
    assert budget_warning(rows[:1], 5, 1000, 1900) is not None  # the budget alone: 53 %


def test_a_tie_at_the_top_is_flagged_and_a_spread_is_not():
    tied = [result("fixed 200/0", 1.0, 1.0, 100), result("recursive 400/200", 0.9, 1.0, 300)]
    w = tie_warning(tied, "span_recall@1000t")
    assert w is not None and "1.0000" in w
    assert tie_warning(tied, "span_recall@5") is None


def test_a_lead_at_k_that_is_only_longer_chunks_is_said_beside_the_budget_figure():
    small = result("recursive 200/0", 0.70, 0.90, 150)
    big = result("fixed 800/400", 0.95, 0.80, 700)
    noted = {r.label: r.note for r in longer_chunks_notes([small, big], 5, 1000)}
    assert noted["recursive 200/0"] is None
    assert noted["fixed 800/400"] is not None
    assert "0.800, behind recursive 200/0 (0.900)" in noted["fixed 800/400"]
    # leading at k and at the budget alike: nothing to say
    fair = result("fixed 800/400", 0.95, 0.95, 700)
    assert all(r.note is None for r in longer_chunks_notes([small, fair], 5, 1000))
