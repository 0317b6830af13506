"""``GET /v1/collections`` on a real server while another process holds one embedded collection:
the others are listed, the held one under ``in_use`` with who holds it. The whole listing was a
503 whose body named only the held collection, so the web page's collection list came up empty
while an ingest or an agent's ``ragsonde mcp`` ran beside it. A holder that keeps its collection
is waited for a second, not ``lock_wait_s`` (10 s) for each held collection: the fresh-clone CI
stopped a server mid-listing and waited past 30 s for it to exit."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from ragsonde.models.points import PointRecord
from ragsonde.server.routes_collections import LISTING_WAIT_S
from ragsonde.store.edge import EdgeStore
from tests.support import holding, serve_process

pytestmark = pytest.mark.slow  # a server process and a holding process

DIM = 384  # the default model's: the server checks nothing of it to list


def test_a_held_collection_is_listed_as_in_use_and_the_rest_as_ever(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = EdgeStore(home)
    rng = np.random.default_rng(0)
    try:
        for name, n in (("free", 4), ("busy", 3)):
            store.create_collection(name, DIM)
            store.upsert(
                name,
                [PointRecord(str(i + 1), rng.normal(size=DIM).tolist(), {}) for i in range(n)],
            )
    finally:
        store.close()
    with holding(home, "busy") as holder:
        assert holder.stdin is not None
        with serve_process(home) as url:  # lock_wait_s at its default, 10 s
            started = time.monotonic()
            held = httpx.get(f"{url}/v1/collections", timeout=60)
            waited = time.monotonic() - started
            holder.stdin.close()
            assert holder.wait(timeout=60) == 0
            freed = httpx.get(f"{url}/v1/collections", timeout=60)
    assert held.status_code == 200, held.text
    # a holder that keeps it is waited for LISTING_WAIT_S (1 s), not lock_wait_s: the listing
    # took 10 s a held collection, and a server stopped meanwhile waited for it to exit
    assert waited < LISTING_WAIT_S + 4, waited
    body = held.json()
    assert [(c["name"], c["points_count"]) for c in body["collections"]] == [("free", 4)]
    assert body["in_use"] == [
        {"name": "busy", "holder": f"pid {holder.pid} on host {socket.gethostname()}"}
    ]
    assert freed.status_code == 200, freed.text
    listed = {c["name"]: c["points_count"] for c in freed.json()["collections"]}
    assert listed == {"free": 4, "busy": 3} and freed.json()["in_use"] == []
