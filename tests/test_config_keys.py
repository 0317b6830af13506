"""Configuration files refuse keys they do not know (issue 33): a misspelt key was ignored and
the default used. The error names the file, the key and the closest valid one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsonde.config import load_settings
from ragsonde.errors import QueryValidationError


@pytest.mark.parametrize(
    ("text", "key", "guess"),
    [
        ('colection = "docs"\n', "colection", "collection"),
        ("[search]\nhnsw_eff = 16\n", "hnsw_eff", "hnsw_ef"),
        ("[index]\nhnsw_mm = 16\n", "hnsw_mm", "hnsw_m"),
    ],
)
def test_a_settings_file_with_an_unknown_key_is_refused(
    tmp_path: Path, text: str, key: str, guess: str
):
    path = tmp_path / "ragsonde.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(QueryValidationError) as err:
        load_settings(config=path)
    assert f"unknown key '{key}' (did you mean '{guess}'?)" in err.value.message
    assert str(path) in err.value.message


def test_a_settings_file_with_known_and_old_flat_keys_still_loads(tmp_path: Path):
    path = tmp_path / "ragsonde.toml"
    path.write_text('collection = "docs"\nqdrant_url = ":memory:"\n[search]\nhnsw_ef = 16\n')
    settings = load_settings(config=path)
    assert settings.collection == "docs" and settings.search.hnsw_ef == 16
    path.write_text("hnsw_ef = 32\n")  # ragsonde 0.1's flat name: a warning, not an error
    with pytest.warns(FutureWarning):
        assert load_settings(config=path).search.hnsw_ef == 32


def test_a_chunking_file_with_an_unknown_key_is_refused(tmp_path: Path):
    from ragsonde.chunking.saved import load_chunking

    path = tmp_path / "chunking.toml"
    path.write_text('[chunking]\nspliter = "sentence"\nsize = 200\n', encoding="utf-8")
    with pytest.raises(QueryValidationError, match="'spliter' \\(did you mean 'splitter'\\?\\)"):
        load_chunking(path)
    path.write_text('[chunkin]\nsplitter = "sentence"\n[chunking]\nsize = 200\n')
    with pytest.raises(QueryValidationError, match="'chunkin' \\(did you mean 'chunking'\\?\\)"):
        load_chunking(path)
    path.write_text('[chunking]\nsplitter = "sentence"\nsize = 200\noverlap = 0\n')
    assert load_chunking(path) == ("sentence", 200, 0)


def test_a_grid_file_with_an_unknown_axis_is_refused(tmp_path: Path):
    from ragsonde.tune import load_grid

    path = tmp_path / "grid.toml"
    path.write_text("hnsw_eff = [16, 64]\n", encoding="utf-8")
    with pytest.raises(QueryValidationError, match="'hnsw_eff' \\(did you mean 'hnsw_ef'\\?\\)"):
        load_grid(path)
