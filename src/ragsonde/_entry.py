"""The ``ragsonde`` command's entry point, light on purpose: it installs its Ctrl-C handler before
the command line loads (Typer, Rich, the command modules: a tenth of a second and more), so a
Ctrl-C then ends the process as one during a command does, ``Interrupted (Ctrl-C).`` and exit
130, not with a KeyboardInterrupt traceback from inside an import. Once loaded, Ctrl-C is a
KeyboardInterrupt again, so a command's ``finally`` and ``with`` blocks run on the way out.

Only the standard library is imported here, and ``ragsonde/__init__.py`` (run before this
module) imports nothing but importlib: what runs before the handler takes well under 1 ms.
"""

# the C module ``signal`` wraps, loaded with the interpreter (no stub): ``signal`` itself
# imports enum, 4 ms more in which a Ctrl-C would be a traceback
import _signal  # type: ignore[import-not-found]
import os
import sys

__all__ = ["main"]

#: What a Ctrl-C prints, as ``ragsonde.cli.run`` does during a command (not imported from there:
#: that is the heavy import this module comes before).
_INTERRUPTED = b"Interrupted (Ctrl-C).\n"


def _stop_loading(signum: int, frame: object) -> None:
    """Ctrl-C while the command line loads: nothing has started, so nothing to clean up."""
    os.write(2, _INTERRUPTED)
    os._exit(130)


def main() -> None:
    """Entry point of the ``ragsonde`` script and of ``python -m ragsonde``."""
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # not a caller's own
        _signal.signal(_signal.SIGINT, _stop_loading)
    from ragsonde.cli import load, run

    load(sys.argv[1:])
    if _signal.getsignal(_signal.SIGINT) is _stop_loading:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    run()
