"""A verdict with error bars: PPI++ intervals from a few labelled SciFact queries (issue 35).

    .venv/bin/python -m bench.bench_estimate [--home /tmp/ragsonde-estimate] [--draws 500]

1. Five systems on the whole SciFact collection (5,183 documents, 300 test queries): dense,
   BM25, hybrid RRF, hybrid DBSF and a degraded index (1-bit binary quantization without
   rescoring). The collection (dense + BM25, ``bench._common.SCIFACT_HYBRID``) and its binary
   copy are built once in ``--home`` (a scratch ragsonde home, default under /tmp) with the
   real model; each system is evaluated once, and its per-query nDCG@10 and top-10 ids and
   scores are cached beside them (``estimate_perquery.json``).
2. Draws, in NumPy: ``--draws`` random sets of n ∈ {30, 50, 100} labelled queries, the rest
   unlabelled. For every system, n and label-free predictor: the 95 % interval of nDCG@10 by
   ``ragsonde.estimate`` (signals cross-fitted on the labelled queries, PPI++) and the classical
   interval from the same n; coverage of the full-label nDCG@10 and mean width.
3. Power: DBSF against dense, the paired difference of nDCG@10, over n from 10 to 290; the
   smallest n at which the interval excludes zero in 80 % of draws, classical and PPI++.

Predictors (each label-free: a system's own ranking, and the rankings every deployment can
run beside it), fitted to the labelled queries by cross-fitting:

* ``own``: the four score signals of the system's own top 10 (top-1, gap, NQC, z-score);
* ``dense+bm25``: those of the dense and the BM25 rankings, their top-1 − top-2 gaps, the BM25
  top score per query word, and the query's length;
* ``consensus``: ``own``, the gaps and lengths, and how far the other four systems agree with
  this one's ranking (:func:`_consensus`);
* ``traffic``: the traffic room's :class:`~ragsonde.traffic.predictor.SignalPredictor` signals
  and its ``predicted`` (:func:`traffic_signals`);
* ``traffic+consensus``: both.

Targets: coverage ≥ 0.93 for every system and n; mean width ≤ 0.85 × classical with the best
predictor; PPI needs ≥ 30 % fewer labels for a significant DBSF − dense difference. Writes
``bench/results/estimate.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import SCIFACT, SCIFACT_HYBRID, machine, require_scifact, write_results

#: name -> (collection suffix, mode, search settings)
SYSTEMS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "dense": ("", "dense", {}),
    "bm25": ("", "sparse", {}),
    "hybrid_rrf": ("", "hybrid", {"search": {"fusion": "rrf"}}),
    "hybrid_dbsf": ("", "hybrid", {"search": {"fusion": "dbsf"}}),
    "dense_binary_norescore": ("__binary", "dense", {"search": {"quantization_rescore": False}}),
}
SIZES = (30, 50, 100)
PREDICTORS = ("own", "dense+bm25", "consensus", "traffic", "traffic+consensus")
TARGETS = {"coverage": 0.93, "width_ratio": 0.85, "fewer_labels": 0.30}
#: A scratch ragsonde home: the collections are built once and reused across runs.
DEFAULT_HOME = Path(tempfile.gettempdir()) / "ragsonde-estimate"

PerQuery = dict[str, dict[str, dict[str, Any]]]


def build(home: Path) -> None:
    """The collection and its binary copy, built once in ``home``."""
    from bench.bench_labels import _variant_specs, resume
    from ragsonde.config import Settings
    from ragsonde.tune.variants import build_tuned_copy
    from ragsonde.workspace import Workspace

    with Workspace(Settings(home=home, collection=SCIFACT_HYBRID)) as ws:
        if SCIFACT_HYBRID not in ws.store.list_collections():
            resume(ws, SCIFACT, SCIFACT_HYBRID)
        target = f"{SCIFACT_HYBRID}__binary"
        if target not in ws.store.list_collections():
            build_tuned_copy(ws.store, SCIFACT_HYBRID, target, _variant_specs()["binary"])


def collect(home: Path) -> PerQuery:
    """System -> query id -> {ndcg, ids, scores} (evaluated once, cached in ``home``)."""
    cache = home / "estimate_perquery.json"
    if cache.is_file():
        cached: PerQuery = json.loads(cache.read_text())
        if set(cached) == set(SYSTEMS):
            return cached
    build(home)
    from bench._common import evaluate_in
    from ragsonde.config import Settings
    from ragsonde.evaluate import EvalOptions
    from ragsonde.workspace import Workspace

    out: PerQuery = {}
    with Workspace(Settings(home=home, collection=SCIFACT_HYBRID)) as ws:
        for name, (suffix, mode, knobs) in SYSTEMS.items():
            s = Settings(home=home, collection=SCIFACT_HYBRID + suffix, **knobs)
            rep = evaluate_in(
                SCIFACT,
                EvalOptions(mode=mode, throughput=False, ks=(10,)),
                settings=s,
                store=ws.store,
                embedder=ws.embedder,
                record=False,
            )
            out[name] = {
                q: {
                    "ndcg": float(row.metrics["ndcg@10"]),
                    "ids": [i for i, _ in row.retrieved],
                    "scores": [float(s) for _, s in row.retrieved],
                }
                for q, row in rep.per_query.items()
            }
            print(f"{name:24s} nDCG@10 {rep.metrics['ndcg@10']:.4f}", flush=True)
    cache.write_text(json.dumps(out))
    return out


def traffic_signals(home: Path, ids: list[str]) -> dict[str, list[dict[str, float]]]:
    """System -> per query (in ``ids`` order) the traffic room's label-free signals
    (:class:`ragsonde.traffic.predictor.SignalPredictor`: the served ranking, the dense and
    BM25 rankings replayed at depth 100, their agreement, the query terms' IDF, the
    collection's calibration), cached in ``home``."""
    cache = home / "estimate_traffic.json"
    if cache.is_file():
        cached: dict[str, list[dict[str, float]]] = json.loads(cache.read_text())
        if set(cached) == set(SYSTEMS):
            return cached
    from ragsonde.config import Settings
    from ragsonde.models.params import SearchParams
    from ragsonde.models.prediction import PredictedQuery
    from ragsonde.traffic.predictor import SignalPredictor
    from ragsonde.workspace import Workspace

    texts: dict[str, str] = {}
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            texts[str(row["_id"])] = str(row["text"])
    queries = [PredictedQuery(query_id=q, text=texts[q]) for q in ids]
    out: dict[str, list[dict[str, float]]] = {}
    with Workspace(Settings(home=home, collection=SCIFACT_HYBRID)) as ws:
        for name, (suffix, mode, knobs) in SYSTEMS.items():
            search = SearchParams(mode=mode, **knobs.get("search", {}))
            predictor = SignalPredictor(ws, search, collection=SCIFACT_HYBRID + suffix)
            out[name] = [
                {**p.signals, **({"predicted": p.predicted} if p.predicted is not None else {})}
                for p in predictor.predict(queries)
            ]
            print(f"{name:24s} traffic signals: {len(out[name][0])}", flush=True)
    cache.write_text(json.dumps(out))
    return out


def _matrix(rows: list[dict[str, float]]) -> Any:
    """Rows of named signals as a matrix (a signal a query lacks: the column's mean)."""
    import numpy as np

    names = sorted({n for r in rows for n in r})
    m = np.asarray([[r.get(n, np.nan) for n in names] for r in rows])
    return np.where(np.isnan(m), np.nanmean(m, axis=0)[None, :], m)


def _overlap(a: list[str], b: list[str]) -> float:
    return len(set(a) & set(b)) / max(1, min(len(a), len(b)))


def _gap12(scores: list[float]) -> float:
    return scores[0] - scores[1] if len(scores) > 1 else 0.0


def _consensus(pq: PerQuery, system: str, q: str) -> list[float]:
    """How far the other systems agree with this one's ranking of ``q``: how many put its top
    hit first, and in their top 3; its top hit's reciprocal rank in each; and the nDCG@10 of its
    ranking against pseudo-labels voted by the others' top 3 (first place 1, others 0.3)."""
    import math

    mine = pq[system][q]["ids"]
    top = mine[0] if mine else None
    others = [pq[o][q]["ids"] for o in SYSTEMS if o != system]
    votes: dict[str, float] = {}
    for ranked in others:
        for r, d in enumerate(ranked[:3]):
            votes[d] = votes.get(d, 0.0) + (1.0 if r == 0 else 0.3)
    dcg = sum(votes.get(d, 0.0) / math.log2(r + 2) for r, d in enumerate(mine[:10]))
    ideal = sum(v / math.log2(r + 2) for r, v in enumerate(sorted(votes.values())[::-1][:10]))
    return [
        float(sum(bool(r) and r[0] == top for r in others)),
        float(sum(top in r[:3] for r in others)),
        *(1.0 / (1 + r.index(top)) if top in r else 0.0 for r in others),
        dcg / ideal if ideal else 0.0,
    ]


def query_terms() -> dict[str, int]:
    """Query id -> words in its text."""
    out: dict[str, int] = {}
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            out[str(row["_id"])] = max(1, len(str(row["text"]).split()))
    return out


def signal_matrices(
    pq: PerQuery, ids: list[str], traffic: dict[str, list[dict[str, float]]] | None = None
) -> dict[str, dict[str, Any]]:
    """System -> predictor -> (queries, signals) matrix, every signal label-free."""
    import numpy as np

    from ragsonde.traffic.signals import SCORE_SIGNALS, score_signals

    def scores(system: str, q: str) -> list[float]:
        sig = score_signals(pq[system][q]["scores"])
        return [sig.get(name, 0.0) for name in SCORE_SIGNALS]

    terms = query_terms()

    def lexical(q: str) -> list[float]:
        dense, bm25 = pq["dense"][q]["scores"], pq["bm25"][q]["scores"]
        top = bm25[0] if bm25 else 0.0
        return [_gap12(dense), _gap12(bm25), top / terms[q], float(terms[q])]

    out: dict[str, dict[str, Any]] = {}
    for system in SYSTEMS:
        own = np.asarray([scores(system, q) for q in ids])
        base = np.asarray([scores("dense", q) + scores("bm25", q) + lexical(q) for q in ids])
        agree = np.asarray([_consensus(pq, system, q) for q in ids])
        out[system] = {
            "own": own,
            "dense+bm25": base,
            "consensus": np.hstack([own, base[:, -4:], agree]),
        }
        if traffic is not None:
            tm = _matrix(traffic[system])
            out[system]["traffic"] = tm
            out[system]["traffic+consensus"] = np.hstack([tm, agree])
    return out


def _ppi(y: Any, x: Any, lab: Any, seed: int, clip: tuple[float, float] = (0.0, 1.0)) -> Any:
    from ragsonde.estimate import crossfit, crossppi_mean

    fit = crossfit(x[lab], y[lab], x[~lab], seed=seed, clip=clip)
    return crossppi_mean(y[lab], fit.labeled, fit.unlabeled)


def draws(feats: dict[str, dict[str, Any]], pq: PerQuery, ids: list[str], n_draws: int,
          seed: int) -> dict[str, Any]:  # fmt: skip
    """Coverage and width per system, n and method."""
    import numpy as np
    from scipy.stats import t as student

    from ragsonde.estimate import classical_mean

    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}

    def hit(iv: Any, truth: float) -> tuple[bool, bool]:
        """Covered by the normal interval (ppi_py's), and by Student's t with n - 1 df."""
        half = float(student.ppf(0.975, iv.n_labeled - 1)) * iv.se
        return iv.low <= truth <= iv.high, iv.estimate - half <= truth <= iv.estimate + half

    for system in SYSTEMS:
        y = np.asarray([pq[system][q]["ndcg"] for q in ids])
        truth = float(y.mean())
        out[system] = {"full_label_ndcg@10": round(truth, 4), "n": {}}
        for n in SIZES:
            rows: dict[str, list[tuple[tuple[bool, bool], float]]] = {
                m: [] for m in ("classical", *PREDICTORS)
            }
            lams: dict[str, list[float]] = {m: [] for m in PREDICTORS}
            for d in range(n_draws):
                lab = np.zeros(len(ids), dtype=bool)
                lab[rng.choice(len(ids), n, replace=False)] = True
                c = classical_mean(y[lab])
                rows["classical"].append((hit(c, truth), c.width))
                for p in PREDICTORS:
                    iv = _ppi(y, feats[system][p], lab, d)
                    rows[p].append((hit(iv, truth), iv.width))
                    lams[p].append(iv.lam)
            cw = float(np.mean([w for _, w in rows["classical"]]))
            out[system]["n"][str(n)] = {
                m: {
                    "coverage": round(float(np.mean([h[0] for h, _ in r])), 4),
                    "coverage_t": round(float(np.mean([h[1] for h, _ in r])), 4),
                    "mean_width": round(float(np.mean([w for _, w in r])), 4),
                    "width_ratio": round(float(np.mean([w for _, w in r])) / cw, 4),
                    **({"mean_lambda": round(float(np.mean(lams[m])), 3)} if m in lams else {}),
                }
                for m, r in rows.items()
            }
            print(
                f"{system:24s} n={n:3d} "
                + "  ".join(
                    f"{m} cov {v['coverage']:.3f} w {v['mean_width']:.3f} ({v['width_ratio']:.2f})"
                    for m, v in out[system]["n"][str(n)].items()
                ),
                flush=True,
            )
    return out


