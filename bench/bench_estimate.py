"""A verdict with error bars: PPI++ intervals from a few labelled SciFact queries (issue 35).

    .venv/bin/python -m bench.bench_estimate [--home /tmp/ragsonde-estimate] [--draws 1000]
        [--draws-small 2000] [--power-draws 200] [--seed 0]

1. Five systems on the whole SciFact collection (5,183 documents, 300 test queries): dense,
   BM25, hybrid RRF, hybrid DBSF and a degraded index (1-bit binary quantization without
   rescoring). The collection (dense + BM25, ``bench._common.SCIFACT_HYBRID``) and its binary
   copy are built once in ``--home`` (a scratch ragsonde home, default under /tmp) with the
   real model; each system is evaluated once, and its per-query nDCG@10 and top-10 ids and
   scores are cached beside them (``estimate_perquery.json``), as are the traffic room's
   signals (``estimate_traffic.json``).
2. Draws, in NumPy (``bench._estimate_stats``): ``--draws`` random sets of n ∈ {50, 100}
   labelled queries (``--draws-small`` of n = 30), the rest unlabelled. For every system, n and
   predictor: the 95 % interval of nDCG@10 by ``ragsonde.estimate`` and the classical interval
   from the same n, each in two forms: ``sample`` (``ppi_py``'s: the queries a sample of a
   distribution) and ``finite`` (the mean over these 300 queries, the estimand here: the
   difference estimator with the finite-population correction, ``ragsonde.estimate.ppi``).
   Coverage of the full-label nDCG@10 with its Monte-Carlo standard error, and mean width.
3. Power: DBSF against dense, the paired difference of nDCG@10, over n from 10 to 280; the
   smallest n at which the interval excludes zero in 80 % of draws, classical and PPI++ with
   each predictor of the difference.

Predictors (all label-free; ``-cf``: signals fitted to the labelled queries by cross-fitting,
the rest fixed, PPI++'s ``lam`` their only fit):

* ``own-cf``: the four score signals of the system's own top 10 (eval's ``--predictor scores``);
* (eval's ``traffic``, its ~20 signals cross-fitted, is left out to keep a run under half an
  hour on a shared machine: the previous run measured it at 0.86–0.94 × the classical width);
* ``agreement-cf``: ``own``, the dense and BM25 gaps, BM25's top score per query word, the
  query's length, and how far the other four systems agree with this one (bench-only: it needs
  the other systems' rankings);
* ``traffic.predicted``: the traffic room's fixed ``predicted``;
* ``consensus``: :class:`ragsonde.estimate.predictors.Consensus` (eval's ``consensus``), fixed;
* ``consensus-cf``: its four signals, cross-fitted;
* ``machine-fit``, ``machine-rich``: fits to the ICT queries' machine labels, applied fixed;
  ``several``: four fixed predictors at once (the regression estimator); ``several-cf``; and
  ``shrunk-cf``: ``consensus`` with the rich signals shrunk toward it
  (:mod:`bench._estimate_machine`, :mod:`bench._estimate_generated`).

Targets: coverage ≥ 0.93 for every system and n; mean width ≤ 0.85 × classical with the best
predictor; PPI needs ≥ 30 % fewer labels for a significant DBSF − dense difference. Writes
``bench/results/estimate.json``; ``bench/report.py`` renders it (``bench._estimate_section``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import SCIFACT, SCIFACT_HYBRID, require_scifact, write_results

#: name -> (collection suffix, mode, search settings)
SYSTEMS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "dense": ("", "dense", {}),
    "bm25": ("", "sparse", {}),
    "hybrid_rrf": ("", "hybrid", {"search": {"fusion": "rrf"}}),
    "hybrid_dbsf": ("", "hybrid", {"search": {"fusion": "dbsf"}}),
    "dense_binary_norescore": ("__binary", "dense", {"search": {"quantization_rescore": False}}),
}
SIZES = (30, 50, 100)
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


def _query_texts() -> dict[str, str]:
    """SciFact's query id -> its text."""
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        return {str(row["_id"]): str(row["text"]) for row in map(json.loads, f)}


