"""The workspace opens the store and embedder on first use and closes only what it opened.

Real embedded Edge stores; whether a store is still open is read from its lock file (an exclusive
``flock`` that a second open file description cannot take while the store holds it).
"""

from __future__ import annotations

import fcntl
import threading
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.store import open_store
from ragsonde.workspace import Workspace


def _held(home: Path) -> bool:
    """Is the collection's lock file held (by an open store)?"""
    (lock_path,) = home.rglob(".ragsonde.lock")
    with lock_path.open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False


def test_opens_the_store_on_first_use_and_closes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Workspace(home=home, collection="docs") as ws:
        assert ws.settings.collection == "docs" and ws.settings.home == home
        assert not home.exists()  # nothing opened yet
        store = ws.store
        assert ws.store is store  # one store per workspace
        store.create_collection("docs", 4)
        assert store.collection_info("docs").dimension == 4
        assert _held(home)
    assert not _held(home)
    ws.close()  # twice is fine


def test_a_given_store_is_used_and_left_open(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", collection="docs")
    store = open_store(settings)
    store.create_collection("docs", 4)
    with Workspace(settings, store=store) as ws:
        assert ws.store is store
        assert ws.store.collection_info("docs").points_count == 0
    assert _held(settings.home)  # the caller's store: still open
    assert store.collection_info("docs").dimension == 4
    store.close()
    assert not _held(settings.home)


def test_the_embedder_is_looked_up_lazily_in_the_registry(tmp_path: Path) -> None:
    ws = Workspace(Settings(home=tmp_path, embedder="magic:thing"))  # no lookup yet, no error
    assert ws.embedder_name == "magic:thing"
    with pytest.raises(QueryValidationError) as err:
        _ = ws.embedder
    assert err.value.field == "embedder" and "local:<model>" in str(err.value)


def test_a_given_embedder_is_returned_as_is(tmp_path: Path) -> None:
    class Named:
        name, dimension = "given:one", 3

    given = Named()
    ws = Workspace(Settings(home=tmp_path), embedder=given)
    assert ws.embedder is given and ws.embedder_name == "given:one"


def test_settings_or_overrides_not_both(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="not both"):
        Workspace(Settings(home=tmp_path), collection="x")
    assert Workspace(Settings(home=tmp_path), collection=None).settings.home == tmp_path
    with pytest.raises(QueryValidationError) as err:
        Workspace(max_top_k=0)
    assert err.value.field == "max_top_k"


def test_concurrent_first_use_opens_one_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Workspace(home=home) as ws:
        seen: list[object] = []
        barrier = threading.Barrier(4)

        def grab() -> None:
            barrier.wait()
            seen.append(ws.store)

        threads = [threading.Thread(target=grab) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(seen) == 4 and all(s is seen[0] for s in seen)
