"""``/v1/eval``: evaluations as background jobs, their progress, JSON and HTML reports.

A job evaluates a benchmark uploaded in the body (``"benchmark": [{"query", "relevant", …}, …]``,
ragsonde's own format) or one of the server's own datasets (``"dataset": "name"``) against a
collection, with the server's own store and model. Jobs run one at a time in a worker thread, so
queries keep being served meanwhile; their trec_eval runs in a worker process (:mod:`.workers`),
so a crash ends the job, not the server. Finished reports stay in memory, and their files under
``RAGSONDE_HOME/eval-reports`` outlive the server: ``GET /v1/eval`` lists them too (``saved:
true``, see :mod:`.saved_reports`), and ``GET /v1/eval/{id}`` and its ``report.html`` read them
back. A saved file that is not a readable report is listed with status ``unreadable``.

Bounds, so the route cannot be used to probe or flood the server:

- ``dataset`` is read only from the folders in ``settings.eval_datasets`` (default
  ``RAGSONDE_HOME/datasets`` and ``RAGSONDE_HOME/benchmarks``, where the Judge view saves),
  after resolving symlinks. Any other path, existing or not, gets the same 422 with the same
  message, so the answer says nothing about the server's files.
- At most ``settings.eval_max_jobs`` jobs are queued or running; one more gets 429 with
  ``Retry-After`` (code VALIDATION_ERROR, ``field: jobs``: the contract has no busy code).
- ``DELETE /v1/eval/{job_id}`` cancels a job: a queued one never runs; a running one stops
  before its next query (its progress callback raises); a finished or saved one is forgotten,
  its files deleted.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, JSONResponse

from ragsonde.errors import QueryValidationError, RagsondeError
from ragsonde.evaluate.metrics import native_scores, use_native_runner
from ragsonde.evaluate.options import EvalOptions, options_error
from ragsonde.evaluate.report import EvalReport
from ragsonde.models import ErrorInfo
from ragsonde.server.bounds import within_max_top_k
from ragsonde.server.datasets import check_upload, confined_options, resolve_dataset, shown_as
from ragsonde.server.errors import ERROR_RESPONSES, ApiError, html_error_responses
from ragsonde.server.routes_query import read_json
from ragsonde.server.saved_reports import SavedReport, SavedReports
from ragsonde.server.state import ServerState, get_state
from ragsonde.server.workers import WorkerPool

__all__ = ["EvalJob", "EvalJobStatus", "EvalJobSummary", "EvalRequest", "router"]

router = APIRouter(prefix="/v1/eval", tags=["evaluation"])
State = Annotated[ServerState, Depends(get_state)]
_MAX_JOBS = 100
_log = logging.getLogger(__name__)
_SUMMARY_METRICS = ("ndcg@10", "recall@10", "judged@10")
JobStatus = Literal["queued", "running", "done", "error", "cancelled", "unreadable"]
_ACTIVE = frozenset({"queued", "running"})
_RETRY_AFTER_S = 5


class EvalRequest(BaseModel):
    """What to evaluate (a dataset path on the server or an uploaded benchmark, against a
    collection) and how: the :class:`~ragsonde.evaluate.EvalOptions`, which the body gives at
    its top level beside these fields (``{"dataset": "…", "k": [10], "mode": "hybrid"}``);
    :meth:`parse` splits the two."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: str | None = Field(
        default=None,
        description="A benchmark file or folder inside one of the server's dataset folders.",
    )
    benchmark: list[dict[str, Any]] | None = Field(
        default=None, min_length=1, max_length=10_000, description="ragsonde benchmark rows."
    )
    collection: str | None = Field(default=None, min_length=1, max_length=255)
    explain: bool = Field(
        default=False,
        description="Also explain every missed relevant document: the pipeline stage that lost "
        "it, with its evidence (the report's `misses` section; `ragsonde eval --explain`).",
    )
    explain_k: int = Field(
        default=10, ge=1, le=1000, description="explain: a miss is outside this top k."
    )
    options: EvalOptions = Field(default_factory=EvalOptions, exclude=True)

    @classmethod
    def parse(cls, body: Any) -> EvalRequest:
        """The request from its JSON body: this model's own fields, and every other key an
        option (an unknown key fails there, named). Raises QueryValidationError."""
        try:
            if not isinstance(body, dict):
                return cls.model_validate(body, strict=True)
            own = {k: v for k, v in body.items() if k in cls.model_fields and k != "options"}
            options = EvalOptions.from_json({k: v for k, v in body.items() if k not in own})
            return cls.model_validate({**own, "options": options}, strict=True)
        except ValidationError as e:
            raise options_error(e) from e

    @classmethod
    def body_schema(cls) -> dict[str, Any]:
        """The JSON Schema of the body: the options' properties beside this model's own."""
        schema = EvalOptions.model_json_schema(mode="validation")
        own = cls.model_json_schema(mode="validation")
        schema["properties"] = {
            **schema.get("properties", {}),
            **{k: v for k, v in own.get("properties", {}).items() if k != "options"},
        }
        defs = {**schema.get("$defs", {}), **own.get("$defs", {})}
        defs.pop("EvalOptions", None)
        if defs:
            schema["$defs"] = defs
        schema.update(title=cls.__name__, description=cls.__doc__ or "")
        return schema


