"""``ragsonde mcp``: the tools on the official SDK's high-level server (``MCPServer``).

:func:`build_server` registers every tool with its annotations (read-only unless it writes;
``ingest`` exists only with ``allow_write``) and the report resources. Each tool answers a
published pydantic model, so its ``outputSchema`` is that model's JSON Schema and its result
carries ``structuredContent`` and the same JSON as text. :class:`RagsondeMCP` is the one place a
failure becomes a tool error (:mod:`ragsonde.mcp._errors`): one failing call never affects
another, and no call crashes the server.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import (
    CallToolResult,
    ClientCapabilities,
    ResourceLink,
    RootsCapability,
    TextContent,
    ToolAnnotations,
)
from pydantic import ConfigDict

from ragsonde import __version__
from ragsonde.errors import ErrorCode, QueryValidationError, RagsondeError
from ragsonde.evaluate.misses import MissesReport
from ragsonde.evaluate.report import IngestSummary
from ragsonde.mcp._errors import error_result
from ragsonde.mcp.evaluation import ProgressToClient, explain, ingest_path, run_evaluation
from ragsonde.mcp.models import BenchRow, EvalSummary, FailingQueries
from ragsonde.mcp.reports import REPORT_URI, RUN_URI
from ragsonde.mcp.roots import Roots, roots_from_uris
from ragsonde.mcp.tools import Room
from ragsonde.mcp.traffic import is_run_ref
from ragsonde.models import ErrorInfo
from ragsonde.models.estimate import Estimand, PredictorName
from ragsonde.models.validation import json_integers

__all__ = ["READ_ONLY", "RagsondeMCP", "build_server"]

#: Reads only, answers the same to the same call while nothing else changes.
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
#: Appends a run to the history (evaluate with --allow-write): writes, destroys nothing.
RECORDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
#: Writes points into a collection, replacing those of documents that changed.
INGESTS = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

_INSTRUCTIONS = (
    "ragsonde evaluates retrieval on Qdrant. search: one query against a collection, with scores "
    "and timings. evaluate: a benchmark (a .jsonl/.yaml file, a BEIR folder, or inline rows) -> "
    "metrics and a report id; failing_queries and explain_miss then say which queries missed and "
    "why; history_list and history_diff compare recorded runs. Paths must lie under the "
    "server's roots (see config)."
)


_EMPTY_COLLECTION = QueryValidationError(
    "collection: give a collection's name, or leave the argument out for the default one.",
    field="collection",
)


class RagsondeMCP(MCPServer[Any]):
    """The SDK's server with ragsonde's error boundary around every tool call."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        if arguments.get("collection") == "":  # it was the default collection, without a word
            return error_result(_EMPTY_COLLECTION, name)
        try:  # 3.0 is an integer, as JSON Schema reads the input schema (arguments are strict)
            return await super().call_tool(name, json_integers(arguments), context)
        except ToolError as exc:  # the SDK wraps whatever the tool raised, or refused
            return error_result(exc, name)


async def _roots(room: Room, ctx: Context[Any, Any]) -> Roots:
    """The server's ``--root`` folders, else the client's declared roots, else the folder the
    server runs in."""
    if room.roots is not None:
        return room.roots
    if ctx.session.check_client_capability(ClientCapabilities(roots=RootsCapability())):
        listed = await ctx.session.list_roots()
        folders = roots_from_uris(str(r.uri) for r in listed.roots)
        if folders:
            return Roots(folders)
        raise QueryValidationError(
            "The client declares no file:// roots, so no path can be read. Add a root in the "
            "client, or start the server with --root FOLDER.",
            field="roots",
        )
    return Roots([Path(os.getcwd())])


def _tool_result(model: Any, *links: ResourceLink) -> CallToolResult:
    data = model.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False)), *links],
        structured_content=data,
    )


def _progress_to(ctx: Context[Any, Any]) -> ProgressToClient:
    """Progress sent to the client from the worker thread, where each step first stops the work
    if the call was cancelled (SIGTERM, the client's ``notifications/cancelled``): a thread
    cannot be interrupted, and the server's shutdown waited for a whole evaluation or ingest."""

    def send(done: float, total: float | None) -> None:
        anyio.from_thread.check_cancelled()
        anyio.from_thread.run(ctx.report_progress, done, total)

    return ProgressToClient(send)


