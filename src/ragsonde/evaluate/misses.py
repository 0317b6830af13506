"""What the miss ladder reports: typed, and part of the evaluation report (``misses``).

A :class:`Miss` is one (query, relevant document) pair the top k did not hold: the
:data:`Stage` it is blamed on, the evidence for it, and every rung of the ladder it climbed
(:class:`Step`). :class:`MissesReport` is the ``misses`` section: counts per stage that add up to
the number of missed pairs (checked when the model is built, and said in ``note``), the misses
per query, the stages this backend cannot relax (``not_measurable``), and the collection's
:class:`Retrievability`.

This module imports nothing of ragsonde's: the evaluation report embeds it.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "STAGES",
    "FieldShare",
    "Miss",
    "MissesReport",
    "Outcome",
    "QueryMisses",
    "Retrievability",
    "Stage",
    "Step",
]

#: The stages in ladder order: the structural checks, the relaxations, then the diagnoses of a
#: document no relaxation brings back (``ranking`` last: none of the others).
Stage = Literal[
    "not_in_collection",
    "no_text",
    "filter",
    "threshold",
    "quantization",
    "ann",
    "crowding",
    "fusion",
    "truncation",
    "chunking",
    "ranking",
]
STAGES: tuple[Stage, ...] = get_args(Stage)

#: What one rung found: ``blamed`` (this stage lost the document), ``passed`` (it did not),
#: ``not_applicable`` (nothing to relax in this run: no filter, no quantization, threshold 0…),
#: ``not_measurable`` (the backend cannot relax it here).
Outcome = Literal["blamed", "passed", "not_applicable", "not_measurable"]


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Step(_Part):
    """One rung of the ladder for one missed document."""

    stage: Stage
    outcome: Outcome
    detail: str = Field(description="What was checked or relaxed, and what came of it.")


class Miss(_Part):
    """A relevant document the top k did not hold, and the stage that lost it."""

    doc_id: str
    grade: int = 1
    stage: Stage
    evidence: dict[str, str | int | float | bool | None] = Field(
        default_factory=dict, description="The stage's evidence (ranks are 1-based)."
    )
    rank: int | None = Field(
        default=None,
        description="Its 1-based document rank with every stage relaxed (exact, unquantized, "
        "no threshold, deep fetch); None when not within that fetch.",
    )
    best_chunk: str | None = Field(default=None, description="The start of its best chunk.")
    steps: list[Step] = Field(default_factory=list)


class QueryMisses(_Part):
    """One query's missed relevant documents."""

    query: str
    relevant: int = Field(description="Relevant documents (grade > 0) of the query.")
    found: dict[str, int] = Field(
        default_factory=dict, description="Relevant documents within the top k: 1-based rank."
    )
    misses: list[Miss]


class FieldShare(_Part):
    """Dead documents by the value of one payload field."""

    field: str
    values: dict[str, tuple[int, int]] = Field(
        description="Value -> (documents, dead documents); values beyond the 20 largest are "
        "summed under '(other)'."
    )


class Retrievability(_Part):
    """How evenly the queries reach the collection (Azzopardi & Vinay 2008, cutoff k).

    ``r(d)`` counts the queries that retrieve document ``d`` within their top k; ``gini`` is the
    Gini coefficient of ``r`` over every document of the collection (0: all equally retrievable;
    1: one document takes every retrieval); a dead document has ``r(d) = 0``.
    """

    k: int
    queries: int
    documents: int
    gini: float
    dead: int
    dead_share: float
    dead_examples: list[str] = Field(default_factory=list, description="Up to 50 dead ids.")
    by_field: list[FieldShare] = Field(default_factory=list)


class MissesReport(_Part):
    """The ``misses`` section of an evaluation report (``ragsonde eval --explain``)."""

    k: int
    pairs: int = Field(description="Missed (query, relevant document) pairs explained.")
    counts: dict[Stage, int] = Field(description="Missed pairs per stage, in ladder order.")
    note: str = ""
    not_measurable: dict[Stage, str] = Field(
        default_factory=dict, description="Stages this backend or benchmark cannot relax: why."
    )
    unexplained_queries: dict[str, str] = Field(
        default_factory=dict,
        description="Query id -> why its misses are not in the counts (the query failed).",
    )
    not_reproduced: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Query id -> relevant documents the run missed but the ladder's own search "
        "as run holds within k (a query with a smaller top_k of its own, say): listed, not "
        "counted, since no stage can be blamed.",
    )
    searches: int = Field(default=0, description="Store searches the ladder ran.")
    seconds: float = 0.0
    per_query: dict[str, QueryMisses] = Field(default_factory=dict)
    retrievability: Retrievability | None = None

    @model_validator(mode="after")
    def _counts_add_up(self) -> MissesReport:
        listed = sum(len(q.misses) for q in self.per_query.values())
        counted = sum(self.counts.values())
        if not (listed == counted == self.pairs):
            raise ValueError(
                f"stage counts ({counted}) and listed misses ({listed}) must both equal the "
                f"missed pairs ({self.pairs})"
            )
        for q in self.per_query.values():
            for m in q.misses:
                if not self.counts.get(m.stage):
                    raise ValueError(f"a miss blamed on {m.stage} is not counted")
        return self

    @classmethod
    def build(
        cls,
        k: int,
        per_query: dict[str, QueryMisses],
        *,
        not_measurable: dict[Stage, str] | None = None,
        **fields: object,
    ) -> MissesReport:
        """The section from its misses: the counts are derived here, never passed in."""
        counts: dict[Stage, int] = dict.fromkeys(STAGES, 0)
        for q in per_query.values():
            for m in q.misses:
                counts[m.stage] += 1
        pairs = sum(counts.values())
        note = (
            f"the stage counts add up to the {pairs} missed (query, relevant document) pairs: "
            "each is blamed on the first stage of the ladder whose relaxation brings it into "
            f"the top {k}"
        )
        return cls.model_validate(
            {
                "k": k,
                "pairs": pairs,
                "counts": counts,
                "note": note,
                "not_measurable": not_measurable or {},
                "per_query": per_query,
                **fields,
            }
        )

    def worst(self, n: int = 10) -> list[tuple[str, QueryMisses]]:
        """The ``n`` queries with the most misses (then the furthest ranked), worst first."""

        def depth(q: QueryMisses) -> int:
            return max((m.rank or 10**9 for m in q.misses), default=0)

        ranked = sorted(self.per_query.items(), key=lambda kv: (-len(kv[1].misses), -depth(kv[1])))
        return [kv for kv in ranked if kv[1].misses][:n]
