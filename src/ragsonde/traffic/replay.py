"""Replay queries against a collection: one embedding call per batch, and the rankings the
signals read, each searched in store requests of :data:`SEARCH_CHUNK` queries.

A :class:`Replayer` answers, for a batch of query texts, one :class:`Replay` each: the ranking
of the effective search (the settings' mode, top_k and threshold: what a user of the collection
gets), the dense ranking and the BM25 ranking at :data:`DEPTH` (the score predictors need more
than the top k), and the query's BM25 terms. Embedding once and searching through the store
interface (not the retriever, which would embed again per mode) keeps the replay close to the
cost of embedding alone.

The dense rankings' scores are turned here, once, so that higher is closer
(:data:`ragsonde.models.scores.ORIENTATION`: a Euclid or Manhattan distance is negated; Cosine and
Dot scores are kept as they are): every signal reads them as "higher is better" on every
distance. The score threshold is applied before, to the engine's raw score, as the retriever
applies it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ragsonde.embedders.sparse import Bm25Encoder, query_language
from ragsonde.errors import DimensionMismatchError, QueryValidationError
from ragsonde.models.params import SearchParams
from ragsonde.models.points import CollectionInfo, Hit, Ranked, SearchSpec, SparseVector
from ragsonde.models.query import resolve_collection
from ragsonde.models.scores import is_distance, oriented_of, similarity_in
from ragsonde.models.validation import options_of
from ragsonde.retriever.facts import CollectionFacts
from ragsonde.workspace import Workspace, require

__all__ = ["DEPTH", "EXACT_EVERY", "SEARCH_CHUNK", "Embedded", "Ranking", "Replay", "Replayer"]

#: How deep the dense and BM25 rankings go: NQC and WIG read the scores below the top k.
DEPTH = 100
#: One query in this many (by a hash of its text) is searched exactly too: ANN against exact.
EXACT_EVERY = 10
#: Searches sent to the store in one request. qdrant-edge-py 0.9 holds the GIL while it
#: searches, and the embedding worker waits for it between two of the model's passes: requests
#: of 16 queries keep each wait to a few milliseconds (a batch of 64 held it ~8 ms a ranking).
SEARCH_CHUNK = 16


def _sampled(text: str) -> bool:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) % EXACT_EVERY == 0


@dataclass(frozen=True)
class Ranking:
    """One ranking: chunk ids and scores, best first (in a :class:`Replay`, oriented: higher is
    closer)."""

    ids: Sequence[str] = ()
    """A tuple, or the store's ids read as they are asked for (``Store.ranked``)."""
    scores: tuple[float, ...] = ()

    @classmethod
    def of(cls, hits: Sequence[Hit]) -> Ranking:
        return cls(tuple(h.id for h in hits), tuple(float(h.score) for h in hits))

    @classmethod
    def ranked(cls, found: Ranked) -> Ranking:
        return cls(*found)

    def top(self, k: int) -> Ranking:
        return Ranking(tuple(self.ids[:k]), self.scores[:k])

    def oriented(self, orient: Callable[[float], float] | None) -> Ranking:
        """The same ranking with each score mapped by ``orient`` (``None``: itself)."""
        if orient is None:
            return self
        return Ranking(self.ids, tuple(orient(s) for s in self.scores))


@dataclass(frozen=True)
class Embedded:
    """A batch's query vectors: dense, and BM25 where the collection has them."""

    vectors: list[list[float]]
    sparse: list[SparseVector | None]


@dataclass
class Replay:
    """What replaying one query found."""

    text: str
    served: Ranking
    """The effective search's ranking, threshold applied: what ragsonde returns (a dense one
    oriented, a fused or BM25 one as the engine scored it)."""
    cut_by_threshold: int = 0
    """Results of the top k the score threshold removed."""
    dense: Ranking | None = None
    bm25: Ranking | None = None
    terms: int = 0
    """How many distinct BM25 terms the query has (after stopwords and stemming)."""
    term_ids: tuple[int, ...] = field(default=())
    vector: list[float] | None = None
    """The query's dense vector (the report groups weak queries by it)."""
    exact: Ranking | None = None
    """The dense ranking by exact search, for the sampled queries (:data:`EXACT_EVERY`)."""


def _search_of(search: object) -> SearchParams:
    """``search`` checked where it enters: ``SignalPredictor(ws, "docs")`` took the collection's
    name for the search and died on ``'str' object has no attribute 'items'``."""
    if isinstance(search, str):
        raise QueryValidationError(
            f"search must be SearchParams(...), not the string {search!r}; a collection is "
            f"named with collection={search!r}.",
            field="search",
        )
    return options_of(search, SearchParams, "search")


