"""The replay and its signals with the embedded store's ids read lazily (what ships,
:class:`ragsonde.store._convert.LazyIds`) and eagerly (every id of every ranking made text, as
before), in one process on the same pre-embedded queries, rounds alternating: CPU milliseconds a
query of each, and whether every signal came out the same.

Run from the repository's root: ``python -m bench.bench_traffic_speed --ids-ab`` (it adds
``ids_ab`` to ``bench/results/traffic_speed.json``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

QUERIES = 1280
ROUNDS = 3


def ids_ab(home: Path, dataset: Path) -> dict[str, Any]:
    from bench._common import SCIFACT_HYBRID
    from ragsonde.config import Settings
    from ragsonde.store import _convert as convert
    from ragsonde.traffic.predictor import SignalPredictor, query_signals
    from ragsonde.workspace import Workspace

    lines = (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(x)["text"] for x in lines][:QUERIES]
    lazy = convert.LazyIds

    def eager(points: Any) -> tuple[str, ...]:
        return tuple(convert.id_text(p.id) for p in points)

    ms: dict[str, list[float]] = {"eager": [], "lazy": []}
    signals: dict[str, list[dict[str, float]]] = {}
    with Workspace(Settings(home=home, collection=SCIFACT_HYBRID)) as ws:
        predictor = SignalPredictor(ws, collection=SCIFACT_HYBRID)
        replayer, calibration = predictor.replayer, predictor.calibration
        batches = [texts[i : i + 64] for i in range(0, len(texts), 64)]
        embedded = [replayer.embed(b, replayer.prepare()) for b in batches]
        try:
            for _ in range(ROUNDS):
                for name, ids in (("eager", eager), ("lazy", lazy)):
                    convert.LazyIds = ids  # type: ignore[misc,assignment]
                    t0, out = time.process_time(), []
                    for batch, e in zip(batches, embedded, strict=True):
                        out += [query_signals(r, calibration) for r in replayer.replay(batch, e)]
                    ms[name].append((time.process_time() - t0) / len(texts) * 1000)
                    signals[name] = out
        finally:
            convert.LazyIds = lazy  # type: ignore[misc]
    return {
        "queries": len(texts),
        "rounds": ROUNDS,
        "eager_ms": [round(x, 3) for x in ms["eager"]],
        "lazy_ms": [round(x, 3) for x in ms["lazy"]],
        "identical": signals["eager"] == signals["lazy"],
    }


def ids_ab_line(d: dict[str, Any]) -> str:
    """The RESULTS.md sentence of ``ids_ab``."""
    eager, lazy = min(d["eager_ms"]), min(d["lazy_ms"])
    same = "every signal identical" if d["identical"] else "**the signals differ**"
    return (
        f"Ids read lazily, A/B in one process (`python -m bench.bench_traffic_speed --ids-ab`, "
        f"{d['queries']:,} SciFact queries, {d['rounds']} rounds, best of each): the replay and "
        f"its signals take {lazy:.3f} ms of CPU a query with lazy ids against {eager:.3f} ms "
        f"with every id read ({lazy / eager:.2f} ×), {same}."
    )
