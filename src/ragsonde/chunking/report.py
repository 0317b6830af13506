"""The chunking sweep's report: per configuration, quality, costs, lengths, and the paired test.

It lists, per configuration and question, the retrieved chunks' ``doc_id``/``start``/``end``, so
anyone can re-compute the span metrics from the JSON alone (:data:`SCHEMA_FILE` is its JSON
Schema; regenerate it with ``python -m ragsonde.chunking.report``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.chunking.configs import ChunkingConfig
from ragsonde.evaluate.comparison import MetricComparison

__all__ = [
    "SCHEMA_FILE",
    "ChunkSpan",
    "ChunkingReport",
    "ConfigResult",
    "Costs",
    "Lengths",
    "QuestionResult",
    "schema_text",
]

SCHEMA_FILE = Path(__file__).with_name("report.schema.json")
SCHEMA_VERSION = "1"


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkSpan(_Part):
    doc_id: str
    start: int
    end: int


class QuestionResult(_Part):
    """One question under one configuration: its metrics and the ranked chunks retrieved."""

    metrics: dict[str, float]
    retrieved: list[ChunkSpan] = Field(
        description="The top chunks, best first (as many as the largest cut-off or the token "
        "budget needed)."
    )


class Costs(_Part):
    points: int
    vector_memory_mb: float = Field(description="points x dimension x 4 bytes (float32).")
    ingest_s: float = Field(description="Chunking, embedding and writing, when first computed.")
    embed_s: float
    cached_chunks: int = Field(
        default=0,
        description="Chunks whose vectors came from the embedding cache (an earlier "
        "configuration or run embedded the same text): ingest_s and embed_s exclude them.",
    )
    search_p50_ms: float = Field(description="Exact search, one query at a time.")
    search_p95_ms: float


class Lengths(_Part):
    """Chunk lengths in the embedder's word pieces (special tokens excluded)."""

    p5: float
    p50: float
    p95: float
    max: int
    over_window: int = Field(description="Chunks longer than the embedder reads.")
    single_chunk_docs: float = Field(description="Share of documents that are one chunk.")


class ConfigResult(_Part):
    config: ChunkingConfig
    label: str
    metrics: dict[str, float] = Field(description="Means over the questions.")
    costs: Costs
    lengths: Lengths
    versus_best: MetricComparison | None = Field(
        default=None, description="The paired test of this configuration (B) against the best (A)."
    )
    per_question: dict[str, QuestionResult]
    same_as: list[str] = Field(
        default_factory=list,
        description="Other configurations of the grid that made exactly these chunks: merged "
        "into this row, not measured twice.",
    )
    note: str | None = Field(
        default=None,
        description="Set when this configuration leads at k only because its chunks hold more "
        "text: what it scores at the equal token budget, and which configuration leads there.",
    )
    chunks: list[ChunkSpan] = Field(
        description="Every chunk of the configuration (precision_omega's candidates)."
    )


class ChunkingReport(_Part):
    schema_version: str = SCHEMA_VERSION
    kind: str = "chunking"
    documents: str
    benchmark: str
    embedder: str
    window: int | None = Field(description="Word pieces the embedder reads (None: unknown).")
    k: int
    token_budget: int = Field(description="Retrieved tokens the @budget metrics allow.")
    primary: str = Field(description="The metric that ranks configurations.")
    exact: bool = True
    questions: dict[str, str]
    references: dict[str, list[ChunkSpan]]
    generated_questions: bool = False
    question_source: Literal["generated", "given"] = Field(
        default="given",
        description="generated: the questions were generated (from the documents when no "
        "benchmark was given, or a benchmark whose rows carry a generator); given: written by "
        "people (or of unknown origin).",
    )
    generators: list[str] = Field(
        default_factory=list, description="What generated the questions (offline:gist, llm:…)."
    )
    configurations: list[ConfigResult]
    best: str
    recommended: str
    recommendation: str
    within_sections: bool = Field(
        default=True,
        description="Splitters ran on each section (heading) apart (True), or on each document "
        "as a whole, across its headings (False).",
    )
    corpus_tokens: int | None = Field(
        default=None, description="Word pieces in all the documents' sections."
    )
    warnings: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    resumed: list[str] = Field(
        default_factory=list, description="Configurations read back from an earlier run."
    )

    def config(self, label: str) -> ConfigResult:
        return next(c for c in self.configurations if c.label == label)


def schema_text() -> str:
    schema = ChunkingReport.model_json_schema(mode="serialization")
    doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    doc["title"] = f"ragsonde chunking report {SCHEMA_VERSION}"
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")
