"""What the pages tell a new user to run, run through the real CLI (docs/evaluate.md & co.)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragsonde.samples import robotics_benchmark
from tests.support import Cli, run

#: Put first on a process's path: ``opentelemetry.sdk`` cannot be imported there, as on a
#: machine with ``ragsonde[trace]`` (the API) and no SDK.
_NO_OTEL_SDK = """
import sys

class _NoSdk:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry.sdk" or name.startswith("opentelemetry.sdk."):
            raise ImportError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, _NoSdk())
"""


@pytest.mark.slow
def test_trec_qrels_with_beir_queries_jsonl_score_like_the_same_labels(
    cli: Cli, sample_home: Path, tmp_path: Path
) -> None:
    """docs/evaluate.md runs ``eval qrels/test.tsv --queries queries.jsonl``: BEIR's queries file
    was read as a TSV, so no query had text and the run was refused."""
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines()]
    rows = [r for r in rows if not r.get("filters")]  # TREC qrels carry no filters
    own = tmp_path / "own.jsonl"
    own.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": r["query_id"], "text": r["query"]}) + "\n" for r in rows)
    )
    qrels = tmp_path / "test.tsv"
    with qrels.open("w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for r in rows:
            rel = (
                r["relevant"]
                if isinstance(r["relevant"], dict)
                else dict.fromkeys(r["relevant"], 1)
            )
            f.writelines(f"{r['query_id']}\t{doc}\t{grade}\n" for doc, grade in rel.items())
    common = [
        "-c",
        "robotics",
        "--home",
        str(sample_home),
        "--no-record",
        "--no-throughput",
        "--json",
    ]
    trec = cli("eval", str(qrels), "--queries", str(tmp_path / "queries.jsonl"), *common)
    assert trec.exit_code == 0, trec.stderr
    mine = cli("eval", str(own), *common)
    assert mine.exit_code == 0, mine.stderr
    a, b = json.loads(trec.stdout), json.loads(mine.stdout)
    assert a["n_queries"] == b["n_queries"] == len(rows)
    assert a["metrics"] == pytest.approx(b["metrics"])


@pytest.mark.slow
def test_an_ingest_of_an_empty_jsonl_or_corpus_fails_like_an_empty_folder(
    cli: Cli, tmp_path: Path
) -> None:
    """An empty .jsonl (or BEIR corpus) exited 0 with "Ingested 0 documents" and an empty
    collection, where a folder with nothing to read exits 1 saying so."""
    home = tmp_path / "home"
    (tmp_path / "empty.jsonl").write_text("\n\n")
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text("")
    for source, says in [
        (tmp_path / "empty.jsonl", "holds no documents (it is empty)"),
        (beir, "holds no documents (its corpus is empty)"),
    ]:
        result = cli("ingest", str(source), "-c", "none", "--home", str(home))
        assert result.exit_code == 1, result.stdout + result.stderr
        assert f"Nothing was ingested: {source} {says}" in " ".join(result.stderr.split())
    (tmp_path / "one.jsonl").write_text('{"id": "lidar", "text": "Lidar times laser pulses."}\n')
    result = cli("ingest", str(tmp_path / "one.jsonl"), "-c", "one", "--home", str(home))
    assert result.exit_code == 0, result.stderr


@pytest.mark.slow
def test_an_empty_benchmark_or_grid_file_is_refused_not_run(
    cli: Cli, sample_home: Path, tmp_path: Path
) -> None:
    """Each ran on nothing and exited 0: ``judge`` judged 0 queries and wrote an empty file,
    ``generate --human`` compared its leakage with 0 human queries (warning that its labels
    favour BM25 against "0% for the human queries"), ``tune --grid`` swept the whole default
    grid as if no file had been named."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    common = ["-c", "robotics", "--home", str(sample_home)]
    runs = {
        "judge": cli("judge", str(empty), *common, "--llm", "local:gemma3-270m"),
        "generate --human": cli(
            "generate",
            *common,
            "--n",
            "2",
            "--out",
            str(tmp_path / "g.jsonl"),
            "--human",
            str(empty),
        ),
        "tune --grid": cli("tune", str(robotics_benchmark()), *common, "--grid", str(empty)),
    }
    for name, result in runs.items():
        assert result.exit_code == 2, f"{name}: {result.stdout}{result.stderr}"
        assert result.stderr.startswith("VALIDATION_ERROR: "), f"{name}: {result.stderr}"
    assert "it holds no query" in runs["judge"].stderr
    assert "it holds no query" in runs["generate --human"].stderr
    assert "names no axis" in runs["tune --grid"].stderr
    assert not (tmp_path / "empty.judged.jsonl").exists()
    assert not (tmp_path / "g.jsonl").exists()


