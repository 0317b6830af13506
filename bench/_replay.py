"""The NumPy replay of ragsonde's hybrid search, for ``bench_hybrid_ceiling.py``.

Dense cosine, BM25 with Qdrant's own encoder and IDF, the fusions (DBSF, RRF, TM2C2 as
``fuse_linear`` fuses) and the chunk-to-document step, as score matrices (queries x chunks,
-inf where a chunk is not a candidate), so a configuration costs milliseconds instead of a sweep
over the engine. ``bench_hybrid_ceiling.py`` checks it against the engine before trusting it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: How far the replay may be from the engine (nDCG@10 over the queries).
ENGINE_TOLERANCE = 0.001
#: Chunks the engine returns per query in the engine check; documents kept per query in a run.
ENGINE_LIMIT, RUN_DOCS = 300, 100

Matrix = np.ndarray  # queries x chunks (or documents) scores, -inf where not a candidate

# --------------------------------------------------------------------------- the data


@dataclass(frozen=True)
class Corpus:
    """The collection's chunks as read back through the store."""

    ids: list[str]
    doc_index: np.ndarray  # chunk -> index into doc_ids
    doc_ids: list[str]
    texts: list[str]  # what ingest encoded (``encoded_text``)
    titles: list[str | None]
    dense: Matrix  # unit rows


@dataclass(frozen=True)
class Queries:
    ids: list[str]
    texts: list[str]
    dense: Matrix  # unit rows
    qrels: dict[str, dict[str, int]]


def unit(m: Any) -> Matrix:
    """``m`` as float32 rows of length 1."""
    rows: Matrix = np.asarray(m, dtype=np.float32)
    unit_rows: Matrix = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit_rows


def read_corpus(store: Any, collection: str) -> Corpus:
    from ragsonde.ingest.pipeline import encoded_text
    from ragsonde.models.payload import DEFAULT_MAPPING

    ids, docs, texts, titles, vectors = [], [], [], [], []
    for batch in store.scroll(collection, batch_size=1024, with_vectors=True):
        for p in batch:
            ids.append(p.id)
            docs.append(str(p.payload["doc_id"]))
            texts.append(encoded_text(p.payload))
            titles.append(DEFAULT_MAPPING.read(p.payload).title)
            vectors.append(p.vector)
    doc_ids, doc_index = np.unique(np.asarray(docs), return_inverse=True)
    return Corpus(ids, doc_index, doc_ids.tolist(), texts, titles, unit(vectors))


# --------------------------------------------------------------------------- BM25 builds

#: BM25 tokenizer options of ``qdrant_edge.Bm25Config`` -> its keyword arguments.
TOKENIZERS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "default": lambda qe: {},
    "stemmer off": lambda qe: {"stemmer": qe.DisabledStemmer()},
    "stopwords off": lambda qe: {"stopwords": qe.StopwordsSet(languages=set(), custom=set())},
    "stemmer and stopwords off": lambda qe: {
        "stemmer": qe.DisabledStemmer(),
        "stopwords": qe.StopwordsSet(languages=set(), custom=set()),
    },
    "ascii folding": lambda qe: {"ascii_folding": True},
    "min token length 2": lambda qe: {"min_token_len": 2},
    "multilingual tokenizer": lambda qe: {"tokenizer": qe.TokenizerType.Multilingual},
}


@dataclass(frozen=True)
class Build:
    """One way of encoding the chunks' BM25 vectors."""

    k1: float = 1.2
    b: float = 0.75
    title_weight: int = 0
    tokenizer: str = "default"

    @property
    def label(self) -> str:
        tok = "" if self.tokenizer == "default" else f" {self.tokenizer}"
        return f"bm25 k{self.k1:g} b{self.b:g} t{self.title_weight}{tok}"


INGESTS = Build()  # what ingest writes (the collection's stored vectors)


