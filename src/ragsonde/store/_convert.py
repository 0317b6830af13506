"""What both backends share: point ids, filters, hits and records, and a collection's vectors.

qdrant-client's ``models`` and qdrant-edge spell filters with the same keyword constructors
(``MatchValue(value=)``, ``MatchAny(any=)``, ``FieldCondition(key=, match=)``,
``Filter(must=)``) and return points with the same attributes (``id``, ``score``, ``payload``,
``vector``), so one converter serves both; the backend passes its models module in. They spell
search parameters alike too (``SearchParams(hnsw_ef=, exact=, quantization=)``,
``QuantizationSearchParams(ignore=, rescore=, oversampling=)``): :func:`search_params` is the one
translation of the search-time knobs, used by both stores and by the ``tune`` sweep
(each a :class:`~ragsonde.models.points.SearchSpec`), so the sweep measures what the retriever
then does. Fusion is spelled differently: :func:`edge_fusion` and :func:`client_fusion` (RRF and
DBSF, fused inside Qdrant); ``linear`` is fused by ragsonde from Qdrant's two candidate lists
(:mod:`ragsonde.store._fusion`).

:class:`VectorLayout` is a collection's vectors read from either library's config, and
:meth:`VectorLayout.choose` picks the dense vector to search (the ``vector`` setting, or the only
one), with the errors for several, none, or a multivector.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from ragsonde.errors import QueryValidationError
from ragsonde.models.params import fusion_problem
from ragsonde.models.points import FilterSpec, Hit, PointRecord, SearchSpec, SparseVector
from ragsonde.models.scores import Distance

__all__ = [
    "EDGE_RRF_K",
    "DenseVector",
    "LazyIds",
    "VectorLayout",
    "check_specs",
    "client_fusion",
    "edge_fusion",
    "fusion_problem",
    "point_id",
    "point_vectors",
    "search_params",
    "spec_params",
    "to_filter",
    "to_fused_hit",
    "to_hit",
    "to_record",
]

_MAX_UINT64 = 2**64 - 1


def point_id(value: str) -> int | str:
    """A Qdrant point id from its string form: an unsigned 64-bit integer or a UUID."""
    if value.isdigit() and value.isascii() and int(value) <= _MAX_UINT64:
        return int(value)
    try:
        return str(uuid.UUID(value))
    except ValueError as e:
        raise QueryValidationError(
            f"Point id {value!r} is neither an unsigned 64-bit integer nor a UUID "
            "(Qdrant accepts only those).",
            field="id",
        ) from e


def to_filter(models: Any, spec: FilterSpec | None) -> Any:
    """All fields must match; within a field, any of its values (AND of ORs)."""
    if not spec:
        return None
    must = []
    for key, values in spec.items():
        # the engine matches one kind per condition: text and integers (an id a payload may
        # keep either way) become one condition each, any of which passes
        kinds: dict[type, list[Any]] = {}
        for v in values:
            kinds.setdefault(type(v), []).append(v)
        conds = [
            models.FieldCondition(
                key=key,
                match=models.MatchValue(value=vals[0])
                if len(vals) == 1
                else models.MatchAny(any=vals),
            )
            for vals in kinds.values()
        ]
        must.append(conds[0] if len(conds) == 1 else models.Filter(should=conds))
    return models.Filter(must=must)


def _dense(vector: Any, vname: str | None) -> list[float] | None:
    if vector is None:
        return None
    if isinstance(vector, Mapping):
        v = vector.get(vname or "")
        return [float(x) for x in v] if isinstance(v, list) else None
    return [float(x) for x in vector]


def _sparse(vector: Any, vname: str | None) -> SparseVector | None:
    """The BM25 vector of a record read back with its vectors, if it has one."""
    if isinstance(vector, Mapping):
        for name, v in vector.items():
            if name != (vname or "") and hasattr(v, "indices"):
                return SparseVector([int(i) for i in v.indices], [float(x) for x in v.values])
    return None


class LazyIds(Sequence[str]):
    """The ids of an engine's scored points, each read (and made text) when first asked for.

    Reading a qdrant-edge point's ``id`` builds a :class:`uuid.UUID` every time (the engine's
    points keep it as bytes). The traffic replay gets 200 hits a query, and its signals read
    the first 20 ids of a ranking and then look one id up: read lazily, the replay and its
    signals took 0.505 ms of CPU a query against 0.550 with every id read
    (``python -m bench.bench_traffic_speed --ids-ab``; a cProfile had shown far more, its own
    cost per Python call). The ids asked for come out as they would have, in the same order:
    only the work for those never read is saved."""

    __slots__ = ("_ids", "_points")

    def __init__(self, points: Sequence[Any]) -> None:
        self._points = points
        self._ids: list[str | None] = [None] * len(points)

    def __len__(self) -> int:
        return len(self._points)

    def _at(self, i: int) -> str:
        found = self._ids[i]
        if found is None:
            found = self._ids[i] = id_text(self._points[i].id)
        return found

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        if isinstance(i, slice):
            return tuple(self._at(j) for j in range(*i.indices(len(self._points))))
        return self._at(range(len(self._points))[i])  # negative and out-of-range as a list's

    def __iter__(self) -> Iterator[str]:
        return (self._at(j) for j in range(len(self._points)))

    def __contains__(self, value: object) -> bool:
        return any(x == value for x in self)

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        end = len(self._points) if stop is None else min(stop, len(self._points))
        for j in range(start, end):
            if self._at(j) == value:
                return j
        raise ValueError(f"{value!r} is not among the ids")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyIds | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyIds({tuple(self)!r})"


#: UUID (as its 128-bit int) -> its text: the last up to 65,536 seen.
_UUID_TEXT: dict[int, str] = {}


def id_text(pid: Any) -> str:
    """A point id as text (cached: the same chunks come back for many queries, and a UUID's
    ``str`` costs five times the lookup). A UUID is looked up by its ``int``: hashing and
    comparing the UUID itself runs Python code, an int's does not (the traffic replay reads
    200 ids a query)."""
    if type(pid) is not uuid.UUID:
        return str(pid)
    key = pid.int
    text = _UUID_TEXT.get(key)
    if text is None:
        if len(_UUID_TEXT) >= 1 << 16:
            _UUID_TEXT.clear()
        text = _UUID_TEXT[key] = str(pid)
    return text


def to_hit(point: Any, vname: str | None) -> Hit:
    return Hit(
        id=id_text(point.id),
        score=float(point.score),
        payload=dict(point.payload or {}),
        vector=_dense(point.vector, vname),
    )


def to_fused_hit(record: Any, score: float, vname: str | None, with_vectors: bool) -> Hit:
    """A hit from a record read back after ragsonde fused its ``score``."""
    return Hit(
        id=str(record.id),
        score=score,
        payload=dict(record.payload or {}),
        vector=_dense(record.vector, vname) if with_vectors else None,
    )


def to_record(record: Any, vname: str | None, with_vectors: bool) -> PointRecord:
    return PointRecord(
        id=str(record.id),
        vector=_dense(record.vector, vname) if with_vectors else None,
        payload=dict(record.payload or {}),
        sparse=_sparse(record.vector, vname) if with_vectors else None,
    )


@dataclass(frozen=True)
class DenseVector:
    """One dense vector of a collection; ``name`` is ``None`` for the unnamed default."""

    name: str | None
    size: int
    distance: Distance
    multivector: bool = False

    def describe(self) -> str:
        kind = " multivector" if self.multivector else ""
        return f"'{self.name or ''}' ({self.size}-d {self.distance}{kind})"


@dataclass(frozen=True)
class VectorLayout:
    """A collection's vectors: its dense ones (in config order) and its sparse names."""

    collection: str
    dense: tuple[DenseVector, ...]
    sparse: tuple[str, ...] = ()

    @property
    def sparse_name(self) -> str | None:
        return self.sparse[0] if self.sparse else None

    def choose(self, wanted: str | None) -> DenseVector:
        """The dense vector to search: ``wanted`` by name, else the only one."""
        where = f"Collection '{self.collection}'"
        if not self.dense:
            raise QueryValidationError(
                f"{where} has only sparse vectors ({', '.join(self.sparse) or 'none'}); ragsonde "
                "searches a dense vector, so it cannot query this collection.",
                field="vector",
            )
        listing = ", ".join(v.describe() for v in self.dense)
        if wanted is not None:
            chosen = next((v for v in self.dense if (v.name or "") == wanted), None)
            if chosen is None:
                raise QueryValidationError(
                    f"{where} has no dense vector named '{wanted}'. Its dense vectors: {listing}. "
                    "Choose one with --vector NAME (RAGSONDE_VECTOR).",
                    field="vector",
                )
        elif len(self.dense) > 1:
            raise QueryValidationError(
                f"{where} has several dense vectors: {listing}. Choose one with --vector NAME "
                "(RAGSONDE_VECTOR).",
                field="vector",
            )
        else:
            chosen = self.dense[0]
        if chosen.multivector:
            raise QueryValidationError(
                f"{where}: vector {chosen.describe()} holds several vectors per point (late "
                "interaction, e.g. ColBERT); ragsonde searches single dense vectors only. "
                "Choose another with --vector NAME if the collection has one.",
                field="vector",
            )
        return chosen


