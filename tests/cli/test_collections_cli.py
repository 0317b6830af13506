"""``ragsonde collections``: list, delete and prune through the real embedded store (Qdrant Edge).

The derived copy is made the way ``generate`` makes one (tune's copy function with the stamp
every point of a copy carries), so the CLI must tell it from the user's own collections.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.models.derived import COPY_KEY, DerivedCopy
from ragsonde.models.points import PointRecord
from ragsonde.store import open_store
from ragsonde.tune.variants import VariantSpec, build_tuned_copy
from tests.support import Cli, holding

DIM = 8


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """Two collections of the user's (one with a BM25 vector) and a derived copy of one."""
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    rng = np.random.default_rng(0)
    try:
        for name, sparse in (("docs", None), ("mixed", "bm25")):
            store.create_collection(name, DIM, sparse_vector_name=sparse)
            store.upsert(
                name,
                [
                    PointRecord(str(i + 1), rng.normal(size=DIM).tolist(), {"text": f"chunk {i}"})
                    for i in range(5 if name == "docs" else 3)
                ],
            )
        stamp = DerivedCopy(of="docs", method="ict", inputs="abc", seed=0)
        build_tuned_copy(
            store,
            "docs",
            "docs-ict-s0",
            VariantSpec(),
            extra_payload={COPY_KEY: stamp.model_dump()},
        )
    finally:
        store.close()
    return home


def _names(cli: Cli, home: Path) -> dict[str, dict]:
    out = cli("collections", "list", "--json", "--home", str(home))
    assert out.exit_code == 0, out.output
    return {e["name"]: e for e in json.loads(out.stdout)}


def test_list_says_which_are_ragsondes_copies_and_of_what(cli: Cli, home: Path) -> None:
    listed = _names(cli, home)
    assert set(listed) == {"docs", "mixed", "docs-ict-s0"}
    assert listed["docs"]["points"] == 5 and listed["docs"]["derived"] is None
    assert listed["docs"]["modes"] == ["dense"]
    assert listed["mixed"]["modes"] == ["dense", "sparse", "hybrid"]
    assert listed["mixed"]["sparse_vector"] == "bm25"
    copy = listed["docs-ict-s0"]
    assert copy["points"] == 5 and copy["derived"]["of"] == "docs"
    assert copy["derived"]["method"] == "ict"
    text = cli("collections", "list", "--home", str(home))
    assert text.exit_code == 0
    assert "ict copy of docs, seed 0" in text.stdout and "3 collections" in text.stdout


def test_delete_asks_first_and_goes_through_the_store(cli: Cli, home: Path) -> None:
    # no terminal to ask on and no --yes: refused, nothing deleted
    refused = cli("collections", "delete", "mixed", "--home", str(home))
    assert refused.exit_code == 2 and "--yes" in refused.output
    unknown = cli("collections", "delete", "nope", "mixed", "--yes", "--home", str(home))
    assert unknown.exit_code == 1 and "COLLECTION_NOT_FOUND" in unknown.output
    assert set(_names(cli, home)) == {"docs", "mixed", "docs-ict-s0"}
    done = cli("collections", "delete", "mixed", "--yes", "--json", "--home", str(home))
    assert done.exit_code == 0 and json.loads(done.stdout) == {"deleted": ["mixed"]}
    assert set(_names(cli, home)) == {"docs", "docs-ict-s0"}


def test_prune_deletes_only_the_derived_copies(cli: Cli, home: Path) -> None:
    none_of = cli("collections", "prune", "--of", "mixed", "--yes", "--home", str(home))
    assert none_of.exit_code == 0 and "nothing to delete" in none_of.stdout
    pruned = cli("collections", "prune", "--yes", "--home", str(home))
    assert pruned.exit_code == 0 and "docs-ict-s0" in pruned.stdout
    assert set(_names(cli, home)) == {"docs", "mixed"}
    again = cli("collections", "prune", "--yes", "--home", str(home))
    assert "nothing to delete" in again.stdout


