"""Benchmarks in: a BEIR folder, TREC qrels + a queries TSV (or BEIR queries.jsonl), ragsonde's
JSON Lines / YAML, or Chroma's chunking-evaluation questions CSV.

A ragsonde row may label its answer by span, ``references: [{doc_id, start, end}]``, instead of
or beside ``relevant`` (which then defaults to the references' documents).

Every loader returns a :class:`Benchmark`: queries with their graded relevant ids, and where the
format has one, the corpus to ingest with ``--ingest``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.bench_files import Lines, Unreadable, bad, csv_rows, in_command
from ragsonde.evaluate.label_sources import check_labels, judged, machine_source
from ragsonde.evaluate.row_fields import GRADE_LIMIT, check_search, relevant_of, text_and_id
from ragsonde.evaluate.spans import Span
from ragsonde.models.text import as_location, check_json, loads_json, printable
from ragsonde.models.validation import id_text

__all__ = [
    "LOADERS",
    "BenchQuery",
    "Benchmark",
    "detect_benchmark_format",
    "load_benchmark",
    "require_labelled",
]


@dataclass(frozen=True)
class BenchQuery:
    query_id: str
    text: str
    relevant: dict[str, int]
    """Relevant id (document id, url or chunk id) -> graded relevance (≥ 1)."""
    filters: dict[str, Any] | None = None
    top_k: int | None = None
    references: tuple[Span, ...] = ()
    """The answer's excerpts (span-labelled benchmarks): scored by the span metrics
    (:mod:`ragsonde.evaluate.spans`); ``relevant`` defaults to their documents."""
    generator: str | None = None
    """What wrote the question when it was generated (a row's ``generator``, as
    ``ragsonde generate`` writes it: ``offline:gist``, ``llm:…``); None for a given one."""
    machine_labels: str | None = None
    """Who made the labels when a machine did, none of them a person's (``generator:…``: the
    generated question's source; ``llm:…``: an LLM judge's); None for human labels."""
    source_chunk: str | None = None
    """The chunk a generated question was made from (a row's ``source_chunk``)."""


@dataclass(frozen=True)
class Benchmark:
    name: str
    queries: list[BenchQuery]
    corpus: Path | None = None
    skipped: list[str] = field(default_factory=list)
    """Queries left out, with why (no qrels, no text)."""
    pooled: bool = False
    """Whether the labels come from judging pools of hits (an LLM's or a person's labels, or
    hits judged not relevant), so that an unlabelled hit in the top k is a hole in the pool.
    False for sparse labels (a known item per query, as SciFact and ``generate`` give), where
    an unlabelled hit counts as not relevant by IR evaluation's standard assumption."""

    @property
    def qrels(self) -> dict[str, dict[str, int]]:
        return {q.query_id: q.relevant for q in self.queries}

    @property
    def span_labelled(self) -> bool:
        """Whether every query names its answer's excerpts (the span metrics apply)."""
        return all(q.references for q in self.queries)


def _first_row(path: Path) -> list[str]:
    for line in Lines(path):
        if line.strip():
            return line.split()
    return []


def _trec_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``qid iteration docid rel``, read with ir-measures' reader."""
    import ir_measures

    lines = Lines(path)
    out: dict[str, dict[str, int]] = {}
    try:
        for qrel in ir_measures.read_trec_qrels(lines):  # type: ignore[no-untyped-call]
            if abs(qrel.relevance) > GRADE_LIMIT:  # trec_eval holds it in a C int
                raise ValueError(f"relevance {qrel.relevance} is beyond ±{GRADE_LIMIT:,}")
            if qrel.relevance > 0:
                out.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    except ValueError as e:  # a row of the wrong width, or a relevance that is no integer
        raise bad(path, f"line {lines.n} is not 'qid 0 docid relevance' ({e})") from e
    return out


def _beir_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR's TSV: ``query-id <TAB> corpus-id <TAB> score``, a header, maybe CRLF."""
    lines = Lines(path)
    out: dict[str, dict[str, int]] = {}
    for row in csv_rows(lines, delimiter="\t"):
        n = lines.n
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        if len(cells) != 3:
            raise bad(path, f"line {n} has {len(cells)} columns (want 3 or 4)")
        qid, doc, rel = cells
        try:
            value = float(rel)
        except ValueError:
            if n == 1:
                continue  # header
            raise bad(path, f"line {n}: relevance {rel!r} is not a number") from None
        if not value.is_integer():  # 1.7 was read as 1, inf ended the run in a traceback
            raise bad(path, f"line {n}: relevance {rel!r} is not a whole number")
        if abs(value) > GRADE_LIMIT:  # trec_eval holds it in a C int
            raise bad(path, f"line {n}: relevance {rel!r} is beyond ±{GRADE_LIMIT:,}")
        grade = int(value)
        if grade > 0:
            out.setdefault(qid, {})[doc] = grade
    return out


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TREC qrels (``qid 0 docid rel``) or BEIR TSV (``query-id\tcorpus-id\tscore``)."""
    width = len(_first_row(path))
    if width == 4:
        return _trec_qrels(path)
    if width in {0, 3}:
        return _beir_qrels(path)
    raise bad(path, f"line 1 has {width} columns (want 3 or 4)")


def _beir(path: Path, split: str) -> Benchmark:
    qrels_path = path / "qrels" / f"{split}.tsv"
    if qrels_path.is_dir():
        raise bad(qrels_path, "it is a folder, not a file")
    if not qrels_path.is_file():
        have = sorted(p.stem for p in (path / "qrels").glob("*.tsv"))
        raise bad(path, f"no qrels/{split}.tsv (splits here: {', '.join(have) or 'none'})")
    qrels = read_qrels(qrels_path)
    texts = _beir_queries(path / "queries.jsonl")
    queries, skipped = [], []
    for qid, rel in qrels.items():
        if texts.get(qid, "").strip():
            queries.append(BenchQuery(qid, texts[qid], rel))
        else:
            skipped.append(f"{qid}: not in queries.jsonl")
    corpus = path / "corpus.jsonl"
    return Benchmark(path.name, queries, corpus if corpus.is_file() else None, skipped)


def _trec(path: Path, queries_path: Path | None) -> Benchmark:
    # the qrels first: a file of no format ragsonde reads (binary, a PDF) is detected as TREC,
    # and was refused as "TREC qrels need a queries file", which sent its user for one
    qrels = read_qrels(path)
    if queries_path is None or not queries_path.exists():
        raise bad(
            path,
            "TREC qrels need a queries file (queries_file: id <TAB> text, or BEIR queries.jsonl)",
        )
    texts = _query_texts(queries_path)
    queries = [BenchQuery(q, texts[q], r) for q, r in qrels.items() if texts.get(q)]
    skipped = [f"{q}: no text in {queries_path.name}" for q in qrels if not texts.get(q)]
    return Benchmark(path.stem, queries, None, skipped)


def _beir_queries(path: Path) -> dict[str, str]:
    """BEIR's ``queries.jsonl``: ``{"_id", "text"}`` per line -> text by query id."""
    texts: dict[str, str] = {}
    for n, row in _json_lines(path):
        if not isinstance(row, dict) or "_id" not in row:
            raise bad(path, f'line {n} has no "_id"')
        texts[str(row["_id"])] = str(row.get("text", ""))
    return texts


def _query_texts(path: Path) -> dict[str, str]:
    """A TREC queries file: TSV (``id<TAB>text``), or BEIR's ``queries.jsonl`` by its suffix
    (read as a TSV it gave no text at all, and the benchmark no query)."""
    if path.suffix == ".jsonl":
        return {qid: text.strip() for qid, text in _beir_queries(path).items()}
    texts: dict[str, str] = {}
    for row in csv_rows(Lines(path), delimiter="\t"):
        if len(row) >= 2:
            texts[row[0].strip()] = row[1].strip()
    return texts


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    lines = Lines(path)
    for line in lines:
        if line.strip():
            try:
                yield lines.n, loads_json(line)
            except json.JSONDecodeError as e:
                raise bad(path, f"line {lines.n} is not JSON ({e})") from e
            except ValueError as e:  # a lone surrogate in a field (named)
                raise bad(path, f"line {lines.n}: {e}") from e


def _yaml_rows(path: Path) -> list[Any]:
    import yaml

    from ragsonde.inputs import MAX_DOCUMENT_BYTES, joined, size_text

    try:  # a YAML document is read whole: bounded, as a JSON one is
        text = joined(Lines(path))
    except ValueError as e:
        raise bad(
            path,
            f"it is larger than {size_text(MAX_DOCUMENT_BYTES)}, the most ragsonde reads of "
            "a YAML benchmark; write it as JSON Lines (read a row at a time)",
        ) from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise bad(path, f"{where}not valid YAML ({getattr(e, 'problem', None) or e})") from e
    try:
        check_json(data)
    except ValueError as e:
        raise bad(path, str(e)) from e
    rows = data.get("queries", data) if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise bad(path, "a YAML benchmark is a list of queries (or {queries: [...]})")
    return rows


def _own_rows(path: Path) -> list[Any]:
    if path.suffix in {".yaml", ".yml"}:
        return _yaml_rows(path)
    return [row for _, row in _json_lines(path)]


def _spans(path: Path, where: str, refs: Any, doc_id: str | None = None) -> tuple[Span, ...]:
    """``[{doc_id, start, end}]`` (Chroma's ``start_index``/``end_index`` too, and ``doc_id``
    from the row's ``corpus_id`` when given) -> spans; anything else names the entry."""
    if not isinstance(refs, list) or not refs:
        raise bad(path, f"{where}: references must be a non-empty list of {{doc_id, start, end}}")
    out = []
    for ref in refs:
        if not isinstance(ref, dict):
            raise bad(path, f"{where}: each reference is an object {{doc_id, start, end}}")
        doc = ref.get("doc_id", doc_id)
        start, end = ref.get("start", ref.get("start_index")), ref.get("end", ref.get("end_index"))
        if (
            doc is None
            or not isinstance(start, int)
            or not isinstance(end, int)
            or isinstance(start, bool)
            or isinstance(end, bool)
        ):
            raise bad(path, f"{where}: a reference needs doc_id and integer start and end")
        try:
            content = ref.get("content")
            doc_text = id_text(doc, "a reference's doc_id")
            out.append(Span(doc_text, start, end, content if isinstance(content, str) else None))
        except QueryValidationError as e:
            raise bad(path, f"{where}: {e.message}") from None
        except ValueError as e:
            raise bad(path, f"{where}: {e}") from None
    return tuple(out)


def _own(path: Path) -> Benchmark:
    queries = []
    for n, row in enumerate(_own_rows(path), start=1):
        if not isinstance(row, dict) or not row.get("query"):
            raise bad(path, f'entry {n} needs "query" and "relevant" (or "references")')
        try:
            check_labels(row)
            check_search(row)
            text, query_id = text_and_id(row, n)
        except ValueError as e:
            raise bad(path, f"entry {n}: {e}") from None
        if not ("relevant" in row or "references" in row):  # unlabelled (traffic): no ids
            row = {**row, "relevant": {}}
        refs = _spans(path, f"entry {n}", row["references"]) if "references" in row else ()
        rel = row.get("relevant", sorted({r.doc_id for r in refs}))
        try:
            relevant = relevant_of(rel)
        except ValueError as e:
            raise bad(path, f"entry {n}: {e}") from None
        queries.append(
            BenchQuery(
                query_id=query_id,
                text=text,
                relevant=relevant,
                filters=row.get("filters"),
                top_k=row.get("top_k"),
                references=refs,
                generator=str(row["generator"]) if row.get("generator") else None,
                machine_labels=machine_source(row) if relevant else None,
                source_chunk=str(row["source_chunk"]) if row.get("source_chunk") else None,
            )
        )
    ids = [q.query_id for q in queries]
    if len(set(ids)) != len(ids):
        raise bad(path, "query_id values repeat")
    return Benchmark(path.stem, queries, pooled=any(judged(row) for row in _own_rows(path)))


#: The header of Chroma's chunking-evaluation questions (``questions_df.csv``).
CHROMA_HEADER = ["question", "references", "corpus_id"]


def _chroma(path: Path) -> Benchmark:
    """Chroma's questions CSV: ``question, references, corpus_id``, references a JSON list of
    ``{content, start_index, end_index}`` into the corpus whose file stem is ``corpus_id``."""
    lines = Lines(path)
    rows = csv_rows(lines)
    header = next(rows, None)
    if header is None or [h.strip() for h in header] != CHROMA_HEADER:
        raise bad(path, f"line 1 must be the header {','.join(CHROMA_HEADER)}")
    queries = []
    for n, row in enumerate(rows, start=1):
        if not any(c.strip() for c in row):
            continue
        where = f"line {lines.n}"
        if len(row) != 3:
            raise bad(path, f"{where} has {len(row)} columns (want 3)")
        question, refs, corpus = (c.strip() for c in row)
        try:
            parsed = loads_json(refs)
        except ValueError as e:
            raise bad(path, f"{where}: references are not JSON ({e})") from e
        spans = _spans(path, where, parsed, corpus)
        queries.append(
            BenchQuery(
                str(n),
                question,
                {d: 1 for d in sorted({s.doc_id for s in spans})},
                references=spans,
            )
        )
    return Benchmark(path.stem, queries)


#: Format name -> loader(path, split, queries file).
LOADERS: dict[str, Callable[[Path, str, Path | None], Benchmark]] = {
    "beir": lambda p, split, _q: _beir(p, split),
    "trec": lambda p, _s, q: _trec(p, q),
    "ragsonde": lambda p, _s, _q: _own(p),
    "chroma": lambda p, _s, _q: _chroma(p),
}


def detect_benchmark_format(path: Path) -> str:
    if path.is_dir():
        if (path / "queries.jsonl").is_file() and (path / "qrels").is_dir():
            return "beir"
        raise bad(path, "a folder must be a BEIR dataset (queries.jsonl and qrels/)")
    if path.suffix in {".jsonl", ".yaml", ".yml", ".json"}:
        return "ragsonde"
    if path.suffix == ".csv":
        return "chroma"
    return "trec"


def require_labelled(bench: Benchmark, path: str | Path, *, shown_as: str | None = None) -> None:
    """Refuse, for an estimate, a benchmark no row of which is labelled (read with
    ``keep_unlabelled``, as ``judge`` reads one to label it); it had reached the relevance
    check: "No relevance ids to resolve.". ``shown_as``: as :func:`load_benchmark`'s."""
    if bench.queries and not any(q.relevant for q in bench.queries):
        raise bad(
            Path(path),
            f"none of its {len(bench.queries)} queries is labelled, and an estimate rests on "
            "some a person labelled. Judge a few in the web page's Judge view (`ragsonde "
            "serve`), or read their label-free health with `ragsonde traffic "
            f"{in_command(path, shown_as)} -c COLLECTION`",
            shown_as,
        )


def load_benchmark(
    location: str | Path,
    *,
    split: str = "test",
    queries: Path | None = None,
    fmt: str | None = None,
    keep_unlabelled: bool = False,
    shown_as: str | None = None,
) -> Benchmark:
    """Load a benchmark; the format is detected from the path unless ``fmt`` names one.

    A ragsonde row without ``relevant`` or ``references`` is unlabelled (a query read from
    traffic, :mod:`ragsonde.traffic`): it is left out and listed in ``skipped`` (a benchmark of
    unlabelled rows only is a VALIDATION_ERROR saying how to label it), unless
    ``keep_unlabelled`` (an estimate), when it is kept with no relevant ids; then a row's LLM
    labels are not gold either (:func:`ragsonde.evaluate.provenance.gold_only`).

    ``shown_as`` is what the errors call the benchmark instead of ``benchmark PATH`` (``"the
    uploaded benchmark"``: a server's copy of rows it was sent, at a path the client never
    named); a file inside it (a BEIR folder's qrels) is named by its path within, and a command
    an error suggests names it ``BENCHMARK.jsonl`` (by its suffix). A file that is not part of
    it (a TREC queries file) is still named by its own path."""
    path = Path(as_location(location, "dataset"))
    try:
        return _load(path, split, queries, fmt, keep_unlabelled, shown_as)
    except Unreadable as e:
        if shown_as is None or not e.path.is_relative_to(path):
            raise
        within = e.path.relative_to(path).as_posix()
        named = shown_as if within == "." else f"{shown_as} ({within})"
        raise bad(e.path, e.why, named) from e.__cause__  # its message names the path


def _load(
    path: Path,
    split: str,
    queries: Path | None,
    fmt: str | None,
    keep_unlabelled: bool,
    shown_as: str | None,
) -> Benchmark:
    if not path.exists():
        what = f"Benchmark '{printable(str(path))}'" if shown_as is None else shown_as
        raise QueryValidationError(f"{what[:1].upper()}{what[1:]} does not exist.", field="dataset")
    if not (path.is_dir() or path.is_file()):  # a device or a FIFO would never end
        raise bad(path, "it is not a regular file or a folder")
    if path.is_file() and path.stat().st_size == 0:
        raise bad(path, "it is empty")
    name = fmt or detect_benchmark_format(path)
    if name not in LOADERS:
        raise QueryValidationError(
            f"Unknown benchmark format '{name}'; use one of {', '.join(LOADERS)}.", field="format"
        )
    bench = LOADERS[name](path, split, queries)
    if keep_unlabelled and name == "ragsonde":  # an estimate: an LLM's labels are never gold
        from ragsonde.evaluate.provenance import gold_only

        bench = gold_only(bench, _own_rows(path))
    unlabelled = [q for q in bench.queries if not q.relevant]
    if unlabelled and not keep_unlabelled:
        if len(unlabelled) == len(bench.queries):
            named = in_command(path, shown_as)
            raise bad(
                path,
                f"none of its {len(unlabelled)} queries is labelled (a traffic benchmark?). "
                f"Label them with `ragsonde judge {named} -c COLLECTION --llm openai:MODEL` (or "
                "in the web page's Judge view, `ragsonde serve`), or read their "
                f"label-free health with `ragsonde traffic {named} -c COLLECTION`",
            )
        bench = Benchmark(
            bench.name,
            [q for q in bench.queries if q.relevant],
            bench.corpus,
            [*bench.skipped, *(f"{q.query_id}: unlabelled" for q in unlabelled)],
        )
    if not bench.queries:
        raise bad(path, "no query has both text and relevance judgments")
    return bench
