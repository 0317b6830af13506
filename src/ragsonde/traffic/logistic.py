"""The logistic combination of signals that ``predicted`` is, and its fit.

A :class:`Logistic` reads each signal as its percentile among the collection's own sentences
(:meth:`~ragsonde.traffic.calibration.Calibration.percentile`), so that one model fits
collections whose raw scores live on other scales, and answers
``σ(intercept + Σ weight · percentile)`` in (0, 1); a signal the query lacks counts as the
median, 0.5. :func:`fit_logistic` fits one (L2 penalty, fractional targets in [0, 1], Newton's
method) on rows of signals and their targets: the collection's own sentences and whether each
found its chunk (:mod:`~ragsonde.traffic.calibration`), labelled questions of another corpus
(``bench/bench_traffic.py``) or the labelled part of the traffic
(:mod:`~ragsonde.traffic.crossfit`).
numpy is imported where a fit runs, not with this module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import numpy as np

__all__ = ["L2", "Logistic", "Percentiles", "features", "fit", "fit_logistic", "predict"]

#: The L2 penalty of every fit (on the weights, not the intercept); percentiles are in [0, 1].
L2 = 1.0


class Percentiles(Protocol):
    """Where a signal's value stands among the collection's own sentences (a calibration)."""

    def percentile(self, name: str, value: float) -> float | None: ...


class Logistic(BaseModel):
    """``σ(intercept + Σ weights[s] · percentile(s))``: signal -> weight, and what it was fitted
    on (the report says it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: dict[str, float]
    intercept: float
    fitted_on: str

    def predict(self, signals: Mapping[str, float], calibration: Percentiles) -> float:
        """The model's value for one query's ``signals``, in (0, 1)."""
        z = self.intercept
        for name, w in self.weights.items():
            pct = calibration.percentile(name, signals[name]) if name in signals else None
            z += w * (pct if pct is not None else 0.5)
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def features(
    rows: Sequence[Mapping[str, float]], calibration: Percentiles, names: Sequence[str]
) -> np.ndarray:
    """One row per query: the percentiles of ``names`` (0.5 when absent), then 1 (intercept)."""
    import numpy as np

    out = np.full((len(rows), len(names) + 1), 0.5)
    out[:, -1] = 1.0
    for i, row in enumerate(rows):
        for j, name in enumerate(names):
            if name in row:
                pct = calibration.percentile(name, row[name])
                out[i, j] = pct if pct is not None else 0.5
    return out


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, rounds: int = 25) -> np.ndarray:
    """Logistic regression with targets in [0, 1], by Newton's method (the intercept, the last
    column, is not penalised)."""
    import numpy as np

    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(rounds):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w


def predict(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    import numpy as np

    out: np.ndarray = 1.0 / (1.0 + np.exp(-(x @ w)))
    return out


def fit_logistic(
    rows: Sequence[Mapping[str, float]],
    targets: Sequence[float],
    calibration: Percentiles,
    names: Sequence[str],
    *,
    fitted_on: str,
    l2: float = L2,
) -> Logistic | None:
    """The :class:`Logistic` of ``names`` fitted on ``rows`` (each query's signals) against
    ``targets`` (in [0, 1]); None when the targets do not vary (nothing to learn from)."""
    import numpy as np

    if len(rows) != len(targets):
        raise ValueError(f"{len(rows)} rows but {len(targets)} targets")
    y = np.clip(np.asarray(targets, dtype=float), 0.0, 1.0)
    if len(y) < 2 or float(y.max() - y.min()) == 0.0:
        return None
    w = fit(features(rows, calibration, names), y, l2)
    return Logistic(
        weights={n: round(float(v), 6) for n, v in zip(names, w[:-1], strict=True)},
        intercept=round(float(w[-1]), 6),
        fitted_on=fitted_on,
    )
