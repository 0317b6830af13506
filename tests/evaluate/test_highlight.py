"""The answer marked inside the retrieved chunks: :mod:`ragsonde.evaluate.highlight`, and the HTML
report of a real evaluation (real ingest, the real model, embedded Qdrant) that shows it.

Expected marks are computed from the document's text and the reference, never copied from the
output: for a chunk ``[cs, ce)`` and an excerpt ``[rs, re)`` the mark is
``text[max(cs, rs) : min(ce, re)]``.
"""

from __future__ import annotations

import itertools
import json

import pytest
from markupsafe import escape

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions
from ragsonde.evaluate.highlight import Piece, highlight, marked_ranges
from ragsonde.evaluate.html import render_html_report
from ragsonde.evaluate.span_eval import HITS
from ragsonde.evaluate.spans import Span
from ragsonde.ingest import IngestOptions, ingest
from tests.support import evaluate_in

DOC = "abcdefghijklmnopqrstuvwxyz"


def test_pieces_of_a_chunk_cut_where_the_answer_is():
    chunk = Span("d", 5, 15)
    text = DOC[5:15]
    # one excerpt inside, one across the chunk's end, one of another document
    refs = [Span("d", 7, 9), Span("d", 12, 20), Span("other", 5, 15)]
    assert highlight(text, chunk, refs) == [
        Piece("fg", False),
        Piece("hi", True),
        Piece("jkl", False),
        Piece("mno", True),
    ]
    # overlapping excerpts merge; an empty one marks nothing
    assert marked_ranges(chunk, [Span("d", 6, 10), Span("d", 8, 12), Span("d", 11, 11)]) == [(1, 7)]
    assert highlight(text, chunk, [Span("d", 0, 5)]) == [Piece(text, False)]
    # text that is not the span's length cannot be placed: shown plain
    assert highlight("short", chunk, [Span("d", 5, 15)]) == [Piece("short", False)]


def test_an_answer_split_across_two_chunks_is_marked_in_both():
    ref = Span("d", 8, 18)
    first, second = Span("d", 0, 12), Span("d", 12, 26)
    one = highlight(DOC[0:12], first, [ref])
    two = highlight(DOC[12:26], second, [ref])
    marked = [p.text for p in [*one, *two] if p.marked]
    assert marked == [DOC[8:12], DOC[12:18]] and "".join(marked) == DOC[8:18]


# -- a real evaluation and its HTML report ------------------------------------------------------
SENTENCES = [
    "The robot docks itself when its battery runs low.",
    "A lidar times laser pulses to measure the distance to each wall.",
    "Its gyroscope drifts, so the heading is corrected against the map.",
    "Operators note <script>alert(1)</script> in the log when a sensor fails.",
    "The charging contacts must be cleaned every week with a dry cloth.",
]
TEXT = " ".join(SENTENCES) + "\n"
#: question -> the answer's excerpt (found in TEXT).
QUESTIONS = {
    "How does the lidar measure distance, and what drifts?": (
        "times laser pulses to measure the distance to each wall. Its gyroscope drifts"
    ),
    "What do operators write in the log when a sensor fails?": (
        "note <script>alert(1)</script> in the log when a sensor fails. The charging"
    ),
}


@pytest.fixture(scope="module")
def bench_and_home(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("highlight")
    docs = root / "docs"
    docs.mkdir()
    (docs / "robot.txt").write_text(TEXT, encoding="utf-8")
    rows = []
    for question, excerpt in QUESTIONS.items():
        start = TEXT.index(excerpt)
        rows.append(
            {
                "query": question,
                "references": [{"doc_id": "robot", "start": start, "end": start + len(excerpt)}],
            }
        )
    bench = root / "bench.jsonl"
    bench.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    settings = Settings(home=root / "home")
    # small chunks, so answers cross chunk boundaries: without overlap, and with it
    for name, overlap in (("split", 0), ("overlap", 8)):
        opts = IngestOptions(chunk_size=20, chunk_overlap=overlap)
        ingest(str(docs), collection=name, settings=settings, embedder=embedder, options=opts)
    return bench, settings


def _marks(start: int, end: int, rs: int, re: int) -> str:
    """The ``<mark>`` the report must hold for chunk ``[start, end)`` and excerpt ``[rs, re)``."""
    return f"<mark>{escape(TEXT[max(start, rs) : min(end, re)])}</mark>"


@pytest.mark.parametrize("collection", ["split", "overlap"])
def test_the_report_marks_the_answer_inside_each_hit(
    bench_and_home, embedder, collection, validate_report
):
    bench, settings = bench_and_home
    report = evaluate_in(
        bench,
        collection=collection,
        settings=settings,
        embedder=embedder,
        options=EvalOptions(k=[HITS]),
    )
    assert report.spans is not None and report.spans.available
    validate_report(report.model_dump(mode="json"))  # references and hits, as published
    html = render_html_report(report)
    assert "<script>" not in html  # the chunk text's markup is text, never markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    shared = 0
    for row in report.per_query.values():
        assert row.references is not None and row.hits is not None
        [ref] = row.references
        holding = []
        for h in row.hits:
            assert h.doc_id == "robot" and h.text == TEXT[h.start : h.end]
            if h.start < ref.end and ref.start < h.end:
                holding.append(h)
                assert _marks(h.start, h.end, ref.start, ref.end) in html
        # the answer crosses a chunk boundary: two chunks hold parts of it, both marked
        assert len(holding) >= 2, [(h.start, h.end) for h in row.hits]
        parts = {TEXT[max(h.start, ref.start) : min(h.end, ref.end)] for h in holding}
        assert len(parts) >= 2
        covered = sorted((max(h.start, ref.start), min(h.end, ref.end)) for h in holding)
        shared += sum(a[1] > b[0] for a, b in itertools.pairwise(covered))
    # overlapping chunks both mark the answer's text they share; without overlap, none is shared
    assert (shared > 0) == (collection == "overlap")
    assert html.count('<li class="answer">') >= 4


def test_a_collection_without_spans_says_so_and_marks_nothing(bench_and_home, embedder):
    from ragsonde.models.points import PointRecord
    from ragsonde.store import open_store

    bench, settings = bench_and_home
    store = open_store(settings)
    try:
        points = [p for batch in store.scroll("split", with_vectors=True) for p in batch]
        store.create_collection("foreign", embedder.dimension)
        store.upsert(
            "foreign",
            [
                PointRecord(p.id, p.vector, {"text": p.payload["text"], "doc_id": "robot"})
                for p in points
            ],
        )
    finally:
        store.close()
    report = evaluate_in(
        bench,
        collection="foreign",
        settings=settings,
        embedder=embedder,
        options=EvalOptions(k=[3]),
    )
    assert report.spans is not None and not report.spans.available
    assert all(r.hits is None for r in report.per_query.values())
    html = render_html_report(report)
    assert "<mark>" not in html and "spans not available" in html