def _per_system(home: Path, ids: list[str], make: Any, label: str) -> dict[str, list[Any]]:
    """System -> the predictions (in ``ids`` order) of ``make(workspace, search,
    collection=...)``, a :class:`~ragsonde.models.prediction.Predictor` on that system."""
    from ragsonde.config import Settings
    from ragsonde.models.params import SearchParams
    from ragsonde.models.prediction import PredictedQuery
    from ragsonde.workspace import Workspace

    texts = _query_texts()
    queries = [PredictedQuery(query_id=q, text=texts[q]) for q in ids]
    out: dict[str, list[Any]] = {}
    with Workspace(Settings(home=home, collection=SCIFACT_HYBRID)) as ws:
        for name, (suffix, mode, knobs) in SYSTEMS.items():
            search = SearchParams(mode=mode, **knobs.get("search", {}))
            out[name] = make(ws, search, collection=SCIFACT_HYBRID + suffix).predict(queries)
            print(f"{name:24s} {label}", flush=True)
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
    from ragsonde.traffic.predictor import SignalPredictor

    made = _per_system(home, ids, SignalPredictor, "traffic signals")
    out = {
        name: [
            {**p.signals, **({"predicted": p.predicted} if p.predicted is not None else {})}
            for p in preds
        ]
        for name, preds in made.items()
    }
    cache.write_text(json.dumps(out))
    return out


def shipped_consensus(home: Path, ids: list[str]) -> dict[str, list[float]]:
    """System -> per query (in ``ids`` order) the predictions of the shipped
    :class:`~ragsonde.estimate.predictors.Consensus` (``eval --predictor consensus``): each
    query replayed in the real store, chunk-level rankings, cached in ``home``."""
    cache = home / "estimate_consensus.json"
    if cache.is_file():
        cached: dict[str, list[float]] = json.loads(cache.read_text())
        if set(cached) == set(SYSTEMS):
            return cached
    from ragsonde.estimate.predictors import Consensus

    made = _per_system(home, ids, Consensus, "consensus predicted")
    out = {name: [p.predicted or 0.0 for p in preds] for name, preds in made.items()}
    cache.write_text(json.dumps(out))
    return out


def _matrix(rows: list[dict[str, float]]) -> Any:
    """Rows of named signals as a matrix (a signal a query lacks: the column's mean)."""
    import numpy as np

    names = sorted({n for r in rows for n in r})
    m = np.asarray([[r.get(n, np.nan) for n in names] for r in rows])
    return np.where(np.isnan(m), np.nanmean(m, axis=0)[None, :], m)


def _gap12(scores: list[float]) -> float:
    return scores[0] - scores[1] if len(scores) > 1 else 0.0


def _agreement(pq: PerQuery, system: str, q: str) -> list[float]:
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
    return {q: max(1, len(text.split())) for q, text in _query_texts().items()}


def consensus_rows(
    pq: PerQuery, ids: list[str], traffic: dict[str, list[dict[str, float]]], system: str
) -> list[dict[str, float]]:
    """Each query's :data:`~ragsonde.estimate.predictors.CONSENSUS_SIGNALS` for ``system``, as
    :class:`~ragsonde.estimate.predictors.Consensus` computes them from its replays (the dense,
    BM25 and served rankings' votes; the traffic room's ``predicted``, ``rbo`` and ``gap``)."""
    from ragsonde.estimate.predictors import pseudo_ndcg

    out = []
    for i, q in enumerate(ids):
        refs = [pq["dense"][q]["ids"], pq["bm25"][q]["ids"], pq[system][q]["ids"]]
        got = traffic[system][i]
        row: dict[str, float] = {k: got[k] for k in ("predicted", "rbo", "gap") if k in got}
        row["pseudo_ndcg"] = pseudo_ndcg(pq[system][q]["ids"], refs)
        out.append(row)
    return out


