"""The sentence-aware splitter: whole sentences packed into chunks of at most ``size`` tokens.

Sentence boundaries are pysbd's (Sadvilkar and Neumann, "PySBD: Pragmatic Sentence Boundary
Disambiguation", 2020: the Golden Rules of the Pragmatic Segmenter, rule-based, pure Python),
which knows ``Dr.``, ``e.g.``, ``U.S.`` and numbers such as ``3.5`` are not sentence ends.
Each sentence is located in the text in order (``clean=False`` keeps pysbd's sentences
verbatim; its own ``char_span`` searches the whole text again for every sentence), so a
sentence's span is ``text[start:end]`` as written, surrounding white space trimmed.

Packing, in the embedder's word pieces (counted once, on the whole text's encoding: a chunk's
length is the number of its tokens that start inside it):

* sentences are added to a chunk while the chunk stays within ``size`` tokens;
* the next chunk starts with the last sentences of the previous one, as many whole sentences
  as fit in ``overlap`` tokens (and still leave room for the next new sentence), so an overlap
  never cuts a sentence;
* a sentence longer than ``size`` tokens is split by the ``recursive`` splitter into chunks of
  its own (no overlap across it): the only chunks that start or end inside a sentence.

Speed (``bench/bench_splitters.py``, 200 tokens, ratios to ``recursive`` in the same run): pysbd
is slower than the other splitters, and the more so the longer the text: 3.1x on
state_of_the_union (0.32 s), 2.6x on wikitexts (0.71 s), 5.9x on pubmed (13.9 s for 500 KB).
Its sentences are cached per text, so every further size of one sweep packs in 0.2-0.3x the
time of ``recursive``. Both are small beside embedding the chunks (minutes per configuration
on these corpora); the cost that keeps ``sentence`` out of the default grid is that one more
configuration is one more embedding pass over the corpus (``--config-grid 'sentence 200/0'``).
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

__all__ = ["pack_sentences", "sentence_spans"]

#: ``(text, size, overlap, tokenizer) -> spans``: the splitter for over-long sentences.
LongSplitter = Callable[[str, int, int, Any], list[tuple[int, int]]]


@functools.lru_cache(maxsize=1)
def _segmenter() -> Any:
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


@functools.lru_cache(maxsize=64)  # the sweep splits the same sections for every size
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """``text``'s sentences (pysbd, English) as ``(start, end)`` spans, white space trimmed."""
    out: list[tuple[int, int]] = []
    cursor = 0
    for sentence in _segmenter().segment(text):
        piece = sentence.strip()
        if not piece:
            continue
        at = text.find(piece, cursor)
        if at < 0:  # pysbd changed the text: never guess where it was
            raise ValueError(f"pysbd returned a sentence that is not in the text: {piece[:60]!r}")
        out.append((at, at + len(piece)))
        cursor = at + len(piece)
    return tuple(out)


class _Counter:
    """Word pieces of any span of ``text``: the tokens of its one encoding that start there."""

    def __init__(self, text: str, tokenizer: Any) -> None:
        offsets = tokenizer.encode(text, add_special_tokens=False).offsets
        self._starts = [s for s, _ in offsets]

    def __call__(self, start: int, end: int) -> int:
        return bisect_left(self._starts, end) - bisect_left(self._starts, start)


def pack_sentences(
    text: str, size: int, overlap: int, tokenizer: Any, *, long: LongSplitter
) -> list[tuple[int, int]]:
    """``text``'s chunks as spans: whole sentences up to ``size`` tokens, ``overlap`` as whole
    trailing sentences (see the module docstring); ``long`` splits a sentence over ``size``."""
    count = _Counter(text, tokenizer)
    chunks: list[tuple[int, int]] = []
    run: list[tuple[int, int]] = []  # consecutive sentences of at most size tokens each

    def flush() -> None:
        chunks.extend(_pack(run, size, overlap, count))
        run.clear()

    for s, e in sentence_spans(text):
        if count(s, e) <= size:
            run.append((s, e))
            continue
        flush()
        chunks.extend((s + a, s + b) for a, b in long(text[s:e], size, 0, tokenizer))
    flush()
    return chunks


def _pack(
    units: list[tuple[int, int]], size: int, overlap: int, count: Callable[[int, int], int]
) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j = i + 1  # one sentence always fits: each is at most size tokens
        while j < len(units) and count(units[i][0], units[j][1]) <= size:
            j += 1
        out.append((units[i][0], units[j - 1][1]))
        if j == len(units):
            break
        k = j  # the next chunk repeats units[k:j]: whole sentences, within overlap tokens
        while (
            k - 1 > i
            and count(units[k - 1][0], units[j - 1][1]) <= overlap
            and count(units[k - 1][0], units[j][1]) <= size
        ):
            k -= 1
        i = k
    return out
