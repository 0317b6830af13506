"""Does ``ragsonde traffic`` read a Euclid or Manhattan collection as well as a Cosine one?

1. SciFact's bench collection (default chunker, dense + BM25, Cosine) is copied point for point
   (the same vectors, BM25 vectors and payloads) into a Euclid and a Manhattan collection.
2. For each distance and mode (dense; hybrid, DBSF by default): per-query human nDCG@10 from
   ``evaluate`` with SciFact's labels, and ``traffic_report`` of the 300 test queries.
3. Figures: ``predicted``'s AUC of telling weak queries (nDCG@10 < 0.3) from the others and its
   Spearman against nDCG@10 on each distance, and how it agrees with the Cosine collection's:
   Spearman of ``predicted`` between the two, and the share of queries whose ``weak`` flag is
   the same. Nothing is chosen or fitted here: the shipped ``predicted`` is measured as is.

The MiniLM vectors are unit-normalised, so Euclid ranks exactly as Cosine does (the distance is
√(2 − 2·cosine)); Manhattan is another metric and ranks a little differently.

Run from the repository's root: ``python -m bench.bench_distances [--home DIR]`` (the home holds
``scifact_hybrid``; the copies are written beside it and kept).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import BENCH_HOME, SCIFACT_HYBRID, require_scifact, results_dir
from bench.bench_traffic import WEAK, auc, spearman, write_log

DISTANCES = ("Cosine", "Euclid", "Manhattan")
MODES = ("dense", "hybrid")


def copy_as(store: Any, source: str, distance: str) -> str:
    """``source``'s points in a collection of ``distance`` (made once; its name returned)."""
    from ragsonde.models.points import PointRecord
    from ragsonde.models.scores import Distance

    name = f"{source}_{distance.lower()}"
    if name in store.list_collections():
        return name
    info = store.collection_info(source)
    store.create_collection(
        name,
        info.dimension,
        vector_name=info.vector_name,
        sparse_vector_name=info.sparse_vector_name,
        indexed_fields=info.indexed_fields,
        distance=Distance(distance),
    )
    for batch in store.scroll(source, batch_size=512, with_vectors=True):
        store.upsert(name, [PointRecord(p.id, p.vector, p.payload, p.sparse) for p in batch])
    store.build_index(name)
    return name


def measure(ws: Any, collection: str, mode: str, log: Path, dataset: Path) -> dict[str, Any]:
    from ragsonde.evaluate import evaluate
    from ragsonde.evaluate.options import EvalOptions
    from ragsonde.models.params import SearchParams
    from ragsonde.traffic.run import TrafficOptions, traffic_report
    from ragsonde.workspace import Workspace

    settings = ws.settings.model_copy(update={"collection": collection})
    with Workspace(settings, store=ws.store, embedder=ws.embedder) as one:
        human = evaluate(
            dataset,
            options=EvalOptions(search={"mode": mode}, throughput=False),
            workspace=one,
            record=False,
        )
        options = TrafficOptions(search=SearchParams(mode=mode), record=False)
        report = traffic_report([log], one, options, collection=collection)
    rows = {q.query_id: q for q in report.rows()}
    return {
        "ndcg@10": human.metrics["ndcg@10"],
        "ndcg": {q: r.metrics["ndcg@10"] for q, r in human.per_query.items()},
        "predicted": {q: r.predicted or 0.0 for q, r in rows.items()},
        "weak": {q: r.weak for q, r in rows.items()},
    }


