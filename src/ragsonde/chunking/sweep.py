"""The sweep: each chunking configuration into a temporary collection, searched exactly.

For every configuration: chunk the documents (spans into their parsed text), embed the chunks
(cached on disk, :mod:`ragsonde.chunking.cache`), write them into a temporary collection of the
workspace's store (deleted afterwards: the user's collections are never touched), search every
question with exact search (so ANN error is not counted as chunking), and score:

* span recall/precision/IoU at ``k`` chunks and at an equal budget of retrieved tokens (ranked
  chunks taken while their word pieces fit in ``token_budget``, the first always), so big chunks
  cannot win by covering more text; precision_Ω (:mod:`ragsonde.evaluate.spans`);
* document-level nDCG@10 and recall@10 (ranked chunks collapsed to documents);
* costs: points, vector memory, ingest and embedding time, exact search p50/p95;
* chunk lengths in the embedder's word pieces, and how many exceed what it reads.

Then each configuration is tested against the best on the primary metric (the paired tests of
``ragsonde compare``), and the recommendation is the cheapest configuration (fewest points) not
significantly worse than the best.

Splitters run on each section (heading) apart, as ingest does; ``within_sections=False`` splits
each document as a whole instead. Every configuration is cut by ingest's own chunker
(:mod:`.chunks`: a long section window by window). Configurations that make identical chunks
are measured once and reported as one row, and the report says when its answer is empty
(:mod:`.checks`: a budget that reads most of the corpus, a tie at the top, a lead at k that is
only longer chunks).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragsonde.chunking.cache import EmbeddingCache
from ragsonde.chunking.checks import (
    budget_warning,
    identical_warning,
    longer_chunks_notes,
    signature,
    tie_warning,
)
from ragsonde.chunking.chunks import Chunk, config_chunks
from ragsonde.chunking.configs import DEFAULT_GRID, ChunkingConfig
from ragsonde.chunking.corpus import Tokens, read_documents
from ragsonde.chunking.questions import (
    DEFAULT_QUESTIONS,
    check_contents,
    generated_warning,
    questions_for,
)
from ragsonde.chunking.report import (
    ChunkingReport,
    ChunkSpan,
    ConfigResult,
    Costs,
    Lengths,
    QuestionResult,
)
from ragsonde.chunking.verdict import judge
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.datasets import Benchmark
from ragsonde.evaluate.metrics import compute_metrics
from ragsonde.evaluate.spans import Span, precision_omega, span_scores
from ragsonde.ingest.document import Document
from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.models.validation import options_of
from ragsonde.progress import Progress
from ragsonde.workspace import Workspace, using

__all__ = ["SweepOptions", "sweep_chunking"]

_SPECIAL_TOKENS = 2
_DOC_METRICS = ("ndcg@10", "recall@10")
_UPSERT = 512


@dataclass(frozen=True)
class SweepOptions:
    configs: tuple[ChunkingConfig, ...] = DEFAULT_GRID
    k: int = 5
    """Chunks retrieved per question for the @k span metrics."""
    token_budget: int = 1000
    """Retrieved word pieces the @budget span metrics allow."""
    primary: str | None = None
    """The metric that ranks configurations (default: span recall at the token budget)."""
    fetch: int = 50
    """Chunks each exact search returns (enough for the budget and nDCG@10 by document)."""
    alpha: float = 0.05
    resume: bool = True
    """Read back configurations an earlier run with the same inputs finished."""
    questions: int = DEFAULT_QUESTIONS
    """Without a benchmark: questions generated from the documents (:mod:`.questions`)."""
    seed: int = 0
    """Without a benchmark: the seed the questions are generated with."""
    within_sections: bool = True
    """Split each section (heading) apart, as ingest does; False: each document as a whole."""

    @property
    def metric(self) -> str:
        return self.primary or f"span_recall@{self.token_budget}t"


def _within_budget(lengths: Sequence[int], budget: int) -> int:
    """How many of the ranked chunks fit in ``budget`` word pieces (at least one)."""
    used = n = 0
    for length in lengths:
        if n and used + length > budget:
            break
        used += length
        n += 1
    return n


def _percentile(values: Sequence[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(values, dtype=np.float64), q)), 3)


class _Sweep:
    def __init__(
        self,
        ws: Workspace,
        docs: list[Document],
        bench: Benchmark,
        options: SweepOptions,
        cache: EmbeddingCache,
    ) -> None:
        self.ws = ws
        self.embedder = ws.embedder
        self.docs = docs
        self.bench = bench
        self.o = options
        self.cache = cache
        path = getattr(self.embedder, "tokenizer_path", None)
        if path is None:
            raise QueryValidationError(
                f"ragsonde chunking sizes chunks in the embedder's word pieces; "
                f"{self.embedder.name} has no local tokenizer. Use a local embedder.",
                field="embedder",
            )
        self.tokens = Tokens(path)
        max_tokens = getattr(self.embedder, "max_tokens", None)
        self.window = int(max_tokens) - _SPECIAL_TOKENS if max_tokens else None
        queries = [q.text for q in bench.queries]
        self.query_vectors = cache.embed(
            f"query\x1f{self.embedder.name}", queries, self.embedder.embed_queries
        )

    def run_key(self) -> str:
        h = hashlib.sha256()
        h.update(self.embedder.name.encode())
        for doc in self.docs:
            for s in doc.sections:
                h.update(f"{doc.doc_id}\x1f{s.offset}\x1f{doc.title}\x1f{s.path}".encode())
                h.update(hashlib.sha256(s.text.encode()).digest())
        for q in self.bench.queries:
            h.update(
                json.dumps(
                    [q.query_id, q.text, [[r.doc_id, r.start, r.end] for r in q.references]]
                ).encode()
            )
        h.update(f"{self.o.k}\x1f{self.o.token_budget}\x1f{self.o.fetch}".encode())
        if not self.o.within_sections:
            h.update(b"\x1fwhole documents")
        # the chunks of a section over WINDOW_CHARS changed when every splitter cut it window by
        # window (and a `ragsonde` overlap of half the size is no longer one less): an earlier
        # run's results are not read back as this code's
        h.update(b"\x1fwindowed")
        return h.hexdigest()[:16]

    def chunks(self, config: ChunkingConfig) -> list[Chunk]:
        return config_chunks(config, self.docs, self.embedder, self.o.within_sections)

    def corpus_tokens(self) -> int:
        return sum(
            self.tokens.count(
                [s.text for d in self.docs for s in d.sections if s.offset is not None]
            )
        )

    def run(
        self, config: ChunkingConfig, progress: Progress | None, chunks: list[Chunk]
    ) -> ConfigResult:
        started = time.perf_counter()
        if not chunks:
            raise QueryValidationError(
                f"{config.label}: the documents gave no chunks.", field="docs"
            )
        embed_started = time.perf_counter()
        hits = self.cache.hits
        vectors = self.cache.embed(
            self.embedder.name, [c.text for c in chunks], self.embedder.embed_documents
        )
        embed_s = time.perf_counter() - embed_started
        cached = self.cache.hits - hits
        lengths = self.tokens.count([c.text for c in chunks])
        store = self.ws.store
        name = f"ragsonde-chunking-{uuid.uuid4().hex[:12]}"
        # its vector named as the store searches (RAGSONDE_VECTOR applies to every collection)
        dim, vector = int(vectors.shape[1]), self.ws.settings.vector
        store.create_collection(name, dim, vector_name=vector, indexed_fields={"doc_id": "keyword"})
        try:
            for i in range(0, len(chunks), _UPSERT):
                store.upsert(
                    name,
                    [
                        PointRecord(str(uuid.uuid4()), v.tolist(), {"chunk": i + j})
                        for j, v in enumerate(vectors[i : i + _UPSERT])
                    ],
                )
            store.build_index(name)
            ingest_s = time.perf_counter() - started
            ranked, times = self._search(name, len(chunks))
        finally:
            store.delete_collection(name)
        if progress is not None:
            progress.advance(1, len(chunks))
        result = self._score(config, chunks, lengths, ranked, times, ingest_s, embed_s)
        result.costs.cached_chunks = cached
        return result

    def _search(self, name: str, n: int) -> tuple[list[list[int]], list[float]]:
        store = self.ws.store
        ranked: list[list[int]] = []
        times: list[float] = []
        limit = min(self.o.fetch, n)
        for vector in self.query_vectors:
            spec = SearchSpec(vector=vector.tolist(), limit=limit, exact=True)
            t0 = time.perf_counter()
            hits = store.search(name, [spec])[0]
            times.append((time.perf_counter() - t0) * 1000)
            ranked.append([int(h.payload["chunk"]) for h in hits])
        return ranked, times

    def _score(
        self,
        config: ChunkingConfig,
        chunks: list[Chunk],
        lengths: list[int],
        ranked: list[list[int]],
        times: list[float],
        ingest_s: float,
        embed_s: float,
    ) -> ConfigResult:
        k, budget = self.o.k, self.o.token_budget
        spans = [Span(c.doc_id, c.start, c.end) for c in chunks]
        by_doc: dict[str, list[Span]] = {}
        for s in spans:
            by_doc.setdefault(s.doc_id, []).append(s)
        per_question: dict[str, QuestionResult] = {}
        run: dict[str, dict[str, float]] = {}
        for q, order in zip(self.bench.queries, ranked, strict=True):
            fit = _within_budget([lengths[i] for i in order], budget)
            at_k = span_scores(q.references, [spans[i] for i in order[:k]])
            at_b = span_scores(q.references, [spans[i] for i in order[:fit]])
            docs_of = {r.doc_id for r in q.references}
            omega = precision_omega(q.references, [s for d in docs_of for s in by_doc.get(d, [])])
            metrics = {
                f"span_recall@{k}": at_k.recall,
                f"span_precision@{k}": at_k.precision,
                f"span_iou@{k}": at_k.iou,
                f"span_recall@{budget}t": at_b.recall,
                f"span_precision@{budget}t": at_b.precision,
                f"span_iou@{budget}t": at_b.iou,
                "span_precision_omega": omega,
                "chunks@budget": float(fit),
            }
            shown = order[: max(k, fit)]
            per_question[q.query_id] = QuestionResult(
                metrics=metrics,
                retrieved=[
                    ChunkSpan(doc_id=c.doc_id, start=c.start, end=c.end)
                    for c in (chunks[i] for i in shown)
                ],
            )
            docs = list(dict.fromkeys(chunks[i].doc_id for i in order))
            run[q.query_id] = {d: float(len(docs) - n) for n, d in enumerate(docs)}
        _, doc_metrics = compute_metrics(_DOC_METRICS, self.bench.qrels, run)
        for qid, values in doc_metrics.items():
            per_question[qid].metrics.update(values)
        names = list(next(iter(per_question.values())).metrics)
        means = {
            n: round(float(np.mean([r.metrics[n] for r in per_question.values()])), 6)
            for n in names
        }
        per_doc = {c.doc_id for c in chunks}
        counts = {d: sum(1 for c in chunks if c.doc_id == d) for d in per_doc}
        dim = int(self.query_vectors.shape[1])
        return ConfigResult(
            config=config,
            label=config.label,
            metrics=means,
            costs=Costs(
                points=len(chunks),
                vector_memory_mb=round(len(chunks) * dim * 4 / 1e6, 3),
                ingest_s=round(ingest_s, 3),
                embed_s=round(embed_s, 3),
                search_p50_ms=_percentile(times, 50),
                search_p95_ms=_percentile(times, 95),
            ),
            lengths=Lengths(
                p5=_percentile(lengths, 5),
                p50=_percentile(lengths, 50),
                p95=_percentile(lengths, 95),
                max=max(lengths),
                over_window=sum(1 for n in lengths if self.window and n > self.window),
                single_chunk_docs=round(sum(1 for n in counts.values() if n == 1) / len(counts), 4),
            ),
            per_question=per_question,
            chunks=[ChunkSpan(doc_id=c.doc_id, start=c.start, end=c.end) for c in chunks],
        )


def _saved(folder: Path, config: ChunkingConfig) -> Path:
    return folder / f"{config.key}.json"


def _load(path: Path) -> ConfigResult | None:
    try:
        return ConfigResult.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # missing, or cut short by a stop: computed again


def _write(path: Path, result: ConfigResult) -> None:
    from ragsonde.outputs import write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    # whole or not at all: a stop never leaves half a result, and two sweeps of the same run
    # finishing one configuration at once each write their own temporary file (one shared
    # name made the second one's rename fail: no such file)
    write_text(path, result.model_dump_json())


def _configs(options: SweepOptions) -> Iterator[ChunkingConfig]:
    if not options.configs:
        raise QueryValidationError("No chunking configurations to sweep.", field="configs")
    yield from options.configs


def sweep_chunking(
    docs: str | Path,
    benchmark: str | Path | None = None,
    *,
    options: SweepOptions | None = None,
    workspace: Workspace | None = None,
    progress: Progress | None = None,
) -> ChunkingReport:
    """Sweep ``options.configs`` over the documents at ``docs`` (any ``ragsonde ingest``
    source) against the span-labelled ``benchmark``, or without one against
    ``options.questions`` questions generated from the documents (:mod:`.questions`); see the
    module docstring."""
    o = options_of(options, SweepOptions)
    started = time.perf_counter()
    configs = list(_configs(o))
    warnings: list[str] = []
    documents = read_documents(docs, warnings)
    bench = questions_for(benchmark, documents, o.questions, o.seed)
    generated = generated_warning(bench, given=benchmark is not None)
    if generated:
        warnings.append(generated)
    known = {d.doc_id for d in documents}
    missing = sorted({r.doc_id for q in bench.queries for r in q.references} - known)
    if missing:
        raise QueryValidationError(
            f"The benchmark's references name documents that are not in {docs}: "
            f"{', '.join(missing[:5])} (documents there: {', '.join(sorted(known)[:5])}).",
            field="dataset",
        )
    ends = {
        d.doc_id: max(
            (s.offset + len(s.text) for s in d.sections if s.offset is not None), default=0
        )
        for d in documents
    }
    beyond = [
        f"{q.query_id} ({r.doc_id} {r.start}:{r.end})"
        for q in bench.queries
        for r in q.references
        if r.end > ends[r.doc_id]
    ]
    if beyond:  # offsets into another version of the text: every span metric would be wrong
        raise QueryValidationError(
            f"{len(beyond)} references end past the text of their document: "
            f"{', '.join(beyond[:5])}. Are the offsets for these documents?",
            field="dataset",
        )
    check_contents(bench, documents)
    with ExitStack() as owned:
        ws = owned.enter_context(using(workspace))  # closed here if opened here
        home = ws.settings.home / "chunking"
        cache = owned.enter_context(closing(EmbeddingCache(home / "embeddings.sqlite")))
        sweep = _Sweep(ws, documents, bench, o, cache)
        folder = home / "runs" / sweep.run_key()
        results: list[ConfigResult] = []
        resumed: list[str] = []
        seen: dict[str, int] = {}  # chunks' signature -> its row in results
        if progress is not None:
            progress.start(len(configs))
        for config in configs:
            chunks = sweep.chunks(config)
            sig = signature([(c.doc_id, c.start, c.end, c.text) for c in chunks])
            if sig in seen:  # the same chunks as an earlier configuration: one row
                first = results[seen[sig]]
                same = [*first.same_as, config.label]
                results[seen[sig]] = first.model_copy(update={"same_as": same})
                if progress is not None:
                    progress.advance(1, 0)
                continue
            seen[sig] = len(results)
            kept = _load(_saved(folder, config)) if o.resume else None
            if kept is not None:
                results.append(kept)
                resumed.append(config.label)
                if progress is not None:
                    progress.advance(1, kept.costs.points)
                continue
            result = sweep.run(config, progress, chunks)
            _write(_saved(folder, config), result)
            results.append(result)
        window = sweep.window
        corpus_tokens = sweep.corpus_tokens()
        embedder = ws.embedder_name
    verdict = judge(results, o.metric, o.alpha, window, warnings)
    found = (
        identical_warning(verdict.results, o.within_sections),
        budget_warning(verdict.results, o.k, o.token_budget, corpus_tokens),
        tie_warning(verdict.results, o.metric),
    )
    warnings[:0] = [w for w in found if w]  # what makes the answer empty comes first
    configurations = longer_chunks_notes(verdict.results, o.k, o.token_budget)
    return ChunkingReport(
        documents=docs,
        benchmark=bench.name if benchmark is None else str(benchmark),
        generated_questions=bool(generated),
        question_source="generated" if generated else "given",
        generators=sorted({q.generator for q in bench.queries if q.generator}),
        embedder=embedder,
        window=window,
        k=o.k,
        token_budget=o.token_budget,
        primary=o.metric,
        questions={q.query_id: q.text for q in bench.queries},
        references={
            q.query_id: [ChunkSpan(doc_id=r.doc_id, start=r.start, end=r.end) for r in q.references]
            for q in bench.queries
        },
        configurations=configurations,
        within_sections=o.within_sections,
        corpus_tokens=corpus_tokens,
        best=verdict.best,
        recommended=verdict.recommended,
        recommendation=verdict.text,
        warnings=warnings,
        seconds=round(time.perf_counter() - started, 3),
        resumed=resumed,
    )