def bm25_scores(build: Build, corpus: Corpus, queries: Queries) -> Matrix:
    """BM25 of every (query, chunk): Qdrant's encoder and IDF, -inf where no term matches."""
    import qdrant_edge as qe
    import scipy.sparse as sp

    from ragsonde.embedders.sparse import Bm25Encoder, bm25_document_text

    config = qe.Bm25Config(
        k=build.k1, b=build.b, avg_len=Bm25Encoder().avg_len, **TOKENIZERS[build.tokenizer](qe)
    )
    model = qe.Bm25(config)
    docs = [
        model.embed_document(bm25_document_text(t, title, build.title_weight))
        for t, title in zip(corpus.texts, corpus.titles, strict=True)
    ]
    qs = [model.embed_query(t) for t in queries.texts]

    def rows(vecs: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r = np.concatenate([np.full(len(v.indices), i) for i, v in enumerate(vecs)])
        c = np.concatenate([np.asarray(v.indices, dtype=np.int64) for v in vecs])
        x = np.concatenate([np.asarray(v.values, dtype=np.float64) for v in vecs])
        return r, c, x

    dr, dc, dx = rows(docs)
    qr, qc, qx = rows(qs)
    terms, col = np.unique(np.concatenate([dc, qc]), return_inverse=True)
    dm = sp.csr_matrix((dx, (dr, col[: len(dc)])), shape=(len(docs), len(terms)))
    qm = sp.csr_matrix((qx, (qr, col[len(dc) :])), shape=(len(qs), len(terms)))
    n = len(docs)
    df = np.asarray((dm > 0).sum(axis=0)).ravel()
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    s = (qm @ sp.diags(idf) @ dm.T).toarray().astype(np.float32)
    return np.where(s > 0, s, -np.inf)


# --------------------------------------------------------------------------- fusion


def top(scores: Matrix, k: int) -> Matrix:
    """``scores`` kept on each row's ``k`` best candidates, -inf elsewhere."""
    k = min(k, scores.shape[1] - 1)
    out = np.full_like(scores, -np.inf)
    idx = np.argpartition(-scores, k, axis=1)[:, :k]
    rows = np.arange(scores.shape[0])[:, None]
    out[rows, idx] = scores[rows, idx]
    return out


def _dbsf_scale(t: Matrix) -> Matrix:
    """Qdrant's DBSF: each list scaled by its mean ± 3 (sample) standard deviations; 0 off it."""
    found = np.isfinite(t)
    n = found.sum(axis=1, keepdims=True)
    mu = np.where(found, t, 0.0).sum(axis=1, keepdims=True) / np.maximum(n, 1)
    d = np.where(found, t - mu, 0.0)
    sd = np.sqrt((d * d).sum(axis=1, keepdims=True) / np.maximum(n - 1, 1))
    return np.where(found, (d + 3 * sd) / np.where(sd > 0, 6 * sd, 1.0), 0.0)


def _ranks(t: Matrix) -> Matrix:
    """Each candidate's rank in its list, 0 for the best (only a list's entries are meant)."""
    ranks = np.zeros(t.shape, dtype=np.int64)
    k = int(np.isfinite(t).sum(axis=1).max())
    if k == 0:
        return ranks
    idx = np.argpartition(-t, k - 1, axis=1)[:, :k]
    idx = np.take_along_axis(idx, np.argsort(-np.take_along_axis(t, idx, 1), 1, kind="stable"), 1)
    ranks[np.arange(t.shape[0])[:, None], idx] = np.arange(k)[None, :]
    return ranks


def _candidates(td: Matrix, ts: Matrix, fused: Matrix) -> Matrix:
    return np.where(np.isfinite(td) | np.isfinite(ts), fused, -np.inf).astype(np.float32)


def dbsf(td: Matrix, ts: Matrix, _: float) -> Matrix:
    return _candidates(td, ts, _dbsf_scale(td) + _dbsf_scale(ts))


def rrf(td: Matrix, ts: Matrix, k: float) -> Matrix:
    """``sum 1 / (k + rank)``, ranks from 1, over the lists a candidate is in."""
    fused = sum(np.where(np.isfinite(t), 1.0 / (k + _ranks(t) + 1), 0.0) for t in (td, ts))
    return _candidates(td, ts, np.asarray(fused))


def tm2c2(td: Matrix, ts: Matrix, w: float) -> Matrix:
    """``fuse_linear``: ``w * cosine + (1 - w) * bm25 / max bm25`` (0 for a missing side)."""
    best = np.max(np.where(np.isfinite(ts), ts, 0.0), axis=1, keepdims=True)
    scale = np.divide(1.0, best, out=np.zeros_like(best), where=best > 0)
    fused = w * np.where(np.isfinite(td), td, 0.0) + (1 - w) * np.where(
        np.isfinite(ts), ts * scale, 0.0
    )
    return _candidates(td, ts, fused)


#: Fusion -> (dense top, BM25 top, its parameter) -> fused scores.
FUSIONS: dict[str, Callable[[Matrix, Matrix, float], Matrix]] = {
    "dbsf": dbsf,
    "rrf": rrf,
    "tm2c2": tm2c2,
}


@dataclass(frozen=True)
class Fusion:
    method: str
    prefetch: int
    param: float = 0.0

    @property
    def label(self) -> str:
        p = {"dbsf": "", "rrf": f" k{self.param:g}", "tm2c2": f" {self.param:g}"}[self.method]
        return f"{self.method}{p} pf{self.prefetch}"

    def __call__(self, dense: Matrix, sparse: Matrix) -> Matrix:
        """The fused scores of two full score matrices."""
        return self.fuse(top(dense, self.prefetch), top(sparse, self.prefetch))

    def fuse(self, dense_top: Matrix, sparse_top: Matrix) -> Matrix:
        """The fused scores of each side's top ``prefetch`` (:func:`top`)."""
        return FUSIONS[self.method](dense_top, sparse_top, self.param)


PREFETCH = (100, 200, 500, 1000)
WEIGHTS = tuple(round(0.5 + 0.05 * i, 2) for i in range(9))  # 0.5 ... 0.9


def fusion_grid(prefetch: Iterable[int] = PREFETCH) -> list[Fusion]:
    out: list[Fusion] = []
    for pf in prefetch:
        out.append(Fusion("dbsf", pf))
        out += [Fusion("rrf", pf, k) for k in (10, 30, 60, 100)]
        out += [Fusion("tm2c2", pf, w) for w in WEIGHTS]
    return out


# --------------------------------------------------------------------------- scoring


class Scorer:
    """Score matrices -> document runs -> per-query nDCG@10 (ragsonde's ``compute_metrics``)."""

    def __init__(self, corpus: Corpus, queries: Queries) -> None:
        self.corpus, self.queries = corpus, queries
        self.order = np.argsort(corpus.doc_index, kind="stable")
        grouped = corpus.doc_index[self.order]
        self.starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])

    def documents(self, chunks: Matrix) -> Matrix:
        """Each document's best candidate chunk (-inf: none is a candidate)."""
        best: Matrix = np.maximum.reduceat(chunks[:, self.order], self.starts, axis=1)
        return best

    def ndcg(self, chunks: Matrix | None = None, *, documents: Matrix | None = None) -> np.ndarray:
        """Per-query nDCG@10 of chunk scores (by best chunk) or of document scores."""
        if documents is not None:
            d = documents
        elif chunks is not None:
            d = self.documents(chunks)
        else:
            raise ValueError("ndcg needs chunk scores or document scores")
        best = np.argpartition(-d, RUN_DOCS, axis=1)[:, :RUN_DOCS]
        ids = self.corpus.doc_ids
        run = {
            q: {ids[j]: float(d[i, j]) for j in best[i] if np.isfinite(d[i, j])}
            for i, q in enumerate(self.queries.ids)
        }
        return self.of_run(run)

    def of_run(self, run: dict[str, dict[str, float]]) -> np.ndarray:
        from ragsonde.evaluate.metrics import compute_metrics

        _, per = compute_metrics(["ndcg@10"], self.queries.qrels, run)
        return np.array([per[q]["ndcg@10"] for q in self.queries.ids])

    def aggregated(
        self, chunks: Matrix, combine: Callable[[Sequence[tuple[str, float]]], dict[str, float]]
    ) -> np.ndarray:
        """Per-query nDCG@10 when ``combine`` turns the ranked candidate chunks (document,
        score; best first, every candidate of the fusion) into document scores."""
        run = {}
        for i, q in enumerate(self.queries.ids):
            row = np.flatnonzero(np.isfinite(chunks[i]))
            row = row[np.argsort(-chunks[i, row], kind="stable")]
            ranked = [
                (self.corpus.doc_ids[self.corpus.doc_index[j]], float(chunks[i, j])) for j in row
            ]
            scored = combine(ranked)
            run[q] = dict(sorted(scored.items(), key=lambda kv: -kv[1])[:RUN_DOCS])
        return self.of_run(run)


