"""``ragsonde.inputs``: the regular-file check, the bounds, and the snapshot a file is read as.

The CLI's refusals are tested as real processes in tests/cli/test_not_files.py; this is what
a process cannot show without racing a writer: a file appended to while it is read."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragsonde.inputs import (
    bounded_lines,
    decoded_lines,
    decoded_text,
    joined,
    not_a_file,
    open_regular,
    read_bytes,
    read_lines,
    text_lines,
)


def test_a_file_appended_to_while_it_is_read_is_read_as_it_was_when_opened(tmp_path: Path):
    """``yes >> chat.log`` outran ``traffic chat.log``, which read for ever (39 GB in 70 s)."""
    log = tmp_path / "chat.log.jsonl"
    log.write_bytes(b'{"query": "a"}\n' * 3)
    lines = read_lines(log)
    first = next(lines)
    with log.open("ab") as writer:
        writer.write(b'{"query": "b"}\n' * 100_000)
    assert [first[1], *(raw for _, raw in lines)] == [b'{"query": "a"}\n'] * 3
    with open_regular(log) as f:
        f.seek(0, os.SEEK_END)
        assert f.tell() == log.stat().st_size  # a new open sees the new size


def test_what_is_not_a_regular_file_is_said_plainly(tmp_path: Path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    said = {
        "folder": not_a_file(tmp_path),
        "fifo": not_a_file(tmp_path / "fifo"),
        "device": not_a_file(Path("/dev/null")),
        "missing": not_a_file(tmp_path / "nope"),
        "dangling": not_a_file(tmp_path / "link"),
    }
    assert said == {
        "folder": "it is a folder, not a file",
        "fifo": "it is a named pipe (FIFO), not a file: a pipe can be read only once, and may wait for a writer for ever; write what it carries to a file first",
        "device": "it is a device, not a file; reading it might never end",
        "missing": "no such file",
        "dangling": f"it is a symlink to {tmp_path / 'gone'}, which does not exist",
    }
    with pytest.raises(ValueError, match="named pipe"):
        open_regular(tmp_path / "fifo")  # refused, not waited on


def test_reads_stop_at_their_limit(tmp_path: Path):
    f = tmp_path / "f"
    f.write_bytes(b"x" * 100)
    assert read_bytes(f, 100) == b"x" * 100
    with pytest.raises(ValueError, match="larger than 99 bytes, the most ragsonde reads of a"):
        read_bytes(f, 99)
    # a line of exactly the limit (its newline past it) passes; one byte more does not
    assert list(bounded_lines(io.BytesIO(b"abcd\nef\n"), 4)) == [b"abcd\n", b"ef\n"]
    with pytest.raises(ValueError, match="line 2 is longer than 4 bytes"):
        list(bounded_lines(io.BytesIO(b"ab\nabcde\n"), 4))


def test_joined_holds_a_document_to_its_limit_across_its_lines() -> None:
    lines = ["ab\n", "cd\n", "e"]
    assert joined(lines, limit=7) == "ab\ncd\ne"  # exactly the limit
    with pytest.raises(ValueError, match="larger than 6 bytes"):
        joined(lines, limit=6)

    def endless() -> Iterator[str]:
        while True:
            yield "x" * 1000

    with pytest.raises(ValueError, match="larger than 10000 bytes"):  # never read to its end
        joined(endless(), limit=10_000)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"ok\ncaf\xe9\n", "line 2 is not UTF-8 text (invalid continuation byte at byte 3)"),
        # a lone surrogate, as CESU-8 or Python's surrogatepass writes it
        (b"ok\nok\n\xed\xa0\x80\n", "line 3 is not UTF-8 text (invalid continuation byte"),
        (b"ok\n\x00\x01\x02\n", "line 2 holds binary data (NUL bytes), not text"),
    ],
)
def test_text_lines_name_the_line_that_is_not_text(tmp_path: Path, data: bytes, words: str):
    """Five readers (benchmarks, traffic logs, baselines, traffic reports, the judge's files)
    said this each in their own words; now one helper says it, at the line it happens."""
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    lines = text_lines(path)
    assert next(lines) == (1, "ok\n")  # the lines before are read
    with pytest.raises(ValueError, match=r"^line \d") as caught:
        list(lines)
    assert words in str(caught.value)
    # what Python's own decoder finds at that line: the oracle for the reason and the byte
    bad = data.splitlines(keepends=True)[int(words.split()[1]) - 1]
    if b"\x00" not in bad:
        with pytest.raises(UnicodeDecodeError) as python:
            bad.decode("utf-8")
        assert f"({python.value.reason} at byte {python.value.start})" in str(caught.value)


def test_decoded_lines_drop_a_bom_on_the_first_line_only() -> None:
    data = "\ufeff{}\n\ufeff{}\n".encode()
    assert list(decoded_lines(io.BytesIO(data))) == [(1, "{}\n"), (2, "\ufeff{}\n")]


def _lines_reason(data: bytes) -> str:
    """What :func:`decoded_lines` says of ``data``: the oracle for a whole file's reason."""
    with pytest.raises(ValueError, match=r"^line \d+ ") as caught:
        list(decoded_lines(io.BytesIO(data)))
    return str(caught.value)


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"ok\ncaf\xe9\n", 2),
        (b"\xef\xbb\xbfcaf\xe9\n", 1),  # the BOM's bytes count, as in a line read alone
        (b"ok\nok\n\xed\xa0\x80\n", 3),  # a lone surrogate written as CESU-8
        (b"ok\n\x00\x01\x02\n", 2),
        ("Lidar".encode("utf-16-le"), 1),  # UTF-16 without a BOM: valid UTF-8, NULs
        (b"caf\xe9\nok\n\x00\n", 1),  # the first line that is not text, whichever fault
        (b"\x00\nok\ncaf\xe9\n", 1),
        (b"ok\ncaf\xe9\x00\n", 2),  # both on one line: NUL bytes, as a line read alone
        (b"ok\ncaf\xc3", 2),  # cut inside a character at the end
    ],
)
def test_decoded_text_says_what_decoded_lines_says_of_the_same_bytes(data: bytes, line: int):
    """The ingested folder's file and the batch file were decoded by two copies, each in its
    own words ("binary data (NUL bytes, at line 2)", "is binary, not JSON text (a NUL byte on
    line 2)"); a whole file is now refused in the words of a file read line by line."""
    with pytest.raises(ValueError, match=rf"^line {line} ") as caught:
        decoded_text(data)
    assert str(caught.value).startswith(_lines_reason(data))


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        ("Lidar notes".encode("utf-16"), "UTF-16"),
        (b"\xfe\xff" + "Lidar notes".encode("utf-16-be"), "UTF-16"),
        ("Lidar notes".encode("utf-32"), "UTF-32"),
    ],
)
def test_decoded_text_names_utf16_and_utf32_by_their_byte_order_mark(data: bytes, encoding: str):
    with pytest.raises(ValueError, match=f"^it is {encoding} text") as caught:
        decoded_text(data)
    assert str(caught.value) == (
        f"it is {encoding} text (it opens with a {encoding} byte order mark): save it as UTF-8 "
        f"(e.g. iconv -f {encoding} -t UTF-8)"
    )


def test_decoded_text_drops_the_bom_opening_the_file_and_keeps_the_rest() -> None:
    text = "# Lidar\r\n\nLidar times laser pulses. \ufeff déjà\n"
    assert decoded_text(("\ufeff" + text).encode()) == text
    assert decoded_text(text.encode()) == text
    assert decoded_text(b"") == ""
