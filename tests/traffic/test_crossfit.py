"""Cross-fitting: the logistic fit against scikit-learn's, and no labelled query predicted
from its own label."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from ragsonde.traffic.calibration import Calibration
from ragsonde.traffic.crossfit import MIN_LABELLED, crossfit
from ragsonde.traffic.logistic import fit, predict


def test_the_fit_is_scikit_learns_l2_logistic_regression() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 3))
    y = (x @ [1.5, -2.0, 0.5] + rng.normal(size=200) > 0).astype(float)
    ours = predict(np.c_[x, np.ones(200)], fit(np.c_[x, np.ones(200)], y, l2=2.0))
    theirs = LogisticRegression(C=0.5, tol=1e-10, max_iter=10_000).fit(x, y)
    assert ours == pytest.approx(theirs.predict_proba(x)[:, 1], abs=1e-4)


def _calibration() -> Calibration:
    values = {"s": sorted(float(v) for v in range(100))}
    return Calibration(key="k", n_docs=1, df={}, values=values, found=[], rows=[])


def test_a_labelled_query_is_never_predicted_from_its_own_label() -> None:
    rows = [{"s": float(v)} for v in range(0, 100, 2)]
    labels = {i: i / (len(rows) - 1) for i in range(len(rows))}  # nDCG rises with the signal
    liar = len(rows) - 1
    told: dict[float, list[float]] = {}
    for label in (0.0, 1.0):  # the same query, labelled 0 then 1: its prediction must not move
        done = crossfit(rows, {**labels, liar: label}, _calibration(), signals=["s"], folds=5)
        assert done is not None
        told[label], info = done
    assert told[0.0][liar] == told[1.0][liar] > 0.6
    others = [i for i in range(len(rows)) if i != liar]
    assert any(told[0.0][i] != told[1.0][i] for i in others)  # its label did train the others
    assert told[0.0][1] < told[0.0][len(rows) // 2] < told[0.0][-2]
    assert info.n_labelled == len(rows) and info.folds == 5
    assert info.out_of_fold_spearman is not None and info.out_of_fold_spearman > 0.8


def test_too_few_labels_keep_the_fixed_combination() -> None:
    rows = [{"s": float(v)} for v in range(MIN_LABELLED)]
    labels = {i: 0.5 for i in range(MIN_LABELLED - 1)}
    assert crossfit(rows, labels, _calibration(), signals=["s"]) is None


def test_every_surface_defaults_to_the_same_weak_cut() -> None:
    """The CLI keeps its own literal (it does not import the predictor at start): it, the server
    and the library must agree with ``WEAK_BELOW``."""
    import inspect

    from ragsonde.cli.traffic import traffic_command
    from ragsonde.server.routes_traffic import TrafficRequest
    from ragsonde.traffic.predictor import WEAK_BELOW
    from ragsonde.traffic.run import TrafficOptions

    cli = inspect.signature(traffic_command).parameters["weak_below"].default
    assert cli == WEAK_BELOW
    assert TrafficRequest.model_fields["weak_below"].default == WEAK_BELOW
    assert TrafficOptions().weak_below == WEAK_BELOW
