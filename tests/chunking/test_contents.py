"""A chunking question's reference ``content`` is checked against its document (issue 33): a
document edited after it was labelled moved every span after the edit, and the sweep scored
the stale offsets silently (span recall 0.917 -> 0.215). Real data: Chroma's questions."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from ragsonde.chunking import sweep_chunking
from ragsonde.chunking.corpus import read_documents
from ragsonde.chunking.questions import check_contents, questions_for
from ragsonde.errors import QueryValidationError
from tests.support import CHUNKING

DOC = "state_of_the_union"
pytestmark = pytest.mark.skipif(
    not CHUNKING.is_dir(), reason=f"chunking data not found at {CHUNKING}"
)


def _slice(tmp_path: Path) -> tuple[Path, Path]:
    """The State of the Union corpus and its questions, copied so that one can be edited."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    shutil.copy(CHUNKING / "corpora" / f"{DOC}.md", corpora)
    with (CHUNKING / "questions.csv").open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.reader(f) if r[2] in (DOC, "corpus_id")]
    questions = tmp_path / "questions.csv"
    with questions.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return corpora, questions


def test_every_reference_of_chromas_questions_reads_its_content():
    docs = read_documents(str(CHUNKING / "corpora"), [])
    bench = questions_for(CHUNKING / "questions.csv", docs, 0, 0)
    assert sum(r.content is not None for q in bench.queries for r in q.references) > 500
    check_contents(bench, docs)  # the published offsets are right


def test_an_edited_document_is_an_error_naming_the_question(tmp_path: Path):
    corpora, questions = _slice(tmp_path)
    doc = corpora / f"{DOC}.md"
    text = doc.read_text(encoding="utf-8")
    cut = len(text) // 2  # an edit halfway: the questions whose spans lie after it are stale
    doc.write_text(text[:cut] + "An added sentence. " + text[cut:], encoding="utf-8")
    docs = read_documents(str(corpora), [])
    bench = questions_for(questions, docs, 0, 0)
    stale = [q.query_id for q in bench.queries if any(r.start >= cut for r in q.references)]
    assert stale
    with pytest.raises(QueryValidationError, match="the document changed") as err:
        sweep_chunking(str(corpora), questions)  # refused before any workspace is opened
    first = next(q for q in bench.queries if any(r.end > cut for r in q.references))
    assert err.value.message.startswith(f"question {first.query_id}: ")
    fresh = [q for q in bench.queries if all(r.end <= cut for r in q.references)]
    assert fresh  # the questions before the edit still read their content
