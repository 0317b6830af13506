"""The traffic replay's signals before and after 2026-11-28's rewrite of three of them, in one
process on the same replayed queries, rounds alternating: CPU microseconds a query of
:func:`~ragsonde.traffic.predictor.query_signals` with each, and whether every signal came out
the same (to the bit: the new code must not move a value).

*Before* is the code as it was (kept here verbatim): ``rbo`` indexed a store's lazy ids one at
a time and computed ``p ** (d - 1)`` at each depth; ``agreement_at_top`` asked ``top in r`` and
then ``r.index(top)`` (two passes over a lazy ranking); ``score_signals`` floated the scores
through a generator. *After* is what ships (:mod:`ragsonde.traffic.signals`).

Run from the repository's root: ``python -m bench.bench_traffic_speed --signals-ab`` (it adds
``signals_ab`` to ``bench/results/traffic_speed.json``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

QUERIES = 1280
ROUNDS = 3


def rbo_before(a: Sequence[str], b: Sequence[str], p: float = 0.9, depth: int = 20) -> float:
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    total = 0.0
    both = 0
    for d in range(1, depth + 1):
        x = a[d - 1] if d <= len(a) else None
        y = b[d - 1] if d <= len(b) else None
        if x is not None:
            both += x in seen_b or x == y
            seen_a.add(x)
        if y is not None and y != x:
            both += y in seen_a
            seen_b.add(y)
        total += p ** (d - 1) * both / d
    return (1 - p) * total


def agreement_at_top_before(top: str, rankings: Sequence[Sequence[str]]) -> float:
    if not rankings:
        return 0.0
    return sum(1.0 / (r.index(top) + 1) if top in r else 0.0 for r in rankings) / len(rankings)


def score_signals_before(scores: Sequence[float], k: int = 10) -> dict[str, float]:
    from ragsonde.traffic.signals import SCORE_SIGNALS

    if not scores:
        return {}
    ranked = sorted((float(s) for s in scores), reverse=True)
    out = {name: fn(ranked, k) for name, fn in SCORE_SIGNALS.items()}
    return {name: value for name, value in out.items() if math.isfinite(value)}


def signals_ab(home: Path, dataset: Path) -> dict[str, Any]:
    from bench._common import SCIFACT_HYBRID
    from ragsonde.config import Settings
    from ragsonde.traffic import predictor, signals
    from ragsonde.workspace import Workspace

    lines = (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(x)["text"] for x in lines][:QUERIES]
    versions = {
        "before": (rbo_before, agreement_at_top_before, score_signals_before),
        "after": (signals.rbo, signals.agreement_at_top, signals.score_signals),
    }
    names = ("rbo", "agreement_at_top", "score_signals")  # as query_signals looks them up
    us: dict[str, list[float]] = {"before": [], "after": []}
    found: dict[str, list[dict[str, float]]] = {}
    with Workspace(Settings(home=home, collection=SCIFACT_HYBRID)) as ws:
        p = predictor.SignalPredictor(ws, collection=SCIFACT_HYBRID)
        replayer, calibration = p.replayer, p.calibration
        batches = [texts[i : i + 64] for i in range(0, len(texts), 64)]
        embedded = [replayer.embed(b, replayer.prepare()) for b in batches]
        try:
            for _ in range(ROUNDS):
                for name, fns in versions.items():
                    # replayed afresh: a store's lazy ids are read once, so each version pays
                    # for the ids it reads
                    replays = [
                        r
                        for b, e in zip(batches, embedded, strict=True)
                        for r in replayer.replay(b, e)
                    ]
                    for attr, fn in zip(names, fns, strict=True):
                        setattr(predictor, attr, fn)
                    t0 = time.process_time()
                    out = [predictor.query_signals(r, calibration) for r in replays]
                    us[name].append((time.process_time() - t0) / len(texts) * 1e6)
                    found[name] = out
        finally:
            for attr, fn in zip(names, versions["after"], strict=True):
                setattr(predictor, attr, fn)
    return {
        "queries": len(texts),
        "rounds": ROUNDS,
        "before_us": [round(x, 1) for x in us["before"]],
        "after_us": [round(x, 1) for x in us["after"]],
        "identical": found["before"] == found["after"],
    }


def signals_ab_line(d: dict[str, Any]) -> str:
    """The RESULTS.md sentence of ``signals_ab``."""
    before, after = min(d["before_us"]), min(d["after_us"])
    same = "every signal identical" if d["identical"] else "**the signals differ**"
    return (
        f"Signals rewritten (rbo on the first ids read once, one pass for agree_top1), A/B in "
        f"one process (`python -m bench.bench_traffic_speed --signals-ab`, {d['queries']:,} "
        f"SciFact queries, {d['rounds']} rounds, best of each): every signal of a replayed query "
        f"takes {after:.0f} µs of CPU against {before:.0f} µs before ({after / before:.2f} ×), "
        f"{same}."
    )


AHEAD_QUERIES = 2560


@contextmanager
def otlp_workspace(home: Path, texts: list[str]) -> Iterator[tuple[Any, Path]]:
    """The SciFact workspace of ``home``, its model warmed up, and ``texts`` written as one
    OTLP JSON file of RETRIEVER spans (deleted after the block)."""
    import tempfile

    from bench._common import SCIFACT_HYBRID
    from bench.bench_traffic_speed import write_otlp
    from ragsonde.config import Settings
    from ragsonde.workspace import Workspace

    with (
        tempfile.TemporaryDirectory() as tmp,
        Workspace(Settings(home=home, collection=SCIFACT_HYBRID)) as ws,
    ):
        path = Path(tmp) / "t.otlp.json"
        write_otlp(texts, path)
        ws.embedder.embed_queries(["warm up"])
        yield ws, path


def ahead_ab(home: Path, dataset: Path) -> dict[str, Any]:
    """``analyse`` of one OTLP file of SciFact sentences (reading, replay, signals, report) with
    the embedding worker kept one batch ahead (what ships, ``EMBED_AHEAD = 1``) and without
    (0: the next batch read and queued once this one is embedded), rounds alternating: wall and
    CPU seconds of each, and whether the two reports' JSON is the same."""
    import io
    import os
    import resource

    from bench.bench_traffic_speed import sentences
    from ragsonde.traffic import predictor
    from ragsonde.traffic.read import scan_traffic
    from ragsonde.traffic.run import TrafficOptions, analyse

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    texts = sentences(dataset / "corpus.jsonl", AHEAD_QUERIES)
    wall: dict[str, list[float]] = {"0": [], "1": []}
    cpus: dict[str, list[float]] = {"0": [], "1": []}
    reports: dict[str, str] = {}
    loads = []
    with otlp_workspace(home, texts) as (ws, path):
        try:
            for _ in range(ROUNDS):
                for ahead in ("0", "1"):
                    predictor.EMBED_AHEAD = int(ahead)
                    t0, c0 = time.perf_counter(), cpu()
                    report = analyse(scan_traffic([path]), ws, TrafficOptions(record=False))
                    wall[ahead].append(time.perf_counter() - t0)
                    cpus[ahead].append(cpu() - c0)
                    report.created_at = ""
                    out = io.StringIO()
                    report.write_json(out)
                    reports[ahead] = out.getvalue()
                    loads.append(os.getloadavg()[0])
        finally:
            predictor.EMBED_AHEAD = 1
    return {
        "queries": len(texts),
        "rounds": ROUNDS,
        "wall_s_ahead0": [round(x, 2) for x in wall["0"]],
        "wall_s_ahead1": [round(x, 2) for x in wall["1"]],
        "cpu_s_ahead0": [round(x, 2) for x in cpus["0"]],
        "cpu_s_ahead1": [round(x, 2) for x in cpus["1"]],
        "load_average": [round(x, 1) for x in loads],
        "identical": reports["0"] == reports["1"],
    }


