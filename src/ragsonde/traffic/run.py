"""``ragsonde traffic``'s engine: read traffic, replay each query, report its label-free health.

>>> with Workspace(collection="docs") as ws:                          # doctest: +SKIP
...     report = traffic_report(["chat.jsonl"], ws, options=TrafficOptions(sample=1000))
...     report.weak_share
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.models.params import SearchParams
from ragsonde.models.prediction import PredictedQuery
from ragsonde.progress import Progress
from ragsonde.traffic.crossfit import CrossFit, crossfit
from ragsonde.traffic.predictor import BATCH, SIGNALS, WEAK_BELOW, SignalPredictor, describe
from ragsonde.traffic.read import Traffic, read_traffic, traffic_hash, write_benchmark
from ragsonde.traffic.records import TrafficQuery
from ragsonde.traffic.report import QueryHealth, TrafficReport
from ragsonde.traffic.shape import normalise
from ragsonde.traffic.views import (
    agreement,
    drift,
    mismatch,
    production_summary,
    term_counts,
    topics,
    wilson,
)
from ragsonde.workspace import Workspace

__all__ = ["TrafficOptions", "analyse", "traffic_report"]

#: Queries listed as the weakest, and as the most frequent.
SHOWN = 20


class TrafficOptions(BaseModel):
    """How to read and judge the traffic (one model for the library and the CLI)."""

    model_config = ConfigDict(extra="forbid")

    since: datetime | None = None
    until: datetime | None = None
    sample: int | None = Field(default=None, ge=1)
    seed: int = 0
    weak_below: float = Field(default=WEAK_BELOW, ge=0.0, le=1.0)
    k: int = Field(default=10, ge=2, le=100, description="Depth of the score signals.")
    save: Path | None = Field(default=None, description="Save the traffic as a benchmark here.")
    search: SearchParams | None = None
    record: bool | None = Field(
        default=None, description="Record the run in the history (default: RAGSONDE_RECORD, on)."
    )
    history: Path | None = Field(default=None, description="The history file to record into.")
    labels: Path | None = Field(
        default=None,
        description="A labelled benchmark covering some of the queries (matched by text): "
        "predicted is then cross-fitted on them (:mod:`ragsonde.traffic.crossfit`).",
    )


def _health(
    q: TrafficQuery, predicted: float | None, signals: dict[str, float], weak_below: float
) -> QueryHealth:
    return QueryHealth(
        query=q.query,
        query_id=q.query_id,
        weight=q.weight,
        first_seen=q.first_seen.astimezone(UTC).isoformat() if q.first_seen else None,
        predicted=round(predicted, 6) if predicted is not None else None,
        weak=predicted is not None and predicted < weak_below,
        signals={k: round(v, 6) for k, v in signals.items()},
    )


def analyse(
    traffic: Traffic,
    workspace: Workspace,
    options: TrafficOptions | None = None,
    *,
    collection: str | None = None,
    progress: Progress | None = None,
) -> TrafficReport:
    """The report of already read ``traffic`` against ``collection`` (default: the settings')."""
    o = options or TrafficOptions()
    coll = collection or workspace.settings.collection
    predictor = SignalPredictor(workspace, o.search, collection=coll, k=o.k)
    params = predictor.replayer.params
    queries = traffic.queries
    rows: list[QueryHealth] = []
    weak_vectors: list[tuple[QueryHealth, list[float]]] = []
    if progress is not None:
        progress.start(len(queries))
    for start in range(0, len(queries), BATCH):
        part = queries[start : start + BATCH]
        asked = [PredictedQuery(query_id=q.query_id, text=q.query) for q in part]
        for q, (pred, replay) in zip(part, predictor.predict_replays(asked), strict=True):
            row = _health(q, pred.predicted, pred.signals, o.weak_below)
            row.top_ids = list(replay.served.ids)
            if q.production is not None and q.production.ids:
                row.production_agreement = round(agreement(q.production.ids, replay.served.ids), 4)
                row.mismatch = mismatch(q.production, replay.served.ids, params, coll)
            elif q.production is not None:
                row.mismatch = mismatch(q.production, replay.served.ids, params, coll)
            if replay.vector is not None and (row.weak or o.labels is not None):
                weak_vectors.append((row, replay.vector))
            rows.append(row)
        if progress is not None:
            progress.advance(len(part))
    combination = describe(predictor.calibration)
    fitted = None
    if o.labels is not None:
        fitted = _crossfit(rows, o, workspace, coll, params, predictor)
        if fitted is not None:
            combination = (
                f"cross-fitted on {fitted.n_labelled} labelled queries ({fitted.folds} folds; "
                "the combination's signals re-weighted by a logistic fit, target nDCG@10)"
            )
        weak_vectors = [(r, v) for r, v in weak_vectors if r.weak]
    n = len(rows)
    n_weak = sum(r.weak for r in rows)
    total_weight = sum(r.weight for r in rows)
    scored = [r for r in rows if r.predicted is not None]
    weakest = sorted(scored, key=lambda r: (r.predicted or 0.0, -r.weight))[:SHOWN]
    frequent = sorted(rows, key=lambda r: (-r.weight, r.query_id))[:SHOWN]
    freq_scored = [r for r in frequent if r.predicted is not None]
    freq_weight = sum(r.weight for r in freq_scored)
    periods, unit = drift(rows)
    return TrafficReport(
        created_at=datetime.now(UTC).isoformat(),
        collection=coll,
        embedder=workspace.embedder_name,
        search=params,
        files=traffic.stats.files,
        read=traffic.stats,
        n_queries=n,
        n_records=total_weight,
        weak_below=fitted.weak_below if fitted is not None else o.weak_below,
        weak_share=round(n_weak / n, 4) if n else 0.0,
        weak_share_interval=wilson(n_weak, n),
        weak_share_weighted=(
            round(sum(r.weight for r in rows if r.weak) / total_weight, 4) if total_weight else 0.0
        ),
        combination=combination,
        crossfit=fitted,
        calibration_sentences=len(predictor.calibration.rows),
        queries=rows,
        weakest=[r.query_id for r in weakest],
        frequent=[r.query_id for r in frequent],
        frequent_health=(
            round(sum((r.predicted or 0.0) * r.weight for r in freq_scored) / freq_weight, 4)
            if freq_weight
            else None
        ),
        topics=topics(weak_vectors, term_counts([r.query for r in rows]), n),
        drift=periods,
        drift_unit=unit,
        production=production_summary(rows),
        saved_benchmark=str(o.save) if o.save else None,
        traffic_hash=traffic_hash(queries),
    )


def _crossfit(
    rows: list[QueryHealth],
    o: TrafficOptions,
    workspace: Workspace,
    collection: str,
    params: SearchParams,
    predictor: SignalPredictor,
) -> CrossFit | None:
    """Replace ``rows``' predicted and weak by the cross-fitted ones, from the nDCG@10 of the
    queries ``o.labels`` labels (evaluated with the same search); None when too few match."""
    from ragsonde.evaluate import evaluate
    from ragsonde.evaluate.datasets import load_benchmark
    from ragsonde.evaluate.options import EvalOptions

    if o.labels is None:
        return None
    bench = load_benchmark(o.labels)
    at = {normalise(r.query): i for i, r in enumerate(rows)}
    if not any(normalise(q.text) in at for q in bench.queries):
        return None
    report = evaluate(
        o.labels,
        collection=collection,
        options=EvalOptions(search=params, throughput=False),
        workspace=workspace,
        record=False,
    )
    labels: dict[int, float] = {}
    for q in bench.queries:
        i = at.get(normalise(q.text))
        row = report.per_query.get(q.query_id)
        if i is not None and row is not None and "ndcg@10" in row.metrics:
            labels[i] = row.metrics["ndcg@10"]
    done = crossfit([r.signals for r in rows], labels, predictor.calibration, signals=list(SIGNALS))
    if done is None:
        return None
    predicted, info = done
    for r, p in zip(rows, predicted, strict=True):
        if r.signals.get("out_of_domain") != 1.0 and r.signals.get("results", 0.0) > 0:
            r.predicted = round(p, 6)
        r.weak = r.predicted is not None and r.predicted < info.weak_below
    return info


def traffic_report(
    paths: Sequence[str | Path],
    workspace: Workspace,
    options: TrafficOptions | None = None,
    *,
    collection: str | None = None,
    progress: Progress | None = None,
) -> TrafficReport:
    """Read ``paths`` (:func:`~ragsonde.traffic.read.read_traffic`), save them as a benchmark
    when ``options.save`` says where, report their health (:func:`analyse`), and record the run
    in the history (:func:`~ragsonde.traffic.record.record_traffic`)."""
    o = options or TrafficOptions()
    traffic = read_traffic(paths, since=o.since, until=o.until, sample=o.sample, seed=o.seed)
    if o.save is not None:
        write_benchmark(traffic.queries, o.save)
    report = analyse(traffic, workspace, o, collection=collection, progress=progress)
    from ragsonde.traffic.record import record_traffic

    report.history_run = record_traffic(report, workspace, record=o.record, history=o.history)
    return report
