"""ragsonde's retrieval inside the frameworks people already use, as optional extras.

- :mod:`ragsonde.integrations.langchain`: ``RagsondeRetriever``, a LangChain ``BaseRetriever``
  (``pip install 'ragsonde[langchain]'``).
- :mod:`ragsonde.integrations.llamaindex`: ``RagsondeRetriever``, a LlamaIndex ``BaseRetriever``
  (``pip install 'ragsonde[llamaindex]'``).

Both wrap a :class:`ragsonde.Retriever`: the chain gets ragsonde's retrieval (its store, embedder,
payload mapping, filters and modes), and each hit carries the contract fields and ragsonde's
per-stage timings in its metadata. Nothing here is imported by the rest of ragsonde.
"""

from __future__ import annotations

__all__: list[str] = []
