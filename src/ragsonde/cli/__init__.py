"""The ``ragsonde`` command line: thin commands over the library.

Each module registers its commands on :data:`ragsonde.cli.app.app`; importing them here is what
makes them part of the CLI. Heavy libraries are imported inside the commands, so ``--help`` is
instant.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from ragsonde.cli.app import app

__all__ = ["app", "load", "main", "run"]

#: Command modules (``--help`` lists their commands in the workflow order of
#: :data:`ragsonde.cli.panels.WORKFLOW`, grouped in panels).
_COMMAND_MODULES = (
    "query",
    "ingest",
    "push",
    "collections",
    "eval",
    "explain",
    "traffic",
    "compare",
    "history",
    "generate",
    "judge",
    "tune",
    "chunking",
    "schema",
    "serve",
    "mcp",
    "config",
)


#: Commands that live in a module named otherwise (every other command ``X`` is in
#: ``ragsonde.cli.X``); a test checks this against what each module registers.
_COMMANDS_ELSEWHERE = {"batch": "query", "inspect": "query"}
#: What Ctrl-C prints (as ``ragsonde._entry`` does while the command line loads).
_INTERRUPTED = "Interrupted (Ctrl-C).\n"
#: Root options that take a value (``ragsonde --config FILE history list``).
_ROOT_VALUE_OPTIONS = ("--config",)


def _modules_for(argv: Sequence[str]) -> tuple[str, ...]:
    """The command modules a command line needs: the one of the command it names, none for
    ``--version``, all of them for ``--help``, no command, or a word that is no command (so
    the help and "No such command" list every command)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in _ROOT_VALUE_OPTIONS:
            i += 2
        elif arg.startswith(tuple(f"{o}=" for o in _ROOT_VALUE_OPTIONS)):
            i += 1
        elif arg in ("-V", "--version"):
            return ()
        elif arg.startswith("-"):
            return _COMMAND_MODULES
        else:
            module = _COMMANDS_ELSEWHERE.get(arg, arg)
            return (module,) if module in _COMMAND_MODULES else _COMMAND_MODULES
    return _COMMAND_MODULES


def _register(argv: Sequence[str] | None = None) -> None:
    """Import the command modules: all of them, or only those the command line ``argv`` needs
    (:func:`_modules_for`), so that ``ragsonde history list`` does not load the retriever, the
    embedders and numpy to list runs."""
    for name in _COMMAND_MODULES if argv is None else _modules_for(argv):
        importlib.import_module(f"ragsonde.cli.{name}")
    from ragsonde.cli.panels import arrange

    arrange(app)


def _check_argv(argv: Sequence[str]) -> None:
    """Bytes in argv that are not UTF-8 arrive as surrogate escapes: refuse them here, at the
    door (VALIDATION_ERROR, exit 2), before any command can trip over them."""
    if all(arg.isascii() for arg in argv):  # the usual case, without loading the models
        return
    from ragsonde.errors import ErrorCode
    from ragsonde.models.text import invalid_unicode_at, printable

    for n, arg in enumerate(argv, start=1):
        at = invalid_unicode_at(arg)
        if at is None:
            continue
        byte = ord(arg[at]) - 0xDC00 if 0xDC80 <= ord(arg[at]) <= 0xDCFF else None
        what = f"byte 0x{byte:02X}" if byte is not None else f"U+{ord(arg[at]):04X}"
        message = (
            f"Argument {n} ({printable(arg)!r}) is not valid UTF-8 text: {what} at character "
            f"{at}. Pass file names and text as UTF-8."
        )
        if "--json" in argv:
            error = {"code": ErrorCode.VALIDATION_ERROR.value, "message": message}
            sys.stdout.write(json.dumps({"status": "error", "error": error}) + "\n")
        else:
            sys.stderr.write(f"{ErrorCode.VALIDATION_ERROR.value}: {message}\n")
        raise SystemExit(2)


def _plain_warnings() -> None:
    """ragsonde's own warnings (a deprecated setting name) as one line on stderr, not with the
    library line that happened to raise them."""
    import warnings

    shown = warnings.formatwarning

    def formatwarning(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        line: str | None = None,
    ) -> str:
        # not imported here: a command that never loads the settings has no such warning
        sources = sys.modules.get("ragsonde.config_sources")
        if sources is not None and issubclass(category, sources.FlatNameWarning):
            return f"warning: {message}\n"
        return shown(message, category, filename, lineno, line)

    warnings.formatwarning = formatwarning


