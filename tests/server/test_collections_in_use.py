"""``GET /v1/collections`` on a real server while another process holds one embedded collection:
the others are listed, the held one under ``in_use`` with who holds it. The whole listing was a
503 whose body named only the held collection, so the web page's collection list came up empty
while an ingest or an agent's ``ragsonde mcp`` ran beside it."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import numpy as np
import pytest

from ragsonde.models.points import PointRecord
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
    settings = tmp_path / "ragsonde.toml"
    settings.write_text("lock_wait_s = 0.3\n", encoding="utf-8")  # the wait for a holder, short
    with holding(home, "busy") as holder:
        assert holder.stdin is not None
        with serve_process(home, "--config", str(settings)) as url:
            held = httpx.get(f"{url}/v1/collections", timeout=60)
            holder.stdin.close()
            assert holder.wait(timeout=60) == 0
            freed = httpx.get(f"{url}/v1/collections", timeout=60)
    assert held.status_code == 200, held.text
    body = held.json()
    assert [(c["name"], c["points_count"]) for c in body["collections"]] == [("free", 4)]
    assert body["in_use"] == [
        {"name": "busy", "holder": f"pid {holder.pid} on host {socket.gethostname()}"}
    ]
    assert freed.status_code == 200, freed.text
    listed = {c["name"]: c["points_count"] for c in freed.json()["collections"]}
    assert listed == {"free": 4, "busy": 3} and freed.json()["in_use"] == []
