"""Any MCP search tool evaluated like a collection (``ragsonde eval BENCH --mcp CMD --tool T``).

The server is started (a command line, over stdio) or reached (an ``http(s)://`` URL, streamable
HTTP); its tool is called once per benchmark query, timed around the call; each answer's items
become a ranking (:mod:`ragsonde.mcp.items`), collapsed to documents as the runner collapses
chunks (the first occurrence keeps its rank, fetching more while too few documents came back);
the metrics are the runner's (:func:`~ragsonde.evaluate.metrics.compute_metrics` over the same
rank-scored run). The report is an :class:`~ragsonde.evaluate.report.EvalReport` whose latency
is the tool's round trip (``total_ms``).
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from ragsonde.errors import QueryValidationError, RagsondeError, StoreConnectionError
from ragsonde.mcp.items import ItemMap, Matcher, items_of, map_from_schema, ranked

if TYPE_CHECKING:
    from mcp import ClientSession

    from ragsonde.config import Settings
    from ragsonde.evaluate import EvalOptions
    from ragsonde.evaluate.datasets import Benchmark
    from ragsonde.evaluate.report import EvalReport
    from ragsonde.progress import Progress

__all__ = ["ToolTarget", "evaluate_tool"]

_MAX_FETCH = 5000
_OVERSAMPLE = 3
#: Integer arguments a search tool may take for "how many": given {top_k} when not named.
_COUNT_ARGS = ("top_k", "limit", "k", "n", "max_results", "count")


class ToolTarget(BaseModel):
    """Which tool of which MCP server, called how, and read how."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    server: str = Field(min_length=1, description="A command line (stdio) or an http(s) URL.")
    tool: str = Field(min_length=1)
    args: dict[str, str] = Field(
        default_factory=dict,
        description="Argument templates: {query}, {top_k}, {filters}; other values are JSON "
        "(a number, true) or else a string. Default: query={query}, and {top_k} for a "
        "count argument the tool declares (top_k, limit, k, …).",
    )
    map: dict[str, str] = Field(
        default_factory=dict, description="items/id/score/text/url -> the answer's field."
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers for a URL (an API key)."
    )

    @property
    def is_url(self) -> bool:
        return self.server.startswith(("http://", "https://"))


