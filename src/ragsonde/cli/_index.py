"""Options that choose how a new collection is built (``ingest``, ``push``): quantization,
HNSW and BM25. They become the ``index`` settings (``index.quantization``, ``index.hnsw_m``, …),
which validate them; unset, those settings (``RAGSONDE_INDEX__*``, ``[index]``) apply, so each
help names its variable."""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = [
    "Bm25BOpt",
    "Bm25K1Opt",
    "Bm25LanguageOpt",
    "Bm25TitleWeightOpt",
    "HnswEfConstructOpt",
    "HnswMOpt",
    "QuantizationOpt",
]

#: ``--quantization``: a name from ``ragsonde.models.index.QUANTIZATIONS``.
QuantizationOpt = Annotated[
    str | None,
    typer.Option(
        "--quantization",
        help="Quantization of a NEW collection: none | scalar | binary-1bit | binary-1.5bit | "
        "binary-2bit | product (pq-x4…pq-x64) | turbo (turbo-1bit…turbo-8bit) "
        "\\[default: RAGSONDE_INDEX__QUANTIZATION, else none]",
        show_default=False,
    ),
]
HnswMOpt = Annotated[
    int | None,
    typer.Option(
        "--hnsw-m",
        help="HNSW edges per node of a NEW collection \\[default: RAGSONDE_INDEX__HNSW_M, else 16]",
        min=2,
        max=128,
    ),
]
HnswEfConstructOpt = Annotated[
    int | None,
    typer.Option(
        "--hnsw-ef-construct",
        help="HNSW build candidate list of a NEW collection "
        "\\[default: RAGSONDE_INDEX__HNSW_EF_CONSTRUCT, else 100]",
        min=4,
        max=2000,
    ),
]
Bm25K1Opt = Annotated[
    float | None,
    typer.Option(
        "--bm25-k1",
        help="BM25 term-frequency saturation (--sparse) "
        "\\[default: RAGSONDE_INDEX__BM25_K1, else 1.2]",
    ),
]
Bm25BOpt = Annotated[
    float | None,
    typer.Option(
        "--bm25-b",
        help="BM25 length normalisation (--sparse) \\[default: RAGSONDE_INDEX__BM25_B, else 0.75]",
    ),
]
Bm25TitleWeightOpt = Annotated[
    int | None,
    typer.Option(
        "--bm25-title-weight",
        help="Extra times a chunk's title counts in its BM25 vector (--sparse) "
        "\\[default: RAGSONDE_INDEX__BM25_TITLE_WEIGHT, else 0]",
        min=0,
        max=5,
    ),
]
Bm25LanguageOpt = Annotated[
    str | None,
    typer.Option(
        "--bm25-language",
        help="Language of the BM25 stopwords and stemmer (--sparse): english | german | french | "
        "… (ragsonde.models.index.BM25_LANGUAGES) \\[default: RAGSONDE_INDEX__BM25_LANGUAGE, else "
        "english]",
        show_default=False,
    ),
]


def index_flags(**given: Any) -> dict[str, Any] | None:
    """The ``index`` table the flags given make (``None`` values: not given; ``None``: none)."""
    out = {k: v for k, v in given.items() if v is not None}
    return out or None
