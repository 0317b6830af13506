"""The search flags out of the settings model's range: a VALIDATION_ERROR (a JSON error with
``--json``, as the contract asks) that blames the options given. It blamed "ragsonde.toml /
environment" for a value typed on the command line (``--hnsw-ef 0``: ``Invalid settings
(ragsonde.toml / environment): search.hnsw_ef …``). Count options with no contract error of their
own take their range where they are read (a usage error naming the flag)."""

from __future__ import annotations

from pathlib import Path

import annotated_types
import pytest

from ragsonde.models.params import SearchParams
from tests.support import Cli

#: flag -> the SearchParams field it sets
FLAGS = {
    "--top-k": "top_k",
    "--threshold": "score_threshold",
    "--rrf-k": "rrf_k",
    "--prefetch-limit": "prefetch_limit",
    "--hnsw-ef": "hnsw_ef",
    "--oversampling": "quantization_oversampling",
}


def _bounds(field: str) -> tuple[float | None, float | None]:
    low = high = None
    for m in SearchParams.model_fields[field].metadata:
        if isinstance(m, annotated_types.Ge):
            low = m.ge
        if isinstance(m, annotated_types.Le):
            high = m.le
    return low, high


def _refused(cli: Cli, *args: str) -> str:
    """``ragsonde query lidar ARGS``, which must exit 2: its stderr on one line."""
    out = cli("query", "lidar", *args)
    assert out.exit_code == 2, (args, out.output)
    return " ".join(out.stderr.split())


@pytest.mark.parametrize("flag", FLAGS)
def test_a_search_flag_outside_the_models_range_is_blamed_on_the_options(
    cli: Cli, tmp_path: Path, flag: str
) -> None:
    field = FLAGS[flag]
    low, high = _bounds(field)
    assert low is not None, flag
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]  # no collection: never reached
    step = 0.5 if isinstance(low, float) else 1
    outside = [low - step] + ([high + step] if high is not None else [])
    for value in outside:
        message = _refused(cli, flag, str(value), *home)
        expected = f"VALIDATION_ERROR: Invalid settings (options given): search.{field}"
        assert message.startswith(expected), (flag, value, message)
    for value in [low] + ([high] if high is not None else []):
        extra = ["--fusion", "rrf"] if flag == "--rrf-k" else []  # rrf_k is RRF's only
        out = cli("query", "lidar", flag, str(value), *extra, *home)  # the settings take it
        assert "Invalid settings" not in out.stderr, (flag, value, out.stderr)


def test_the_search_flags_help_says_what_an_unset_flag_means() -> None:
    """``--rrf-k``, ``--prefetch-limit``, ``--hnsw-ef``, ``--rescore``, ``--oversampling`` said
    nothing of what applies when they are not given."""
    from ragsonde.cli import _search

    helps = {
        name: opt.__metadata__[0].help
        for name, opt in vars(_search).items()
        if name.endswith("Opt") and name != "FusionWeightsOpt"
    }
    assert len(helps) == 10
    for name, text in helps.items():
        assert "[default: " in text.replace("\\[", "["), (name, text)
    assert "else 60" in helps["RrfKOpt"] and "max(4 × top_k, 100)" in helps["PrefetchOpt"]


def test_a_rule_broken_by_the_flags_is_blamed_on_them_not_on_the_file(
    cli: Cli, tmp_path: Path
) -> None:
    """``--rrf-k 5`` without ``--fusion rrf`` breaks a rule of the settings: the error said
    "Invalid settings (ragsonde.toml / environment)" though neither held it. A value from the
    settings file is still blamed on the file."""
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]
    message = _refused(cli, "--rrf-k", "5", *home)
    assert message.startswith("VALIDATION_ERROR: Invalid settings (options given): search.rrf_k")
    settings = tmp_path / "s.toml"
    settings.write_text("[search]\nrrf_k = 5\n", encoding="utf-8")
    message = _refused(cli, "--config", str(settings), *home)
    assert message.startswith(f"VALIDATION_ERROR: Invalid settings ({settings} / environment)")


def test_a_top_k_above_the_limit_is_blamed_on_whoever_gave_it(cli: Cli, tmp_path: Path) -> None:
    """``--top-k 100000`` passed the settings and failed at the query, "from the search.top_k
    setting", though the flag gave it. Now the settings refuse it against ``max_top_k`` where
    they are read, as any value out of range: the flag's, or the file's."""
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]
    message = _refused(cli, "--top-k", "100000", *home)
    assert message.startswith(
        "VALIDATION_ERROR: Invalid settings (options given): search.top_k: must be at most "
        "max_top_k = 100 (got 100000)"
    ), message
    settings = tmp_path / "s.toml"
    settings.write_text("max_top_k = 3\n[search]\ntop_k = 5\n", encoding="utf-8")
    message = _refused(cli, "--config", str(settings), *home)
    assert message.startswith(f"VALIDATION_ERROR: Invalid settings ({settings} / environment)")
    assert "search.top_k: must be at most max_top_k = 3 (got 5)" in message, message
    out = cli("query", "lidar", "--config", str(settings), "--top-k", "3", *home)
    assert "Invalid settings" not in out.stderr, out.stderr  # the flag within the file's limit


@pytest.mark.parametrize(
    "args",
    [
        ["inspect", "docs", "--sample", "-1"],  # a traceback from the engine (unsigned limit)
        ["inspect", "docs", "--sample", "0"],  # exit 0: the layout of no payload
        ["traffic", "log.jsonl", "--seed", "-1"],  # taken, unlike every other seed
        ["compare", "a.json", "b.json", "--resamples", "0"],  # "n_resamples must be positive"
    ],
    ids=lambda a: " ".join(a[:1] + a[-2:]),
)
def test_a_count_out_of_range_is_a_usage_error_naming_its_flag(
    cli: Cli, tmp_path: Path, args: list[str]
) -> None:
    out = cli(*args, "--home", str(tmp_path / "home")) if args[0] != "compare" else cli(*args)
    assert out.exit_code == 2, out.output
    assert f"Invalid value for '{args[-2]}'" in out.stderr, out.stderr
