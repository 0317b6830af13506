"""The one way ragsonde opens a file a user named for reading: a regular file, to a stated limit.

What :mod:`ragsonde.outputs` is to the files a command writes, this is to the ones it reads:

- A path that is not a regular file is refused before it is opened, in plain words
  (:func:`not_a_file`): opening a named pipe (FIFO) waits for a writer, for ever; ``/dev/zero``
  and ``/dev/urandom`` never end, so a read of them fills memory until the machine kills the
  process (``ingest --chunking /dev/zero`` did, at 24 GB). The file is then opened
  non-blocking and checked again, so a pipe put in its place between the two does not hang.
- A file is read as it was when it was opened (its size then): a log another process keeps
  appending to ends where it ended then, instead of being chased for ever.
- A file read whole is read to a limit (:func:`read_bytes`): :data:`MAX_SETTINGS_BYTES` for a
  settings-like file (TOML or YAML a person writes), :data:`MAX_DOCUMENT_BYTES` for a JSON
  document (a batch, a saved report); one byte more is a refusal that states the limit.
- A file read line by line (a benchmark, a traffic log, documents to ingest) is read through
  :func:`bounded_lines`: a line longer than :data:`MAX_LINE_BYTES` (a file of one 200 MB line,
  or a gzip bomb that inflates to gigabytes without a newline) is refused when the limit is
  reached, never held whole in memory; read as text, through :func:`decoded_lines`
  (:func:`text_lines`), which says in the same words for every reader that a line holds binary
  data or bytes that are not UTF-8, and where.
- A text file read whole (a document to ingest, a batch file, a JSON document) is decoded by
  :func:`decoded_text`, in the same words, at the line of the first bad byte; and a file saved
  as UTF-16 or UTF-32 (:func:`other_encoding`, by its byte order mark) is said to be that.

Errors are :class:`ValueError` with the reason alone ("it is a named pipe (FIFO), not a file"),
for the caller to prefix with what it reads and raise as its VALIDATION_ERROR.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_SETTINGS_BYTES",
    "bounded_lines",
    "decoded_lines",
    "decoded_text",
    "joined",
    "not_a_file",
    "open_regular",
    "other_encoding",
    "read_bytes",
    "read_lines",
    "size_text",
    "text_lines",
]

#: A settings-like file a person writes (``--config``, ``--chunking``, ``--grid``): 1 MiB.
MAX_SETTINGS_BYTES = 1 << 20
#: A JSON document read whole (a batch file, a saved report, a judging plan): 256 MiB.
MAX_DOCUMENT_BYTES = 256 << 20
#: One line of a file read line by line (a benchmark row, a log line, an OTLP request): 64 MiB.
MAX_LINE_BYTES = 64 << 20


def size_text(n: int) -> str:
    """``n`` bytes the way a limit is stated: ``1 MiB``, ``256 MiB``."""
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "it is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return (
            "it is a named pipe (FIFO), not a file: a pipe can be read only once, and may wait "
            "for a writer for ever; write what it carries to a file first"
        )
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "it is a device, not a file; reading it might never end"
    if stat.S_ISSOCK(mode):
        return "it is a socket, not a file"
    return "it is not a regular file"


def not_a_file(path: Path) -> str | None:
    """Why ``path`` is no regular file to read, in plain words (no such file, a dangling
    symlink, a folder, a FIFO, a device, no permission); None when it is one."""
    try:
        st = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            return f"it is a symlink to {os.readlink(path)}, which does not exist"
        return "no such file"
    except OSError as e:  # a symlink loop, a path under a file, no permission on a folder
        return e.strerror or str(e)
    return _kind(st.st_mode)


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for reading bytes, after :func:`not_a_file` found it a regular file;
    opened non-blocking and checked again, so a FIFO swapped in meanwhile is refused, not
    waited on. ValueError with the reason otherwise."""
    why = not_a_file(path)
    if why is not None:
        raise ValueError(why)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ValueError(e.strerror or str(e)) from e
    try:
        st = os.fstat(fd)
        why = _kind(st.st_mode)
        if why is not None:
            raise ValueError(why)
        os.set_blocking(fd, True)
        raw = _Snapshot(io.FileIO(fd, "rb"), st.st_size)
    except BaseException:
        os.close(fd)
        raise
    return io.BufferedReader(raw)


class _Snapshot(io.RawIOBase):
    """The first ``size`` bytes of a file: what it held when it was opened. A log another
    process appends to faster than it is read (``yes >> chat.log``) was read for ever."""

    def __init__(self, f: io.FileIO, size: int) -> None:
        self._f, self._size = f, size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._size - self._f.tell()
        if left <= 0:
            return 0
        view = memoryview(buffer).cast("B")
        return self._f.readinto(view[: min(len(view), left)]) or 0

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_END:
            return self._f.seek(self._size + offset)
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def fileno(self) -> int:
        return self._f.fileno()

    def close(self) -> None:
        try:
            self._f.close()
        finally:
            super().close()


