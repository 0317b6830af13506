"""Predictor (b) of ``bench/bench_estimate.py``: a combination of label-free signals fitted on
*machine* labels of the same collection, then applied, fixed, to the real queries.

The machine labels are ``ragsonde generate``'s ICT queries of SciFact (a sentence of a document
as the query, that document as its label, the sentence removed from the collection it is
searched in: ``<collection>-ict-s0``), as ``bench/bench_labels.py`` writes them under the
ragsonde home. Each of the five systems runs them there; their per-query nDCG@10 under the
machine labels, top-10 ids and scores, and the traffic room's signals are cached in
``estimate_generated.json``. No human label enters the fit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ICT = Path("labels_full-generated") / "ict_seed0.jsonl"
ICT_COLLECTION = "-ict-s0"


def generated_perquery(home: Path, systems: dict[str, tuple[str, str, dict[str, Any]]],
                       base: str) -> dict[str, Any] | None:  # fmt: skip
    """System -> {"pq": query -> {ndcg, ids, scores}, "traffic": [signals per query]}, for the
    ICT queries (None when ``home`` has none)."""
    cache = home / "estimate_generated.json"
    if cache.is_file():
        cached: dict[str, Any] = json.loads(cache.read_text())
        if set(cached) == set(systems):
            return cached
    bench = home / ICT
    if not bench.is_file():
        return None
    from bench._common import evaluate_in
    from ragsonde.config import Settings
    from ragsonde.evaluate import EvalOptions
    from ragsonde.models.params import SearchParams
    from ragsonde.models.prediction import PredictedQuery
    from ragsonde.traffic.predictor import SignalPredictor
    from ragsonde.workspace import Workspace

    out: dict[str, Any] = {}
    with Workspace(Settings(home=home, collection=base + ICT_COLLECTION)) as ws:
        for name, (suffix, mode, knobs) in systems.items():
            collection = base + ICT_COLLECTION + suffix
            s = Settings(home=home, collection=collection, **knobs)
            rep = evaluate_in(bench, EvalOptions(mode=mode, throughput=False, ks=(10,)),
                              settings=s, store=ws.store, embedder=ws.embedder,
                              record=False)  # fmt: skip
            ids = sorted(rep.per_query)
            pq = {
                q: {
                    "ndcg": float(rep.per_query[q].metrics["ndcg@10"]),
                    "ids": [i for i, _ in rep.per_query[q].retrieved],
                    "scores": [float(x) for _, x in rep.per_query[q].retrieved],
                }
                for q in ids
            }
            search = SearchParams(mode=mode, **knobs.get("search", {}))
            predictor = SignalPredictor(ws, search, collection=collection)
            queries = [PredictedQuery(query_id=q, text=rep.per_query[q].query) for q in ids]
            traffic = [
                {**p.signals, **({"predicted": p.predicted} if p.predicted is not None else {})}
                for p in predictor.predict(queries)
            ]
            out[name] = {"ids": ids, "pq": pq, "traffic": traffic}
            print(f"{name:24s} ICT nDCG@10 {rep.metrics['ndcg@10']:.4f}", flush=True)
    cache.write_text(json.dumps(out))
    return out


def fitted_on_machine_labels(x_machine: Any, y_machine: Any, x_real: Any) -> Any:
    """Least squares of the machine-label nDCG@10 on standardised signals (standardised with
    the machine queries' own mean and spread), applied to the real queries, clipped to [0, 1]."""
    import numpy as np

    mu, sd = x_machine.mean(axis=0), x_machine.std(axis=0)
    sd[sd == 0] = 1.0
    a = np.column_stack([np.ones(len(y_machine)), (x_machine - mu) / sd])
    beta = np.linalg.lstsq(a, y_machine, rcond=None)[0]
    b = np.column_stack([np.ones(x_real.shape[0]), (x_real - mu) / sd])
    return np.clip(b @ beta, 0.0, 1.0)


def _consensus_matrix(pq: dict[str, Any], ids: list[str], traffic: dict[str, Any],
                      system: str) -> Any:  # fmt: skip
    from bench.bench_estimate import _matrix, consensus_rows
    from ragsonde.estimate.predictors import CONSENSUS_SIGNALS

    rows = consensus_rows(pq, ids, traffic, system)
    return _matrix([{k: r[k] for k in CONSENSUS_SIGNALS if k in r} for r in rows])


def _pair_matrix(pq: dict[str, Any], ids: list[str], traffic: dict[str, Any], a: str,
                 b: str) -> Any:  # fmt: skip
    """Signals of the pair: each system's four consensus signals, their difference gated by
    the two rankings' disagreement (1 − RBO), overlap@10, RBO and whether the top hits match."""
    import numpy as np

    from ragsonde.traffic.signals import overlap, rbo

    ca, cb = _consensus_matrix(pq, ids, traffic, a), _consensus_matrix(pq, ids, traffic, b)
    agree = np.asarray([rbo(pq[a][q]["ids"], pq[b][q]["ids"]) for q in ids])
    same = np.asarray([overlap(pq[a][q]["ids"], pq[b][q]["ids"]) for q in ids])
    top = np.asarray([float(pq[a][q]["ids"][:1] == pq[b][q]["ids"][:1]) for q in ids])
    return np.column_stack([ca, cb, (cb - ca) * (1.0 - agree)[:, None], same, agree, top])


def machine_fit(pq: dict[str, Any], ids: list[str], traffic: dict[str, Any],
                generated: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """System -> the four consensus signals' least-squares fit to the ICT queries' nDCG@10
    under their machine labels, applied to the real queries."""
    import numpy as np

    gids = generated["dense"]["ids"]
    gpq = {s: v["pq"] for s, v in generated.items()}
    gtr = {s: v["traffic"] for s, v in generated.items()}
    return {
        s: fitted_on_machine_labels(
            _consensus_matrix(gpq, gids, gtr, s),
            np.asarray([gpq[s][q]["ndcg"] for q in gids]),
            _consensus_matrix(pq, ids, traffic, s),
        )
        for s in generated
    }


def machine_fit_difference(pq: dict[str, Any], ids: list[str], traffic: dict[str, Any],
                           generated: dict[str, Any], a: str, b: str) -> Any:  # fmt: skip
    """The per-query difference b − a predicted by a least-squares fit of the pair's signals
    (:func:`_pair_matrix`) to the ICT queries' machine-label difference, applied fixed."""
    import numpy as np

    gids = generated["dense"]["ids"]
    gpq = {s: v["pq"] for s, v in generated.items()}
    gtr = {s: v["traffic"] for s, v in generated.items()}
    xm = _pair_matrix(gpq, gids, gtr, a, b)
    ym = np.asarray([gpq[b][q]["ndcg"] - gpq[a][q]["ndcg"] for q in gids])
    mu, sd = xm.mean(axis=0), xm.std(axis=0)
    sd[sd == 0] = 1.0
    design = np.column_stack([np.ones(len(ym)), (xm - mu) / sd])
    beta = np.linalg.lstsq(design, ym, rcond=None)[0]
    xr = (_pair_matrix(pq, ids, traffic, a, b) - mu) / sd
    return np.clip(np.column_stack([np.ones(len(ids)), xr]) @ beta, -1.0, 1.0)
