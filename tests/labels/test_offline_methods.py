"""The offline methods (``generate --method``): a reworded sentence, mixed terms, tf-idf terms."""

from __future__ import annotations

import json
import re
from itertools import islice

import numpy as np
import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from ragsonde.errors import QueryValidationError
from ragsonde.labels import GenerateOptions, generate, read_entries
from ragsonde.labels.offline import (
    DEFAULT_METHOD,
    OFFLINE_GENERATOR,
    OFFLINE_METHODS,
    GistReducer,
    MixedTermSampler,
    SentenceReducer,
    TermSampler,
    generate_offline,
)
from ragsonde.labels.sampling import Chunk, read_chunks


def _words(text: str) -> list[str]:
    """Words as the tf-idf tokenizer sees them: 2+ characters, no bare numbers."""
    return re.findall(r"(?u)\b[^\W\d_][\w-]*[^\W_]\b", text.lower())


def _is_subsequence(query: list[str], words: list[str]) -> bool:
    it = iter(words)
    return all(w in it for w in query)


def _scifact_chunks(scifact_dir, n: int) -> list[Chunk]:
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as f:
        docs = [json.loads(line) for line in islice(f, n)]
    return [Chunk(d["_id"], d["_id"], "", d["title"], d["text"], 0) for d in docs if d["text"]]


@pytest.fixture(scope="module")
def scifact_chunks(scifact_dir) -> list[Chunk]:
    return _scifact_chunks(scifact_dir, 300)


def test_the_default_method_is_ict_and_the_cli_agrees():
    import inspect

    from ragsonde.cli.generate import generate_command

    assert DEFAULT_METHOD == "ict" and OFFLINE_GENERATOR == "offline:ict"
    assert set(OFFLINE_METHODS) == {"sentence", "gist", "mixed", "terms", "ict"}
    default = inspect.signature(generate_command).parameters["method"].default
    assert default == DEFAULT_METHOD


# ICT needs chunks of two sentences or more and a real embedder: test_leakage_ict.py.
@pytest.mark.parametrize("method", sorted(set(OFFLINE_METHODS) - {"ict"}))
def test_every_method_keeps_the_stratification_and_the_source_document(sectioned, tmp_path, method):
    settings, store = sectioned
    out = tmp_path / f"{method}.jsonl"
    report = generate(
        out, settings=settings, store=store, options=GenerateOptions(n=10, seed=5, method=method)
    )
    assert report.generator == f"offline:{method}"
    assert report.written == 10 and report.documents_sampled == 5 and report.sections_sampled == 10
    chunks = {c.id: c for c in read_chunks(store, "docs")}
    for e in read_entries(out):
        assert e.generator == f"offline:{method}"
        assert e.relevant == {chunks[e.source_chunk].doc_id: 3} == {e.source_doc: 3}
        assert len(e.query.split()) >= 2


@pytest.mark.parametrize("method", ["sentence", "gist"])
def test_sentence_queries_are_a_sentence_reworded_not_copied(scifact_chunks, method):
    maker = OFFLINE_METHODS[method]().fit(scifact_chunks)
    rng = np.random.default_rng(0)
    made = 0
    for c in scifact_chunks[:100]:
        query = maker.query(c, rng)
        if query is None:
            continue
        made += 1
        q = query.split()
        assert 3 <= len(q) <= 12 and not ENGLISH_STOP_WORDS & set(q)  # content words only
        assert query not in c.text.lower()  # never a verbatim span of the chunk
        # An in-order selection of one sentence's words, with at least one word dropped.
        # (A sentence ends before a capital, digit or bracket: "S. pneumoniae" is not an end.)
        sentences = [_words(s) for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])", c.text)]
        home = [s for s in sentences if _is_subsequence(q, s)]
        assert home, (query, c.text)
        assert any(len([w for w in s if w not in ENGLISH_STOP_WORDS]) > len(q) for s in home)
    assert made >= 95


def test_same_seed_same_queries_other_seed_other_ones(scifact_chunks):
    sample = scifact_chunks[:40]
    for method in OFFLINE_METHODS:
        a = generate_offline(scifact_chunks, sample, seed=1, method=method)
        b = generate_offline(scifact_chunks, sample, seed=1, method=method)
        c = generate_offline(scifact_chunks, sample, seed=2, method=method)
        assert [e.query for e in a] == [e.query for e in b]
        assert [e.query for e in a] != [e.query for e in c]
        assert [e.source_doc for e in a] == [s.doc_id for s in sample][: len(a)]


def _mean_idf(maker: TermSampler | SentenceReducer, chunks: list[Chunk]) -> float:
    rng = np.random.default_rng(3)
    idf = maker._vec.idf_
    vocab = maker._vocab
    got = [idf[vocab[w]] for c in chunks for w in (maker.query(c, rng) or "").split() if w in vocab]
    return float(np.mean(got))


def test_newer_methods_draw_fewer_rare_terms_than_tfidf_terms(scifact_chunks):
    """The point of the newer methods: fewer of the rare terms BM25 matches exactly."""
    terms = _mean_idf(TermSampler(noise=0.0).fit(scifact_chunks), scifact_chunks)
    mixed = _mean_idf(MixedTermSampler(noise=0.0).fit(scifact_chunks), scifact_chunks)
    sentence = _mean_idf(SentenceReducer().fit(scifact_chunks), scifact_chunks)
    gist = _mean_idf(GistReducer().fit(scifact_chunks), scifact_chunks)
    assert gist < sentence < mixed < terms


def test_an_unknown_method_names_the_known_ones(sectioned, tmp_path):
    settings, store = sectioned
    with pytest.raises(QueryValidationError) as e:
        generate(
            tmp_path / "x.jsonl",
            settings=settings,
            store=store,
            options=GenerateOptions(n=3, method="nope"),
        )
    assert e.value.field == "method" and all(m in str(e.value) for m in OFFLINE_METHODS)


def test_a_chunk_without_a_usable_sentence_makes_no_query():
    chunks = [
        Chunk("1", "d1", "", "", "Short one. Tiny too.", 0),
        Chunk("2", "d2", "", "", "Alpha beta gamma delta epsilon zeta eta theta.", 0),
    ]
    maker = SentenceReducer().fit(chunks)
    rng = np.random.default_rng(0)
    assert maker.query(chunks[0], rng) is None
    assert maker.query(chunks[1], rng) is not None
