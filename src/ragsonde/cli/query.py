"""``ragsonde query``, ``ragsonde batch`` and ``ragsonde inspect``."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragsonde.cli._common import (
    CollectionOpt,
    ConfigOpt,
    FieldOpt,
    HomeOpt,
    JsonOpt,
    VectorOpt,
    cli_errors,
    console,
    err_console,
    exit_code_for,
    parse_fields,
    print_json,
    settings_from_options,
)
from ragsonde.cli._search import search_options
from ragsonde.cli.app import app
from ragsonde.cli.render import render_response
from ragsonde.errors import (
    AuthError,
    ErrorCode,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
)
from ragsonde.models import BatchResponse, Response
from ragsonde.models.query import resolve_collection
from ragsonde.models.response import empty_text_warning
from ragsonde.models.unread import Unread

if TYPE_CHECKING:  # the retriever (and numpy) load when a command runs, not for --help
    from ragsonde.retriever import Retriever

__all__ = ["batch", "inspect", "query"]


def _parse_filters(items: list[str] | None) -> dict[str, Any] | None:
    """``FIELD=VALUE`` options; a field given twice means "any of"."""
    if not items:
        return None
    out: dict[str, list[str | int | bool]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise QueryValidationError(
                f"Bad --filter {item!r}: write FIELD=VALUE, e.g. --filter section=Sensors.",
                field="filters",
            )
        out.setdefault(key.strip(), []).append(_scalar(value))
    return {k: v[0] if len(v) == 1 else v for k, v in out.items()}


def _scalar(value: str) -> str | int | bool:
    if value.isdigit() or (value.startswith("-") and value[1:].isdigit()):
        return int(value)
    return {"true": True, "false": False}.get(value, value)


def _preload(retriever: Retriever, collection: str) -> float | None:
    """Load the model before the first query, so its ``embedding_ms`` is the encode alone; only
    once the store has answered for ``collection``. A store that cannot be reached (or refuses
    the key) raises here, so the caller reports it without a second wait; a missing collection
    or a model that cannot load is left for the query to report as its error response."""
    from ragsonde.embedders import preload

    try:
        retriever.store.collection_info(collection)
        return preload(retriever.embedder)
    except (StoreConnectionError, AuthError):
        raise
    except RagsondeError:
        return None


def _exit_for(codes: list[ErrorCode]) -> None:
    if not codes:
        return
    only_validation = all(c is ErrorCode.VALIDATION_ERROR for c in codes)
    raise typer.Exit(2 if only_validation else 1)


@app.command()
@cli_errors
@search_options()
def query(
    text: Annotated[str, typer.Argument(help="The question to search for.")],
    collection: CollectionOpt = None,
    filters: Annotated[
        list[str] | None,
        typer.Option("--filter", "-f", help="FIELD=VALUE payload condition (repeat for any-of)."),
    ] = None,
    no_metadata: Annotated[
        bool, typer.Option("--no-metadata", help="Only chunk_id, text, score, rank.")
    ] = False,
    vectors: Annotated[bool, typer.Option("--vectors", help="Include stored vectors.")] = False,
    vector: VectorOpt = None,
    field_paths: FieldOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
    search: dict[str, Any] | None = None,
) -> None:
    """Search a collection: query text → embedding → Qdrant → ranked chunks."""
    settings = settings_from_options(
        config=config_file,
        collection=collection,
        home=home,
        vector=vector,
        mapping=parse_fields(field_paths),
        search=search,
    )
    body: dict[str, Any] = {
        "query_text": text,
        "include_metadata": not no_metadata,
        "include_vectors": vectors,
    }

    def failure(e: RagsondeError) -> Response:
        return Response.failure(
            e,
            query=text,
            query_id=str(uuid.uuid4()),
            top_k=settings.search.top_k,
            collection=settings.collection,
            model=settings.embedder,
        )

    try:
        body["filters"] = _parse_filters(filters)
    except QueryValidationError as e:
        _emit(failure(e), json_output)
        raise typer.Exit(exit_code_for(e)) from e
    load_ms: float | None = None
    from ragsonde.retriever import Retriever

    with Retriever(settings) as retriever:
        try:
            sparse = settings.search.mode == "sparse"
            load_ms = None if sparse else _preload(retriever, settings.collection)
        except RagsondeError as e:
            resp = failure(e)
        else:
            resp = retriever.retrieve(body)
    _emit(resp, json_output, load_ms, filters=body.get("filters"))
    _exit_for([resp.error.code] if resp.error else [])


def _emit(
    resp: Response,
    json_output: bool,
    model_load_ms: float | None = None,
    *,
    filters: dict[str, Any] | None = None,
) -> None:
    if json_output:
        print_json(resp)
    else:
        render_response(resp, model_load_ms, filters=filters)
    # a collection keeping its text at a path no layout reads: say so, as eval does
    empty = empty_text_warning(resp, "see `ragsonde inspect` and set --field text=PATH")
    for warning in [*resp.warnings, *([empty] if empty else [])]:
        err_console.print(f"[yellow]warning[/]: {escape(warning)}", soft_wrap=True)


def _bad_file(path: Path, problem: str) -> QueryValidationError:
    return QueryValidationError(f"Batch file {path} {problem}", field="file")


def _json(path: Path, text: str, line: int = 1) -> Any:
    """``text`` parsed; errors name the file's line (``line``: where ``text`` starts)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad_file(
            path, f"is not valid JSON or JSON Lines (line {line + e.lineno - 1}: {e.msg})."
        ) from e
    except RecursionError as e:
        raise _bad_file(path, f"nests JSON too deeply (line {line}).") from e