def ahead_ab_line(d: dict[str, Any]) -> str:
    """The RESULTS.md sentence of ``ahead_ab``: every round, and the medians (a best-of on a
    shared machine picks the luckiest round)."""
    from statistics import median

    def rounds(key: str) -> str:
        return ", ".join(f"{x:.2f}" for x in d[key])

    w0, w1 = median(d["wall_s_ahead0"]), median(d["wall_s_ahead1"])
    c0, c1 = median(d["cpu_s_ahead0"]), median(d["cpu_s_ahead1"])
    same = "the same report JSON" if d["identical"] else "**the reports differ**"
    head = (
        "Embedding worker kept one batch ahead, A/B in one process (`python -m "
        "bench.bench_traffic_speed --ahead-ab`, `analyse` of an OTLP file of "
        f"{d['queries']:,} SciFact sentences, {d['rounds']} rounds alternating, load average "
        f"{min(d['load_average']):.1f}-{max(d['load_average']):.1f})"
    )
    ahead, before = rounds("wall_s_ahead1"), rounds("wall_s_ahead0")
    return (
        f"{head}: wall {ahead} s one batch ahead against {before} s when the next batch was "
        f"read and queued only once the last was embedded (medians {w1:.2f} and {w0:.2f} s, "
        f"{w1 / w0:.2f} ×; CPU {c1:.2f} and {c0:.2f} s), {same}."
    )


