"""BM25 document text and the title weight: the real engine's BM25 (``qdrant_edge.Bm25``) and a
real embedded collection; no model."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder, bm25_document_text
from ragsonde.models.index import Bm25Params
from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.store.edge import EdgeStore


def test_document_text_repeats_the_title_on_lines_of_its_own() -> None:
    assert bm25_document_text("body", "Title", 2) == "Title\nTitle\nbody"
    assert bm25_document_text("body", "Title", 1) == "Title\nbody"
    # no weight, or no title: the text as it is
    assert bm25_document_text("body", "Title", 0) == "body"
    assert bm25_document_text("body", None, 3) == "body"
    assert bm25_document_text("body", "", 3) == "body"


def test_label_names_a_title_weight_and_keeps_the_old_one_without() -> None:
    assert Bm25Params(k1=0.9, b=0.4).label == "bm25-k0.9-b0.4"
    assert Bm25Params(k1=0.9, b=0.4, title_weight=2).label == "bm25-k0.9-b0.4-t2"


def _weight(encoder: Bm25Encoder, text: str, term: str) -> float:
    [query] = encoder.embed_queries([term])
    [doc] = encoder.embed_documents([text])
    [index] = query.indices
    return dict(zip(doc.indices, doc.values, strict=True)).get(index, 0.0)


def test_title_weight_raises_the_weight_of_the_title_words_only() -> None:
    encoder = Bm25Encoder.for_params(Bm25Params(k1=0.9, b=0.4))
    body = "The robot estimates its heading from wheel encoders and a compass."
    plain = bm25_document_text(body, "Gyroscope drift", 0)
    weighted = bm25_document_text(body, "Gyroscope drift", 2)
    assert _weight(encoder, plain, "gyroscope") == 0.0  # not in the body
    assert _weight(encoder, weighted, "gyroscope") > 0.0
    titled_once = bm25_document_text(f"Gyroscope drift\n{body}", "Gyroscope drift", 0)
    titled_thrice = bm25_document_text(f"Gyroscope drift\n{body}", "Gyroscope drift", 2)
    assert _weight(encoder, titled_thrice, "gyroscope") > _weight(encoder, titled_once, "gyroscope")
    # a body word is diluted by the longer document, never boosted
    assert _weight(encoder, titled_thrice, "compass") < _weight(encoder, titled_once, "compass")


@pytest.mark.parametrize("title_weight", [0, 2])
def test_title_weight_moves_a_title_match_above_a_body_match(
    tmp_path: Path, title_weight: int
) -> None:
    """The query's word is the title of one document and twice in the body of another: the body
    match wins unweighted, the title match wins with the title counted twice more."""
    docs = {
        "title-match": (
            "Gyroscope",
            "Heading comes from wheel encoders and a compass on the mast.",
        ),
        "body-match": ("Odometry", "A gyroscope drifts; the gyroscope is recalibrated at rest."),
        "neither": ("Lidar", "Laser pulses are timed to measure range to the nearest wall."),
    }
    encoder = Bm25Encoder.for_params(Bm25Params(k1=0.9, b=0.4))
    texts = [bm25_document_text(f"{t}\n{body}", t, title_weight) for t, body in docs.values()]
    store = EdgeStore(tmp_path / "home")
    try:
        store.create_collection("c", 2, sparse_vector_name=SPARSE_VECTOR_NAME)
        store.upsert(
            "c",
            [
                PointRecord(str(i), [1.0, 0.0], {"doc_id": name}, sparse)
                for i, (name, sparse) in enumerate(
                    zip(docs, encoder.embed_documents(texts), strict=True)
                )
            ],
        )
        [query] = encoder.embed_queries(["gyroscope"])
        [hits] = store.search("c", [SearchSpec(vector=None, limit=3, mode="sparse", sparse=query)])
    finally:
        store.close()
    ranked = [h.payload["doc_id"] for h in hits]
    assert ranked == (
        ["title-match", "body-match"] if title_weight else ["body-match", "title-match"]
    )
