"""The Judge view shows an LLM judge's agreement with people where the benchmark has both kinds
of labels (``GET /v1/judge/benchmarks/{name}/agreement``), in a real Chromium: Cohen's kappa,
the confusion per grade, and the position bias the judge run recorded beside the file.

Oracle: the (human, LLM) grade pairs written out by hand for the file built here, and kappa
computed from them with its formula (not scikit-learn, which the code uses)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from ragsonde.labels.models import Agreement, PositionBias

pytestmark = pytest.mark.slow


def _row(qid: str, query: str, human: dict[str, int], llm: dict[str, int]) -> dict:
    labels = [{"id": d, "grade": g, "source": "human", "judge": "ana"} for d, g in human.items()]
    labels += [
        {"id": d, "grade": g, "source": "llm", "judge": "local:gemma"} for d, g in llm.items()
    ]
    return {"query_id": qid, "query": query, "relevant": human or llm, "labels": labels}


ROWS = [
    _row("q1", "laser rangefinder", {"lidar": 3, "imu": 0}, {"lidar": 3, "imu": 2, "gps": 1}),
    _row("q2", "depth camera", {"camera": 2}, {"camera": 1, "sonar": 0}),
    _row("q3", "only the judge", {}, {"lidar": 2}),
    _row("q4", "only people", {"imu": 1}, {}),
]
#: (human, LLM) per LLM-graded item of the queries with both (q1, q2); human 0 where unlisted.
PAIRS = [(3, 3), (0, 2), (0, 1), (2, 1), (0, 0)]


def _kappa(pairs: list[tuple[int, int]], llm_from: int = 2) -> float:
    h = [int(a >= 1) for a, _ in pairs]
    m = [int(b >= llm_from) for _, b in pairs]
    n = len(pairs)
    po = sum(x == y for x, y in zip(h, m, strict=True)) / n
    pe = (sum(h) / n) * (sum(m) / n) + (1 - sum(h) / n) * (1 - sum(m) / n)
    return (po - pe) / (1 - pe)


def _confusion(pairs: list[tuple[int, int]]) -> dict[str, dict[str, int]]:
    out = {str(h): {str(m): 0 for m in range(4)} for h in range(4)}
    for h, m in pairs:
        out[str(h)][str(m)] += 1
    return out


def test_the_judge_view_shows_the_judges_agreement_with_people(
    page, api, server_settings, tmp_path
):
    folder = server_settings.home / "benchmarks"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agreedx.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (folder / "peoplex.jsonl").write_text(json.dumps(ROWS[3]) + "\n")

    got = api.get("/v1/judge/benchmarks/agreedx/agreement").json()["agreement"]
    want_kappa = _kappa(PAIRS)
    assert (got["queries"], got["pairs"]) == (2, len(PAIRS))
    assert got["kappa"] == pytest.approx(want_kappa, abs=1e-4)
    assert got["confusion"] == _confusion(PAIRS)
    assert got["position"] is None  # no judge run recorded it
    for name in ("peoplex", "nosuchx"):  # one kind of label only, or no file: nothing to show
        assert api.get(f"/v1/judge/benchmarks/{name}/agreement").json()["agreement"] is None

    # The judge run's record beside the file (judge --agreement --position-bias writes it).
    bias = PositionBias(pairs=5, changed=2, changed_share=0.4, higher_passage_first=1,
                        lower_passage_first=1, relevance_flipped=1)  # fmt: skip
    recorded = Agreement(
        queries=2, pairs=5, llm_relevant_from=2, both_relevant=1, human_only=1, llm_only=1,
        both_not=2, raw_agreement=0.6, kappa=round(want_kappa, 4), position=bias,
    )  # fmt: skip
    (folder / "agreedx.agreement.json").write_text(recorded.model_dump_json())

    page.click("#show-judge")
    panel = page.locator("#judge-agreement")
    page.fill("#judge-benchmark", "peoplex")
    page.locator("#judge-benchmark").dispatch_event("change")
    expect(page.locator("#judge-queries-list .judged-query")).to_have_count(1)
    expect(panel).to_be_hidden()

    page.fill("#judge-benchmark", "agreedx")
    page.locator("#judge-benchmark").dispatch_event("change")
    expect(panel).to_be_visible()
    expect(page.locator("#agreement-summary")).to_have_text(
        f"Cohen's kappa {want_kappa:.3f} on relevant or not (LLM grade ≥ 2) · raw agreement "
        f"0.600 · {len(PAIRS)} pairs on 2 queries"
    )
    for h, row in _confusion(PAIRS).items():
        for m, n in row.items():
            cell = page.locator(f'#agreement-confusion td[data-human="{h}"][data-llm="{m}"]')
            expect(cell).to_have_text(str(n))
    expect(page.locator("#agreement-position")).to_have_text(
        "position bias: 2 of 5 pairs change grade with the passage first (40.0 %: 1 higher, "
        "1 lower); 1 cross the relevance threshold"
    )
    page.screenshot(path=str(tmp_path / "agreement.png"), full_page=True)

    # A person grades one more of q2's hits: the agreement follows the file as it stands.
    saved = api.post(
        "/v1/judge/benchmarks/agreedx/grades",
        json={"query": "depth camera", "chunk_id": "sonar#0", "doc_id": "sonar", "grade": 2,
              "judge": "ana"},
    )  # fmt: skip
    assert saved.status_code == 200, saved.text
    after = [(3, 3), (0, 2), (0, 1), (2, 1), (2, 0)]
    page.locator("#judge-benchmark").dispatch_event("change")
    expect(page.locator("#agreement-summary")).to_contain_text(
        f"Cohen's kappa {_kappa(after):.3f} "
    )
    cell = page.locator('#agreement-confusion td[data-human="2"][data-llm="0"]')
    expect(cell).to_have_text("1")
    assert page.problems == []
