"""The one way ragsonde writes a file a user named: checked first, then replaced whole.

Every output a command writes (``--out``, ``--save``, ``--report``, ``history export -o`` …)
goes through here, in two steps:

1. :func:`check_outputs`, before any work: a path is refused (VALIDATION_ERROR naming the option)
   when it is a directory, its folder is missing, is a file or is not writable, it is the
   history file or any SQLite database (another history, the LLM answer cache: every output
   is text) or an input of the same command, two outputs of the command name one file,
   or it is ``-`` (standard output: ``history export -o -`` takes it so itself; elsewhere it
   was a file named ``-`` in the working folder), or it lies inside a Qdrant store's folder
   (an embedded collection, a qdrant-client local folder). A refused command has done nothing, so
   nothing is thrown away.
2. :func:`write_text` / :func:`open_output`: the text goes to a temporary file in the same
   folder, is fsynced and renamed into place, so the old file stays whole until the new one is
   complete (a crash, a full disk or Ctrl-C leaves the old one). A path that exists and is not
   a regular file (``/dev/stdout``, a FIFO, ``/dev/full``) is written in place: renaming over a
   device would replace it; a FIFO that no process reads is an error, not a wait for ever.
   Disk full and permission errors are one clear error.

A file read, changed and written back by several processes (a benchmark the Judge page grades
into) is changed inside :func:`updating`: one process at a time, so none writes back a copy
read before another's write and loses it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TextIO

from ragsonde.errors import QueryValidationError, StoreConnectionError
from ragsonde.sqlite_cache import SQLITE_HEADER

__all__ = [
    "check_output",
    "check_outputs",
    "open_output",
    "store_holding",
    "updating",
    "write_bytes",
    "write_text",
]

#: SQLite keeps these beside a database; writing one of them corrupts the database too.
_SQLITE_SIDECARS = ("", "-wal", "-shm", "-journal")


def _same(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (hard links and symlinks included)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.absolute() == b.absolute() or _resolved(a) == _resolved(b)


def _resolved(p: Path) -> Path:
    try:
        return p.resolve()
    except (OSError, RuntimeError):  # a symlink loop: compare as written
        return p.absolute()


def _refuse(flag: str, path: Path, why: str) -> QueryValidationError:
    return QueryValidationError(f"{flag} {path}: {why}. Nothing was run.", field=flag.lstrip("-"))


def check_output(
    path: Path,
    flag: str,
    *,
    inputs: Iterable[Path | str | None] = (),
    history: Path | None = None,
    database: bool = False,
    rows: bool = False,
) -> Path:
    """``path`` if a command may write its ``flag`` output there, else a VALIDATION_ERROR that
    names ``flag`` and says why (see the module's docstring). ``database``: the output is a
    SQLite database itself (``traffic --history``), so an existing one there is no refusal.
    ``rows``: the output is JSON Lines (a benchmark), so an existing file that is not (a
    document, ``generate --out docs/lidar.md``) is refused rather than replaced."""
    if str(path) == "-":  # was a file named "-" in the working folder, not standard output
        raise _refuse(
            flag,
            path,
            "'-' (standard output) is not a place this option writes to; name a file "
            "(a file named '-' as $PWD/-)",
        )
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    except OSError as e:  # a path under a file, a symlink loop, no permission
        why = "is under a file, not a folder" if e.errno == errno.ENOTDIR else "cannot be written"
        raise _refuse(flag, path, f"{why} ({e.strerror or e})") from e
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _refuse(flag, path, "is a directory; name a file in it")
    # a symlink is written through, to the file it names (made, when it dangles): that file's
    # folder is where the new file is made
    target = _resolved(path) if path.is_symlink() else path
    parent = target.parent
    if st is None:
        if not parent.exists():
            under = _under_file(parent)
            why = "its folder does not exist" if not under else "is under a file"
            if target is not path:
                where = "which is under a file" if under else "whose folder does not exist"
                why = f"is a symlink to {target}, {where}"
            raise _refuse(flag, path, f"{why}; create the folder first")
        if not parent.is_dir():
            raise _refuse(flag, path, "is under a file, not a folder")
    if (st is None or stat.S_ISREG(st.st_mode)) and not os.access(parent, os.W_OK | os.X_OK):
        # the new file is made beside it and renamed: refused before the work, not after it
        raise _refuse(flag, path, "its folder is not writable; write to a folder you may write to")
    if st is None or stat.S_ISREG(st.st_mode):
        _probe(flag, path, parent)
    store = store_holding(target)
    if store is not None:
        raise _refuse(
            flag,
            path,
            f"is inside a Qdrant store ({store}); writing there would damage its collections",
        )
    if history is not None and any(
        _same(path, Path(f"{history}{suffix}")) for suffix in _SQLITE_SIDECARS
    ):
        raise _refuse(flag, path, "is the history file; writing there would replace the history")
    held = None if database else _sqlite_database(target)
    if held is not None:
        raise _refuse(
            flag,
            path,
            f"{'is' if held == target else 'belongs to'} the SQLite database {held} (a "
            "ragsonde history, the LLM answer cache, or another program's); no output of "
            "ragsonde is one, and writing there would replace it",
        )
    for given in inputs:
        if given is not None and str(given) and st is not None and _same(path, Path(given)):
            raise _refuse(flag, path, "is an input of this command; writing it would replace it")
    if rows and st is not None and stat.S_ISREG(st.st_mode) and not _holds_rows(path):
        raise _refuse(
            flag,
            path,
            "exists and is not JSON Lines (its first line is no JSON object); writing the "
            "benchmark would replace it: name a new file",
        )
    return path


def _holds_rows(path: Path) -> bool:
    """Whether ``path`` is empty or its first non-blank line starts a JSON object."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return True  # refused or not, the write will say
    first = next((line.strip() for line in head.splitlines() if line.strip()), b"")
    return not first or first.lstrip(b"\xef\xbb\xbf").startswith(b"{")


def _probe(flag: str, path: Path, parent: Path) -> None:
    """Make and remove a file where the output will be made: ``os.access`` says yes to root on
    a read-only file system or ``/proc``, and the output failed after the work (a ``traffic``
    run had saved its benchmark and recorded its run by then)."""
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".ragsonde-probe-")
    except OSError as e:
        raise _refuse(flag, path, f"its folder cannot be written ({e.strerror or e})") from e
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


