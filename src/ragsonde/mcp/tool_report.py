"""The report of an MCP tool's evaluation: the runner's report shape, scored the runner's way."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragsonde.evaluate import EvalOptions
    from ragsonde.evaluate.datasets import Benchmark
    from ragsonde.evaluate.report import EvalReport
    from ragsonde.mcp.target import ToolTarget, _Run

__all__ = ["build_report"]

_SHOWN = 10


def build_report(
    dataset: str | Path,
    bench: Benchmark,
    o: EvalOptions,
    target: ToolTarget,
    state: _Run,
    seconds: float,
) -> EvalReport:
    from ragsonde.evaluate.metrics import (
        by_rank,
        compute_metrics,
        metric_names,
        parse_metric,
        percentiles,
    )
    from ragsonde.evaluate.relevance import left_out
    from ragsonde.evaluate.report import (
        BenchmarkInfo,
        EvalReport,
        Integrity,
        Latency,
        QueryRow,
        SearchInfo,
        StageTimings,
    )

    names = metric_names(o.k)
    for gate in o.parsed_gates:
        if "." not in gate.path:
            parse_metric(gate.path)
            names.append(gate.path)
    means, per_metric = compute_metrics(
        list(dict.fromkeys(names)), bench.qrels, by_rank(state.run), judged_only=o.judged_only
    )
    per_query: dict[str, QueryRow] = {}
    for q in bench.queries:
        ms = round(state.ms.get(q.query_id, 0.0), 3)
        per_query[q.query_id] = QueryRow(
            query=q.text,
            relevant=q.relevant,
            retrieved=[(d, round(s, 4)) for d, s in list(state.run[q.query_id].items())[:_SHOWN]],
            total_ms=ms,
            timings=StageTimings(total_ms=ms),
            filters=q.filters or None,
            metrics={k: round(v, 6) for k, v in per_metric.get(q.query_id, {}).items()},
        )
    m = state.m
    warnings = [
        f"MCP tool '{target.tool}' of {target.server!r}: documents named by item {m.how} "
        f"({m.describe()}); latency is the tool call's round trip (total_ms)."
    ]
    found = sum(1 for q in bench.queries if set(state.run.get(q.query_id, {})) & set(q.relevant))
    if m.how == "id" and state.items and not found:  # ids of another kind (chunks, not docs)
        warnings.append(
            f"None of the {state.items} items the tool returned is a relevant id of its query: "
            f"the ids read at '{m.id}' may name other things than the benchmark's "
            "labels (chunks, not documents?). Name the field that holds them: --map id=PATH "
            "(e.g. --map id=metadata.doc_id)."
        )
    if state.cap < state.fetch:  # the deepest cutoffs may see fewer than a collection's
        warnings.append(
            f"The tool takes at most {state.cap} items a call (its top_k maximum), fewer than "
            f"the {state.fetch} this evaluation asks for: at @{state.depth}, a query whose "
            f"items name fewer than {state.depth} documents counts only those."
        )
    if m.how != "id":
        warnings.append(
            f"Items carry no id: matched to documents by exact {m.how} against collection "
            f"chunks; {state.unmatched} of {state.items} items matched no document and count "
            "as misses."
        )
    report = EvalReport(
        dataset=str(dataset),
        collection=f"mcp:{target.tool}",
        embedder=f"mcp server: {target.server}",
        relevance_by=o.relevance_by,
        ks=o.k,
        metrics={k: round(v, 6) for k, v in means.items()},
        per_query=per_query,
        latency=Latency(total_ms=percentiles(list(state.ms.values()))),
        integrity=Integrity(),
        benchmark=BenchmarkInfo(
            name=bench.name,
            queries=len(bench.queries),
            skipped_queries=bench.skipped,
            relevant_ids=len({r for q in bench.queries for r in q.relevant}),
            errors=state.errors,
        ),
        search=SearchInfo(
            mode="mcp",
            index="the tool's own",
            backend="mcp",
            fetch_chunks=state.fetch,
            aggregation="max" if o.relevance_by != "chunk" else "chunk",
        ),
        warnings=[*left_out(bench.skipped, len(bench.queries), None), *warnings],
        judged_only=o.judged_only,
        created_at=datetime.now(UTC).isoformat(),
        seconds=round(seconds, 3),
    ).with_run(state.run)
    report.gates = [g.evaluate(report) for g in o.parsed_gates]
    return report