def predictors(
    pq: PerQuery,
    ids: list[str],
    traffic: dict[str, list[dict[str, float]]],
    fitted: dict[str, Any] | None = None,
    shipped: dict[str, list[float]] | None = None,
    rich: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """System -> predictor -> a signal matrix (``-cf``: cross-fitted) or a fixed vector
    (``shipped``: system -> the shipped ``Consensus`` predictions, which ``consensus`` is when
    given, else its doc-level approximation from the cached rankings; ``fitted``: system -> the
    ``machine-fit`` predictions, :mod:`bench._estimate_generated`; ``rich``: system -> the
    ``machine-rich`` ones, which also adds ``several`` and ``several-cf``,
    :mod:`bench._estimate_machine`)."""
    import numpy as np

    from ragsonde.estimate.predictors import CONSENSUS_SIGNALS, consensus_values
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
        agree = np.asarray([_agreement(pq, system, q) + lexical(q) for q in ids])
        rows = consensus_rows(pq, ids, traffic, system)
        out[system] = {
            "own-cf": own,
            "agreement-cf": np.hstack([own, agree]),
            "traffic.predicted": np.asarray([r["predicted"] for r in traffic[system]]),
            "consensus": np.asarray(
                shipped[system] if shipped is not None else consensus_values(rows)
            ),
            "consensus-cf": _matrix([{k: r[k] for k in CONSENSUS_SIGNALS if k in r} for r in rows]),
        }
        if fitted is not None:
            out[system]["machine-fit"] = fitted[system]
        if rich is not None:
            out[system]["machine-rich"] = rich[system]
    if rich is not None:
        from bench._estimate_machine import add_several, add_shrunk

        add_several(out)
        add_shrunk(out, pq, ids, traffic)
    return out


def difference_predictors(
    pq: PerQuery,
    ids: list[str],
    feats: dict[str, dict[str, Any]],
    traffic: dict[str, list[dict[str, float]]],
    a: str,
    b: str,
    fitted: Any = None,
) -> dict[str, Any]:
    """Predictors of the per-query difference b − a (all label-free): both systems' own signals
    cross-fitted (what ``compare`` does); the difference of their :class:`Consensus` values or
    of their pseudo-label nDCG@10 (fixed); the latter gated by how far their top 10s differ
    (identical lists give exactly 0); and a cross-fit on those few."""
    import numpy as np

    from ragsonde.traffic.signals import overlap, rbo

    pa = np.asarray([r["pseudo_ndcg"] for r in consensus_rows(pq, ids, traffic, a)])
    pb = np.asarray([r["pseudo_ndcg"] for r in consensus_rows(pq, ids, traffic, b)])
    same = np.asarray([overlap(pq[a][q]["ids"], pq[b][q]["ids"]) for q in ids])
    agree = np.asarray([rbo(pq[a][q]["ids"], pq[b][q]["ids"]) for q in ids])
    cons = feats[b]["consensus"] - feats[a]["consensus"]
    return {
        "own-cf": np.hstack([feats[a]["own-cf"], feats[b]["own-cf"]]),
        "consensus": cons,
        "pseudo": pb - pa,
        "pseudo-gated": (pb - pa) * (1.0 - agree),
        "few-cf": np.column_stack([cons, pb - pa, (pb - pa) * (1.0 - agree), same, agree]),
        **({"machine-fit": fitted} if fitted is not None else {}),
    }


def _in_sample(y: Any, blocks: list[Any]) -> float:
    """Correlation of ``y`` with its least-squares fit on the signal blocks (in sample)."""
    import numpy as np

    x = np.column_stack([np.ones(len(y)), *blocks])
    fit = x @ np.linalg.lstsq(x, y, rcond=None)[0]
    return round(float(np.corrcoef(y, fit)[0, 1]), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, default=DEFAULT_HOME)
    ap.add_argument("--draws", type=int, default=1000, help="draws per system at n 50 and 100")
    ap.add_argument("--draws-small", type=int, default=2000, help="draws per system at n 30")
    ap.add_argument("--power-draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--recheck-draws", type=int, default=5000, help="fresh draws for the worst cell"
    )
    args = ap.parse_args()
    require_scifact()
    import numpy as np

    from bench import _common
    from bench import _estimate_stats as stats

    started = time.perf_counter()
    pq = collect(args.home)
    ids = sorted(pq["dense"])
    traffic = traffic_signals(args.home, ids)
    from bench import _estimate_generated as gen

    generated = gen.generated_perquery(args.home, SYSTEMS, SCIFACT_HYBRID)
    from bench import _estimate_machine as mach

    levels = gen.machine_fit(pq, ids, traffic, generated) if generated else None
    rich = mach.machine_rich(pq, ids, traffic, generated) if generated else None
    choice = mach.heldout_choice(generated) if generated else None  # ICT only: before any draw
    print(json.dumps(choice), flush=True)
    feats = predictors(pq, ids, traffic, levels, shipped_consensus(args.home, ids), rich)
    t0 = time.perf_counter()
    truth = {s: np.asarray([pq[s][q]["ndcg"] for q in ids]) for s in SYSTEMS}
    draws_of = {n: args.draws_small if n == min(SIZES) else args.draws for n in SIZES}
    coverage = stats.coverage(feats, truth, SIZES, draws_of, args.seed)
    a, b = "dense", "hybrid_dbsf"
    grid = [*range(10, 100, 5), *range(100, 300, 20)]
    diff_machine = (
        gen.machine_fit_difference(pq, ids, traffic, generated, a, b) if generated else None
    )
    diffs = difference_predictors(pq, ids, feats, traffic, a, b, diff_machine)
    pw = stats.power(
        diffs,
        truth[b] - truth[a],
        args.power_draws,
        args.seed,
        grid,
    )
    pw |= {
        "pair": f"{b} - {a}",
        "full_label_difference": round(float((truth[b] - truth[a]).mean()), 4),
    }
    print(json.dumps(pw["labels_needed_80pct"]), flush=True)
    # diagnostics only, after every draw: each fixed predictor's correlation with the truth
    # (its interval's width against the classical one is about sqrt(1 - rho**2))
    rho = {
        s: {
            m: round(float(np.corrcoef(truth[s], f)[0, 1]), 3) for m, f in fs.items() if f.ndim == 1
        }
        for s, fs in feats.items()
    }
    d = truth[b] - truth[a]
    pw["rho"] = {
        m: round(float(np.corrcoef(d, f)[0, 1]), 3) for m, f in diffs.items() if f.ndim == 1
    }
    # not predictors: least squares on all 300 human labels, the most any linear combination
    # of these signals could give
    ceiling = {
        s: _in_sample(truth[s], [f for f in fs.values() if f.ndim == 2]) for s, fs in feats.items()
    }
    pw["rho_ceiling"] = _in_sample(d, [f for f in diffs.values() if f.ndim == 2])
    pw["zero_share"] = round(float(np.mean(d == 0)), 3)
    same = np.asarray([pq[a][q]["ids"][:1] == pq[b][q]["ids"][:1] for q in ids])
    pw["same_top1_share"] = round(float(same.mean()), 3)
    pw["zero_share_same_top1"] = round(float(np.mean(d[same] == 0)), 3)
    summary_figures = stats.summarise(coverage, pw)
    worst = summary_figures["figures"]["worst_coverage"]
    rechecked = {
        form: stats.recheck(feats, truth, {**w, "form": form}, args.recheck_draws, args.seed)
        for form, w in worst.items()
    }
    summary_figures["figures"]["worst_coverage_rechecked"] = rechecked
    summary_figures["targets_met"]["coverage"] = all(
        r["coverage"] >= stats.TARGETS["coverage"] for r in rechecked.values()
    )
    print(json.dumps(rechecked), flush=True)
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "recheck_draws": args.recheck_draws,
        "machine": _common.machine(),
        "dataset": "scifact test: 300 queries, 5,183 documents",
        "seed": args.seed,
        "draws": args.draws,
        "draws_small": args.draws_small,
        "power_draws": args.power_draws,
        "systems": coverage,
        "rho": rho,
        "rho_ceiling": ceiling,
        "machine_choice": choice,
        "power": pw,
        **summary_figures,
        "draw_seconds": round(time.perf_counter() - t0, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_results("estimate", summary, quick=False)
    print(json.dumps(summary["figures"]), json.dumps(summary["targets_met"]))


if __name__ == "__main__":
    main()