#: What marks a folder as a Qdrant store's own: an embedded (Edge) collection's config and
#: ragsonde's lock beside it; a qdrant-client local folder's ``meta.json`` beside ``collection/``.
_STORE_MARKS: tuple[tuple[str, ...], ...] = (
    ("edge_config.json",),
    (".ragsonde.lock",),
    ("meta.json", "collection"),
)


def store_holding(target: Path) -> Path | None:
    """The store folder ``target`` would be written in (it or one of its folders is one), or
    None. ``eval --save home/collections/c/edge_config.json`` replaced the collection's config
    and broke it."""
    for folder in Path(os.path.abspath(target)).parents:
        try:
            if any(all((folder / m).exists() for m in marks) for marks in _STORE_MARKS):
                return folder
        except OSError:  # no permission to look: not ours to call a store
            continue
    return None


def _sqlite_database(target: Path) -> Path | None:
    """The SQLite database ``target`` is, or whose ``-wal``/``-shm``/``-journal`` it is, or
    None. Every ragsonde output is text, so a database there is somebody's data: ``judge -o
    home/history.sqlite`` replaced every recorded run, and ``--save .../llm-cache.sqlite`` the
    paid-for answers, when only the command's own history was checked."""
    candidates = [target]
    for suffix in _SQLITE_SIDECARS[1:]:
        if target.name.endswith(suffix):
            candidates.append(target.with_name(target.name[: -len(suffix)]))
    for candidate in candidates:
        try:
            if not candidate.is_file():  # absent, a FIFO or a device: never opened (it blocks)
                continue
            with open(candidate, "rb") as f:
                if f.read(len(SQLITE_HEADER)) == SQLITE_HEADER:
                    return candidate
        except OSError:  # not ours to read: not a database we can see
            continue
    return None


def _under_file(folder: Path) -> bool:
    """Whether some ancestor of ``folder`` that exists is a file (not a folder)."""
    for p in (folder, *folder.parents):
        if p.exists():
            return not p.is_dir()
    return False