class _Terminated(SystemExit):
    """SIGTERM, raised in the main thread as Ctrl-C's KeyboardInterrupt is: every ``finally`` and
    ``with`` runs on the way out (the local LLM's process is stopped, the embedded store's lock
    and temporary collections released) before the process ends as the signal says.

    A ``SystemExit``: asyncio lets that (and KeyboardInterrupt) out of a callback it runs and logs
    any other exception there. As a plain BaseException, a SIGTERM that landed while
    ``ragsonde mcp``'s event loop ran a callback was logged as "Exception in callback" and the
    server went on serving (7 runs in 11 one evening, signalled as its first request was read)."""


#: Seconds the cleanup after a SIGTERM may take before the process ends as the signal says.
SIGTERM_GRACE_S = 10.0
#: Whether a SIGTERM's cleanup is bounded: set by :func:`run`, the command line's own process.
_GRACE = {"armed": False}


def _on_sigterm(signum: int, frame: object) -> None:
    """Raise :class:`_Terminated`, and bound the cleanup it starts: a second SIGTERM, or
    :data:`SIGTERM_GRACE_S` later, ends the process at once. ``ragsonde mcp``'s event loop once
    spun for ever while it shut down (anyio delivering a cancellation no task took, after a
    SIGTERM that landed mid-request), and the server outlived the signal."""
    import threading

    if not _GRACE["armed"]:  # a library caller's own loop (the tests'): the signal alone
        raise _Terminated
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # in the main thread: handlers run there

    def end() -> None:
        threading.Event().wait(SIGTERM_GRACE_S)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=end, name="ragsonde-sigterm-grace", daemon=True).start()
    raise _Terminated


def main() -> None:
    """The command line ``sys.argv``, loaded then run (the script's entry point is
    :func:`ragsonde._entry.main`, which catches a Ctrl-C while this module loads)."""
    load(sys.argv[1:])
    run()


def load(argv: Sequence[str]) -> None:
    """Get ready to run the command line ``argv``: refuse bytes that are not UTF-8, and import
    the command modules it needs."""
    # Registered first, so it runs last: once every other exit handler has run (the tracing
    # exporter's flush among them), the interpreter's final garbage collections skip the
    # objects of the loaded libraries. They took 1-2 s of every command's exit (numpy, scipy,
    # pydantic, onnxruntime); Python does not promise finalizers at exit either way.
    atexit.register(gc.freeze)
    _check_argv(argv)
    _plain_warnings()
    _register(argv)


def run() -> None:
    """Run the loaded command line: Ctrl-C ends it with ``Interrupted (Ctrl-C).`` and exit 130,
    SIGTERM as the signal says, each after the command's cleanup."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # `serve`: uvicorn installs its own
        signal.signal(signal.SIGTERM, _on_sigterm)
        _GRACE["armed"] = True
    try:
        app()
    except (_Terminated, BaseExceptionGroup) as stop:
        # SIGTERM raised in a task of an async server (`ragsonde mcp`) comes in a task group's
        if isinstance(stop, BaseExceptionGroup) and stop.subgroup(_Terminated) is None:
            raise
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    except SystemExit as done:
        if _interrupted(done):
            sys.stderr.write(_INTERRUPTED)  # Typer's own exit 130 says nothing
        raise
    except KeyboardInterrupt as stop:  # outside Typer's own catch: while it builds the commands
        sys.stderr.write(_INTERRUPTED)
        raise SystemExit(130) from stop
    except OSError as e:
        _unwritable_stdout(e)


def _unwritable_stdout(e: OSError) -> NoReturn:
    """Standard output that cannot be written (``--json > /dev/full``, a full disk, a reader
    that went away): one line, not a traceback. Files a command writes are checked and mapped
    in :mod:`ragsonde.outputs`; what reaches here unmapped is the terminal's stream."""
    import errno

    if e.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EPIPE):
        raise e
    with contextlib.suppress(OSError):  # nothing more goes to the broken stream, at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if e.errno == errno.EPIPE:  # `ragsonde … | head`: the reader has all it wanted
        raise SystemExit(1) from None  # quietly, as Click ends a command's broken pipe
    with contextlib.suppress(OSError):
        sys.stderr.write(
            "VALIDATION_ERROR: Cannot write the standard output: the disk is full; free some "
            "space or redirect it elsewhere.\n"
        )
    raise SystemExit(2) from None


def _interrupted(done: BaseException) -> bool:
    """Whether the exit is Ctrl-C's: Typer turns a KeyboardInterrupt into a silent exit 130
    (its ``Exit``, raised from the interrupt), which Click ends the process with."""
    seen: BaseException | None = done
    for _ in range(8):  # the chain is SystemExit <- Exit <- KeyboardInterrupt
        if seen is None:
            return False
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
