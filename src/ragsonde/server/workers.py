"""A worker process for the native code of the server's eval jobs, so a crash ends the job only.

trec_eval (C, under pytrec_eval) runs inside the Python process that calls it: a segfault there
used to take ``ragsonde serve`` down with every query in flight and every queued job. The
server's eval jobs now hand their native metric passes
(:func:`ragsonde.evaluate.metrics.native_scores`) to :class:`WorkerPool`: a
``ProcessPoolExecutor`` of one process, started with ``spawn`` (a fresh interpreter: forking a
server that runs threads copies their locks mid-use). When the worker dies, the job that was
in it gets a VALIDATION_ERROR saying so, the broken pool is dropped, and the next call starts a
new worker; queued jobs wait in the server's job thread, not in the pool, so they are not lost.

Why only the metrics: retrieval stays in the server process, through its one long-lived store.
The embedded Qdrant Edge shard is locked by the process that opens it (``ragsonde.store.lock``),
so a worker could only search a collection the server let go of first, and queries would wait
on the job meanwhile. The native code a job reaches that takes user text is trec_eval (the
engine receives vectors and the filters the Query model already checked).
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from ragsonde.errors import QueryValidationError

__all__ = ["WORKERS", "WorkerPool"]

#: Worker processes per pool: jobs run one at a time, so one is enough, and it bounds memory.
WORKERS = 1
_T = TypeVar("_T")
_log = logging.getLogger("ragsonde.server")


class WorkerPool:
    """Run a function in a worker process; a crash there is a clear error, not the server's.

    The process starts on first use and is reused; :meth:`close` ends it.
    """

    def __init__(self, what: str = "the evaluation's metrics (trec_eval)") -> None:
        self.what = what
        self.crashes = 0
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=WORKERS, mp_context=multiprocessing.get_context("spawn")
                )
            return self._pool

    def run(self, fn: Callable[..., _T], /, *args: object) -> _T:
        """``fn(*args)`` in the worker; a VALIDATION_ERROR when the worker dies doing it."""
        pool = self._executor()
        try:
            return pool.submit(fn, *args).result()
        except BrokenProcessPool as e:
            with self._lock:
                if self._pool is pool:  # the next call starts a fresh worker
                    self._pool = None
                self.crashes += 1
            pool.shutdown(wait=False, cancel_futures=True)
            _log.error("the worker process died computing %s: %s", self.what, e)
            raise QueryValidationError(
                f"The worker process computing {self.what} died during this job (native code "
                "failing on its input, or the process killed, e.g. out of memory) and was "
                "replaced; the server and the other jobs are unaffected. Run the job again; if "
                "the same benchmark ends it again, check its ids and text, and report the rows "
                "to ragsonde's maintainers.",
                field="benchmark",
            ) from e

    def close(self) -> None:
        """End the worker process (if one was started)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
