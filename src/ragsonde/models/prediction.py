"""Per-query predictions of retrieval effectiveness: the one interface between what predicts
(label-free signals of the traffic room, an LLM judge, generated labels) and what uses a
prediction (the traffic report's ``weak`` flag, the estimates of ``ragsonde.estimate``).

A :class:`Predictor` is built by its owner with whatever it needs (a workspace, search
parameters, a judge) and answers, for a list of queries, one :class:`QueryPrediction` each:
the raw ``signals`` (name → value; a signal that cannot be computed for that query is absent,
never NaN) and, when the predictor has one, a ``predicted`` effectiveness in [0, 1], higher is
better. Estimates fit their own combination of ``signals`` to the labelled queries by
cross-fitting (``ragsonde.estimate``); ``predicted`` is the predictor's fixed, documented
combination, used where no labels exist.

>>> class TopScore:                                    # doctest: +SKIP
...     name = "top1"
...     def predict(self, queries):
...         return [QueryPrediction(query_id=q.query_id, source=self.name,
...                                 signals={"top1": score_of(q.text)}) for q in queries]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["PredictedQuery", "Predictor", "QueryPrediction"]


class PredictedQuery(BaseModel):
    """A query to predict for: its id and its text (a benchmark row or a traffic query)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_id: str
    text: str


class QueryPrediction(BaseModel):
    """What one predictor says of one query."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_id: str
    source: str = Field(description="The predictor's name, as reports show it.")
    signals: dict[str, float] = Field(
        default_factory=dict,
        description="Raw signals, name → value; a signal that could not be computed is absent.",
    )
    predicted: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="The predictor's own effectiveness in [0, 1], higher is better, if it has one.",
    )

    @field_validator("signals")
    @classmethod
    def _finite(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [name for name, v in value.items() if not math.isfinite(v)]
        if bad:
            raise ValueError(f"signals must be finite (drop the ones that are not): {bad}")
        return value


@runtime_checkable
class Predictor(Protocol):
    """Something that predicts per-query effectiveness without gold labels."""

    @property
    def name(self) -> str:
        """Its name in reports (``signals``, ``judge:local:gemma``, ``generated``)."""
        ...

    def predict(self, queries: Sequence[PredictedQuery]) -> list[QueryPrediction]:
        """One prediction per query, in the order given."""
        ...