def sum_top2(ranked: Sequence[tuple[str, float]]) -> dict[str, float]:
    """ragsonde's ``sum`` aggregation of a document's two best chunks."""
    from ragsonde.evaluate.aggregation import Aggregation, aggregate

    return aggregate(ranked, Aggregation(method="sum", n=2))


def best_plus(lam: float) -> Callable[[Sequence[tuple[str, float]]], dict[str, float]]:
    """A document's best chunk plus ``lam`` times its second best (not a ragsonde setting)."""

    def combine(ranked: Sequence[tuple[str, float]]) -> dict[str, float]:
        two: dict[str, list[float]] = {}
        for doc, s in ranked:
            if len(got := two.setdefault(doc, [])) < 2:
                got.append(s)
        return {d: s[0] + lam * (s[1] if len(s) > 1 else 0.0) for d, s in two.items()}

    return combine


# --------------------------------------------------------------------------- the engine check


def engine_check(
    store: Any,
    collection: str,
    corpus: Corpus,
    queries: Queries,
    scorer: Scorer,
    raw_vectors: Sequence[Sequence[float]] | Matrix,
    dense: Matrix,
    bm25: Matrix,
) -> dict[str, dict[str, float]]:
    """nDCG@10 of ragsonde's own searches and of their replay, side by side; exit 1 on a gap."""
    from ragsonde.embedders.sparse import Bm25Encoder
    from ragsonde.evaluate.aggregation import Aggregation, aggregate
    from ragsonde.models.points import SearchSpec

    sparse = Bm25Encoder().embed_queries(queries.texts)
    lim = ENGINE_LIMIT
    searches: dict[str, tuple[Callable[[Any, Any], SearchSpec], Callable[[], Matrix]]] = {
        "dense (exact)": (
            lambda v, s: SearchSpec(vector=v, limit=lim, exact=True),
            lambda: dense,
        ),
        "bm25": (
            lambda v, s: SearchSpec(vector=None, limit=lim, mode="sparse", sparse=s),
            lambda: bm25,
        ),
        "dbsf pf200": (
            lambda v, s: SearchSpec(
                vector=v,
                sparse=s,
                limit=lim,
                mode="hybrid",
                fusion="dbsf",
                prefetch_limit=200,
                exact=True,
            ),
            lambda: Fusion("dbsf", 200)(dense, bm25),
        ),
        "tm2c2 0.7 pf1000 (fusion=linear)": (
            lambda v, s: SearchSpec(
                vector=v,
                sparse=s,
                limit=lim,
                mode="hybrid",
                fusion="linear",
                fusion_weights=(0.7, 0.3),
                prefetch_limit=1000,
                exact=True,
            ),
            lambda: Fusion("tm2c2", 1000, 0.7)(dense, bm25),
        ),
    }
    doc_of = {pid: corpus.doc_ids[d] for pid, d in zip(corpus.ids, corpus.doc_index, strict=True)}
    out: dict[str, dict[str, float]] = {}
    for name, (spec, replay) in searches.items():
        hits = store.search(
            collection, [spec(v, s) for v, s in zip(raw_vectors, sparse, strict=True)]
        )
        run = {
            q: aggregate(((doc_of[h.id], h.score) for h in hs), Aggregation())
            for q, hs in zip(queries.ids, hits, strict=True)
        }
        engine, replayed = float(scorer.of_run(run).mean()), float(scorer.ndcg(replay()).mean())
        out[name] = {
            "engine": round(engine, 4),
            "replay": round(replayed, 4),
            "gap": round(abs(engine - replayed), 5),
        }
        print(f"engine check {name}: engine {engine:.4f}, replay {replayed:.4f}", flush=True)
    bad = {n: r for n, r in out.items() if r["gap"] > ENGINE_TOLERANCE}
    if bad:
        raise SystemExit(
            f"The replay does not match the engine within {ENGINE_TOLERANCE} nDCG@10: "
            + "; ".join(
                f"{n}: engine {r['engine']:.4f}, replay {r['replay']:.4f}" for n, r in bad.items()
            )
        )
    return out
