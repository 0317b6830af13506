"""A traffic run into the run history, like an evaluation (:mod:`ragsonde.history`).

The run is recorded as an evaluation of the traffic's queries without labels: its fingerprint
(search, index, embedder, chunking, content, code) is an evaluation's, its benchmark part is the
hash of the traffic (``traffic-<hash>``: ids, texts), and its metrics are the label-free ones:
``predicted`` (mean), ``weak_share``, ``weak_share_weighted``; each query's row carries its
``predicted``, ``weak`` and evidence signals (at most :data:`HISTORY_ROWS` rows: a run's memory
stays bounded). ``history list``, ``trend --metric weak_share`` and ``diff`` then read it, and
the MCP tool ``failing_queries`` lists its weakest queries.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from pathlib import Path

from ragsonde.traffic.crossfit import LABELS_UNUSED
from ragsonde.traffic.report import QueryHealth, TrafficReport
from ragsonde.workspace import Workspace

__all__ = ["HISTORY_ROWS", "record_traffic"]

#: Per-query rows a traffic run records: every query up to this many, beyond it the ones with
#: the smallest hash of their id (the same queries in every run of the same traffic, so that
#: ``history diff`` pairs them).
HISTORY_ROWS = 5000


def _row_metrics(q: QueryHealth) -> dict[str, float]:
    """A query's row in the history: its predicted, weak (1 or 0) and the evidence signals
    (:data:`~ragsonde.traffic.html.EVIDENCE`), which the MCP tool failing_queries reads."""
    from ragsonde.traffic.html import EVIDENCE

    if q.predicted is None:
        return {}
    out = {"predicted": q.predicted, "weak": 1.0 if q.weak else 0.0}
    out.update({name: q.signals[name] for name in EVIDENCE if name in q.signals})
    return out


def _id_hash(query_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(query_id.encode(), digest_size=8).digest(), "big")


def record_traffic(
    report: TrafficReport,
    workspace: Workspace,
    *,
    record: bool | None = None,
    history: Path | str | None = None,
) -> int | None:
    """Record ``report`` (unless ``record`` is False or ``RAGSONDE_RECORD=0``); its run id."""
    from ragsonde.evaluate.datasets import Benchmark, BenchQuery
    from ragsonde.evaluate.report import (
        BenchmarkInfo,
        EvalReport,
        Integrity,
        Latency,
        QueryRow,
        SearchInfo,
        StageTimings,
    )
    from ragsonde.history.diff import LABEL_FREE
    from ragsonde.history.fingerprint import build_fingerprint
    from ragsonde.history.record import history_path, recording_on
    from ragsonde.history.store import HistoryStore

    if not recording_on(record):
        return None
    name = f"traffic-{report.traffic_hash}"
    total = n_scored = 0.0
    kept: list[tuple[int, int, QueryHealth]] = []  # a max-heap by negated id hash
    for seq, q in enumerate(report.rows()):
        if q.predicted is not None:
            total += q.predicted
            n_scored += 1
        item = (-_id_hash(q.query_id), -seq, q)
        if len(kept) < HISTORY_ROWS:
            heapq.heappush(kept, item)
        elif kept[0] < item:
            heapq.heapreplace(kept, item)
    rows = [q for _, _, q in sorted(kept, key=lambda t: -t[1])]  # in the order read
    metrics = {
        "predicted": round(total / n_scored, 6) if n_scored else 0.0,
        "weak_share": report.weak_share,
        "weak_share_weighted": report.weak_share_weighted,
    }
    as_eval = EvalReport(
        dataset=f"traffic: {', '.join(report.files)}",
        collection=report.collection,
        embedder=report.embedder,
        relevance_by=LABEL_FREE,  # history diff reads its depth from top_k
        ks=[10],
        search=SearchInfo(
            mode=report.search.mode,
            exact=report.search.exact,
            score_threshold=report.search.score_threshold,
            params=report.search,
        ),
        metrics=metrics,
        latency=Latency(),
        integrity=Integrity(),
        benchmark=BenchmarkInfo(name=name, queries=report.n_queries),
        created_at=report.created_at,
        per_query={
            q.query_id: QueryRow(
                query=q.query,
                relevant={},
                retrieved=[(i, 0.0) for i in q.top_ids],
                total_ms=0.0,
                timings=StageTimings(),
                metrics=_row_metrics(q),
            )
            for q in rows
        },
        warnings=[f"label-free traffic run: {report.combination}"],
    )
    bench = Benchmark(name, [BenchQuery(q.query_id, q.query, {}) for q in rows])
    path = history_path(workspace.settings.home, history)
    with HistoryStore(path) as hs:
        fingerprint = build_fingerprint(
            as_eval,
            bench,
            store=workspace.store,
            embedder=workspace.embedder,
            hash_file=hs.file_sha256,
        )
        # a traffic run's "labels" are what its predicted was fitted to and where weak was cut:
        # a run re-weighted by --labels, or cut elsewhere, reads on another scale, and a diff
        # must say so (benchmark.labels_sha256 changed) rather than call the other worse
        part = fingerprint.benchmark
        fixed = report.combination.split(LABELS_UNUSED)[0]  # too few labels: as without
        method = [part.labels_sha256, fixed, report.weak_below]
        method_sha = hashlib.sha256(json.dumps(method).encode()).hexdigest()
        fingerprint = fingerprint.model_copy(
            update={"benchmark": part.model_copy(update={"labels_sha256": method_sha})}
        )
        return hs.record(as_eval, fingerprint, {})
