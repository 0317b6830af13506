"""Judging by hand (the web page's Judge view): benchmark files by name, one grade at a time.

A benchmark lives in ``RAGSONDE_HOME/benchmarks/NAME.jsonl`` (ragsonde's JSON Lines format). Each
grade is written at once, atomically and one process at a time (:func:`ragsonde.outputs.updating`:
two servers on one home lose none of each other's), as a ``human`` :class:`~.models.Label` with
who and when; a new grade for the same chunk by the same judge replaces the old one.
``relevant`` holds every judged item with its best grade, zeros included: a 0 is a judgement
(not relevant), so ``judged@k`` counts it and the metrics score it as a miss, as trec_eval reads
graded qrels.

Names are plain file names (``letters, digits, - and _``, optional ``.jsonl``), never paths.
The pool's order is a shuffle seeded by the query, so it is stable across reloads and hides
which retrieval mode ranked a hit where.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from ragsonde.errors import QueryValidationError
from ragsonde.labels.benchfile import read_entries, write_entries
from ragsonde.labels.models import BenchmarkEntry, Label
from ragsonde.labels.pool import PooledHit
from ragsonde.outputs import updating

__all__ = [
    "NAME_PATTERN",
    "NAME_PATTERN_JSONL",
    "benchmark_path",
    "judged_counts",
    "list_benchmarks",
    "query_id_for",
    "record_grade",
    "shuffled",
]

#: A benchmark's name, as a file name's stem (``NAME.jsonl`` under ``home/benchmarks``).
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
#: The same, as the HTTP API publishes it (the ``.jsonl`` may be given).
NAME_PATTERN_JSONL = NAME_PATTERN.removesuffix("$") + r"(\.jsonl)?$"
_NAME = re.compile(NAME_PATTERN)
# One writer at a time in this process (threads wait here, not polling the file lock), and one
# process at a time through the file lock: read-modify-write of a benchmark file.
_WRITE = threading.Lock()


def benchmark_path(home: Path, name: str) -> Path:
    """``home/benchmarks/NAME.jsonl``; a name with a path, a dot or odd characters is refused."""
    stem = name.removesuffix(".jsonl")
    if not _NAME.fullmatch(stem):
        raise QueryValidationError(
            f"Benchmark name '{name}' is not a plain file name: use letters, digits, - and _ "
            "(at most 64), optionally ending in .jsonl.",
            field="benchmark",
        )
    return Path(home) / "benchmarks" / f"{stem}.jsonl"


def list_benchmarks(home: Path) -> list[Path]:
    """The benchmark files under ``home/benchmarks``, by name."""
    folder = Path(home) / "benchmarks"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file() and _NAME.fullmatch(p.stem))


def query_id_for(text: str) -> str:
    """A stable id for a new query: the same text always gets the same id."""
    return "q" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


def shuffled(hits: Sequence[PooledHit], query: str) -> list[PooledHit]:
    """``hits`` in an order seeded by the query: stable, and blind to the modes' ranks."""
    order = sorted(hits, key=lambda h: h.chunk_id)
    seed = int.from_bytes(hashlib.sha256(query.strip().encode("utf-8")).digest()[:8], "big")
    random.Random(seed).shuffle(order)  # noqa: S311 (an order to show, not a secret)
    return order


def judged_counts(entry: BenchmarkEntry) -> dict[str, int]:
    """Chunk id -> its human grade in ``entry`` (the newest, where a chunk was graded twice)."""
    out: dict[str, int] = {}
    for lab in sorted(entry.labels, key=lambda lab: lab.at):
        if lab.source == "human" and lab.chunk_id is not None:
            out[lab.chunk_id] = lab.grade
    return out


def record_grade(
    path: Path, query: str, *, doc_id: str, chunk_id: str, grade: int, judge: str
) -> BenchmarkEntry:
    """Save one grade for ``query`` to the benchmark at ``path`` (made if missing); the entry."""
    text = query.strip()
    if not text:
        raise QueryValidationError("The query has no text to judge.", field="query")
    try:
        label = Label(id=doc_id, grade=grade, source="human", judge=judge, chunk_id=chunk_id)
    except ValidationError as e:
        raise QueryValidationError(f"Bad grade: {e.errors()[0]['msg']}", field="grade") from e
    with _WRITE, updating(path):
        entries = read_entries(path) if path.exists() else []
        entry = next((e for e in entries if e.query.strip() == text), None)
        if entry is None:
            entry = BenchmarkEntry(query_id=query_id_for(text), query=text)
            entries.append(entry)
        entry.labels = [
            lab
            for lab in entry.labels
            if not (lab.chunk_id == chunk_id and lab.source == "human" and lab.judge == judge)
        ] + [label]
        entry.relevant = entry.labelled()
        write_entries(path, entries)
    return entry
