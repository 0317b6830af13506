"""A LlamaIndex retriever over ragsonde (``pip install 'ragsonde[llamaindex]'``).

>>> from ragsonde import Retriever                                       # doctest: +SKIP
>>> from ragsonde.integrations.llamaindex import RagsondeRetriever       # doctest: +SKIP
>>> nodes = RagsondeRetriever(Retriever(), top_k=3).retrieve("how does lidar work?")
...                                                                       # doctest: +SKIP

Each ``NodeWithScore`` holds a ``TextNode`` (the chunk text, the point id as ``id_``) scored by
ragsonde's ``similarity_score``; the node's metadata carries the payload's other fields, the
contract fields and ragsonde's per-stage ``timings`` for the query. Plug it into a query engine
with ``RetrieverQueryEngine.from_args(RagsondeRetriever(...))``.

The constructor's options are the defaults; ``retrieve`` and ``aretrieve`` take the same names
as keywords (``top_k`` or ``k``, ``filters`` or ``filter``, ``score_threshold``, ``mode``,
``collection``) to override them for one call, with a string or a ``QueryBundle``:

>>> RagsondeRetriever(Retriever()).retrieve(QueryBundle("lidar"), top_k=1)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.integrations._common import (
    CallOptions,
    hit_metadata,
    missing_extra,
    retrieve_or_raise,
)
from ragsonde.retriever import Retriever
from ragsonde.workspace import require

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType, TextNode
except ImportError as e:  # pragma: no cover - depends on the environment
    raise missing_extra("llamaindex", e) from e

__all__ = ["RagsondeRetriever"]

#: The options of the call under way: LlamaIndex hands ``_retrieve`` only the query bundle, so
#: ``retrieve``/``aretrieve`` leave them here (a context variable: concurrent calls stay apart).
_CALL: ContextVar[CallOptions | None] = ContextVar("ragsonde_llamaindex_call", default=None)


class RagsondeRetriever(BaseRetriever):
    """LlamaIndex's retriever interface over a :class:`ragsonde.Retriever`.

    Errors are raised as ragsonde errors, never returned as an empty list.
    """

    def __init__(
        self,
        retriever: Retriever,
        *,
        top_k: int = 5,
        score_threshold: float = 0.0,
        filters: Mapping[str, Any] | None = None,
        mode: str = "dense",
        collection: str | None = None,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        require(retriever, Retriever, "retriever")  # a dict failed at the first query
        self.retriever = retriever
        self.options = CallOptions.constructed(  # a bad value: QueryValidationError, as per call
            {
                "top_k": top_k,
                "score_threshold": score_threshold,
                "filters": dict(filters) if isinstance(filters, Mapping) else filters,
                "mode": mode,
                "collection": collection,
            }
        )
        super().__init__(callback_manager=callback_manager)

    def retrieve(self, str_or_query_bundle: QueryType, **overrides: Any) -> list[NodeWithScore]:
        """LlamaIndex's ``retrieve``; keywords override the constructor's options for this call."""
        _check_query(str_or_query_bundle)
        token = _CALL.set(self.options.overlay(overrides))
        try:
            return super().retrieve(str_or_query_bundle)
        finally:
            _CALL.reset(token)

    async def aretrieve(
        self, str_or_query_bundle: QueryType, **overrides: Any
    ) -> list[NodeWithScore]:
        """LlamaIndex's ``aretrieve``; keywords override the constructor's options."""
        _check_query(str_or_query_bundle)
        token = _CALL.set(self.options.overlay(overrides))
        try:
            return await super().aretrieve(str_or_query_bundle)
        finally:
            _CALL.reset(token)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        options = _CALL.get() or self.options
        resp = retrieve_or_raise(self.retriever, query_bundle.query_str, options)
        return [
            NodeWithScore(
                node=TextNode(id_=r.chunk_id, text=r.text, metadata=hit_metadata(r, resp)),
                score=r.similarity_score,
            )
            for r in resp.results
        ]


def _check_query(query: object) -> None:
    """A string or a ``QueryBundle``: ``None`` failed in LlamaIndex's event model with a pydantic
    error, bytes with an AttributeError."""
    if not isinstance(query, str | QueryBundle):
        raise QueryValidationError(
            f"query_text: give a string or a QueryBundle, not {type(query).__name__}.",
            field="query_text",
        )
