"""``/v1/eval``: evaluations as background jobs, their progress, JSON and HTML reports.

A job evaluates a benchmark already on the server's disk (``"dataset": "path"``) or uploaded in
the body (``"benchmark": [{"query", "relevant", …}, …]``, ragsonde's own format) against a
collection, with the server's own store and model. Jobs run one at a time in a worker thread, so
queries keep being served meanwhile; finished reports stay in memory (and their files under
``RAGSONDE_HOME/eval-reports``).
"""

from __future__ import annotations

import json
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.responses import HTMLResponse, JSONResponse

from ragsonde.errors import QueryValidationError, RagsondeError
from ragsonde.server.errors import ERROR_RESPONSES, ApiError
from ragsonde.server.routes_query import read_json
from ragsonde.server.state import ServerState, get_state

__all__ = ["EvalJob", "EvalRequest", "router"]

router = APIRouter(prefix="/v1/eval", tags=["evaluation"])
State = Annotated[ServerState, Depends(get_state)]
_MAX_JOBS = 100


class EvalRequest(BaseModel):
    """What to evaluate: a dataset path on the server, or an uploaded benchmark."""

    model_config = ConfigDict(extra="forbid")
    dataset: str | None = Field(default=None, description="A benchmark path on the server.")
    benchmark: list[dict[str, Any]] | None = Field(
        default=None, min_length=1, max_length=10_000, description="ragsonde benchmark rows."
    )
    collection: str | None = None
    k: list[int] = Field(default=[1, 3, 5, 10, 100], min_length=1, max_length=20)
    relevance_by: Literal["doc", "url", "chunk"] = "doc"
    gates: list[str] = Field(default_factory=list, max_length=50)
    exact: bool = False
    split: str = "test"


@dataclass
class EvalJob:
    job_id: str
    request: EvalRequest
    status: Literal["queued", "running", "done", "error"] = "queued"
    done: int = 0
    total: int = 0
    report: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())

    def start(self, total: int) -> None:
        self.total = total

    def advance(self, n: int) -> None:
        self.done += n

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "job_id": self.job_id,
            "status": self.status,
            "created_at": self.created_at,
            "progress": {"done": self.done, "total": self.total},
            "dataset": self.request.dataset or "uploaded benchmark",
            "collection": self.request.collection,
            "error": self.error,
        }
        if self.report is not None:
            out["metrics"] = {
                k: v for k, v in self.report["metrics"].items() if k in {"ndcg@10", "recall@10"}
            }
            out["passed"] = self.report["passed"]
            out["links"] = {"html": f"/v1/eval/{self.job_id}/report.html"}
        return out


class _Jobs:
    """The server's evaluation jobs and the one worker thread that runs them."""

    def __init__(self) -> None:
        self.jobs: dict[str, EvalJob] = {}
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragsonde-eval")


def _jobs(request: Request) -> _Jobs:
    jobs = getattr(request.app.state, "ragsonde_eval_jobs", None)
    if not isinstance(jobs, _Jobs):
        jobs = _Jobs()
        request.app.state.ragsonde_eval_jobs = jobs
    return jobs


def _run(job: EvalJob, state: ServerState) -> None:
    from ragsonde.evaluate import EvalOptions, evaluate, parse_gate

    req = job.request
    job.status = "running"
    try:
        path = Path(req.dataset) if req.dataset else _write_upload(job, state)
        options = EvalOptions(
            ks=req.k,
            relevance_by=req.relevance_by,
            gates=[parse_gate(g) for g in req.gates],
            exact=req.exact,
            split=req.split,
        )
        report = evaluate(
            path,
            collection=req.collection,
            options=options,
            settings=state.settings,
            store=state.workspace.store,
            embedder=state.workspace.embedder,
            progress=job,
        )
        job.report = report.to_json()
        _save(job, state)
        job.status = "done"
    except RagsondeError as e:
        job.error = {"code": e.code.value, "message": e.message}
        job.status = "error"
    except Exception as e:  # a job must never die silently: its status says what happened
        job.error = {"code": "INTERNAL_ERROR", "message": f"{type(e).__name__}: {e}"}
        job.status = "error"