def check_outputs(
    outputs: Mapping[str, Path | None],
    *,
    inputs: Iterable[Path | str | None] = (),
    history: Path | None = None,
    rows: Iterable[str] = (),
) -> None:
    """:func:`check_output` for each named output (``{"--save": path, …}``; ``None`` = not
    asked for; ``rows``: the flags whose output is JSON Lines), and no two of them one file."""
    given = [(flag, p) for flag, p in outputs.items() if p is not None]
    inputs, jsonl = list(inputs), set(rows)
    for flag, p in given:
        check_output(p, flag, inputs=inputs, history=history, rows=flag in jsonl)
    for i, (flag, p) in enumerate(given):
        for other, q in given[i + 1 :]:
            if p.absolute() == q.absolute() or (p.exists() and _same(p, q)):
                raise _refuse(flag, p, f"is also {other}; give each output its own file")


def _write_error(path: Path, e: OSError | UnicodeEncodeError) -> QueryValidationError:
    if isinstance(e, UnicodeEncodeError):
        why = f"the text holds a lone surrogate at character {e.start}, which is not Unicode"
    elif e.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "the disk is full; free some space or write elsewhere"
    elif e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        why = "permission denied; write to a folder you may write to"
    else:
        why = e.strerror or str(e)
    return QueryValidationError(
        f"Cannot write {path}: {why}. The file there (if any) was left as it was.", field="output"
    )


@contextlib.contextmanager
def open_output(path: Path) -> Iterator[TextIO]:
    """A text file to write ``path`` through: a temporary file beside it, fsynced and renamed
    into place when the block ends without an error (removed when it raises). OSError becomes
    a VALIDATION_ERROR naming ``path``."""
    try:
        if path.is_symlink():  # the file it points to is the one replaced (or made): the
            path = path.resolve()  # link stays; a dangling one failed after the work
        special = path.exists() and not path.is_file()
    except (OSError, RuntimeError) as e:  # RuntimeError: a symlink loop (before Python 3.13)
        raise _write_error(path, e if isinstance(e, OSError) else OSError(str(e))) from e
    if special:  # a device or FIFO: write in place (a rename would replace it)
        try:
            with _open_in_place(path) as f:
                yield f
                f.flush()
        except (OSError, UnicodeEncodeError) as e:
            raise _write_error(path, e) from e
        return
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if path.exists():  # keep the mode of the file it replaces
            os.chmod(tmp, stat.S_IMODE(path.stat().st_mode))
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
        tmp = None
    except (OSError, UnicodeEncodeError) as e:
        raise _write_error(path, e) from e
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _open_in_place(path: Path) -> TextIO:
    """``path`` (a device or a FIFO) opened for writing text. A FIFO is opened non-blocking
    first: with no process reading it, the open waited for one for ever; now it is an error
    that says so."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO nobody reads
            raise OSError(
                e.errno, "it is a named pipe (FIFO) that no process is reading; start its reader"
            ) from e
        raise
    os.set_blocking(fd, True)
    return os.fdopen(fd, "w", encoding="utf-8", newline="")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8) the safe way (:func:`open_output`)."""
    with open_output(path) as f:
        f.write(text)


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` the safe way (:func:`open_output`)."""
    with open_output(path) as f:
        f.buffer.write(data)


_UPDATE_POLL_S = 0.02


@contextlib.contextmanager
def updating(path: Path, wait_s: float = 30.0) -> Iterator[None]:
    """Hold ``path`` for a read-change-write across processes (and threads): an exclusive lock
    on ``.NAME.lock`` beside it (the file itself is replaced whole, so its lock would go with
    the old copy). Waits up to ``wait_s`` for another holder, then a CONNECTION_ERROR."""
    import portalocker
    import portalocker.exceptions

    lock = path.parent / f".{path.name}.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = lock.open("a", encoding="utf-8")
    except OSError as e:
        raise _write_error(path, e) from e
    flags = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                portalocker.lock(handle, flags)
                break
            except portalocker.exceptions.LockException as e:
                if time.monotonic() >= deadline:
                    raise StoreConnectionError(
                        f"{path} stayed locked by another process for {wait_s:g} s (it is "
                        "writing the file); try again when it has finished."
                    ) from e
                time.sleep(_UPDATE_POLL_S)
        yield
    finally:
        handle.close()  # closing unlocks
