"""The retrieval pipeline: validate → embed → search → threshold and format.

Each stage is timed with a monotonic clock (``time.perf_counter``). A batch embeds all its
queries in one call and searches each collection's queries in one store request; a bad query
gets its own error response and the batch is ``partial``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragsonde.config import Settings
from ragsonde.embedders import Embedder
from ragsonde.embedders.isolate import embed_groups
from ragsonde.embedders.sparse import (
    Bm25Encoder,
    query_encoder,
    query_language,
)
from ragsonde.errors import QueryValidationError, RagsondeError
from ragsonde.models import (
    BatchRequest,
    BatchResponse,
    Limits,
    Query,
    Response,
    Result,
    Timings,
    parse_query,
    validation_error_from_pydantic,
)
from ragsonde.models.index import DEFAULT_BM25_LANGUAGE
from ragsonde.models.params import IndexParams, SearchParams
from ragsonde.models.payload import PayloadMapping
from ragsonde.models.points import CollectionInfo, Hit, SearchSpec, SparseVector
from ragsonde.models.query import CollectionName, resolve_collection
from ragsonde.models.scores import similarity_in
from ragsonde.models.store import Store
from ragsonde.models.text import UnicodeStr
from ragsonde.models.unread import Unread
from ragsonde.retriever.facts import CollectionFacts
from ragsonde.retriever.filters import FilterResolver
from ragsonde.tracing import trace_retrieval
from ragsonde.workspace import Workspace, require, using

__all__ = ["Retriever"]


def _ms(start: float, end: float) -> float:
    return max(0.0, (end - start) * 1000.0)


class _Envelope(BaseModel):
    """A raw batch body before its queries are validated one by one."""

    model_config = ConfigDict(extra="forbid")
    queries: list[Any] = Field(min_length=1)
    collection: CollectionName | None = None
    batch_id: UnicodeStr = Field(
        default_factory=lambda: str(uuid.uuid4()), min_length=1, max_length=200
    )


@dataclass
class _Pending:
    """One valid query of a batch on its way through the stages."""

    index: int
    query: Query
    collection: str
    params: SearchParams
    """What this query runs with (:meth:`Retriever.params_for`)."""
    spec: SearchSpec | None = None
    vector: list[float] | None = None
    sparse: SparseVector | None = None
    language: str = DEFAULT_BM25_LANGUAGE
    """The BM25 language of a sparse or hybrid query (its collection's)."""


class Retriever:
    """Query text in, contract :class:`Response` out.

    >>> with Retriever() as r:                                  # doctest: +SKIP
    ...     r.retrieve({"query_text": "how does lidar work?", "top_k": 3})
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        workspace: Workspace | None = None,
        store: Store | None = None,
        embedder: Embedder | None = None,
        limits: Limits | None = None,
        search: SearchParams | None = None,
        mapping: PayloadMapping | None = None,
    ) -> None:
        """Answer with ``workspace``'s store and embedder (its owner closes it), or with a
        workspace of its own built from ``settings``, ``store`` and ``embedder`` (closed by
        :meth:`close`, which closes only what that workspace opened).

        ``search``: the search parameters to run with; those it does not set inherit the
        settings' (``settings.search``). A query's own ``mode``, ``top_k``,
        ``score_threshold`` and ``search`` override them for that query alone."""
        require(limits, Limits, "limits")
        require(mapping, PayloadMapping, "mapping")
        self._owned = ExitStack()  # what close() closes: a workspace opened here, if any
        self.workspace = self._owned.enter_context(
            using(workspace, settings, store=store, embedder=embedder)
        )
        self.settings = self.workspace.settings
        self.limits = limits or self.settings.limits
        self.search = self.settings.search.overlay_given(search, "search")
        # The ``mapping`` setting (ragsonde.toml, RAGSONDE_MAPPING__*, --field) unless given here.
        self.mapping = mapping if mapping is not None else self.settings.payload_mapping
        self._facts = CollectionFacts(lambda: self.store)
        self._filters = FilterResolver(self.mapping)

    # -- components, from the workspace (opened there on first use) ---------------------------
    @property
    def store(self) -> Store:
        return self.workspace.store

    @property
    def embedder(self) -> Embedder:
        return self.workspace.embedder

    @property
    def model_name(self) -> str:
        return self.workspace.embedder_name

    def close(self) -> None:
        """Close the workspace if this retriever opened it."""
        self._owned.close()

    def __enter__(self) -> Retriever:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the single query -------------------------------------------------------------------------
    def retrieve(
        self, query: Query | Mapping[str, Any], *, collection: str | None = None
    ) -> Response:
        """Answer one query. Errors come back as an error Response, never raised. Traced as a
        GenAI retrieval span when an OpenTelemetry SDK is configured (:mod:`ragsonde.tracing`)."""
        started = time.time_ns()
        response = self._retrieve(query, collection)
        trace_retrieval(response, started)
        return response

    def _retrieve(self, query: Query | Mapping[str, Any], collection: str | None) -> Response:
        t0 = time.perf_counter()
        try:
            given = resolve_collection(collection, self.settings.collection)
            q = self._parse(query)
        except QueryValidationError as e:
            return self._failure(
                e, query, collection, Timings(total_ms=_ms(t0, time.perf_counter()))
            )
        name = q.collection or given
        timings = Timings()
        try:
            pending = _Pending(0, q, name, self.params_for(q))
            info = self._prepare([pending])[0]
            if isinstance(info, RagsondeError):
                raise info
            t1 = time.perf_counter()
            failed = self._embed([pending])
            if failed:
                raise failed[pending.index]
            t2 = time.perf_counter()
            timings.embedding_ms = _ms(t1, t2)
            hits = self.store.search(name, [self._spec(pending)])[0]
            t3 = time.perf_counter()
            timings.search_ms = _ms(t2, t3)
            response = self._format(pending, hits)
            t4 = time.perf_counter()
            timings.post_processing_ms = _ms(t3, t4)
            timings.total_ms = _ms(t0, t4)
            response.timings = timings
            return response
        except RagsondeError as e:
            timings.total_ms = _ms(t0, time.perf_counter())
            return Response.failure(
                e,
                query=q.query_text,
                query_id=q.query_id,
                top_k=q.top_k,
                collection=name,
                model=self.model_name,
                timings=timings,
            )

    # -- the batch ------------------------------------------------------------------------------
    def retrieve_batch(self, batch: BatchRequest | Mapping[str, Any]) -> BatchResponse:
        """Answer many queries: one embedding call, one search request per collection.

        A malformed envelope (not an object, no queries, too many) raises QueryValidationError;
        a bad query inside a valid envelope gets its own error response (batch ``partial``).
        In a batch, each query's ``embedding_ms`` and ``search_ms`` are its share of the
        batched stage (stage time / queries in it).
        """
        t0 = time.perf_counter()
        started = time.time_ns()
        envelope = self._envelope(batch)
        default_coll = resolve_collection(envelope.collection, self.settings.collection)
        responses: list[Response | None] = [None] * len(envelope.queries)
        pending: list[_Pending] = []
        for i, raw in enumerate(envelope.queries):
            try:
                q = self._parse(raw)
                pending.append(_Pending(i, q, q.collection or default_coll, self.params_for(q)))
            except QueryValidationError as e:
                responses[i] = self._failure(e, raw, default_coll, Timings())
        prepared = self._prepare(pending)
        ok = []
        for p, outcome in zip(pending, prepared, strict=True):
            if isinstance(outcome, RagsondeError):
                responses[p.index] = self._error_for(p, outcome, Timings())
            else:
                ok.append(p)
        embed_ms = 0.0
        if ok:
            t1 = time.perf_counter()
            failed = self._embed(ok)
            embed_ms = _ms(t1, time.perf_counter()) / len(ok)
            for p in ok:
                if p.index in failed:
                    responses[p.index] = self._error_for(p, failed[p.index], Timings())
            ok = [p for p in ok if p.index not in failed]
        by_collection: dict[str, list[_Pending]] = {}
        for p in ok:
            by_collection.setdefault(p.collection, []).append(p)
        for name, group in by_collection.items():
            t2 = time.perf_counter()
            try:
                hit_lists = self.store.search(name, [self._spec(p) for p in group])
            except RagsondeError as e:
                for p in group:
                    responses[p.index] = self._error_for(p, e, Timings(embedding_ms=embed_ms))
                continue
            search_ms = _ms(t2, time.perf_counter()) / len(group)
            for p, hits in zip(group, hit_lists, strict=True):
                t3 = time.perf_counter()
                resp = self._format(p, hits)
                post_ms = _ms(t3, time.perf_counter())
                resp.timings = Timings(
                    embedding_ms=embed_ms,
                    search_ms=search_ms,
                    post_processing_ms=post_ms,
                    total_ms=embed_ms + search_ms + post_ms,
                )
                responses[p.index] = resp
        final = [r for r in responses if r is not None]
        for r in final:
            trace_retrieval(r, started)
        n_err = sum(r.status == "error" for r in final)
        status = "success" if n_err == 0 else ("error" if n_err == len(final) else "partial")
        return BatchResponse(
            batch_id=envelope.batch_id,
            status=status,
            responses=final,
            batch_latency_ms=_ms(t0, time.perf_counter()),
        )

    def _parse(self, raw: Query | Mapping[str, Any]) -> Query:
        """A valid query under this retriever's limits."""
        return parse_query(raw, self.limits)

    def params_for(self, q: Query) -> SearchParams:
        """The search ``q`` runs: this retriever's parameters, then the query's ``search``
        block, then the contract fields it sets (``mode``, ``top_k``, ``score_threshold``).
        Only what the query *sets* counts: an unset field inherits."""
        own: dict[str, Any] = {
            k: getattr(q, k)
            for k in ("mode", "top_k", "score_threshold")
            if k in q.model_fields_set
        }
        try:
            params = self.search.overlay(q.search).overlay(own)
        except ValidationError as e:
            raise validation_error_from_pydantic(e) from e
        if params.top_k > self.limits.max_top_k:
            raise QueryValidationError(
                f"Invalid query: top_k: must be between 1 and {self.limits.max_top_k} (got "
                f"{params.top_k}, from the search parameters this retriever was given).",
                field="top_k",
            )
        return params

    def require_mode(self, collection: str, mode: str) -> None:
        """Refuse (VALIDATION_ERROR, saying what to do) a search mode ``collection`` cannot
        serve, before any query runs (:meth:`~ragsonde.retriever.facts.CollectionFacts.
        require_mode`): a run of many queries fails once, not once per query."""
        self._facts.require_mode(collection, mode, self.mapping, self.settings.index.bm25_language)

    def bm25_ready(self, collection: str) -> bool:
        """Whether ``collection`` has a sparse vector this retriever's BM25 queries can search
        (modes ``sparse`` and ``hybrid``; :meth:`~ragsonde.retriever.facts.CollectionFacts.
        require_mode`)."""
        if self._facts.info(collection).sparse_vector_name is None:
            return False
        language = self._bm25_language(collection)  # a contradicting setting still raises
        return self._facts.bm25_problem(collection, self.mapping, language) is None

    def index_params(self, collection: str) -> IndexParams:
        """How ``collection`` was built, as far as it records
        (:meth:`~ragsonde.retriever.facts.CollectionFacts.index_params`)."""
        return self._facts.index_params(collection)

    def _envelope(self, batch: BatchRequest | Mapping[str, Any]) -> _Envelope:
        if isinstance(batch, BatchRequest):
            return _Envelope(
                queries=list(batch.queries), collection=batch.collection, batch_id=batch.batch_id
            )
        if not isinstance(batch, Mapping):
            raise QueryValidationError(
                'A batch must be a JSON object: {"queries": [...]}.', field="body"
            )
        try:
            env = _Envelope.model_validate(batch, strict=True)
        except ValidationError as e:
            raise validation_error_from_pydantic(e) from e
        if len(env.queries) > self.limits.max_batch_size:
            raise QueryValidationError(
                f"Invalid batch: queries: must hold at most {self.limits.max_batch_size} "
                f"queries (got {len(env.queries)}).",
                field="queries",
            )
        return env

    # -- shared stages ------------------------------------------------------------------------
    def _collection_info(self, name: str) -> CollectionInfo:
        return self._facts.info(name)

    def _prepare(self, pending: Sequence[_Pending]) -> list[CollectionInfo | RagsondeError]:
        """Check each query against its collection (exists, size, mode, filters) before any
        embedding or search; build its search spec."""
        out: list[CollectionInfo | RagsondeError] = []
        for p in pending:
            try:
                info = self._collection_info(p.collection)
                info.require_dimension(self.embedder.dimension, self.model_name)
                self._facts.require_mode(
                    p.collection, p.params.mode, self.mapping, self.settings.index.bm25_language
                )
                if p.params.mode != "dense":
                    p.language = self._bm25_language(p.collection)
                filt = self._filters.resolve(p.query.filters, info, self.store)
                p.spec = SearchSpec(vector=None, limit=p.params.top_k, filter=filt)
                out.append(info)
            except RagsondeError as e:
                out.append(e)
        return out

    def _embed(self, pending: Sequence[_Pending]) -> dict[int, RagsondeError]:
        """Dense vectors for dense and hybrid queries (one model call), BM25 for the others.

        A query whose text alone makes the embedder fail gets its own error (keyed by its
        index); the others still get their vectors (:func:`~ragsonde.embedders.isolate.embed_groups`
        retries them one by one only when the combined call fails).
        """
        failed: dict[int, RagsondeError] = {}
        dense = [p for p in pending if p.params.mode != "sparse"]
        if dense:
            outcomes = embed_groups(
                self.embedder.embed_queries, [[p.query.query_text] for p in dense]
            )
            for p, outcome in zip(dense, outcomes, strict=True):
                if isinstance(outcome, RagsondeError):
                    failed[p.index] = outcome
                elif isinstance(outcome, Exception):
                    raise outcome  # not mapped at the embedder boundary: a bug, not an input
                else:
                    p.vector = outcome[0].tolist()
        lexical = [p for p in pending if p.params.mode != "dense" and p.index not in failed]
        for language in dict.fromkeys(p.language for p in lexical):
            group = [p for p in lexical if p.language == language]
            sparse = self.sparse_encoder(language).embed_queries(
                [p.query.query_text for p in group]
            )
            for p, sv in zip(group, sparse, strict=True):
                p.sparse = sv
        return failed

    def sparse_encoder(self, language: str = DEFAULT_BM25_LANGUAGE) -> Bm25Encoder:
        """The BM25 query encoder of ``language`` (:func:`~ragsonde.embedders.sparse.query_encoder`,
        made once per process)."""
        return query_encoder(language)

    def _bm25_language(self, collection: str) -> str:
        """The language ``collection``'s BM25 queries are encoded in: the one its chunks record
        (read from one stored payload, kept as long as the collection's info), else the
        ``bm25_language`` setting; a setting that contradicts the record is a VALIDATION_ERROR
        (:func:`~ragsonde.embedders.sparse.query_language`)."""

        recorded = self._facts.recorded_language(collection)
        return query_language(collection, recorded, self.settings.index.bm25_language)

    def _spec(self, p: _Pending) -> SearchSpec:
        base = p.spec
        if base is None or (p.vector is None and p.sparse is None):
            raise RuntimeError("query was not prepared and embedded")  # a bug, not user input
        return SearchSpec.of(
            p.params,
            vector=p.vector,
            sparse=p.sparse,
            filter=base.filter,
            with_vectors=p.query.include_vectors,
        )

    def _format(self, p: _Pending, hits: Sequence[Hit]) -> Response:
        q, collection = p.query, p.collection
        results: list[Result] = []
        # The engine's order stands; the distance (in dense mode) decides how its raw score
        # maps into [0, 1].
        similarity = similarity_in(self._collection_info(collection).distance, p.params.mode)
        unread = Unread()
        for hit in hits:
            score = similarity(hit.score)
            if score < p.params.score_threshold:
                continue
            fields = self.mapping.read(hit.payload)
            unread.note(fields.unread, hit.id)
            result = Result(
                chunk_id=hit.id,
                text=fields.text,
                url=fields.url,
                title=fields.title,
                section=fields.section,
                chunk_index=fields.chunk_index,
                similarity_score=score,
                raw_score=hit.score,
                rank=len(results),
                created_at=fields.created_at,
                metadata=fields.metadata,
                vector=hit.vector if q.include_vectors else None,
            )
            results.append(result if q.include_metadata else result.minimal())
        return Response(
            query=q.query_text,
            query_id=q.query_id,
            status="success",
            results=results,
            total_results=len(results),
            top_k_requested=p.params.top_k,
            collection=collection,
            model=self.model_name,
            search=p.params,
            index=self.index_params(collection),
        ).noting(unread)

    def _error_for(self, p: _Pending, exc: RagsondeError, timings: Timings) -> Response:
        return Response.failure(
            exc,
            query=p.query.query_text,
            query_id=p.query.query_id,
            top_k=p.query.top_k,
            collection=p.collection,
            model=self.model_name,
            timings=timings,
        )

    def _failure(
        self, exc: RagsondeError, raw: Any, collection: str | None, timings: Timings
    ) -> Response:
        """An error response for input that did not validate: echo what can be echoed."""
        data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        text = next(
            (data[k] for k in ("query_text", "text", "query") if isinstance(data.get(k), str)), ""
        )
        qid = data.get("query_id")
        top_k = data.get("top_k")
        coll = data.get("collection")
        return Response.failure(
            exc,
            query=text,
            query_id=qid if isinstance(qid, str) and qid else str(uuid.uuid4()),
            top_k=top_k if isinstance(top_k, int) and not isinstance(top_k, bool) else 5,
            collection=next(
                (c for c in (coll, collection) if isinstance(c, str)), self.settings.collection
            ),
            model=self.model_name,
            timings=timings,
        )
