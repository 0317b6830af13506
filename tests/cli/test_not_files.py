"""Inputs that are not files, and files too big to hold, at the CLI as real processes
(``ragsonde.inputs``): each a VALIDATION_ERROR (exit 2) that says what the path is, at once.

Before: ``ingest --chunking /dev/zero`` read until the kernel killed it at 24 GB, and with a
FIFO it waited for a writer for ever; ``batch``, ``tune --grid``, ``config``, ``compare``,
``ingest`` and ``history list`` named a FIFO or a device "does not exist", "a folder", "empty",
"a folder with no document", or (history) read it as an empty history and exited 0; a traffic
gzip that inflates to one endless line was held whole in memory (2.4 GB for 1 GiB).

The processes run under a 4 GiB address-space limit, so a regression fails the test with a
MemoryError instead of filling the machine, and under a timeout, so a hang fails it too.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tests.support import ROOT, home_env

pytestmark = pytest.mark.slow  # processes

_LIMIT = 4 << 30
ROW = '{"query_id": "q1", "query": "lidar range", "relevant": ["lidar"]}\n'
#: What each kind of path is said to be.
SAID = {
    "fifo": "it is a named pipe (FIFO), not a file: a pipe can be read only once, and may wait for a writer for ever; write what it carries to a file first",
    "zero": "it is a device, not a file; reading it might never end",
}


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_LIMIT, _LIMIT))


def ragsonde(
    home: Path,
    *args: str,
    timeout: float = 60,
    cwd: Path = ROOT,
    prefix: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """``python -m ragsonde ARGS`` on ``home`` in ``cwd`` (after a ``prefix`` command, if
    any), bounded in memory and time."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=home_env(home),
        timeout=timeout,
        cwd=cwd,
        preexec_fn=_bounded,
    )


def refused(r: subprocess.CompletedProcess[str], said: str) -> None:
    message = " ".join(r.stderr.split())
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert message.startswith(f"VALIDATION_ERROR: {said}"), message


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """A folder with a benchmark, a document, and a FIFO."""
    (tmp_path / "bench.jsonl").write_text(ROW, encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "lidar.md").write_text("# Lidar\n\nA laser measures range.\n")
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


#: (command line with {bad} for the path, what the message starts with, {why} for the reason)
COMMANDS = {
    "batch": (["batch", "{bad}"], "Batch file {bad} cannot be read: {why}."),
    "config": (["config", "--config", "{bad}"], "The config file {bad} cannot be read: {why}."),
    "compare": (["compare", "{bad}", "{bad}"], "cannot read report {bad}: {why}"),
    "tune-grid": (
        ["tune", "{dir}/bench.jsonl", "-c", "nowhere", "--grid", "{bad}"],
        "Cannot read grid file {bad}: {why}.",
    ),
    "ingest": (["ingest", "{bad}", "-c", "nowhere"], "Source '{bad}' cannot be read: {why}."),
    "ingest-chunking": (
        ["ingest", "{dir}/docs", "-c", "nowhere", "--chunking", "{bad}"],
        "Cannot read chunking file {bad}: {why}",
    ),
    "traffic": (["traffic", "{bad}", "--no-record"], "Cannot read traffic file {bad}: {why}"),
    "eval-baseline": (
        ["eval", "{dir}/bench.jsonl", "--history", "{dir}/h.sqlite", "--baseline", "{bad}"],
        "cannot read baseline {bad}: {why}",
    ),
    "history": (
        ["history", "list", "--history", "{bad}"],
        "History file {bad} is a named pipe or a device, not a file",
    ),
}


