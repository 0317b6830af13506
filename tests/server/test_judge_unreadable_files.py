"""A file beside a benchmark that is there but cannot be read is an error naming it, never
treated as absent: the agreement report a judge run recorded (``NAME.agreement.json``), the
judging plan (``NAME.plan.json``), and the benchmark itself (a VALIDATION_ERROR, not the 500
"the server failed" it was).

Oracle: the planted file, and the contract's code; a sound file beside the same benchmark
still answers, so the error is the file's, not the route's."""

from __future__ import annotations

import json

import pytest

from ragsonde.estimate.plan import JudgingPlan, PlannedQuery
from ragsonde.labels.models import Agreement

pytestmark = pytest.mark.slow

ROWS = [
    {"query_id": "q1", "query": "laser rangefinder", "relevant": {"lidar": 1},
     "labels": [{"id": "lidar", "grade": 3, "source": "human", "judge": "ana"},
                {"id": "lidar", "grade": 2, "source": "llm", "judge": "local:gemma"},
                {"id": "imu", "grade": 2, "source": "llm", "judge": "local:gemma"}]},
]  # fmt: skip

#: What a damaged file may hold: cut short, not UTF-8, a lone surrogate, another shape.
BROKEN = {
    "truncated": b'{"queries": 1, "pairs": 2, "llm_relevant_from": 3, "both_rel',
    "latin1": '{"queries": 1, "note": "r\xe9sum\xe9"}'.encode("latin-1"),
    "surrogate": b'{"queries": 1, "pairs": 2, "confusion": {"\\udc80": {}}}',
    "shape": b"[1, 2, 3]",
    "empty": b"",
}


def _benchmark(server_settings, name: str):
    folder = server_settings.home / "benchmarks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def _refused(response, file_name: str) -> None:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert file_name in error["message"]


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_damaged_agreement_report_is_an_error_naming_it(api, server_settings, kind):
    name = f"agree{kind}"
    path = _benchmark(server_settings, name)
    url = f"/v1/judge/benchmarks/{name}/agreement"
    sound = api.get(url)
    assert sound.status_code == 200 and sound.json()["agreement"]["pairs"] == 2
    recorded = path.with_name(f"{name}.agreement.json")
    recorded.write_bytes(BROKEN[kind])
    _refused(api.get(url), recorded.name)
    # The record, made sound again, is read: its threshold (3) is the one the answer uses.
    kept = Agreement.model_validate(sound.json()["agreement"])
    recorded.write_text(kept.model_copy(update={"llm_relevant_from": 3}).model_dump_json())
    again = api.get(url)
    assert again.status_code == 200 and again.json()["agreement"]["llm_relevant_from"] == 3


def test_a_damaged_judging_plan_is_an_error_naming_it(api, server_settings):
    path = _benchmark(server_settings, "planbroken")
    url = "/v1/judge/benchmarks/planbroken"
    plan = path.with_name("planbroken.plan.json")
    plan.write_bytes(b'{"metric": "ndcg@10", "queries_total": 1, "pla')
    _refused(api.get(url), plan.name)
    sound = JudgingPlan(
        metric="ndcg@10", queries_total=1, labelled_now=0, width_now=0.3, strata=[],
        plan=[PlannedQuery(query_id="q1", stratum=0, predicted=0.5, probability=0.5,
                           labelled_probability=0.5)],
    )  # fmt: skip
    plan.write_text(sound.model_dump_json())
    got = api.get(url)
    assert got.status_code == 200 and got.json()["queries"][0]["planned"] is True


def test_a_damaged_benchmark_is_a_validation_error_on_every_judge_route(api, server_settings):
    path = _benchmark(server_settings, "benchbroken")
    with path.open("ab") as f:
        f.write(b'{"query_id": "q2", "query": "cut sho')
    _refused(api.get("/v1/judge/benchmarks/benchbroken"), path.name)
    _refused(api.get("/v1/judge/benchmarks/benchbroken/agreement"), path.name)
    grade = {"query": "laser rangefinder", "chunk_id": "imu#0", "doc_id": "imu", "grade": 1}
    _refused(api.post("/v1/judge/benchmarks/benchbroken/grades", json=grade), path.name)
    assert path.read_bytes().endswith(b"cut sho")  # the damaged file was not rewritten
