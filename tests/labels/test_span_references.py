"""Span-labelled generated questions: each row's ``references`` point to the text it came from.

A real collection: a slice of Chroma's state_of_the_union corpus ingested by ragsonde (real model,
real embedded Qdrant), whose chunks carry their spans. Offline, the reference is the sentence the
query was made from (the whole chunk for a term sample); with an LLM (the loopback chat API), the
excerpt it quoted, found verbatim in the chunk, or the question is dropped.
"""

from __future__ import annotations

import re

import pytest

from ragsonde.config import Settings
from ragsonde.errors import LlmError
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.labels import GenerateOptions, generate, read_entries
from ragsonde.labels.chat import ChatClient
from ragsonde.labels.sampling import read_chunks
from ragsonde.labels.spans import locate, sentence_spans
from ragsonde.store import open_store
from ragsonde.testing.fake_chat_api import FakeChatAPI
from tests.support import CHUNKING

MODEL = "openai:gpt-4o-mini"


@pytest.fixture(scope="module")
def sotu(tmp_path_factory, embedder):
    """``(settings, store, text)``: the first ~8,000 characters of the speech, ingested."""
    from ragsonde.ingest import ingest
    from ragsonde.ingest.pipeline import IngestOptions

    path = CHUNKING / "corpora" / "state_of_the_union.md"
    if not path.is_file():
        pytest.skip(f"chunking data not found at {CHUNKING}")
    full = path.read_text(encoding="utf-8")
    text = full[: full.index("\n\n", 8000) + 1]
    root = tmp_path_factory.mktemp("spans")
    (root / "docs").mkdir()
    (root / "docs" / "sotu.md").write_text(text, encoding="utf-8")
    settings = Settings(home=root / "home", collection="sotu")
    store = open_store(settings)
    options = IngestOptions(chunk_size=96, chunk_overlap=0)
    ingest(str(root / "docs"), settings=settings, store=store, embedder=embedder, options=options)
    yield settings, store, text
    store.close()


def words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+(?:-[^\W_]+)*", text.lower())


def is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(w in it for w in small)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["gist", "sentence", "ict", "terms"])
def test_offline_references_are_the_source_sentence_in_the_document(sotu, tmp_path, method):
    settings, store, text = sotu
    out = tmp_path / f"{method}.jsonl"
    report = generate(
        out,
        settings=settings,
        store=store,
        options=GenerateOptions(n=12, seed=3, method=method, ict_collection=f"ict-{method}"),
    )
    chunks = {c.id: c for c in read_chunks(store, "sotu")}
    entries = read_entries(out)
    assert len(entries) >= 8 and report.span_labelled == len(entries)
    assert not report.warnings or "no span" not in " ".join(report.warnings)
    for e in entries:
        (ref,) = e.references
        chunk = chunks[e.source_chunk]
        assert ref.doc_id == "sotu" == e.source_doc
        source = text[ref.start : ref.end]
        assert source in chunk.text and chunk.start <= ref.start < ref.end <= chunk.end
        if method == "terms":  # terms from all over the chunk: the chunk is the reference
            assert source == chunk.text
            continue
        # one whole sentence of the chunk, as the sentence splitter found it
        at = ref.start - chunk.start
        assert (at, ref.end - chunk.start) in sentence_spans(chunk.text)
        if method == "ict":
            assert e.query == source  # the sentence, verbatim
        else:
            assert is_subsequence(e.query.split(), words(source)), (e.query, source)
    # the file is a span-labelled benchmark ragsonde reads (and ragsonde chunking takes)
    bench = load_benchmark(out)
    assert bench.span_labelled and {q.generator for q in bench.queries} == {f"offline:{method}"}


def chat(api: FakeChatAPI, model: str = "gpt-4o-mini") -> ChatClient:
    return ChatClient(model, base_url=f"{api.url}/v1", api_key=None, sleep=lambda s: None)