def _register_files(server: RagsondeMCP, room: Room) -> None:
    """The tools that read a benchmark file (evaluate, explain_miss), and ingest."""

    async def evaluate(
        ctx: Context[Any, Any],
        benchmark: str | None = None,
        rows: list[BenchRow] | None = None,
        collection: str | None = None,
        k: list[int] | None = None,
        relevance_by: Literal["doc", "url", "chunk"] = "doc",
        gates: list[str] | None = None,
        search: dict[str, Any] | None = None,
        split: str = "test",
        estimate: bool = False,
        predictor: PredictorName = "scores",
        estimand: Estimand = "distribution",
    ) -> Annotated[CallToolResult, EvalSummary]:
        """Evaluate retrieval on a benchmark as `ragsonde eval` does: `benchmark` (a path under
        the roots: .jsonl/.yaml, a BEIR folder) or inline `rows` ({query_id, query, relevant}).
        Returns the metrics, latency percentiles and gate verdicts, and a report id: the full
        report is the resource ragsonde://reports/{id}, its TREC run ragsonde://runs/{id}.
        Reports progress per query. `estimate` (as `eval --estimate`): rows without
        `relevant` are kept, and every metric is estimated over all rows with a 95 % interval
        (`metrics_ci`: PPI++ from the labelled rows and `predictor`'s predictions; `estimand`
        'benchmark' for the mean over these very rows); a gate then tests the interval."""
        from ragsonde.evaluate import EvalOptions

        if (benchmark is None) == (rows is None):
            raise QueryValidationError(
                "benchmark: give either a benchmark path or inline rows, not both or neither.",
                field="benchmark",
            )
        given: dict[str, Any] = {"relevance_by": relevance_by, "split": split}
        if estimate:  # as /v1/eval: a judging plan file is never read from a call
            given.update(estimate=True, predictor=predictor, estimand=estimand)
        given.update({n: v for n, v in (("k", k), ("gates", gates)) if v is not None})
        given.update({"search": search} if search else {}, throughput=False)
        options = EvalOptions.from_json(given)  # JSON types: a true is no 1
        # `is not None`: an empty path is the roots' refusal, not a fall through to no rows
        source = (
            rows if benchmark is None else (await _roots(room, ctx)).check(benchmark, "benchmark")
        )
        assert source is not None  # one of the two, checked above
        progress = _progress_to(ctx)
        summary, _ = await anyio.to_thread.run_sync(
            lambda: run_evaluation(room, source, options, collection, progress)
        )
        links = [
            ResourceLink(
                name=f"report {summary.report_id}",
                uri=summary.report_uri,
                mime_type="application/json",
            ),
            ResourceLink(
                name=f"run {summary.report_id}", uri=summary.run_uri, mime_type="text/plain"
            ),
        ]
        return _tool_result(summary, *links)

    async def explain_miss(
        ctx: Context[Any, Any],
        benchmark: str,
        query_id: str,
        collection: str | None = None,
        k: int = 10,
    ) -> MissesReport:
        """Why did a benchmark query miss? Each relevant document outside the top k, climbed up
        the ladder (in the collection, text, filter, threshold, quantization, HNSW, crowding,
        fusion, truncation, chunking, ranking) and blamed on the first stage that lost it."""
        path = (await _roots(room, ctx)).check(benchmark, "benchmark")
        return await anyio.to_thread.run_sync(lambda: explain(room, path, query_id, collection, k))

    async def failing_queries(
        ctx: Context[Any, Any],
        run: str = "last",
        metric: str = "ndcg@10",
        limit: int = 10,
        traffic: str | None = None,
    ) -> FailingQueries:
        """The worst queries of an evaluation (`run`: a report id `evaluate` returned, or a
        recorded run: an id, last, last~N, best), worst first on `metric`, with their relevant
        and retrieved ids. With `traffic`, the weakest queries of production traffic instead,
        lowest predicted first, with their label-free evidence (signals, weak, the command to
        look further): `traffic` is a saved traffic report (`ragsonde traffic -o FILE.json`, a
        path under the roots) or a recorded traffic run (last, last~N, a run id)."""
        found: Path | str | None = traffic
        if traffic is not None and not is_run_ref(traffic):
            found = (await _roots(room, ctx)).check(traffic, "traffic")
        return await anyio.to_thread.run_sync(
            lambda: room.failing_queries(run, metric, limit, found)
        )

    server.add_tool(evaluate, annotations=RECORDS if room.allow_write else READ_ONLY)
    server.add_tool(explain_miss, annotations=READ_ONLY)
    server.add_tool(failing_queries, annotations=READ_ONLY)
    if not room.allow_write:
        return

    async def ingest(
        ctx: Context[Any, Any],
        source: str,
        collection: str | None = None,
        format: str | None = None,
    ) -> IngestSummary:
        """Ingest a file or folder under the roots into a collection (chunk, embed, upsert):
        writes to the store, replacing the points of documents whose text changed."""
        path = (await _roots(room, ctx)).check(source, "source")
        progress = _progress_to(ctx)
        return await anyio.to_thread.run_sync(
            lambda: ingest_path(room, path, collection, format, progress)
        )

    server.add_tool(ingest, annotations=INGESTS)