class JobProgress(BaseModel):
    done: int
    total: int


class EvalJobSummary(BaseModel):
    """A job in the list: its state, and once done its headline metrics and verdict."""

    job_id: str
    status: JobStatus
    created_at: str
    progress: JobProgress
    dataset: str
    collection: str | None
    error: ErrorInfo | None = Field(
        default=None,
        description="Why the job failed: a contract error with its message (set whenever the "
        "status is 'error'; an internal failure says so and the server log has the traceback).",
    )
    metrics: dict[str, float] | None = Field(
        default=None, description="ndcg@10, recall@10 and judged@10, once done."
    )
    passed: bool | None = Field(default=None, description="Every gate passed, once done.")
    saved: bool = Field(
        default=False,
        description="Read from the server's eval-reports folder (a report from before a "
        "restart, or saved there by `ragsonde eval --save`), not a job held in memory.",
    )
    links: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def from_saved(cls, saved: SavedReport) -> EvalJobSummary:
        out = cls(
            job_id=saved.report_id,
            status="unreadable" if saved.error is not None else "done",
            created_at=saved.created_at,
            progress=JobProgress(done=saved.n_queries, total=saved.n_queries),
            dataset=saved.dataset,
            collection=saved.collection,
            error=saved.error,
            metrics=saved.metrics,
            passed=saved.passed,
            saved=True,
            links={"status": f"/v1/eval/{saved.report_id}"},
        )
        if saved.error is None:
            out.links["html"] = f"/v1/eval/{saved.report_id}/report.html"
        return out


class EvalJobStatus(EvalJobSummary):
    """A job with its whole report once done."""

    report: EvalReport | None = None


class _Cancelled(Exception):
    """Raised from a cancelled job's progress callback, to stop its evaluation."""


@dataclass
class EvalJob:
    job_id: str
    request: EvalRequest
    #: The dataset the request names, resolved inside a dataset folder (None: uploaded rows).
    path: Path | None = None
    status: JobStatus = "queued"
    done: int = 0
    total: int = 0
    report: EvalReport | None = None
    error: ErrorInfo | None = None
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    cancel: threading.Event = field(default_factory=threading.Event)
    future: Future[None] | None = None

    def start(self, total: int | None, /) -> None:
        self.total = total or 0

    def advance(self, n: int, /, *counts: int) -> None:
        if self.cancel.is_set():  # between two queries: the evaluation stops here
            raise _Cancelled
        self.done += n

    def summary(self) -> EvalJobSummary:
        out = EvalJobSummary(
            job_id=self.job_id,
            status=self.status,
            created_at=self.created_at,
            progress=JobProgress(done=self.done, total=self.total),
            dataset=self.request.dataset or "uploaded benchmark",
            collection=self.request.collection,
            error=self.error,
            links={"status": f"/v1/eval/{self.job_id}"},
        )
        if self.report is not None:
            out.metrics = {k: v for k, v in self.report.metrics.items() if k in _SUMMARY_METRICS}
            out.passed = self.report.passed
            out.links["html"] = f"/v1/eval/{self.job_id}/report.html"
        return out

    def status_with_report(self) -> EvalJobStatus:
        return EvalJobStatus(**dict(self.summary()), report=self.report)


class _Jobs:
    """The server's evaluation jobs, the thread that runs them, the process for their trec_eval."""

    def __init__(self) -> None:
        self.jobs: dict[str, EvalJob] = {}
        self.lock = threading.Lock()
        self.workers = WorkerPool()
        run_native = functools.partial(self.workers.run, native_scores)  # a crash ends the job
        self.pool = ThreadPoolExecutor(1, "ragsonde-eval", use_native_runner, (run_native,))
        self.saved: SavedReports | None = None

    def close(self) -> None:
        """Cancel every job (a running one stops at its next query), end the worker process."""
        with self.lock:
            for job in self.jobs.values():
                job.cancel.set()
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.workers.close()


