""":func:`ragsonde.traffic.heap.release_free_memory` gives freed heap pages back to the system.

In a fresh process: 60 MB of 1 KB blocks (C ``malloc``, past Python's small-object allocator)
are allocated, and all but one in a hundred freed; the survivors pin the heap, so glibc's own
trimming (the top of the heap only) returns almost nothing, and the resident size stays high
until the function is called. Measured from ``/proc/self/status``.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's heap"
)

CHILD = """
import json
from ragsonde.traffic.heap import release_free_memory

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024

blocks = [bytes(1000) + i.to_bytes(8, "little") for i in range(60_000)]
kept = blocks[::100]
del blocks
before = rss()
done = release_free_memory()
print(json.dumps({"before": before, "after": rss(), "done": done, "kept": len(kept)}))
"""


def test_freed_pages_go_back_to_the_system() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    got = json.loads(out.stdout)
    assert got["done"] is True
    assert got["before"] - got["after"] > 30, got  # of the ~59 MB freed, in MiB
