"""The evaluation reports saved under ``RAGSONDE_HOME/eval-reports``, so they outlive the server.

Every finished ``/v1/eval`` job writes ``<job_id>.json`` (the :class:`EvalReport`) and
``<job_id>.html`` there; ``ragsonde eval --save`` may write reports there too. After a restart
the jobs held in memory are gone, but these files are not: :class:`SavedReports` lists them (the
newest :data:`MAX_LISTED` by modification time) and reads one back.

Each file is read through :func:`~ragsonde.evaluate.saved.load_report`, the one reader of saved
reports. A file it refuses (not JSON, another major version, a ``--versus`` pair, a JSON that is
not a report) is listed as unreadable with that reason, never a server error. A listing reads a
file once per (modification time, size): the summary is kept, the report itself is not (a
report holds every query, and a server may keep hundreds).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.report import EvalReport
from ragsonde.evaluate.saved import load_report
from ragsonde.models import ErrorInfo

__all__ = ["MAX_LISTED", "UPLOAD_SUFFIX", "SavedReport", "SavedReports"]

#: At most this many saved reports are listed (the newest); older files stay readable by id.
MAX_LISTED = 200
#: An uploaded benchmark is written next to its report as ``<job_id>.benchmark.jsonl``.
UPLOAD_SUFFIX = ".benchmark.jsonl"


@dataclass(frozen=True)
class SavedReport:
    """One saved report as the reports list shows it; ``error`` set: the file is unreadable."""

    report_id: str
    created_at: str
    dataset: str
    collection: str | None
    n_queries: int = 0
    metrics: dict[str, float] | None = None
    passed: bool | None = None
    judged_only: bool = False
    error: ErrorInfo | None = None


def _dataset_name(report: EvalReport, folder: Path) -> str:
    """What the list shows for the dataset: a file name, never the server's own paths."""
    path = Path(report.dataset)
    if path.name.endswith(UPLOAD_SUFFIX) and path.parent == folder:
        return "uploaded benchmark"
    return path.name or report.benchmark.name


def _read(path: Path) -> EvalReport:
    """:func:`load_report`, its refusal naming the file but never the server's folders."""
    try:
        return load_report(path)
    except QueryValidationError as e:
        message = e.message.replace(str(path), path.name)
        raise QueryValidationError(message, field="report") from e


def _summarise(path: Path, metric_names: tuple[str, ...]) -> SavedReport:
    try:
        report = _read(path)
    except QueryValidationError as e:  # load_report's one refusal: the reason, listed
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()
        return SavedReport(
            report_id=path.stem,
            created_at=mtime,
            dataset=path.name,
            collection=None,
            error=ErrorInfo.from_exception(e),
        )
    return SavedReport(
        report_id=path.stem,
        created_at=report.created_at,
        dataset=_dataset_name(report, path.parent),
        collection=report.collection,
        n_queries=report.n_queries,
        metrics={k: v for k, v in report.metrics.items() if k in metric_names},
        passed=report.passed,
        judged_only=report.judged_only,
    )


class SavedReports:
    """The saved reports of one folder, each summarised once per version of its file."""

    def __init__(self, folder: Path, metric_names: tuple[str, ...]) -> None:
        self.folder = folder
        self.metric_names = metric_names
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[tuple[int, int], SavedReport]] = {}

    def _files(self) -> list[tuple[Path, tuple[int, int]]]:
        """``*.json`` files with their (mtime, size), newest first; vanished files skipped."""
        found = []
        for path in self.folder.glob("*.json"):
            try:
                st = path.stat()
            except OSError:  # deleted between the listing and the stat
                continue
            if path.is_file():
                found.append((path, (st.st_mtime_ns, st.st_size)))
        found.sort(key=lambda pv: pv[1][0], reverse=True)
        return found

    def list(self) -> list[SavedReport]:
        """The newest :data:`MAX_LISTED` saved reports, newest file first."""
        out = []
        with self._lock:
            files = self._files()[:MAX_LISTED]
            for path, version in files:
                cached = self._cache.get(path)
                if cached is None or cached[0] != version:
                    try:
                        cached = (version, _summarise(path, self.metric_names))
                    except OSError:  # deleted while being read
                        continue
                    self._cache[path] = cached
                out.append(cached[1])
            listed = {path for path, _ in files}
            for stale in [p for p in self._cache if p not in listed]:
                del self._cache[stale]
        return out

    def path(self, report_id: str) -> Path | None:
        """The saved report named ``report_id``, looked up among the folder's files (so an id
        can never name a path of its own), or None."""
        for path in self.folder.glob("*.json"):
            if path.stem == report_id and path.is_file():
                return path
        return None

    def summary(self, report_id: str) -> SavedReport | None:
        """One saved report's summary, read now (None: there is no such file)."""
        path = self.path(report_id)
        if path is None:
            return None
        try:
            return _summarise(path, self.metric_names)
        except OSError:
            return None

    def load(self, report_id: str) -> EvalReport | None:
        """The whole report (None: there is no such file); an unreadable one raises the
        VALIDATION_ERROR that says why."""
        path = self.path(report_id)
        return None if path is None else _read(path)

    def forget(self, report_id: str) -> bool:
        """Delete a saved report's files (its JSON, HTML and uploaded benchmark)."""
        path = self.path(report_id)
        if path is None:
            return False
        for name in (path.name, f"{report_id}.html", f"{report_id}{UPLOAD_SUFFIX}"):
            (self.folder / name).unlink(missing_ok=True)
        with self._lock:
            self._cache.pop(path, None)
        return True