def _jobs(request: Request) -> _Jobs:
    jobs = getattr(request.app.state, "ragsonde_eval_jobs", None)
    if not isinstance(jobs, _Jobs):
        jobs = _Jobs()
        request.app.state.ragsonde_eval_jobs = jobs
    return jobs


def _saved(request: Request, state: ServerState) -> SavedReports:
    """The reports saved under the server's home (made once per app)."""
    jobs = _jobs(request)
    if jobs.saved is None:
        jobs.saved = SavedReports(_reports_dir(state), _SUMMARY_METRICS)
    return jobs.saved


def _run(job: EvalJob, state: ServerState) -> None:
    from ragsonde.evaluate import evaluate

    req = job.request
    if job.cancel.is_set():
        return
    job.status = "running"
    try:
        path = job.path if job.path is not None else _write_upload(job, state)
        # errors name the benchmark as the request did: never its path in the server's folders
        shown = shown_as(req.dataset)
        step = None
        if req.options.estimate:  # a plan file: confined to the dataset folders at the door
            from ragsonde.estimate import estimating

            step = estimating(req.options, workspace=state.workspace, shown_as=shown)
        # misses explained and metrics estimated before the report is timed and recorded
        how: dict[str, Any] = {
            "collection": req.collection,
            "progress": job,
            "extend": step,
            "shown_as": shown,
        }
        if req.explain:
            from ragsonde.explain import evaluate_explained

            job.report = evaluate_explained(
                path, req.options, state.workspace, k=req.explain_k, **how
            )
        else:
            job.report = evaluate(path, req.options, state.workspace, **how)
        # the dataset as the request named it: the resolved path told clients the server's folders
        job.report.dataset = req.dataset or "uploaded benchmark"
        _save(job, state)
        job.status = "done"
    except _Cancelled:
        job.status = "cancelled"
    except RagsondeError as e:
        job.error = ErrorInfo.from_exception(e)
        job.status = "error"
    except OSError as e:  # the reports folder: the disk is full or not writable
        job.error = ErrorInfo.from_exception(
            QueryValidationError(f"cannot write the report: {e}", field="report")
        )
        job.status = "error"
    except Exception as e:
        _log.exception("evaluation job %s failed", job.job_id)  # a bug: never error: null
        what = f"The evaluation failed inside ragsonde ({type(e).__name__}): a bug, see the log."
        job.error = ErrorInfo.from_exception(QueryValidationError(what))
        job.status = "error"


