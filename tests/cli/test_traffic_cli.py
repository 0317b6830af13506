"""``ragsonde traffic`` as users run it: the JSON contract against its published schema, the
HTML page, the saved benchmark, and clean errors for bad files and options."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from ragsonde.samples import robotics_benchmark
from ragsonde.traffic.report import SCHEMA_FILE, schema_text
from tests.support import Cli

OFF_TOPIC = "how long should I bake banana bread?"


def _log(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines()]
    lines = [
        {
            "query": r["query"],
            "query_id": r["query_id"],
            "timestamp": f"2026-11-0{1 + i % 3}T10:00Z",
        }
        for i, r in enumerate(rows[:12])
    ]
    lines += [{"query": OFF_TOPIC, "timestamp": "2026-11-03T11:00Z"}] * 3  # asked three times
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_the_published_schema_is_what_the_model_generates() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "traffic/report.schema.json is stale: run `python -m ragsonde.traffic.report`"
    )


def test_json_html_and_saved_benchmark(cli: Cli, sample_home: Path, tmp_path: Path) -> None:
    log = _log(tmp_path)
    html, saved = tmp_path / "traffic.html", tmp_path / "traffic.jsonl"
    home = ["--home", str(sample_home), "-c", "robotics"]
    history = tmp_path / "history.sqlite"
    args = ["traffic", str(log), *home, "--json", "--html", str(html), "--save", str(saved)]
    out = cli(*args, "--history", str(history))
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    jsonschema.validate(report, json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    assert report["n_queries"] == 13 and report["n_records"] == 15
    assert 0.0 <= report["weak_share"] <= 1.0
    off = next(q for q in report["queries"] if q["query"] == OFF_TOPIC)
    assert off["weight"] == 3 and off["weak"] is True and off["predicted"] == 0.0
    assert off["signals"]["out_of_domain"] == 1.0 and off["production_agreement"] is None
    assert report["weakest"][0] == off["query_id"]
    assert report["frequent"][0] == off["query_id"]
    assert [p["period"] for p in report["drift"]] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    page = html.read_text(encoding="utf-8")
    # the next step names a judge that runs (--llm) and explains the copy it writes
    judged = saved.with_name("traffic.judged.jsonl")
    assert OFF_TOPIC in page and f"ragsonde explain {judged} -q {off['query_id']}" in page
    assert f"ragsonde judge {saved} -c robotics --llm openai:gpt-4o-mini &amp;&amp;" in page
    assert report["history_run"] == 1  # recorded like an eval: the traffic's hash names it
    runs = json.loads(cli("history", "list", "--history", str(history), "--json").stdout)
    assert runs["runs"][0]["benchmark"] == f"traffic-{report['traffic_hash']}"
    refused = cli("eval", str(saved), *home, "--no-record")
    assert refused.exit_code == 2 and "ragsonde judge" in refused.stderr
    assert "--llm openai:MODEL" in " ".join(refused.stderr.split())
    terminal = cli("traffic", str(log), *home, "--no-record")
    assert terminal.exit_code == 0 and "weak share" in terminal.stdout


def test_bad_files_and_options_are_clean_errors(cli: Cli, tmp_path: Path) -> None:
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    latin = tmp_path / "l.jsonl"
    latin.write_bytes(b'{"query": "caf\xe9"}\n')
    no_column = tmp_path / "n.csv"
    no_column.write_text("user,answer\nbob,42\n", encoding="utf-8")
    home = ["--home", str(tmp_path / "home"), "-c", "robotics"]
    for path, why in ((binary, "binary"), (latin, "not UTF-8"), (no_column, "no query column")):
        out = cli("traffic", str(path), *home)
        assert out.exit_code == 2, out.output
        assert out.stderr.startswith("VALIDATION_ERROR") and "Traceback" not in out.output
        assert why.split()[-1] in out.stderr
    sample = cli("traffic", str(no_column), *home, "--sample", "0", "--json")
    assert (
        sample.exit_code == 2 and json.loads(sample.stdout)["error"]["code"] == "VALIDATION_ERROR"
    )
    since = cli("traffic", str(no_column), *home, "--since", "yesterday")
    assert since.exit_code == 2 and "--since" in since.stderr
    as_history = cli("traffic", str(latin), *home, "--history", str(latin))  # a damaged history?
    assert as_history.exit_code == 2 and "--history" in as_history.stderr
    assert "is an input of this command" in as_history.stderr
    assert latin.read_bytes() == b'{"query": "caf\xe9"}\n'
    empty = cli("traffic", str(no_column), *home, "--since", "")  # was no window, silently
    assert empty.exit_code == 2 and "--since: give a time" in empty.stderr
    for option in ("--weak-below", "--threshold"):  # said "less than or equal to 1"
        nan = cli("traffic", str(no_column), *home, option, "nan")
        assert nan.exit_code == 2 and "finite number" in nan.stderr, nan.stderr


def test_labels_for_the_traffic_cross_fit_predicted(
    cli: Cli, sample_home: Path, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines()]
    log = tmp_path / "all.jsonl"
    log.write_text("".join(json.dumps({"query": r["query"]}) + "\n" for r in rows), "utf-8")
    history = tmp_path / "history.sqlite"
    args = ["traffic", str(log), "--home", str(sample_home), "-c", "robotics", "--json"]
    args += ["--history", str(history)]
    out = cli(*args, "--labels", str(robotics_benchmark()))
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["combination"].startswith(f"cross-fitted on {len(rows)} labelled queries")
    assert report["crossfit"]["n_labelled"] == len(rows)
    assert report["weak_below"] == report["crossfit"]["weak_below"]
    fixed = json.loads(cli(*args).stdout)
    assert fixed["crossfit"] is None and fixed["combination"].startswith("fixed")
    # the two runs' predicted live on different scales: the history must not pair them as
    # like for like (it had said "0 fingerprint fields changed" and called one "worse")
    again = json.loads(cli(*args).stdout)
    ids = [str(r["history_run"]) for r in (report, fixed, again)]
    differ = cli("history", "diff", ids[0], ids[1], "--history", str(history), "--json")
    diff = json.loads(differ.stdout)
    assert {c["field"] for c in diff["changes"]} == {"benchmark.labels_sha256"}, diff["changes"]
    assert not diff["like_for_like"] and diff["refused"] and not diff["metrics"]
    same = json.loads(
        cli("history", "diff", ids[1], ids[2], "--history", str(history), "--json").stdout
    )
    assert same["changes"] == [] and same["like_for_like"] and same["metrics"]
    # labels for too few of the queries: the fixed combination stays, and the report says the
    # labels were not used (they were dropped without a word); the run reads as one without
    few = tmp_path / "few.jsonl"
    few.write_text("".join(robotics_benchmark().read_text().splitlines(True)[:10]), "utf-8")
    unused = json.loads(cli(*args, "--labels", str(few)).stdout)
    assert unused["crossfit"] is None and unused["weak_below"] == fixed["weak_below"]
    assert unused["combination"] == fixed["combination"] + (
        "; --labels not used: fewer than 20 of its labelled queries are in this traffic"
    )
    pair = [str(fixed["history_run"]), str(unused["history_run"])]
    like = json.loads(cli("history", "diff", *pair, "--history", str(history), "--json").stdout)
    assert like["changes"] == [] and like["like_for_like"], like["changes"]
    # the terminal says how predicted was made: a --labels cut (0.86…) read as the fixed one
    plain = [a for a in args if a != "--json"] + ["--no-record"]
    shown = " ".join(cli(*plain, "--labels", str(robotics_benchmark())).stdout.split())
    spearman = report["crossfit"]["out_of_fold_spearman"]
    assert f"predicted: {report['combination']}; out-of-fold Spearman {spearman:+.3f}" in shown
    assert f"predicted: {fixed['combination']}" in " ".join(cli(*plain).stdout.split())


def test_an_output_that_is_an_input_is_refused_before_any_work(
    cli: Cli, sample_home: Path, tmp_path: Path
) -> None:
    """-o, --save and --html go through the one output check before the traffic is read: an
    input file, the history file or one file twice is a VALIDATION_ERROR naming the option, and
    every file stays as it was (``-o chat.jsonl`` used to replace the log with the report)."""
    log = _log(tmp_path)
    history = tmp_path / "history.sqlite"
    before = log.read_bytes()
    home = ["--home", str(sample_home), "-c", "robotics", "--history", str(history)]
    other = tmp_path / "out.json"
    cases = {
        "--output": ["-o", str(log)],
        "--save": ["--save", str(log)],
        "--html": ["--html", str(history)],
    }
    history.write_bytes(b"")
    for flag, args in cases.items():
        out = cli("traffic", str(log), *home, *args)
        assert out.exit_code == 2, out.output
        assert "VALIDATION_ERROR" in out.stderr and flag in out.stderr, out.stderr
    twice = cli("traffic", str(log), *home, "-o", str(other), "--save", str(other))
    assert twice.exit_code == 2 and "give each output its own file" in twice.stderr
    assert log.read_bytes() == before and history.read_bytes() == b"" and not other.exists()


def test_a_run_that_fails_leaves_the_file_save_names_as_it_was(
    cli: Cli, sample_home: Path, tmp_path: Path
) -> None:
    """--save was written before the replay: a run that then failed (or was stopped) had
    already replaced the file with this traffic."""
    log, saved = _log(tmp_path), tmp_path / "kept.jsonl"
    saved.write_text('{"query_id": "mine", "query": "my labelled row", "relevant": ["d"]}\n')
    before = saved.read_bytes()
    args = ["traffic", str(log), "--home", str(sample_home), "--no-record", "--save", str(saved)]
    failed = cli(*args, "-c", "no-such-collection")
    assert failed.exit_code != 0 and "COLLECTION_NOT_FOUND" in failed.stderr
    assert saved.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".kept")] == []
    done = cli(*args, "-c", "robotics")
    assert done.exit_code == 0, done.output
    assert len(saved.read_text(encoding="utf-8").splitlines()) == 13


def test_a_logged_query_cannot_drive_the_terminal(
    cli: Cli, sample_home: Path, tmp_path: Path
) -> None:
    """A query holding ESC sequences was written to the terminal as it was (it could recolour
    it, set its title); one of 6,000 characters filled it through the next: line."""
    log = tmp_path / "log.jsonl"
    rows = [{"query": "lidar \x1b[31mRED\x1b]0;title\x07 \u202eevil"}, {"query": "lidar " * 1000}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    home = ["--home", str(sample_home), "-c", "robotics", "--no-record", "--weak-below", "1"]
    out = cli("traffic", str(log), *home)
    assert out.exit_code == 0, out.output
    assert not any(c in out.stdout for c in "\x1b\x07\u202e")
    assert "\\x1b[31mRED" in out.stdout and "\\u202eevil" in out.stdout
    assert ("lidar " * 20) not in " ".join(out.stdout.split())  # never printed whole


def test_the_terminal_says_why_records_were_skipped(
    cli: Cli, sample_home: Path, tmp_path: Path
) -> None:
    """It printed only counts ("skipped: 5 malformed"): the reasons were in the JSON and HTML."""
    log = tmp_path / "log.jsonl"
    rows = ['{"query": 5}', '{"query": ["a"]}', '{"query": "  "}', "{not json", '{"query": {}}']
    rows.append(json.dumps({"query": "how do I calibrate the lidar?"}))
    log.write_text("\n".join(rows) + "\n", encoding="utf-8")
    home = ["--home", str(sample_home), "-c", "robotics", "--no-record"]
    out = cli("traffic", str(log), *home)
    assert out.exit_code == 0, out.output
    said = " ".join(out.stdout.split())
    assert "skipped: 4 malformed, 1 without query text" in said, said
    assert f"{log.name}:1: the query must be text, not int" in said
    assert f"{log.name}:2: the query must be text, not list" in said
    assert f"{log.name}:3: no query text" in said
    assert f"{log.name}:4:" not in said  # three reasons, then how many more and where
    assert "… 2 more (the JSON report, -o, gives the first 5)" in said
