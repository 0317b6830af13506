"""The run history: one SQLite file, a real schema, safe under concurrent writers.

Why stdlib ``sqlite3`` and not SQLAlchemy/alembic: the history is four tables written by one
module; plain SQL keeps it dependency-free and fast (a recording is one transaction, a ``list``
one indexed query), and the migrations are a numbered list of SQL scripts applied in order
(:data:`MIGRATIONS`, the version in ``schema_version``) — what alembic would add is a second
language for the same four tables.

The tables (:mod:`ragsonde.history.schema`), one row per (run), (run, metric), (run, query) and
(run, query, metric): ``runs``, ``run_metrics`` (with the per-query bootstrap band),
``run_estimates`` (an estimated run's interval per metric, ``eval --estimate``), ``queries``,
``query_metrics``, and ``file_hashes`` (the model weights' hashes).

Safety. WAL journal, ``busy_timeout``, and every write one ``BEGIN IMMEDIATE`` transaction:
two processes recording at once both land (one waits for the other). A file that is not an
SQLite database, is shorter than its header says (truncated), or that SQLite reports corrupt
raises :class:`~ragsonde.errors.HistoryFileError` naming the path and what to do; nothing here
ever rewrites or deletes such a file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ragsonde.errors import QueryValidationError, StoreConnectionError
from ragsonde.history.damage import APPLICATION_ID, HistoryFileError, check_file, refuse_foreign
from ragsonde.history.models import Fingerprint, RunSummary
from ragsonde.history.schema import MIGRATIONS
from ragsonde.models.estimate import MetricEstimate
from ragsonde.models.query import check_collection
from ragsonde.models.text import check_text
from ragsonde.sqlite_cache import STEP_S, WAIT_S, is_busy, patiently

if TYPE_CHECKING:
    # the report's models are loaded by what reads a whole report (``get``), not by ``list``
    from ragsonde.evaluate.report import EvalReport

__all__ = ["MIGRATIONS", "HistoryStore", "RecordedRun"]

#: SQLite's primary result codes for a damaged file (``sqlite_errorcode & 0xff``).
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
#: Below this size the whole file is checked (``PRAGMA quick_check``) when opened.
_QUICK_CHECK_BYTES = 16 << 20

_SUMMARY_COLUMNS = (
    "id, created_at, dataset, benchmark, benchmark_sha256, collection, embedder, n_queries, "
    "passed, seconds, "
    # the gates a run had, from its recorded report (no column: no migration needed)
    "CASE WHEN json_valid(report) THEN json_array_length(report, '$.gates') END"
)


def _estimate(entry: str) -> MetricEstimate:
    return MetricEstimate.model_validate_json(entry)


class RecordedRun:
    """A run as read back: its summary, fingerprint and whole report."""

    def __init__(self, summary: RunSummary, fingerprint: Fingerprint, report: EvalReport) -> None:
        self.summary = summary
        self.fingerprint = fingerprint
        self.report = report


class HistoryStore:
    """The history file at ``path`` (created, with its folder, when missing).

    ``reading``: the caller only reads, so a missing or empty file is read as an empty history
    and left exactly as it is (no folder made, no tables written into it).
    """

    def __init__(self, path: Path | str, *, reading: bool = False) -> None:
        self.path = Path(path)
        check_file(self.path)
        blank = reading and (not self.path.exists() or self.path.stat().st_size == 0)
        try:
            if not blank:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                ":memory:" if blank else self.path,
                timeout=STEP_S,
                isolation_level=None,
            )
        except (OSError, sqlite3.Error) as e:
            raise self._error(e) from e
        try:
            with self._mapped():
                refuse_foreign(self._db, self.path)  # before any pragma: it is left as it was
                self._db.execute(f"PRAGMA busy_timeout = {int(STEP_S * 1000)}")
                patiently(lambda: self._db.execute("PRAGMA journal_mode = WAL"))
                self._db.execute("PRAGMA synchronous = NORMAL")
                self._db.execute("PRAGMA foreign_keys = ON")
                if not blank and self.path.stat().st_size <= _QUICK_CHECK_BYTES:
                    patiently(self._quick_check)
                self._migrate()
        except BaseException:
            self._db.close()
            raise

    # -- errors ------------------------------------------------------------------------------
    def _error(self, e: BaseException) -> Exception:
        """A library error as ours, by its SQLite result code (never by its message)."""
        code = getattr(e, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return HistoryFileError(self.path, f"damaged (SQLite: {e})")
        if is_busy(e):
            return StoreConnectionError(
                f"History file {self.path} stayed locked by another process for "
                f"{WAIT_S:.0f} s; try again when it has finished."
            )
        return StoreConnectionError(f"Cannot use history file {self.path}: {e}")

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError) as e:
            raise self._error(e) from e

    @contextmanager
    def _recorded(self, what: str) -> Iterator[None]:
        """A recorded row that cannot be read back (JSON cut short or edited, a value of another
        shape) as the damaged-history error naming the file and ``what``: never a traceback,
        and never a run read with parts missing."""
        try:
            yield
        except (ValueError, KeyError, TypeError) as e:  # pydantic's ValidationError included
            raise HistoryFileError(self.path, f"damaged: {what} cannot be read ({e})") from e

    def _quick_check(self) -> None:
        rows = self._db.execute("PRAGMA quick_check").fetchall()
        if rows != [("ok",)]:
            raise HistoryFileError(self.path, f"damaged (quick_check: {rows[0][0]})")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed whole, or rolled back whole."""
        with self._mapped():
            patiently(lambda: self._db.execute("BEGIN IMMEDIATE"))
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _version(self) -> int:
        self._db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = self._db.execute("SELECT version FROM schema_version").fetchone()
        return int(row[0]) if row else 0

    def _migrate(self) -> None:
        exists = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'schema_version'"
        ).fetchone()
        stamped = self._db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        if exists and stamped and self._version() == len(MIGRATIONS):
            return
        with self._write() as db:  # re-read inside the lock: another process may have migrated
            version = self._version()
            if version > len(MIGRATIONS):
                raise HistoryFileError(
                    self.path,
                    f"from a newer ragsonde (schema {version}; this one reads up to "
                    f"{len(MIGRATIONS)})",
                )
            for script in MIGRATIONS[version:]:
                for statement in script.split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute("DELETE FROM schema_version")
            db.execute("INSERT INTO schema_version VALUES (?)", (len(MIGRATIONS),))
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")

    def schema_version(self) -> int:
        with self._mapped():
            return self._version()

    # -- writing -----------------------------------------------------------------------------
    def record(
        self,
        report: EvalReport,
        fingerprint: Fingerprint,
        bands: Mapping[str, tuple[float, float]],
    ) -> int:
        """Store one run (its report, per-query rows and metrics) in one transaction; its id."""
        head = report.model_dump(mode="json", exclude={"per_query"})
        queries = [
            (qid, row.model_dump_json(exclude={"metrics"})) for qid, row in report.per_query.items()
        ]
        metrics = [
            (qid, name, float(value))
            for qid, row in report.per_query.items()
            for name, value in row.metrics.items()
        ]
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO runs (created_at, dataset, benchmark, benchmark_sha256, collection, "
                "embedder, n_queries, passed, seconds, fingerprint, report) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    report.created_at,
                    report.dataset,
                    fingerprint.benchmark.name,
                    fingerprint.benchmark.sha256,
                    report.collection,
                    report.embedder,
                    report.n_queries,
                    int(report.passed),
                    report.seconds,
                    fingerprint.model_dump_json(),
                    json.dumps(head, ensure_ascii=False),
                ),
            )
            run_id = int(cur.lastrowid or 0)
            db.executemany(
                "INSERT INTO run_metrics VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, name, float(value), *bands.get(name, (value, value)))
                    for name, value in report.metrics.items()
                ],
            )
            db.executemany(
                "INSERT INTO run_estimates VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (run_id, name, e.estimate, e.low, e.high, e.n_labeled, e.n_predicted,
                     e.method, e.model_dump_json())
                    for name, e in (report.metrics_ci or {}).items()
                ],
            )  # fmt: skip
            db.executemany(
                "INSERT INTO queries VALUES (?, ?, ?)", [(run_id, q, r) for q, r in queries]
            )
            db.executemany(
                "INSERT INTO query_metrics VALUES (?, ?, ?, ?)",
                [(run_id, q, m, v) for q, m, v in metrics],
            )
        return run_id

    def file_sha256(self, path: Path) -> str:
        """SHA-256 of ``path``, remembered by size and modification time (a model's weights
        are hashed once, not on every run)."""
        from ragsonde.embedders.provenance import sha256_file

        st = path.stat()
        key = str(path.resolve())
        with self._mapped():
            row = self._db.execute(
                "SELECT sha256 FROM file_hashes WHERE path = ? AND size = ? AND mtime_ns = ?",
                (key, st.st_size, st.st_mtime_ns),
            ).fetchone()
        if row:
            return str(row[0])
        digest = sha256_file(path)
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO file_hashes VALUES (?, ?, ?, ?)",
                (key, st.st_size, st.st_mtime_ns, digest),
            )
        return digest

    def prune(self, keep: int) -> int:
        """Keep the ``keep`` newest runs; how many were deleted."""
        if keep < 0:
            raise QueryValidationError("--keep must be 0 or more.", field="keep")
        with self._write() as db:
            cur = db.execute(
                "DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY id DESC LIMIT ?)",
                (keep,),
            )
            return int(cur.rowcount)

    # -- reading -----------------------------------------------------------------------------
    def _summaries(self, where: str, args: Sequence[Any], tail: str = "") -> list[RunSummary]:
        with self._recorded("a run's summary"):
            return self._read_summaries(where, args, tail)

    def _read_summaries(self, where: str, args: Sequence[Any], tail: str) -> list[RunSummary]:
        with self._mapped():
            rows = self._db.execute(
                # fixed fragments only (the filters' values are bound parameters)
                f"SELECT {_SUMMARY_COLUMNS} FROM runs {where} ORDER BY id {tail}",  # noqa: S608
                args,
            ).fetchall()
            if not rows:
                return []
            ids = [r[0] for r in rows]
            metrics: dict[int, dict[str, float]] = {i: {} for i in ids}
            marks = ",".join("?" * len(ids)) if len(ids) <= 900 else None
            sql = "SELECT run_id, metric, value FROM run_metrics"
            sql += f" WHERE run_id IN ({marks})" if marks else ""
            for run_id, metric, value in self._db.execute(sql, ids if marks else ()):
                if run_id in metrics:
                    metrics[run_id][metric] = value
            estimated: dict[int, dict[str, MetricEstimate]] = {}
            sql = "SELECT run_id, metric, entry FROM run_estimates"
            sql += f" WHERE run_id IN ({marks})" if marks else ""
            for run_id, metric, entry in self._db.execute(sql, ids if marks else ()):
                if run_id in metrics:
                    estimated.setdefault(run_id, {})[metric] = _estimate(entry)
        return [
            RunSummary(
                run_id=r[0],
                created_at=r[1],
                dataset=r[2],
                benchmark=r[3],
                benchmark_sha256=r[4],
                collection=r[5],
                embedder=r[6],
                n_queries=r[7],
                passed=bool(r[8]),
                seconds=r[9],
                gates=r[10],
                metrics=metrics[r[0]],
                metrics_ci=estimated.get(r[0]),
            )
            for r in rows
        ]

    def runs(
        self,
        *,
        benchmark: str | None = None,
        collection: str | None = None,
        limit: int | None = None,
    ) -> list[RunSummary]:
        """Recorded runs, oldest first; ``benchmark`` matches its name or hash (prefix)."""
        where, args = self._filters(benchmark, collection)
        if limit is None:
            return self._summaries(where, args)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:  # -1: every run
            raise QueryValidationError(f"limit: a whole number >= 1, not {limit!r}.", field="limit")
        newest = self._summaries(where, args, f"DESC LIMIT {int(limit)}")
        return newest[::-1]

    @staticmethod
    def _filters(benchmark: str | None, collection: str | None) -> tuple[str, list[Any]]:
        parts: list[str] = []
        args: list[Any] = []
        # "" matched every run, and a lone surrogate was reported as a damaged history file
        if collection is not None:
            check_collection(collection)
        if benchmark is not None:
            try:
                if not (isinstance(benchmark, str) and benchmark.strip()):
                    raise ValueError("give its name or hash")
                check_text(benchmark)
            except ValueError as e:
                raise QueryValidationError(f"benchmark: {e}.", field="benchmark") from e
        if benchmark:
            # a literal prefix, not a LIKE pattern: `--benchmark %` matches no hash
            parts.append("(benchmark = ? OR substr(benchmark_sha256, 1, length(?)) = ?)")
            args += [benchmark, benchmark, benchmark]
        if collection:
            parts.append("collection = ?")
            args.append(collection)
        return ("WHERE " + " AND ".join(parts) if parts else ""), args

    def summary(self, run_id: int) -> RunSummary:
        found = self._summaries("WHERE id = ?", [run_id])
        if not found:
            raise QueryValidationError(
                f"no run {run_id} in history {self.path}; `ragsonde history list` shows them.",
                field="run",
            )
        return found[0]

    def fingerprint(self, run_id: int) -> Fingerprint:
        self.summary(run_id)
        with self._mapped():
            (raw,) = self._db.execute(
                "SELECT fingerprint FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        with self._recorded(f"run {run_id}'s fingerprint"):
            return Fingerprint.model_validate_json(raw)

    def get(self, run_id: int) -> RecordedRun:
        """A run whole: summary, fingerprint and the report rebuilt with its per-query rows."""
        summary, fingerprint = self.summary(run_id), self.fingerprint(run_id)
        from ragsonde.evaluate.report import EvalReport, QueryRow

        with self._recorded(f"run {run_id}'s report"):
            with self._mapped():
                (head,) = self._db.execute(
                    "SELECT report FROM runs WHERE id = ?", (run_id,)
                ).fetchone()
                rows = {
                    qid: json.loads(row)
                    for qid, row in self._db.execute(
                        "SELECT query_id, row FROM queries WHERE run_id = ?", (run_id,)
                    )
                }
                for qid, metric, value in self._db.execute(
                    "SELECT query_id, metric, value FROM query_metrics WHERE run_id = ?", (run_id,)
                ):
                    rows[qid].setdefault("metrics", {})[metric] = value
            data = json.loads(head)
            data["per_query"] = {qid: QueryRow.model_validate(r) for qid, r in rows.items()}
            return RecordedRun(summary, fingerprint, EvalReport.model_validate(data))

    def bands(self, run_id: int) -> dict[str, tuple[float, float]]:
        """Metric -> the bootstrap interval recorded with the run."""
        with self._mapped():
            return {
                m: (lo, hi)
                for m, lo, hi in self._db.execute(
                    "SELECT metric, ci_low, ci_high FROM run_metrics WHERE run_id = ?", (run_id,)
                )
            }

    def ids(self, *, benchmark_sha256: str | None = None) -> list[int]:
        sql, args = "SELECT id FROM runs", []
        if benchmark_sha256:
            sql, args = sql + " WHERE benchmark_sha256 = ?", [benchmark_sha256]
        with self._mapped():
            return [r[0] for r in self._db.execute(sql + " ORDER BY id", args)]

    def best(self, metric: str, *, benchmark_sha256: str | None = None) -> int | None:
        """The run with the highest ``metric`` (the earliest among equals)."""
        sql = (
            "SELECT r.id FROM runs r JOIN run_metrics m ON m.run_id = r.id WHERE m.metric = ? "
            "AND (? IS NULL OR r.benchmark_sha256 = ?) ORDER BY m.value DESC, r.id LIMIT 1"
        )
        args = [metric, benchmark_sha256, benchmark_sha256]
        with self._mapped():
            row = self._db.execute(sql, args).fetchone()
        return int(row[0]) if row else None

    def trend_rows(
        self, metric: str, *, benchmark: str | None = None, collection: str | None = None
    ) -> list[tuple[int, str, float, float, float, str, MetricEstimate | None]]:
        """(id, created_at, value, ci_low, ci_high, fingerprint JSON, the estimate or None) of
        the runs with ``metric``, oldest first."""
        where, args = self._filters(benchmark, collection)
        where = where.replace("benchmark", "r.benchmark").replace("collection", "r.collection")
        clause = ("AND " + where[6:]) if where else ""
        with self._recorded(f"a run's {metric}"), self._mapped():
            return [
                (int(a), str(b), float(c), float(d), float(e), str(f), _estimate(g) if g else None)
                for a, b, c, d, e, f, g in self._db.execute(
                    "SELECT r.id, r.created_at, m.value, m.ci_low, m.ci_high, r.fingerprint, "  # noqa: S608
                    "e.entry FROM run_metrics m JOIN runs r ON r.id = m.run_id "
                    "LEFT JOIN run_estimates e ON e.run_id = m.run_id AND e.metric = m.metric "
                    f"WHERE m.metric = ? {clause} ORDER BY r.id",
                    [metric, *args],
                )
            ]

    def export(self, out: IO[str], run_ids: Sequence[int] | None = None) -> int:
        """Write runs as JSONL (one run a line: id, fingerprint, whole report); how many."""
        n = 0
        for run_id in run_ids if run_ids is not None else self.ids():
            run = self.get(run_id)
            line = {
                "run_id": run_id,
                "created_at": run.summary.created_at,
                "fingerprint": run.fingerprint.model_dump(mode="json"),
                "report": run.report.model_dump(mode="json"),
            }
            out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
        return n

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