@pytest.mark.slow
def test_llm_questions_carry_the_excerpt_they_quote(sotu, tmp_path):
    settings, store, text = sotu
    chunks = {c.id: c for c in read_chunks(store, "sotu")}
    with FakeChatAPI() as api:
        report = generate(
            tmp_path / "llm.jsonl",
            settings=settings,
            store=store,
            client=chat(api),
            options=GenerateOptions(n=6, seed=1, llm=MODEL, judge=False),
        )
        assert all("Excerpt:" in str(r.body) for r in api.requests)  # the prompt asks for it
    entries = read_entries(tmp_path / "llm.jsonl")
    assert report.written == 6 == report.span_labelled and report.excerpts_not_found == 0
    for e in entries:
        (ref,) = e.references
        chunk = chunks[e.source_chunk]
        first_line = chunk.text.strip().splitlines()[0]
        # the fake model quotes the passage's first sentence: that is what the span holds
        quoted = re.split(r"(?<=[.!?])\s", first_line, maxsplit=1)[0]
        assert text[ref.start : ref.end] == quoted
        assert e.generator == "llm:openai:gpt-4o-mini" and e.query.startswith("What is known")


@pytest.mark.slow
def test_an_excerpt_not_in_the_chunk_drops_its_question(sotu, tmp_path):
    settings, store, _ = sotu

    def invents(prompt: str) -> str:
        return (
            "Question: What did the speaker promise farmers?\nExcerpt: We will build a moon base."
        )

    with FakeChatAPI(responder=invents) as api:
        client = chat(api, "gpt-4o-nano")  # another model: nothing from the cache
        with pytest.raises(LlmError, match="4 answers came back") as info:
            generate(
                tmp_path / "none.jsonl",
                settings=settings,
                store=store,
                client=client,
                options=GenerateOptions(n=4, seed=1, llm=MODEL, judge=False),
            )
    # no question at all: nothing written (it wrote an empty file), and it says why
    assert "4 had no excerpt found verbatim in their chunk" in str(info.value)
    assert "moon base" in str(info.value) and not (tmp_path / "none.jsonl").exists()
    assert client.usage.failed == 0  # the answers were readable
    assert api.completions == 4


@pytest.mark.slow
def test_an_excerpt_not_in_the_chunk_drops_its_question_and_the_rest_are_written(sotu, tmp_path):
    settings, store, _ = sotu
    from ragsonde.testing.fake_chat_api import default_responder

    answers = []

    def every_other(prompt: str) -> str:
        answers.append(prompt)
        if len(answers) % 2:
            return "Question: What did the speaker promise farmers?\nExcerpt: A moon base."
        return default_responder(prompt)

    with FakeChatAPI(responder=every_other) as api:
        report = generate(
            tmp_path / "half.jsonl",
            settings=settings,
            store=store,
            client=chat(api, "gpt-4o-micro"),
            options=GenerateOptions(n=4, seed=1, llm=MODEL, judge=False),
        )
    assert report.written == 2 == report.excerpts_not_found and api.completions == 4
    assert any("not verbatim in their chunk" in w for w in report.warnings)


def test_a_collection_without_spans_gives_no_references(sectioned, tmp_path):
    settings, store = sectioned  # written through the store: no start/end in its payloads
    report = generate(
        tmp_path / "g.jsonl",
        settings=settings,
        store=store,
        options=GenerateOptions(n=6, seed=1, method="gist"),
    )
    assert report.written == 6 and report.span_labelled == 0
    assert all(e.references is None for e in read_entries(tmp_path / "g.jsonl"))
    assert "references" not in (tmp_path / "g.jsonl").read_text(encoding="utf-8")
    assert any("have no span" in w for w in report.warnings)


def test_locate_finds_an_excerpt_verbatim_or_not_at_all():
    text = "The pulse returns.\nIt is timed  twice, then\naveraged."
    assert locate("The pulse returns.", text) == (0, 18)
    s, e = locate('"It is timed twice, then averaged."', text)  # quotes and line breaks
    assert text[s:e] == "It is timed  twice, then\naveraged."
    assert locate("it is timed twice", text) is None  # case counts
    assert locate("The pulse returned.", text) is None
    assert locate("   ", text) is None
