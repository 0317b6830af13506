"""``ragsonde.outputs``: a file is replaced whole or not at all, and a path that cannot be an
output is refused, naming the option, before anything is written."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from ragsonde.errors import QueryValidationError, StoreConnectionError
from ragsonde.outputs import check_outputs, open_output, updating, write_text


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path):
    path = tmp_path / "report.json"
    path.write_text("old", encoding="utf-8")
    os.chmod(path, 0o640)

    class Boom(Exception):
        pass

    def half() -> None:
        with open_output(path) as f:
            f.write("half of the new")
            raise Boom

    with pytest.raises(Boom):
        half()
    assert path.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
    write_text(path, "new ✓")
    assert path.read_text(encoding="utf-8") == "new ✓"
    assert path.stat().st_mode & 0o777 == 0o640  # the mode of the file it replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_text_that_is_not_unicode_is_refused_and_nothing_replaced(tmp_path: Path):
    path = tmp_path / "out.jsonl"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(QueryValidationError, match="lone surrogate"):
        write_text(path, "a\udc80b")
    assert path.read_text(encoding="utf-8") == "old"
    assert len(list(tmp_path.iterdir())) == 1


def test_a_device_is_written_in_place_and_a_full_disk_is_one_error():
    write_text(Path("/dev/null"), "gone")
    assert Path("/dev/null").is_char_device()  # not replaced by a regular file
    with pytest.raises(QueryValidationError, match="disk is full"):
        write_text(Path("/dev/full"), "x" * 100_000)
    assert Path("/dev/full").is_char_device()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "is a directory"),
        ("missing/out.json", "its folder does not exist"),
        ("file/out.json", "is under a file"),
        ("loop", "cannot be written"),
        ("input.jsonl", "is an input of this command"),
        ("h.sqlite", "is the history file"),
        ("h.sqlite-wal", "is the history file"),
    ],
)
def test_paths_that_cannot_be_outputs_are_refused(tmp_path: Path, name: str, why: str):
    (tmp_path / "file").write_text("x")
    (tmp_path / "input.jsonl").write_text("{}")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(QueryValidationError, match=why) as err:
        check_outputs(
            {"--save": tmp_path / name},
            inputs=[tmp_path / "input.jsonl", None],
            history=tmp_path / "h.sqlite",
        )
    assert err.value.field == "save" and "--save" in err.value.message


def test_two_outputs_of_one_command_are_two_files(tmp_path: Path):
    out = tmp_path / "a.json"
    with pytest.raises(QueryValidationError, match="is also --report"):
        check_outputs({"--save": out, "--report": tmp_path / "." / "a.json"})
    check_outputs({"--save": out, "--report": tmp_path / "b.html", "--run-out": None})


def test_a_symlink_keeps_pointing_at_the_file_it_replaced(tmp_path: Path):
    target = tmp_path / "real.json"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "new"


def test_a_file_held_for_update_elsewhere_is_a_clear_error_after_the_wait(tmp_path: Path):
    path = tmp_path / "bench.jsonl"
    # another holder: a second open is a second lock, as in two processes
    with (
        updating(path),
        pytest.raises(StoreConnectionError, match="stayed locked by another process"),
        updating(path, wait_s=0.1),
    ):
        pass
    with updating(path):  # let go: free again
        pass
    assert not path.exists()  # the lock is a sidecar: the file itself is never made


def test_any_sqlite_database_is_refused_whichever_history_the_command_uses(
    tmp_path: Path,
) -> None:
    """``judge -o home/history.sqlite`` replaced every recorded run (exit 0): only the
    command's own history was checked, and judge, generate, tune and chunking passed none."""
    import sqlite3

    db = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("create table runs(x)")
        conn.execute("insert into runs values (1)")
        conn.commit()
    for target in (db, tmp_path / "other.sqlite-wal", tmp_path / "link.sqlite"):
        if target.name == "link.sqlite":
            target.symlink_to(db)
        with pytest.raises(QueryValidationError, match="SQLite database") as err:
            check_outputs({"--out": target}, history=tmp_path / "mine.sqlite")
        assert str(db) in err.value.message
    check_outputs({"--out": tmp_path / "fresh.json"})  # a new text file: fine


def test_a_folder_that_takes_no_new_file_is_refused_before_the_work(tmp_path: Path):
    """``/proc`` lets root pass ``os.access``; the write failed after the work (a traffic run
    had saved its benchmark and recorded its run). A probe file is made and removed instead."""
    with pytest.raises(
        QueryValidationError, match=r"its folder (cannot be written|is not writable)"
    ):
        check_outputs({"--output": Path("/proc/ragsonde-out.json")})
    check_outputs({"--output": tmp_path / "out.json"})
    assert list(tmp_path.iterdir()) == []  # the probe is gone


def test_a_benchmark_output_onto_a_file_of_another_kind_is_refused(tmp_path: Path):
    """``generate --out docs/lidar.md`` replaced a source document with JSON Lines."""
    doc = tmp_path / "lidar.md"
    doc.write_text("# Lidar\n\nCalibrate it.\n")
    with pytest.raises(QueryValidationError, match="is not JSON Lines"):
        check_outputs({"--out": doc}, rows=["--out"])
    check_outputs({"--report": doc})  # an output that is not rows: as before
    for fine in ("", "\n\n", '{"query": "q"}\n', '\ufeff{"query": "q"}\n'):
        old = tmp_path / "old.jsonl"
        old.write_text(fine)
        check_outputs({"--out": old}, rows=["--out"])
