"""Splitters by name: a text -> its chunks' spans, ``(start, end)`` in ``str`` indices.

Every splitter sizes its chunks in the embedder's own word pieces (its ``tokenizer.json``),
except ``recursive-chars``, which counts characters. They are those of Chroma's report, built on
semantic-text-splitter (already what ``ragsonde ingest`` chunks with):

=================  ======================================================================
``fixed``          windows of exactly ``size`` tokens, ``size - overlap`` apart (Chroma's
                   FixedTokenChunker)
``recursive``      the largest pieces that fit, split at the highest semantic level first
                   (paragraphs, then sentences, then words): Chroma's RecursiveTokenChunker,
                   and what ``ingest`` does
``recursive-chars``  the same, by characters
``markdown``       the same, aware of Markdown structure (headings, lists, code blocks)
``sentence``       whole sentences (pysbd's rule-based boundaries) packed into chunks of at
                   most ``size`` tokens, ``overlap`` as whole trailing sentences
                   (:mod:`~ragsonde.ingest.sentences`)
=================  ======================================================================

``recursive`` is what :class:`~ragsonde.ingest.chunker.Chunker` uses unless told otherwise
(``ragsonde ingest --chunking FILE``, as ``ragsonde chunking --save-config`` writes it). The
chunking sweep's ``ragsonde`` configuration is the pipeline's own
:func:`~ragsonde.ingest.pipeline.chunk_document`: ``recursive`` at the model's window with a
10 % overlap, each chunk embedded after its ``title: section`` line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["SPLITTERS", "TOKEN_UNITS", "Splitter", "split_spans"]

#: ``(text, size, overlap, tokenizer) -> [(start, end), ...]``; ``tokenizer`` is a
#: :class:`tokenizers.Tokenizer` without truncation, or ``None`` for a character splitter.
Splitter = Callable[[str, int, int, Any], list[tuple[int, int]]]


def _spans(pieces: list[tuple[int, str]]) -> list[tuple[int, int]]:
    return [(int(at), int(at) + len(c)) for at, c in pieces if c.strip()]


def _fixed(text: str, size: int, overlap: int, tokenizer: Any) -> list[tuple[int, int]]:
    offsets = tokenizer.encode(text, add_special_tokens=False).offsets
    out: list[tuple[int, int]] = []
    step = size - overlap
    for i in range(0, len(offsets), step):
        window = offsets[i : i + size]
        out.append((window[0][0], window[-1][1]))
        if i + size >= len(offsets):
            break
    return out


def _recursive(text: str, size: int, overlap: int, tokenizer: Any) -> list[tuple[int, int]]:
    from semantic_text_splitter import TextSplitter

    splitter = TextSplitter.from_huggingface_tokenizer(tokenizer, size, overlap=overlap)
    return _spans(splitter.chunk_indices(text))


def _recursive_chars(text: str, size: int, overlap: int, _tok: Any) -> list[tuple[int, int]]:
    from semantic_text_splitter import TextSplitter

    return _spans(TextSplitter(size, overlap=overlap).chunk_indices(text))


def _markdown(text: str, size: int, overlap: int, tokenizer: Any) -> list[tuple[int, int]]:
    from semantic_text_splitter import MarkdownSplitter

    splitter = MarkdownSplitter.from_huggingface_tokenizer(tokenizer, size, overlap=overlap)
    return _spans(splitter.chunk_indices(text))


def _sentence(text: str, size: int, overlap: int, tokenizer: Any) -> list[tuple[int, int]]:
    from ragsonde.ingest.sentences import pack_sentences

    return pack_sentences(text, size, overlap, tokenizer, long=_recursive)


#: Splitter name -> splitter.
SPLITTERS: dict[str, Splitter] = {
    "fixed": _fixed,
    "recursive": _recursive,
    "recursive-chars": _recursive_chars,
    "markdown": _markdown,
    "sentence": _sentence,
}

#: Splitters whose ``size`` counts the embedder's word pieces (the others count characters).
TOKEN_UNITS = frozenset({"fixed", "recursive", "markdown", "sentence", "ragsonde"})


def split_spans(
    name: str, text: str, size: int, overlap: int, tokenizer: Any
) -> list[tuple[int, int]]:
    """``text``'s chunks by splitter ``name`` (a key of :data:`SPLITTERS`), as spans."""
    return SPLITTERS[name](text, size, overlap, tokenizer if name in TOKEN_UNITS else None)
