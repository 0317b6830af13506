"""Predictors of ``bench/bench_estimate.py`` built from the machine labels with a richer
feature set, and several fixed predictors at once.

* ``machine-rich``: the four consensus signals *and* the traffic room's signals
  (:data:`RICH_SIGNALS`: the served ranking's scores, the dense and BM25 replays, their
  agreement, the query terms' IDF), fitted per system by ridge regression (penalty by
  leave-one-out on the ICT queries) to the ICT queries' nDCG@10 under their machine labels, and
  applied, fixed, to the real queries. Everything in it a user computes from their collection:
  ``ragsonde generate`` and the traffic room's replays.
* ``several``: the fixed predictors ``consensus``, ``machine-fit``, ``machine-rich`` and
  ``traffic.predicted`` at once, weighed by the regression estimator
  (:func:`ragsonde.estimate.ppi.regression_mean`, PPI++ with a vector ``lam``);
  ``several-cf``: the same four columns cross-fitted (cross-PPI).

Which machine-label fit is *the* machine predictor is decided before any human figure, by
:func:`heldout_choice`: the larger mean held-out correlation on the ICT queries themselves (5
folds × 5 seeds, mean over the five systems). No human label enters any fit here."""

from __future__ import annotations

from typing import Any

#: The traffic room's signals the rich fit adds (``results``, ``cut_by_threshold`` and
#: ``out_of_domain`` are flags, nearly constant on a benchmark).
RICH_SIGNALS = (
    "avg_idf", "bm25_nqc", "bm25_top1", "dense_gap", "dense_nqc", "dense_top1", "dense_zscore",
    "gap", "max_idf", "nqc", "overlap", "predicted", "rbo", "scq", "terms", "top1", "top1_pct",
    "wig", "zscore",
)  # fmt: skip
#: Ridge penalties on standardised signals, chosen by leave-one-out on the machine queries.
GRID = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0)
#: The candidates :func:`heldout_choice` compares: name -> rich feature set or not.
CANDIDATES = {"machine-fit": False, "machine-rich": True}


class Several:
    """A matrix of fixed predictions (one column per predictor) for the regression estimator;
    ``ndim`` 0 keeps it out of the bench's per-vector correlations and the in-sample ceiling."""

    ndim = 0

    def __init__(self, matrix: Any) -> None:
        self.matrix = matrix


def rich_matrix(pq: dict[str, Any], ids: list[str], traffic: dict[str, Any], system: str,
                rich: bool = True) -> Any:  # fmt: skip
    """The four consensus signals, and with ``rich`` the :data:`RICH_SIGNALS`, per query."""
    import numpy as np

    from bench._estimate_generated import _consensus_matrix

    cons = _consensus_matrix(pq, ids, traffic, system)
    if not rich:
        return cons
    t = np.asarray([[r.get(k, np.nan) for k in RICH_SIGNALS] for r in traffic[system]], float)
    t = np.where(np.isnan(t), np.nanmean(t, axis=0)[None, :], t)
    return np.hstack([cons, t])


def _fit_apply(xm: Any, ym: Any, xr: Any) -> Any:
    """Ridge of ``ym`` on ``xm`` (standardised by the machine queries' mean and spread, the
    penalty by leave-one-out), applied to ``xr``, clipped to [0, 1]."""
    import numpy as np

    from ragsonde.estimate.crossfit import _loo_error, _ridge

    mu, sd = xm.mean(axis=0), xm.std(axis=0)
    sd[sd == 0] = 1.0
    a, b = (xm - mu) / sd, (xr - mu) / sd
    alpha = min(GRID, key=lambda g: _loo_error(a, ym, g))
    intercept, beta = _ridge(a, ym, alpha)
    return np.clip(intercept + b @ beta, 0.0, 1.0)


def _machine(generated: dict[str, Any]) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    return (
        generated["dense"]["ids"],
        {s: v["pq"] for s, v in generated.items()},
        {s: v["traffic"] for s, v in generated.items()},
    )


def heldout_choice(generated: dict[str, Any], folds: int = 5, seeds: int = 5) -> dict[str, Any]:
    """Each candidate's held-out correlation on the ICT queries (fitted on 4/5 of them,
    correlated with the machine-label nDCG@10 of the rest; per system, mean over seeds; the
    fixed ``consensus`` on all of them), and the chosen one: the largest mean over the
    systems. The rule was set before any width was measured."""
    import numpy as np

    gids, gpq, gtr = _machine(generated)
    table: dict[str, dict[str, float]] = {}
    for name, rich in CANDIDATES.items():
        table[name] = {}
        for s in generated:
            xm = rich_matrix(gpq, gids, gtr, s, rich)
            ym = np.asarray([gpq[s][q]["ndcg"] for q in gids])
            rhos = []
            for seed in range(seeds):
                fold = np.random.default_rng(seed).permutation(len(ym)) % folds
                pred = np.empty(len(ym))
                for j in range(folds):
                    held = fold == j
                    pred[held] = _fit_apply(xm[~held], ym[~held], xm[held])
                rhos.append(float(np.corrcoef(pred, ym)[0, 1]))
            table[name][s] = round(float(np.mean(rhos)), 3)
        table[name]["mean"] = round(float(np.mean(list(table[name].values()))), 3)
    # the fixed consensus, for comparison: nothing fitted, so every ICT query is held out
    from bench.bench_estimate import consensus_rows
    from ragsonde.estimate.predictors import consensus_values

    table["consensus"] = {}
    for s in generated:
        cons = consensus_values(consensus_rows(gpq, gids, gtr, s))
        ym = np.asarray([gpq[s][q]["ndcg"] for q in gids])
        table["consensus"][s] = round(float(np.corrcoef(cons, ym)[0, 1]), 3)
    table["consensus"]["mean"] = round(float(np.mean(list(table["consensus"].values()))), 3)
    chosen = max(table, key=lambda m: table[m]["mean"])
    return {"ict_heldout_rho": table, "chosen": chosen, "ict_queries": len(gids)}


