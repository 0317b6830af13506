"""Benchmark files with provenance: read any benchmark ragsonde reads, write JSON Lines.

A ragsonde JSON Lines file is read as :class:`~.models.BenchmarkEntry` rows (labels and unknown
fields kept). Any other format (BEIR, TREC) goes through :func:`ragsonde.evaluate.load_benchmark`
and its judgements become ``human`` labels judged by the benchmark's name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from ragsonde.errors import QueryValidationError
from ragsonde.labels.models import BenchmarkEntry, Label
from ragsonde.models.text import loads_json

__all__ = ["read_entries", "write_entries"]


def _is_own_jsonl(path: Path) -> bool:
    return path.is_file() and path.suffix == ".jsonl"


def read_entries(
    path: Path, *, split: str = "test", nonempty: bool = False
) -> list[BenchmarkEntry]:
    """The entries of the benchmark at ``path``; labels without provenance become ``human``.

    ``nonempty``: a file with no entry is a VALIDATION_ERROR (``judge`` judged an empty file's
    0 queries and wrote an empty result; ``generate --human`` compared its leakage with 0 human
    queries). The Judge page reads with it off: it starts a benchmark file of its own."""
    entries = _read_entries(path, split)
    if nonempty and not entries:
        raise QueryValidationError(
            f"Cannot read benchmark {path}: it holds no query", field="benchmark"
        )
    return entries


def _read_entries(path: Path, split: str) -> list[BenchmarkEntry]:
    if not path.exists():
        raise QueryValidationError(f"Benchmark '{path}' does not exist.", field="benchmark")
    if not _is_own_jsonl(path):
        from ragsonde.evaluate.datasets import load_benchmark

        bench = load_benchmark(path, split=split)
        judge = f"qrels:{bench.name}"
        return [
            BenchmarkEntry(
                query_id=q.query_id,
                query=q.text,
                relevant=dict(q.relevant),
                labels=[
                    Label(id=d, grade=min(3, g), source="human", judge=judge)
                    for d, g in q.relevant.items()
                ],
            )
            for q in bench.queries
        ]
    entries: list[BenchmarkEntry] = []
    for n, text in _lines(path):
        if not text.strip():
            continue
        try:
            raw = loads_json(text)
            if isinstance(raw, dict) and isinstance(raw.get("relevant"), list):
                raw["relevant"] = {str(r): 1 for r in raw["relevant"]}
            entry = BenchmarkEntry.model_validate(raw)
        except (ValueError, ValidationError) as e:
            raise QueryValidationError(
                f"Cannot read benchmark {path}: line {n}: {e}", field="benchmark"
            ) from e
        if not entry.labels and entry.relevant:
            judge = entry.generator or f"file:{path.name}"
            source = "generator" if entry.generator else "human"
            entry.labels = [
                Label(id=d, grade=min(3, max(0, g)), source=source, judge=judge)
                for d, g in entry.relevant.items()
            ]
        entries.append(entry)
    return entries


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The benchmark's numbered lines (:func:`ragsonde.inputs.text_lines`: bounded, decoded one
    at a time, so an error names its line; a BOM decoded as UTF-8, never guessed as UTF-16)."""
    from ragsonde.inputs import text_lines

    try:
        yield from text_lines(path)
    except ValueError as e:
        raise QueryValidationError(f"Cannot read benchmark {path}: {e}", field="benchmark") from e


def write_entries(path: Path, entries: Iterable[BenchmarkEntry]) -> None:
    """Write ``entries`` as JSON Lines, atomically (a crash never leaves half a file)."""
    from ragsonde.outputs import open_output

    path.parent.mkdir(parents=True, exist_ok=True)
    with open_output(path) as f:
        for e in entries:
            f.write(e.model_dump_json(exclude_none=True) + "\n")
