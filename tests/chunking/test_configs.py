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
