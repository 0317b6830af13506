"""The one progress protocol: how long work tells whoever watches how far it got.

The library calls ``start(total)`` once per pass (``None`` when the total is unknown) and
``advance(n, *counts)`` as work is done: ``n`` units of the pass, then any per-pass tallies
(chunks written, points skipped). The CLI draws a Rich bar from it (``ragsonde.cli.progress``);
the server counts it into a job's status.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Progress"]


class Progress(Protocol):
    """Told about progress; every method is called from the thread doing the work."""

    def start(self, total: int | None, /) -> None: ...

    def advance(self, n: int, /, *counts: int) -> None: ...
