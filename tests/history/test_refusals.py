"""What a user types never erases the history (issue 33): an output onto the history file, a
history path that cannot be one, another program's database, a bad argument or baseline: each
is refused before any work, with one VALIDATION_ERROR (exit 2), and every file is left byte for
byte as it was. Filters are literal."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import Result

from tests.history.support import Story
from tests.support import Cli


def _copy(story: Story, tmp_path: Path) -> Path:
    history = tmp_path / "history.sqlite"
    shutil.copy(story.history, history)
    return history


def _refused(r: Result, *words: str) -> str:
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("VALIDATION_ERROR"), r.output
    assert "Traceback" not in r.output and isinstance(r.exception, SystemExit)
    message = " ".join(r.stderr.split())
    for w in words:
        assert w in message, message
    return message


def _eval(story: Story, *args: str) -> tuple[str, ...]:
    return ("eval", str(story.bench), "-c", "robotics", "--home", str(story.home), *args)


def test_history_export_onto_the_history_leaves_it_whole(cli: Cli, story: Story, tmp_path: Path):
    history = _copy(story, tmp_path)
    before = history.read_bytes()
    r = cli("history", "export", "--history", str(history), "-o", str(history))
    _refused(r, "is the history file")
    assert history.read_bytes() == before
    # the write-ahead log beside it is the history too
    r = cli("history", "export", "--history", str(history), "-o", f"{history}-wal")
    _refused(r, "is the history file")


def test_history_trend_onto_the_history_leaves_it_whole(cli: Cli, story: Story, tmp_path: Path):
    history = _copy(story, tmp_path)
    before = history.read_bytes()
    r = cli("history", "trend", "ndcg@10", "--history", str(history), "--out", str(history))
    _refused(r, "--out", "is the history file")
    assert history.read_bytes() == before
    link = tmp_path / "link.svg"  # through a symlink it is the same file
    link.symlink_to(history)
    _refused(cli("history", "trend", "ndcg@10", "--history", str(history), "--out", str(link)))
    assert history.read_bytes() == before


def test_eval_save_onto_the_history_leaves_it_whole_and_records_nothing(
    cli: Cli, story: Story, tmp_path: Path
):
    history = _copy(story, tmp_path)
    before = history.read_bytes()
    for flag in ("--save", "--report", "--run-out"):
        r = cli(*_eval(story, "--history", str(history), flag, str(history)))
        _refused(r, flag, "is the history file", "Nothing was run")
        assert history.read_bytes() == before
    # an input of the same command: the benchmark itself
    bench = tmp_path / "bench.jsonl"
    shutil.copy(story.bench, bench)
    text = bench.read_bytes()
    r = cli("eval", str(bench), "-c", "robotics", "--home", str(story.home), "--save", str(bench))
    _refused(r, "--save", "is an input of this command")
    assert bench.read_bytes() == text


def test_an_output_onto_another_history_or_the_llm_cache_leaves_it_whole(
    cli: Cli, story: Story, tmp_path: Path
):
    """Only the command's own history was checked: ``eval --history other.sqlite --save
    home/history.sqlite``, ``judge -o home/history.sqlite`` or ``--save llm-cache.sqlite``
    replaced a database with a report, exit 0."""
    history = _copy(story, tmp_path)
    cache = tmp_path / "llm-cache.sqlite"
    with sqlite3.connect(cache) as conn:
        conn.execute("create table answers(k, v)")
    conn.close()
    for db in (history, cache):
        before = db.read_bytes()
        r = cli(*_eval(story, "--history", str(tmp_path / "elsewhere.sqlite"), "--save", str(db)))
        _refused(r, "--save", "SQLite database", "Nothing was run")
        r = cli(*_eval(story, "--no-record", "--report", str(db)))
        _refused(r, "--report", "SQLite database")
        assert db.read_bytes() == before
    assert not (tmp_path / "elsewhere.sqlite").exists()


@pytest.mark.parametrize(
    ("where", "why"),
    [
        ("dir", "a directory"),
        ("under", "Not a directory"),
        ("loop", "symbolic links"),
        ("store", "inside a Qdrant store"),
    ],
)
def test_a_history_path_that_cannot_be_one_is_one_clear_error(
    cli: Cli, story: Story, tmp_path: Path, where: str, why: str
):
    shard = story.home / "collections" / "robotics"  # deleting it would delete the history
    path = {
        "dir": tmp_path,
        "under": tmp_path / "file" / "h.sqlite",
        "loop": tmp_path / "loop",
        "store": shard / "segments" / "h.sqlite",
    }[where]
    (tmp_path / "file").write_text("a file, not a folder")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    _refused(cli("history", "list", "--history", str(path)), str(path), why)
    # eval finds it out before the evaluation runs: no report is written
    save = tmp_path / "report.json"
    r = cli(*_eval(story, "--history", str(path), "--save", str(save)))
    _refused(r, str(path))
    assert not save.exists()


def test_a_foreign_database_at_the_history_path_is_refused_untouched(cli: Cli, tmp_path: Path):
    """Also one that happens to have a ``schema_version`` table: that alone made it "ours", so
    ``eval`` migrated runs into it (exit 0), and a read switched it to WAL."""
    for app_id, version in ((0, None), (0x1234, None), (0, 1), (0, 7)):
        path = tmp_path / f"app{app_id}-{version}.sqlite"
        db = sqlite3.connect(path)
        db.execute(f"PRAGMA application_id = {app_id}")
        if version is not None:
            db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            db.execute(f"INSERT INTO schema_version VALUES ({version})")
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('mine')")
        db.commit()
        db.close()
        before = path.read_bytes()
        _refused(cli("history", "list", "--history", str(path)), "another program's")
        assert path.read_bytes() == before
        assert not Path(f"{path}-wal").exists()


def test_ragsonde_history_files_are_marked_and_old_unmarked_ones_still_open(
    cli: Cli, story: Story, tmp_path: Path
):
    from ragsonde.history import HistoryStore
    from ragsonde.history.damage import APPLICATION_ID
    from ragsonde.history.store import MIGRATIONS

    fresh = tmp_path / "fresh.sqlite"
    HistoryStore(fresh).close()
    db = sqlite3.connect(fresh)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    db.close()
    old = _copy(story, tmp_path)  # as written before the mark: application_id 0
    db = sqlite3.connect(old)
    db.execute("PRAGMA application_id = 0")
    db.commit()
    db.close()
    r = cli("history", "list", "--history", str(old), "--json")
    assert r.exit_code == 0, r.output
    with HistoryStore(old) as hs:
        assert len(hs.runs()) == len(story.runs)


def test_benchmark_filters_are_literal(cli: Cli, story: Story):
    h = ("--history", str(story.history))
    for pattern in ("%", "_", "%%", "robotics%"):
        r = cli("history", "list", *h, "--benchmark", pattern, "--json")
        assert r.exit_code == 0, r.output
        assert '"runs": []' in r.stdout, pattern


@pytest.mark.parametrize(
    "args",
    [
        ("history", "prune", "--keep", "0"),
        ("history", "prune", "--keep", str(2**64)),
        ("history", "list", "--limit", "0"),
        ("history", "list", "--limit", str(2**64)),
        ("history", "diff", "1", "--resamples", "0"),
        ("explain", "x", "--query-id", "q", "--k", "0"),
        ("explain", "x", "--query-id", "q", "--k", str(2**64)),
        ("eval", "x", "--explain", "--explain-k", "0"),
    ],
    ids=lambda a: " ".join(a)[:40],
)
def test_counts_out_of_range_are_usage_errors(cli: Cli, story: Story, tmp_path: Path, args):
    history = _copy(story, tmp_path)
    before = history.read_bytes()
    r = cli(*args, "--history", str(history)) if args[0] != "explain" else cli(*args)
    assert r.exit_code == 2, r.output
    assert "Invalid value" in r.output and "Traceback" not in r.output
    assert history.read_bytes() == before


def test_a_bad_baseline_is_refused_before_the_eval(cli: Cli, story: Story, tmp_path: Path):
    history = _copy(story, tmp_path)
    before = history.read_bytes()
    bad = tmp_path / "base.jsonl"
    bad.write_text('{"not": "a run"}\n', encoding="utf-8")
    save = tmp_path / "report.json"
    folder = tmp_path / "runs.jsonl"
    folder.mkdir()
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(b'{"run_id": "caf\xe9"}\n')
    report = tmp_path / "saved.json"  # what `eval --save` writes: indented, not a run a line
    report.write_text('{\n  "schema_version": "1.8",\n  "kind": "eval"\n}\n', encoding="utf-8")
    cases = (
        (str(bad), "not a run exported"),
        ("12345", "no run 12345"),
        ("x", "bad"),
        # they said "[Errno 21] Is a directory", "'utf-8' codec can't decode byte 0xe9", and
        # "Expecting property name enclosed in double quotes"
        (str(folder), "it is a folder, not a file"),
        (str(latin), "line 1 is not UTF-8 text (invalid continuation byte at byte"),
        (str(report), "a report saved with `eval --save`?"),
    )
    for spec, why in cases:
        r = cli(*_eval(story, "--history", str(history), "--baseline", spec, "--save", str(save)))
        _refused(r, why)
        assert history.read_bytes() == before and not save.exists()


def test_a_damaged_history_is_found_before_the_eval(cli: Cli, story: Story, tmp_path: Path):
    history = _copy(story, tmp_path)
    history.write_bytes(history.read_bytes()[:5000])  # truncated
    before = history.read_bytes()
    save = tmp_path / "report.json"
    r = cli(*_eval(story, "--history", str(history), "--save", str(save)))
    _refused(r, "truncated")
    assert not save.exists() and history.read_bytes() == before


@pytest.mark.parametrize("where", ["dir", "missing", "under", "full"])
def test_outputs_that_cannot_be_written_are_one_clear_error(
    cli: Cli, story: Story, tmp_path: Path, where: str
):
    history = _copy(story, tmp_path)
    (tmp_path / "file").write_text("x")
    out = {
        "dir": tmp_path,
        "missing": tmp_path / "nope" / "runs.jsonl",
        "under": tmp_path / "file" / "runs.jsonl",
        "full": Path("/dev/full"),
    }[where]
    for cmd in (("export", "-o"), ("trend", "ndcg@10", "--out")):
        r = cli("history", *cmd, str(out), "--history", str(history))
        _refused(r, str(out), "disk is full" if where == "full" else "Nothing was run")
