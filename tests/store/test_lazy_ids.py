"""The embedded store's rankings read each point id when it is first asked for
(:class:`~ragsonde.store._convert.LazyIds`): whatever is asked, the answer is a tuple's of the
same ids, and ids never asked for are never built (a qdrant-edge point builds a new
``uuid.UUID`` on every ``.id``: 200 a query in the traffic replay, where its signals read about
20).

Oracles: a tuple of the same ids (Hypothesis, every operation the signals use), and the ids of
the same search through :meth:`search`, which reads every hit whole."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.store._convert import LazyIds
from ragsonde.store.edge import EdgeStore
from ragsonde.traffic.signals import agreement_at_top, overlap, rbo


class _Point:
    """A point whose id is built on each read, as qdrant-edge's is; counts the reads."""

    reads = 0

    def __init__(self, text: str) -> None:
        self._id = uuid.uuid5(uuid.NAMESPACE_URL, text)

    @property
    def id(self) -> uuid.UUID:
        _Point.reads += 1
        return uuid.UUID(int=self._id.int)


@given(
    st.lists(st.text(min_size=1, max_size=3), max_size=30, unique=True),
    st.lists(st.text(min_size=1, max_size=3), max_size=30, unique=True),
    st.integers(-35, 35),
    st.integers(0, 35),
)
def test_it_answers_as_the_tuple_of_its_ids(a: list[str], b: list[str], i: int, k: int) -> None:
    pa, pb = [_Point(x) for x in a], [_Point(x) for x in b]
    ta, tb = (tuple(str(p.id) for p in pa), tuple(str(p.id) for p in pb))
    la, lb = LazyIds(pa), LazyIds(pb)
    assert len(la) == len(ta)
    assert la[:k] == ta[:k] and la[k:] == ta[k:] and la[::2] == ta[::2]
    if -len(ta) <= i < len(ta):
        assert la[i] == ta[i]
    else:
        try:
            la[i]
        except IndexError:
            pass
        else:
            raise AssertionError(f"index {i} of {len(ta)} ids did not raise")
    assert overlap(la, lb, k) == overlap(ta, tb, k)
    assert rbo(la, lb) == rbo(ta, tb)
    for top in (*ta[:3], *tb[:3], "absent"):
        assert (top in lb) is (top in tb)
        assert agreement_at_top(top, [la, lb]) == agreement_at_top(top, [ta, tb])
    assert list(la) == list(ta) and la == ta and la == LazyIds(pa)


def test_ids_never_asked_for_are_never_read() -> None:
    points = [_Point(str(n)) for n in range(100)]
    ids = LazyIds(points)
    _Point.reads = 0
    assert len(ids[:20]) == 20 and ids[:20] == ids[:20]  # read once, then remembered
    assert _Point.reads == 20
    assert ids.index(str(points[30].id)) == 30
    assert _Point.reads == 20 + 1 + 11  # the sought id's own read, then ids 20 to 30


def test_the_embedded_stores_ranking_is_its_search_in_ids(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "home")
    rng = np.random.default_rng(3)
    try:
        store.create_collection("c", 16)
        store.upsert(
            "c",
            [
                PointRecord(str(uuid.uuid4()), rng.normal(size=16).tolist(), {"text": str(n)})
                for n in range(300)
            ],
        )
        specs = [SearchSpec(vector=rng.normal(size=16).tolist(), limit=100) for _ in range(3)]
        searched = store.search("c", specs)
        ranked = store.ranked("c", specs)
    finally:
        store.close()
    for hits, (ids, scores) in zip(searched, ranked, strict=True):
        assert isinstance(ids, LazyIds)
        assert tuple(ids) == tuple(h.id for h in hits)
        assert scores == tuple(h.score for h in hits)
