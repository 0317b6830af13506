"""Collections to label: a real embedded store, written through the store interface."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragsonde.config import Settings
from ragsonde.store import PointRecord, Store, open_store

WORDS = {
    "lidar": "laser pulses reflected distance timing scanner beam rotating mirror",
    "sonar": "ultrasonic echo transducer sound ping rangefinder acoustic cone",
    "imu": "gyroscope accelerometer heading drift bias inertial quaternion",
    "battery": "lithium cell voltage charge discharge swelling thermal runaway",
    "planner": "heuristic frontier graph costmap waypoint shortest admissible",
}
SECTIONS = ("Overview", "Setup", "Troubleshooting")


def chunk_text(doc: str, section: str, i: int) -> str:
    words = WORDS[doc].split()
    rot = words[i % len(words) :] + words[: i % len(words)]
    return f"The {section.lower()} of the {doc}: " + " and ".join(rot) + f" (part {i})."


def fill_sections(
    store: Store, name: str = "docs", chunks_per_section: int = 2, *, bm25: bool = False
) -> int:
    """5 documents x 3 sections x ``chunks_per_section`` chunks, tiny dummy dense vectors, and
    with ``bm25`` real BM25 vectors (so ``mode=sparse`` searches them without a model)."""
    from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder

    store.create_collection(
        name,
        4,
        indexed_fields={"doc_id": "keyword", "section": "keyword"},
        sparse_vector_name=SPARSE_VECTOR_NAME if bm25 else None,
    )
    points = []
    for d, doc in enumerate(WORDS):
        for s, section in enumerate(SECTIONS):
            for i in range(chunks_per_section):
                idx = s * chunks_per_section + i
                points.append(
                    PointRecord(
                        id=str(1 + d * 100 + idx),
                        vector=[1.0, float(d), float(s), float(i) + 1.0],
                        payload={
                            "text": chunk_text(doc, section, idx),
                            "doc_id": doc,
                            "section": f"{doc.title()} > {section}",
                            "title": doc.title(),
                            "url": f"https://docs.example/{doc}",
                            "chunk_index": idx,
                        },
                    )
                )
    if bm25:
        vectors = Bm25Encoder().embed_documents([p.payload["text"] for p in points])
        points = [
            PointRecord(p.id, p.vector, p.payload, s) for p, s in zip(points, vectors, strict=True)
        ]
    store.upsert(name, points)
    return len(points)


@pytest.fixture
def sectioned(tmp_path) -> Iterator[tuple[Settings, Store]]:
    settings = Settings(home=tmp_path / "home", collection="docs")
    store = open_store(settings)
    fill_sections(store)
    yield settings, store
    store.close()


@pytest.fixture
def bm25_docs(tmp_path) -> Iterator[tuple[Settings, Store]]:
    """The sectioned collection with BM25 vectors; pool it with ``modes=["sparse"]``."""
    settings = Settings(home=tmp_path / "home", collection="docs")
    store = open_store(settings)
    fill_sections(store, bm25=True)
    yield settings, store
    store.close()
