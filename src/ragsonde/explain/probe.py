"""The searches and reads the ladder needs, planned per query and run in batches.

For each query with misses, :func:`probe` asks the store once per relaxation, each on top of the
last: the search as run (``base``), full-precision vectors (``unquantized``), exact search
(``exact``), a deep fetch (``deep``), and for hybrid search each branch alone. Then, per missed
document, its best chunk (a search restricted to that document) and its chunks' texts
(:class:`DocFacts`). Every search of every query goes to :meth:`Store.search` in batches of
:data:`BATCH`; a relaxation the backend cannot make (qdrant-client's local mode has no
quantization and no HNSW) is not searched and its stage is reported "not measurable here".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragsonde.evaluate.misses import Stage
from ragsonde.evaluate.resolve import POINT_ID, id_values
from ragsonde.evaluate.spans import Span, span_of
from ragsonde.explain.pipeline import Pipeline, Ranking
from ragsonde.models.payload import PayloadMapping, get_path
from ragsonde.models.points import CollectionInfo, FilterSpec, Hit, SearchSpec, prefetch_depth
from ragsonde.models.scores import similarity_of, summable_of
from ragsonde.models.store import Store
from ragsonde.models.unread import id_text, json_type

__all__ = ["BATCH", "Case", "DocFacts", "Probe", "Setup", "TokenWindow", "probe"]

#: Searches per store request.
BATCH = 64
#: Queries whose relaxed searches are held at once (see :func:`probe`).
GROUP = 4
#: The deep fetch: chunks asked for with every stage relaxed (the evaluation's own cap).
MAX_DEEP = 5000
_DEEP_FACTOR = 10
_MIN_DEEP = 1000


class TokenWindow:
    """How many tokens the embedder reads, and a count of a text's tokens (special tokens
    included, as the model sees them), from the model's own ``tokenizer.json``."""

    def __init__(self, tokenizer: Path, window: int) -> None:
        self.path = tokenizer
        self.window = window
        self._tokenizer: Any = None

    @classmethod
    def of(cls, embedder: object) -> TokenWindow | None:
        """The embedder's window, or None when it names no tokenizer (a remote API)."""
        path = getattr(embedder, "tokenizer_path", None)
        window = getattr(embedder, "max_tokens", None)
        if isinstance(path, Path) and isinstance(window, int):
            return cls(path, window)
        return None

    def count(self, text: str) -> int:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(self.path))
            tok.no_truncation()
            tok.no_padding()
            self._tokenizer = tok
        return len(self._tokenizer.encode(text).ids)


@dataclass
class Setup:
    """What holds for every query of one ladder run."""

    store: Store
    collection: str
    info: CollectionInfo
    pipeline: Pipeline
    k: int
    mapping: PayloadMapping
    tokens: TokenWindow | None = None
    spans: bool = False
    """The benchmark gives answer spans (``references``): a split answer can be seen."""
    unmeasurable: dict[Stage, str] = field(default_factory=dict)
    """Stages this backend or benchmark cannot relax: why (reported, never skipped)."""
    inapplicable: dict[Stage, str] = field(default_factory=dict)
    """Stages with nothing to relax in this run (no quantization, an exact run…): why."""
    searches: int = 0

    def __post_init__(self) -> None:
        p, index, backend = self.pipeline, self.info.index, self.info.backend or "this backend"
        if index is None and p.mode != "sparse":  # BM25 has neither, on any backend
            self.unmeasurable["quantization"] = f"{backend} keeps plain vectors: no quantization"
            self.unmeasurable["ann"] = f"{backend} searches by brute force: no HNSW graph"
        if p.mode == "sparse":
            stage: Stage
            for stage in ("quantization", "ann"):
                self.inapplicable[stage] = "BM25 search is exact"
            self.inapplicable["truncation"] = "BM25 reads a chunk's whole text"
        elif p.exact:
            self.inapplicable["quantization"] = "the run searched exactly, at full precision"
            self.inapplicable["ann"] = "the run searched exactly"
        if index is not None and index.quantization.kind == "none":
            self.inapplicable.setdefault("quantization", "the collection is not quantized")
        if self.tokens is None:
            self.unmeasurable["truncation"] = "the embedder names no tokenizer to count tokens"
        if not self.spans:
            self.unmeasurable["chunking"] = (
                "the benchmark gives no answer spans, so a split answer cannot be seen"
            )
        elif self.pipeline.doc_path == POINT_ID:
            self.inapplicable["chunking"] = "relevance by chunk: the answer's chunks are labelled"

        for stage in self.unmeasurable:
            self.inapplicable.pop(stage, None)

    def relaxes(self, stage: Stage) -> bool:
        return stage not in self.unmeasurable and stage not in self.inapplicable

    @property
    def window(self) -> int | None:
        return None if self.tokens is None else self.tokens.window

    @property
    def deep(self) -> int:
        return min(MAX_DEEP, max(self.pipeline.fetch * _DEEP_FACTOR, _MIN_DEEP))

    @property
    def quantization_label(self) -> str:
        return "none" if self.info.index is None else self.info.index.quantization.label

    @property
    def hnsw_ef_label(self) -> str:
        ef = self.pipeline.hnsw_ef
        if ef is not None:
            return str(ef)
        return f"engine default (at least the fetch, {self.pipeline.fetch})"

    def ranking(self, hits: Sequence[Hit]) -> Ranking:
        return Ranking.of(hits, self.pipeline, self.info.distance)

    def search(self, specs: Sequence[SearchSpec]) -> list[list[Hit]]:
        out: list[list[Hit]] = []
        for i in range(0, len(specs), BATCH):
            part = list(specs[i : i + BATCH])
            out.extend(self.store.search(self.collection, part))
            self.searches += len(part)
        return out


