"""SIGTERM inside an event loop (``ragsonde mcp``, ``ragsonde eval --mcp``): taken by the loop as
one more callback that cancels a scope, instead of the command line's handler raising SystemExit
wherever the main thread is (:func:`sigterm_cancels`)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import anyio

__all__ = ["UNWIND_S", "sigterm_cancels", "terminate"]


#: Seconds the requests in flight have to end once SIGTERM cancelled them (a tool running in a
#: thread cannot be interrupted, only waited for); then the process ends at once.
UNWIND_S = 5.0


@contextmanager
def sigterm_cancels(scope: anyio.CancelScope) -> Iterator[Callable[[], bool]]:
    """SIGTERM taken by the event loop as one more callback, which cancels ``scope``: the
    requests in flight are cancelled and the transport closes as on any other stop. Yields
    whether SIGTERM came; the handler that was there before is put back on the way out.

    The command line's handler raises SystemExit wherever the main thread is. Inside the loop
    that could be in the middle of asyncio's or anyio's own bookkeeping (a ``call_soon`` that
    wakes a task, a task group's ``task_done``): a task then waited for ever for a wake-up
    that was lost, and the runner's shutdown spun in anyio's cancellation delivery until the
    command line's grace ended the process, 10 s later. A second SIGTERM, or :data:`UNWIND_S`
    after the first, ends the process at once."""
    import asyncio

    loop = asyncio.get_running_loop()
    before = signal.getsignal(signal.SIGTERM)
    got: list[asyncio.TimerHandle] = []

    def stop() -> None:
        if got:  # the second: the shutdown is not waited for
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        got.append(loop.call_later(UNWIND_S, os.kill, os.getpid(), signal.SIGTERM))
        scope.cancel()

    try:
        if before is signal.SIG_IGN:  # a process that ignores SIGTERM still does
            raise ValueError
        loop.add_signal_handler(signal.SIGTERM, stop)
    except (NotImplementedError, RuntimeError, ValueError):  # Windows; not the main thread
        yield lambda: False
        return
    try:
        yield lambda: bool(got)
    finally:
        for bound in got:
            bound.cancel()
        loop.remove_signal_handler(signal.SIGTERM)  # which leaves SIG_DFL
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def terminate() -> NoReturn:
    """End as the SIGTERM :func:`sigterm_cancels` took says, once out of the event loop: the
    handler the caller had runs (the command line's raises SystemExit and bounds the cleanup
    that follows); after one that returns, SystemExit with the shell's code for SIGTERM."""
    signal.raise_signal(signal.SIGTERM)
    raise SystemExit(128 + signal.SIGTERM)