def summarise(got: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per distance: nDCG@10, predicted's AUC and Spearman, agreement with Cosine's."""
    cosine = got["Cosine"]
    ids = sorted(cosine["predicted"])
    out = {}
    for distance, m in got.items():
        ndcg = [m["ndcg"][q] for q in ids]
        pred = [m["predicted"][q] for q in ids]
        row = {
            "ndcg@10": round(m["ndcg@10"], 4),
            "auc": round(auc([y >= WEAK for y in ndcg], pred), 4),
            "spearman": round(spearman(pred, ndcg), 4),
            "weak_share": round(sum(m["weak"][q] for q in ids) / len(ids), 4),
        }
        if distance != "Cosine":
            row["spearman_with_cosine"] = round(
                spearman(pred, [cosine["predicted"][q] for q in ids]), 4
            )
            row["weak_agree_with_cosine"] = round(
                sum(m["weak"][q] == cosine["weak"][q] for q in ids) / len(ids), 4
            )
        out[distance] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, default=BENCH_HOME, help="ragsonde home of SciFact")
    ap.add_argument("--quick", action="store_true", help="write to bench/results/quick/")
    ap.add_argument(
        "--before",
        type=Path,
        help="a results file this script wrote with the code before the orientation fix "
        "(commit 6152d7d): its figures are kept beside this run's as 'before'",
    )
    args = ap.parse_args()
    dataset = require_scifact()
    from ragsonde.config import Settings
    from ragsonde.evaluate.datasets import load_benchmark
    from ragsonde.workspace import Workspace

    started = time.perf_counter()
    settings = Settings(home=args.home, collection=SCIFACT_HYBRID)
    bench = load_benchmark(dataset)
    out: dict[str, Any] = {
        "dataset": "SciFact test (300 queries), default chunker, dense + BM25; the same points "
        "as Cosine, Euclid and Manhattan collections (embedded store)",
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m bench.bench_distances",
        "weak_definition": f"human nDCG@10 < {WEAK}",
        "modes": {},
    }
    with Workspace(settings) as ws, tempfile.TemporaryDirectory() as tmp:
        if SCIFACT_HYBRID not in ws.store.list_collections():
            raise SystemExit(f"{SCIFACT_HYBRID} not in {args.home}: run bench.bench_traffic first")
        names = {"Cosine": SCIFACT_HYBRID}
        for distance in DISTANCES[1:]:
            names[distance] = copy_as(ws.store, SCIFACT_HYBRID, distance)
        log = write_log(bench.queries, Path(tmp) / "scifact.log.jsonl")
        for mode in MODES:
            got = {d: measure(ws, names[d], mode, log, dataset) for d in DISTANCES}
            out["modes"][mode] = summarise(got)
            print(mode, json.dumps(out["modes"][mode]), flush=True)
    if args.before is not None:
        before = json.loads(args.before.read_text(encoding="utf-8"))
        out["before"] = {"commit": "6152d7d", "date": before["date"], "modes": before["modes"]}
    out["seconds"] = round(time.perf_counter() - started, 1)
    folder = results_dir(args.quick)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "distances.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {folder / 'distances.json'}")


def distances_section(d: dict[str, Any]) -> list[str]:
    """The RESULTS.md section for ``bench/results/distances.json`` (called by ``report.py``)."""
    out = [
        "## Label-free health on every distance (`bench/bench_distances.py`)",
        "",
        f"{d['dataset']}, run {d['date']} (`{d['command']}`). Weak: {d['weak_definition']}. "
        "Nothing is fitted here: the shipped `predicted` on each distance, its AUC and Spearman "
        "against the human nDCG@10, and its agreement with the Cosine collection's (Spearman "
        "of `predicted`, share of equal `weak` flags). Euclid ranks as Cosine on these unit "
        "vectors; Manhattan is another metric.",
        "",
        "| mode | distance | nDCG@10 | AUC | Spearman | weak share | ρ with Cosine "
        "| weak flags as Cosine |",
        "|---|---|---|---|---|---|---|---|",
    ]
    runs = [("", d["modes"])]
    if "before" in d:
        runs.append((f" (before, {d['before']['commit']})", d["before"]["modes"]))
    for when, modes in runs:
        out += _rows(modes, when)
    missed = [
        f"{mode} {distance} (AUC {r['auc']:.3f}, Spearman {r['spearman']:+.3f})"
        for mode, rows in d["modes"].items()
        for distance, r in rows.items()
        if r["auc"] < 0.83 or r["spearman"] < 0.55
    ]
    out += [
        "",
        "Below the traffic target (AUC ≥ 0.83, Spearman ≥ 0.55, set for the Cosine default): "
        + ("; ".join(missed) if missed else "none")
        + ". A distance collection ranks as its Cosine twin, but `gap` and `nqc` are measured "
        "in distances, which are not a linear function of the cosine, so the figures differ.",
    ]
    if "before" in d:
        out += [
            "",
            f"Before ({d['before']['commit']}, the same script on the code of that commit, "
            f"{d['before']['date']}): the signals read raw distances as similarities, so a "
            "distance collection's `weak` was almost never set; and Qdrant's DBSF reversed "
            "the dense side of a hybrid search (qdrant/qdrant#10611), which halved its nDCG@10.",
        ]
    return [*out, ""]


def _rows(modes: dict[str, Any], when: str) -> list[str]:
    out = []
    for mode, rows in modes.items():
        for distance, r in rows.items():
            rho = r.get("spearman_with_cosine")
            agree = r.get("weak_agree_with_cosine")
            out.append(
                f"| {mode}{when} | {distance} | {r['ndcg@10']:.4f} | {r['auc']:.3f} | "
                f"{r['spearman']:+.3f} | {r['weak_share']:.1%} | "
                + (f"{rho:+.3f}" if rho is not None else "—")
                + " | "
                + (f"{agree:.1%}" if agree is not None else "—")
                + " |"
            )
    return out


if __name__ == "__main__":
    main()
