"""The history file's schema: numbered migrations, applied in order by
:class:`~ragsonde.history.store.HistoryStore` (its ``schema_version`` is how many were applied).

A migration only adds: a file written by an older ragsonde opens in a newer one with every run
kept, and what the new tables hold is filled from the runs already recorded where it can be.

1. ``runs`` (one row per run: what it ran against, the report without its per-query rows),
   ``run_metrics`` (each metric's mean and per-query bootstrap band), ``queries`` and
   ``query_metrics`` (per query), ``file_hashes`` (the model weights' hashes).
2. ``run_estimates``: an estimated run's estimate, 95 % interval, label counts and method per
   metric (``eval --estimate``; the whole entry as JSON beside), copied from the ``metrics_ci``
   of the runs recorded before.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

#: Schema migrations, in order: the database's ``schema_version`` is how many were applied.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_at TEXT NOT NULL,
        dataset TEXT NOT NULL,
        benchmark TEXT NOT NULL,
        benchmark_sha256 TEXT NOT NULL,
        collection TEXT NOT NULL,
        embedder TEXT NOT NULL,
        n_queries INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        seconds REAL NOT NULL,
        fingerprint TEXT NOT NULL,
        report TEXT NOT NULL
    );
    CREATE INDEX runs_by_benchmark ON runs(benchmark_sha256, id);
    CREATE INDEX runs_by_collection ON runs(collection, id);
    CREATE TABLE run_metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        metric TEXT NOT NULL,
        value REAL NOT NULL,
        ci_low REAL NOT NULL,
        ci_high REAL NOT NULL,
        PRIMARY KEY (run_id, metric)
    ) WITHOUT ROWID;
    CREATE INDEX run_metrics_by_metric ON run_metrics(metric, run_id);
    CREATE TABLE queries (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        query_id TEXT NOT NULL,
        row TEXT NOT NULL,
        PRIMARY KEY (run_id, query_id)
    ) WITHOUT ROWID;
    CREATE TABLE query_metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        query_id TEXT NOT NULL,
        metric TEXT NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (run_id, query_id, metric)
    ) WITHOUT ROWID;
    CREATE TABLE file_hashes (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256 TEXT NOT NULL
    );
    """,
    # 2: an estimated run's interval per metric (``eval --estimate``); the runs recorded with
    # one before this table existed keep it in their report JSON, copied here
    """
    CREATE TABLE run_estimates (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        metric TEXT NOT NULL,
        estimate REAL NOT NULL,
        low REAL NOT NULL,
        high REAL NOT NULL,
        n_labeled INTEGER NOT NULL,
        n_predicted INTEGER NOT NULL,
        method TEXT NOT NULL,
        entry TEXT NOT NULL,
        PRIMARY KEY (run_id, metric)
    ) WITHOUT ROWID;
    INSERT INTO run_estimates
        SELECT r.id, e.key, json_extract(e.value, '$.estimate'), json_extract(e.value, '$.low'),
               json_extract(e.value, '$.high'), json_extract(e.value, '$.n_labeled'),
               json_extract(e.value, '$.n_predicted'), json_extract(e.value, '$.method'), e.value
        FROM runs r, json_each(r.report, '$.metrics_ci') e
        WHERE json_type(r.report, '$.metrics_ci') = 'object';
    """,
)
