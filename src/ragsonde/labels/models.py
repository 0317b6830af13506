"""The typed records of labelling: a label with its provenance, a benchmark entry, usage, reports.

A benchmark file is ragsonde's JSON Lines format (``query_id``, ``query``, ``relevant``), one
:class:`BenchmarkEntry` a line. ``relevant`` is what ``ragsonde eval`` scores with; ``labels``
keeps every label with who or what gave it and when, so LLM labels stay apart from human ones and
a report can say which it used.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from ragsonde.models.params import SearchParams

__all__ = [
    "GRADES",
    "Agreement",
    "BenchmarkEntry",
    "GenerateReport",
    "JudgeReport",
    "Label",
    "LabelSource",
    "Leakage",
    "PositionBias",
    "Reference",
    "Usage",
]

#: Who gave a label: a person (or a human benchmark), the generator (the query's source), an LLM.
LabelSource = Literal["human", "generator", "llm"]


def _now() -> datetime:
    return datetime.now(UTC)


class Label(BaseModel):
    """One graded (query, item) label with its provenance. Grades: 0 not relevant … 3 perfect."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="Document id (or url, or chunk id).")
    grade: int = Field(ge=0, le=3)
    source: LabelSource
    judge: str = Field(
        min_length=1, description="Who or what: a name, 'offline:gist', 'openai:gpt-4o-mini'."
    )
    at: datetime = Field(default_factory=_now)
    chunk_id: str | None = Field(default=None, description="The chunk that was read, if one was.")


