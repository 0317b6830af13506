"""Collections to label, written through the store interface (fixtures: conftest.py)."""

from __future__ import annotations

import random
from typing import Any

from ragsonde.store import PointRecord, Store

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
    store: Store, name: str = "docs", chunks_per_section: int = 2, *, embedder: Any = None
) -> int:
    """5 documents x 3 sections x ``chunks_per_section`` chunks. Without ``embedder``: tiny
    dummy vectors (enough to sample from); with it: real dense and BM25 vectors, searchable in
    every mode."""
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
        texts = [p.payload["text"] for p in points]
        dense = embedder.embed_documents(texts)
        sparse = Bm25Encoder().embed_documents(texts)
        points = [
            PointRecord(p.id, d.tolist(), p.payload, s)
            for p, d, s in zip(points, dense, sparse, strict=True)
        ]
    store.upsert(name, points)
    return len(points)


def scifact_slice(scifact_dir: Any, out: Any, docs: int = 40) -> Any:
    """A BEIR folder at ``out``: the documents of SciFact's first test queries (up to ``docs``
    documents, filled up with others), those queries, and ``human.jsonl``, the same queries in
    ragsonde's benchmark format."""
    import json
    from pathlib import Path

    src, out = Path(scifact_dir), Path(out)
    qrels = [line.split("\t") for line in (src / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    wanted: dict[str, set[str]] = {}
    for qid, did, _ in qrels:
        if len({d for v in wanted.values() for d in v} | {did}) > docs // 2:
            break
        wanted.setdefault(qid, set()).add(did)
    keep = {d for v in wanted.values() for d in v}
    picked: list[str] = []
    others: list[str] = []
    with (src / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            (picked if json.loads(line)["_id"] in keep else others).append(line.rstrip("\n"))
    lines = picked + others[: max(0, docs - len(picked))]
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    (out / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    queries = {
        json.loads(q)["_id"]: json.loads(q)["text"]
        for q in (src / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    }
    (out / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": queries[q]}) + "\n" for q in wanted),
        encoding="utf-8",
    )
    (out / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q}\t{d}\t1\n" for q, ds in wanted.items() for d in sorted(ds)),
        encoding="utf-8",
    )
    (out.parent / "human.jsonl").write_text(
        "".join(
            json.dumps({"query_id": q, "query": queries[q], "relevant": dict.fromkeys(ds, 1)})
            + "\n"
            for q, ds in wanted.items()
        ),
        encoding="utf-8",
    )
    return out
