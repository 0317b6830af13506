"""How to evaluate: one options model for the library, the CLI and ``POST /v1/eval``.

Every surface builds an :class:`EvalOptions` once and hands it to
:func:`~ragsonde.evaluate.evaluate`: a library caller directly, ``ragsonde eval`` from its flags
(one per field, made from this model by :mod:`ragsonde.cli._eval_options`), ``POST /v1/eval``
from the request body (:class:`~ragsonde.server.routes_eval.EvalRequest` holds one), and the
pytest plugin from its keyword arguments. So an option added here reaches all of them, and the
JSON Schema of the request. The gates and the search parameters are options, and only options.

Errors name the field and the rule (``k: cutoffs must be positive``), never a CLI flag, so an
HTTP client and a terminal user read the same message. What to evaluate (the benchmark) and
whether to ingest first are arguments of :func:`~ragsonde.evaluate.evaluate`, not options: the
server evaluates collections it already has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.gates import Gate, parse_gate
from ragsonde.evaluate.metrics import DEFAULT_KS
from ragsonde.models.estimate import Estimand, PredictorName
from ragsonde.models.params import SEARCH_FIELDS, SearchParams
from ragsonde.models.validation import options_error

__all__ = ["MAX_CUTOFF", "EvalOptions", "RelevanceBy", "options_error"]

#: The deepest cutoff an evaluation takes (each query fetches that many chunks).
MAX_CUTOFF = 10_000

#: What a benchmark's relevant ids name: a document id, a url, or a chunk (point) id.
RelevanceBy = Literal["doc", "url", "chunk"]


class EvalOptions(BaseModel):
    """Options of an evaluation (see :func:`~ragsonde.evaluate.evaluate`).

    Built like any model (``EvalOptions(...)`` or ``model_validate``); invalid values raise
    :class:`~ragsonde.errors.QueryValidationError` naming each field, made by
    :func:`options_error` from pydantic's error.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    k: list[int] = Field(
        default=list(DEFAULT_KS),
        min_length=1,
        max_length=20,
        validation_alias=AliasChoices("k", "ks"),
        description="Metric cutoffs.",
    )
    relevance_by: RelevanceBy = Field(default="doc", description="What the relevant ids name.")
    gates: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="Pass/fail gates: 'ndcg@10>=0.6', 'latency.total_ms.p95<=50'.",
    )
    search: SearchParams = Field(
        default_factory=SearchParams,
        description="The search parameters this evaluation sets (mode, fusion, hnsw_ef, exact, "
        "score_threshold, …); those it does not set inherit the settings' (ragsonde.toml, "
        "environment, the server's own). The same names may be given at the top level: "
        '{"mode": "hybrid"} is {"search": {"mode": "hybrid"}}.',
    )
    throughput: bool = Field(default=True, description="Also measure batched throughput.")
    split: str = Field(default="test", description="BEIR qrels split.")
    queries_file: Path | None = Field(
        default=None,
        description="Queries for TREC qrels: a TSV (id<TAB>text) or BEIR queries.jsonl.",
    )
    sweep_thresholds: bool = Field(
        default=False, description="Calibrate score_threshold: P/R/F1 over 0–1."
    )
    max_recall_loss: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="Recall the recommended threshold may lose (share).",
    )
    ann_vs_exact: bool = Field(
        default=False, description="Index health: HNSW recall@k against exact search."
    )
    by: str | None = Field(
        default=None,
        description="Also give metrics per value of this payload field of each query's most "
        "relevant document: category, section, url:1 (url up to its first path segment).",
    )
    mapping: dict[str, str] | None = Field(
        default=None,
        description="Where the collection keeps each field, merged over the mapping setting: "
        "{'doc_id': 'metadata.source'} (dotted paths; 'layout': 'langchain' picks a layout).",
    )
    allow_missing: bool = Field(
        default=False,
        description="Score relevant ids missing from the collection as misses even when they "
        "are more than half (otherwise the evaluation fails).",
    )
    judged_only: bool = Field(
        default=False,
        description="Score over judged hits only: hits the benchmark has no label for are "
        "dropped from each ranking instead of counting as misses (judged@k is never condensed).",
    )
    estimate: bool = Field(
        default=False,
        # evaluate() keeps and scores the rows; the surfaces add metrics_ci after the run
        # (ragsonde.estimate.estimate_report: the estimate room sits above this one)
        description="Estimate every metric with a 95 % interval (metrics_ci): the benchmark's "
        "unlabelled rows are kept and searched, predictions for every query (predictor) are "
        "combined with the labelled ones by prediction-powered inference, and a gate on a "
        "metric then tests its interval's end.",
    )
    predictor: PredictorName = Field(
        default="scores",
        description="Where the predictions come from with estimate: 'scores' (the score "
        "signals of each query's ranking), 'traffic' (`ragsonde traffic`'s label-free signals: "
        "dense, BM25 and their agreement, replayed, fitted to the labelled queries), 'judge' "
        "(each query's metrics under the LLM labels the benchmark carries, which are then "
        "never gold), 'consensus' (the traffic replays combined by a fixed label-free rule: "
        "the served ranking against the others' votes), or 'none' (the labelled queries alone).",
    )
    estimand: Estimand = Field(
        default="distribution",
        description="With estimate: what the interval is of. 'distribution': the mean over the "
        "distribution the benchmark's queries come from; 'benchmark': the mean over the "
        "benchmark's own rows, as if every one were labelled (finite-population correction: "
        "narrower; a judging plan's weighted sample keeps 'distribution').",
    )
    plan_file: Path | None = Field(
        default=None,
        description="With estimate: the judging plan the labels followed (judge --plan); each "
        "labelled query weighs 1 / its chance to be labelled, so the estimate stays unbiased.",
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise options_error(e) from e

    @classmethod
    def from_json(cls, data: Any) -> EvalOptions:
        """Options from a JSON body (``POST /v1/eval``, the MCP ``evaluate`` tool), validated
        strictly: JSON types as they are, so ``"score_threshold": true`` is refused, not a
        threshold of 1.0 (and no results), and ``"throughput": "yes"`` is no ``True``. Raises
        QueryValidationError naming each field."""
        try:
            wire = _StrictOptions.model_validate(data, strict=True)
        except ValidationError as e:
            raise options_error(e) from e
        return cls.model_construct(_fields_set=wire.model_fields_set, **dict(wire))

    @field_validator("queries_file", "plan_file", mode="before")
    @classmethod
    def _path(cls, value: Any) -> Any:
        return Path(value) if isinstance(value, str) else value  # a path's JSON form, strictly

    @model_validator(mode="before")
    @classmethod
    def _nest_search(cls, data: Any) -> Any:
        """Search parameters named at the top level (``mode``, ``exact``, ``hnsw_ef``) go into
        ``search``; given in both places, the top-level one wins (it is the more specific)."""
        if not isinstance(data, dict):
            return data
        top = {k: data[k] for k in SEARCH_FIELDS if k in data}
        if not top:
            return data
        rest = {k: v for k, v in data.items() if k not in top}
        search = rest.get("search")
        base = search.set_fields() if isinstance(search, SearchParams) else dict(search or {})
        return {**rest, "search": {**base, **top}}

    def effective_search(self, settings: SearchParams) -> SearchParams:
        """The search that runs: ``settings`` with what these options set on top."""
        return settings.overlay(self.search)

    @field_validator("k")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if min(value) < 1:
            raise ValueError("cutoffs must be positive, e.g. 1,3,5,10,100")
        if max(value) > MAX_CUTOFF:
            raise ValueError(f"cutoffs go up to {MAX_CUTOFF}, e.g. 1,3,5,10,100")
        return sorted(set(value))

    @field_validator("gates", mode="before")
    @classmethod
    def _gates(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return [str(v) if isinstance(v, Gate) else v for v in value]
        return value

    @field_validator("gates")
    @classmethod
    def _parse_gates(cls, value: list[str]) -> list[str]:
        return [str(_checked(parse_gate, g)) for g in value]

    @field_validator("by")
    @classmethod
    def _by(cls, value: str | None) -> str | None:
        if value is not None:
            from ragsonde.evaluate.breakdown import parse_by  # the report's models: not at import

            _checked(parse_by, value)
        return value

    @field_validator("mapping")
    @classmethod
    def _mapping(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is not None:
            from ragsonde.models.payload import build_mapping

            _checked(build_mapping, value)
        return value

    @model_validator(mode="after")
    def _plan_needs_estimate(self) -> EvalOptions:
        # without estimate the unlabelled rows are dropped, and the plan's weights with them:
        # a run over the planned labels alone would read as a uniform sample, which it is not
        if self.plan_file is not None and not self.estimate:
            raise ValueError("plan_file (--plan-file) weighs an estimate: add --estimate.")
        # the estimate's own choices, set without it, would be ignored without a word
        if not self.estimate and self.predictor != "scores":
            raise ValueError("predictor (--predictor) chooses an estimate's predictions: add "
                             "--estimate.")  # fmt: skip
        if not self.estimate and self.estimand != "distribution":
            raise ValueError("estimand (--estimand) is what an estimate's interval is of: add "
                             "--estimate.")  # fmt: skip
        return self

    @property
    def ks(self) -> list[int]:
        """The cutoffs, sorted, without repeats."""
        return self.k

    @property
    def parsed_gates(self) -> list[Gate]:
        return [parse_gate(g) for g in self.gates]


class _StrictOptions(EvalOptions):
    """:class:`EvalOptions` without its ``__init__``: pydantic validates a model that defines
    one *through* it, which drops ``strict=True`` (``model_validate(..., strict=True)`` took
    ``true`` for 1.0); :meth:`EvalOptions.from_json` validates with this one."""

    __init__ = BaseModel.__init__


def _checked(parse: Any, text: Any) -> Any:
    """Run a parser that raises QueryValidationError as a pydantic validator (a ValueError)."""
    try:
        return parse(text)
    except QueryValidationError as e:
        raise ValueError(e.message) from None
