"""The read-only tools: search, inspect_collection, config, history_list, history_diff,
failing_queries. Each is a thin call into the library that answers a published model; the
server (:mod:`ragsonde.mcp.server`) registers them and turns their errors into tool errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ragsonde.errors import QueryValidationError

# at run time, not only for the type checker: the SDK reads each tool's return annotation to
# publish its outputSchema
from ragsonde.history.models import RunDiff, RunList
from ragsonde.mcp._errors import AnsweredError
from ragsonde.mcp.models import (
    ConfigReport,
    FailingQueries,
    FailingQuery,
    SearchAnswer,
    SettingRow,
)
from ragsonde.mcp.reports import Reports
from ragsonde.mcp.roots import Roots
from ragsonde.models.response import empty_text_warning
from ragsonde.retriever import Retriever
from ragsonde.store.inspect import CollectionReport
from ragsonde.workspace import Workspace

__all__ = ["Room"]

#: How a server is told where a collection keeps its text (``ragsonde mcp`` has no --field).
_TEXT_PATH_FIX = (
    "see the inspect_collection tool, and start the server with the text's path "
    "(RAGSONDE_MAPPING__TEXT=PATH, or text = PATH under [mapping] in ragsonde.toml)"
)


class Room:
    """What every tool of one server shares: the workspace (settings, store, embedder), one
    retriever over it, the allowed roots, the reports it ran, and whether it may write."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        roots: Roots | None,
        allow_write: bool = False,
        config_file: Path | None = None,
        retriever: Retriever | None = None,
    ) -> None:
        from ragsonde.history.record import history_path

        self.workspace = workspace
        self.retriever = retriever or Retriever(workspace=workspace)
        self.roots = roots
        self.allow_write = allow_write
        self.config_file = config_file
        self.history = history_path(workspace.settings.home)
        self.reports = Reports(self.history)

    # -- search -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        top_k: Annotated[int, Field(ge=1, le=100)] = 5,  # published: a client asks no more
        collection: str | None = None,
        mode: Literal["dense", "sparse", "hybrid"] | None = None,
        score_threshold: float | None = None,
        filters: dict[str, Any] | None = None,
        search: dict[str, Any] | None = None,
        include_metadata: bool = True,
    ) -> SearchAnswer:
        """Retrieve the chunks most similar to ``query``: each result with its similarity score
        and rank, the stage timings, the search settings that ran (``search``: fusion,
        hnsw_ef, exact, ... for this call; unset ones inherit the server's settings), and
        warnings (e.g. every result's text is empty: the text is at another payload path)."""
        body: dict[str, Any] = {"query_text": query, "top_k": top_k}
        given = {
            "mode": mode,
            "score_threshold": score_threshold,
            "filters": filters,
            "search": search,
        }
        body.update({k: v for k, v in given.items() if v is not None})
        if not include_metadata:
            body["include_metadata"] = False
        resp = self.retriever.retrieve(body, collection=collection)
        if resp.error is not None:
            raise AnsweredError(resp.error)
        empty = empty_text_warning(resp, _TEXT_PATH_FIX)
        warnings = [*resp.warnings, *([empty] if empty else [])]
        return SearchAnswer(**{**dict(resp), "warnings": warnings})

    # -- the collection and the settings ------------------------------------------------------

    def inspect_collection(
        self, collection: str | None = None, sample: int = 1000
    ) -> CollectionReport:
        """Describe a collection: vector size and distance, points, payload fields and how
        often each is present, its layout and the payload mapping that fits it, its index."""
        if not 1 <= sample <= 100_000:
            raise QueryValidationError("sample: between 1 and 100000.", field="sample")
        return self.workspace.inspect(collection, sample=sample)

    def config(self) -> ConfigReport:
        """Every effective setting of this server and where it came from (default, the file,
        the environment, a flag), secrets masked; the folders it may read; whether it writes."""
        from ragsonde.config_file import config_file_path
        from ragsonde.config_sources import origins, shown

        settings = self.workspace.settings
        path = self.config_file or config_file_path()
        rows = [
            SettingRow(
                key=o.key,
                value=shown(getattr(settings, o.key) if "." not in o.key else o.value),
                source=o.source,
                where=o.where,
            )
            for o in origins(settings, {}, path)
        ]
        roots = [str(r) for r in self.roots.folders] if self.roots is not None else []
        return ConfigReport(
            config_file=str(path), settings=rows, roots=roots, allow_write=self.allow_write
        )

    # -- history ------------------------------------------------------------------------------

    def history_list(
        self, benchmark: str | None = None, collection: str | None = None, limit: int = 20
    ) -> RunList:
        """The recorded evaluation runs, oldest first (the newest ``limit``), with their
        headline metrics and whether their gates passed."""
        from ragsonde.history import HistoryStore

        if limit < 1:
            raise QueryValidationError("limit: at least 1.", field="limit")
        if not self.history.exists():  # absent: no runs; a damaged path: its error
            return RunList(history=str(self.history), runs=[])
        with HistoryStore(self.history) as hs:
            runs = hs.runs(benchmark=benchmark, collection=collection, limit=limit)
            return RunList(history=str(hs.path), runs=runs)

    def history_diff(
        self,
        run_a: str = "last~1",
        run_b: str = "last",
        metric: list[str] | None = None,
        alpha: float = 0.05,
    ) -> RunDiff:
        """What changed between two recorded runs (run ids, ``last``, ``last~N``, ``best``):
        their fingerprints, each metric with a paired test and intervals, and the queries that
        flipped between hit and miss, with why where the runs were explained."""
        from ragsonde.estimate import estimate_comparison
        from ragsonde.history import HistoryStore, diff_runs, resolve_run

        if not 0.0 < alpha < 1.0:
            raise QueryValidationError("alpha: between 0 and 1.", field="alpha")
        if not self.history.exists():  # absent: no runs; a damaged path: its error
            raise QueryValidationError(
                f"run_a: no run history at {self.history}: evaluate with recording first.",
                field="run_a",
            )
        with HistoryStore(self.history) as hs:
            a, b = hs.get(resolve_run(hs, run_a)), hs.get(resolve_run(hs, run_b))
            return diff_runs(a, b, metric, alpha=alpha, paired=estimate_comparison)

    def failing_queries(
        self,
        run: str = "last",
        metric: str = "ndcg@10",
        limit: int = 10,
        traffic: Path | str | None = None,
    ) -> FailingQueries:
        """The worst queries of an evaluation (``run``: a report id this server returned, or a
        recorded run: an id, ``last``, ``last~N``, ``best``), worst first on ``metric``; or,
        with ``traffic``, the weakest of a traffic report (a saved JSON's path, already checked
        against the roots; or a recorded traffic run: ``last``, ``last~N``, an id), lowest
        predicted first, with their evidence (:mod:`ragsonde.mcp.traffic`)."""
        if limit < 1:
            raise QueryValidationError("limit: at least 1.", field="limit")
        if traffic is not None:
            from ragsonde.mcp.traffic import weakest_of_history, weakest_of_report

            if isinstance(traffic, Path):
                return weakest_of_report(traffic, limit)
            return weakest_of_history(self.history, traffic, limit)
        report = self.reports.get(run)
        rows = [
            (qid, row, row.metrics[metric])
            for qid, row in report.per_query.items()
            if metric in row.metrics
        ]
        if not rows and report.per_query:
            known = sorted({m for row in report.per_query.values() for m in row.metrics})
            raise QueryValidationError(
                f"metric: the run has no '{metric}'; it has {', '.join(known)}.", field="metric"
            )
        rows.sort(key=lambda t: (t[2], t[0]))
        return FailingQueries(
            source=run,
            metric=metric,
            total=len(report.per_query),
            queries=[
                FailingQuery(
                    query_id=qid,
                    query=row.query,
                    value=value,
                    relevant=sorted(row.relevant),
                    retrieved=[doc for doc, _ in row.retrieved],
                )
                for qid, row, value in rows[:limit]
            ],
        )