def _reports_dir(state: ServerState) -> Path:
    path = Path(state.settings.home) / "eval-reports"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write_upload(job: EvalJob, state: ServerState) -> Path:
    from ragsonde.outputs import write_text

    path = _reports_dir(state) / f"{job.job_id}.benchmark.jsonl"
    rows = job.request.benchmark or []
    write_text(path, "\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _save(job: EvalJob, state: ServerState) -> None:
    from ragsonde.evaluate.html import write_html_report
    from ragsonde.outputs import write_text

    if job.report is None:
        return
    folder = _reports_dir(state)
    write_text(folder / f"{job.job_id}.json", job.report.model_dump_json())  # whole or not at all
    write_html_report(job.report, folder / f"{job.job_id}.html")


def _request_body() -> dict[str, Any]:
    """The body ``start_eval`` reads raw, documented as the model it validates against."""
    schema = EvalRequest.body_schema()
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


@router.post(
    "",
    status_code=202,
    response_model=EvalJobSummary,
    responses=ERROR_RESPONSES,
    openapi_extra=_request_body(),
)
async def start_eval(request: Request, state: State) -> JSONResponse:
    """Start an evaluation job; poll ``GET /v1/eval/{job_id}``."""
    body = await read_json(request, rows="benchmark")  # every text, each row by its line
    try:
        req = EvalRequest.parse(body)
    except QueryValidationError as e:  # names the field and the rule
        raise ApiError(e) from e
    if (req.dataset is None) == (req.benchmark is None):
        raise ApiError(
            QueryValidationError(
                'Give exactly one of "dataset" (a path on the server) or "benchmark" (rows).',
                field="dataset",
            )
        )
    path = resolve_dataset(state, req.dataset) if req.dataset is not None else None
    if req.benchmark is not None:
        await run_in_threadpool(check_upload, req.benchmark, req.options)
    req = req.model_copy(update={"options": confined_options(state, req.options)})
    within_max_top_k(state, req.options.search, req.options.k)
    jobs = _jobs(request)
    job = EvalJob(job_id=uuid.uuid4().hex, request=req, path=path)
    with jobs.lock:
        active = sum(1 for j in jobs.jobs.values() if j.status in _ACTIVE)
        if active >= state.settings.eval_max_jobs:
            raise ApiError(
                QueryValidationError(
                    f"{active} evaluation jobs are already queued or running (the most is "
                    f"{state.settings.eval_max_jobs}): retry later, or cancel one with "
                    "DELETE /v1/eval/{job_id}.",
                    field="jobs",
                ),
                status=429,
                headers={"Retry-After": str(_RETRY_AFTER_S)},
            )
        if len(jobs.jobs) >= _MAX_JOBS:  # forget the oldest finished job
            oldest = next((k for k, j in jobs.jobs.items() if j.status not in _ACTIVE), None)
            if oldest is not None:
                del jobs.jobs[oldest]
        jobs.jobs[job.job_id] = job
        job.future = jobs.pool.submit(_run, job, state)
    return JSONResponse(job.summary().model_dump(mode="json"), 202)


def _created(summary: EvalJobSummary) -> datetime:
    try:
        when = datetime.fromisoformat(summary.created_at)
    except ValueError:  # a saved report's own field: sorted last rather than refused
        return datetime.min.replace(tzinfo=UTC)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


# Plain ``def`` routes from here on: FastAPI runs them in a worker thread, so reading the saved
# files never blocks the event loop that answers queries.
@router.get("", responses=ERROR_RESPONSES)
def list_evals(request: Request, state: State) -> list[EvalJobSummary]:
    """Every job, and every report saved under the server's home, newest first (the web page's
    reports view)."""
    jobs = _jobs(request)
    with jobs.lock:
        listed = [j.summary() for j in jobs.jobs.values()]
    held = {j.job_id for j in listed}
    saved = _saved(request, state).list()
    listed += [EvalJobSummary.from_saved(s) for s in saved if s.report_id not in held]
    return sorted(listed, key=_created, reverse=True)


def _not_found(job_id: str) -> ApiError:
    return ApiError(
        QueryValidationError(f"No evaluation job '{job_id}'.", field="job_id"), status=404
    )


@router.get("/{job_id}", responses=ERROR_RESPONSES)
def get_eval(request: Request, state: State, job_id: str) -> EvalJobStatus:
    """Progress, and the whole report once done (its schema: ``ragsonde schema report``); a
    saved report is read back from the server's eval-reports folder."""
    job = _jobs(request).jobs.get(job_id)
    if job is not None:
        return job.status_with_report()
    saved = _saved(request, state)
    summary = saved.summary(job_id)
    if summary is None:
        raise _not_found(job_id)
    report = None if summary.error is not None else saved.load(job_id)
    return EvalJobStatus(**dict(EvalJobSummary.from_saved(summary)), report=report)


@router.delete("/{job_id}", responses=ERROR_RESPONSES)
def cancel_eval(request: Request, state: State, job_id: str) -> EvalJobSummary:
    """Cancel a job: a queued one is removed and never runs; a running one stops before its next
    query (status ``cancelled``); a finished one, or a saved report, is forgotten and its files
    deleted. Answers the job as it now is."""
    jobs, saved = _jobs(request), _saved(request, state)
    with jobs.lock:
        job = jobs.jobs.get(job_id)
        if job is not None:
            job.cancel.set()
            if job.status == "queued" and job.future is not None and job.future.cancel():
                job.status = "cancelled"
            if job.status != "running":
                del jobs.jobs[job_id]
                saved.forget(job_id)
            return job.summary()
    summary = saved.summary(job_id)
    if summary is None or not saved.forget(job_id):
        raise _not_found(job_id)
    return EvalJobSummary.from_saved(summary)


@router.get("/{job_id}/report.html", response_class=HTMLResponse, responses=html_error_responses())
def get_eval_html(request: Request, state: State, job_id: str) -> HTMLResponse:
    """The job's self-contained HTML report (a saved report's, read back)."""
    from ragsonde.evaluate.html import render_html_report

    job = _jobs(request).jobs.get(job_id)
    if job is not None:
        report = job.report
        status: str = job.status
    else:
        try:
            report = _saved(request, state).load(job_id)
        except RagsondeError as e:  # an unreadable file: 409, with the reason
            raise ApiError(e, status=409) from e
        if report is None:
            raise _not_found(job_id)
        status = "done"
    if report is None:
        raise ApiError(
            QueryValidationError(f"Evaluation '{job_id}' is {status}.", field="job_id"),
            status=409,
        )
    return HTMLResponse(render_html_report(report))