@pytest.mark.parametrize("kind", ["fifo", "zero"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_fifo_or_a_device_is_refused_saying_what_it_is(
    place: Path, command: str, kind: str
) -> None:
    bad = str(place / "fifo") if kind == "fifo" else "/dev/zero"
    argv, said = COMMANDS[command]
    args = [a.format(bad=bad, dir=place) for a in argv]
    refused(ragsonde(place / "home", *args), said.format(bad=bad, why=SAID[kind]))


def test_a_dangling_symlink_says_where_it_points(place: Path) -> None:
    link = place / "grid.toml"
    link.symlink_to(place / "gone.toml")
    r = ragsonde(place / "home", "tune", str(place / "bench.jsonl"), "--grid", str(link))
    refused(r, f"Cannot read grid file {link}: it is a symlink to {place / 'gone.toml'}")


def test_a_settings_file_over_its_limit_is_refused_stating_the_limit(place: Path) -> None:
    big = place / "chunking.toml"
    big.write_text("[chunking]\n" + "# padding\n" * 120_000)  # 1.2 MB of comments: valid TOML
    r = ragsonde(place / "home", "ingest", str(place / "docs"), "--chunking", str(big))
    refused(r, f"Cannot read chunking file {big}: it is larger than 1 MiB")


def _long_line(path: Path, before: bytes = b"", size: int = (64 << 20) + 1024) -> None:
    with path.open("wb") as f:
        f.write(before + b'{"query_id": "q2", "query": "')
        f.write(b"a" * size)
        f.write(b'", "relevant": ["lidar"]}\n')


def test_a_benchmark_line_over_the_limit_is_refused_not_held(place: Path) -> None:
    bench = place / "long.jsonl"
    _long_line(bench, before=ROW.encode())
    r = ragsonde(place / "home", "eval", str(bench), "--no-record")
    refused(r, f"Cannot read benchmark {bench}: line 2 is longer than 64 MiB")


def test_a_traffic_gzip_that_inflates_to_one_endless_line_is_refused(place: Path) -> None:
    """1 MB on disk, 256 MiB inflated, no newline after the first line: was held whole (and the
    command answered exit 0, the line skipped as malformed)."""
    bomb = place / "chat.log.jsonl.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    with bomb.open("wb") as f:
        f.write(packer.compress(b'{"query": "how far does the laser reach"}\n'))
        block = b"a" * (1 << 20)
        for _ in range(256):
            f.write(packer.compress(block))
        f.write(packer.flush())
    assert bomb.stat().st_size < 2 << 20
    r = ragsonde(place / "home", "traffic", str(bomb), "--no-record")
    refused(r, f"Cannot read traffic file {bomb}: line 2 is longer than 64 MiB")


def test_an_ingested_line_over_the_limit_is_a_listed_failure(place: Path) -> None:
    docs = place / "docs.jsonl"
    _long_line(docs)
    r = ragsonde(place / "home", "ingest", str(docs), "-c", "long")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "docs.jsonl: line 1 is longer than 64 MiB" in " ".join(r.stderr.split()), r.stderr


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["traffic", "{dir}/bench.jsonl", "--no-record", "-o", "-"], "--output"),
        (["eval", "{dir}/bench.jsonl", "--no-record", "--save", "-"], "--save"),
        (["tune", "{dir}/bench.jsonl", "--save-config", "-"], "--save-config"),
    ],
    ids=["traffic-o", "eval-save", "tune-save-config"],
)
def test_dash_as_an_output_is_refused_not_a_file_named_dash(
    place: Path, args: list[str], flag: str
) -> None:
    """``-`` is standard output only where a command says so (``history export -o -``); these
    wrote a file named ``-`` in the working folder (and traffic's table to stdout besides)."""
    argv = [a.format(dir=place) for a in args]
    r = ragsonde(place / "home", *argv, timeout=120, cwd=place)
    refused(r, f"{flag} -: '-' (standard output) is not a place this option writes to")
    assert not (place / "-").exists()


def test_a_fifo_in_an_ingested_folder_is_listed_as_skipped_and_the_rest_ingested(
    place: Path,
) -> None:
    """A FIFO among the documents went unlisted, and a symlink to it was "a broken symlink"."""
    docs = place / "docs"
    os.mkfifo(docs / "pipe.md")
    (docs / "link.md").symlink_to("pipe.md")
    r = ragsonde(place / "home", "ingest", str(docs), "-c", "folder")
    said = " ".join(r.stderr.split())
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "Ingested 1 document → " in r.stdout, r.stdout
    fifo = "it is a named pipe (FIFO), not a file: a pipe can be read only once, and may wait for a writer for ever; write what it carries to a file first"
    for name in ("link.md", "pipe.md"):
        assert f"failed {name}: skipped: {fifo}" in said, said


