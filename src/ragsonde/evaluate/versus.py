"""Two embedders on one corpus: ingest, evaluate and compare them in one call.

Each embedder gets its own collection, ingested from the same corpus when missing, and both are
evaluated with the same options on the same queries; the two reports are then compared with the
paired tests of :mod:`ragsonde.evaluate.compare` (B against A).

Why two collections and not two named vectors in one: the store, the retriever and the ingest
pipeline all work with one dense vector per collection (a point is written whole, chunks follow
the embedder's own tokenizer when it has one, and skip-unchanged reads back which embedder made a
vector). Two collections need none of that to change, chunk each side the way its model reads,
and let either side be re-ingested or dropped on its own.

    versus = evaluate_versus("scifact/", ("local:sentence-transformers/all-MiniLM-L6-v2",
                                          "openai:text-embedding-3-small"), collection="scifact")
    versus.comparison.metric("ndcg@10").verdict   # "better" | "worse" | "no significant …"
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ragsonde.config import Settings
from ragsonde.embedders import Embedder
from ragsonde.errors import CollectionNotFoundError, QueryValidationError
from ragsonde.evaluate.compare import compare_reports
from ragsonde.evaluate.metrics import metric_names, parse_metric
from ragsonde.evaluate.options import EvalOptions
from ragsonde.evaluate.report import VersusReport
from ragsonde.evaluate.runner import evaluate
from ragsonde.models.query import check_collection, resolve_collection
from ragsonde.models.store import Store
from ragsonde.models.validation import options_of
from ragsonde.progress import Progress
from ragsonde.workspace import Workspace, using

__all__ = ["VersusReport", "evaluate_versus", "versus_collection"]

#: Qdrant allows longer names, but a collection name is also a folder name on some backends.
_MAX_NAME = 120


def versus_collection(base: str, embedder: str) -> str:
    """The collection of ``embedder`` when comparing on ``base``: ``<base>__<slug>``.

    The slug is the embedder spec lowercased, every run of characters other than letters and
    digits turned into one ``-``: ``local:sentence-transformers/all-MiniLM-L6-v2`` ->
    ``local-sentence-transformers-all-minilm-l6-v2``.
    """
    slug = re.sub(r"[^a-z0-9]+", "-", embedder.lower()).strip("-")
    return f"{base}__{slug}"[:_MAX_NAME]


def _side_embedder(spec: str | Embedder, cfg: Settings) -> Embedder:
    if isinstance(spec, str):
        return Workspace.embedder_for(cfg.model_copy(update={"embedder": spec}))
    return spec


def _check_dimension(store: Store, collection: str, embedder: Embedder) -> None:
    """An existing collection must fit the embedder: a mismatch would score every query 0."""
    try:
        info = store.collection_info(collection)
    except CollectionNotFoundError:
        return
    info.require_dimension(embedder.dimension, embedder.name)


def _check_metrics(metrics: Sequence[str] | None, o: EvalOptions) -> list[str] | None:
    """The metrics to compare, checked before any work: each must be one the evaluation makes."""
    if not metrics:
        return None
    made = set(metric_names(o.k)) | {g.path for g in o.parsed_gates if "." not in g.path}
    for name in metrics:
        parse_metric(name)  # an unknown name lists the supported ones
        if name not in made:
            raise QueryValidationError(
                f"metric '{name}' is not computed with cutoffs {','.join(map(str, o.k))}: "
                "add its cutoff to k.",
                field="metric",
            )
    return list(dict.fromkeys(metrics))


def evaluate_versus(
    dataset: str | Path,
    embedders: Sequence[str | Embedder],
    options: EvalOptions | None = None,
    workspace: Workspace | None = None,
    *,
    collection: str | None = None,
    collections: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10000,
    seed: int = 0,
    progress: Progress | None = None,
    corpus: str | None = None,
) -> VersusReport:
    """Evaluate embedder B against embedder A on ``dataset`` and compare them.

    ``embedders`` is ``(A, B)``, each a spec (``local:<model>``, ``openai:<model>``, …, built
    with the workspace's settings for keys and base URLs) or a ready
    :class:`~ragsonde.embedders.Embedder`. Both use ``workspace``'s store (else one opened for
    this call, :func:`~ragsonde.workspace.using`). Their collections are ``collections`` when
    given, else :func:`versus_collection` of ``collection`` (default: the configured one) and
    each embedder's name. A missing collection is ingested from ``corpus`` (any ``ragsonde
    ingest`` source), else the benchmark's BEIR corpus; an existing one is used as it is,
    after checking its vector size.

    Both sides are evaluated with the same ``options`` (``progress.start`` is called once per
    side, A first), then compared on ``metrics`` (default: every metric both reports have) with
    the paired t-test, the paired permutation test and a bootstrap CI at ``alpha``.
    """
    if len(embedders) != 2:
        raise QueryValidationError(
            f"name exactly two embedders to compare, got {len(embedders)}.", field="embedder"
        )
    if isinstance(collections, str):  # "ab" would be the collections 'a' and 'b'
        raise QueryValidationError(
            "collections: name two collections in a list, not one string.", field="collection"
        )
    if collections is not None and len(collections) != 2:
        raise QueryValidationError(
            f"name exactly two collections, one per embedder, got {len(collections)}.",
            field="collection",
        )
    if not 0 < alpha < 1:
        raise QueryValidationError(f"alpha must be in (0, 1), got {alpha}.", field="alpha")
    if n_resamples < 1:
        raise QueryValidationError("n_resamples must be positive.", field="n_resamples")
    o = options_of(options, EvalOptions)
    wanted = _check_metrics(metrics, o)
    with using(workspace) as ws:  # one store for both sides
        cfg = ws.settings
        base = resolve_collection(collection, cfg.collection)
        embs = [_side_embedder(e, cfg) for e in embedders]
        names = (
            [check_collection(c) for c in collections]
            if collections is not None
            else [versus_collection(base, e.name) for e in embs]
        )
        if names[0] == names[1]:
            raise QueryValidationError(
                f"both embedders would use collection '{names[0]}': name two different "
                "embedders, or two collections.",
                field="collection",
            )
        for name, emb in zip(names, embs, strict=True):
            _check_dimension(ws.store, name, emb)
        reports = []
        for name, emb in zip(names, embs, strict=True):
            with ws.sharing(embedder=emb) as side:
                reports.append(
                    evaluate(
                        dataset,
                        o,
                        side,
                        collection=name,
                        progress=progress,
                        ingest=True,
                        corpus=corpus,
                    )
                )
    report_a, report_b = reports
    comparison = compare_reports(
        report_a,
        report_b,
        wanted,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
    )
    return VersusReport(a=report_a, b=report_b, comparison=comparison)
