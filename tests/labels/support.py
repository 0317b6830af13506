"""Collections to label, written through the store interface (fixtures: conftest.py)."""

from __future__ import annotations

import random
from typing import Any

from ragsonde.models.points import PointRecord
from ragsonde.models.store import Store

WORDS = {
    "lidar": "laser pulses reflected distance timing scanner beam rotating mirror",
    "sonar": "ultrasonic echo transducer sound ping rangefinder acoustic cone",
    "imu": "gyroscope accelerometer heading drift bias inertial quaternion",
    "battery": "lithium cell voltage charge discharge swelling thermal runaway",
    "planner": "heuristic frontier graph costmap waypoint shortest admissible",
}
SECTIONS = ("Overview", "Setup", "Troubleshooting")


def chunk_text(doc: str, section: str, i: int) -> str:
    """A different number of the document's words in each chunk, so no two chunks tie."""
    words = WORDS[doc].split()
    random.Random(f"{doc}/{section}/{i}").shuffle(words)
    listed = " and ".join(words[: 3 + i % 6])
    return f"The {section.lower()} part of the {doc} manual, page {i}, covers {listed}."


def fill_sections(
    store: Store,
    name: str = "docs",
    chunks_per_section: int = 2,
    *,
    embedder: Any = None,
    spans: bool = False,
) -> int:
    """5 documents x 3 sections x ``chunks_per_section`` chunks. Without ``embedder``: tiny
    dummy vectors (enough to sample from); with it: real dense and BM25 vectors, searchable in
    every mode. ``spans``: each chunk's ``start``/``end`` in its document (the chunks joined by
    a blank line), as ragsonde's ingest records them."""
    from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder

    bm25 = embedder is not None
    store.create_collection(
        name,
        embedder.dimension if bm25 else 4,
        indexed_fields={"doc_id": "keyword", "section": "keyword"},
        sparse_vector_name=SPARSE_VECTOR_NAME if bm25 else None,
    )
    points = []
    for d, doc in enumerate(WORDS):
        at = 0
        for s, section in enumerate(SECTIONS):
            for i in range(chunks_per_section):
                idx = s * chunks_per_section + i
                text = chunk_text(doc, section, idx)
                payload = {
                    "text": text,
                    "doc_id": doc,
                    "section": f"{doc.title()} > {section}",
                    "title": doc.title(),
                    "url": f"https://docs.example/{doc}",
                    "chunk_index": idx,
                }
                if spans:
                    payload |= {"start": at, "end": at + len(text)}
                at += len(text) + 2
                points.append(
                    PointRecord(
                        id=str(1 + d * 100 + idx),
                        vector=[1.0, float(d), float(s), float(i) + 1.0],
                        payload=payload,
                    )
                )
    if bm25:
        texts = [p.payload["text"] for p in points]
        dense = embedder.embed_documents(texts)
        sparse = Bm25Encoder().embed_documents(texts)
        points = [
            PointRecord(p.id, d.tolist(), p.payload, s)
            for p, d, s in zip(points, dense, sparse, strict=True)
        ]
    store.upsert(name, points)
    return len(points)
