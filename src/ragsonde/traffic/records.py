"""The values of the traffic room: one logged query, what production returned for it, and the
account of what reading the files kept and skipped."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.models.text import UnicodeStr

__all__ = ["Production", "ReadStats", "TrafficQuery"]


class Production(BaseModel):
    """What production returned for a query, as far as the log or trace says."""

    model_config = ConfigDict(extra="forbid")

    ids: list[str] = Field(default_factory=list, description="Returned ids, best first.")
    scores: list[float] | None = Field(default=None, description="Their scores, if logged.")
    top_k: int | None = Field(default=None, description="The top_k production asked for.")
    threshold: float | None = Field(default=None, description="Its score threshold, if logged.")
    collection: str | None = Field(default=None, description="The collection it searched.")
    mode: str | None = Field(default=None, description="Its search mode, if logged.")


class TrafficQuery(BaseModel):
    """One query of the traffic (after merging: one per distinct normalised text)."""

    model_config = ConfigDict(extra="forbid")

    query: UnicodeStr
    query_id: str
    weight: int = Field(default=1, ge=1, description="How many times it was asked.")
    first_seen: datetime | None = None
    session: str | None = None
    production: Production | None = None
    source: str = Field(default="", description="file:line (or file:span id) it was read from.")


class ReadStats(BaseModel):
    """What reading the traffic files did: nothing is dropped without being counted here."""

    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] = Field(default_factory=dict, description="file -> detected format.")
    records: int = Field(default=0, description="Queries read (before merging).")
    malformed: int = Field(default=0, description="Lines or spans that could not be read.")
    no_query_text: int = Field(default=0, description="Retrieval records without query text.")
    other_spans: int = Field(default=0, description="Spans that are not retrievals (ignored).")
    outside_window: int = Field(default=0, description="Left out by --since/--until.")
    duplicates_merged: int = Field(default=0, description="Records merged into an earlier one.")
    sampled_out: int = Field(default=0, description="Distinct queries left out by --sample.")
    examples: list[str] = Field(
        default_factory=list, description="The first few skipped records, with why."
    )

    def skip(self, kind: str, where: str, why: str) -> None:
        """Count one skipped record (``malformed`` or ``no_query_text``) and keep an example."""
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.examples) < 10:
            self.examples.append(f"{where}: {why}")
