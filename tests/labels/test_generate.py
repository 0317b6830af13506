"""The offline generator: stratified sampling, known-item queries, the benchmark file."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ragsonde.errors import CollectionNotFoundError, QueryValidationError
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.labels import BenchmarkEntry, GenerateOptions, generate, read_entries
from ragsonde.labels.offline import generator_name
from ragsonde.labels.sampling import read_chunks, stratified_sample
from tests.labels.support import WORDS
from tests.support import run


def test_fewer_samples_than_documents_are_all_different_documents(sectioned):
    _, store = sectioned
    chunks = read_chunks(store, "docs")
    assert len(chunks) == 30
    picked = stratified_sample(chunks, 5, seed=1)
    assert sorted(c.doc_id for c in picked) == sorted(WORDS)


def test_samples_spread_over_every_section_before_repeating_one(sectioned):
    _, store = sectioned
    chunks = read_chunks(store, "docs")
    picked = stratified_sample(chunks, 15, seed=2)
    strata = Counter((c.doc_id, c.section) for c in picked)
    assert len(strata) == 15 and set(strata.values()) == {1}
    assert len({c.id for c in stratified_sample(chunks, 100, seed=2)}) == 30  # all, no repeats


def test_short_chunks_are_not_sampled(sectioned):
    _, store = sectioned
    chunks = read_chunks(store, "docs")
    assert stratified_sample(chunks, 10, seed=0, min_chars=10_000) == []


def test_generate_writes_known_item_queries_with_provenance(sectioned, tmp_path):
    settings, store = sectioned
    out = tmp_path / "bench.jsonl"
    report = generate(
        out, settings=settings, store=store, options=GenerateOptions(n=10, seed=7, method="gist")
    )
    assert report.written == 10 and report.documents_sampled == 5
    assert report.sections_sampled == 10 and report.chunks_in_collection == 30
    entries = read_entries(out)
    texts = {c.id: c.text.lower() for c in read_chunks(store, "docs")}
    for e in entries:
        assert e.generator == generator_name("gist") and e.source_chunk in texts
        assert e.relevant == {e.source_doc: 3}
        assert e.labels[0].source == "generator" and e.labels[0].chunk_id == e.source_chunk
        words = e.query.split()
        assert len(words) >= 2
        # Mostly the chunk's own words (some may be background noise terms).
        assert sum(w in texts[e.source_chunk] for w in words) > len(words) / 2
    # ragsonde eval reads it as it is.
    bench = load_benchmark(out)
    assert [q.query_id for q in bench.queries] == [e.query_id for e in entries]
    assert bench.queries[0].relevant == entries[0].relevant


def test_same_seed_same_benchmark_other_seed_other_one(sectioned, tmp_path):
    settings, store = sectioned
    a, b, c = (tmp_path / f"{n}.jsonl" for n in "abc")
    generate(a, settings=settings, store=store, options=GenerateOptions(n=8, seed=3, method="gist"))
    generate(b, settings=settings, store=store, options=GenerateOptions(n=8, seed=3, method="gist"))
    generate(c, settings=settings, store=store, options=GenerateOptions(n=8, seed=4, method="gist"))
    assert a.read_text() != ""
    strip = [[(e.query, e.source_chunk) for e in read_entries(p)] for p in (a, b, c)]
    assert strip[0] == strip[1] and strip[0] != strip[2]


def test_generate_refuses_bad_input(sectioned, tmp_path):
    settings, store = sectioned
    with pytest.raises(QueryValidationError):
        generate(tmp_path / "x.jsonl", settings=settings, store=store, options=GenerateOptions(n=0))
    with pytest.raises(CollectionNotFoundError):
        generate(tmp_path / "x.jsonl", collection="nope", settings=settings, store=store)


def test_entries_keep_unknown_fields_and_old_files_get_provenance(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(
        json.dumps({"query_id": "q1", "query": "x", "relevant": ["a"], "top_k": 3}) + "\n"
    )
    (entry,) = read_entries(path)
    assert entry.relevant == {"a": 1} and entry.model_extra == {"top_k": 3}
    assert entry.labels[0].source == "human" and entry.labels[0].judge == "file:old.jsonl"
    assert isinstance(entry, BenchmarkEntry)


@pytest.mark.slow  # a process
def test_cli_generate(tmp_path):
    from ragsonde.config import Settings
    from ragsonde.store import open_store
    from tests.labels.support import fill_sections

    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    fill_sections(store, "site")
    store.close()
    out = tmp_path / "gen.jsonl"
    env = {"RAGSONDE_HOME": str(home)}
    res = run(
        "generate",
        "-c",
        "site",
        "--n",
        "6",
        "--seed",
        "1",
        "--method",
        "gist",
        "--out",
        str(out),
        "--json",
        env=env,
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["written"] == 6 and report["collection"] == "site"
    assert len(out.read_text().splitlines()) == 6
    leak = report["leakage"]  # every generated benchmark carries its leakage
    assert leak["collection"] == "site" and leak["queries"] == 6
    assert leak["term_overlap"] == 1.0 and leak["bm25_top1"] is None  # no BM25 vectors here
    assert report["warnings"] and "favour lexical retrieval" in report["warnings"][0]
    assert report["generator"] == "offline:gist"
    other = run(
        "generate", "-c", "site", "--n", "4", "--method", "terms", "--out", str(out), env=env
    )
    assert other.returncode == 0, other.stderr
    assert "offline:terms" in other.stdout
    assert "leakage (generated, 4 queries on site):" in other.stdout
    assert {e.generator for e in read_entries(out)} == {"offline:terms"}
    bad = run("generate", "-c", "missing", "--out", str(out), env=env)
    assert bad.returncode == 1 and "COLLECTION_NOT_FOUND" in bad.stderr


def test_without_noise_every_term_is_the_chunks_own_and_telling(sectioned):
    import numpy as np

    from ragsonde.labels.offline import TermSampler

    _, store = sectioned
    chunks = read_chunks(store, "docs")
    sampler = TermSampler(noise=0.0, lam=1.0).fit(chunks)
    rng = np.random.default_rng(0)
    for c in chunks:
        query = sampler.query(c, rng)
        assert query is not None
        words = query.split()
        assert all(w in c.text.lower() for w in words) and len(set(words)) == len(words)
        assert "the" not in words and "of" not in words  # stop words are never sampled
        # In the chunk's order, so the query reads like one.
        assert [c.text.lower().find(w) for w in words] == sorted(
            c.text.lower().find(w) for w in words
        )
