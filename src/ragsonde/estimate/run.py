"""An evaluation's estimates: the predictors an eval can name, and ``metrics_ci`` for a run.

:data:`PREDICTORS` maps the name an eval option gives (``predictor``) to a factory of the
:class:`~ragsonde.models.prediction.Predictor` that predicts for the run's queries:

* ``scores``: the score signals of each query's own ranking (free: the eval already ran it);
* ``traffic``: the traffic room's label-free signals (dense and BM25 rankings replayed, their
  agreement, the query terms' IDF, the collection's calibration);
* ``judge``: each query's metrics on its own ranking under the LLM labels the benchmark file
  carries (``ragsonde judge``), which never serve as gold
  (:mod:`ragsonde.evaluate.provenance`);
* ``consensus``: a fixed, label-free prediction (:class:`~ragsonde.estimate.predictors.
  Consensus`: the served ranking against the dense and BM25 rankings' votes, the traffic
  room's ``predicted``, their agreement and the score gap, rank-averaged); the same replays as
  ``traffic``, but nothing fitted to the labelled queries (``ppi++``, not ``cross-ppi++``);
* ``none``: no predictions; the labelled queries alone (the classical estimate).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsonde.errors import QueryValidationError
from ragsonde.estimate.estimate import estimate_metrics
from ragsonde.estimate.predictors import JudgeMetrics, ScoreSignals
from ragsonde.models.prediction import PredictedQuery, Predictor

if TYPE_CHECKING:
    from ragsonde.estimate.pair_plan import ComparisonPlan
    from ragsonde.estimate.plan import JudgingPlan
    from ragsonde.models.estimate import MetricEstimate

__all__ = [
    "PREDICTORS",
    "RunContext",
    "check_predictor",
    "comparison_plan",
    "estimate_run",
    "read_plan",
]


@dataclass(frozen=True)
class RunContext:
    """What a predictor may use: each query's ranked scores, and the run's workspace, search
    parameters and collection (for a predictor that replays the queries)."""

    scores: Mapping[str, Sequence[float]]
    workspace: Any = None
    search: Any = None
    collection: str | None = None
    probabilities: Mapping[str, float] | None = None
    """Each query's chance to be labelled, from a judging plan (None: a uniform sample)."""
    rankings: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Each query's ranked ids, as the metrics scored them."""
    dataset: str | None = None
    """The benchmark file the run read (where a judge's labels are)."""
    shown_as: str | None = None
    """What messages call that benchmark instead of ``the benchmark PATH`` (``the uploaded
    benchmark``: the server's copy of it is in its own folders)."""


def _scores(ctx: RunContext) -> Predictor:
    return ScoreSignals(lambda q: ctx.scores.get(q.query_id, ()))


def _judge(ctx: RunContext) -> Predictor:
    from ragsonde.evaluate.provenance import judge_labels

    found = judge_labels(ctx.dataset) if ctx.dataset else None
    if found is None or not found.grades:
        named = ctx.shown_as or f"the benchmark {ctx.dataset or ''}"
        raise QueryValidationError(
            f"predictor 'judge': {named} carries no LLM labels; "
            "judge it first (`ragsonde judge BENCHMARK -c COLLECTION --llm … --agreement`).",
            field="predictor",
        )
    name = "judge:" + ",".join(found.judges) if found.judges else "judge"
    return JudgeMetrics(found.grades, lambda q: ctx.rankings.get(q.query_id, ()), name=name)


def _traffic(ctx: RunContext) -> Predictor:
    from ragsonde.traffic.predictor import SignalPredictor

    return SignalPredictor(ctx.workspace, ctx.search, collection=ctx.collection)


def _consensus(ctx: RunContext) -> Predictor:
    from ragsonde.estimate.predictors import Consensus

    return Consensus(ctx.workspace, ctx.search, collection=ctx.collection)


#: name -> factory of the predictor (None: no predictions).
PREDICTORS: dict[str, Callable[[RunContext], Predictor | None]] = {
    "scores": _scores,
    "traffic": _traffic,
    "judge": _judge,
    "consensus": _consensus,
    "none": lambda ctx: None,
}


def check_predictor(name: str) -> str:
    """``name`` if it is a known predictor, else a VALIDATION_ERROR listing them."""
    if name not in PREDICTORS:
        raise QueryValidationError(
            f"Unknown predictor '{name}': use one of {', '.join(PREDICTORS)}.", field="predictor"
        )
    return name


def estimate_run(
    queries: Sequence[PredictedQuery],
    labelled: Mapping[str, Mapping[str, float]],
    ctx: RunContext,
    *,
    predictor: str = "scores",
    names: Sequence[str] | None = None,
    finite: bool = False,
) -> dict[str, MetricEstimate]:
    """Every metric of ``labelled`` (query id -> metric -> gold value) estimated over all
    ``queries`` with the named predictor's predictions; ``finite``: of the mean over
    ``queries`` themselves (:func:`~ragsonde.estimate.estimate.estimate_metric`)."""
    made = PREDICTORS[check_predictor(predictor)](ctx)
    predictions = made.predict(queries) if made is not None else []
    return estimate_metrics(
        labelled,
        [q.query_id for q in queries],
        predictions,
        names=names,
        probabilities=ctx.probabilities,
        finite=finite,
    )


def read_plan(path: Path) -> JudgingPlan | ComparisonPlan:
    """A plan file (``judge --plan``), checked: one system's (``judging-plan``) or a
    comparison's (``comparison-plan``, ``judge --plan --versus``)."""
    from ragsonde.estimate.pair_plan import ComparisonPlan
    from ragsonde.estimate.plan import JudgingPlan
    from ragsonde.models.text import read_json_file
    from ragsonde.models.validation import validated

    try:
        loaded = read_json_file(path)  # a lone surrogate refused here
    except ValueError as e:
        raise QueryValidationError(
            f"Cannot read judging plan {path}: {e}", field="plan_file"
        ) from e
    kind = loaded.get("kind", "judging-plan") if isinstance(loaded, dict) else None
    if kind not in ("judging-plan", "comparison-plan"):
        raise QueryValidationError(
            f"{path} is not a judging plan (a JSON object whose kind is judging-plan or "
            "comparison-plan); write one with `ragsonde judge … --plan N`.",
            field="plan_file",
        )
    model: type[JudgingPlan | ComparisonPlan] = (
        ComparisonPlan if kind == "comparison-plan" else JudgingPlan
    )
    return validated(model, loaded, f"Cannot read judging plan {path}", "plan_file")


def comparison_plan(path: Path) -> ComparisonPlan:
    """A comparison's judging plan file (``judge --plan --versus``), checked."""
    from ragsonde.estimate.pair_plan import ComparisonPlan

    plan = read_plan(path)
    if not isinstance(plan, ComparisonPlan):
        raise QueryValidationError(
            f"{path} plans one system (judge --plan): a comparison takes the plan of "
            "judge --plan --versus.",
            field="plan_file",
        )
    return plan