def _resource_error(exc: RagsondeError) -> ResourceError:
    """A ragsonde error reading a resource, as the SDK passes it on: the contract's code and
    message. Raised as it was, the SDK took it for a crash: -32603 "Error creating resource
    from template", logged with a traceback. A VALIDATION_ERROR (an id that names no report)
    is the client's: ``ResourceNotFoundError``, which the SDK answers -32602."""
    info = ErrorInfo.from_exception(exc)
    text = f"{info.code.value}: {info.message}"
    if info.code is ErrorCode.VALIDATION_ERROR:
        return ResourceNotFoundError(text)
    return ResourceError(text)


def _register_resources(server: RagsondeMCP, room: Room) -> None:
    @server.resource(REPORT_URI, name="report", mime_type="application/json")
    def report(report_id: str) -> str:
        """An evaluation's whole report (the JSON of `ragsonde eval --json`), by the id
        `evaluate` returned, or a recorded run's (a run id, last, best)."""
        try:
            return room.reports.get(report_id).model_dump_json()
        except RagsondeError as e:
            raise _resource_error(e) from e

    @server.resource(RUN_URI, name="run", mime_type="text/plain")
    def run(report_id: str) -> str:
        """An evaluation's TREC run file (qid Q0 docid rank score tag)."""
        try:
            return room.reports.run_file(report_id)
        except RagsondeError as e:
            raise _resource_error(e) from e


def build_server(room: Room) -> RagsondeMCP:
    """The MCP server over ``room``: every tool, and the report resources."""
    with _root_logging_kept():
        server = RagsondeMCP(
            name="ragsonde", version=__version__, instructions=_INSTRUCTIONS, log_level="WARNING"
        )
    for fn in (
        room.search,
        room.inspect_collection,
        room.config,
        room.history_list,
        room.history_diff,
    ):
        server.add_tool(fn, annotations=READ_ONLY)
    _register_files(server, room)
    _register_resources(server, room)
    _strict_arguments(server)
    return server


@contextmanager
def _root_logging_kept() -> Iterator[None]:
    """The root logger as it was before the SDK's server was built.

    ``MCPServer.__init__`` calls ``logging.basicConfig`` with a Rich handler on the root logger.
    Under ``ragsonde serve`` (which mounts the tools at ``/mcp``) every line of the ``ragsonde``
    loggers then reached stderr twice, once through uvicorn's handler and once through that one;
    in a host application it would take over the application's own logging. Logging is the
    application's to configure, so the root's handlers and level are put back.
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _strict_arguments(server: RagsondeMCP) -> None:
    """Every tool refuses arguments it does not declare and takes JSON types as they are.

    The SDK's argument models ignore an unknown name (``history_diff`` called with ``a`` and
    ``b`` diffed ``last~1`` with ``last`` and said nothing) and coerce a ``true`` into ``1``
    (``score_threshold: true`` was a threshold of 1.0: no results). The SDK reads a tool's
    argument model on each call, so each is replaced by a strict subclass, and the published
    input schema says ``additionalProperties: false``. (The SDK still parses a string holding
    JSON for an argument that is not a string, a leniency for clients that send them so.)"""
    for tool in server._tool_manager.list_tools():
        loose = tool.fn_metadata.arg_model
        config = ConfigDict(**{**loose.model_config, "extra": "forbid", "strict": True})
        tool.fn_metadata.arg_model = type(loose.__name__, (loose,), {"model_config": config})
        tool.parameters = {**tool.parameters, "additionalProperties": False}
