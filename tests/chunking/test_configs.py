"""Chunking configurations by label, and the default grid."""

from __future__ import annotations

import pytest

from ragsonde.chunking import DEFAULT_GRID, parse_configs
from ragsonde.errors import QueryValidationError


def test_bad_configurations_are_validation_errors():
    with pytest.raises(QueryValidationError, match="SPLITTER SIZE/OVERLAP"):
        parse_configs(["recursive"])  # no size
    with pytest.raises(QueryValidationError, match="unknown splitter"):
        parse_configs(["semantic 200/0"])
    with pytest.raises(QueryValidationError, match="at most half"):
        parse_configs(["fixed 200/150"])
    with pytest.raises(QueryValidationError, match="repeat"):
        parse_configs(["fixed 200/0", "fixed  200 / 0"])


def test_labels_round_trip_and_the_default_grid_holds_the_benchmarked_windows():
    configs = parse_configs(["ragsonde", "recursive 400/200", "recursive-chars 800/0"])
    assert [c.label for c in configs] == ["ragsonde", "recursive 400/200", "recursive-chars 800/0"]
    assert [c.unit for c in configs] == ["tokens", "tokens", "characters"]
    assert configs[1].key == "recursive-400-200"
    labels = {c.label for c in DEFAULT_GRID}
    wanted = {"ragsonde", "recursive 200/0", "recursive 400/200", "recursive 800/400"}
    fixed_with_overlap = {"fixed 250/125", "fixed 400/200", "fixed 800/400"}  # Chroma's report
    assert wanted | {"fixed 200/0"} | fixed_with_overlap <= labels


@pytest.mark.slow
def test_a_configuration_that_fits_the_model_is_one_ingest_takes(embedder):
    """What the sweep may recommend is what ``ragsonde ingest`` accepts, with the real model:
    the grid's rule (overlap at most half) and ingest's agree, and ``fits`` says which sizes the
    model's window takes (fixed 250/125 was refused by ingest while the grid offered it)."""
    from ragsonde.chunking.sweep import _SPECIAL_TOKENS
    from ragsonde.ingest.chunker import ChunkerConfig

    window = int(embedder.max_tokens) - _SPECIAL_TOKENS
    grid = [*DEFAULT_GRID, *parse_configs(["recursive 254/127", "fixed 255/0", "sentence 100/50"])]
    for config in grid:
        if config.size == 0:  # ingest's own default
            continue
        if config.fits(window):
            made = ChunkerConfig.for_embedder(
                embedder, config.size, config.overlap, config.splitter
            )
            assert (made.size, made.overlap) == (config.size, config.overlap)
        else:
            with pytest.raises(QueryValidationError, match="longer than the model reads"):
                ChunkerConfig.for_embedder(embedder, config.size, config.overlap, config.splitter)
    fits = {c.label for c in grid if c.fits(window)}
    assert {"fixed 250/125", "recursive 254/127", "fixed 200/0"} <= fits
    assert not {"fixed 255/0", "recursive 400/200", "fixed 800/400"} & fits


def _result(label: str, scores: list[float], points: int):
    from ragsonde.chunking.report import ConfigResult, Costs, Lengths, QuestionResult

    (config,) = parse_configs([label])
    return ConfigResult(
        config=config,
        label=label,
        metrics={"recall": sum(scores) / len(scores)},
        costs=Costs(
            points=points,
            vector_memory_mb=0.0,
            ingest_s=0.0,
            embed_s=0.0,
            search_p50_ms=0.0,
            search_p95_ms=0.0,
        ),
        lengths=Lengths(p5=1, p50=1, p95=1, max=1, over_window=0, single_chunk_docs=0.0),
        per_question={
            f"q{i}": QuestionResult(metrics={"recall": s}, retrieved=[])
            for i, s in enumerate(scores)
        },
        chunks=[],
    )


def test_the_recommendation_is_never_a_configuration_ingest_refuses():
    """The cheapest configuration within noise of the best is recommended only among those the
    embedder's window takes; the others are named in a warning."""
    from ragsonde.chunking.verdict import judge

    scores = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    results = [
        _result("recursive 800/400", scores, points=100),  # the best and the cheapest
        _result("fixed 200/0", [*scores[:-1], 0.0], points=400),
        _result("fixed 250/125", [*scores[:-1], 0.0], points=500),
    ]
    warnings: list[str] = []
    verdict = judge(results, "recall", 0.05, 254, warnings)
    assert verdict.best == "recursive 800/400"
    assert verdict.recommended == "fixed 200/0"
    assert any("recursive 800/400" in w and "refuses" in w for w in warnings)
    # a character-counting embedder (no window): every size fits, the cheapest is chosen
    assert judge(results, "recall", 0.05, None, []).recommended == "recursive 800/400"
