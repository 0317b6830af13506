"""The misses section's arithmetic, by hand: counts derived from the misses and checked to add
up; the Gini coefficient and dead documents of retrievability (no model, no store)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragsonde.explain import STAGES, Miss, MissesReport, QueryMisses, gini, retrievability
from ragsonde.explain.retrievability import field_shares


def _q(*stages: str) -> QueryMisses:
    return QueryMisses(
        query="q",
        relevant=len(stages),
        misses=[Miss(doc_id=f"d{i}", stage=s) for i, s in enumerate(stages)],  # type: ignore[arg-type]
    )


def test_counts_are_derived_and_add_up() -> None:
    section = MissesReport.build(10, {"a": _q("ann", "ranking"), "b": _q("ranking")})
    assert list(section.counts) == list(STAGES)
    assert section.counts["ann"] == 1 and section.counts["ranking"] == 2
    assert section.pairs == 3 == sum(section.counts.values())
    assert "add up to the 3 missed" in section.note
    assert [qid for qid, _ in section.worst(1)] == ["a"]


def test_counts_that_do_not_add_up_are_refused() -> None:
    good = MissesReport.build(10, {"a": _q("ann")}).model_dump()
    with pytest.raises(ValidationError, match="must both equal"):
        MissesReport.model_validate({**good, "pairs": 2})
    with pytest.raises(ValidationError, match="must both equal"):
        MissesReport.model_validate({**good, "counts": {**good["counts"], "ranking": 1}})


def test_gini_by_hand() -> None:
    assert gini([1, 1, 1, 1]) == 0.0
    assert gini([0, 0, 0, 4]) == pytest.approx(0.75)  # (n-1)/n: one document takes all
    # x = 0, 1, 2, 3: sum (2i - n - 1) x_i = (-3)(0) + (-1)(1) + (1)(2) + (3)(3) = 10; / (4 * 6)
    assert gini([3, 0, 2, 1]) == pytest.approx(10 / 24)
    assert gini([]) == 0.0 and gini([0, 0]) == 0.0


def test_retrievability_dead_documents_and_their_fields() -> None:
    docs = {
        "a": {"source": "wiki"},
        "b": {"source": "wiki"},
        "c": {"source": "blog"},
        "d": {"source": "blog"},
    }
    r = retrievability({"q1": ["a", "b", "x"], "q2": ["a", "c"]}, docs, k=2)
    # r = a:2, b:1, c:1, d:0 ("x" is not a document of the collection; b is q1's rank 2)
    assert (r.documents, r.queries, r.dead, r.dead_examples) == (4, 2, 1, ["d"])
    assert r.dead_share == 0.25 and r.gini == pytest.approx(gini([2, 1, 1, 0]), abs=1e-4)
    (by_source,) = r.by_field
    assert by_source.field == "source" and by_source.values == {"blog": (2, 1), "wiki": (2, 0)}


def test_a_field_with_one_value_or_an_id_per_document_is_no_group() -> None:
    docs = {str(i): {"lang": "en", "title": f"t{i}"} for i in range(60)}
    assert field_shares({"1"}, docs) == []
    few = {str(i): {"hash": f"h{i}", "kind": "ab"[i % 2]} for i in range(10)}
    assert [f.field for f in field_shares({"1"}, few)] == ["kind"]