@pytest.mark.slow  # starts a process
def test_a_collection_another_process_holds_is_listed_as_in_use(cli: Cli, home: Path) -> None:
    """Before: the whole listing failed with CONNECTION_ERROR (and prune with it)."""
    import socket

    env = {"RAGSONDE_LOCK_WAIT_S": "0.3"}  # the store's wait for a holder, kept short here
    with holding(home, "docs-ict-s0") as holder:
        assert holder.stdin is not None
        out = cli("collections", "list", "--json", "--home", str(home), env=env)
        assert out.exit_code == 0, out.output
        listed = {e["name"]: e for e in json.loads(out.stdout)}
        assert listed["docs"]["points"] == 5 and listed["mixed"]["points"] == 3
        held = listed["docs-ict-s0"]
        assert held["in_use"] == f"pid {holder.pid} on host {socket.gethostname()}"
        assert held["points"] is None and held["modes"] == [] and held["derived"] is None
        assert f"'docs-ict-s0' is in use by pid {holder.pid}" in out.stderr
        text = cli("collections", "list", "--home", str(home), env=env)
        assert text.exit_code == 0 and f"in use by pid {holder.pid}" in text.stdout
        # prune cannot read whether it is a copy: it says so, and deletes nothing
        pruned = cli("collections", "prune", "--yes", "--json", "--home", str(home), env=env)
        assert pruned.exit_code == 0, pruned.output
        assert json.loads(pruned.stdout) == {"deleted": []}
        assert "not checked for a copy to prune" in pruned.stderr
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
    # let go, it is listed whole again
    assert _names(cli, home)["docs-ict-s0"]["in_use"] is None


def test_a_collection_with_no_one_dense_vector_does_not_sink_the_list(
    cli: Cli, tmp_path: Path
) -> None:
    """A qdrant-client folder holding a ColBERT-style multivector collection and one with two
    named vectors beside a plain one: each of the two is listed with why it cannot be searched,
    the plain one as ever (the whole listing was one VALIDATION_ERROR, exit 2). With
    RAGSONDE_VECTOR naming a vector only one has, the others still list."""
    from qdrant_client import QdrantClient, models

    folder = tmp_path / "qdrant"
    client = QdrantClient(path=str(folder))
    try:
        cosine = models.Distance.COSINE
        client.create_collection(
            "colbert",
            vectors_config=models.VectorParams(
                size=DIM,
                distance=cosine,
                multivector_config=models.MultiVectorConfig(
                    comparator=models.MultiVectorComparator.MAX_SIM
                ),
            ),
        )
        client.create_collection(
            "two",
            vectors_config={
                "title": models.VectorParams(size=DIM, distance=cosine),
                "body": models.VectorParams(size=DIM, distance=cosine),
            },
        )
        client.create_collection(
            "plain", vectors_config=models.VectorParams(size=DIM, distance=cosine)
        )
    finally:
        client.close()
    env = {"QDRANT_URL": str(folder), "RAGSONDE_HOME": str(tmp_path / "home")}
    out = cli("collections", "list", "--json", env=env)
    assert out.exit_code == 0, out.output
    listed = {e["name"]: e for e in json.loads(out.stdout)}
    assert listed["plain"]["points"] == 0 and listed["plain"]["unreadable"] is None
    assert "multivector" in listed["colbert"]["unreadable"]
    assert "several dense vectors" in listed["two"]["unreadable"]
    assert "--vector" in listed["two"]["unreadable"]
    text = cli("collections", "list", env=env)
    assert text.exit_code == 0 and "3 collections" in text.stdout
    assert "several dense vectors" in text.stderr
    chosen = cli("collections", "list", "--json", env={**env, "RAGSONDE_VECTOR": "body"})
    assert chosen.exit_code == 0, chosen.output
    listed = {e["name"]: e for e in json.loads(chosen.stdout)}
    assert listed["two"]["dense_vector"] == "body" and listed["two"]["unreadable"] is None
    assert "no dense vector named 'body'" in listed["plain"]["unreadable"]
