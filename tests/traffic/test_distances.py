"""The label-free signals read every distance the right way round.

The known truth: on unit vectors (the default model normalises) the Euclid distance is
``√(2 − 2·cosine)``, a strictly decreasing function of the cosine, so a Euclid collection and a
Cosine collection built from the same texts rank every query identically. A label-free
predictor must then order the queries the same on both (a signal read the wrong way round on the
distance turns its correlation negative). Manhattan is another metric (not a function of the
cosine), so it only ranks much like the cosine does: its bounds are looser.

A real SciFact slice (the first 40 test queries, their relevant abstracts and others up to 300),
dense and BM25 vectors, on the embedded store and on qdrant-client's local mode (the
``QDRANT_URL`` path), replayed by ``ragsonde traffic`` and the estimate's predictors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
from ragsonde.estimate.predictors import Consensus, ScoreSignals
from ragsonde.evaluate import EvalOptions, evaluate
from ragsonde.ingest import INDEXED_FIELDS
from ragsonde.models.params import SearchParams
from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.models.prediction import PredictedQuery
from ragsonde.models.scores import Distance
from ragsonde.models.store import Store
from ragsonde.store import open_store
from ragsonde.traffic.replay import DEPTH
from ragsonde.traffic.run import TrafficOptions, traffic_report
from ragsonde.traffic.signals import score_signals
from ragsonde.workspace import Workspace

pytestmark = pytest.mark.slow

N_DOCS, N_QUERIES = 300, 40
#: distance -> the least Spearman correlation of ``predicted`` with the Cosine collection's.
AGREES = {Distance.EUCLID: 0.9, Distance.MANHATTAN: 0.8}
#: Signals of the dense ranking: on Euclid each is a monotone function of its Cosine value's
#: ranking, query by query (HNSW aside).
DENSE = ("dense_top1", "top1_pct")


@dataclass
class Slice:
    queries: list[PredictedQuery]
    log: Path
    bench: Path


@pytest.fixture(scope="module")
def scifact_slice(
    tmp_path_factory: pytest.TempPathFactory, scifact_dir: Path
) -> tuple[Slice, list[dict[str, str]]]:
    lines = (scifact_dir / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    qrels = [line.strip().split("\t") for line in lines if line.strip()]
    qids = list(dict.fromkeys(q for q, _, _ in qrels))[:N_QUERIES]
    wanted = {d for q, d, _ in qrels if q in qids}
    texts = {}
    with (scifact_dir / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            texts[row["_id"]] = row["text"]
    docs: list[dict[str, str]] = []
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["_id"] in wanted or len(docs) < N_DOCS - len(wanted):
                docs.append(row)
    folder = tmp_path_factory.mktemp("distances")
    log = folder / "traffic.jsonl"
    log.write_text(
        "".join(json.dumps({"query": texts[q], "query_id": q}) + "\n" for q in qids),
        encoding="utf-8",
    )
    bench = folder / "bench.jsonl"
    bench.write_text(
        "".join(
            json.dumps(
                {
                    "query_id": q,
                    "query": texts[q],
                    "relevant": [d for x, d, _ in qrels if x == q],
                }
            )
            + "\n"
            for q in qids
        ),
        encoding="utf-8",
    )
    queries = [PredictedQuery(query_id=q, text=texts[q]) for q in qids]
    return Slice(queries, log, bench), docs[:N_DOCS]


def _build(store: Store, embedder: OnnxEmbedder, docs: list[dict[str, str]]) -> None:
    texts = [d["title"] + " " + d["text"] for d in docs]
    vectors = embedder.embed_documents(texts)
    sparse = Bm25Encoder().embed_documents(texts)
    points = [
        PointRecord(str(i + 1), v.tolist(), {"text": t, "doc_id": d["_id"]}, s)
        for i, (d, t, v, s) in enumerate(zip(docs, texts, vectors, sparse, strict=True))
    ]
    for distance in (Distance.COSINE, Distance.EUCLID, Distance.MANHATTAN):
        name = distance.value.lower()
        store.create_collection(
            name,
            embedder.dimension,
            sparse_vector_name=SPARSE_VECTOR_NAME,
            indexed_fields=INDEXED_FIELDS,
            distance=distance,
        )
        store.upsert(name, points)


@pytest.fixture(scope="module", params=["edge", "memory"])
def home(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: OnnxEmbedder,
    scifact_slice: tuple[Slice, list[dict[str, str]]],
) -> Iterator[tuple[Settings, Store]]:
    """The slice as Cosine, Euclid and Manhattan collections, in each store."""
    root = tmp_path_factory.mktemp(f"home-{request.param}")
    url = ":memory:" if request.param == "memory" else None
    settings = Settings(home=root, qdrant_url=url)
    store = open_store(settings)
    _build(store, embedder, scifact_slice[1])
    yield settings, store
    store.close()


def _workspace(home: tuple[Settings, Store], embedder: OnnxEmbedder, name: str) -> Workspace:
    settings, store = home
    return Workspace(
        settings.model_copy(update={"collection": name}), store=store, embedder=embedder
    )


def _rho(a: list[float], b: list[float]) -> float:
    return float(spearmanr(a, b).statistic)


@pytest.mark.parametrize(
    "search",
    [
        SearchParams(mode="dense"),
        SearchParams(mode="hybrid"),
        SearchParams(mode="hybrid", fusion="rrf"),
    ],
    ids=["dense", "hybrid-dbsf", "hybrid-rrf"],
)
def test_traffic_predicts_alike_on_every_distance(
    home: tuple[Settings, Store],
    embedder: OnnxEmbedder,
    scifact_slice: tuple[Slice, list[dict[str, str]]],
    search: SearchParams,
) -> None:
    """``ragsonde traffic`` on the same texts as Cosine, Euclid and Manhattan collections: the
    same order of ``predicted``, the same ``weak`` flags on most queries, and the dense
    ranking's own signals in the same order (on raw distances, read higher-is-better, they
    were unrelated: Spearman −0.006). RRF fuses by rank, so its served ranking is the same;
    DBSF, fused by ragsonde on a distance collection, nearly so (Qdrant's reversed it).
    """
    log = scifact_slice[0].log
    rows = {}
    for distance in (Distance.COSINE, *AGREES):
        with _workspace(home, embedder, distance.value.lower()) as ws:
            options = TrafficOptions(search=search, record=False)
            report = traffic_report([log], ws, options, collection=distance.value.lower())
        rows[distance] = {q.query_id: q for q in report.rows()}
    cosine = rows[Distance.COSINE]
    ids = sorted(cosine)
    assert len(ids) == N_QUERIES
    for distance, least in AGREES.items():
        other = rows[distance]
        rho = _rho(
            [cosine[q].predicted or 0.0 for q in ids], [other[q].predicted or 0.0 for q in ids]
        )
        assert rho >= least, f"{distance}: predicted's Spearman with Cosine's is {rho:.3f}"
        same = sum(cosine[q].weak == other[q].weak for q in ids) / len(ids)
        assert same >= 0.9, f"{distance}: weak flags agree on {same:.0%} of the queries"
        for name in DENSE:
            pairs = [(cosine[q].signals[name], other[q].signals[name]) for q in ids]
            rho = _rho([a for a, _ in pairs], [b for _, b in pairs])
            assert rho >= least, f"{distance}: {name}'s Spearman with Cosine's is {rho:.3f}"
        # the oriented top-1 of a distance is its negated distance: never above 0
        assert all(other[q].signals["dense_top1"] <= 0.0 for q in ids)


def test_estimate_predictors_agree_on_every_distance(
    home: tuple[Settings, Store],
    embedder: OnnxEmbedder,
    scifact_slice: tuple[Slice, list[dict[str, str]]],
) -> None:
    """The estimate's label-free ``consensus`` (which replays as the traffic room does) orders
    the queries alike on each distance, and the ``scores`` predictor's signals (read off the
    evaluation's similarity scores, which ``models.scores`` maps higher-is-better) too."""
    sl = scifact_slice[0]
    consensus: dict[Distance, list[float]] = {}
    signals: dict[Distance, dict[str, dict[str, float]]] = {}
    for distance in (Distance.COSINE, *AGREES):
        name = distance.value.lower()
        with _workspace(home, embedder, name) as ws:
            predicted = Consensus(ws, SearchParams(mode="dense"), collection=name).predict(
                sl.queries
            )
            consensus[distance] = [p.predicted or 0.0 for p in predicted]
            report = evaluate(sl.bench, EvalOptions(k=[10], throughput=False), ws)
        scores = {q: [s for _, s in row.retrieved] for q, row in report.per_query.items()}
        made = ScoreSignals(lambda q, s=scores: s[q.query_id]).predict(sl.queries)
        signals[distance] = {p.query_id: p.signals for p in made}
    ids = [q.query_id for q in sl.queries]
    for distance, least in AGREES.items():
        rho = _rho(consensus[Distance.COSINE], consensus[distance])
        assert rho >= least, f"{distance}: consensus' Spearman with Cosine's is {rho:.3f}"
        for name in ("top1", "gap"):
            a = [signals[Distance.COSINE][q][name] for q in ids]
            b = [signals[distance][q][name] for q in ids]
            rho = _rho(a, b)
            assert rho >= least, f"{distance}: scores' {name} Spearman {rho:.3f}"


def test_cosine_signals_are_the_untouched_formula(
    home: tuple[Settings, Store],
    embedder: OnnxEmbedder,
    scifact_slice: tuple[Slice, list[dict[str, str]]],
) -> None:
    """On the Cosine default the signals are the formula on the engine's raw scores, as they
    were before distances were oriented (the bench figures stay valid); on Euclid they are the
    same formula on the negated distances the engine returned."""
    sl = scifact_slice[0]
    store = home[1]
    queries = sl.queries[:10]
    vectors = [v.tolist() for v in embedder.embed_queries([q.text for q in queries])]
    for distance, orient in ((Distance.COSINE, 1.0), (Distance.EUCLID, -1.0)):
        name = distance.value.lower()
        with _workspace(home, embedder, name) as ws:
            options = TrafficOptions(record=False)
            got = {q.query_id: q.signals for q in traffic_report([sl.log], ws, options).rows()}
        raw = store.ranked(name, [SearchSpec(vector=v, limit=DEPTH) for v in vectors])
        for q, (_, scores) in zip(queries, raw, strict=True):
            if distance is Distance.EUCLID:
                assert list(scores) == sorted(scores)  # a distance: lower is closer
            want = score_signals([orient * s for s in scores], 10)
            served = score_signals([orient * s for s in scores[:5]], 10)  # top_k 5
            for signal, value in want.items():
                assert got[q.query_id][f"dense_{signal}"] == pytest.approx(value, abs=2e-6)
            for signal, value in served.items():
                assert got[q.query_id][signal] == pytest.approx(value, abs=2e-6)
            assert math.isfinite(got[q.query_id]["top1_pct"])