def read_bytes(path: Path, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them: a larger file is a
    ValueError that states the limit (``what`` names the kind of file in it)."""
    with open_regular(path) as f:
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise ValueError(e.strerror or str(e)) from e
    if len(data) > limit:
        raise ValueError(
            f"it is larger than {size_text(limit)}, the most ragsonde reads of a {what}"
        )
    return data


def bounded_lines(f: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of the binary stream ``f`` (each with its newline), none longer than
    ``limit`` bytes: a longer one is a ValueError naming its line number and the limit, raised
    when ``limit`` bytes of it have been read (not after reading it whole)."""
    for n, line in enumerate(iter(lambda: f.readline(limit + 1), b""), start=1):
        if len(line) > limit and not (len(line) == limit + 1 and line.endswith(b"\n")):
            raise ValueError(
                f"line {n} is longer than {size_text(limit)}, the most ragsonde reads of a line"
            )
        yield line


def read_lines(path: Path, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` of the regular file ``path`` (:func:`open_regular`), each line
    at most ``limit`` bytes (:func:`bounded_lines`); ValueError with the reason otherwise."""
    with open_regular(path) as f:
        yield from enumerate(bounded_lines(f, limit), start=1)


def decoded_lines(f: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the binary stream ``f``, each line bounded
    (:func:`bounded_lines`) and decoded as UTF-8 on its own, so an error names its line: a BOM
    opening the first line is dropped; a line holding NUL bytes (a binary file) or bytes that
    are not UTF-8 is a ValueError saying which, at which line and byte."""
    for n, raw in enumerate(bounded_lines(f, limit), start=1):
        if b"\x00" in raw:
            raise ValueError(f"line {n} holds binary data (NUL bytes), not text")
        try:
            yield n, raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(
                f"line {n} is not UTF-8 text ({e.reason} at byte {e.start}); "
                "convert it to UTF-8 (e.g. iconv -t UTF-8)"
            ) from None


#: The byte order marks of the encodings a text file is saved in instead of UTF-8 (whose own
#: mark is read, and dropped). UTF-32's first: its little-endian mark opens with UTF-16's.
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def other_encoding(head: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` when ``head`` (a file's first bytes) opens with that
    encoding's byte order mark, else None."""
    return next((name for bom, name in _OTHER_BOMS if head.startswith(bom)), None)


def _where(data: bytes, at: int) -> tuple[int, int]:
    """The line (from 1) of byte ``at`` of ``data``, and its byte within that line (from 0)."""
    return data.count(b"\n", 0, at) + 1, at - (data.rfind(b"\n", 0, at) + 1)


def decoded_text(data: bytes) -> str:
    """``data`` (a text file read whole) decoded as UTF-8, a BOM opening it dropped. Else a
    ValueError with the reason alone, in :func:`decoded_lines`' words, at the first line that
    is not text: a file opening with a UTF-16 or UTF-32 byte order mark is said to be that; a
    line holding NUL bytes is binary data (UTF-16 text without a byte order mark is valid UTF-8
    with a NUL every other byte, and was embedded as ``h\\0i\\0``); bytes that are not UTF-8 are
    named by line and by byte within the line, as Python's decoder finds them."""
    encoding = other_encoding(data)
    if encoding is not None:
        raise ValueError(
            f"it is {encoding} text (it opens with a {encoding} byte order mark): save it as "
            f"UTF-8 (e.g. iconv -f {encoding} -t UTF-8)"
        )
    nul = data.find(b"\x00")
    # the lines before the first NUL's: a line of bad bytes above it is named first
    head = data if nul < 0 else data[: data.rfind(b"\n", 0, nul) + 1]
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line, byte = _where(data, e.start)
        raise ValueError(
            f"line {line} is not UTF-8 text ({e.reason} at byte {byte}); convert it to UTF-8 "
            "(e.g. iconv -t UTF-8)"
        ) from None
    if nul >= 0:
        raise ValueError(
            f"line {_where(data, nul)[0]} holds binary data (NUL bytes), not text (UTF-16 "
            "without a byte order mark? save it as UTF-8)"
        )
    return text


def text_lines(path: Path, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the regular file ``path`` (:func:`open_regular`), through
    :func:`decoded_lines`; ValueError with the reason otherwise."""
    with open_regular(path) as f:
        yield from decoded_lines(f, limit)


def joined(parts: Iterable[str], limit: int = MAX_DOCUMENT_BYTES) -> str:
    """``parts`` (a file's decoded lines) as one document, read no further than ``limit``
    characters: a document parsed whole (YAML, one OTLP JSON document over many lines) is held
    whole. Past the limit, a ValueError stating it (the caller says what to write instead)."""
    out: list[str] = []
    size = 0
    for part in parts:
        size += len(part)
        if size > limit:
            raise ValueError(f"it is larger than {size_text(limit)}, the most ragsonde reads whole")
        out.append(part)
    return "".join(out)