def test_a_binary_file_as_the_benchmark_is_named_binary(cli: Cli, tmp_path: Path) -> None:
    """A file of no format ragsonde reads is detected as TREC qrels: a binary one was refused
    with "TREC qrels need a queries file", sending its user to look for one."""
    binary = tmp_path / "report.bin"
    binary.write_bytes(b"\xff\xfe\x00\x01 not a benchmark")
    result = cli("eval", str(binary), "-c", "robotics", "--home", str(tmp_path / "home"))
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr.startswith("VALIDATION_ERROR: "), result.stderr
    assert "line 1 holds binary data (NUL bytes), not text" in result.stderr
    assert "queries file" not in result.stderr


@pytest.mark.slow
def test_tracing_without_the_sdk_names_the_package_that_brings_it(
    sample_home: Path, tmp_path: Path
) -> None:
    """``OTEL_TRACES_EXPORTER=console`` without the OpenTelemetry SDK warned "pip install
    'ragsonde[trace]'", which installs the API alone: following it changed nothing."""
    (tmp_path / "sitecustomize.py").write_text(_NO_OTEL_SDK)
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": path, "OTEL_TRACES_EXPORTER": "console", "RAGSONDE_HOME": str(sample_home)}
    proc = run("query", "lidar calibration", "-c", "robotics", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "success"  # the query runs, untraced
    warning = " ".join(proc.stderr.split())
    assert "No traces will be exported: the OpenTelemetry SDK is not installed" in warning, warning
    assert "pip install opentelemetry-sdk" in warning


def test_an_unreadable_chunking_file_is_said_plainly(cli: Cli, tmp_path: Path) -> None:
    """``ingest --chunking`` answered a folder with "[Errno 21] Is a directory: 'dir'" and bytes
    that are not UTF-8 with Python's "'utf-8' codec can't decode byte 0xff in position 0"."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "lidar.md").write_text("# Lidar\n\nLidar times laser pulses.\n")
    (tmp_path / "folder.toml").mkdir()
    (tmp_path / "latin1.toml").write_bytes(b'[chunking]\nsplitter = "fixed" # caf\xe9\n')
    for name, says in [
        ("folder.toml", "it is a folder, not a file"),
        ("latin1.toml", "it is not UTF-8 text (invalid continuation byte at byte"),
    ]:
        result = cli(
            "ingest", str(tmp_path / "docs"), "-c", "x", "--home", str(tmp_path / "home"),
            "--chunking", str(tmp_path / name),
        )  # fmt: skip
        assert result.exit_code == 2, result.stdout + result.stderr
        assert result.stderr.startswith(
            f"VALIDATION_ERROR: Cannot read chunking file {tmp_path / name}: {says}"
        ), result.stderr


@pytest.mark.slow
def test_the_index_flags_name_the_settings_that_are_their_defaults(
    cli: Cli, tmp_path: Path
) -> None:
    """``ingest --help`` said ``--hnsw-m [default: 16]`` and ``--bm25-k1 [default: 1.2]``, but
    unset they take ``RAGSONDE_INDEX__*`` (docs/configuration.md), as ``--quantization`` said."""
    # the help's table cells wrap at the terminal's width: joined, a default reads whole
    shown = " ".join(cli("ingest", "--help", env={"COLUMNS": "400"}).stdout.split())
    for name, default in [
        ("QUANTIZATION", "none"),
        ("HNSW_M", "16"),
        ("HNSW_EF_CONSTRUCT", "100"),
        ("BM25_K1", "1.2"),
        ("BM25_B", "0.75"),
        ("BM25_TITLE_WEIGHT", "0"),
        ("BM25_LANGUAGE", "english"),
    ]:
        assert f"[default: RAGSONDE_INDEX__{name}, else {default}]" in shown, name
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lidar.md").write_text("# Lidar\n\nLidar times laser pulses to measure distance.\n")
    home = str(tmp_path / "home")
    env = {"RAGSONDE_INDEX__HNSW_M": "32", "RAGSONDE_INDEX__BM25_K1": "0.9"}
    result = cli("ingest", str(docs), "-c", "envs", "--sparse", "--home", home, env=env)
    assert result.exit_code == 0, result.stderr
    info = json.loads(cli("inspect", "envs", "--home", home, "--json").stdout)
    assert (info["index"]["hnsw"]["m"], info["bm25"]["k1"]) == (32, 0.9)  # what the help says


def test_config_names_the_variables_a_mapping_came_from(cli: Cli) -> None:
    """``ragsonde config`` said ``mapping … default`` for a mapping set by
    ``RAGSONDE_MAPPING__TEXT`` (docs/configuration.md: "Where did a value come from?")."""
    env = {"RAGSONDE_MAPPING__TEXT": "content", "RAGSONDE_MAPPING__URL": "source"}
    result = cli("config", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    mapping = next(o for o in json.loads(result.stdout)["settings"] if o["key"] == "mapping")
    assert mapping["value"] == {"text": "content", "url": "source"}
    assert (mapping["source"], mapping["where"]) == (
        "env",
        "RAGSONDE_MAPPING__TEXT, RAGSONDE_MAPPING__URL",
    )


@pytest.mark.slow
def test_a_batch_query_with_a_lone_surrogate_in_a_key_is_named_alone(
    cli: Cli, sample_home: Path, tmp_path: Path
) -> None:
    """A key escaped as ``"\\ud800"`` was answered "body: Input should be a valid string,
    unable to parse raw data as a unicode string"; the batch's other query is still answered."""
    path = tmp_path / "queries.jsonl"
    path.write_text('{"query": "lidar calibration"}\n{"query": "docking", "\\ud800": 1}\n')
    result = cli("batch", str(path), "-c", "robotics", "--home", str(sample_home), "--json")
    assert result.exit_code == 2, result.stderr  # a bad query in the batch: bad input
    batch = json.loads(result.stdout)
    good, bad = batch["responses"]
    assert (batch["status"], good["status"], bad["status"]) == ("partial", "success", "error")
    assert bad["error"] == {
        "code": "VALIDATION_ERROR",
        "message": "Invalid query: a field name must be valid Unicode text, but character 0 is "
        "a lone surrogate (U+D800); send UTF-8",
    }


@pytest.mark.slow
def test_beir_rows_in_a_file_of_another_name_say_how_to_read_them_and_the_list_is_capped(
    cli: Cli, tmp_path: Path
) -> None:
    """Every line of SciFact's corpus, copied to ``papers.jsonl``, failed with 'each line needs
    "id" and "text"', thousands of times over, with no word of BEIR's file name."""
    source = tmp_path / "papers.jsonl"
    rows = [{"_id": str(n), "title": f"T{n}", "text": f"Paper {n} on lidar."} for n in range(25)]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    home = str(tmp_path / "home")
    result = cli("ingest", str(source), "-c", "p", "--home", home)
    assert result.exit_code == 1, result.stdout + result.stderr
    said = " ".join(result.stderr.split())
    assert 'BEIR\'s "_id"' in said and "corpus.jsonl" in said
    assert said.count("failed papers.jsonl:") == 20 and "… and 5 more failures" in said
    listed = cli("ingest", str(source), "-c", "p", "--home", home, "--json")
    assert len(json.loads(listed.stdout)["failed"]) == 25
    (tmp_path / "corpus.jsonl").write_bytes(source.read_bytes())
    result = cli("ingest", str(tmp_path / "corpus.jsonl"), "-c", "p", "--home", home)
    assert result.exit_code == 0, result.stderr
