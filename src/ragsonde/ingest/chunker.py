"""Chunking by the embedder's own tokens (semantic-text-splitter), so no chunk is cut by the model.

all-MiniLM-L6-v2 reads 256 word pieces, ``[CLS]`` and ``[SEP]`` included, and silently drops the
rest: a longer chunk is partly invisible to search. Chunks are therefore sized in the model's word
pieces, leaving room for the special tokens and for the ``title: section`` line embedded with them
(bounded to 32 word pieces with :meth:`Chunker.head`, so it never crowds the chunk's own text out).
Embedders without a local tokenizer (remote APIs) are chunked by characters.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsonde.errors import QueryValidationError

__all__ = ["WINDOW_CHARS", "Chunker", "ChunkerConfig", "windows"]

_SPECIAL_TOKENS = 2  # [CLS] ... [SEP]
_CHARS_DEFAULT = 1500  # for embedders read by characters: ~ 350 tokens of English
_MIN_CAPACITY = 16
#: The most characters one splitter call is given. semantic-text-splitter's time grows with the
#: square of a paragraph's length, in one call Ctrl-C cannot stop: a 46 MB text of one line ran
#: for over an hour (a 3.7 MB one took 27 s). A longer section is chunked window by window
#: (:func:`windows`); shorter ones, nearly all, are chunked whole, as before.
WINDOW_CHARS = 100_000


@dataclass(frozen=True)
class ChunkerConfig:
    """``size`` and ``overlap`` in tokens (or characters when ``tokenizer`` is ``None``)."""

    size: int
    overlap: int
    tokenizer: Path | None
    unit: str
    splitter: str = "recursive"
    """A key of :data:`~ragsonde.ingest.splitters.SPLITTERS` (``ragsonde chunking`` compares
    them)."""

    @classmethod
    def for_embedder(
        cls,
        embedder: Any,
        size: int | None = None,
        overlap: int | None = None,
        splitter: str = "recursive",
    ) -> ChunkerConfig:
        """Defaults that fit the model: its whole window, with a 10 % overlap."""
        from ragsonde.ingest.splitters import SPLITTERS, TOKEN_UNITS

        if splitter not in SPLITTERS:
            raise QueryValidationError(
                f"Unknown splitter {splitter!r}: one of {', '.join(SPLITTERS)}.", field="splitter"
            )
        tokenizer = getattr(embedder, "tokenizer_path", None)
        if tokenizer is not None and splitter not in TOKEN_UNITS:
            tokenizer = None  # a character splitter: sizes in characters
        if tokenizer is None and splitter in TOKEN_UNITS and splitter != "recursive":
            raise QueryValidationError(
                f"The {splitter} splitter counts the model's word pieces, and {embedder.name} "
                "has no local tokenizer.",
                field="splitter",
            )
        if tokenizer is not None:
            window = int(getattr(embedder, "max_tokens", 256)) - _SPECIAL_TOKENS
            chosen = size if size is not None else window
            if chosen > window:
                raise QueryValidationError(
                    f"--chunk-size {chosen} is longer than the model reads ({window} word pieces "
                    f"plus {_SPECIAL_TOKENS} special tokens): the rest of each chunk would be "
                    "invisible to search. Use a smaller size.",
                    field="chunk_size",
                )
            unit = "tokens"
        else:
            chosen = size if size is not None else _CHARS_DEFAULT
            unit = "characters"
        ov = overlap if overlap is not None else chosen // 10
        if chosen < _MIN_CAPACITY:
            raise QueryValidationError(
                f"--chunk-size must be at least {_MIN_CAPACITY} {unit}.", field="chunk_size"
            )
        if not 0 <= ov <= chosen // 2:  # the rule `ragsonde chunking`'s grid checks too
            raise QueryValidationError(
                f"--chunk-overlap must be between 0 and half the chunk size ({chosen // 2}).",
                field="chunk_overlap",
            )
        return cls(size=chosen, overlap=ov, tokenizer=tokenizer, unit=unit, splitter=splitter)


class Chunker:
    """Split text into chunks of at most ``capacity`` units, leaving room for a prefix."""

    def __init__(self, config: ChunkerConfig) -> None:
        self.config = config
        self._tokenizer: Any = None
        if config.tokenizer is not None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(config.tokenizer))
            tok.no_truncation()
            tok.no_padding()
            self._tokenizer = tok

    def length(self, text: str) -> int:
        """``text``'s length in the chunker's unit (special tokens excluded)."""
        if self._tokenizer is None:
            return len(text)
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def head(self, text: str, units: int) -> str:
        """The longest start of ``text`` that is at most ``units`` units long, cut between words
        where it can be (a word cut in two can take more word pieces than it did whole)."""
        if self.length(text) <= units:
            return text
        if self._tokenizer is None:
            cut = text[: units + 1]
            space = max(cut.rfind(" "), cut.rfind("\n"))
            return (cut[:space] if space > 0 else cut[:units]).rstrip()
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        for n in range(units, 0, -1):  # where the first piece that does not fit starts
            at = offsets[n][0]
            space = max(text.rfind(" ", 0, at + 1), text.rfind("\n", 0, at + 1))
            head = (text[:space] if space > 0 else text[:at]).rstrip()
            if self.length(head) <= units:
                return head
        return ""

    def _overlap(self, capacity: int) -> int:
        """The overlap between chunks of ``capacity`` units: the configured one, never over half
        the capacity (which the room left for a ``title: section`` line shrinks). It was kept
        below half: ``fixed 250/125``, as ``ragsonde chunking`` measured and saved it for
        ``--chunking``, was cut with an overlap of 124."""
        return max(min(self.config.overlap, capacity // 2), 0)

    @functools.lru_cache(maxsize=64)  # noqa: B019 - one chunker per run; few distinct capacities
    def _splitter(self, capacity: int) -> Any:
        from semantic_text_splitter import TextSplitter

        overlap = self._overlap(capacity)
        if self._tokenizer is None:
            return TextSplitter(capacity, overlap=overlap)
        return TextSplitter.from_huggingface_tokenizer(self._tokenizer, capacity, overlap=overlap)

    def split(self, text: str, reserved: int = 0) -> list[str]:
        """Chunks of ``text``, each at most ``size - reserved`` units long."""
        return [c for _, c in self.split_at(text, reserved)]

    def split_at(self, text: str, reserved: int = 0) -> list[tuple[int, str]]:
        """:meth:`split`'s chunks with where each starts in ``text`` (a ``str`` index):
        ``text[start : start + len(chunk)] == chunk``."""
        capacity = max(self.config.size - reserved, _MIN_CAPACITY)
        return [
            (at + start, chunk)
            for at, window in windows(text)
            for start, chunk in self._split_window(window, capacity)
        ]

    def _split_window(self, text: str, capacity: int) -> list[tuple[int, str]]:
        if self.config.splitter != "recursive":
            from ragsonde.ingest.splitters import SPLITTERS

            spans = SPLITTERS[self.config.splitter](
                text, capacity, self._overlap(capacity), self._tokenizer
            )
            return [(s, text[s:e]) for s, e in spans if text[s:e].strip()]
        pieces = self._splitter(capacity).chunk_indices(text)
        return [(int(start), c) for start, c in pieces if c.strip()]


def windows(text: str, size: int = WINDOW_CHARS) -> Iterator[tuple[int, str]]:
    """``text`` as ``(start, window)`` pieces of at most ``size`` characters (one when it is no
    longer), each cut at the last blank line, line end, sentence end or space of its second half
    (a hard cut where it has none); ``text[start : start + len(window)] == window``."""
    start = 0
    while len(text) - start > size:
        end = start + size
        for sep in ("\n\n", "\n", ". ", " "):
            cut = text.rfind(sep, start + size // 2, end)
            if cut >= 0:
                end = cut + len(sep)
                break
        yield start, text[start:end]
        start = end
    yield start, text[start:]
