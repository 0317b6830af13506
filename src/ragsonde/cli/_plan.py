"""``ragsonde judge --plan N``: the queries whose judgement narrows the interval most.

Evaluates the benchmark once (its unlabelled rows kept), takes each query's score signals,
and plans with :func:`ragsonde.estimate.plan.plan_judging`; traffic weights are read from the
rows' ``weight`` field (a traffic benchmark's, :mod:`ragsonde.traffic`) when there is one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from ragsonde.cli._common import console, print_json

if TYPE_CHECKING:
    from ragsonde.config import Settings
    from ragsonde.estimate.plan import JudgingPlan

__all__ = ["run_plan"]


def _weights(benchmark: Path) -> dict[str, float]:
    """Query id -> ``weight`` of a JSON Lines benchmark's rows that have one."""
    if benchmark.suffix != ".jsonl" or not benchmark.is_file():
        return {}
    out: dict[str, float] = {}
    for line in benchmark.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else None
        if isinstance(row, dict) and isinstance(row.get("weight"), int | float):
            out[str(row.get("query_id", ""))] = float(row["weight"])
    return out


def make_plan(
    benchmark: Path,
    n: int,
    settings: Settings,
    *,
    target_width: float | None = None,
    metric: str = "ndcg@10",
    seed: int = 0,
) -> JudgingPlan:
    """The plan for ``benchmark`` (see the module)."""
    from ragsonde.estimate import ScoreSignals
    from ragsonde.estimate.plan import plan_judging
    from ragsonde.evaluate import EvalOptions, evaluate
    from ragsonde.models.prediction import PredictedQuery
    from ragsonde.workspace import Workspace

    options = EvalOptions(k=[10], throughput=False, estimate=True, predictor="none")
    with Workspace(settings) as ws:
        report = evaluate(benchmark, options, ws, record=False)
    rows = report.per_query
    ids = list(rows)
    gold = {q: row.metrics[metric] for q, row in rows.items() if row.relevant}
    scores = {q: [s for _, s in row.retrieved] for q, row in rows.items()}
    predictor = ScoreSignals(lambda q: scores[q.query_id])
    preds = predictor.predict([PredictedQuery(query_id=q, text=rows[q].query) for q in ids])
    return plan_judging(
        ids,
        gold,
        preds,
        n,
        metric=metric,
        weights=_weights(benchmark),
        texts={q: row.query for q, row in rows.items()},
        target_width=target_width,
        seed=seed,
    )


def run_plan(
    benchmark: Path,
    n: int,
    settings: Settings,
    *,
    out: Path | None,
    target_width: float | None,
    json_output: bool,
) -> None:
    """Plan, write the plan file, and show it."""
    from ragsonde.outputs import check_outputs, write_text

    target = out or benchmark.with_name(f"{benchmark.stem}.plan.json")
    check_outputs({"--out": target}, inputs=[benchmark])  # before the queries are replayed
    plan = make_plan(benchmark, n, settings, target_width=target_width)
    write_text(target, plan.model_dump_json(indent=2))
    if json_output:
        print_json(plan)
        return
    table = Table(title=f"judge these {len(plan.plan)} queries first ({plan.metric})")
    for col in ("query", "stratum", "predicted", "probability", "text"):
        table.add_column(col, justify="right" if col in {"stratum", "predicted"} else "left")
    for p in plan.plan:
        table.add_row(p.query_id, str(p.stratum), f"{p.predicted:.2f}", f"{p.probability:.3f}",
                      p.text[:60])  # fmt: skip
    console.print(table)
    now = f"{plan.width_now:.3f}" if plan.width_now is not None else "-"
    console.print(
        f"{plan.labelled_now} of {plan.queries_total} queries labelled; 95 % interval width "
        f"now {now}. Keep the plan file: `eval --estimate` weighs labels by their probability."
    )
    if plan.more_for_target is not None:
        console.print(
            f"width {plan.target_width}: about {plan.more_for_target} more judged queries "
            f"({plan.labels_for_target} labelled in all)"
        )
    console.print(f"wrote plan: {target}")
