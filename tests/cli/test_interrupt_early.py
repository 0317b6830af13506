"""Ctrl-C while the command line is still loading (Typer, Rich, the command modules): the real
process, sent SIGINT right away and at small delays, says ``Interrupted (Ctrl-C).`` and exits
130, as a Ctrl-C during a command does. Before, one landing in the first tenth of a second or so
was a KeyboardInterrupt traceback from inside an import.

A SIGINT can also land before ragsonde's handler is in place, while the interpreter starts and
runs the three lines that install it (``ragsonde/__init__.py``, ``__main__.py``, ``_entry.py``):
Python then ends by the signal, with no output or with a traceback through those frames and its
own startup (``<frozen …>``, the standard library, setuptools' import hook). Or after the command
is over, while the interpreter shuts down: the help is printed whole and Python says "Exception
ignored in: <module 'threading'> … KeyboardInterrupt". Neither is ragsonde's loading; a loaded machine (CI) meets
both. They are told apart here by the frames the traceback names: a Ctrl-C in the loading itself
(Typer, Rich, the command modules) names theirs.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.slow  # starts processes

DELAYS = (0.0, 0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3)
#: The installed ``ragsonde`` script does exactly this (pyproject's [project.scripts]).
SCRIPT = ("-c", "from ragsonde._entry import main; main()")


def _interrupt(args: tuple[str, ...], delay: float) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    with subprocess.Popen(
        [sys.executable, *args, "--help"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as p:
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


#: ragsonde's lines that run before its handler is in place (the package's ``__init__``, then
#: ``python -m``'s ``__main__`` or the script's ``_entry``).
BEFORE_HANDLER = tuple(
    str(ROOT / "src" / "ragsonde" / f) for f in ("__init__.py", "__main__.py", "_entry.py")
)
#: setuptools' import hook, which its ``distutils-precedence.pth`` puts on ``sys.meta_path`` while
#: the interpreter starts: it runs on every import, the one that finds ``ragsonde`` itself too.
IMPORT_HOOK = re.compile(r".*/site-packages/_distutils_hack/__init__\.py$")
#: What the interpreter says of a Ctrl-C during its own shutdown, after the command.
AT_SHUTDOWN = "Exception ignored in: <module 'threading'"


def _own_frames(stderr: str) -> list[str]:
    """The frames of a traceback in ragsonde or the libraries it loads (not the interpreter's
    own startup: frozen modules, the standard library and ``IMPORT_HOOK``, nor ``SCRIPT``'s one
    line, nor ragsonde's lines before its handler is in place)."""
    stdlib = re.escape(sys.base_prefix)
    return [
        f
        for f in re.findall(r'File "([^"]+)"', stderr)
        if not f.startswith(("<frozen", "<string>", *BEFORE_HANDLER))
        and not re.match(rf"{stdlib}/lib/python[\d.]+/(?!site-packages/)", f)
        and not IMPORT_HOOK.match(f)
    ]


@pytest.mark.parametrize(
    ("args", "codes"),
    [(SCRIPT, {130}), (("-m", "ragsonde"), {130, -signal.SIGINT})],
    ids=["script", "python-m"],
)
def test_ctrl_c_while_loading_is_a_clean_exit_130(args: tuple[str, ...], codes: set[int]) -> None:
    """``python -m``: CPython itself ends by SIGINT after the exit 130 when the interrupt passed
    through code run by ``exec`` of a string (dataclasses, Typer building the commands), even
    though it was caught; the message is there and no traceback (the script's path exits 130)."""
    caught = 0
    for delay in DELAYS:
        for _ in range(2):
            done = _interrupt(args, delay)
            if done.returncode == 0:  # finished first: the whole help, nothing else
                assert "Usage" in done.stdout, (delay, done.stdout)
                shutdown = done.stderr.startswith(AT_SHUTDOWN) and not _own_frames(done.stderr)
                assert not done.stderr or shutdown, (delay, done.stderr)
                continue
            assert not _own_frames(done.stderr), (delay, done.returncode, done.stderr)
            if "Traceback" in done.stderr or not done.stderr:
                continue  # the interpreter's own startup, before ragsonde's first line
            assert done.stderr.strip().endswith("Interrupted (Ctrl-C)."), (delay, done.stderr)
            assert done.returncode in codes, (delay, done.returncode, done.stderr)
            caught += 1
    assert caught >= 4  # the signals landing in ragsonde's own loading (most, here)
