"""``/v1/judge``: relevance judging from the web page (the Judge view), Quepid-style.

- ``GET /v1/judge/benchmarks``: the benchmark files under ``RAGSONDE_HOME/benchmarks/``.
- ``GET /v1/judge/benchmarks/{name}``: its queries, each with its grades by chunk.
- ``POST /v1/judge/pool``: a query's hits pooled from every mode the collection supports (dense,
  sparse, hybrid), in a stable order seeded by the query, without source, rank or score.
- ``POST /v1/judge/benchmarks/{name}/grades``: one grade (0–3), saved at once (see
  :mod:`ragsonde.labels.manual`).
- ``GET /v1/judge/benchmarks/{name}/export``: the file itself, as a download.
- ``GET /v1/judge/benchmarks/{name}/agreement``: where the file has both human and LLM labels
  (``ragsonde judge --agreement``), the judge's agreement with the people: Cohen's kappa, the
  confusion per grade, and the position bias its run recorded
  (:func:`ragsonde.labels.agreement.benchmark_agreement`).

Bodies are JSON only (the app's middleware answers anything else with 415, so a form post from
another site is refused before it is read). Benchmark names are plain file names, never paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.responses import FileResponse

from ragsonde.errors import QueryValidationError, RagsondeError
from ragsonde.evaluate.options import options_error
from ragsonde.labels import manual
from ragsonde.labels.benchfile import read_entries
from ragsonde.labels.models import Agreement, BenchmarkEntry
from ragsonde.labels.pool import modes_for, pool
from ragsonde.models.query import resolve_collection
from ragsonde.models.store import COLLECTION_NAME_PATTERN
from ragsonde.server.errors import ERROR_RESPONSES, ApiError
from ragsonde.server.routes_query import read_json
from ragsonde.server.state import ServerState, get_state

__all__ = [
    "BenchmarkFile",
    "GradeRequest",
    "JudgeAgreement",
    "PoolRequest",
    "PoolResponse",
    "router",
]

router = APIRouter(prefix="/v1/judge", tags=["judging"])
State = Annotated[ServerState, Depends(get_state)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: A query to pool or grade: stripped, and not blank once stripped (a 422, never a 500).
QueryText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
#: A benchmark's name in the path: its rule published (manual.benchmark_path checks it, with
#: its own message), so schema-valid names are the ones served (schemathesis, ST202)
Name = Annotated[str, PathParam(json_schema_extra={"pattern": manual.NAME_PATTERN_JSONL})]


class PoolRequest(_Body):
    query: QueryText
    # "" was the default collection, without a word (schemathesis, ST201)
    collection: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        json_schema_extra={"pattern": COLLECTION_NAME_PATTERN},  # the store checks it
    )
    depth: int = Field(default=10, ge=1, le=50, description="Top k taken from each mode.")
    benchmark: str | None = Field(
        default=None,
        description="Show this benchmark's grades.",
        json_schema_extra={"pattern": manual.NAME_PATTERN_JSONL},
    )


class PoolHit(BaseModel):
    """A hit to judge: what it says, not who found it or how high."""

    chunk_id: str
    doc_id: str
    text: str
    grade: int | None = None


class PoolResponse(BaseModel):
    query: str
    query_id: str
    collection: str
    modes: list[str]
    hits: list[PoolHit]
    judged: int


class GradeRequest(_Body):
    query: QueryText
    chunk_id: str = Field(min_length=1, max_length=200)
    doc_id: str = Field(min_length=1, max_length=500)
    grade: int = Field(ge=0, le=3)
    judge: str = Field(default="web", min_length=1, max_length=100, description="Who graded.")


class QuerySummary(BaseModel):
    query_id: str
    query: str
    grades: dict[str, int] = Field(description="Chunk id -> human grade.")
    judged: int
    planned: bool = Field(
        default=False,
        description="In the benchmark's judging plan (NAME.plan.json, `ragsonde judge --plan`): "
        "planned queries come first, in the plan's order.",
    )


class BenchmarkFile(BaseModel):
    name: str
    path: str = Field(description="Where it is on the server (a dataset for /v1/eval).")
    queries: list[QuerySummary] = Field(default_factory=list)


class JudgeAgreement(BaseModel):
    """How far an LLM judge's labels in a benchmark agree with its human labels."""

    name: str
    agreement: Agreement | None = Field(
        description="On the queries with both human and LLM labels, as the file stands (None: "
        "no query has both). position: from the judge run that wrote the file "
        "(judge --agreement --position-bias), None when it was not measured."
    )


def _summary(entry: BenchmarkEntry) -> QuerySummary:
    grades = manual.judged_counts(entry)
    return QuerySummary(
        query_id=entry.query_id, query=entry.query, grades=grades, judged=len(grades)
    )


def _documented(model: type[_Body]) -> dict[str, Any]:
    """The body a route reads raw, documented as the model it validates against."""
    schema = model.model_json_schema(mode="validation")
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


async def _body(request: Request, model: type[_Body]) -> Any:
    # Not JSON (a form post from another site) is refused with 415 by the middleware.
    data = await read_json(request)
    try:
        return model.model_validate(data, strict=True)  # a grade of true is no grade 1
    except ValidationError as e:
        raise ApiError(options_error(e)) from e


def _path(state: ServerState, name: str) -> Any:
    try:
        return manual.benchmark_path(state.settings.home, name)
    except QueryValidationError as e:
        raise ApiError(e) from e


