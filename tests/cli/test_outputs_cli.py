"""Outputs a command writes where the work is paid for elsewhere (an LLM, a remote tool, the
queries' replays) are checked before that work, like every other output: never an input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import Cli

ROW = '{"query_id": "q1", "query": "lidar range", "relevant": ["lidar"]}\n'


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        (("judge", "--plan", "5"), "--out"),
        # ``eval --run-out`` on the benchmark (as the library's ``EvalReport.write_run``)
        (("eval", "--no-record"), "--run-out"),
    ],
)
def test_an_output_over_its_own_benchmark_is_refused_before_any_search(
    cli: Cli, tmp_path: Path, command: tuple[str, ...], flag: str
) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(ROW, encoding="utf-8")
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]  # no collection: never reached
    out = cli(command[0], str(bench), *home, *command[1:], flag, str(bench))
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith("VALIDATION_ERROR") and flag in out.stderr, out.stderr
    assert "is an input of this command" in " ".join(out.stderr.split())
    assert bench.read_text(encoding="utf-8") == ROW


def test_an_mcp_eval_saved_over_its_benchmark_is_refused_before_the_tool_is_called(
    cli: Cli, tmp_path: Path
) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(ROW, encoding="utf-8")
    server = "http://127.0.0.1:9/mcp"  # the discard port: a call would be a CONNECTION_ERROR
    out = cli(
        "eval", str(bench), "--mcp", server, "--tool", "find", "--save", str(bench),
        "--home", str(tmp_path / "home"),
    )  # fmt: skip
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith("VALIDATION_ERROR") and "--save" in out.stderr, out.stderr
    assert bench.read_text(encoding="utf-8") == ROW


def test_an_estimate_saved_over_its_plan_file_is_refused_before_any_search(
    cli: Cli, tmp_path: Path
) -> None:
    """``--plan-file`` is an input: ``--save`` or ``--report`` on it replaced the plan (the
    probabilities of the queries being judged) with the report."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text(ROW, encoding="utf-8")
    plan = tmp_path / "bench.plan.json"
    plan.write_text('{"kind": "judging-plan"}', encoding="utf-8")
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]  # no collection: never reached
    for flag in ("--save", "--report"):
        out = cli(
            "eval", str(bench), *home, "--estimate", "--plan-file", str(plan), flag, str(plan)
        )
        assert out.exit_code == 2, out.output
        assert out.stderr.startswith("VALIDATION_ERROR") and flag in out.stderr, out.stderr
        assert "is an input of this command" in " ".join(out.stderr.split())
        assert plan.read_text(encoding="utf-8") == '{"kind": "judging-plan"}'


def test_an_empty_benchmark_says_it_is_empty(cli: Cli, tmp_path: Path) -> None:
    """It said 'no query has both text and relevance judgments', as for a file of unlabelled
    rows: the reader had found rows to judge."""
    bench = tmp_path / "bench.jsonl"
    bench.write_bytes(b"")
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]  # no collection: never reached
    for command in (["eval", str(bench)], ["judge", str(bench), "--plan", "3"]):
        out = cli(*command, *home)
        assert out.exit_code == 2, out.output
        message = " ".join(out.stderr.split())
        assert message == f"VALIDATION_ERROR: Cannot read benchmark {bench}: it is empty", message


def test_an_estimates_options_without_estimate_are_refused_not_ignored(
    cli: Cli, tmp_path: Path
) -> None:
    """``--predictor`` and ``--estimand`` without ``--estimate`` ran a plain evaluation and said
    nothing of them; a rule over the whole options said ``body:`` before its message."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text(ROW, encoding="utf-8")
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]  # no collection: never reached
    for flags, flag in (
        (["--predictor", "consensus"], "--predictor"),
        (["--estimand", "benchmark"], "--estimand"),
        (["--plan-file", str(bench)], "--plan-file"),
    ):
        out = cli("eval", str(bench), *home, *flags)
        assert out.exit_code == 2, out.output
        message = " ".join(out.stderr.split())
        assert message.startswith("VALIDATION_ERROR: ") and "body" not in message, message
        assert f"({flag}) " in message and message.endswith("add --estimate."), message


def test_a_plan_or_an_estimate_without_anything_to_work_on_says_so(
    cli: Cli, tmp_path: Path
) -> None:
    """A fully labelled benchmark has nothing to plan ('plan 5: expected 1 to 0', after a whole
    evaluation); a fully unlabelled one has nothing to estimate from ('No relevance ids to
    resolve.'). Both are refused before any search."""
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(ROW, encoding="utf-8")
    unlabelled = tmp_path / "traffic.jsonl"
    unlabelled.write_text('{"query_id": "t1", "query": "lidar range"}\n', encoding="utf-8")
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]  # no collection: never reached
    plan = cli("judge", str(labelled), *home, "--plan", "5")
    assert plan.exit_code == 2, plan.output
    assert " ".join(plan.stderr.split()) == (
        f"VALIDATION_ERROR: plan 5: nothing to plan, every one of the 1 queries of {labelled} "
        "is labelled."
    )
    for command in (
        ["eval", str(unlabelled), "--estimate"],
        ["judge", str(unlabelled), "--plan", "1"],
    ):
        out = cli(*command, *home)
        assert out.exit_code == 2, out.output
        message = " ".join(out.stderr.split())
        assert "none of its 1 queries is labelled" in message and "Judge view" in message, message


SETTINGS = "[search]\ntop_k = 5\n"


