"""The workspace opens the store and embedder on first use and closes only what it opened.

Real embedded Edge stores; whether a store is still open is read from its lock file (an exclusive
``flock`` that a second open file description cannot take while the store holds it).
"""

from __future__ import annotations

import ast
import fcntl
import threading
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.store import open_store
from ragsonde.workspace import Workspace
from tests.support import ROOT


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


class _Closing:
    """A wrapper that says whether it was closed (what the server's micro-batcher is)."""

    def __init__(self, inner: object) -> None:
        self.inner, self.closed = inner, 0

    def close(self) -> None:
        self.closed += 1


def test_the_embedder_is_used_through_the_wrapper_which_closing_closes(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, embedder="openai:hashed-64", openai_api_key="k")
    made: list[_Closing] = []

    def wrap(inner: object) -> object:
        made.append(_Closing(inner))
        return made[0]

    ws = Workspace(settings, wrap_embedder=wrap)  # type: ignore[arg-type]
    assert ws.embedder is made[0] and ws.embedder is made[0]  # built and wrapped once
    assert made[0].inner.name == "openai:hashed-64"  # type: ignore[attr-defined]
    ws.close()
    ws.close()
    assert made[0].closed == 1
    # a wrapper that hands the embedder back made nothing, and closes nothing
    same = Workspace(settings, wrap_embedder=lambda inner: inner)
    assert same.embedder.name == "openai:hashed-64"
    same.close()


def test_a_second_side_shares_the_store_or_opens_its_own(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "a", collection="docs")
    with Workspace(settings) as ws:
        ws.store.create_collection("docs", 4)

        class Named:
            name, dimension = "given:one", 4

        other = Named()
        with ws.sharing(embedder=other) as side:  # type: ignore[arg-type]
            assert side.store is ws.store and side.embedder is other
        assert _held(settings.home)  # the side closed nothing it shared
        elsewhere = settings.model_copy(update={"home": tmp_path / "b"})
        with ws.sharing(settings=elsewhere, embedder=other) as side:  # type: ignore[arg-type]
            assert side.store is not ws.store
            side.store.create_collection("docs", 4)
            assert _held(elsewhere.home)
        assert not _held(elsewhere.home) and _held(settings.home)
    assert not _held(settings.home)


#: Where a Workspace may be built: the module that assembles it, and the surfaces' entry points
#: (each command opens one and hands it down; the server builds one for its life).
BUILDERS = (
    "ragsonde/workspace.py",
    "ragsonde/cli/",
    "ragsonde/server/app.py",
    "ragsonde/mcp/__init__.py",  # the MCP server's entry point: one workspace for its life
)


def test_a_workspace_is_built_only_at_the_entry_points() -> None:
    src = ROOT / "src"
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel.startswith(BUILDERS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "Workspace":
                found.append(f"{rel}:{node.lineno}")
    assert found == [], "open it with ragsonde.workspace.using(), or take one"
