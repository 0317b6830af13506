"""What both adapters share: the search options (set at construction, overridden per call),
one query through a Retriever, errors raised, hits as metadata."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
from ragsonde.models.query import CollectionName
from ragsonde.retriever import Retriever

__all__ = ["CallOptions", "hit_metadata", "missing_extra", "retrieve_or_raise"]

#: The names frameworks' users pass per call, each to the option it sets: LangChain's own
#: retrievers take ``k`` and ``filter``; ragsonde's query contract says ``top_k`` and ``filters``.
_ALIASES = {"k": "top_k", "filter": "filters"}

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


class CallOptions(BaseModel):
    """The search options of one adapter call: the constructor's, with what the call overrides."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    top_k: int = Field(default=5, ge=1)
    score_threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    filters: dict[str, Any] | None = None
    mode: Literal["dense", "sparse", "hybrid"] = "dense"
    collection: CollectionName | None = None

    @classmethod
    def constructed(cls, given: Mapping[str, Any]) -> CallOptions:
        """An adapter's constructor options (``k``/``top_k`` …) checked as one call's are: a
        bad value is a :class:`QueryValidationError` at construction, not a pydantic error
        there and a ragsonde one at the first query (``mode="nope"`` was only the latter)."""
        return cls().overlay(given, what="option")

    def overlay(self, overrides: Mapping[str, Any], what: str = "per-call option") -> CallOptions:
        """These options with the call's ``overrides`` (``k``/``top_k``, ``filter``/``filters``,
        ``score_threshold``, ``mode``, ``collection``); an unknown name or a bad value raises
        :class:`QueryValidationError` instead of being ignored."""
        named = {_ALIASES.get(k, k): v for k, v in overrides.items()}
        if len(named) < len(overrides):
            both = sorted(k for k in overrides if k in _ALIASES and _ALIASES[k] in overrides)
            raise QueryValidationError(
                f"Pass {both[0]} or {_ALIASES[both[0]]}, not both.", field=_ALIASES[both[0]]
            )
        try:
            # strictly: k=True was a top_k of 1, k="2" a 2
            return CallOptions.model_validate({**self.model_dump(), **named}, strict=True)
        except ValidationError as e:
            err = e.errors()[0]
            field = ".".join(str(part) for part in err["loc"])
            raise QueryValidationError(f"Bad {what} {field}: {err['msg']}", field=field) from e


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
    options: CallOptions,
) -> Response:
    """One query; an error response is raised as the ragsonde error it carries."""
    body: dict[str, Any] = {
        "query_text": query,
        "top_k": options.top_k,
        "score_threshold": options.score_threshold,
        "mode": options.mode,
    }
    if options.filters:
        body["filters"] = dict(options.filters)
    resp = retriever.retrieve(body, collection=options.collection)
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