def _without_root_override() -> tuple[str, ...]:
    """A prefix that runs a process without root's right to write anywhere (as root, a
    read-only folder is writable); none for another user."""
    if os.geteuid() != 0:
        return ()
    import shutil

    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv: a read-only folder cannot be made read-only")
    return (setpriv, "--bounding-set", "-dac_override,-dac_read_search")


def test_an_output_in_a_read_only_folder_is_refused_before_the_work(place: Path) -> None:
    """It was refused after the traffic had been read and replayed (the work thrown away)."""
    folder = place / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    out = folder / "report.json"
    argv = ["traffic", str(place / "bench.jsonl"), "--no-record", "-o", str(out)]
    r = ragsonde(place / "home", *argv, timeout=120, cwd=place, prefix=_without_root_override())
    refused(r, f"--output {out}: its folder is not writable; write to a folder you may")
    assert "Nothing was run" in r.stderr and list(folder.iterdir()) == []


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_home_that_is_not_a_folder_says_so(place: Path, kind: str) -> None:
    """It listed no collection: "Collection 'rag_embedding' does not exist"."""
    bad = str(place / "fifo") if kind == "fifo" else "/dev/zero"
    r = ragsonde(place / "home", "query", "lidar range", "--home", bad)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    said = " ".join(r.stderr.split())
    assert said.startswith(f"CONNECTION_ERROR: The home {bad} is not a folder"), said


def test_a_batch_file_over_its_limit_is_refused_before_it_is_read(place: Path) -> None:
    """A batch holds at most 100 queries: a 200 MB file was read whole (840 MB at its peak)."""
    batch = place / "batch.jsonl"
    _long_line(batch, size=(16 << 20) + 1)
    r = ragsonde(place / "home", "batch", str(batch))
    refused(r, f"Batch file {batch} cannot be read: it is larger than 16 MiB")


def test_an_output_fifo_nobody_reads_is_an_error_and_one_with_a_reader_is_written(
    place: Path,
) -> None:
    """``eval --run-out FIFO`` with no reader waited for one for ever, after the evaluation."""
    home = place / "home"
    assert ragsonde(home, "ingest", str(place / "docs"), "-c", "c").returncode == 0
    fifo = place / "fifo"
    run = ["eval", str(place / "bench.jsonl"), "-c", "c", "--no-record", "--run-out", str(fifo)]
    refused(
        ragsonde(home, *run),
        f"Cannot write {fifo}: it is a named pipe (FIFO) that no process is reading",
    )
    with (place / "read.trec").open("w") as sink:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=sink)
        try:
            r = ragsonde(home, *run)
        finally:
            reader.wait(timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (place / "read.trec").read_text().split()[:3] == ["q1", "Q0", "lidar"]


def test_a_yaml_benchmark_over_the_document_limit_is_refused(place: Path) -> None:
    """A YAML benchmark is parsed whole: it was joined and parsed at any size."""
    bench = place / "big.yaml"
    with bench.open("wb") as f:
        f.write(b"- query_id: q1\n  query: lidar range\n  relevant: [lidar]\n")
        for _ in range(257):
            f.write(b"#" + b" " * ((1 << 20) - 2) + b"\n")  # 1 MiB comment lines
    r = ragsonde(place / "home", "eval", str(bench), "--no-record")
    refused(r, f"Cannot read benchmark {bench}: it is larger than 256 MiB")


def test_an_output_through_a_dangling_symlink_makes_its_file_or_is_refused_first(
    place: Path,
) -> None:
    """Both failed after the evaluation: "Cannot write link.json: No such file or directory"."""
    home = place / "home"
    nowhere = place / "link-nowhere.json"
    nowhere.symlink_to(place / "missing" / "report.json")
    argv = ["traffic", str(place / "bench.jsonl"), "--no-record", "-o", str(nowhere)]
    refused(
        ragsonde(home, *argv),
        f"--output {nowhere}: is a symlink to {place / 'missing' / 'report.json'}, whose "
        "folder does not exist; create the folder first. Nothing was run.",
    )
    assert ragsonde(home, "ingest", str(place / "docs"), "-c", "c").returncode == 0
    link = place / "link.json"
    link.symlink_to("report.json")
    r = ragsonde(
        home, "eval", str(place / "bench.jsonl"), "-c", "c", "--no-record", "--save", str(link)
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert link.is_symlink() and json.loads((place / "report.json").read_text())["per_query"]
