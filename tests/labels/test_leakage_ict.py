"""Generation that does not leak: ICT on a copy of the collection, and every benchmark's leakage."""

from __future__ import annotations

import numpy as np
import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.labels import GenerateOptions, generate, read_entries
from ragsonde.labels.ict import IctSentence, ict_copy, without_sentence
from ragsonde.labels.leakage import MARGIN, lexical_warning
from ragsonde.labels.models import Leakage
from ragsonde.labels.sampling import Chunk, read_chunks


def _lk(overlap: float, top1: float | None) -> Leakage:
    return Leakage(collection="c", queries=10, term_overlap=overlap, bm25_top1=top1, bm25_mrr=top1)


def test_the_warning_reads_the_figures_against_bounds_or_against_humans():
    assert lexical_warning(_lk(0.5, 0.5)) is None
    assert "BM25 finds the source first for 90%" in (lexical_warning(_lk(0.5, 0.9)) or "")
    assert "95% of a query's words" in (lexical_warning(_lk(0.95, None)) or "")
    human = _lk(0.6, 0.8)
    assert lexical_warning(_lk(0.7, 0.8 + MARGIN - 0.01), human) is None  # within the margin
    w = lexical_warning(_lk(0.7, 0.8 + MARGIN + 0.05), human)
    assert w is not None and "against 80% of the human ones" in w


def test_an_ict_query_is_a_whole_sentence_of_a_chunk_with_context_left():
    rng = np.random.default_rng(0)
    text = (
        "Short. This sentence has enough words to be a query. And a second long one follows here."
    )
    chunk = Chunk("1", "d", "", "", text, 0)
    q = IctSentence().fit([chunk]).query(chunk, rng)
    assert q in {
        "This sentence has enough words to be a query.",
        "And a second long one follows here.",
    }
    assert (
        IctSentence().query(
            Chunk("2", "d", "", "", "Only one sentence of eight words here.", 0), rng
        )
        is None
    )
    assert without_sentence(text, q) in {
        "Short. And a second long one follows here.",
        "Short. This sentence has enough words to be a query.",
    }


@pytest.mark.slow
def test_ict_removes_each_query_sentence_from_a_copy_and_leaks_less_than_gist(
    scifact_small, tmp_path, embedder
):
    settings, store = scifact_small
    human = settings.home.parent / "data"
    ict = generate(
        tmp_path / "ict.jsonl",
        settings=settings,
        store=store,
        embedder=embedder,
        options=GenerateOptions(n=12, seed=3, method="ict", human=human),
    )
    assert ict.generator == "offline:ict" and ict.written >= 10
    assert ict.evaluate_on == "sci-ict-s3"
    original = {c.id: c for c in read_chunks(store, "sci")}
    copy = {c.id: c for c in read_chunks(store, "sci-ict-s3")}
    assert copy.keys() == original.keys()  # every point copied
    entries = read_entries(tmp_path / "ict.jsonl")
    for e in entries:
        assert e.query in original[e.source_chunk].text  # the query is the chunk's sentence...
        assert e.query not in copy[e.source_chunk].text  # ...gone from the copy's chunk
        assert len(copy[e.source_chunk].text) < len(original[e.source_chunk].text)
    untouched = set(original) - {e.source_chunk for e in entries}
    assert all(copy[i].text == original[i].text for i in untouched)
    # the rewritten chunk was re-embedded: its dense vector moved
    sid = entries[0].source_chunk
    (a,) = store.retrieve("sci", [sid], with_vectors=True)
    (b,) = store.retrieve("sci-ict-s3", [sid], with_vectors=True)
    assert float(np.dot(a.vector, b.vector)) < 0.999
    assert ict.evaluate_on_copy == "built"
    # the copy is ragsonde's: the same inputs reuse it, other inputs rebuild it
    same = generate(tmp_path / "same.jsonl", settings=settings, store=store, embedder=embedder, options=GenerateOptions(n=12, seed=3, method="ict"))  # fmt: skip
    assert same.evaluate_on_copy == "reused"
    assert [e.query for e in read_entries(tmp_path / "same.jsonl")] == [e.query for e in entries]
    fewer = generate(tmp_path / "fewer.jsonl", settings=settings, store=store, embedder=embedder, options=GenerateOptions(n=4, seed=3, method="ict"))  # fmt: skip
    assert fewer.evaluate_on_copy == "rebuilt"
    four = {e.source_chunk for e in read_entries(tmp_path / "fewer.jsonl")}
    rebuilt = {c.id: c for c in read_chunks(store, "sci-ict-s3")}
    assert all(rebuilt[i].text == original[i].text for i in set(original) - four)
    # a collection ragsonde did not derive is never overwritten
    from ragsonde.tune.variants import VariantSpec, build_tuned_copy

    build_tuned_copy(store, "sci", "mine", VariantSpec())
    with pytest.raises(QueryValidationError, match="not a copy ragsonde made") as again:
        generate(tmp_path / "again.jsonl", settings=settings, store=store, embedder=embedder, options=GenerateOptions(n=4, seed=3, method="ict", ict_collection="mine"))  # fmt: skip
    assert again.value.field == "ict_collection"
    store.delete_collection("mine")
    generate(tmp_path / "ict.jsonl", settings=settings, store=store, embedder=embedder, options=GenerateOptions(n=12, seed=3, method="ict"))  # fmt: skip
    # leakage is measured on the copy, and the human benchmark's beside it
    assert ict.leakage is not None and ict.leakage.collection == "sci-ict-s3"
    assert ict.human_leakage is not None and ict.human_leakage.queries >= 5
    gist = generate(
        tmp_path / "gist.jsonl",
        settings=settings,
        store=store,
        embedder=embedder,
        options=GenerateOptions(n=12, seed=3, method="gist", human=human),
    )
    assert gist.leakage is not None and gist.leakage.bm25_top1 is not None
    assert ict.leakage.term_overlap < gist.leakage.term_overlap
    assert gist.leakage.term_overlap == pytest.approx(1.0)  # every gist word is the chunk's


@pytest.mark.slow
@pytest.mark.parametrize("method", ["sentence", "gist"])
def test_the_warning_fires_on_the_sentence_copy_methods(scifact_small, tmp_path, embedder, method):
    settings, store = scifact_small
    report = generate(
        tmp_path / "g.jsonl",
        settings=settings,
        store=store,
        embedder=embedder,
        options=GenerateOptions(n=12, seed=1, method=method),
    )
    assert report.leakage is not None and report.leakage.bm25_top1 is not None
    assert report.leakage.bm25_top1 >= 0.75
    assert report.warnings and "favour lexical retrieval" in report.warnings[0]


@pytest.mark.slow
def test_the_temporary_copy_is_deleted_on_exit(scifact_small, embedder):
    _settings, store = scifact_small
    chunks = read_chunks(store, "sci")
    from ragsonde.labels.offline import generate_offline

    entries = generate_offline(chunks, chunks[:3], seed=0, method="ict")
    with ict_copy(store, embedder, "sci", entries, target="sci-tmp") as name:
        assert name in store.list_collections()
    assert "sci-tmp" not in store.list_collections()