def _reports_dir(state: ServerState) -> Path:
    path = Path(state.settings.home) / "eval-reports"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write_upload(job: EvalJob, state: ServerState) -> Path:
    path = _reports_dir(state) / f"{job.job_id}.benchmark.jsonl"
    rows = job.request.benchmark or []
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _save(job: EvalJob, state: ServerState) -> None:
    from ragsonde.evaluate.html import write_html_report

    assert job.report is not None
    folder = _reports_dir(state)
    (folder / f"{job.job_id}.json").write_text(json.dumps(job.report), encoding="utf-8")
    write_html_report(job.report, folder / f"{job.job_id}.html")


def _json_errors() -> dict[int | str, dict[str, Any]]:
    """ERROR_RESPONSES for a route whose success is HTML: FastAPI would file the error
    Response under the route's ``text/html``, but errors are always JSON."""
    ref = {"$ref": "#/components/schemas/Response"}
    return {
        status: {
            "description": spec["description"],
            "content": {"application/json": {"schema": ref}},
        }
        for status, spec in ERROR_RESPONSES.items()
    }


def _request_body() -> dict[str, Any]:
    """The body ``start_eval`` reads raw, documented as the model it validates against."""
    schema = EvalRequest.model_json_schema(mode="validation")
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


@router.post("", status_code=202, responses=ERROR_RESPONSES, openapi_extra=_request_body())
async def start_eval(request: Request, state: State) -> JSONResponse:
    """Start an evaluation job; poll ``GET /v1/eval/{job_id}``."""
    body = await read_json(request)
    try:
        req = EvalRequest.model_validate(body)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "body"
        raise ApiError(QueryValidationError(f"{where}: {err['msg']}", field=where)) from e
    if (req.dataset is None) == (req.benchmark is None):
        raise ApiError(
            QueryValidationError(
                'Give exactly one of "dataset" (a path on the server) or "benchmark" (rows).',
                field="dataset",
            )
        )
    if req.dataset is not None:
        dataset = Path(req.dataset)
        if not dataset.exists():
            raise ApiError(
                QueryValidationError(f"Dataset '{req.dataset}' does not exist.", field="dataset")
            )
        if not (dataset.is_dir() or dataset.is_file()):  # a device or a FIFO would never finish
            raise ApiError(
                QueryValidationError(
                    f"Dataset '{req.dataset}' is not a regular file or a folder.", field="dataset"
                )
            )
    jobs = _jobs(request)
    job = EvalJob(job_id=uuid.uuid4().hex, request=req)
    with jobs.lock:
        if len(jobs.jobs) >= _MAX_JOBS:  # forget the oldest finished job
            oldest = next((k for k, j in jobs.jobs.items() if j.status in {"done", "error"}), None)
            if oldest is not None:
                del jobs.jobs[oldest]
        jobs.jobs[job.job_id] = job
    jobs.pool.submit(_run, job, state)
    return JSONResponse(job.summary() | {"links": {"status": f"/v1/eval/{job.job_id}"}}, 202)


@router.get("", responses=ERROR_RESPONSES)
async def list_evals(request: Request) -> list[dict[str, Any]]:
    """Every job, newest first (the web page's reports view)."""
    return [j.summary() for j in reversed(_jobs(request).jobs.values())]


def _job(request: Request, job_id: str) -> EvalJob:
    job = _jobs(request).jobs.get(job_id)
    if job is None:
        raise ApiError(
            QueryValidationError(f"No evaluation job '{job_id}'.", field="job_id"), status=404
        )
    return job


@router.get("/{job_id}", responses=ERROR_RESPONSES)
async def get_eval(request: Request, job_id: str) -> dict[str, Any]:
    """Progress, and the whole report once done."""
    job = _job(request, job_id)
    return job.summary() | {"report": job.report}


@router.get("/{job_id}/report.html", response_class=HTMLResponse, responses=_json_errors())
async def get_eval_html(request: Request, job_id: str) -> HTMLResponse:
    """The job's self-contained HTML report."""
    from ragsonde.evaluate.html import render_html_report

    job = _job(request, job_id)
    if job.report is None:
        raise ApiError(
            QueryValidationError(f"Evaluation '{job_id}' is {job.status}.", field="job_id"),
            status=409,
        )
    return HTMLResponse(render_html_report(job.report))