def check_specs(layout: VectorLayout, dense: DenseVector, specs: Sequence[SearchSpec]) -> None:
    """Refuse, before the engine sees them, searches the collection cannot answer."""
    for spec in specs:
        if spec.mode != "dense" and layout.sparse_name is None:
            raise QueryValidationError(
                f"Collection '{layout.collection}' was built for dense search only, so mode "
                f"'{spec.mode}' is not available. Re-ingest it with sparse (BM25) vectors, "
                "or use mode 'dense'.",
                field="mode",
            )
        problem = fusion_problem(spec.fusion, spec.rrf_k, spec.fusion_weights)
        if problem is not None:
            raise QueryValidationError(problem[1], field=problem[0])
        if spec.vector is not None and len(spec.vector) != dense.size:
            raise QueryValidationError(
                f"Vector of size {len(spec.vector)} does not fit collection "
                f"'{layout.collection}' (size {dense.size}).",
                field="vector",
            )


def search_params(
    models: Any,
    *,
    hnsw_ef: int | None = None,
    exact: bool = False,
    rescore: bool | None = None,
    oversampling: float | None = None,
    ignore_quantization: bool = False,
) -> Any:
    """``SearchParams`` in either library; quantization parameters only when one is set, so an
    unset knob leaves the engine's default."""
    quant = (
        models.QuantizationSearchParams(
            ignore=ignore_quantization, rescore=rescore, oversampling=oversampling
        )
        if ignore_quantization or rescore is not None or oversampling is not None
        else None
    )
    return models.SearchParams(hnsw_ef=hnsw_ef, exact=exact, quantization=quant)