#: A batch holds at most 100 queries (``max_batch_size``) of at most 2,000 characters: 16 MiB
#: leaves room for their filters. A 200 MB file was read whole first (840 MB at its peak).
MAX_BATCH_FILE_BYTES = 16 << 20


def _read_batch_file(path: Path) -> dict[str, Any]:
    """A batch body from a JSON array, a JSON object (a batch or one query) or JSON Lines.

    Every bad file is a VALIDATION_ERROR naming it (and the line, where known); a query holding
    invalid Unicode is left to the retriever, which answers it with its own error response.
    """
    from ragsonde.inputs import decoded_text, read_bytes

    if path.is_dir():
        raise _bad_file(path, "is a folder: give a .jsonl or .json file.")
    if not path.exists() and not path.is_symlink():
        raise QueryValidationError(f"Batch file {path} does not exist.", field="file")
    try:  # a FIFO or a device is refused, not waited on or read for ever; the size is bounded
        raw = read_bytes(path, MAX_BATCH_FILE_BYTES, "batch file")
        text = decoded_text(raw)  # UTF-8, or the line (and byte) that is not
    except ValueError as e:
        raise _bad_file(path, f"cannot be read: {e}.") from e
    stripped = text.lstrip()
    if stripped.startswith("["):
        return {"queries": _json(path, text)}
    if stripped.startswith("{") and path.suffix != ".jsonl":
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            data = None  # perhaps JSON Lines: read below, line by line
        if isinstance(data, dict):
            return data if "queries" in data else {"queries": [data]}
    lines = text.splitlines()
    queries = [_json(path, line, n) for n, line in enumerate(lines, start=1) if line.strip()]
    if not queries:
        raise _bad_file(path, "holds no queries.")
    return {"queries": queries}


