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
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.compare import compare_reports
from ragsonde.evaluate.options import EvalOptions
from ragsonde.evaluate.report import VersusReport
from ragsonde.evaluate.runner import evaluate
from ragsonde.progress import Progress
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
    try:
        remote = parse_qdrant_url(url)
    except ValueError as e:
        raise QueryValidationError(str(e), field="against") from e
    with using(workspace) as ws:
        cfg = ws.settings
        # copies, not a dump rebuilt: the search parameters keep which fields were set
        embedded = (
            ws.sharing()
            if cfg.qdrant_url is None
            else ws.sharing(settings=cfg.model_copy(update={"qdrant_url": None}))
        )
        remote_side = ws.sharing(settings=cfg.model_copy(update={"qdrant_url": remote}))
        reports = []
        for side in (embedded, remote_side):
            with side:
                reports.append(
                    evaluate(dataset, options, side, collection=collection, progress=progress)
                )
    a, b = reports
    return VersusReport(a=a, b=b, comparison=compare_reports(a, b, metrics, alpha=alpha))