@asynccontextmanager
async def connect(target: ToolTarget) -> AsyncIterator[ClientSession]:
    """An initialized client session with the target's server (started, or reached)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    if target.is_url:
        async with (
            create_mcp_http_client(headers=target.headers or None) as http,
            streamable_http_client(target.server, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
        return
    argv = shlex.split(target.server)
    # the server inherits this process's environment, as a shell would start it
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _arguments(
    templates: Mapping[str, str], query: str, top_k: int, filters: Mapping[str, Any] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, template in templates.items():
        if template == "{query}":
            out[name] = query
        elif template == "{top_k}":
            out[name] = top_k
        elif template == "{filters}":
            if filters:
                out[name] = dict(filters)
        elif "{query}" in template:
            out[name] = template.replace("{query}", query)
        else:
            try:
                out[name] = json.loads(template)
            except ValueError:
                out[name] = template
    return out


def _templates(target: ToolTarget, input_schema: Mapping[str, Any]) -> dict[str, str]:
    if target.args:
        return dict(target.args)
    props = input_schema.get("properties") or {}
    text = next((n for n in ("query", "q", "text", "question") if n in props), "query")
    out = {text: "{query}"}
    count = next((n for n in _COUNT_ARGS if props.get(n, {}).get("type") == "integer"), None)
    if count is not None:
        out[count] = "{top_k}"
    return out


def count_cap(templates: Mapping[str, str], input_schema: Mapping[str, Any]) -> int | None:
    """The most results the tool's schema lets one call ask for: the ``maximum`` (or
    ``exclusiveMaximum``) of the argument that carries ``{top_k}``; None when it declares
    none. Asking for more is refused by a tool that checks its arguments, query by query."""
    props = input_schema.get("properties") or {}
    name = next((n for n, t in templates.items() if t == "{top_k}"), None)
    spec = props.get(name) if name is not None else None
    if not isinstance(spec, Mapping):
        return None
    top, below = spec.get("maximum"), spec.get("exclusiveMaximum")
    caps = [int(top)] if isinstance(top, int | float) else []
    caps += [int(below) - 1] if isinstance(below, int | float) else []
    return max(1, min(caps)) if caps else None


def build_matcher(settings: Settings, bench: Benchmark) -> Matcher:
    """Each chunk's exact text and url -> its document id, read from the settings' collection
    (where the benchmark's ids are found, as the runner finds them)."""
    from ragsonde.evaluate.relevance import resolve_relevance
    from ragsonde.evaluate.resolve import POINT_ID
    from ragsonde.models.payload import get_path
    from ragsonde.models.unread import id_text
    from ragsonde.workspace import using

    by_text: dict[str, str] = {}
    by_url: dict[str, str] = {}
    with using(settings=settings) as ws:
        coll, mapping = settings.collection, settings.payload_mapping
        wanted = sorted({r for q in bench.queries for r in q.relevant})
        path = resolve_relevance(ws.store, coll, wanted, mapping).path
        for batch in ws.store.scroll(coll):
            for record in batch:
                key = record.id if path == POINT_ID else id_text(get_path(record.payload, path))
                if key is None:  # none, or a list or an object: no document id
                    continue
                fields = mapping.read(record.payload)
                if fields.text.strip():
                    by_text.setdefault(fields.text.strip(), key)
                if fields.url:
                    by_url.setdefault(fields.url.strip(), key)
    return Matcher(by_text, by_url)


class _Run:
    """The loop over the queries, and what it gathers."""

    def __init__(self, bench: Benchmark, o: EvalOptions, target: ToolTarget) -> None:
        self.bench, self.o, self.target = bench, o, target
        self.depth = max(o.k)
        self.fetch = self.depth if o.relevance_by == "chunk" else self.depth * _OVERSAMPLE
        self.run: dict[str, dict[str, float]] = {}
        self.ms: dict[str, float] = {}
        self.errors: dict[str, str] = {}
        self.unmatched = 0
        self.items = 0
        self.m = ItemMap.of_flags(target.map)
        self.matcher: Matcher | None = None
        self.cap = _MAX_FETCH  # lowered to the tool's declared maximum (count_cap)

    async def query(
        self, session: ClientSession, templates: dict[str, str], q: Any, settings: Settings
    ) -> None:
        from ragsonde.evaluate.aggregation import Aggregation, aggregate

        want = min(q.top_k or self.depth, self.depth)
        fetch, spent = min(self.fetch, self.cap), 0.0
        while True:
            args = _arguments(templates, q.text, fetch, q.filters)
            t0 = time.perf_counter()
            result = await session.call_tool(self.target.tool, args)
            spent += (time.perf_counter() - t0) * 1000
            if result.is_error:
                text = " ".join(getattr(b, "text", "") for b in result.content)
                self.errors[q.query_id] = f"tool error: {text[:300]}"
                break
            items = items_of(result, self.m, q.query_id)
            if self.m.how != "id" and self.matcher is None:
                self.matcher = await anyio.to_thread.run_sync(build_matcher, settings, self.bench)
            pairs, unmatched = ranked(items, self.m, self.matcher, q.query_id)
            docs = aggregate(pairs, Aggregation())
            if len(docs) >= want or len(items) < fetch or fetch >= self.cap:
                self.items += len(items)
                self.unmatched += unmatched
                break
            fetch = min(fetch * 2, self.cap)
        self.ms[q.query_id] = spent
        if q.query_id not in self.errors:
            self.run[q.query_id] = dict(list(docs.items())[:want])
        else:
            self.run[q.query_id] = {}


async def _gather(
    target: ToolTarget, bench: Benchmark, o: EvalOptions, settings: Settings, progress: Any
) -> _Run:
    state = _Run(bench, o, target)
    async with connect(target) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        tool = tools.get(target.tool)
        if tool is None:
            raise QueryValidationError(
                f"tool: the server has no tool '{target.tool}'; it has "
                f"{', '.join(sorted(tools)) or 'none'}.",
                field="tool",
            )
        map_from_schema(state.m, tool.output_schema)
        templates = _templates(target, tool.input_schema)
        state.cap = min(count_cap(templates, tool.input_schema) or _MAX_FETCH, _MAX_FETCH)
        if progress is not None:
            progress.start(len(bench.queries))
        for q in bench.queries:
            await state.query(session, templates, q, settings)
            if progress is not None:
                progress.advance(1)
    return state


async def _gather_until_sigterm(
    target: ToolTarget, bench: Benchmark, o: EvalOptions, settings: Settings, progress: Any
) -> _Run | None:
    """:func:`_gather`, or None when SIGTERM stopped it (the loop takes the signal: see
    :mod:`ragsonde.mcp.sigterm`); the MCP server's process is closed on the way out."""
    from ragsonde.mcp.sigterm import sigterm_cancels

    with anyio.CancelScope() as scope, sigterm_cancels(scope) as terminated:
        return await _gather(target, bench, o, settings, progress)
    assert terminated()  # only SIGTERM cancels the scope
    return None


def _leaf(group: BaseExceptionGroup[Any]) -> BaseException:
    """The first exception of a (nested) group: the client's task groups nest them."""
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


def evaluate_tool(
    dataset: str | Path,
    target: ToolTarget,
    *,
    options: EvalOptions | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Evaluate ``target``'s tool on ``dataset``; see the module docstring. ``settings`` name
    the collection that text or url matching reads (only when the items carry no id)."""
    from ragsonde.config import load_settings
    from ragsonde.evaluate import EvalOptions
    from ragsonde.evaluate.datasets import load_benchmark

    o = options or EvalOptions()
    cfg = settings or load_settings()
    started = time.perf_counter()
    bench = load_benchmark(dataset, split=o.split, queries=o.queries_file)
    try:
        state = anyio.run(_gather_until_sigterm, target, bench, o, cfg, progress)
    except* RagsondeError as group:  # a bad answer, an unknown tool: as raised
        raise _leaf(group) from None
    except* Exception as group:  # the server would not start, or went away
        first = _leaf(group)
        raise StoreConnectionError(
            f"mcp: the server {target.server!r} failed ({type(first).__name__}: {first}). "
            "Check that the command starts an MCP server on stdio, or that the URL answers "
            "(with its key, if it needs one: --mcp-header 'Authorization=Bearer KEY')."
        ) from first
    if state is None:
        from ragsonde.mcp.sigterm import terminate

        terminate()
    from ragsonde.mcp.tool_report import build_report

    return build_report(dataset, bench, o, target, state, time.perf_counter() - started)