def machine_rich(pq: dict[str, Any], ids: list[str], traffic: dict[str, Any],
                 generated: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """System -> the rich signals' ridge fit to the ICT queries' machine-label nDCG@10,
    applied fixed to the real queries."""
    import numpy as np

    gids, gpq, gtr = _machine(generated)
    return {
        s: _fit_apply(
            rich_matrix(gpq, gids, gtr, s),
            np.asarray([gpq[s][q]["ndcg"] for q in gids]),
            rich_matrix(pq, ids, traffic, s),
        )
        for s in generated
    }


#: The fixed predictors ``several`` weighs together.
SEVERAL = ("consensus", "machine-fit", "machine-rich", "traffic.predicted")


def add_several(feats: dict[str, dict[str, Any]]) -> None:
    """Adds ``several`` (:class:`Several`) and ``several-cf`` (the same columns, cross-fitted)
    to each system's predictors, from the fixed ones it has."""
    import numpy as np

    for fs in feats.values():
        cols = np.column_stack([fs[m] for m in SEVERAL if m in fs])
        fs["several"] = Several(cols)
        fs["several-cf"] = cols


class Shrunk:
    """A fixed prediction and signals, cross-fitted with the signals' weights shrunk toward
    zero and the fixed prediction's left free (:func:`shrunk_crossfit`); ``ndim`` 0 as
    :class:`Several`."""

    ndim = 0

    def __init__(self, fixed: Any, signals: Any) -> None:
        self.fixed = fixed
        self.signals = signals


#: Penalties for :func:`shrunk_crossfit`, up to the fixed prediction alone in effect.
SHRINK_GRID = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 1e4)


def _shrunk_fit(x: Any, y: Any, alpha: float) -> tuple[Any, Any]:
    """Ridge on centred columns, the first (the fixed prediction) unpenalised; returns
    (intercept, weights) and the leave-one-out error."""
    import numpy as np

    mx = x.mean(axis=0)
    xc = x - mx
    d = np.eye(x.shape[1]) * alpha
    d[0, 0] = 0.0
    inv = np.linalg.pinv(xc.T @ xc + d)
    beta = inv @ xc.T @ (y - y.mean())
    hat = np.einsum("ij,jk,ik->i", xc, inv, xc) + 1.0 / len(y)
    resid = (y - y.mean()) - xc @ beta
    loo = float(np.mean((resid / np.maximum(1.0 - hat, 1e-6)) ** 2))
    return (float(y.mean() - mx @ beta), beta), loo


def shrunk_crossfit(pred: Shrunk, y: Any, lab: Any, seed: int, folds: int = 5) -> Any:
    """Cross-fitted predictions (:class:`ragsonde.estimate.CrossFit`) of ``a + b · fixed +
    signals · w``: ``w`` ridge-penalised (each fold's penalty by leave-one-out on its own
    training queries, from :data:`SHRINK_GRID`), ``b`` not. At a few labels the penalty
    leaves the fixed prediction, rescaled; with more, the signals add what they know."""
    import numpy as np

    from ragsonde.estimate import CrossFit

    x = np.column_stack([pred.fixed, pred.signals])
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd == 0] = 1.0
    x = (x - mu) / sd
    xl, xu, gold = x[lab], x[~lab], y[lab]
    n = len(gold)
    k = min(folds, n // 2)
    fold_of = np.random.default_rng(seed).permutation(n) % k
    labeled, unlabeled = np.empty(n), np.empty((xu.shape[0], k))
    for j in range(k):
        held = fold_of == j
        fits = [_shrunk_fit(xl[~held], gold[~held], a) for a in SHRINK_GRID]
        intercept, beta = min(fits, key=lambda f: f[1])[0]
        labeled[held] = intercept + xl[held] @ beta
        unlabeled[:, j] = intercept + xu @ beta
    return CrossFit(np.clip(labeled, 0.0, 1.0), np.clip(unlabeled, 0.0, 1.0))


def add_shrunk(feats: dict[str, dict[str, Any]], pq: dict[str, Any], ids: list[str],
               traffic: dict[str, Any]) -> None:  # fmt: skip
    """Adds ``shrunk-cf``: ``consensus`` with the rich signals (:func:`rich_matrix`) shrunk
    toward it, to each system's predictors."""
    for system, fs in feats.items():
        fs["shrunk-cf"] = Shrunk(fs["consensus"], rich_matrix(pq, ids, traffic, system))
