"""``ragsonde chunking DOCS`` without a benchmark: questions generated from the documents, each
labelled by the span of the sentence it was made from, and a report that says so.

Real data (Chroma's state_of_the_union corpus), the real model, the real embedded store; the
command line end to end with a two-configuration grid.
"""

from __future__ import annotations

import json
import re

import pytest

from ragsonde.chunking.questions import generated_benchmark, generated_warning
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.ingest.document import Document, Section
from ragsonde.labels.spans import sentence_spans
from tests.support import CHUNKING

CORPUS = CHUNKING / "corpora" / "state_of_the_union.md"
GRID = ("recursive 200/0", "sentence 200/0")


@pytest.fixture(scope="module")
def text() -> str:
    if not CORPUS.is_file():
        pytest.skip(f"chunking data not found at {CHUNKING}")
    return CORPUS.read_text(encoding="utf-8")


def words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+(?:-[^\W_]+)*", text.lower())


def test_generated_questions_point_to_their_sentence_in_the_document(text):
    # two sections of one document, the second placed 10,000 characters in
    cut = text.index("\n\n", 10_000) + 2
    doc = Document("sotu", (Section((), text[:cut], 0), Section(("Rest",), text[cut:], cut)))
    bench = generated_benchmark([doc], 40, seed=7)
    assert len(bench.queries) == 40 and bench.span_labelled
    assert {q.generator for q in bench.queries} == {"offline:gist"}
    assert bench.queries[0].relevant == {"sotu": 1}
    for q in bench.queries:
        (ref,) = q.references
        sentence = text[ref.start : ref.end]
        # one whole sentence of its line, as the sentence splitter cuts the line
        start = text.rfind("\n", 0, ref.start) + 1
        line = text[start : text.index("\n", ref.start)]
        assert (ref.start - start, ref.end - start) in sentence_spans(line)
        it = iter(words(sentence))  # the query: the sentence's words, some dropped, in order
        assert all(w in it for w in q.text.split()), (q.text, sentence)
    assert {r.start >= cut for q in bench.queries for r in q.references} == {True, False}
    again = generated_benchmark([doc], 40, seed=7)
    other = generated_benchmark([doc], 40, seed=8)
    assert [q.text for q in again.queries] == [q.text for q in bench.queries]
    assert [q.text for q in other.queries] != [q.text for q in bench.queries]


def test_rows_with_a_generator_are_generated_questions(tmp_path):
    rows = [
        {"query": "q one", "references": [{"doc_id": "d", "start": 0, "end": 4}]},
        {
            "query": "q two",
            "references": [{"doc_id": "d", "start": 5, "end": 9}],
            "generator": "llm:openai:gpt-4o-mini",
        },
    ]
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    warning = generated_warning(load_benchmark(path), given=True)
    assert warning is not None and "1 of the 2 questions of b were generated" in warning
    assert "llm:openai:gpt-4o-mini" in warning and "no substitute for real ones" in warning
    path.write_text(json.dumps(rows[0]), encoding="utf-8")
    assert generated_warning(load_benchmark(path), given=True) is None


@pytest.mark.slow
def test_chunking_without_a_benchmark_end_to_end(text, tmp_path):
    from typer.testing import CliRunner

    import ragsonde.cli
    from ragsonde.cli.app import app

    ragsonde.cli._register()
    env = {"RAGSONDE_HOME": None, "QDRANT_URL": None, "RAGSONDE_QDRANT_URL": None}
    grid = [a for c in GRID for a in ("-g", c)]
    home = ["--home", str(tmp_path / "home")]
    html, saved = tmp_path / "c.html", tmp_path / "c.json"
    args = ["chunking", str(CORPUS), *grid, *home, "--questions", "60", "--seed", "2"]
    out = CliRunner().invoke(
        app, [*args, "--json", "--html", str(html), "--save", str(saved)], env=env
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["question_source"] == "generated" and doc["generated_questions"] is True
    assert doc["generators"] == ["offline:gist"] and len(doc["questions"]) == 60
    assert any("generated" in w and "no substitute for real ones" in w for w in doc["warnings"])
    assert [c["label"] for c in doc["configurations"]] == list(GRID)
    for qid, refs in doc["references"].items():
        (ref,) = refs
        sentence = text[ref["start"] : ref["end"]]
        it = iter(words(sentence))
        assert all(w in it for w in doc["questions"][qid].split())
    for c in doc["configurations"]:  # scored on the generated spans: real, not empty, figures
        assert 0.3 < c["metrics"]["span_recall@5"] <= 1.0
    page = html.read_text(encoding="utf-8")
    assert "(generated)" in page and "no substitute for real ones" in page
    # the table says it too, and the finished configurations are read back (same questions)
    table = CliRunner().invoke(app, args, env=env)
    assert table.exit_code == 0, table.output
    assert "60 generated questions" in table.stdout
    assert "no substitute for real ones" in table.stderr
    assert "read back from an earlier run: recursive 200/0, sentence 200/0" in table.stderr

    # the same questions written as a benchmark with their generator: still "generated"
    bench = tmp_path / "gen.jsonl"
    bench.write_text(
        "\n".join(
            json.dumps(
                {
                    "query_id": q,
                    "query": t,
                    "references": doc["references"][q],
                    "generator": "offline:gist",
                }
            )
            for q, t in doc["questions"].items()
        ),
        encoding="utf-8",
    )
    given = CliRunner().invoke(
        app, ["chunking", str(CORPUS), str(bench), *grid, *home, "--json"], env=env
    )
    assert given.exit_code == 0, given.output
    again = json.loads(given.stdout)
    assert again["question_source"] == "generated" and again["benchmark"] == str(bench)
    assert any("60 of the 60 questions of gen were generated" in w for w in again["warnings"])


def test_the_cli_default_is_the_librarys():
    import inspect

    from ragsonde.chunking import SweepOptions
    from ragsonde.chunking.questions import DEFAULT_QUESTIONS
    from ragsonde.cli.chunking import chunking_command

    default = inspect.signature(chunking_command).parameters["questions"].default
    assert default == DEFAULT_QUESTIONS == SweepOptions().questions
