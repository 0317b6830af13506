"""The search flags, shared by ``query``, ``batch``, ``eval`` and ``explain``
(:func:`search_options` adds them to a command): one flag per
:class:`~ragsonde.models.params.SearchParams` field, with the same name (``--hnsw-ef`` is
``search.hnsw_ef``). A flag not given is ``None`` and inherits (environment, config file,
default); a flag given is the top layer of the settings (:mod:`ragsonde.config_sources`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar, get_type_hints

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
    "search_options",
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
        "--fusion",
        help="hybrid: dbsf | rrf | linear \\[default: search.fusion, dbsf]",
        rich_help_panel=_PANEL,
    ),
]
RrfKOpt = Annotated[
    int | None,
    typer.Option(
        "--rrf-k",
        help="fusion rrf: the k of 1/(k + rank) \\[default: search.rrf_k, else 60]",
        rich_help_panel=_PANEL,
    ),
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
    typer.Option(
        "--prefetch-limit",
        help="hybrid: candidates per side \\[default: search.prefetch_limit, else max(4 × "
        "top_k, 100)]",
        rich_help_panel=_PANEL,
    ),
]
HnswEfOpt = Annotated[
    int | None,
    typer.Option(
        "--hnsw-ef",
        help="HNSW search breadth \\[default: search.hnsw_ef, else the engine's]",
        rich_help_panel=_PANEL,
    ),
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
        help="Quantized collection: rescore with the original vectors \\[default: "
        "search.quantization_rescore, else on]",
        rich_help_panel=_PANEL,
        show_default=False,
    ),
]
OversamplingOpt = Annotated[
    float | None,
    typer.Option(
        "--oversampling",
        help="Quantized collection: candidates × top_k \\[default: "
        "search.quantization_oversampling, else 1]",
        rich_help_panel=_PANEL,
    ),
]


def _weights(text: str | None) -> list[float] | str | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        return text  # the settings' validation names the field and the rule


#: The flags' parameter names in a command (``threshold`` is ``score_threshold``, ``rescore``
#: and ``oversampling`` the quantization ones).
_FLAGS = {
    "mode": "mode",
    "top_k": "top_k",
    "threshold": "score_threshold",
    "fusion": "fusion",
    "rrf_k": "rrf_k",
    "fusion_weights": "fusion_weights",
    "prefetch_limit": "prefetch_limit",
    "hnsw_ef": "hnsw_ef",
    "exact": "exact",
    "rescore": "quantization_rescore",
    "oversampling": "quantization_oversampling",
}


#: Each flag's option, by its parameter name.
_OPTIONS: dict[str, Any] = {
    "mode": ModeOpt,
    "top_k": TopKOpt,
    "threshold": ThresholdOpt,
    "fusion": FusionOpt,
    "rrf_k": RrfKOpt,
    "fusion_weights": FusionWeightsOpt,
    "prefetch_limit": PrefetchOpt,
    "hnsw_ef": HnswEfOpt,
    "exact": ExactOpt,
    "rescore": RescoreOpt,
    "oversampling": OversamplingOpt,
}

_R = TypeVar("_R")


def search_options(*names: str) -> Callable[[Callable[..., _R]], Callable[..., _R]]:
    """Add the search flags ``names`` (default: all) to a command, as sqlite-utils shares its
    options: the command declares one parameter, ``search``, and receives the table the flags
    given make (:func:`search_flags`; ``None`` when none is given).

    >>> @app.command()                                                  # doctest: +SKIP
    ... @search_options("mode", "hnsw_ef")
    ... def query(text: str, search: dict[str, Any] | None = None) -> None: ...
    """
    chosen = names or tuple(_OPTIONS)
    unknown = [n for n in chosen if n not in _OPTIONS]
    if unknown:
        raise ValueError(f"no search flag named {unknown}")  # a bug in a command, not input

    def decorate(fn: Callable[..., _R]) -> Callable[..., _R]:
        sig = inspect.signature(fn)
        if "search" not in sig.parameters:
            raise TypeError(f"{fn.__name__} must take a `search` parameter")

        @functools.wraps(fn)
        def command(*args: Any, **kwargs: Any) -> _R:
            given = {name: kwargs.pop(name, None) for name in chosen}
            return fn(*args, search=search_flags(given), **kwargs)

        # the annotations evaluated (the module says ``from __future__ import annotations``):
        # Typer reads them from this signature, which it does not evaluate again
        hints = get_type_hints(fn, include_extras=True)
        kept = [
            p.replace(annotation=hints.get(p.name, p.annotation))
            for p in sig.parameters.values()
            if p.name != "search"
        ]
        flags = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=opt)
            for name, opt in ((n, _OPTIONS[n]) for n in chosen)
        ]
        command.__signature__ = sig.replace(parameters=[*kept, *flags])  # type: ignore[attr-defined]
        own = {k: v for k, v in hints.items() if k != "search"}
        command.__annotations__ = {**own, **{n: _OPTIONS[n] for n in chosen}}
        return command

    return decorate


def search_flags(given: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``search`` table made by the search flags among a command's arguments (``given``,
    e.g. its ``locals()``): those not given (``None``) inherit; ``None``: none given."""
    out = {name: given[flag] for flag, name in _FLAGS.items() if given.get(flag) is not None}
    if "fusion_weights" in out:
        out["fusion_weights"] = _weights(out["fusion_weights"])
    return out or None