@app.command()
@cli_errors
@search_options()
def batch(
    file: Annotated[Path, typer.Argument(help="JSON Lines (one query per line) or a JSON array.")],
    collection: CollectionOpt = None,
    vector: VectorOpt = None,
    field_paths: FieldOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
    search: dict[str, Any] | None = None,
) -> None:
    """Run many queries at once: one embedding call, one search request. The search flags
    apply to every query that does not set the same field itself."""
    settings = settings_from_options(
        config=config_file,
        home=home,
        vector=vector,
        mapping=parse_fields(field_paths),
        search=search,
    )
    body = _read_batch_file(file)
    if collection is not None and "collection" not in body:  # -c "" is refused, not unset
        body["collection"] = collection
    from ragsonde.retriever import Retriever

    with Retriever(settings) as retriever:
        try:
            coll = resolve_collection(body.get("collection"), settings.collection)
            load_ms = _preload(retriever, coll)
        except RagsondeError:
            load_ms = None  # the batch reports the store's error per query
        result: BatchResponse = retriever.retrieve_batch(body)
    if json_output:
        print_json(result)
    else:
        for resp in result.responses:
            render_response(resp)
        console.print(
            f"[bold]batch {result.batch_id}[/]: {result.status}, {len(result.responses)} queries "
            f"in {result.batch_latency_ms:.1f} ms"
            + (f" (model load {load_ms:.0f} ms before it)" if load_ms else "")
        )
    unread = Unread()  # payload values the results could not read, once for the whole batch
    for resp in result.responses:
        unread.merge(resp.unread)
    for warning in unread.warnings():
        err_console.print(f"[yellow]warning[/]: {escape(warning)}", soft_wrap=True)
    _exit_for([r.error.code for r in result.responses if r.error])


@app.command()
@cli_errors
def inspect(
    name: Annotated[
        str | None,
        typer.Argument(help="The collection \\[default: --collection, or the collection setting]"),
    ] = None,
    collection: CollectionOpt = None,
    sample: Annotated[
        int, typer.Option(min=1, max=1_000_000, help="How many payloads to sample.")
    ] = 1000,  # -1 was a traceback from the engine (an unsigned limit), 0 a layout of nothing
    field_paths: FieldOpt = None,
    vector: VectorOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Describe a collection: vectors, points, payload fields, its layout, the mapping that fits."""
    from ragsonde.workspace import Workspace

    if name is not None and collection is not None and name != collection:
        raise QueryValidationError(
            f"inspect: the collection is named twice ({name!r} and --collection {collection!r}): "
            "give one.",
            field="collection",
        )
    settings = settings_from_options(
        config=config_file,
        collection=name or collection,
        home=home,
        vector=vector,
        mapping=parse_fields(field_paths),
    )
    with Workspace(settings) as ws:
        report = ws.inspect(sample=sample)
    if json_output:
        print_json(report)
        return
    console.print(
        f"[bold]{report.name}[/] ({report.backend}): {report.points_count} points, "
        f"{report.dimension}-dim {report.distance}, "
        f"{report.indexed_vectors_count} in the HNSW index"
    )
    if report.index is not None:
        q, g = report.index.quantization, report.index.hnsw
        console.print(f"quantization {q.label}, HNSW m={g.m} ef_construct={g.ef_construct}")
    elif not report.index_measurable:
        console.print("quantization and HNSW: not measurable on this backend (plain vectors)")
    if report.bm25 is not None:
        b = report.bm25
        console.print(
            f"BM25 k1={b.k1:g} b={b.b:g} title_weight={b.title_weight} language={b.language}"
        )
    elif report.sparse_vector_name is not None:
        console.print("BM25: sparse vectors whose parameters the collection does not record")
    match = {True: "[green]matches[/]", False: "[red]DOES NOT match[/]", None: "unknown"}
    console.print(
        f"embedder {report.embedder} ({report.embedder_dimension}-dim): "
        f"{match[report.dimension_matches]}"
    )
    fields = Table(title=f"payload fields (sample of {report.sampled_points})")
    for col in ("field", "fill rate", "types", "index"):
        fields.add_column(col)
    for f in report.fields:
        fields.add_row(f.field, f"{f.fill_rate:.0%}", ", ".join(f.types), f.indexed or "")
    console.print(fields)
    layout = (
        f"[bold]{report.layout}[/] ({report.layout_share:.0%} of sampled points)"
        if report.layout
        else "none known (set each field with --field FIELD=PATH)"
    )
    mapping = Table(title=f"payload mapping · layout: {layout}")
    mapping.add_column("contract field")
    mapping.add_column("payload path")
    for k, v in report.mapping.items():
        mapping.add_row(k, escape(v) if v else "[dim]—[/]")
    console.print(mapping)
    for warning in report.warnings:
        err_console.print(f"[yellow]warning[/]: {escape(warning)}")
