"""A LlamaIndex retriever over ragsonde (``pip install 'ragsonde[llamaindex]'``).

>>> from ragsonde import Retriever                                       # doctest: +SKIP
>>> from ragsonde.integrations.llamaindex import RagsondeRetriever       # doctest: +SKIP
>>> nodes = RagsondeRetriever(Retriever(), top_k=3).retrieve("how does lidar work?")
...                                                                       # doctest: +SKIP

Each ``NodeWithScore`` holds a ``TextNode`` (the chunk text, the point id as ``id_``) scored by
ragsonde's ``similarity_score``; the node's metadata carries the payload's other fields, the
contract fields and ragsonde's per-stage ``timings`` for the query. Plug it into a query engine
with ``RetrieverQueryEngine.from_args(RagsondeRetriever(...))``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragsonde.integrations._common import hit_metadata, missing_extra, retrieve_or_raise
from ragsonde.retriever import Retriever

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as e:  # pragma: no cover - depends on the environment
    raise missing_extra("llamaindex", e) from e

__all__ = ["RagsondeRetriever"]


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
        self.retriever = retriever
        self.top_k = top_k
        self.score_threshold = score_threshold
        self.filters = dict(filters) if filters else None
        self.mode = mode
        self.collection = collection
        super().__init__(callback_manager=callback_manager)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        resp = retrieve_or_raise(
            self.retriever,
            query_bundle.query_str,
            top_k=self.top_k,
            score_threshold=self.score_threshold,
            filters=self.filters,
            mode=self.mode,
            collection=self.collection,
        )
        return [
            NodeWithScore(
                node=TextNode(id_=r.chunk_id, text=r.text, metadata=hit_metadata(r, resp)),
                score=r.similarity_score,
            )
            for r in resp.results
        ]
