"""The ``sentence`` splitter: pysbd's sentences packed whole into chunks of at most ``size`` of
the real model's word pieces, the overlap whole trailing sentences, over-long sentences split."""

from __future__ import annotations

from itertools import pairwise

import pytest

from ragsonde.ingest.chunker import Chunker, ChunkerConfig
from ragsonde.ingest.sentences import sentence_spans
from ragsonde.ingest.splitters import split_spans
from tests.support import CHUNKING

# Abbreviations and decimals pysbd must not end a sentence at ("Dr.", "e.g.", "3.5", "U.S.").
TEXT = (
    "Dr. Smith measured the lidar range at 3.5 metres in the U.S. lab on Monday. "
    "The sonar, e.g. the cheap one, reported a shorter distance. "
    "Nobody knew why! Was the echo reflected twice? "
    "The team logged every reading and compared the two sensors over a week of tests. "
    "In the end the lidar was trusted and the sonar was moved to the bumper.\n\n"
    "A second paragraph starts here. It has three short sentences. This is the last one."
)


@pytest.fixture(scope="module")
def tokenizer(embedder):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(embedder.tokenizer_path))
    tok.no_truncation()
    tok.no_padding()
    return tok


def tokens(tokenizer, text: str) -> int:
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def test_sentences_are_pysbds_and_abbreviations_do_not_end_one():
    spans = sentence_spans(TEXT)
    sentences = [TEXT[s:e] for s, e in spans]
    assert sentences[0] == (
        "Dr. Smith measured the lidar range at 3.5 metres in the U.S. lab on Monday."
    )
    assert sentences[1] == "The sonar, e.g. the cheap one, reported a shorter distance."
    assert sentences[2:4] == ["Nobody knew why!", "Was the echo reflected twice?"]
    assert len(sentences) == 9 and sentences[-1] == "This is the last one."


def test_chunks_are_whole_sentences_within_size(tokenizer):
    starts = {s for s, _ in sentence_spans(TEXT)}
    ends = {e for _, e in sentence_spans(TEXT)}
    assert max(tokens(tokenizer, TEXT[s:e]) for s, e in sentence_spans(TEXT)) <= 24
    for size in (24, 40, 64, 200):
        chunks = split_spans("sentence", TEXT, size, 0, tokenizer)
        for s, e in chunks:
            assert s in starts and e in ends  # contiguous sentences, never cut
            assert tokens(tokenizer, TEXT[s:e]) <= size
        # no overlap: each sentence in exactly one chunk, in order, all of them
        assert [s for s, _ in chunks] == sorted(s for s, _ in chunks)
        inside = [sum(1 for s, e in chunks if s <= a and b <= e) for a, b in sentence_spans(TEXT)]
        assert inside == [1] * len(inside)
        # packed: no two neighbours would fit in one chunk
        for (s1, _), (_, e2) in pairwise(chunks):
            assert tokens(tokenizer, TEXT[s1:e2]) > size
    assert split_spans("sentence", TEXT, 200, 0, tokenizer) == [(0, len(TEXT))]


def test_overlap_is_whole_trailing_sentences_within_overlap(tokenizer):
    spans = sentence_spans(TEXT)
    chunks = split_spans("sentence", TEXT, 40, 16, tokenizer)
    plain = split_spans("sentence", TEXT, 40, 0, tokenizer)
    assert len(chunks) > len(plain)
    repeated = 0
    for (s1, e1), (s2, e2) in pairwise(chunks):
        assert s1 < s2 and e1 < e2  # every chunk moves on
        if s2 < e1:  # the shared part: whole sentences at the end of the first chunk
            repeated += 1
            assert s2 in {s for s, _ in spans} and e1 in {e for _, e in spans}
            assert tokens(tokenizer, TEXT[s2:e1]) <= 16
    assert repeated >= 2
    assert all(tokens(tokenizer, TEXT[s:e]) <= 40 for s, e in chunks)


def test_a_sentence_longer_than_size_is_split_and_only_it(tokenizer):
    long = "The rover logged " + ", ".join(f"reading {i} at dawn" for i in range(60)) + "."
    text = f"A short opening sentence. {long} A short closing sentence."
    assert tokens(tokenizer, long) > 100
    chunks = split_spans("sentence", text, 48, 8, tokenizer)
    at = text.index(long)
    inside = [(s, e) for s, e in chunks if at <= s and e <= at + len(long)]
    assert len(inside) >= 3  # the long sentence: split, in chunks of its own
    assert all(tokens(tokenizer, text[s:e]) <= 48 for s, e in chunks)
    assert text[chunks[0][0] : chunks[0][1]] == "A short opening sentence."
    assert text[chunks[-1][0] : chunks[-1][1]] == "A short closing sentence."
    covered = {i for s, e in chunks for i in range(s, e)}
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_on_a_real_corpus_every_chunk_is_a_verbatim_run_of_sentences(tokenizer):
    path = CHUNKING / "corpora" / "state_of_the_union.md"
    if not path.is_file():
        pytest.skip(f"chunking data not found at {CHUNKING}")
    text = path.read_text(encoding="utf-8")[:12_000]
    spans = sentence_spans(text)
    starts, ends = {s for s, _ in spans}, {e for _, e in spans}
    chunks = split_spans("sentence", text, 128, 32, tokenizer)
    assert len(chunks) > 10
    for s, e in chunks:
        assert tokens(tokenizer, text[s:e]) <= 128
        assert s in starts and e in ends
    covered = {i for s, e in chunks for i in range(s, e)}
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_ingest_chunks_with_it_by_name(embedder):
    chunker = Chunker(ChunkerConfig.for_embedder(embedder, 40, 0, "sentence"))
    pieces = chunker.split_at(TEXT)
    assert [TEXT[at : at + len(c)] for at, c in pieces] == [c for _, c in pieces]
    assert all(c.rstrip().endswith((".", "!", "?")) for _, c in pieces)
