"""Input files that cannot be read, through the CLI (``tune --grid``, the benchmark ``judge``
reads): each a VALIDATION_ERROR that says what the file is, before any collection is opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import Cli

ROW = '{"query_id": "q1", "query": "lidar range", "relevant": ["lidar"]}\n'


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        # a folder was "Grid file … does not exist."
        ("grid", None, "Cannot read grid file {path}: it is a folder, not a file."),
        # bytes that are not UTF-8 were Python's "'utf-8' codec can't decode byte 0xff in …"
        ("grid.toml", b"\xff\xfe[x]", "Cannot read grid file {path}: it is not UTF-8 text"),
        # a lone surrogate escaped in YAML was a shape error about a dictionary
        (
            "grid.yaml",
            b'quantization:\n  - "\\ud800"\n',
            "Cannot read grid file {path}: field quantization[0] must be valid Unicode text",
        ),
    ],
    ids=["folder", "not-utf8", "surrogate"],
)
def test_a_grid_file_that_cannot_be_read_says_what_it_is(
    cli: Cli, tmp_path: Path, name: str, content: bytes | None, said: str
) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(ROW, encoding="utf-8")
    grid = tmp_path / name
    if content is None:
        grid.mkdir()
    else:
        grid.write_bytes(content)
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]  # no collection: never reached
    out = cli("tune", str(bench), *home, "--grid", str(grid))
    message = " ".join(out.stderr.split())
    assert out.exit_code == 2, out.output
    assert message.startswith("VALIDATION_ERROR: " + said.format(path=grid)), message


@pytest.mark.parametrize(
    "raw", [b"\xff\xfe{}\n", b'{"query_id": "q1", "query": "caf\xe9"}\n'], ids=["bom16", "latin1"]
)
def test_a_benchmark_judge_reads_that_is_not_utf8_says_so(
    cli: Cli, tmp_path: Path, raw: bytes
) -> None:
    """``judge --llm`` (and ``generate --human``) read a benchmark's lines as bytes through
    ``json.loads``, which guesses UTF-16 from a BOM: "'utf-16-le' codec can't decode byte 0x0a
    in position 12: truncated data". The line is not UTF-8, as eval says of the same file."""
    bench = tmp_path / "bench.jsonl"
    bench.write_bytes(raw)
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]
    out = cli("judge", str(bench), *home, "--llm", "openai:gpt-4o-mini")
    message = " ".join(out.stderr.split())
    assert out.exit_code == 2, out.output
    assert message.startswith(
        f"VALIDATION_ERROR: Cannot read benchmark {bench}: line 1 is not UTF-8 text ("
    ), message