@dataclass
class Case:
    """One query to explain: its search as run, and its relevant documents."""

    query_id: str
    text: str
    relevant: dict[str, int]
    filter: FilterSpec | None
    spec: SearchSpec
    references: tuple[Span, ...] = ()
    """The answer's excerpts (a span-labelled benchmark), for the ``chunking`` stage."""
    missed: list[str] | None = None
    """The relevant documents outside the run's top k; None: read them off the base search."""


@dataclass
class DocFacts:
    """What the store holds of one missed document."""

    chunks: int = 0
    unread_ids: list[str] = field(default_factory=list)
    """Each chunk that carries the document only inside a value that is no id (a list, an
    object: the store's filter matches an element, the ranking reads no document): "point P
    (a list)" (:mod:`ragsonde.models.unread`)."""
    empty_text: int = 0
    unread_text: list[str] = field(default_factory=list)
    """Each chunk whose text field holds what has no one text (a list, an object), read as
    empty: "point P: 'text' holds a list"."""
    passes_filter: bool = True
    excluding: dict[str, tuple[str, str]] = field(default_factory=dict)
    best_text: str | None = None
    best_tokens: int | None = None
    similarity: float | None = None
    score: float | None = None
    """Its best chunk's dense score as a dense ranking reads it: the raw score of a similarity,
    ``1 / (1 + d)`` of a distance (a raw distance beside the ranking's similarities compared the
    wrong way round)."""
    spans: list[Span] | None = None
    """Where each chunk of it lies in the document; ``None``: some chunk records no span."""


@dataclass
class Probe:
    """One query's searches, each as ranked documents."""

    case: Case
    base: Ranking
    unquantized: Ranking | None = None
    exact: Ranking | None = None
    deep: Ranking = field(default_factory=Ranking.empty)
    dense_branch: Ranking | None = None
    sparse_branch: Ranking | None = None
    facts: dict[str, DocFacts] = field(default_factory=dict)

    @property
    def before_exact(self) -> Ranking:
        return self.unquantized or self.base

    @property
    def before_deep(self) -> Ranking:
        return self.exact or self.before_exact


def _relaxed(setup: Setup, spec: SearchSpec) -> SearchSpec:
    """``spec`` with every relaxation this run can make (full precision, exact)."""
    if setup.relaxes("quantization"):
        spec = replace(spec, quantization_ignore=True)
    if setup.relaxes("ann"):
        spec = replace(spec, exact=True)
    return spec


def probe(setup: Setup, cases: Sequence[Case]) -> list[Probe]:
    """Search as run for every case, then relax only for those with misses.

    The relaxed searches of :data:`GROUP` queries at a time are asked, ranked and dropped before
    the next group's: a deep fetch returns thousands of chunks with their payloads, and holding
    every query's at once cost gigabytes on SciFact where one group's costs megabytes.
    """
    probes: list[Probe] = []
    for i in range(0, len(cases), BATCH):
        part = cases[i : i + BATCH]
        bases = setup.search([c.spec for c in part])
        probes.extend(Probe(c, setup.ranking(h)) for c, h in zip(part, bases, strict=True))
    for p in probes:
        if p.case.missed is None:
            top = p.base.top(setup.k)
            p.case.missed = [d for d, g in p.case.relevant.items() if g > 0 and d not in top]
    todo = [p for p in probes if p.case.missed]
    for i in range(0, len(todo), GROUP):
        _relax(setup, todo[i : i + GROUP])
    return probes


