"""What an estimate reports (``ragsonde.estimate``): a metric's estimate with its 95 % interval,
the method behind it and the classical interval beside it, as the eval report's ``metrics_ci``
carries them."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PREDICTOR_NAMES", "Bounds", "Estimand", "Method", "MetricEstimate", "PredictorName"]

#: ``classical``: the labelled queries alone. ``ppi++``: a predictor's fixed ``predicted``
#: value with power tuning. ``cross-ppi++``: signals combined by a model cross-fitted on the
#: labelled queries, with power tuning. ``stratified``: a comparison's difference under a
#: judging plan's stratified design (``ragsonde.estimate.design``), the labels alone;
#: ``stratified-ppi++``: the same with a prediction of the difference (combined regression).
Method = Literal["classical", "ppi++", "cross-ppi++", "stratified", "stratified-ppi++"]

#: The predictors an evaluation can name (``ragsonde.estimate.run.PREDICTORS`` holds one
#: factory per name; a test keeps the two equal).
PredictorName = Literal["scores", "traffic", "judge", "consensus", "none"]
PREDICTOR_NAMES: tuple[str, ...] = get_args(PredictorName)

#: What an estimate is of. ``distribution``: the mean over the distribution the benchmark's
#: queries were drawn from (``ppi_py``'s). ``benchmark``: the mean over the benchmark's own
#: rows, the metric with every one of them labelled (the difference estimator with the
#: finite-population correction, ``ragsonde.estimate.ppi``): narrower, and what a partly
#: labelled benchmark's full-label score is.
Estimand = Literal["distribution", "benchmark"]


class Bounds(BaseModel):
    """A point estimate and its 95 % interval."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    estimate: float
    low: float
    high: float


class MetricEstimate(Bounds):
    """One metric's estimate over a partly labelled benchmark, with the classical interval over
    the labelled queries beside it."""

    n_labeled: int = Field(ge=0, description="Queries with gold labels.")
    n_predicted: int = Field(ge=0, description="Queries with a prediction only (no label).")
    method: Method
    sources: list[str] = Field(
        default_factory=list,
        description="The predictors whose predictions entered, by the name eval's --predictor "
        "gives them: scores, traffic, consensus, judge:NAME (reports of schema 1.8 and "
        "before name both scores and traffic 'signals').",
    )
    lam: float | None = Field(
        default=None, description="Weight given to the predictions (0: none, 1: full PPI)."
    )
    classical: Bounds = Field(description="The labelled queries alone, for comparison.")
    note: str = ""

    def passes(self, op: str, threshold: float) -> bool:
        """A gate on an estimate: ``>=``/``>`` pass only when the interval's lower end clears
        the threshold, ``<=``/``<`` only when its upper end does."""
        if op in (">=", ">"):
            return self.low >= threshold if op == ">=" else self.low > threshold
        return self.high <= threshold if op == "<=" else self.high < threshold
