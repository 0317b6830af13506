"""An ICT benchmark evaluated where its questions were not removed: a warning, not a score
that looks fine.

``ragsonde generate --method ict`` takes each question out of its source chunk in a copy of the
collection (``<collection>-ict-s<seed>``); evaluated on the original collection, or on a copy
rebuilt since for other questions, each question finds its own sentence and the scores are
inflated (nDCG@10 0.97 against 0.75 on the sample docs), with no warning. Each rewritten chunk
records what was removed (:class:`~ragsonde.models.derived.Edit`), so whether a question
matches the collection is one lookup of its source chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragsonde.models.derived import edit_of, stamp_of

if TYPE_CHECKING:
    from ragsonde.evaluate.datasets import BenchQuery
    from ragsonde.models.store import Store

__all__ = ["ICT_GENERATOR", "ict_mismatch"]

#: The ``generator`` of a row ``generate --method ict`` wrote.
ICT_GENERATOR = "offline:ict"


def ict_mismatch(store: Store, collection: str, queries: Sequence[BenchQuery]) -> str | None:
    """Why the ICT questions of ``queries`` do not match ``collection`` (their sentence is
    still in their source chunk there, or the chunk is not there), or None when they all do
    (or none is an ICT question)."""
    ict = [q for q in queries if q.generator == ICT_GENERATOR and q.source_chunk]
    if not ict:
        return None
    points = {p.id: p for p in store.retrieve(collection, [q.source_chunk or "" for q in ict])}
    unmatched = 0
    copy_of = None
    for q in ict:
        point = points.get(q.source_chunk or "")
        edit = edit_of(point.payload) if point is not None else None
        if point is not None and copy_of is None:
            stamp = stamp_of(point.payload)
            copy_of = stamp.of if stamp is not None else None
        if edit is None or edit.removed.strip() != q.text.strip():
            unmatched += 1
    if not unmatched:
        return None
    where = (
        f"'{collection}' is an ICT copy of '{copy_of}' made for other questions (rebuilt "
        "since this benchmark was generated?)"
        if copy_of is not None
        else f"'{collection}' is not the ICT copy `ragsonde generate` made for them"
    )
    return (
        f"{unmatched} of the {len(ict)} ICT questions still find their own sentence here: "
        f"{where}, so their scores are inflated. Evaluate on the copy `generate` named "
        "('evaluate on …'; `ragsonde collections list` shows the copies), or generate the "
        "benchmark again for this one."
    )
