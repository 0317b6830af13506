"""``ragsonde query``, ``ragsonde batch`` and ``ragsonde inspect``."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ragsonde.cli._common import (
    CollectionOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    console,
    err_console,
    exit_code_for,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app
from ragsonde.errors import (
    AuthError,
    ErrorCode,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
)
from ragsonde.models import BatchResponse, Response
from ragsonde.retriever import Retriever

__all__ = ["batch", "inspect", "query"]

_BAR = 20


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


def _score_bar(score: float) -> Text:
    filled = round(score * _BAR)
    return Text("█" * filled, style="green") + Text("░" * (_BAR - filled), style="dim")


def _render_response(resp: Response, model_load_ms: float | None = None) -> None:
    if resp.status == "error" and resp.error is not None:
        err_console.print(f"[bold red]{resp.error.code.value}[/]: {resp.error.message}")
        return
    table = Table(title=f"“{resp.query}” → {resp.collection}", show_lines=True, expand=True)
    table.add_column("#", justify="right", width=3)
    table.add_column("score", width=_BAR + 7)
    table.add_column("source", ratio=1)
    table.add_column("text", ratio=2)
    for r in resp.results:
        source = Text()
        if r.title:
            source.append(r.title, style="bold")
        if r.section:
            source.append(f"\n{r.section}", style="italic")
        if r.url:
            source.append(f"\n{r.url}", style="cyan")
        snippet = r.text if len(r.text) <= 300 else r.text[:300] + "…"
        table.add_row(
            str(r.rank),
            _score_bar(r.similarity_score) + Text(f" {r.similarity_score:.3f}"),
            source,
            Text(snippet),
        )
    if resp.results:
        console.print(table)
    else:
        console.print(f"No results for “{resp.query}” (threshold filters or an empty collection).")
    t = resp.timings
    console.print(
        f"[dim]{resp.total_results} results · embed {t.embedding_ms:.1f} ms · search "
        f"{t.search_ms:.1f} ms · post {t.post_processing_ms:.1f} ms · total {t.total_ms:.1f} ms"
        f" · {resp.model}[/]"
    )
    if model_load_ms:
        console.print(f"[dim]model load {model_load_ms:.0f} ms (once per process, not in embed)[/]")


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
def query(
    text: Annotated[str, typer.Argument(help="The question to search for.")],
    collection: CollectionOpt = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="How many results (1–100).")] = 5,
    threshold: Annotated[
        float, typer.Option("--threshold", "-t", help="Minimum similarity score, 0.0–1.0.")
    ] = 0.0,
    filters: Annotated[
        list[str] | None,
        typer.Option("--filter", "-f", help="FIELD=VALUE payload condition (repeat for any-of)."),
    ] = None,
    mode: Annotated[str, typer.Option(help="dense | sparse | hybrid")] = "dense",
    no_metadata: Annotated[
        bool, typer.Option("--no-metadata", help="Only chunk_id, text, score, rank.")
    ] = False,
    vectors: Annotated[bool, typer.Option("--vectors", help="Include stored vectors.")] = False,
    home: HomeOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Search a collection: query text → embedding → Qdrant → ranked chunks."""
    settings = settings_from_options(collection=collection, home=home)
    body: dict[str, Any] = {
        "query_text": text,
        "top_k": top_k,
        "score_threshold": threshold,
        "include_metadata": not no_metadata,
        "include_vectors": vectors,
        "mode": mode,
    }
    try:
        body["filters"] = _parse_filters(filters)
    except QueryValidationError as e:
        resp = Response.failure(
            e,
            query=text,
            query_id=str(uuid.uuid4()),
            top_k=top_k,
            collection=settings.collection,
            model=settings.embedder,
        )
        _emit(resp, json_output)
        raise typer.Exit(exit_code_for(e)) from e
    load_ms: float | None = None
    with Retriever(settings) as retriever:
        try:
            load_ms = _preload(retriever, settings.collection) if mode != "sparse" else None
        except RagsondeError as e:
            resp = Response.failure(
                e,
                query=text,
                query_id=str(uuid.uuid4()),
                top_k=top_k,
                collection=settings.collection,
                model=settings.embedder,
            )
        else:
            resp = retriever.retrieve(body)
    _emit(resp, json_output, load_ms)
    _exit_for([resp.error.code] if resp.error else [])


def _emit(resp: Response, json_output: bool, model_load_ms: float | None = None) -> None:
    if json_output:
        print_json(resp)
    else:
        _render_response(resp, model_load_ms)


def _read_batch_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise QueryValidationError(f"Batch file {path} does not exist.", field="file")
    raw = path.read_text(encoding="utf-8")
    stripped = raw.lstrip()
    try:
        if stripped.startswith("["):
            return {"queries": json.loads(raw)}
        if stripped.startswith("{") and path.suffix != ".jsonl":
            try:
                data = json.loads(raw)
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict):
                return data if "queries" in data else {"queries": [data]}
        queries = [json.loads(line) for line in raw.splitlines() if line.strip()]
    except json.JSONDecodeError as e:
        raise QueryValidationError(
            f"{path} is not valid JSON or JSON Lines (line {e.lineno}: {e.msg}).", field="file"
        ) from e
    return {"queries": queries}


@app.command()
@cli_errors
def batch(
    file: Annotated[Path, typer.Argument(help="JSON Lines (one query per line) or a JSON array.")],
    collection: CollectionOpt = None,
    home: HomeOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Run many queries at once: one embedding call, one search request."""
    settings = settings_from_options(home=home)
    body = _read_batch_file(file)
    if collection and "collection" not in body:
        body["collection"] = collection
    with Retriever(settings) as retriever:
        try:
            load_ms = _preload(retriever, str(body.get("collection") or settings.collection))
        except RagsondeError:
            load_ms = None  # the batch reports the store's error per query
        result: BatchResponse = retriever.retrieve_batch(body)
    if json_output:
        print_json(result)
    else:
        for resp in result.responses:
            _render_response(resp)
        console.print(
            f"[bold]batch {result.batch_id}[/]: {result.status}, {len(result.responses)} queries "
            f"in {result.batch_latency_ms:.1f} ms"
            + (f" (model load {load_ms:.0f} ms before it)" if load_ms else "")
        )
    _exit_for([r.error.code for r in result.responses if r.error])


@app.command()
@cli_errors
def inspect(
    collection: CollectionOpt = None,
    sample: Annotated[int, typer.Option(help="How many payloads to sample.")] = 1000,
    home: HomeOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Describe a collection: vectors, points, payload fields, the mapping that fits."""
    from ragsonde.embedders import get_embedder
    from ragsonde.store import open_store
    from ragsonde.store.inspect import inspect_collection

    settings = settings_from_options(collection=collection, home=home)
    store = open_store(settings)
    try:
        try:
            dim: int | None = get_embedder(settings).dimension
        except RagsondeError:
            dim = None
        report = inspect_collection(
            store,
            settings.collection,
            embedder=settings.embedder,
            embedder_dimension=dim,
            sample=sample,
        )
    finally:
        store.close()
    if json_output:
        print_json(report)
        return
    console.print(
        f"[bold]{report.name}[/] ({report.backend}): {report.points_count} points, "
        f"{report.dimension}-dim {report.distance}, "
        f"{report.indexed_vectors_count} in the HNSW index"
    )
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
    mapping = Table(title="payload mapping")
    mapping.add_column("contract field")
    mapping.add_column("payload path")
    for k, v in report.mapping.items():
        mapping.add_row(k, v or "[dim]—[/]")
    console.print(mapping)
