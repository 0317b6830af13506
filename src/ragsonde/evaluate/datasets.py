"""Benchmarks in: a BEIR folder, TREC qrels + a queries TSV, or ragsonde's JSON Lines / YAML.

Every loader returns a :class:`Benchmark`: queries with their graded relevant ids, and where the
format has one, the corpus to ingest with ``--ingest``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsonde.errors import QueryValidationError

__all__ = ["LOADERS", "BenchQuery", "Benchmark", "detect_benchmark_format", "load_benchmark"]


@dataclass(frozen=True)
class BenchQuery:
    query_id: str
    text: str
    relevant: dict[str, int]
    """Relevant id (document id, url or chunk id) -> graded relevance (≥ 1)."""
    filters: dict[str, Any] | None = None
    top_k: int | None = None


@dataclass(frozen=True)
class Benchmark:
    name: str
    queries: list[BenchQuery]
    corpus: Path | None = None
    skipped: list[str] = field(default_factory=list)
    """Queries left out, with why (no qrels, no text)."""

    @property
    def qrels(self) -> dict[str, dict[str, int]]:
        return {q.query_id: q.relevant for q in self.queries}


def _bad(path: Path, why: str) -> QueryValidationError:
    return QueryValidationError(f"Cannot read benchmark {path}: {why}", field="dataset")


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TREC (``qid 0 docid rel``) or BEIR TSV (``query-id\\tcorpus-id\\tscore``, header, CRLF)."""
    out: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        for n, line in enumerate(f, start=1):
            parts = line.strip().split()
            if not parts:
                continue
            if len(parts) == 4:
                qid, _, doc, rel = parts
            elif len(parts) == 3:
                qid, doc, rel = parts
            else:
                raise _bad(path, f"line {n} has {len(parts)} columns (want 3 or 4)")
            try:
                grade = int(float(rel))
            except ValueError:
                if n == 1:
                    continue  # header
                raise _bad(path, f"line {n}: relevance {rel!r} is not a number") from None
            if grade > 0:
                out.setdefault(qid, {})[doc] = grade
    return out


def _beir(path: Path, split: str) -> Benchmark:
    qrels_path = path / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        have = sorted(p.stem for p in (path / "qrels").glob("*.tsv"))
        raise _bad(path, f"no qrels/{split}.tsv (splits here: {', '.join(have) or 'none'})")
    qrels = read_qrels(qrels_path)
    texts: dict[str, str] = {}
    with (path / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                texts[str(row["_id"])] = str(row.get("text", ""))
    queries, skipped = [], []
    for qid, rel in qrels.items():
        if texts.get(qid, "").strip():
            queries.append(BenchQuery(qid, texts[qid], rel))
        else:
            skipped.append(f"{qid}: not in queries.jsonl")
    corpus = path / "corpus.jsonl"
    return Benchmark(path.name, queries, corpus if corpus.is_file() else None, skipped)


def _trec(path: Path, queries_path: Path | None) -> Benchmark:
    if queries_path is None or not queries_path.is_file():
        raise _bad(path, "TREC qrels need --queries FILE.tsv (query id <TAB> text)")
    qrels = read_qrels(path)
    texts: dict[str, str] = {}
    with queries_path.open(encoding="utf-8", newline="") as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) >= 2:
                texts[row[0].strip()] = row[1].strip()
    queries = [BenchQuery(q, texts[q], r) for q, r in qrels.items() if texts.get(q)]
    skipped = [f"{q}: no text in {queries_path.name}" for q in qrels if not texts.get(q)]
    return Benchmark(path.stem, queries, None, skipped)


def _own_rows(path: Path) -> list[dict[str, Any]]:
    if path.suffix in {".yaml", ".yml"}:
        import yaml

        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        rows = data.get("queries", data) if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise _bad(path, "a YAML benchmark is a list of queries (or {queries: [...]})")
        return rows
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise _bad(path, f"line {n} is not JSON ({e})") from e
    return rows


def _own(path: Path) -> Benchmark:
    queries = []
    for n, row in enumerate(_own_rows(path), start=1):
        if not isinstance(row, dict) or not row.get("query") or "relevant" not in row:
            raise _bad(path, f'entry {n} needs "query" and "relevant"')
        rel = row["relevant"]
        relevant = (
            {str(k): int(v) for k, v in rel.items()}
            if isinstance(rel, dict)
            else {str(r): 1 for r in (rel if isinstance(rel, list) else [rel])}
        )
        queries.append(
            BenchQuery(
                query_id=str(row.get("query_id", n)),
                text=str(row["query"]),
                relevant=relevant,
                filters=row.get("filters"),
                top_k=row.get("top_k"),
            )
        )
    ids = [q.query_id for q in queries]
    if len(set(ids)) != len(ids):
        raise _bad(path, "query_id values repeat")
    return Benchmark(path.stem, queries)


#: Format name -> loader(path, split, queries file).
LOADERS: dict[str, Callable[[Path, str, Path | None], Benchmark]] = {
    "beir": lambda p, split, _q: _beir(p, split),
    "trec": lambda p, _s, q: _trec(p, q),
    "ragsonde": lambda p, _s, _q: _own(p),
}


def detect_benchmark_format(path: Path) -> str:
    if path.is_dir():
        if (path / "queries.jsonl").is_file() and (path / "qrels").is_dir():
            return "beir"
        raise _bad(path, "a folder must be a BEIR dataset (queries.jsonl and qrels/)")
    if path.suffix in {".jsonl", ".yaml", ".yml", ".json"}:
        return "ragsonde"
    return "trec"


def load_benchmark(
    location: str | Path,
    *,
    split: str = "test",
    queries: Path | None = None,
    fmt: str | None = None,
) -> Benchmark:
    """Load a benchmark; the format is detected from the path unless ``fmt`` names one."""
    path = Path(location)
    if not path.exists():
        raise QueryValidationError(f"Benchmark '{location}' does not exist.", field="dataset")
    name = fmt or detect_benchmark_format(path)
    if name not in LOADERS:
        raise QueryValidationError(
            f"Unknown benchmark format '{name}'; use one of {', '.join(LOADERS)}.", field="format"
        )
    bench = LOADERS[name](path, split, queries)
    if not bench.queries:
        raise _bad(path, "no query has both text and relevance judgments")
    return bench
