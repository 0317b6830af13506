"""What ``ragsonde inspect`` (and ``GET /v1/collections/{name}``) shows about a collection."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ragsonde.models.index import Bm25Params, IndexConfig, measurable
from ragsonde.models.payload import (
    DEFAULT_MAPPING,
    PayloadMapping,
    detect_layout,
    detect_mapping,
)
from ragsonde.models.store import Store

__all__ = ["CollectionReport", "FieldStat", "inspect_collection"]


class FieldStat(BaseModel):
    """A payload field seen in the sample, and the share of points that have it (non-null)."""

    field: str
    fill_rate: float
    types: list[str]
    indexed: str | None = None


class CollectionReport(BaseModel):
    name: str
    backend: str
    dimension: int
    distance: str
    points_count: int
    indexed_vectors_count: int
    vector_name: str | None
    sparse_vector_name: str | None
    sampled_points: int
    fields: list[FieldStat]
    mapping: dict[str, str | None]
    """Contract field (and ``doc_id``) -> the payload path it is read from (None: not found)."""
    layout: str | None = None
    """The known layout (``ragsonde.models.payload.LAYOUTS``) most sampled payloads have."""
    layout_share: float = 0.0
    """The share of sampled payloads in that layout."""
    empty_text_share: float = 0.0
    """The share of sampled payloads whose text, read through the mapping, is empty."""
    warnings: list[str] = []
    """What would make retrieval or evaluation quietly wrong, and the flag that fixes it."""
    embedder: str | None = None
    embedder_dimension: int | None = None
    dimension_matches: bool | None = None
    index: IndexConfig | None = None
    """The dense vector's quantization and HNSW graph, as the backend reports them."""
    bm25: Bm25Params | None = None
    """The BM25 parameters its sparse vectors were built with, as its chunks record them;
    ``None`` without sparse vectors, or where another pipeline wrote them (it records none)."""
    index_measurable: bool = True
    """False where the backend keeps plain vectors (qdrant-client's local mode): quantization
    and HNSW are then not measurable on this backend, and ``index`` is ``None``."""


def inspect_collection(
    store: Store,
    name: str,
    *,
    embedder: str | None = None,
    embedder_dimension: int | None = None,
    sample: int = 1000,
    mapping: PayloadMapping = DEFAULT_MAPPING,
) -> CollectionReport:
    """Describe ``name`` from its info and a sample of up to ``sample`` payloads."""
    info = store.collection_info(name)
    payloads: list[dict[str, Any]] = []
    for batch in store.scroll(name, batch_size=min(256, sample)):
        payloads.extend(r.payload for r in batch)
        if len(payloads) >= sample:
            break
    payloads = payloads[:sample]
    fills: Counter[str] = Counter()
    types: dict[str, set[str]] = {}
    for payload in payloads:
        for key, value in payload.items():
            if value is not None:
                fills[key] += 1
                types.setdefault(key, set()).add(type(value).__name__)
    n = max(1, len(payloads))
    fields = [
        FieldStat(
            field=key,
            fill_rate=round(fills[key] / n, 4),
            types=sorted(types.get(key, set())),
            indexed=info.indexed_fields.get(key),
        )
        for key in sorted(fills, key=lambda k: (-fills[k], k))
    ]
    detected = detect_mapping(payloads, mapping)
    layout = detect_layout(payloads)
    empty = sum(1 for p in payloads if not mapping.read(p).text.strip())
    empty_share = round(empty / n, 4) if payloads else 0.0
    return CollectionReport(
        name=info.name,
        backend=info.backend,
        dimension=info.dimension,
        distance=info.distance,
        points_count=info.points_count,
        indexed_vectors_count=info.indexed_vectors_count,
        vector_name=info.vector_name,
        sparse_vector_name=info.sparse_vector_name,
        sampled_points=len(payloads),
        fields=fields,
        mapping={k: path for k, (path, _share) in detected.items()},
        layout=layout.name,
        layout_share=round(layout.share, 4),
        empty_text_share=empty_share,
        warnings=_warnings(payloads, detected, empty_share, mapping.paths.get("doc_id", ())),
        embedder=embedder,
        embedder_dimension=embedder_dimension,
        dimension_matches=(
            None if embedder_dimension is None else embedder_dimension == info.dimension
        ),
        index=info.index,
        bm25=(
            next((b for p in payloads if (b := Bm25Params.recorded_in(p)) is not None), None)
            if info.sparse_vector_name is not None
            else None
        ),
        index_measurable=measurable(info.backend, "quantization"),
    )


def _warnings(
    payloads: list[dict[str, Any]],
    detected: dict[str, tuple[str | None, float]],
    empty_text_share: float,
    doc_id_paths: Sequence[str] = (),
) -> list[str]:
    if not payloads:
        return []
    out: list[str] = []
    if empty_text_share > 0:
        out.append(
            f"{empty_text_share:.0%} of sampled points have no text at "
            f"{detected['text'][0] or 'any known path'}: results would come back empty. "
            "Set the path with --field text=PATH."
        )
    if detected["doc_id"][0] is None:
        # a path the user set is named: "any known path" sent them to set the one they had set
        where = ", ".join(doc_id_paths) if 0 < len(doc_id_paths) <= 3 else "any known path"
        out.append(
            f"No document id found at {where}: evaluation cannot match relevance ids. "
            "Set the path with --field doc_id=PATH (dotted for nested payloads)."
        )
    return out
