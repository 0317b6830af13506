"""Labels needed for a significant difference, with and without a judging plan (issue 35).

    .venv/bin/python -m bench.bench_estimate_plan [--home /tmp/ragsonde-estimate] [--draws 500]
        [--other-draws 400] [--seed 0]

Reads ``bench/bench_estimate.py``'s per-query data (its ``--home`` cache: each system's
nDCG@10 on the 300 SciFact test queries, its top-10 ids, and the shipped ``Consensus``
predictions; run that bench first). For DBSF against dense, at every n of a grid, ``--draws``
draws of n labelled queries for five methods, all of the mean difference over the 300 queries
(the finite form; Student's t):

* ``classical``: n queries drawn uniformly, their mean difference (finite-population
  correction);
* ``ppi``: the same draws, PPI++ with the fixed ``consensus`` difference (the best label-free
  predictor of ``bench_estimate``);
* ``classical-plan``: n queries drawn by ``ragsonde.estimate.pair_plan.plan_comparison``
  (exact queries skipped, Neyman allocation on the label-free rank spread, 4 strata), the
  stratified mean (``ragsonde.estimate.design``, no predictor);
* ``ppi-plan``: the plan's draws, the stratified estimate with the same ``consensus``
  difference (combined regression ``lam``);
* ``scores-plan``: the plan's draws through what ``compare --plan-file`` runs by default
  (``estimate_planned_difference`` with both systems' own score signals, cross-fitted to the
  labelled differences).

For each: the share of draws whose interval excludes 0, the smallest n where that reaches 0.8,
and the coverage of the full-label difference at that n and over the grid. The same five for
two other pairs (``--other-draws``) as a check that the design's gain is not this pair's alone.
Writes ``bench/results/estimate_plan.json``; ``bench/report.py`` renders it.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path
from typing import Any

from bench._common import write_results

METHODS = ("classical", "ppi", "classical-plan", "ppi-plan", "scores-plan")
GRID = [*range(10, 100, 5), *range(100, 301, 20)]
PAIRS = (("dense", "hybrid_dbsf"), ("dense", "hybrid_rrf"), ("hybrid_rrf", "hybrid_dbsf"))
TARGET = 0.30
#: The grid stops once every method is significant this often.
STOP = 0.9


def _uniform(rng: Any, size: int, n: int) -> Any:
    import numpy as np

    lab = np.zeros(size, dtype=bool)
    lab[rng.choice(size, n, replace=False)] = True
    return lab


def _draw(
    ids: list[str], rankings: tuple[dict[str, Any], dict[str, Any]], d: Any, f: Any, n: int,
    rng: Any, seed: int, signals: Any = None,
) -> dict[str, Any]:  # fmt: skip
    """One draw of n labels for each design: the intervals of :data:`METHODS`."""
    import numpy as np

    from ragsonde.estimate import classical_mean, ppi_mean
    from ragsonde.estimate.design import stratified_difference
    from ragsonde.estimate.pair_plan import estimate_planned_difference, plan_comparison
    from ragsonde.estimate.ppi import Interval

    lab = _uniform(rng, len(d), n)
    out = {
        "classical": classical_mean(d[lab], small_sample=True, population=len(d)),
        "ppi": ppi_mean(d[lab], f[lab], f[~lab], small_sample=True, finite=True),
    }
    plan = plan_comparison(ids, *rankings, set(), n, seed=seed)
    planned = {p.query_id for p in plan.plan}
    got = np.asarray([q in planned for q in ids])
    strata = np.asarray([plan.stratum_of[q] for q in ids], dtype=np.int64)
    out["classical-plan"] = stratified_difference(d, got, strata)
    out["ppi-plan"] = stratified_difference(d, got, strata, f)
    if signals is not None:
        gold_b = {q: float(d[i]) for i, q in enumerate(ids) if q in planned}
        est = estimate_planned_difference(dict.fromkeys(gold_b, 0.0), gold_b, ids, plan,
                                          rankings, depth=10, signals=signals)  # fmt: skip
        # its interval cut to [-1, 1], as compare reports it: no difference in what it excludes
        out["scores-plan"] = Interval(est.estimate, 0.0, est.low, est.high, est.n_labeled,
                                      est.n_predicted, est.lam or 0.0)  # fmt: skip
    return out


def _crossing(rates: dict[str, float], level: float = 0.8) -> float | None:
    """Where the significance rate first reaches ``level``, interpolated linearly between the
    grid's two n around it (the grid's own n jumps by 5 and each rate is noisy)."""
    points = [(int(n), r) for n, r in rates.items()]
    for (n0, r0), (n1, r1) in itertools.pairwise(points):
        if r0 < level <= r1:
            return round(n0 + (level - r0) * (n1 - n0) / (r1 - r0), 1)
    return float(points[0][0]) if points and points[0][1] >= level else None


def _own(pq: dict[str, Any], system: str, ids: list[str]) -> Any:
    """Each query's score signals of ``system``'s ranking (``--predictor scores``)."""
    import numpy as np

    from ragsonde.traffic.signals import SCORE_SIGNALS, score_signals

    rows = [score_signals(pq[system][q]["scores"]) for q in ids]
    return np.asarray([[r.get(name, 0.0) for name in SCORE_SIGNALS] for r in rows])


def power(pq: dict[str, Any], shipped: dict[str, list[float]], a: str, b: str, draws: int,
          seed: int) -> dict[str, Any]:  # fmt: skip
    """Each method' significance rate and coverage per n for B − A."""
    import numpy as np

    from ragsonde.estimate.design import rank_spread

    ids = sorted(pq[a])
    d = np.asarray([pq[b][q]["ndcg"] - pq[a][q]["ndcg"] for q in ids])
    f = np.asarray(shipped[b]) - np.asarray(shipped[a])
    rankings = ({q: pq[a][q]["ids"] for q in ids}, {q: pq[b][q]["ids"] for q in ids})
    signals = np.hstack([_own(pq, a, ids), _own(pq, b, ids)])
    spread = np.asarray([rank_spread(rankings[0][q], rankings[1][q]) for q in ids])
    truth = float(d.mean())
    rng = np.random.default_rng([seed, len(a), len(b)])
    rate: dict[str, dict[str, float]] = {m: {} for m in METHODS}
    cover: dict[str, dict[str, float]] = {m: {} for m in METHODS}
    width: dict[str, dict[str, float]] = {m: {} for m in METHODS}
    for n in GRID:
        hits = dict.fromkeys(METHODS, 0)
        inside = dict.fromkeys(METHODS, 0)
        widths: dict[str, list[float]] = {m: [] for m in METHODS}
        for k in range(draws):
            key = seed * 100_000 + n * 1000 + k
            for m, iv in _draw(ids, rankings, d, f, n, rng, key, signals).items():
                hits[m] += iv.excludes(0.0)
                inside[m] += iv.low <= truth <= iv.high
                widths[m].append(iv.width)
        for m in METHODS:
            rate[m][str(n)] = hits[m] / draws
            cover[m][str(n)] = inside[m] / draws
            width[m][str(n)] = round(float(np.mean(widths[m])), 4)
        shown = "  ".join(f"{m} {rate[m][str(n)]:.2f}/{cover[m][str(n)]:.3f}" for m in METHODS)
        print(f"{b} - {a} n={n:3d} {shown}", flush=True)
        if min(rate[m][str(n)] for m in METHODS) >= STOP:
            break  # every method is past 0.8: larger n change no figure
    needed = {m: next((int(n) for n, r in rate[m].items() if r >= 0.8), None) for m in METHODS}
    smooth = {m: _crossing(rate[m]) for m in METHODS}
    base = needed["classical"]
    return {
        "pair": f"{b} - {a}",
        "draws": draws,
        "full_label_difference": round(truth, 4),
        "exact_queries": int((spread == 0).sum()),
        "zero_difference_share": round(float(np.mean(d == 0)), 3),
        "rho_consensus": round(float(np.corrcoef(d, f)[0, 1]), 3),
        "rho_abs_spread": round(float(np.corrcoef(np.abs(d), spread)[0, 1]), 3),
        "significant_share": rate,
        "coverage": cover,
        "mean_width": width,
        "labels_needed_80pct": needed,
        "labels_needed_80pct_interpolated": smooth,
        "fewer_interpolated": {
            m: round(1 - v / smooth["classical"], 3) if v and smooth["classical"] else None
            for m, v in smooth.items()
        },
        "coverage_at_needed": {
            m: cover[m][str(v)] if v is not None else None for m, v in needed.items()
        },
        "coverage_all_n": {m: round(float(np.mean(list(cover[m].values()))), 4) for m in METHODS},
        "worst_coverage": {m: min(cover[m].values()) for m in METHODS},
        "fewer_than_classical": {
            m: round(1 - v / base, 3) if v is not None and base else None for m, v in needed.items()
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    from bench.bench_estimate import DEFAULT_HOME

    ap.add_argument("--home", type=Path, default=DEFAULT_HOME)
    ap.add_argument("--draws", type=int, default=500, help="draws per n, DBSF - dense")
    ap.add_argument("--other-draws", type=int, default=400, help="draws per n, other pairs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import json

    from bench import _common

    cache = args.home / "estimate_perquery.json"
    shipped_file = args.home / "estimate_consensus.json"
    if not cache.is_file() or not shipped_file.is_file():
        raise SystemExit(f"no {cache} or {shipped_file}: run python -m bench.bench_estimate first")
    pq = json.loads(cache.read_text())
    shipped = json.loads(shipped_file.read_text())
    started = time.perf_counter()
    pairs = {}
    for i, (a, b) in enumerate(PAIRS):
        pairs[f"{b} - {a}"] = power(pq, shipped, a, b, args.draws if i == 0 else args.other_draws,
                                    args.seed)  # fmt: skip
    main_pair = pairs[f"{PAIRS[0][1]} - {PAIRS[0][0]}"]
    best = min(
        (v, m) for m, v in main_pair["labels_needed_80pct"].items() if m != "classical" and v
    )
    fewer = main_pair["fewer_than_classical"]
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": _common.machine(),
        "dataset": "scifact test: 300 queries, 5,183 documents",
        "seed": args.seed,
        "grid": GRID,
        "pairs": pairs,
        "target": TARGET,
        "best": {"method": best[1], "labels": best[0], "fewer": fewer[best[1]]},
        "target_met": {m: v is not None and v >= TARGET for m, v in fewer.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_results("estimate_plan", summary, quick=False)
    print(json.dumps(main_pair["labels_needed_80pct"]), json.dumps(summary["best"]))


if __name__ == "__main__":
    main()
