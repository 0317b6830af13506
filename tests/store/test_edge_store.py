"""What only the embedded store does: folders, locks, names, persistence."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragsonde.errors import QueryValidationError, StoreConnectionError
from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.store.edge import EdgeStore


def test_data_survives_reopen(tmp_path):
    s = EdgeStore(tmp_path)
    s.create_collection("c", 3)
    s.upsert("c", [PointRecord(id="1", vector=[1, 0, 0], payload={"text": "kept"})])
    s.close()
    s2 = EdgeStore(tmp_path)
    assert s2.count("c") == 1
    assert s2.search("c", [SearchSpec(vector=[1, 0, 0], limit=1)])[0][0].payload["text"] == "kept"
    s2.close()


@pytest.mark.slow  # starts processes
def test_second_process_gets_a_clear_error_naming_the_holder(tmp_path):
    s = EdgeStore(tmp_path)
    s.create_collection("c", 3)
    s.count("c")  # opens and locks the shard
    code = (
        "import sys\n"
        "from ragsonde.store.edge import EdgeStore\n"
        "from ragsonde.errors import StoreConnectionError\n"
        f"try:\n    EdgeStore({str(tmp_path)!r}).count('c')\n"
        "except StoreConnectionError as e:\n    print(e); sys.exit(3)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 3, out.stderr
    assert "held by another process" in out.stdout
    import os

    assert f"pid {os.getpid()}" in out.stdout
    s.close()
    # once released, another process can open it
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_stores_in_one_process_share_the_shard(tmp_path):
    a, b = EdgeStore(tmp_path), EdgeStore(tmp_path)
    a.create_collection("c", 3)
    a.upsert("c", [PointRecord(id="1", vector=[1, 0, 0], payload={})])
    assert b.count("c") == 1
    a.close()
    assert b.count("c") == 1  # still open for b
    b.close()


@pytest.mark.parametrize("name", ["../evil", "a/b", "", ".hidden", "x" * 300, "sp ace"])
def test_collection_names_cannot_escape_the_home(tmp_path, name):
    with pytest.raises(QueryValidationError, match="Invalid collection name"):
        EdgeStore(tmp_path).create_collection(name, 3)


def test_unwritable_home_is_a_store_error(tmp_path):
    home = tmp_path / "file"
    home.write_text("not a folder")
    with pytest.raises(StoreConnectionError):
        EdgeStore(home).create_collection("c", 3)


@pytest.mark.slow  # builds HNSW over 8,000 points of 384 dims
def test_build_index_makes_hnsw_on_a_large_enough_collection(tmp_path):
    import numpy as np

    s = EdgeStore(tmp_path)
    s.create_collection("big", 384)
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(8000, 384)).astype(np.float32)
    s.upsert(
        "big", [PointRecord(id=str(i), vector=v.tolist(), payload={}) for i, v in enumerate(vecs)]
    )
    assert s.collection_info("big").indexed_vectors_count == 0
    s.build_index("big")
    assert s.collection_info("big").indexed_vectors_count > 0
    exact = s.search("big", [SearchSpec(vector=vecs[10].tolist(), limit=1, exact=True)])[0]
    approx = s.search("big", [SearchSpec(vector=vecs[10].tolist(), limit=1)])[0]
    assert exact[0].id == approx[0].id == "10"
    s.close()


def test_ranked_gives_each_point_s_own_id_text(tmp_path):
    """UUID and integer ids come back as the text they were stored under (the UUIDs' text is
    cached by their int: checked against ``str`` past the cache's size too)."""
    import uuid

    from ragsonde.store._convert import id_text

    s = EdgeStore(tmp_path)
    s.create_collection("c", 2)
    ids = [str(uuid.UUID(int=i * 7919 + 1)) for i in range(5)] + ["12", "40"]
    s.upsert(
        "c", [PointRecord(id=i, vector=[1.0, float(n)], payload={}) for n, i in enumerate(ids)]
    )
    for _ in range(2):  # the second time from the cache
        ((got, _scores),) = s.ranked("c", [SearchSpec(vector=[1.0, 0.0], limit=10)])
        assert sorted(got) == sorted(ids)
    s.close()
    many = [uuid.uuid4() for _ in range((1 << 16) + 10)]
    assert all(id_text(u) == str(u) for u in many + many[:5])
    assert id_text(7) == "7"