def _relax(setup: Setup, todo: Sequence[Probe]) -> None:
    """The relaxed searches of ``todo``, each kept only as its ranking, and the missed
    documents' facts."""
    specs: list[SearchSpec] = []
    slots: list[tuple[Probe, str]] = []

    def ask(p: Probe, slot: str, spec: SearchSpec) -> None:
        specs.append(spec)
        slots.append((p, slot))

    for p in todo:
        spec = p.case.spec
        if setup.relaxes("quantization"):
            spec = replace(spec, quantization_ignore=True)
            ask(p, "unquantized", spec)
        if setup.relaxes("ann"):
            spec = replace(spec, exact=True)
            ask(p, "exact", spec)
        deep = replace(spec, limit=setup.deep)
        if spec.mode == "hybrid":  # the same candidates per branch: only the fetch deepens
            deep = replace(deep, prefetch_limit=prefetch_depth(spec))
            ask(p, "dense_branch", replace(spec, mode="dense"))
            ask(p, "sparse_branch", replace(spec, mode="sparse"))
        ask(p, "deep", deep)
        if setup.pipeline.doc_path != POINT_ID:
            best = replace(spec, mode="dense" if spec.vector is not None else "sparse")
            for doc in p.case.missed or []:
                one = {setup.pipeline.doc_path: id_values([doc])}
                ask(p, f"best:{doc}", replace(best, limit=1, filter=one, exact=True))
    best_hits: dict[tuple[int, str], Hit | None] = {}
    for (p, slot), hits in zip(slots, setup.search(specs), strict=True):
        if slot.startswith("best:"):
            best_hits[(id(p), slot[5:])] = hits[0] if hits else None
        else:
            setattr(p, slot, setup.ranking(hits))
    for p in todo:
        for doc in p.case.missed or []:
            p.facts[doc] = _facts(setup, p, doc, best_hits.get((id(p), doc)))


def _facts(setup: Setup, p: Probe, doc: str, best: Hit | None) -> DocFacts:
    """The document's chunks (how many, how many without text), whether the query's filter lets
    any through (asked of the store) and which conditions exclude it, and its best chunk."""
    store, coll, path = setup.store, setup.collection, setup.pipeline.doc_path
    if path == POINT_ID:
        records = store.retrieve(coll, [doc])
    else:
        records = [r for b in store.scroll(coll, filter={path: id_values([doc])}) for r in b]
    payloads = [r.payload for r in records]
    facts = DocFacts(chunks=len(payloads))
    if path != POINT_ID:
        values = [(r.id, get_path(r.payload, path)) for r in records]
        facts.unread_ids = [f"point {i} ({json_type(v)})" for i, v in values if id_text(v) is None]
    if setup.spans and path != POINT_ID:
        spans = [span_of(doc, pl, setup.mapping) for pl in payloads]
        facts.spans = None if None in spans else [s for s in spans if s is not None]
    read = [setup.mapping.read(pl) for pl in payloads]
    texts = [f.text for f in read]
    facts.empty_text = sum(1 for t in texts if not (t or "").strip())
    facts.unread_text = [
        f"point {r.id}: '{where}' holds {json_type(v)}"
        for r, f in zip(records, read, strict=True)
        for name, where, v in f.unread
        if name == "text"
    ]
    filt = p.case.filter
    if filt and payloads:
        if path == POINT_ID:
            facts.passes_filter = any(_matches(pl, filt) for pl in payloads)
        else:
            facts.passes_filter = store.count(coll, _merged(filt, path, doc)) > 0
        if not facts.passes_filter:
            for key, wanted in filt.items():
                if not any(_matches(pl, {key: wanted}) for pl in payloads):
                    has = sorted({str(get_path(pl, key)) for pl in payloads})
                    facts.excluding[key] = (", ".join(map(str, wanted)), ", ".join(has))
    if best is not None:
        facts.best_text = setup.mapping.read(best.payload).text or ""
        # on the scale of a dense ranking (explain.pipeline.Ranking): a distance as 1 / (1 + d)
        facts.score = summable_of(setup.info.distance)(best.score)
        facts.similarity = similarity_of(setup.info.distance)(best.score)
    elif path == POINT_ID and texts:
        facts.best_text = texts[0] or ""
    if facts.best_text is not None and setup.tokens is not None:
        facts.best_tokens = setup.tokens.count(facts.best_text)
    sim = p.base.similarity.get(doc)
    if sim is not None:
        facts.similarity = sim
    return facts


def _merged(filt: FilterSpec, path: str, doc: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {key: list(v) for key, v in filt.items()}
    out[path] = [v for v in out[path] if str(v) == doc] if path in out else id_values([doc])
    return out


def _matches(payload: Mapping[str, Any], filt: FilterSpec) -> bool:
    """The filter's rule (every field, any of its values; a list field: any element)."""
    for key, wanted in filt.items():
        value = get_path(payload, key)
        values = value if isinstance(value, list) else [value]
        if not any(v in wanted for v in values if v is not None):
            return False
    return True
