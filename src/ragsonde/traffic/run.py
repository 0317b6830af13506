"""``ragsonde traffic``'s engine: read traffic, replay each query, report its label-free health.

>>> with Workspace(collection="docs") as ws:                          # doctest: +SKIP
...     report = traffic_report(["chat.jsonl"], ws, options=TrafficOptions(sample=1000))
...     report.weak_share
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragsonde.errors import QueryValidationError
from ragsonde.models.params import SearchParams
from ragsonde.models.prediction import PredictedQuery
from ragsonde.models.query import resolve_collection
from ragsonde.models.validation import options_error, options_of
from ragsonde.progress import Progress
from ragsonde.traffic.crossfit import LABELS_UNUSED, MIN_LABELLED, CrossFit, crossfit
from ragsonde.traffic.heap import release_free_memory
from ragsonde.traffic.predictor import (
    BATCH,
    SIGNALS,
    WEAK_BELOW,
    SignalPredictor,
    combination_of,
)
from ragsonde.traffic.read import Traffic, TrafficHash, scan_traffic, write_rows
from ragsonde.traffic.records import TrafficQuery
from ragsonde.traffic.report import QueryHealth, TrafficReport, flag_reading
from ragsonde.traffic.shape import normalise
from ragsonde.traffic.tally import SHOWN, Tally
from ragsonde.traffic.views import agreement, as_replay_ids, mismatch
from ragsonde.workspace import Workspace

__all__ = ["IN_MEMORY", "SHOWN", "TrafficOptions", "analyse", "traffic_report"]

#: A report of at most this many queries holds every row in memory; a larger one spools them.
IN_MEMORY = 5000
#: Batches replayed between two returns of the C heap's free pages to the system
#: (:mod:`ragsonde.traffic.heap`; 3,200 queries).
TRIM_EVERY = 50


class TrafficOptions(BaseModel):
    """How to read and judge the traffic (one model for the library and the CLI)."""

    model_config = ConfigDict(extra="forbid")

    since: datetime | None = None
    until: datetime | None = None
    sample: int | None = Field(default=None, ge=1)
    seed: int = 0
    weak_below: float = Field(default=WEAK_BELOW, ge=0.0, le=1.0, allow_inf_nan=False)
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

    def __init__(self, **data: Any) -> None:
        """A bad value is a VALIDATION_ERROR naming the field, as every workflow's options."""
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise options_error(e) from e


def _health(
    q: TrafficQuery, predicted: float | None, signals: dict[str, float], weak_below: float
) -> QueryHealth:
    shown = round(predicted, 6) if predicted is not None else None
    return QueryHealth(
        query=q.query,
        query_id=q.query_id,
        weight=q.weight,
        first_seen=q.first_seen.astimezone(UTC).isoformat() if q.first_seen else None,
        predicted=shown,
        weak=shown is not None and shown < weak_below,  # as shown: 0.1 is not weak at 0.1
        signals={k: round(v, 6) for k, v in signals.items()},
    )


