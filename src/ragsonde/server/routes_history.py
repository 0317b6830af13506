"""``/v1/history``: the run history for the web page's History view (read only).

- ``GET /v1/history/runs``: the recorded runs (``?benchmark=&collection=``), a ``RunList``.
- ``GET /v1/history/trend?metric=ndcg@10``: a ``Trend`` (values, bootstrap bands, changes).
- ``GET /v1/history/diff?a=RUN&b=RUN``: a ``RunDiff`` (fingerprint changes, paired tests, flips;
  runs of a partly labelled benchmark: each metric's PPI++ difference, ``ppi``).

The file is the server's ``<home>/history.sqlite`` (or ``RAGSONDE_HISTORY``), the one its
``/v1/eval`` jobs record into. A damaged file answers the contract error (VALIDATION_ERROR)
naming it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.concurrency import run_in_threadpool

from ragsonde.errors import RagsondeError
from ragsonde.history import (
    HistoryStore,
    RunDiff,
    RunList,
    Trend,
    diff_runs,
    history_path,
    resolve_run,
    trend,
)
from ragsonde.server.errors import ERROR_RESPONSES, ApiError
from ragsonde.server.state import ServerState, get_state

__all__ = ["router"]

router = APIRouter(prefix="/v1/history", tags=["history"])
State = Annotated[ServerState, Depends(get_state)]
#: The diff's resamples: fewer than the CLI's 10,000, so a click answers at once.
_PAGE_RESAMPLES = 2000


def _open(state: ServerState) -> HistoryStore:
    return HistoryStore(history_path(state.settings.home))


#: A filter named but empty (``?collection=``) was no filter at all: every run, without a word.
Filter = Annotated[str | None, Query(min_length=1, max_length=500)]


@router.get("/runs", responses=ERROR_RESPONSES)
async def list_runs(state: State, benchmark: Filter = None, collection: Filter = None) -> RunList:
    def work() -> RunList:
        with _open(state) as hs:
            runs = hs.runs(benchmark=benchmark, collection=collection)
            return RunList(history=str(hs.path), runs=runs)

    try:
        return await run_in_threadpool(work)
    except RagsondeError as e:
        raise ApiError(e) from e


@router.get("/trend", responses=ERROR_RESPONSES)
async def get_trend(
    state: State,
    metric: Annotated[str, Query(min_length=1, max_length=100)] = "ndcg@10",
    benchmark: Filter = None,
    collection: Filter = None,
) -> Trend:
    def work() -> Trend:
        with _open(state) as hs:
            return trend(hs, metric, benchmark=benchmark, collection=collection)

    try:
        return await run_in_threadpool(work)
    except RagsondeError as e:
        raise ApiError(e) from e


@router.get("/diff", responses=ERROR_RESPONSES)
async def get_diff(
    state: State,
    a: Annotated[str, Query(max_length=40)],
    b: Annotated[str, Query(max_length=40)] = "last",
) -> RunDiff:
    def work() -> RunDiff:
        with _open(state) as hs:
            run_a, run_b = hs.get(resolve_run(hs, a)), hs.get(resolve_run(hs, b))
        from ragsonde.estimate import estimate_comparison

        return diff_runs(run_a, run_b, n_resamples=_PAGE_RESAMPLES, paired=estimate_comparison)

    try:
        return await run_in_threadpool(work)
    except RagsondeError as e:
        raise ApiError(e) from e