class Replayer:
    """Search queries as ``search`` (over the workspace's settings) describes, in ``collection``.

    ``workspace``: its owner closes it.
    """

    def __init__(
        self,
        workspace: Workspace,
        search: SearchParams | None = None,
        collection: str | None = None,
    ) -> None:
        require(workspace, Workspace, "workspace")
        self.workspace = workspace
        self.params = workspace.settings.search.overlay(_search_of(search))
        self.collection = resolve_collection(collection, workspace.settings.collection)
        self._facts = CollectionFacts(lambda: workspace.store)
        self._bm25: Bm25Encoder | None = None

    @property
    def info(self) -> CollectionInfo:
        return self._facts.info(self.collection)

    @property
    def has_bm25(self) -> bool:
        """Whether the collection has a sparse vector ragsonde's BM25 queries can search (one
        another encoder made is no BM25: its signals would read noise)."""
        if self.info.sparse_vector_name is None:
            return False
        settings = self.workspace.settings
        language = query_language(
            self.collection,
            self._facts.recorded_language(self.collection),
            settings.index.bm25_language,
        )
        return self._facts.bm25_problem(self.collection, settings.payload_mapping, language) is None

    def encoder(self) -> Bm25Encoder:
        """The collection's BM25 query encoder (its recorded language)."""
        if self._bm25 is None:
            language = query_language(
                self.collection,
                self._facts.recorded_language(self.collection),
                self.workspace.settings.index.bm25_language,
            )
            self._bm25 = Bm25Encoder(language=language)
        return self._bm25

    def prepare(self) -> bool:
        """Check the collection can be replayed (mode, dimension) and load what :meth:`embed`
        reads; whether the replay has BM25 vectors. On the thread that owns the store."""
        settings = self.workspace.settings
        self._facts.require_mode(
            self.collection,
            self.params.mode,
            settings.payload_mapping,
            settings.index.bm25_language,
        )
        embedder, info = self.workspace.embedder, self.info
        if embedder.dimension != info.dimension:
            raise DimensionMismatchError(
                collection=self.collection,
                collection_dim=info.dimension,
                embedder=embedder.name,
                embedder_dim=embedder.dimension,
            )
        if self.has_bm25:
            self.encoder()
        return self.has_bm25

    def embed(self, texts: Sequence[str], sparse: bool) -> Embedded:
        """The texts' dense vectors, and their BM25 vectors when ``sparse``; after
        :meth:`prepare`, and touching no store (a worker thread may run it while the store
        searches the batch before)."""
        vectors = [v.tolist() for v in self.workspace.embedder.embed_queries(list(texts))]
        bm25: list[SparseVector | None] = [None] * len(texts)
        if sparse and self._bm25 is not None:
            bm25 = list(self._bm25.embed_queries(list(texts)))
        return Embedded(vectors, bm25)

    def _ranked(self, specs: Sequence[SearchSpec]) -> list[Ranked]:
        """The store's rankings of ``specs``, in requests of :data:`SEARCH_CHUNK`."""
        store = self.workspace.store
        return [
            found
            for start in range(0, len(specs), SEARCH_CHUNK)
            for found in store.ranked(self.collection, specs[start : start + SEARCH_CHUNK])
        ]

    def replay(self, texts: Sequence[str], embedded: Embedded | None = None) -> list[Replay]:
        """One :class:`Replay` per text, in order (one embedding call, each search in requests
        of :data:`SEARCH_CHUNK`; ``embedded``: the texts' :meth:`embed`, when it ran already)."""
        if not texts:
            return []
        sparse_on = self.prepare()
        info, p = self.info, self.params
        batch = embedded or self.embed(texts, sparse_on)
        vectors, sparse = batch.vectors, batch.sparse
        depth = max(DEPTH, p.top_k)
        dense_specs = [
            SearchSpec(vector=v, limit=depth, hnsw_ef=p.hnsw_ef, with_payload=False)
            for v in vectors
        ]
        dense = [Ranking.ranked(r) for r in self._ranked(dense_specs)]
        exact: dict[int, Ranking] = {}
        sampled = [i for i, t in enumerate(texts) if _sampled(t)]
        if sampled:
            specs = [
                SearchSpec(vector=vectors[i], limit=p.top_k, exact=True, with_payload=False)
                for i in sampled
            ]
            found_exact = self._ranked(specs)
            exact = {i: Ranking.ranked(r) for i, r in zip(sampled, found_exact, strict=True)}
        bm25: list[Ranking | None] = [None] * len(texts)
        if self.has_bm25:
            specs = [
                SearchSpec(vector=None, limit=depth, mode="sparse", sparse=s, with_payload=False)
                for s in sparse
                if s is not None
            ]
            found = iter(self._ranked(specs))
            bm25 = [Ranking.ranked(next(found)) if s is not None else None for s in sparse]
        # the engine's scores, dense ones oriented (the module's docstring; None on Cosine and
        # Dot: kept as they are, at no cost); served: BM25's and a fusion's are higher-is-better
        orient = oriented_of(info.distance) if is_distance(info.distance) else None
        served_orient: Callable[[float], float] | None = None
        if p.mode == "dense":
            served_raw = [d.top(p.top_k) for d in dense]
            served_orient = orient
        elif p.mode == "sparse":
            served_raw = [(b or Ranking()).top(p.top_k) for b in bm25]
        else:
            specs = [
                replace(SearchSpec.of(p, vector=v, sparse=s), with_payload=False)
                for v, s in zip(vectors, sparse, strict=True)
            ]
            served_raw = [Ranking.ranked(r) for r in self._ranked(specs)]
        out = []
        similarity = similarity_in(info.distance, p.mode)
        for i, text in enumerate(texts):
            raw = served_raw[i]
            kept = [
                (cid, s)
                for cid, s in zip(raw.ids, raw.scores, strict=True)
                if similarity(s) >= p.score_threshold  # as the retriever keeps a result
            ]
            sv = sparse[i]
            out.append(
                Replay(
                    text=text,
                    served=Ranking(tuple(c for c, _ in kept), tuple(s for _, s in kept)).oriented(
                        served_orient
                    ),
                    cut_by_threshold=len(raw.ids) - len(kept),
                    dense=dense[i].oriented(orient),
                    bm25=bm25[i],
                    terms=len(sv.indices) if sv is not None else 0,
                    term_ids=tuple(sv.indices) if sv is not None else (),
                    vector=vectors[i],
                    exact=exact[i].oriented(orient) if i in exact else None,
                )
            )
        return out