@router.get("/benchmarks", responses=ERROR_RESPONSES)
async def list_benchmarks(state: State) -> list[BenchmarkFile]:
    """The benchmark files a person can judge into (queries not included)."""
    paths = manual.list_benchmarks(state.settings.home)
    return [BenchmarkFile(name=p.stem, path=str(p)) for p in paths]


@router.get("/benchmarks/{name}", responses=ERROR_RESPONSES)
async def get_benchmark(name: Name, state: State) -> BenchmarkFile:
    """One benchmark: its queries and their grades (empty when the file is not made yet)."""
    path = _path(state, name)
    try:
        entries = await run_in_threadpool(read_entries, path) if path.exists() else []
        planned = _planned(path.with_name(f"{path.stem}.plan.json"))
    except RagsondeError as e:  # a benchmark or plan file that cannot be read: say which
        raise ApiError(e) from e
    queries = [_summary(e) for e in entries]
    if planned:
        queries = sorted(
            (q.model_copy(update={"planned": q.query_id in planned}) for q in queries),
            key=lambda q: planned.get(q.query_id, len(planned)),
        )
    return BenchmarkFile(name=path.stem, path=str(path), queries=queries)


def _planned(path: Path) -> dict[str, int]:
    """Query id -> place in the judging plan beside a benchmark, one system's or a
    comparison's (none: empty; one that cannot be read: the VALIDATION_ERROR naming it)."""
    if not path.exists():
        return {}
    from ragsonde.estimate.run import read_plan

    plan = read_plan(path)
    return {q: i for i, q in enumerate(plan.queued)}


def _pool(state: ServerState, req: PoolRequest) -> PoolResponse:
    collection = resolve_collection(req.collection, state.settings.collection)
    retriever = state.retriever
    modes = modes_for(retriever, collection, None)
    entry = BenchmarkEntry(query_id=manual.query_id_for(req.query), query=req.query.strip())
    grades: dict[str, int] = {}
    if req.benchmark is not None:  # "" is a bad name, not no benchmark (schemathesis, ST201)
        path = manual.benchmark_path(state.settings.home, req.benchmark)
        entries = read_entries(path) if path.exists() else []
        have = next((e for e in entries if e.query.strip() == entry.query), None)
        if have is not None:
            entry, grades = have, manual.judged_counts(have)
    pools, errors, _ = pool(retriever, collection, [entry], modes, req.depth)
    if entry.query_id in errors and not pools.get(entry.query_id):
        raise QueryValidationError(errors[entry.query_id], field="query")
    hits = manual.shuffled(pools.get(entry.query_id, []), entry.query)
    return PoolResponse(
        query=entry.query,
        query_id=entry.query_id,
        collection=collection,
        modes=modes,
        hits=[
            PoolHit(chunk_id=h.chunk_id, doc_id=h.doc_id, text=h.text, grade=grades.get(h.chunk_id))
            for h in hits
        ],
        judged=sum(1 for h in hits if h.chunk_id in grades),
    )


@router.post("/pool", responses=ERROR_RESPONSES, openapi_extra=_documented(PoolRequest))
async def pool_query(request: Request, state: State) -> PoolResponse:
    """The hits to judge for one query."""
    req = await _body(request, PoolRequest)
    try:
        return await run_in_threadpool(_pool, state, req)
    except RagsondeError as e:  # a missing collection, a mode it lacks, a store error
        raise ApiError(e, query=req.query, collection=req.collection) from e


@router.post(
    "/benchmarks/{name}/grades", responses=ERROR_RESPONSES, openapi_extra=_documented(GradeRequest)
)
async def grade(name: Name, request: Request, state: State) -> QuerySummary:
    """Save one grade; the query's grades as saved."""
    path = _path(state, name)
    req = await _body(request, GradeRequest)
    try:
        entry = await run_in_threadpool(
            lambda: manual.record_grade(
                path,
                req.query,
                doc_id=req.doc_id,
                chunk_id=req.chunk_id,
                grade=req.grade,
                judge=req.judge,
            )
        )
    except RagsondeError as e:  # a benchmark file that cannot be read: never a 500
        raise ApiError(e, query=req.query) from e
    return _summary(entry)


@router.get("/benchmarks/{name}/export", response_class=FileResponse, responses=ERROR_RESPONSES)
async def export(name: Name, state: State) -> FileResponse:
    """The benchmark file, as ``ragsonde eval`` reads it."""
    path = _path(state, name)
    if not path.is_file():
        raise ApiError(
            QueryValidationError(f"Benchmark '{name}' has no grades yet.", field="benchmark"),
            status=404,
        )
    return FileResponse(path, media_type="application/x-ndjson", filename=path.name)


@router.get("/benchmarks/{name}/agreement", responses=ERROR_RESPONSES)
async def judge_agreement(name: Name, state: State) -> JudgeAgreement:
    """The LLM judge's agreement with the human labels of one benchmark."""
    from ragsonde.labels.agreement import benchmark_agreement

    path = _path(state, name)
    if not path.is_file():
        return JudgeAgreement(name=path.stem, agreement=None)
    try:
        entries = await run_in_threadpool(read_entries, path)
        found = await run_in_threadpool(benchmark_agreement, path, entries)
    except RagsondeError as e:  # the benchmark, or the agreement report beside it, unreadable
        raise ApiError(e) from e
    return JudgeAgreement(name=path.stem, agreement=found)
