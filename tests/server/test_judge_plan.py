"""The Judge view offers a judging plan's queries first (``ragsonde judge --plan`` writes
``NAME.plan.json`` beside the benchmark)."""

from __future__ import annotations

import json

import pytest

from ragsonde.estimate.plan import JudgingPlan, PlannedQuery

pytestmark = pytest.mark.slow


def test_planned_queries_come_first_in_the_plans_order(api, server_settings):
    folder = server_settings.home / "benchmarks"
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"query_id": f"q{i}", "query": f"question {i}", "relevant": ["lidar"]} for i in range(4)
    ]
    (folder / "planx.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = api.get("/v1/judge/benchmarks/planx").json()
    assert [q["query_id"] for q in before["queries"]] == ["q0", "q1", "q2", "q3"]
    assert not any(q["planned"] for q in before["queries"])
    plan = JudgingPlan(
        metric="ndcg@10", queries_total=4, labelled_now=2, width_now=0.3, strata=[],
        plan=[PlannedQuery(query_id=q, stratum=0, predicted=0.5, probability=0.5,
                           labelled_probability=0.7) for q in ("q3", "q1")],
    )  # fmt: skip
    (folder / "planx.plan.json").write_text(plan.model_dump_json())
    after = api.get("/v1/judge/benchmarks/planx").json()
    assert [q["query_id"] for q in after["queries"]] == ["q3", "q1", "q0", "q2"]
    assert [q["planned"] for q in after["queries"]] == [True, True, False, False]


def test_a_comparisons_plan_is_offered_first_too(api, server_settings):
    from ragsonde.estimate.pair_plan import plan_comparison

    folder = server_settings.home / "benchmarks"
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"q{i}" for i in range(8)]
    rows = [{"query_id": q, "query": f"question {q}"} for q in ids]
    (folder / "pairx.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a = {q: [f"{q}d{j}" for j in range(10)] for q in ids}
    b = {q: list(reversed(r)) if q != "q0" else r for q, r in a.items()}  # q0: identical
    plan = plan_comparison(ids, a, b, set(), 3, strata=1, seed=2)
    (folder / "pairx.plan.json").write_text(plan.model_dump_json())
    got = api.get("/v1/judge/benchmarks/pairx").json()["queries"]
    first = [p.query_id for p in plan.plan]
    assert [q["query_id"] for q in got[:3]] == first and "q0" not in first
    assert [q["planned"] for q in got] == [True] * 3 + [False] * 5
