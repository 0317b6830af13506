"""The old import path of :mod:`ragsonde.store.index_spec`, kept for one release.

The build-time index description moved to :mod:`ragsonde.store.index_spec` (what a collection is
built with) and tune's :class:`~ragsonde.tune.variants.VariantSpec` to :mod:`ragsonde.tune`.
``ragsonde.config`` and ``ragsonde.retriever`` still import these names from here while their
configuration is reworked (issue 28); new code imports :mod:`ragsonde.store.index_spec`.
"""

from __future__ import annotations

from ragsonde.store.index_spec import (
    BM25_LANGUAGES,
    DEFAULT_BM25_LANGUAGE,
    DEFAULT_FULL_SCAN_KB,
    QUANTIZATIONS,
    Bm25Params,
    Hnsw,
    IndexConfig,
    Quantization,
    bm25_language_named,
    measurable,
    quantization_named,
)

__all__ = [
    "BM25_LANGUAGES",
    "DEFAULT_BM25_LANGUAGE",
    "DEFAULT_FULL_SCAN_KB",
    "QUANTIZATIONS",
    "Bm25Params",
    "Hnsw",
    "IndexConfig",
    "Quantization",
    "bm25_language_named",
    "measurable",
    "quantization_named",
]
