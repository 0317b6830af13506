"""The evaluations a server ran, kept for the resources ``ragsonde://reports/{id}`` and
``ragsonde://runs/{id}``; a numeric id reads a recorded run's report from the history instead."""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.evaluate.report import EvalReport

__all__ = ["REPORT_URI", "RUN_URI", "Reports"]

REPORT_URI = "ragsonde://reports/{report_id}"
RUN_URI = "ragsonde://runs/{report_id}"
#: Reports kept in memory (the oldest are dropped first; recorded runs stay in the history).
KEPT = 32


class Reports:
    """The last :data:`KEPT` reports of this server, by id; and the history's, by run id."""

    def __init__(self, history: Path) -> None:
        self.history = history
        self._kept: OrderedDict[str, EvalReport] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, report: EvalReport) -> str:
        report_id = uuid.uuid4().hex[:12]
        with self._lock:
            self._kept[report_id] = report
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return report_id

    def get(self, ref: str) -> EvalReport:
        """A report by id, or a recorded run's (``ref``: a run id, ``last``, ``last~N``,
        ``best``); a VALIDATION_ERROR naming what exists otherwise."""
        with self._lock:
            found = self._kept.get(ref)
        if found is not None:
            return found
        from ragsonde.history import HistoryStore, resolve_run

        if not self.history.exists():  # absent: no runs; a damaged path: its error
            raise QueryValidationError(
                f"run: no report '{ref}' on this server, and no run history at {self.history}.",
                field="run",
            )
        with HistoryStore(self.history) as hs:
            return hs.get(resolve_run(hs, ref)).report

    def run_file(self, ref: str) -> str:
        """The TREC run (``qid Q0 docid rank score tag``) of a report this server ran."""
        with self._lock:
            report = self._kept.get(ref)
        if report is None:
            raise QueryValidationError(
                f"run: no evaluation '{ref}' on this server (run files are kept for the "
                f"last {KEPT} evaluations it ran).",
                field="run",
            )
        import tempfile

        # the report's own writer, so the format is the one `ragsonde eval --run-out` writes
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "run.trec"
            report.write_run(path)
            return path.read_text(encoding="utf-8")