def kmeans_before(vectors: Sequence[Sequence[float]], k: int, rounds: int = 20) -> list[int]:
    """:func:`ragsonde.traffic.views._kmeans` as it was (verbatim): the vectors read through a
    list into float64, the norms of all at once, each cluster's members copied out."""
    import numpy as np

    x = np.asarray(vectors, dtype=np.float64)
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    centres = x[np.linspace(0, len(x) - 1, k).astype(int)].copy()
    labels = np.zeros(len(x), dtype=int)
    for _ in range(rounds):
        new = np.argmax(x @ centres.T, axis=1)
        if _ > 0 and np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            members = x[labels == c]
            if len(members):
                mean = members.mean(axis=0)
                centres[c] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return [int(v) for v in labels]


def topics_ab(home: Path, dataset: Path) -> dict[str, Any]:
    """The topics of a reservoir of weak queries (500: what 10,000 queries of the speed bench
    fill, about 5 % weak; 2,000: full, from about 40,000) with the k-means before and after:
    the peak of memory allocated while they are computed (tracemalloc) and whether the topics
    are the same. The vectors are the model's embeddings of SciFact sentences."""
    import tracemalloc

    from bench._common import SCIFACT_HYBRID
    from bench.bench_traffic_speed import sentences
    from ragsonde.config import Settings
    from ragsonde.traffic import views
    from ragsonde.traffic.report import QueryHealth
    from ragsonde.traffic.tally import TOPIC_SAMPLE, Tally
    from ragsonde.workspace import Workspace

    texts = sentences(dataset / "corpus.jsonl", TOPIC_SAMPLE)
    with Workspace(Settings(home=home, collection=SCIFACT_HYBRID)) as ws:
        vectors = [
            v
            for i in range(0, len(texts), 64)
            for v in ws.embedder.embed_queries(texts[i : i + 64])
        ]
    after = views._kmeans
    out: dict[str, Any] = {}
    try:
        for n in (500, TOPIC_SAMPLE):
            tally = Tally()
            for i in range(n):
                row = QueryHealth(
                    query=texts[i], query_id=f"s{i}", weight=1, predicted=0.0, weak=True, signals={}
                )
                tally.add(row, vectors[i].tolist())
            found = {}
            for name, kmeans in (("before", kmeans_before), ("after", after)):
                views._kmeans = kmeans
                tracemalloc.start()
                found[name] = tally.topics()
                out[f"peak_mib_{name}_{n}"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 2)
                tracemalloc.stop()
            out[f"identical_{n}"] = found["before"] == found["after"]
    finally:
        views._kmeans = after
    return out


def topics_ab_line(d: dict[str, Any]) -> str:
    """The RESULTS.md sentence of ``topics_ab``."""
    same = all(v for k, v in d.items() if k.startswith("identical_"))
    return (
        "Topics' k-means in less memory, A/B in one process (`python -m "
        "bench.bench_traffic_speed --topics-ab`, the model's vectors of SciFact sentences in "
        "the reservoir of weak queries): the peak allocated while the topics are computed is "
        f"{d['peak_mib_after_500']:.1f} MiB for 500 weak queries (what 10,000 queries fill) and "
        f"{d['peak_mib_after_2000']:.1f} MiB for the full 2,000, against "
        f"{d['peak_mib_before_500']:.1f} and {d['peak_mib_before_2000']:.1f} MiB before; "
        + ("the same topics." if same else "**the topics differ**.")
    )