class Reference(BaseModel):
    """The answer's excerpt: ``[start, end)`` in ``str`` indices of the parsed document's text
    (what ``ingest`` records as a chunk's span), as span-labelled benchmarks give it (Chroma's
    ``start_index``/``end_index`` read too; its ``content`` is ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    doc_id: str = Field(min_length=1)
    start: int = Field(ge=0, validation_alias=AliasChoices("start", "start_index"))
    end: int = Field(gt=0, validation_alias=AliasChoices("end", "end_index"))

    @model_validator(mode="after")
    def _ordered(self) -> Reference:
        if self.end <= self.start:
            raise ValueError(f"reference {self.start}:{self.end}: the end must follow the start")
        return self


class BenchmarkEntry(BaseModel):
    """One query of a benchmark file; unknown fields (``filters``, ``top_k``, …) are kept."""

    model_config = ConfigDict(extra="allow")

    query_id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    relevant: dict[str, int] = Field(default_factory=dict)
    labels: list[Label] = Field(default_factory=list)
    generator: str | None = None
    source_chunk: str | None = None
    source_doc: str | None = None
    references: list[Reference] | None = None
    """Where the answer is in its document (generated: the source sentence or the LLM's
    excerpt, :mod:`.spans`); None when the source chunk has no span."""

    def labelled(self, sources: Iterable[LabelSource] | None = None) -> dict[str, int]:
        """Item -> best grade among the labels from ``sources`` (all when None), zeros included."""
        wanted = None if sources is None else set(sources)
        out: dict[str, int] = {}
        for lab in self.labels:
            if wanted is None or lab.source in wanted:
                out[lab.id] = max(out.get(lab.id, 0), lab.grade)
        return out

    def with_relevant_from(self, sources: Iterable[LabelSource]) -> BenchmarkEntry:
        """A copy whose ``relevant`` holds the positive labels of ``sources`` only."""
        rel = {k: g for k, g in self.labelled(sources).items() if g >= 1}
        return self.model_copy(update={"relevant": rel})

    @classmethod
    def known_item(
        cls,
        query_id: str,
        query: str,
        *,
        doc_id: str,
        chunk_id: str,
        generator: str,
        judge: str,
        at: datetime | None = None,
        references: list[Reference] | None = None,
    ) -> BenchmarkEntry:
        """A generated query whose source document is relevant (grade 3, the generator's label);
        ``references``: where in the document it comes from, when that is known."""
        label = Label(
            id=doc_id,
            grade=3,
            source="generator",
            judge=judge,
            at=at or _now(),
            chunk_id=chunk_id,
        )
        return cls(
            query_id=query_id,
            query=query,
            relevant={doc_id: 3},
            labels=[label],
            generator=generator,
            source_chunk=chunk_id,
            source_doc=doc_id,
            references=references,
        )


class Usage(BaseModel):
    """What the LLM calls of one run cost."""

    calls: int = 0
    cached: int = 0
    """Answers taken from the judgement cache: no call, no cost."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    failed: int = 0
    """Calls that failed after retries, or whose answer could not be read."""
    stopped_by_budget: bool = False

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cached += other.cached
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.failed += other.failed
        self.stopped_by_budget = self.stopped_by_budget or other.stopped_by_budget


class Leakage(BaseModel):
    """A benchmark's lexical leakage on one collection (:mod:`ragsonde.labels.leakage`)."""

    collection: str
    queries: int
    term_overlap: float
    bm25_top1: float | None = None
    bm25_mrr: float | None = None
    bm25_median_rank: float | None = None
    """Median rank of the first relevant document (``depth + 1`` when not in the top ``depth``)."""
    depth: int = 100


class GenerateReport(BaseModel):
    """What ``generate`` did."""

    collection: str
    generator: str
    seed: int
    requested: int
    written: int
    chunks_in_collection: int
    documents_in_collection: int
    documents_sampled: int
    sections_sampled: int
    out: str
    span_labelled: int = 0
    """Queries written with ``references`` (their source's span in its document)."""
    excerpts_not_found: int = 0
    """LLM questions dropped because their excerpt is not verbatim in the chunk."""
    not_questions: int = 0
    """LLM answers dropped because they were no question: a refusal ("I cannot decide."), or
    not phrased as one (:func:`~.prompts.is_question`)."""
    usage: Usage | None = None
    judged: JudgeReport | None = None
    evaluate_on: str | None = None
    """The collection the benchmark must be evaluated on when not the source (``--method ict``:
    the copy without the query sentences)."""
    evaluate_on_copy: str | None = None
    """What happened to that copy: ``built``, ``reused`` (made from the same inputs before),
    ``rebuilt`` (ragsonde's own copy, made from other inputs) or ``repaired`` (made from the same
    inputs by a run killed before it finished, so built again)."""
    shortfall: str | None = None
    """Why fewer queries were written than asked (None: as many as asked)."""
    leakage: Leakage | None = None
    """The benchmark's lexical leakage on the collection it is evaluated on."""
    human_leakage: Leakage | None = None
    """The same statistics for the human benchmark given with ``--human``."""
    warnings: list[str] = Field(default_factory=list)
    """E.g. that the labels favour lexical retrieval (:func:`~.leakage.lexical_warning`)."""
    seconds: float = 0.0


#: The grades of the 0–3 scale, as the confusion's keys.
GRADES = ("0", "1", "2", "3")


class PositionBias(BaseModel):
    """The same (query, passage) pairs graded twice: the prompt's order (the query first) and
    the passage first. A pointwise judge has no second document to swap, so the order of the
    query and the passage is what can move its grade."""

    model_config = ConfigDict(frozen=True)

    pairs: int = Field(description="(query, chunk) pairs graded in both orders.")
    changed: int = Field(description="Pairs whose grade differs between the two orders.")
    changed_share: float | None = Field(description="changed / pairs (None without pairs).")
    higher_passage_first: int = Field(description="Graded higher with the passage first.")
    lower_passage_first: int = Field(description="Graded lower with the passage first.")
    relevance_flipped: int = Field(
        description="Pairs that cross the relevance threshold (llm_relevant_from) between orders."
    )


class Agreement(BaseModel):
    """The judge against human labels on the queries that have both (``judge --agreement``)."""

    model_config = ConfigDict(frozen=True)

    queries: int
    pairs: int = Field(description="(query, document) pairs with an LLM grade.")
    llm_relevant_from: int
    both_relevant: int
    human_only: int
    llm_only: int
    both_not: int
    raw_agreement: float | None
    kappa: float | None = Field(description="Cohen's kappa on relevant or not (None: undefined).")
    confusion: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Human grade -> LLM grade -> pairs (grades 0-3; every cell present).",
    )
    position: PositionBias | None = Field(
        default=None, description="With --position-bias: the grades in both orders."
    )


class JudgeReport(BaseModel):
    """What ``judge`` did, and which labels the written benchmark's ``relevant`` uses."""

    benchmark: str
    collection: str
    model: str
    modes: list[str]
    search: dict[str, SearchParams] = Field(default_factory=dict)
    """Mode -> the search parameters its pools ran with (what each response said)."""
    depth: int
    queries: int
    pooled: int
    """(query, chunk) pairs in the pools."""
    already_labelled: int
    """Pooled hits whose document had a label before this run (with ``agreement`` they are
    graded too, and counted in ``judged`` as well)."""
    judged: int
    """New LLM labels written (from calls or the cache)."""
    grades: dict[str, int] = Field(default_factory=dict)
    """Grade -> how many LLM labels got it."""
    usage: Usage = Field(default_factory=Usage)
    labels_used: list[LabelSource]
    agreement: Agreement | None = None
    """With ``--agreement``: Cohen's kappa and the confusion against the human labels (and with
    ``--position-bias`` the grades in both orders)."""
    errors: dict[str, str] = Field(default_factory=dict)
    """Query id -> why it could not be searched (it is left as it was)."""
    stopped: str | None = None
    """Why the run stopped before judging everything (budget spent, calls failing), if it did."""
    out: str
    seconds: float = 0.0


GenerateReport.model_rebuild()
