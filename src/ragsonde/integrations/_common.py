"""What both adapters share: one query through a Retriever, errors raised, hits as metadata."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragsonde.errors import (
    AuthError,
    CollectionNotFoundError,
    DimensionMismatchError,
    EmbeddingError,
    ErrorCode,
    LlmError,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
)
from ragsonde.models import Response, Result
from ragsonde.retriever import Retriever

__all__ = ["hit_metadata", "missing_extra", "retrieve_or_raise"]

#: Error code -> the exception a framework caller gets (the Retriever answers errors in-band).
_ERRORS: dict[ErrorCode, type[RagsondeError]] = {
    cls.code: cls
    for cls in (
        QueryValidationError,
        StoreConnectionError,
        AuthError,
        CollectionNotFoundError,
        EmbeddingError,
        DimensionMismatchError,
        LlmError,
    )
}


def missing_extra(extra: str, exc: ImportError) -> ImportError:
    """The ImportError that says which install fixes it."""
    err = ImportError(
        f"This adapter needs the {extra} extra: pip install 'ragsonde[{extra}]' ({exc})."
    )
    err.__cause__ = exc
    return err


def retrieve_or_raise(
    retriever: Retriever,
    query: str,
    *,
    top_k: int,
    score_threshold: float,
    filters: Mapping[str, Any] | None,
    mode: str,
    collection: str | None,
) -> Response:
    """One query; an error response is raised as the ragsonde error it carries."""
    body: dict[str, Any] = {
        "query_text": query,
        "top_k": top_k,
        "score_threshold": score_threshold,
        "mode": mode,
    }
    if filters:
        body["filters"] = dict(filters)
    resp = retriever.retrieve(body, collection=collection)
    if resp.error is not None:
        cls = _ERRORS[resp.error.code]
        exc = cls.__new__(cls)  # the message is already written; skip the per-class templates
        RagsondeError.__init__(exc, resp.error.message)
        raise exc
    return resp


def hit_metadata(result: Result, resp: Response) -> dict[str, Any]:
    """A hit's metadata for a framework document: payload extras, then the contract fields,
    then where it came from and ragsonde's timings for the whole query."""
    return {
        **result.metadata,
        "chunk_id": result.chunk_id,
        "url": result.url,
        "title": result.title,
        "section": result.section,
        "chunk_index": result.chunk_index,
        "created_at": result.created_at,
        "similarity_score": result.similarity_score,
        "raw_score": result.raw_score,
        "rank": result.rank,
        "collection": resp.collection,
        "model": resp.model,
        "query_id": resp.query_id,
        "timings": resp.timings.model_dump(),
    }
