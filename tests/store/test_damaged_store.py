"""A collection whose store files are damaged is one clear error, and the others still list; an
output path inside a store's folder is refused before anything runs.

``eval --save home/collections/c/edge_config.json`` replaced the collection's config; after that
(or any damage to it: truncated, not UTF-8) every command that opened it was a JSONDecodeError
traceback, ``collections list`` failed as a whole, and the server's listing was a 500.

A collection the engine cannot load (a damaged segment, or one a program outside ragsonde has
open: the engine raises the same exception for both) is a ``CollectionUnreadableError`` naming
both fixes, never "delete and ingest again" alone; any other store failure still fails the
listing.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ragsonde.catalog.listing import list_entries
from ragsonde.errors import CollectionUnreadableError, QueryValidationError
from ragsonde.models.points import PointRecord
from ragsonde.outputs import check_outputs
from ragsonde.store.edge import EdgeStore
from tests.support import ENGINE_HOLDER, holding


def _two_collections(home: Path) -> None:
    store = EdgeStore(home)
    try:
        for name in ("good", "bad"):
            store.create_collection(name, 4)
            store.upsert(name, [PointRecord("1", [1.0, 0.0, 0.0, 0.0], {"text": "t"})])
    finally:
        store.close()


@pytest.mark.parametrize("damage", [b"{broken", b"\xff\xfe", b'{"vectors": 5}', b""])
def test_a_damaged_config_is_one_error_naming_it_and_the_others_list(
    tmp_path: Path, damage: bytes
) -> None:
    _two_collections(tmp_path)
    config = tmp_path / "collections" / "bad" / "edge_config.json"
    config.write_bytes(damage)
    store = EdgeStore(tmp_path)
    try:
        with pytest.raises(CollectionUnreadableError) as err:
            store.collection_info("bad")
        assert str(config) in err.value.message and "is damaged" in err.value.message
        entries = {e.name: e for e in list_entries(store)}
        assert entries["good"].points == 1 and entries["good"].unreadable is None
        assert entries["bad"].points is None
        assert entries["bad"].unreadable is not None and "is damaged" in entries["bad"].unreadable
    finally:
        store.close()


def test_a_damaged_segment_is_unreadable_and_the_others_list(tmp_path: Path) -> None:
    _two_collections(tmp_path)
    for state in (tmp_path / "collections" / "bad" / "segments").glob("*/segment.json"):
        state.write_bytes(b"garbage")
    store = EdgeStore(tmp_path)
    try:
        with pytest.raises(CollectionUnreadableError) as err:
            store.collection_info("bad")
        assert "segment.json" in err.value.message and "restore them" in err.value.message
        entries = {e.name: e for e in list_entries(store)}
        assert entries["good"].points == 1
        assert entries["bad"].unreadable == err.value.message
    finally:
        store.close()


def test_a_collection_another_program_holds_is_not_called_only_damaged(tmp_path: Path) -> None:
    _two_collections(tmp_path)
    with holding(tmp_path, "good", script=ENGINE_HOLDER):
        store = EdgeStore(tmp_path)
        try:
            with pytest.raises(CollectionUnreadableError) as err:
                store.collection_info("good")
            assert "other than ragsonde has it open" in err.value.message
        finally:
            store.close()
    deadline = time.monotonic() + 10
    while True:  # let go, it opens again: the files were never damaged
        store = EdgeStore(tmp_path)
        try:
            assert store.collection_info("good").points_count == 1
            break
        except CollectionUnreadableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            store.close()


def test_an_output_inside_a_store_is_refused(tmp_path: Path) -> None:
    _two_collections(tmp_path)
    shard = tmp_path / "collections" / "good"
    for target in (shard / "edge_config.json", shard / "segments" / "x.json"):
        with pytest.raises(QueryValidationError, match="inside a Qdrant store"):
            check_outputs({"--save": target})
    local = tmp_path / "qdrant-local"  # a qdrant-client local folder
    (local / "collection" / "c").mkdir(parents=True)
    (local / "meta.json").write_text("{}", encoding="utf-8")
    with pytest.raises(QueryValidationError, match="inside a Qdrant store"):
        check_outputs({"--out": local / "collection" / "c" / "report.json"})
    check_outputs({"--save": tmp_path / "report.json"})  # beside the store: fine
    assert (shard / "edge_config.json").read_text(encoding="utf-8").startswith("{")