def _commands(bench: Path, settings: Path) -> list[list[str]]:
    s = str(settings)
    return [
        ["generate", "--n", "5", "--out", s],
        ["judge", str(bench), "--plan", "5", "--out", s],
        ["judge", str(bench), "--llm", "openai:gpt-4o-mini", "--out", s],
        ["history", "export", "--out", s],
        ["history", "trend", "ndcg@10", "--out", s],
        ["eval", str(bench), "--mcp", "http://127.0.0.1:9/mcp", "--tool", "find", "--save", s],
    ]


def test_no_command_writes_over_the_settings_file_it_reads(cli: Cli, tmp_path: Path) -> None:
    """The settings file (``--config``, the root ``--config``, or ./ragsonde.toml found by
    default) is an input. ``generate --out``, ``judge --out`` (plan or LLM), ``history export
    -o``, ``history trend --out`` and ``eval --mcp --save`` replaced it with their output: a
    benchmark, a plan or an SVG where the configuration was."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text(ROW, encoding="utf-8")
    settings = tmp_path / "ragsonde.toml"
    settings.write_text(SETTINGS, encoding="utf-8")
    home = ["--home", str(tmp_path / "home")]
    own, root = ["--config", str(settings)], []
    for command in _commands(bench, settings):
        for config in (own, root, None):  # the command's --config, the root's, RAGSONDE_CONFIG
            args = [*command, *home, *own] if config is own else [*command, *home]
            if config is root:
                args = ["--config", str(settings), *args]
            env = {"RAGSONDE_CONFIG": str(settings)} if config is None else None
            out = cli(*args, env=env)
            assert out.exit_code == 2, (args, out.output)
            message = " ".join(out.stderr.split())
            assert message.startswith("VALIDATION_ERROR"), (args, message)
            assert "is an input of this command" in message, (args, message)
            assert settings.read_text(encoding="utf-8") == SETTINGS, args


def test_an_mcp_eval_refuses_the_options_it_would_ignore(cli: Cli, tmp_path: Path) -> None:
    """``eval --mcp`` writes ``--save`` and ``--json`` only and records nothing. ``--report``
    wrote no HTML, ``--run-out`` no run file, ``--baseline`` compared nothing, all with exit 0
    and not a word: each is refused before the tool is called."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text(ROW, encoding="utf-8")
    base = ["eval", str(bench), "--mcp", "http://127.0.0.1:9/mcp", "--tool", "find"]
    home = ["--home", str(tmp_path / "home")]
    html, run_file = tmp_path / "r.html", tmp_path / "run.txt"
    for extra in (
        ["--report", str(html)],
        ["--run-out", str(run_file)],
        ["--baseline", "last"],
        ["--explain"],
        ["--metric", "ndcg@10"],
        ["--alpha", "0.1"],
        ["--history", str(tmp_path / "h.sqlite")],
        ["--against", "http://127.0.0.1:9"],
        ["--corpus", str(tmp_path)],
    ):
        out = cli(*base, *extra, *home)
        message = " ".join(out.stderr.split())
        assert out.exit_code == 2, (extra, out.output)
        assert message.startswith(f"VALIDATION_ERROR: {extra[0]}: not with --mcp"), message
    assert not html.exists() and not run_file.exists()


def test_an_output_over_a_document_of_an_input_folder_is_refused(cli: Cli, tmp_path: Path) -> None:
    """A folder of documents (``chunking DOCS``, ``eval --corpus DOCS``) or a BEIR dataset is an
    input file by file: ``--save docs/lidar.md`` replaced a document with the report. A file the
    folder's reader does not read (``docs/report.json``) is no input and stays writable."""
    docs = tmp_path / "docs"
    docs.mkdir()
    page = "# Lidar\n\nThe lidar measures range by timing laser pulses.\n"
    (docs / "lidar.md").write_text(page, encoding="utf-8")
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "text": "lidar"}\n', encoding="utf-8")
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "lidar?"}\n', encoding="utf-8")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    bench = tmp_path / "bench.jsonl"
    bench.write_text(ROW, encoding="utf-8")
    home = ["--home", str(tmp_path / "home")]
    lidar, qrels = docs / "lidar.md", beir / "qrels" / "test.tsv"
    for args in (
        ["chunking", str(docs), "--save", str(lidar)],
        ["eval", str(bench), "-c", "nowhere", "--corpus", str(docs), "--save", str(lidar)],
        ["eval", str(beir), "-c", "nowhere", "--report", str(qrels)],
        ["tune", str(beir), "-c", "nowhere", "--html", str(beir / "corpus.jsonl")],
        ["judge", str(beir), "-c", "nowhere", "--plan", "3", "--out", str(qrels)],
        ["judge", str(beir), "-c", "nowhere", "--llm", "openai:gpt-4o-mini", "--out", str(qrels)],
        ["generate", "-c", "nowhere", "--human", str(beir), "--out", str(qrels)],
    ):
        out = cli(*args, *home)
        message = " ".join(out.stderr.split())
        assert out.exit_code == 2, (args, out.output)
        assert "is an input of this command" in message, (args, message)
    assert lidar.read_text(encoding="utf-8") == page
    assert qrels.read_text(encoding="utf-8").endswith("q1\td1\t1\n")
    report = beir / "report.html"
    report.write_text("<p>the last run</p>", encoding="utf-8")
    out = cli("tune", str(beir), "-c", "nowhere", "--html", str(report), *home)
    assert out.exit_code != 0 and "is an input" not in out.stderr, out.stderr  # no collection
