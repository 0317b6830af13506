"""How to tune: one frozen, validated options model, like every workflow's (``EvalOptions``).

Bad values are a VALIDATION_ERROR naming the field (``folds: …``); a copy with changes keeps the
fields it was not given unset, so they go on inheriting."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragsonde.evaluate.options import options_error
from ragsonde.tune.grid import DEFAULT_GRID, Grid
from ragsonde.tune.report import Constraints

__all__ = ["TuneOptions"]


class TuneOptions(BaseModel):
    """Options of :func:`~ragsonde.tune.tune`."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=False)

    grid: Grid = Field(default=DEFAULT_GRID, description="The values to sweep, axis by axis.")
    folds: int = Field(default=5, ge=2, le=50, description="Cross-validation folds.")
    constraints: Constraints = Field(default_factory=Constraints)
    split: str = Field(default="test", description="BEIR qrels split.")
    modes: tuple[Literal["dense", "hybrid"], ...] = Field(
        default=("dense", "hybrid"),
        min_length=1,
        description="Which searches to sweep; hybrid only where the collection has BM25 vectors.",
    )
    workdir: Path | None = Field(
        default=None,
        description="Where the temporary variants go (default: the system's temporary folder).",
    )
    versus_current: bool = Field(
        default=True,
        description="Also measure the collection's current configuration (the settings' "
        "search, through `ragsonde eval`'s path) and test the recommendation against it on "
        "held-out folds.",
    )
    alpha: float = Field(
        default=0.05, gt=0, lt=1, description="Significance level of that paired test."
    )
    force_index: bool = Field(
        default=True,
        description="Build and use the HNSW graph even where the collection is small.",
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise options_error(e) from e
