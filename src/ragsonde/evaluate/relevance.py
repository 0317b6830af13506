"""Where a benchmark's relevant ids live in the collection, and how to read them off a result.

Before any query runs, the relevant ids are looked up: at the mapped ``doc_id`` path first, else
at the payload field that :func:`~ragsonde.evaluate.resolve.resolve_doc_id_field` finds by sampling
(LangChain keeps the id at ``metadata.doc_id``). The report names the field it used. An
evaluation never scores quietly against ids it cannot see:

- no payload field holds any of the ids: :class:`RelevanceError`, naming the fields tried and the
  flag to set;
- more than half of the ids are missing from the collection: :class:`RelevanceError`, unless
  ``allow_missing``.

:class:`~ragsonde.errors.RelevanceError` is a VALIDATION_ERROR (the HTTP API answers 4xx), but
the CLI exits 1 with it, not 2: like a failed gate, the inputs were well-formed and the
evaluation itself failed (the issue's "exit 1, never a quiet 0.0").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ragsonde.errors import QueryValidationError, RelevanceError
from ragsonde.evaluate.report import IngestSummary, RelevanceField
from ragsonde.evaluate.resolve import POINT_ID, resolve_doc_id_field
from ragsonde.models import Result
from ragsonde.models.payload import PayloadMapping, get_path
from ragsonde.models.store import Store
from ragsonde.models.unread import Unread, id_text

__all__ = [
    "RelevanceError",
    "check_missing",
    "left_out",
    "resolve_relevance",
    "result_key",
    "stored_key",
    "unread_ids",
]


def resolve_relevance(
    store: Store, collection: str, ids: Sequence[str], mapping: PayloadMapping
) -> RelevanceField:
    """The payload path holding ``ids`` (see the module docstring); RelevanceError if none."""
    try:
        found = resolve_doc_id_field(store, collection, ids, mapping)
    except RelevanceError:
        raise
    except QueryValidationError as e:
        raise RelevanceError(e.message, field=e.field) from e
    return RelevanceField(
        path=found.path,
        matched=found.matched,
        total=found.total,
        sampled=found.sampled,
        configured=found.configured,
        tried=list(found.tried),
    )


def check_missing(missing: Sequence[str], total: int, allow_missing: bool) -> None:
    """RelevanceError when more than half of the ``total`` relevant ids are ``missing`` from
    the collection, unless ``allow_missing``."""
    if 2 * len(missing) > total and not allow_missing:
        raise RelevanceError(
            f"{len(missing)} of {total} relevant ids are not in the collection: more than half, "
            "so the metrics would mean little. Check that the benchmark belongs to this "
            "collection, set the field holding the document ids with --field doc_id=PATH, or "
            "pass --allow-missing to score them as misses anyway.",
            field="relevant",
        )


def result_key(path: str | None) -> Callable[[Result], str | None]:
    """Read a result's relevance id at ``path`` (``None`` or ``@id``: the point id) as text:
    an integer as its digits, any other type (a list, an object) as no id
    (:func:`~ragsonde.models.unread.id_text`; :func:`unread_ids` counts those)."""
    raw = stored_key(path)
    return lambda r: id_text(raw(r))


def unread_ids(results: Iterable[Result], path: str | None, unread: Unread) -> None:
    """Count in ``unread`` each result whose relevance id at ``path`` is of a type that is no
    id (:func:`result_key` reads it as none)."""
    raw = stored_key(path)
    for r in results:
        value = raw(r)
        if value is not None and id_text(value) is None:
            unread.add("doc_id", path or "doc_id", value, r.chunk_id)


def stored_key(path: str | None) -> Callable[[Result], Any]:
    """A result's relevance id at ``path`` as stored (``None`` or ``@id``: the point id).

    A result keeps every payload field a contract field did not consume in ``metadata``, so a
    path is read there; a path a contract field consumed (``url``) is read from that field.
    """
    if path is None or path == POINT_ID:
        return lambda r: r.chunk_id

    def key(r: Result) -> Any:
        value = get_path(r.metadata, path)
        if value is None and path in _CONTRACT:
            value = getattr(r, path)
        return value

    return key


_CONTRACT = frozenset({"url", "title", "section", "chunk_index", "text", "created_at"})


def left_out(skipped: Sequence[str], scored: int, ingested: IngestSummary | None) -> list[str]:
    """The warnings of what a run did not score: queries the benchmark's reader left out (no
    text in the queries file, unlabelled), and documents of an ingested corpus that could not be
    read (not in the collection: a query whose answer is one of them scores a miss). Both were
    listed only inside the report's JSON."""
    out = []
    if skipped:
        out.append(
            f"{len(skipped)} queries of the benchmark are not scored (the first: {skipped[0]}); "
            f"the metrics are over the other {scored}."
        )
    if ingested is not None and ingested.failed:
        first = ingested.failed[0]
        out.append(
            f"ingest: {len(ingested.failed)} documents of the corpus could not be read and are "
            f"not in '{ingested.collection}' (the first: {first.get('source')}: "
            f"{first.get('reason')}); a query whose relevant document is one of them scores a "
            "miss. Fix the corpus, then ingest it again."
        )
    return out
