"""The search flags, shared by ``query``, ``batch``, ``eval`` and ``serve``: one flag per
:class:`~ragsonde.models.params.SearchParams` field, with the same name (``--hnsw-ef`` is
``search.hnsw_ef``). A flag not given is ``None`` and inherits (environment, config file,
default); a flag given is the top layer of the settings (:mod:`ragsonde.config_sources`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = [
    "ExactOpt",
    "FusionOpt",
    "FusionWeightsOpt",
    "HnswEfOpt",
    "ModeOpt",
    "OversamplingOpt",
    "PrefetchOpt",
    "RescoreOpt",
    "RrfKOpt",
    "ThresholdOpt",
    "TopKOpt",
    "search_flags",
]

_PANEL = "Search (search.* settings)"

ModeOpt = Annotated[
    str | None,
    typer.Option(
        "--mode",
        help="dense | sparse | hybrid \\[default: search.mode, dense]",
        rich_help_panel=_PANEL,
    ),
]
TopKOpt = Annotated[
    int | None,
    typer.Option(
        "--top-k",
        "-k",
        help="How many results \\[default: search.top_k, 5]",
        rich_help_panel=_PANEL,
    ),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        "-t",
        help="Minimum similarity score, 0.0–1.0 \\[default: search.score_threshold, 0]",
        rich_help_panel=_PANEL,
    ),
]
FusionOpt = Annotated[
    str | None,
    typer.Option(
        "--fusion", help="hybrid: dbsf | rrf | linear \\[default: dbsf]", rich_help_panel=_PANEL
    ),
]
RrfKOpt = Annotated[
    int | None, typer.Option("--rrf-k", help="fusion rrf: its k.", rich_help_panel=_PANEL)
]
FusionWeightsOpt = Annotated[
    str | None,
    typer.Option(
        "--fusion-weights",
        help="DENSE,SPARSE weights, e.g. 0.7,0.3 (linear; weighted rrf).",
        rich_help_panel=_PANEL,
    ),
]
PrefetchOpt = Annotated[
    int | None,
    typer.Option("--prefetch-limit", help="hybrid: candidates per side.", rich_help_panel=_PANEL),
]
HnswEfOpt = Annotated[
    int | None,
    typer.Option("--hnsw-ef", help="HNSW search breadth.", rich_help_panel=_PANEL),
]
ExactOpt = Annotated[
    bool | None,
    typer.Option(
        "--exact/--no-exact",
        help="Exact (brute-force) search instead of HNSW \\[default: search.exact, off]",
        rich_help_panel=_PANEL,
        show_default=False,
    ),
]
RescoreOpt = Annotated[
    bool | None,
    typer.Option(
        "--rescore/--no-rescore",
        help="Quantized collection: rescore with the original vectors.",
        rich_help_panel=_PANEL,
        show_default=False,
    ),
]
OversamplingOpt = Annotated[
    float | None,
    typer.Option(
        "--oversampling", help="Quantized collection: candidates × top_k.", rich_help_panel=_PANEL
    ),
]


def _weights(text: str | None) -> list[float] | str | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        return text  # the settings' validation names the field and the rule


def search_flags(
    *,
    mode: str | None = None,
    top_k: int | None = None,
    threshold: float | None = None,
    fusion: str | None = None,
    rrf_k: int | None = None,
    fusion_weights: str | None = None,
    prefetch_limit: int | None = None,
    hnsw_ef: int | None = None,
    exact: bool | None = None,
    rescore: bool | None = None,
    oversampling: float | None = None,
) -> dict[str, Any] | None:
    """The ``search`` table the flags given make (``None``: none given)."""
    given = {
        "mode": mode,
        "top_k": top_k,
        "score_threshold": threshold,
        "fusion": fusion,
        "rrf_k": rrf_k,
        "fusion_weights": _weights(fusion_weights),
        "prefetch_limit": prefetch_limit,
        "hnsw_ef": hnsw_ef,
        "exact": exact,
        "quantization_rescore": rescore,
        "quantization_oversampling": oversampling,
    }
    out = {k: v for k, v in given.items() if v is not None}
    return out or None