def power(
    feats: dict[str, dict[str, Any]],
    pq: PerQuery,
    ids: list[str],
    n_draws: int,
    seed: int,
    a: str = "dense",
    b: str = "hybrid_dbsf",
) -> dict[str, Any]:
    """How often the paired difference b − a is significant, per n, classical and PPI++ (each
    predictor: both systems' signals side by side)."""
    import numpy as np

    from ragsonde.estimate import classical_mean

    d = np.asarray([pq[b][q]["ndcg"] - pq[a][q]["ndcg"] for q in ids])
    rng = np.random.default_rng(seed + 1)
    grid = [*range(10, 100, 5), *range(100, 300, 20)]
    rates: dict[str, dict[str, float]] = {m: {} for m in ("classical", *PREDICTORS)}
    for n in grid:
        hits = dict.fromkeys(rates, 0)
        for k in range(n_draws):
            lab = np.zeros(len(ids), dtype=bool)
            lab[rng.choice(len(ids), n, replace=False)] = True
            hits["classical"] += classical_mean(d[lab]).excludes(0.0)
            for p in PREDICTORS:
                x = np.hstack([feats[a][p], feats[b][p]])
                hits[p] += _ppi(d, x, lab, k, clip=(-1.0, 1.0)).excludes(0.0)
        for m in rates:
            rates[m][str(n)] = hits[m] / n_draws
    needed = {m: next((int(n) for n, r in v.items() if r >= 0.8), None) for m, v in rates.items()}
    return {
        "pair": f"{b} - {a}",
        "full_label_difference": round(float(d.mean()), 4),
        "significant_share": rates,
        "labels_needed_80pct": needed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, default=DEFAULT_HOME)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--power-draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    require_scifact()
    started = time.perf_counter()
    pq = collect(args.home)
    ids = sorted(pq["dense"])
    feats = signal_matrices(pq, ids, traffic_signals(args.home, ids))
    t0 = time.perf_counter()
    coverage = draws(feats, pq, ids, args.draws, args.seed)
    pw = power(feats, pq, ids, args.power_draws, args.seed)
    print(json.dumps(pw["labels_needed_80pct"]), flush=True)
    best = {
        system: {n: min(PREDICTORS, key=lambda p: v["n"][n][p]["width_ratio"]) for n in v["n"]}
        for system, v in coverage.items()
    }
    worst_coverage = min(
        v["n"][n][m]["coverage"] for v in coverage.values() for n in v["n"] for m in v["n"][n]
    )
    worst_coverage_t = min(
        v["n"][n][m]["coverage_t"] for v in coverage.values() for n in v["n"] for m in v["n"][n]
    )
    worst_best_ratio = max(
        v["n"][n][best[s][n]]["width_ratio"] for s, v in coverage.items() for n in v["n"]
    )
    need = pw["labels_needed_80pct"]
    ppi_need = min((v for k, v in need.items() if k != "classical" and v), default=None)
    fewer = 1 - ppi_need / need["classical"] if ppi_need and need["classical"] else None
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),
        "dataset": "scifact test: 300 queries, 5,183 documents",
        "draws": args.draws,
        "power_draws": args.power_draws,
        "systems": coverage,
        "best_predictor": best,
        "power": pw,
        "figures": {
            "min_coverage": worst_coverage,
            "min_coverage_t": worst_coverage_t,
            "max_width_ratio_best_predictor": worst_best_ratio,
            "ppi_fewer_labels": None if fewer is None else round(fewer, 3),
        },
        "targets": TARGETS,
        "targets_met": {
            "coverage": worst_coverage >= TARGETS["coverage"],
            "coverage_t": worst_coverage_t >= TARGETS["coverage"],
            "width_ratio": worst_best_ratio <= TARGETS["width_ratio"],
            "fewer_labels": fewer is not None and fewer >= TARGETS["fewer_labels"],
        },
        "draw_seconds": round(time.perf_counter() - t0, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_results("estimate", summary, quick=False)
    print(json.dumps(summary["figures"]), json.dumps(summary["targets_met"]))


if __name__ == "__main__":
    main()


def estimate_section(d: dict[str, Any]) -> list[str]:
    """The RESULTS.md section for ``bench/results/estimate.json`` (called by ``report.py``)."""
    methods = ("classical", *PREDICTORS)
    out = [
        "## Estimates with error bars (`bench/bench_estimate.py`)",
        "",
        f"{d['dataset']}, run {d['date']} ({d['seconds'] / 60:.1f} min): "
        f"`python -m bench.bench_estimate --draws {d['draws']} --power-draws {d['power_draws']}`. "
        f"Each system's per-query nDCG@10 is computed once; {d['draws']} random draws of n "
        "labelled queries (the rest unlabelled) per system and n. Coverage: how often the 95 % "
        "interval holds the full-label nDCG@10 (target ≥ 0.93). Width: the mean interval width "
        "over the classical interval's from the same n labels (target ≤ 0.85 × with the best "
        "label-free predictor). PPI++ with each predictor's signals cross-fitted on the "
        "labelled queries (`ragsonde.estimate`).",
        "",
        "| system | full-label nDCG@10 | n | "
        + " | ".join(f"{m}: coverage / width" for m in methods)
        + " |",
        "|---|---|---|" + "---|" * len(methods),
    ]
    for system, v in d["systems"].items():
        for n, row in v["n"].items():
            cells = []
            for m in methods:
                r = row[m]
                ratio = "" if m == "classical" else f" ({r['width_ratio']:.2f} ×)"
                cov_t = f" (t {r['coverage_t']:.3f})" if "coverage_t" in r else ""
                cells.append(f"{r['coverage']:.3f}{cov_t} / {r['mean_width']:.3f}{ratio}")
            out.append(f"| {system} | {v['full_label_ndcg@10']:.4f} | {n} | {' | '.join(cells)} |")
    best = []
    for system, v in d["systems"].items():
        ratios = {m: [v["n"][n][m]["width_ratio"] for n in v["n"]] for m in PREDICTORS}
        top = min(ratios, key=lambda m: sum(ratios[m]))
        best.append(f"{system} `{top}` {min(ratios[top]):.2f}–{max(ratios[top]):.2f} ×")
    pw = d["power"]
    need = pw["labels_needed_80pct"]
    met = [k for k, ok in d["targets_met"].items() if ok]
    missed = [k for k, ok in d["targets_met"].items() if not ok]
    f = d["figures"]
    out += [
        "",
        "Predictors: `own` the system's own score signals (top-1, top-1 − top-10 gap, NQC, "
        "z-score); `dense+bm25` those of the dense and BM25 rankings with their top-1 − top-2 "
        "gaps, BM25's top score per query word and the query's length; `consensus` own + gaps "
        "+ how far the other four systems agree with this one's ranking; `traffic` the traffic "
        "room's `SignalPredictor` (replayed dense and BM25 rankings, RBO/overlap, IDF, "
        "calibration percentiles and its `predicted`); `traffic+consensus` both.",
        "",
        "Best predictor per system (mean over n), its width against the classical interval: "
        + "; ".join(best)
        + ". The eval's default predictor (`--predictor scores`) is `own`.",
        "",
        f"Power, {pw['pair']} (full-label difference {pw['full_label_difference']:+.4f}, "
        f"{d['power_draws']} draws per n): labelled queries needed before the paired "
        "difference's interval excludes 0 in 80 % of draws: "
        + ", ".join(f"{m} {k if k is not None else '> 280'}" for m, k in need.items())
        + ".",
        "",
        f"**Reading.** Worst coverage over every system, n and method: {f['min_coverage']:.3f} "
        f"with the normal quantile (ppi_py's), {f.get('min_coverage_t', float('nan')):.3f} with "
        "Student's t on n − 1 degrees of freedom (same standard errors). "
        f"Worst width ratio with each cell's best predictor: "
        f"{f['max_width_ratio_best_predictor']:.2f} ×. PPI needs "
        + (
            f"{f['ppi_fewer_labels']:.0%} fewer labels for the difference"
            if f["ppi_fewer_labels"] is not None
            else "no fewer labels for the difference"
        )
        + f" (target 30 %). Targets met: {', '.join(met) or 'none'}; missed: "
        f"{', '.join(missed) or 'none'}.",
        "",
    ]
    return out
