"""``push``: a real ingest into embedded Qdrant Edge (the ``push_home`` fixture, tests/conftest.py),
pushed to qdrant-client targets (local mode, on disk so a second store sees the same target).
``ragsonde push`` is tested in tests/cli/test_push_cli.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
from ragsonde.errors import (
    CollectionNotFoundError,
    DimensionMismatchError,
    ErrorCode,
    QueryValidationError,
    StoreConnectionError,
)
from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.models.store import Store
from ragsonde.store.edge import EdgeStore
from ragsonde.store.push import describe_target, open_target, push

BATCH = 4
QUERIES = ["how is distance measured with laser pulses?", "why does the heading drift?"]


@pytest.fixture
def source(push_home: Path) -> Iterator[EdgeStore]:
    store = EdgeStore(push_home)
    yield store
    store.close()


@pytest.fixture
def target_dir(tmp_path: Path) -> Path:
    return tmp_path / "target"


@pytest.fixture
def target(target_dir: Path) -> Iterator[Store]:
    store = open_target(f"path:{target_dir}")
    yield store
    store.close()


def everything(store: Store, name: str) -> dict[str, PointRecord]:
    return {p.id: p for batch in store.scroll(name, with_vectors=True) for p in batch}


def assert_same_points(a: Store, b: Store, name: str, target_name: str | None = None) -> None:
    src, dst = everything(a, name), everything(b, target_name or name)
    assert sorted(src) == sorted(dst)
    for pid, p in src.items():
        assert dst[pid].payload == p.payload
        assert dst[pid].vector == pytest.approx(p.vector, abs=1e-6)


class FailingTarget:
    """A real target store whose connection drops after ``ok`` successful upserts."""

    def __init__(self, inner: Store, ok: int) -> None:
        self._inner = inner
        self._ok = ok
        self.upserts = 0

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    @property
    def backend(self) -> str:
        return self._inner.backend

    def upsert(self, collection: str, points: Sequence[PointRecord]) -> None:
        if self.upserts >= self._ok:
            raise StoreConnectionError("Cannot reach Qdrant: connection reset by peer.")
        self._inner.upsert(collection, points)
        self.upserts += 1


# -- the library ----------------------------------------------------------------------------------
def test_push_copies_vectors_payloads_and_indexes(source, target, embedder):
    total = source.count("docs")
    assert total > 3 * BATCH  # several batches
    report = push(source, "docs", target, batch_size=BATCH)
    assert (report.points, report.copied, report.skipped) == (total, total, 0)
    assert report.to_json().keys() >= {
        "collection",
        "target",
        "points",
        "copied",
        "skipped",
        "seconds",
    }
    src_info, dst_info = source.collection_info("docs"), target.collection_info("docs")
    assert dst_info.points_count == target.count("docs") == total
    assert (dst_info.dimension, dst_info.distance) == (src_info.dimension, src_info.distance)
    assert dst_info.vector_name == src_info.vector_name
    assert dict(dst_info.indexed_fields) == dict(src_info.indexed_fields)
    assert dst_info.sparse_vector_name is None
    assert_same_points(source, target, "docs")


def test_search_on_the_target_ranks_like_the_source(source, target, embedder):
    push(source, "docs", target, batch_size=BATCH)
    for vector in embedder.embed_queries(QUERIES):
        spec = [SearchSpec(vector=vector.tolist(), limit=3, exact=True)]
        src_hits, dst_hits = source.search("docs", spec)[0], target.search("docs", spec)[0]
        assert [h.id for h in dst_hits] == [h.id for h in src_hits]
        assert [h.score for h in dst_hits] == pytest.approx([h.score for h in src_hits], abs=1e-4)
        assert dst_hits[0].payload == src_hits[0].payload


def test_a_second_push_copies_nothing(source, target):
    first = push(source, "docs", target, batch_size=BATCH)
    again = push(source, "docs", target, batch_size=BATCH)
    assert (again.points, again.copied, again.skipped) == (first.points, 0, first.points)
    assert target.count("docs") == first.points


def test_missing_and_changed_points_are_copied_again(source, target):
    total = push(source, "docs", target, batch_size=BATCH).points
    ids = sorted(everything(target, "docs"))
    target.delete_points("docs", ids[:3])
    [stale] = target.retrieve("docs", [ids[5]], with_vectors=True)
    target.upsert("docs", [PointRecord(stale.id, stale.vector, {**stale.payload, "text": "old"})])
    report = push(source, "docs", target, batch_size=BATCH)
    assert (report.copied, report.skipped) == (4, total - 4)
    assert_same_points(source, target, "docs")


def test_an_interrupted_push_resumes_with_the_exact_count(source, target_dir):
    first = open_target(f"path:{target_dir}")
    flaky = FailingTarget(first, ok=2)
    with pytest.raises(StoreConnectionError):
        push(source, "docs", flaky, batch_size=BATCH)
    assert first.count("docs") == 2 * BATCH
    first.close()

    again = open_target(f"path:{target_dir}")  # a new client on the same on-disk target
    try:
        total = source.count("docs")
        report = push(source, "docs", again, batch_size=BATCH)
        assert (report.copied, report.skipped) == (total - 2 * BATCH, 2 * BATCH)
        assert again.count("docs") == total  # no duplicates, none missing
        assert_same_points(source, again, "docs")
    finally:
        again.close()


def test_target_collection_with_another_dimension_is_refused(source, target):
    target.create_collection("docs", 8)
    with pytest.raises(DimensionMismatchError) as info:
        push(source, "docs", target)
    assert info.value.code is ErrorCode.DIMENSION_MISMATCH
    assert "384" in info.value.message and "8" in info.value.message
    assert "--target-collection" in info.value.message
    assert target.count("docs") == 0


def test_push_to_another_name_next_to_an_existing_collection(source, target):
    target.create_collection("docs", 8)
    report = push(source, "docs", target, target_collection="docs_v2", batch_size=BATCH)
    assert report.target_collection == "docs_v2" and report.copied == source.count("docs")
    assert_same_points(source, target, "docs", "docs_v2")
    assert target.count("docs") == 0


def test_missing_source_collection(source, target):
    with pytest.raises(CollectionNotFoundError) as info:
        push(source, "nope", target)
    assert info.value.code is ErrorCode.COLLECTION_NOT_FOUND
    assert "nope" not in target.list_collections()


def test_bad_targets_and_batch_sizes_are_validation_errors(source, target):
    with pytest.raises(QueryValidationError):
        push(source, "docs", target, batch_size=0)
    with pytest.raises(QueryValidationError):
        open_target("grpc://qdrant:6334")
    assert describe_target("https://me:pw@q.example:6333/?k=1", "abcd1234") == (
        "https://q.example:6333/"
    )


def test_hybrid_collection_keeps_its_bm25_vectors(source, target, embedder):
    report = push(source, "hybrid", target, batch_size=BATCH)
    assert report.copied == source.count("hybrid")
    assert target.collection_info("hybrid").sparse_vector_name == SPARSE_VECTOR_NAME
    assert_same_points(source, target, "hybrid")
    bm25 = Bm25Encoder()
    for query, vector in zip(QUERIES, embedder.embed_queries(QUERIES), strict=True):
        [sparse] = bm25.embed_queries([query])
        for mode in ("sparse", "hybrid"):
            spec = [SearchSpec(vector=vector.tolist(), sparse=sparse, limit=3, mode=mode)]
            src, dst = source.search("hybrid", spec)[0], target.search("hybrid", spec)[0]
            assert dst[0].id == src[0].id, mode


@pytest.mark.parametrize("distance", ["Euclid", "Manhattan", "Dot"])
def test_push_creates_the_target_with_the_sources_distance(tmp_path: Path, target, distance):
    from ragsonde.models.scores import Distance

    src = EdgeStore(tmp_path / "src")
    try:
        src.create_collection("d", 3, distance=Distance(distance))
        src.upsert(
            "d",
            [
                PointRecord(str(i), [float(i), 1.0, 0.5], {"text": f"t{i}", "doc_id": str(i)})
                for i in range(1, 6)
            ],
        )
        push(src, "d", target, batch_size=BATCH)
        assert target.collection_info("d").distance is Distance(distance)
        # the engine's order on the copy is the source's (a Cosine copy would rank otherwise)
        spec = [SearchSpec(vector=[5.0, 1.0, 0.5], limit=5, exact=True)]
        assert [h.id for h in target.search("d", spec)[0]] == [
            h.id for h in src.search("d", spec)[0]
        ]
    finally:
        src.close()