class _Rows:
    """The report's rows: in memory up to ``limit``, then all of them in a spool file."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: list[QueryHealth] = []
        self.path: Path | None = None
        self._file: TextIO | None = None

    def add(self, row: QueryHealth) -> None:
        if self._file is not None:
            self._file.write(row.model_dump_json() + "\n")
            return
        self.held.append(row)
        if len(self.held) > self.limit:
            fd, name = tempfile.mkstemp(prefix="ragsonde-traffic-", suffix=".jsonl")
            self.path = Path(name)
            self._file = os.fdopen(fd, "w", encoding="utf-8")
            for r in self.held:
                self._file.write(r.model_dump_json() + "\n")
            self.held = []

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def discard(self) -> None:
        """Close and delete the spool (the run failed: no report will read it)."""
        self.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def analyse(
    traffic: Traffic,
    workspace: Workspace,
    options: TrafficOptions | None = None,
    *,
    collection: str | None = None,
    progress: Progress | None = None,
    in_memory: int = IN_MEMORY,
) -> TrafficReport:
    """The report of already read ``traffic`` against ``collection`` (default: the settings').

    The queries stream through in batches of :data:`~ragsonde.traffic.predictor.BATCH`; the
    aggregates are gathered in bounded memory (:class:`~ragsonde.traffic.tally.Tally`), and
    beyond ``in_memory`` queries the rows go to a spool file (:class:`TrafficReport`'s
    ``rows()``, ``write_json()``). With ``options.labels`` every row stays in memory: the
    cross-fitting re-weighs them all."""
    o = options_of(options, TrafficOptions)
    coll = resolve_collection(collection, workspace.settings.collection)
    predictor = SignalPredictor(workspace, o.search, collection=coll, k=o.k)
    params = predictor.replayer.params
    queries = traffic.queries
    keep_all = o.labels is not None
    rows = _Rows(len(queries) if keep_all else in_memory)
    tally, hasher = Tally(), TrafficHash()
    vectors: list[list[float] | None] = []
    if progress is not None:
        progress.start(len(queries))
    try:
        batches = (
            (part, [PredictedQuery(query_id=q.query_id, text=q.query) for q in part])
            for part in _batches(queries, BATCH)
        )
        for step, (part, done) in enumerate(predictor.stream_replays(batches), 1):
            for q, (pred, replay) in zip(part, done, strict=True):
                hasher.add(q)
                row = _health(q, pred.predicted, pred.signals, o.weak_below)
                row.top_ids = list(replay.served.ids)
                if q.production is not None:
                    served = replay.served.ids
                    production = q.production.model_copy(
                        update={"ids": as_replay_ids(q.production.ids, served)}
                    )
                    if production.ids:
                        row.production_agreement = round(agreement(production.ids, served), 4)
                    row.mismatch = mismatch(production, served, params, coll)
                rows.add(row)
                if keep_all:
                    vectors.append(replay.vector)
                else:
                    tally.add(row, replay.vector if row.weak else None)
            if progress is not None:
                progress.advance(len(part))
            if step % TRIM_EVERY == 0:
                release_free_memory()
        rows.close()
        report = _report(traffic, workspace, o, rows, tally, hasher, vectors, predictor, coll)
        if rows.path is not None:
            report.spool(rows.path)
        release_free_memory()  # the replay's and the topics' before the history is built
    except BaseException:  # an error or a signal (SIGTERM, Ctrl-C) before the report is out
        rows.discard()
        raise
    return report


def _report(
    traffic: Traffic,
    workspace: Workspace,
    o: TrafficOptions,
    rows: _Rows,
    tally: Tally,
    hasher: TrafficHash,
    vectors: list[list[float] | None],
    predictor: SignalPredictor,
    coll: str,
) -> TrafficReport:
    """The report of the replayed rows: cross-fitted on ``o.labels`` when they were kept, the
    aggregates of ``tally``."""
    params = predictor.replayer.params
    keep_all = o.labels is not None
    combination = combination_of(predictor.calibration)
    fitted = None
    if keep_all:
        fitted = _crossfit(rows.held, o, workspace, coll, params, predictor)
        if fitted is not None:
            combination = (
                f"cross-fitted on {fitted.n_labelled} labelled queries ({fitted.folds} folds; "
                "the combination's signals re-weighted by a logistic fit, target nDCG@10)"
            )
        elif o.labels is not None:  # the labels were dropped without a word
            combination += (
                f"{LABELS_UNUSED}: fewer than {MIN_LABELLED} of its labelled queries are in this "
                "traffic"
            )
        for row, vector in zip(rows.held, vectors, strict=True):
            tally.add(row, vector if row.weak else None)
    weakest, frequent = tally.weakest(), tally.frequent()
    freq_scored = [r for r in frequent if r.predicted is not None]
    freq_weight = sum(r.weight for r in freq_scored)
    periods, unit = tally.drift()
    share, interval, weighted = tally.share()
    shown = {r.query_id: r for r in [*weakest, *frequent]}
    return TrafficReport(
        created_at=datetime.now(UTC).isoformat(),
        collection=coll,
        embedder=workspace.embedder_name,
        search=params,
        files=traffic.stats.files,
        read=traffic.stats,
        n_queries=tally.n,
        n_records=tally.weight,
        weak_below=fitted.weak_below if fitted is not None else o.weak_below,
        weak_share=share,
        weak_share_interval=interval,
        weak_share_weighted=weighted,
        combination=combination,
        flag_reading=flag_reading(
            params.mode,
            fitted.weak_below if fitted is not None else o.weak_below,
            fitted is not None,
        ),
        crossfit=fitted,
        calibration_sentences=len(predictor.calibration.rows),
        queries=rows.held if rows.path is None else list(shown.values()),
        weakest=[r.query_id for r in weakest],
        frequent=[r.query_id for r in frequent],
        frequent_health=(
            round(sum((r.predicted or 0.0) * r.weight for r in freq_scored) / freq_weight, 4)
            if freq_weight
            else None
        ),
        topics=tally.topics(),
        drift=periods,
        drift_unit=unit,
        production=tally.production(),
        saved_benchmark=str(o.save) if o.save else None,
        traffic_hash=hasher.hexdigest(),
    )


def _batches(queries: Iterable[TrafficQuery], size: int) -> Iterator[list[TrafficQuery]]:
    batch: list[TrafficQuery] = []
    for q in queries:
        batch.append(q)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


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
    o = options_of(options, TrafficOptions)
    if isinstance(paths, str | bytes | os.PathLike):  # "chat.jsonl" was read as c, h, a, t, …
        raise QueryValidationError(
            "paths: give a list of traffic files ([path]), not one path.", field="traffic"
        )
    from ragsonde.history import history_path
    from ragsonde.outputs import check_output, check_outputs

    history = history_path(workspace.settings.home, o.history)
    if o.save is not None:  # before any work: never a traffic file, the labels or the history
        check_outputs({"save": o.save}, inputs=[*paths, o.labels], history=history, rows=["save"])
    if o.history is not None:  # a log given as --history was called a damaged history
        check_output(history, "history", inputs=[*paths, o.labels], database=True)
    from ragsonde.outputs import open_output
    from ragsonde.traffic.record import record_traffic

    traffic = scan_traffic(paths, since=o.since, until=o.until, sample=o.sample, seed=o.seed)
    with ExitStack() as saving:
        if o.save is not None:  # in place only once the run is done: a failed or stopped run
            write_rows(traffic.queries, saving.enter_context(open_output(o.save)))  # keeps it
        report = analyse(traffic, workspace, o, collection=collection, progress=progress)
        try:
            report.history_run = record_traffic(
                report, workspace, record=o.record, history=o.history
            )
            saving.close()  # the saved benchmark into place (an error here is the run's too)
        except BaseException:  # its spool too: a SIGTERM ends the process before it is collected
            report.close()
            raise
    return report
