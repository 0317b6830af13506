"""A LangChain retriever over ragsonde (``pip install 'ragsonde[langchain]'``).

>>> from ragsonde import Retriever                                       # doctest: +SKIP
>>> from ragsonde.integrations.langchain import RagsondeRetriever        # doctest: +SKIP
>>> docs = RagsondeRetriever(retriever=Retriever(), k=3).invoke("how does lidar work?")
...                                                                       # doctest: +SKIP
>>> docs = retriever.invoke("how does lidar work?", k=1, filter={"doc_id": "lidar"})
...                                                                       # doctest: +SKIP

The constructor's options (``k`` or ``top_k``, ``filter`` or ``filters``, ``score_threshold``,
``mode``, ``collection``) are the defaults; the same names passed to ``invoke``/``ainvoke``
override them for that call, as LangChain's own retrievers do. The class passes LangChain's
standard suite (``langchain_tests``' ``RetrieversIntegrationTests``) unmodified.

Each ``Document`` has the chunk text as ``page_content``, the point id as ``id``, and in
``metadata`` the payload's other fields, the contract fields (``url``, ``title``,
``similarity_score``, ``rank``, …) and ragsonde's per-stage ``timings`` for the query.
"""

from __future__ import annotations

from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.integrations._common import (
    CallOptions,
    hit_metadata,
    missing_extra,
    retrieve_or_raise,
)
from ragsonde.retriever import Retriever

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as e:  # pragma: no cover - depends on the environment
    raise missing_extra("langchain", e) from e

from pydantic import AliasChoices, ConfigDict, Field, model_validator

__all__ = ["RagsondeRetriever"]

#: The constructor's search options, by every name it takes.
_SEARCH_OPTIONS = frozenset(
    {"top_k", "k", "score_threshold", "filters", "filter", "mode", "collection"}
)


class RagsondeRetriever(BaseRetriever):
    """LangChain's retriever interface over a :class:`ragsonde.Retriever`.

    Errors are raised as ragsonde errors (``CollectionNotFoundError``, ``QueryValidationError``,
    …), never returned as an empty list.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Retriever
    top_k: int = Field(default=5, ge=1, validation_alias=AliasChoices("top_k", "k"))
    score_threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    filters: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("filters", "filter")
    )
    mode: str = "dense"
    collection: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _check_options(cls, data: Any) -> Any:
        """The search options checked as one call's are: a bad value is a QueryValidationError
        (pydantic's ValidationError before; ``mode="nope"`` failed only at the first query)."""
        if isinstance(data, dict):
            given = data.get("retriever")
            if not isinstance(given, Retriever):
                raise QueryValidationError(
                    "retriever must be a ragsonde Retriever "
                    f"(RagsondeRetriever(retriever=Retriever())), not {type(given).__name__}.",
                    field="retriever",
                )
            CallOptions.constructed({k: v for k, v in data.items() if k in _SEARCH_OPTIONS})
        return data

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        kwargs.pop("verbose", None)  # LangChain's own flag, handed on with the caller's options
        defaults = CallOptions(
            top_k=self.top_k,
            score_threshold=self.score_threshold,
            filters=self.filters,
            mode=self.mode,
            collection=self.collection,
        )
        resp = retrieve_or_raise(self.retriever, query, defaults.overlay(kwargs))
        return [
            Document(page_content=r.text, id=r.chunk_id, metadata=hit_metadata(r, resp))
            for r in resp.results
        ]
