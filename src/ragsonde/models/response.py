"""The answer side of the contract: :class:`Result`, :class:`Response`, :class:`BatchResponse`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from ragsonde.errors import ErrorCode, RagsondeError
from ragsonde.models.params import IndexParams, SearchParams
from ragsonde.models.text import printable
from ragsonde.models.unread import Unread

__all__ = [
    "MINIMAL_RESULT_FIELDS",
    "BatchResponse",
    "ErrorInfo",
    "Response",
    "Result",
    "Status",
    "Timings",
    "empty_text_warning",
    "utc_now",
]

Status = Literal["success", "partial", "error"]
#: A string echoed from input, which may be input that was refused for holding invalid Unicode:
#: lone surrogates become U+FFFD so the answer can always be written as JSON.
Echo = Annotated[str, AfterValidator(printable)]
#: What a result carries when the query asked ``include_metadata: false``.
MINIMAL_RESULT_FIELDS = ("chunk_id", "text", "similarity_score", "rank")


def utc_now() -> str:
    """The current time, ISO 8601, UTC."""
    return datetime.now(UTC).isoformat()


class ErrorInfo(BaseModel):
    """The contract's error object."""

    model_config = ConfigDict(frozen=True)

    code: ErrorCode
    message: Echo

    @classmethod
    def from_exception(cls, exc: RagsondeError) -> ErrorInfo:
        return cls(code=exc.code, message=exc.message)


class Timings(BaseModel):
    """Per-stage wall time in milliseconds, measured with a monotonic clock."""

    embedding_ms: Annotated[float, Field(ge=0)] = 0.0
    search_ms: Annotated[float, Field(ge=0)] = 0.0
    post_processing_ms: Annotated[float, Field(ge=0)] = 0.0
    total_ms: Annotated[float, Field(ge=0)] = 0.0


class Result(BaseModel):
    """One retrieved chunk."""

    model_config = ConfigDict(extra="forbid")

    chunk_id: str = Field(description="The Qdrant point id, as a string.")
    text: str = Field(description="The stored chunk text, exactly as stored.")
    url: str | None = None
    title: str | None = None
    section: str | None = None
    chunk_index: Annotated[int, Field(ge=0)] | None = None
    similarity_score: Annotated[float, Field(ge=0.0, le=1.0)] = Field(
        description="The engine's score mapped into [0, 1], higher is closer: cosine (and dot) "
        "similarity clamped into [0, 1]; 1 / (1 + d) for Euclid and Manhattan distance d. "
        "score_threshold applies to this value."
    )
    raw_score: float | None = Field(
        default=None,
        description="The engine's own score: the similarity for Cosine and Dot, the distance "
        "(lower is closer) for Euclid and Manhattan.",
    )
    rank: Annotated[int, Field(ge=0)] = Field(description="0-based position in the list.")
    created_at: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    vector: list[float] | None = Field(default=None, description="Only with include_vectors.")

    _minimal: bool = PrivateAttr(default=False)

    def minimal(self) -> Result:
        """This result, marked to serialize only ``MINIMAL_RESULT_FIELDS`` (and a vector)."""
        self._minimal = True
        return self

    @model_serializer(mode="wrap")
    def _serialize(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.vector is None:
            data.pop("vector", None)
        if self._minimal:
            keep = (*MINIMAL_RESULT_FIELDS, "vector")
            data = {k: v for k, v in data.items() if k in keep}
        return data


class Response(BaseModel):
    """The answer to one query; ``status == "error"`` carries ``error`` and no results."""

    query: Echo
    query_id: Echo
    status: Status
    results: list[Result] = Field(default_factory=list)
    total_results: Annotated[int, Field(ge=0)] = 0
    top_k_requested: int
    collection: Echo
    model: Echo
    timestamp: str = Field(default_factory=utc_now)
    timings: Timings = Field(default_factory=Timings)
    search: SearchParams | None = Field(
        default=None,
        description="The search parameters that ran (the settings with the query's own on "
        "top); absent on an error before the search was settled.",
    )
    index: IndexParams | None = Field(
        default=None,
        description="How the collection searched was built, as far as it records "
        "(quantization, HNSW graph, BM25 parameters).",
    )
    error: ErrorInfo | None = None
    warnings: list[str] = Field(
        default_factory=list,
        description="What the results' payloads held that could not be read as their field, "
        "one line per field and type (a list where the text should be: that text reads as "
        "empty, the value is kept in metadata); empty when there is nothing to say.",
    )

    _unread: Unread = PrivateAttr(default_factory=Unread)

    @property
    def unread(self) -> Unread:
        """The payload values its results left unread, counted (worded in ``warnings``)."""
        return self._unread

    def noting(self, unread: Unread) -> Response:
        """This response with ``unread`` counted and worded in its warnings."""
        self._unread = unread
        self.warnings = [*self.warnings, *unread.warnings()]
        return self

    @classmethod
    def failure(
        cls,
        exc: RagsondeError,
        *,
        query: str,
        query_id: str,
        top_k: int,
        collection: str,
        model: str,
        timings: Timings | None = None,
    ) -> Response:
        """An error response for ``exc``."""
        return cls(
            query=query,
            query_id=query_id,
            status="error",
            results=[],
            total_results=0,
            top_k_requested=top_k,
            collection=collection,
            model=model,
            timings=timings or Timings(),
            error=ErrorInfo.from_exception(exc),
        )


class BatchResponse(BaseModel):
    """One response per query, in input order."""

    batch_id: Echo
    status: Status
    responses: list[Response]
    batch_latency_ms: Annotated[float, Field(ge=0)]
    timestamp: str = Field(default_factory=utc_now)


def empty_text_warning(resp: Response, fix: str) -> str | None:
    """Why ``resp`` shows no text, when every result's text is empty (a collection keeping its
    text at a payload path no layout reads), ending with ``fix``, the surface's own way to name
    the path; None when any result has text, or there are none."""
    if not resp.results or any(r.text.strip() for r in resp.results):
        return None
    n = len(resp.results)
    return (
        f"{n} of {n} results have empty text: the text is probably at another payload path; {fix}"
    )
