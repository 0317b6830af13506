"""Cross-fitting: a combination of label-free signals fitted to the labelled queries without
letting a query's own label into its prediction.

The labelled queries are split into ``K`` folds. For each fold a ridge regression of the gold
metric on the signals is fitted on the other folds; it predicts its fold's labelled queries and
every unlabelled query. A labelled query's prediction thus never saw its label (cross-PPI,
Zrnic and Candès 2024), and each unlabelled query gets ``K`` predictions, one per fold's model.

Signals are standardised with the mean and spread of all queries (labels play no part), and
predictions are clipped into the metric's range [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.float64]

__all__ = ["DEFAULT_FOLDS", "DEFAULT_RIDGE", "CrossFit", "crossfit"]

DEFAULT_FOLDS = 5
#: Ridge penalties tried on standardised signals; each fold's model takes the one with the
#: smallest leave-one-out error on its own training queries (a few dozen labels over-fit
#: easily, and how much depends on the signals).
RIDGE_GRID = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
DEFAULT_RIDGE: float | None = None


@dataclass(frozen=True)
class CrossFit:
    """Cross-fitted predictions: ``labeled`` (n,) and ``unlabeled`` (N, K)."""

    labeled: Array
    unlabeled: Array


def _ridge(x: Array, y: Array, alpha: float) -> tuple[float, Array]:
    import numpy as np

    mx, my = x.mean(axis=0), float(y.mean())
    xc = x - mx
    beta = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ (y - my))
    return my - float(mx @ beta), beta


def _loo_error(x: Array, y: Array, alpha: float) -> float:
    """Mean squared leave-one-out error of a ridge fit (closed form: residual / (1 - h_ii))."""
    import numpy as np

    xc = x - x.mean(axis=0)
    inv = np.linalg.inv(xc.T @ xc + alpha * np.eye(x.shape[1]))
    hat = np.einsum("ij,jk,ik->i", xc, inv, xc) + 1.0 / len(y)
    _, beta = _ridge(x, y, alpha)
    resid = (y - y.mean()) - xc @ beta
    return float(np.mean((resid / np.maximum(1.0 - hat, 1e-6)) ** 2))


def _fit(x: Array, y: Array, ridge: float | None) -> tuple[float, Array]:
    alpha = ridge if ridge is not None else min(RIDGE_GRID, key=lambda a: _loo_error(x, y, a))
    return _ridge(x, y, alpha)


def crossfit(
    x_labeled: object,
    y: object,
    x_unlabeled: object,
    *,
    folds: int = DEFAULT_FOLDS,
    ridge: float | None = DEFAULT_RIDGE,
    seed: int = 0,
    clip: tuple[float, float] = (0.0, 1.0),
) -> CrossFit:
    """Ridge predictions of ``y`` from signals, cross-fitted over ``folds`` folds of the
    labelled queries (``x_labeled`` (n, p), ``x_unlabeled`` (N, p)). ``ridge`` None picks each
    fold's penalty from :data:`RIDGE_GRID` by leave-one-out on that fold's training queries."""
    import numpy as np

    xl = np.asarray(x_labeled, dtype=np.float64)
    xu = np.asarray(x_unlabeled, dtype=np.float64)
    gold = np.asarray(y, dtype=np.float64).reshape(-1)
    if xl.ndim != 2 or xu.ndim != 2 or xl.shape[1] != xu.shape[1] or xl.shape[0] != len(gold):
        raise QueryValidationError("signals: expected (n, p) and (N, p) with n labels.")
    n = xl.shape[0]
    k = min(folds, n // 2)
    if k < 2:
        raise QueryValidationError(
            f"{n} labelled queries: cross-fitting needs at least 4.", field="labels"
        )
    both = np.vstack([xl, xu])
    mu, sd = both.mean(axis=0), both.std(axis=0)
    sd[sd == 0] = 1.0
    xl, xu = (xl - mu) / sd, (xu - mu) / sd
    fold_of = np.random.default_rng(seed).permutation(n) % k
    labeled = np.empty(n)
    unlabeled = np.empty((xu.shape[0], k))
    for j in range(k):
        held = fold_of == j
        intercept, beta = _fit(xl[~held], gold[~held], ridge)
        labeled[held] = intercept + xl[held] @ beta
        unlabeled[:, j] = intercept + xu @ beta
    lo, hi = clip
    return CrossFit(np.clip(labeled, lo, hi), np.clip(unlabeled, lo, hi))
