"""Why a query flipped: the ``--explain`` data of the run where it missed, joined to the diff.

``history diff A B`` lists queries that went from hit to miss (``lost``) or back (``gained``).
When the run in which the query missed (B for a lost query, A for a gained one) was evaluated
with ``--explain``, its report's ``misses`` section blames each missed relevant document on a
stage of the miss ladder (:data:`~ragsonde.evaluate.misses.STAGES`), with evidence.
:func:`explain_flips` attaches that to the flip, with the fingerprint changes that bear on the
stage (:data:`STAGE_FIELDS`), e.g. ``q17: hit → miss: doc lidar: `ann` miss after
index.hnsw.m: 16 -> 8``.

Without ``--explain`` data a flip gets no ``why``: nothing is guessed from the changes alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragsonde.history.models import FieldChange, FlipWhy, QueryFlip

if TYPE_CHECKING:
    from ragsonde.evaluate.misses import Stage
    from ragsonde.evaluate.report import EvalReport

__all__ = ["STAGE_FIELDS", "bears_on", "explain_flips"]

#: Stage -> the dotted fingerprint fields (``Fingerprint.flat()``) that bear on it. An entry
#: ending in ``.`` or ``_`` is a prefix (``index.hnsw.`` is the graph's every parameter), any
#: other is one field. A test checks that every stage has an entry and every entry names fields
#: a fingerprint has.
STAGE_FIELDS: dict[Stage, tuple[str, ...]] = {
    # the document is not in the collection, or has no text: what was ingested
    "not_in_collection": ("content.", "index.points_count", "chunking."),
    "no_text": ("content.", "chunking."),
    # the query's filter (part of the queries' hash) or the payload it matches
    "filter": ("benchmark.queries_sha256", "content."),
    "threshold": ("search.score_threshold",),
    "quantization": ("index.quantization.", "search.quantization_"),
    "ann": ("search.hnsw_ef", "search.exact", "search.index", "index.hnsw."),
    # other chunks filled the fetch before chunks became documents
    "crowding": ("search.fetch_chunks", "search.aggregation", "chunking.", "content."),
    "fusion": (
        "search.mode",
        "search.fusion",
        "search.rrf_k",
        "search.fusion_weights",
        "search.prefetch_limit",
    ),
    # the answer lies past the embedder's window: the chunk's length or the embedder
    "truncation": ("chunking.", "embedder."),
    "chunking": ("chunking.",),
    # none of the above: the model's ranking of what was ingested
    "ranking": ("embedder.", "search.mode", "search.aggregation", "chunking.", "content."),
}


def bears_on(stage: Stage, field: str) -> bool:
    """Whether a change of fingerprint ``field`` bears on miss-ladder ``stage``."""
    return any(
        field == entry or (entry[-1] in "._" and field.startswith(entry))
        for entry in STAGE_FIELDS[stage]
    )


def _why(
    report: EvalReport, run_id: int, query_id: str, changes: Sequence[FieldChange]
) -> list[FlipWhy]:
    missed = report.misses.per_query.get(query_id) if report.misses is not None else None
    if missed is None:
        return []
    return [
        FlipWhy(
            run_id=run_id,
            doc_id=m.doc_id,
            stage=m.stage,
            evidence=m.evidence,
            changes=[c for c in changes if bears_on(m.stage, c.field)],
        )
        for m in missed.misses
    ]


def explain_flips(
    flips: Sequence[QueryFlip],
    a: EvalReport,
    b: EvalReport,
    changes: Sequence[FieldChange],
    *,
    run_a: int,
    run_b: int,
) -> list[QueryFlip]:
    """``flips`` with their ``why`` from the ``--explain`` data of the run where each missed
    (``b`` for a lost query, ``a`` for a gained one); unchanged where that run has none."""
    out: list[QueryFlip] = []
    for f in flips:
        report, run_id = (b, run_b) if f.direction == "lost" else (a, run_a)
        why = _why(report, run_id, f.query_id, changes)
        out.append(f.model_copy(update={"why": why}) if why else f)
    return out
