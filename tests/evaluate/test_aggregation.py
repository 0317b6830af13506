"""The one chunk-to-document collapse (evaluation and explain), checked by hand."""

from __future__ import annotations

import pytest

from ragsonde.evaluate.aggregation import Aggregation, collapse

#: (document, similarity, raw score), best first: d1 twice, a hit without a document, d2 once.
HITS = [("d1", 0.9, 1.8), (None, 0.85, 1.7), ("d2", 0.8, 1.6), ("d1", 0.7, 1.4), (3, 0.6, None)]


def test_best_chunk_keeps_its_place_and_hits_without_a_document_are_skipped():
    assert collapse(HITS, Aggregation()) == {"d1": 0.9, "d2": 0.8, "3": 0.6}


def test_raw_scores_are_kept_where_the_engine_gave_one():
    assert collapse(HITS, Aggregation(), raw=True) == {"d1": 1.8, "d2": 1.6, "3": 0.6}


def test_a_sum_adds_a_document_s_best_chunks_and_reorders():
    two = collapse(HITS, Aggregation.of("sum", 2), raw=True)
    assert list(two) == ["d1", "d2", "3"]
    assert two == pytest.approx({"d1": 1.8 + 1.4, "d2": 1.6, "3": 0.6})
    flipped = collapse(
        [("a", 0.9, None), ("b", 0.8, None), ("b", 0.5, None)], Aggregation.of("sum", 2)
    )
    assert list(flipped) == ["b", "a"] and flipped["b"] == pytest.approx(1.3)