def spec_params(models: Any, spec: SearchSpec, hnsw_ef: int | None = None) -> Any:
    """:func:`search_params` for one search (``hnsw_ef``: the store's fallback)."""
    return search_params(
        models,
        hnsw_ef=spec.hnsw_ef if spec.hnsw_ef is not None else hnsw_ef,
        exact=spec.exact,
        rescore=spec.quantization_rescore,
        oversampling=spec.quantization_oversampling,
        ignore_quantization=spec.quantization_ignore,
    )


#: RRF's k when none is set, in the embedded engine (the RRF paper's 60; a Qdrant server's own
#: default applies there instead).
EDGE_RRF_K = 60


def _fused_by_qdrant(method: str) -> None:
    if method not in ("rrf", "dbsf"):
        raise ValueError(
            f"fusion {method!r} is not fused inside Qdrant (linear: ragsonde.store._fusion)"
        )


def edge_fusion(
    qe: Any, method: str, k: int | None = None, weights: Sequence[float] | None = None
) -> Any:
    """The ``qdrant_edge`` fusion: DBSF, or RRF with ``k`` and optional (dense, sparse)
    weights."""
    _fused_by_qdrant(method)
    if method == "dbsf":
        return qe.Fusion.Dbsf()
    return qe.Fusion.Rrf(k=k or EDGE_RRF_K, weights=list(weights) if weights else None)


def client_fusion(
    m: Any, method: str, k: int | None = None, weights: Sequence[float] | None = None
) -> Any:
    """The qdrant-client fusion query: ``FusionQuery`` (the server's defaults) unless ``k`` or
    weights are set, then ``RrfQuery(rrf=Rrf(k=, weights=))``."""
    _fused_by_qdrant(method)
    if method == "dbsf":
        return m.FusionQuery(fusion=m.Fusion.DBSF)
    if k is None and weights is None:
        return m.FusionQuery(fusion=m.Fusion.RRF)
    return m.RrfQuery(rrf=m.Rrf(k=k, weights=list(weights) if weights else None))


def point_vectors(
    point: PointRecord, layout: VectorLayout, dense: DenseVector, sparse_factory: Any
) -> dict[str, Any]:
    """A point's vectors by name (``""`` = the unnamed one), checked against the collection."""
    if point.vector is None:
        raise QueryValidationError(f"Point {point.id} has no vector.", field="vector")
    if len(point.vector) != dense.size:
        raise QueryValidationError(
            f"Point {point.id} has a vector of size {len(point.vector)}; collection "
            f"'{layout.collection}' holds size {dense.size}.",
            field="vector",
        )
    vectors: dict[str, Any] = {dense.name or "": [float(x) for x in point.vector]}
    if point.sparse is not None:
        if layout.sparse_name is None:
            raise QueryValidationError(
                f"Collection '{layout.collection}' has no sparse vector.", field="sparse"
            )
        vectors[layout.sparse_name] = sparse_factory(
            indices=point.sparse.indices, values=point.sparse.values
        )
    return vectors
