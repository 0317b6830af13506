"""One benchmark on the embedded collection and on its copy at a Qdrant URL, compared per query.

``ragsonde eval … --against URL`` proves a push faithful, and that a Qdrant server gives what the
embedded store gave: both sides run the same queries with the same embedder and options, and the
two reports are compared with the paired tests of :mod:`ragsonde.evaluate.compare` (B, the URL,
against A, the embedded store). Identical retrieval shows as zero wins and losses on every metric.

    versus = evaluate_against("scifact/", "http://localhost:6333", collection="scifact")
    versus.comparison.metric("ndcg@10").losses   # queries the server ranks worse
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragsonde.config import parse_qdrant_url
from ragsonde.errors import CollectionNotFoundError, QueryValidationError
from ragsonde.evaluate.compare import compare_reports
from ragsonde.evaluate.options import EvalOptions
from ragsonde.evaluate.report import VersusReport
from ragsonde.evaluate.runner import evaluate
from ragsonde.models.query import resolve_collection
from ragsonde.models.text import check_text
from ragsonde.progress import Progress
from ragsonde.store.push import local_folder_in
from ragsonde.workspace import Workspace, using

__all__ = ["evaluate_against"]


def evaluate_against(
    dataset: str | Path,
    url: str,
    options: EvalOptions | None = None,
    workspace: Workspace | None = None,
    *,
    collection: str | None = None,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    progress: Progress | None = None,
) -> VersusReport:
    """Evaluate ``dataset`` on the embedded ``collection`` (A) and at ``url`` (B); compare.

    A is ``workspace``'s store (else one opened for this call,
    :func:`~ragsonde.workspace.using`); B is opened from the same settings at ``url`` and
    embeds with A's embedder. ``url`` takes the ``QDRANT_URL`` forms (``http(s)://host:port``,
    ``path:/dir``); the API key is the settings' ``qdrant_api_key``. ``progress.start`` is
    called once per side.
    """
    with using(workspace) as ws:
        cfg = ws.settings
        remote = _reference(url, cfg.home)
        # copies, not a dump rebuilt: the search parameters keep which fields were set
        embedded = (
            ws.sharing()
            if cfg.qdrant_url is None
            else ws.sharing(settings=cfg.model_copy(update={"qdrant_url": None}))
        )
        remote_side = ws.sharing(settings=cfg.model_copy(update={"qdrant_url": remote}))
        coll = resolve_collection(collection, cfg.collection)
        _require_copy(remote_side, remote, coll)
        reports = []
        for side in (embedded, remote_side):
            with side:
                reports.append(evaluate(dataset, options, side, collection=coll, progress=progress))
    a, b = reports
    return VersusReport(a=a, b=b, comparison=compare_reports(a, b, metrics, alpha=alpha))


def _reference(url: str, home: Path) -> str:
    """``url`` checked as ``QDRANT_URL`` is (a ``path:`` naming a file is refused there), and a
    local folder that exists outside ``home``: qdrant-client's local mode made an empty folder
    where none was (a typo left a folder behind, then said the collection did not exist), and
    in the embedded store's own folder would write its files among the embedded store's."""
    try:  # not a str, "" (an AssertionError) or a lone surrogate (echoed in every message)
        if not isinstance(url, str) or not url.strip():
            raise ValueError(f"name the Qdrant to compare against, not {url!r}")
        remote = parse_qdrant_url(check_text(url, "the url"))
    except ValueError as e:
        raise QueryValidationError(str(e), field="against") from e
    if remote is None:  # parse_qdrant_url gives None only for an empty value
        raise QueryValidationError("name the Qdrant to compare against.", field="against")
    if remote.startswith("path:"):
        folder = Path(remote.removeprefix("path:"))
        if not folder.is_dir():  # a file: parse_qdrant_url refused it
            raise QueryValidationError(
                f"--against {url}: {folder} does not exist. Name the folder of a "
                "qdrant-client local store holding a copy of the collection (`ragsonde push "
                "--to path:DIR` makes one).",
                field="against",
            )
        if local_folder_in(remote, home) is not None:
            raise QueryValidationError(
                f"--against {url}: it is inside ragsonde's home {home}, whose embedded store "
                "is the other side of the comparison; name a qdrant-client local store "
                "elsewhere (`ragsonde push --to path:DIR` makes one).",
                field="against",
            )
    return remote


def _require_copy(side: Workspace, url: str, collection: str) -> None:
    """Refuse, before the embedded side runs, a reference store without ``collection``: the
    error names that store and ``ragsonde push`` (not ``ragsonde ingest``, the embedded
    store's remedy)."""
    try:
        side.store.collection_info(collection)
    except CollectionNotFoundError as e:
        raise CollectionNotFoundError(
            collection,
            e.available,
            store=url,
            fix=f"Copy it there with `ragsonde push --collection {collection} --to {url}`.",
        ) from e
