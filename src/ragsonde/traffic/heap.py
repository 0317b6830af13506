"""Give the C heap's free pages back to the system while a long stream runs.

A replay of many queries allocates and frees the same few megabytes again and again (the model's
inputs, the store's answers, each row's signals) from several threads. glibc keeps what was
freed in each thread's arena for the next allocation, in pieces between live blocks that its
automatic trimming (the top of the heap only) cannot return: over 100,000 queries that grew the
resident size by several MiB more than over 10,000 (bench/RESULTS.md, the traffic memory probe).
:func:`release_free_memory` asks glibc to return every whole free page of every arena
(``malloc_trim(0)``); the memory stays usable and is faulted back in when it is used again.

Elsewhere (musl, macOS, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable

__all__ = ["release_free_memory"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc: no such symbol
        return None
    return trim


def release_free_memory() -> bool:
    """Return the C heap's free pages to the system; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
