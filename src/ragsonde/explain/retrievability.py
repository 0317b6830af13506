"""Retrievability (Azzopardi & Vinay, 2008): which documents the queries ever reach.

``r(d)`` is the number of queries that retrieve document ``d`` within their top k (the
cumulative measure with cutoff k, every query weighted 1). Over all the collection's documents:

- the Gini coefficient of ``r`` (:func:`gini`): 0 when every document is retrieved equally
  often, toward 1 when a few documents take every retrieval;
- the dead documents, ``r(d) = 0``: no query reaches them at any rank up to k;
- their share per payload field (:func:`field_shares`): for each field that sorts documents into
  a few groups (a source, a category), how many of each group are dead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ragsonde.evaluate.misses import FieldShare, Retrievability
from ragsonde.explain.pipeline import doc_of
from ragsonde.models.points import Hit
from ragsonde.models.store import Store

__all__ = ["collection_documents", "field_shares", "gini", "retrievability"]

_EXAMPLES = 50
_MAX_GROUPS = 50
_SHOWN_GROUPS = 20
_MAX_VALUE = 100
_FIELDS = 5


def gini(values: Sequence[float]) -> float:
    """``G = Σ_i (2i − n − 1) x_i / (n Σ x)``, ``x`` sorted ascending, ``i`` from 1.

    0.0 for equal values (and for all zeros: nothing is unequal); ``(n − 1) / n`` when one value
    holds everything.

    >>> gini([1, 1, 1, 1]), gini([0, 0, 0, 4]), gini([])
    (0.0, 0.75, 0.0)
    """
    xs = sorted(float(v) for v in values)
    n, total = len(xs), sum(xs)
    if n == 0 or total <= 0:
        return 0.0
    return sum((2 * i - n - 1) * x for i, x in enumerate(xs, start=1)) / (n * total)


def collection_documents(store: Store, collection: str, path: str) -> dict[str, dict[str, str]]:
    """Every document of the collection (one payload read per chunk, in batches) with the short
    string fields of its first chunk: the candidates for :func:`field_shares`."""
    docs: dict[str, dict[str, str]] = {}
    for batch in store.scroll(collection, batch_size=1024):
        for rec in batch:
            doc = doc_of(Hit(rec.id, 0.0, rec.payload), path)
            if doc is None or doc in docs:
                continue
            docs[doc] = {
                key: value
                for key, value in rec.payload.items()
                if isinstance(value, str) and key not in ("text", path) and len(value) <= _MAX_VALUE
            }
    return docs


def field_shares(dead: set[str], docs: Mapping[str, Mapping[str, str]]) -> list[FieldShare]:
    """Dead documents per value of each field that groups documents: present on most of them,
    more than one value and at most 50, two documents per value on average (an id, a title or
    a hash is not a group)."""
    by_field: dict[str, dict[str, list[int]]] = {}
    for doc, fields in docs.items():
        for key, value in fields.items():
            counts = by_field.setdefault(key, {}).setdefault(value, [0, 0])
            counts[0] += 1
            counts[1] += doc in dead
    out: list[FieldShare] = []
    for key, groups in sorted(by_field.items()):
        present = sum(c[0] for c in groups.values())
        if not 1 < len(groups) <= min(_MAX_GROUPS, present // 2) or present * 2 < len(docs):
            continue
        ranked = sorted(groups.items(), key=lambda kv: (-kv[1][0], kv[0]))
        values = {v: (c[0], c[1]) for v, c in ranked[:_SHOWN_GROUPS]}
        rest = ranked[_SHOWN_GROUPS:]
        if rest:
            values["(other)"] = (sum(c[0] for _, c in rest), sum(c[1] for _, c in rest))
        out.append(FieldShare(field=key, values=values))
    return out[:_FIELDS]


def retrievability(
    top: Mapping[str, Iterable[str]], docs: Mapping[str, Mapping[str, str]], k: int
) -> Retrievability:
    """The figures for ``top`` (query id -> its top k documents) over the collection's ``docs``."""
    r = dict.fromkeys(docs, 0)
    for ranked in top.values():
        for doc in list(ranked)[:k]:
            if doc in r:
                r[doc] += 1
    dead = {d for d, n in r.items() if n == 0}
    return Retrievability(
        k=k,
        queries=len(top),
        documents=len(r),
        gini=round(gini(list(r.values())), 4),
        dead=len(dead),
        dead_share=round(len(dead) / len(r), 4) if r else 0.0,
        dead_examples=sorted(dead)[:_EXAMPLES],
        by_field=field_shares(dead, docs),
    )
