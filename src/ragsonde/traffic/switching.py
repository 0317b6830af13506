"""Let the embedding worker take the GIL back quickly while a replay runs.

The replay embeds the next batch on a worker thread while this thread searches and scores the
one before (:meth:`~ragsonde.traffic.predictor.SignalPredictor.stream_replays`). The model runs
without the GIL, but between two of its passes the worker needs the GIL for a moment (the
tokenizer's output, the next pass's arrays). While this thread runs Python (the signals, the
report's rows), CPython makes it give the GIL up only every *switch interval*, 5 ms by default:
the worker, and both cores the model would use, wait that long at each pass. Measured here with
a thread running Python beside the model: embedding 2,560 queries took 18.3 s against 6.8 s
alone, and 10.9 s with a 1 ms interval.

:func:`quick_switching` lowers the interval to :data:`SWITCH_INTERVAL` while at least one replay
runs in the process, and puts back what it found when the last one ends. It never raises an
interval someone set lower.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["SWITCH_INTERVAL", "quick_switching"]

#: The interpreter's switch interval (seconds) while a replay runs.
SWITCH_INTERVAL = 0.001

_lock = threading.Lock()
_users = 0
_saved = 0.0


@contextmanager
def quick_switching(interval: float | None = None) -> Iterator[None]:
    """Within the block, the switch interval is at most ``interval`` (default
    :data:`SWITCH_INTERVAL`); nested and concurrent blocks share it, and the interval found by
    the first is restored by the last."""
    global _users, _saved
    wanted = SWITCH_INTERVAL if interval is None else interval
    with _lock:
        if _users == 0:
            _saved = sys.getswitchinterval()
        _users += 1
        if wanted < sys.getswitchinterval():
            sys.setswitchinterval(wanted)
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                sys.setswitchinterval(_saved)
