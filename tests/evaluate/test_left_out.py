"""What an evaluation does not score is a warning, which every surface prints: documents of the
corpus ``eval --ingest`` could not read (not in the collection, so a query whose answer is one
of them scores a miss), and queries the benchmark's reader left out (a qrels query with no text
in ``queries.jsonl``). Both were listed only inside the report's JSON.

Oracle: a SciFact slice with one corpus line planted cut short and one query's text removed;
the same slice whole gives no such warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions
from tests.support import evaluate_in

pytestmark = pytest.mark.slow


def _slice(scifact_dir: Path, folder: Path, cut: bool) -> tuple[Path, str]:
    qrels: dict[str, set[str]] = {}
    for line in (scifact_dir / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, _ = line.strip().split("\t")
        qrels.setdefault(q, set()).add(d)
    chosen = list(qrels)[:5]
    wanted = {d for q in chosen for d in qrels[q]}
    corpus = [json.loads(x) for x in (scifact_dir / "corpus.jsonl").read_text().splitlines()]
    keep = [c for c in corpus if c["_id"] in wanted] + [
        c for c in corpus[:30] if c["_id"] not in wanted
    ]
    lines = [json.dumps(c) for c in keep]
    if cut:
        lines[-1] = lines[-1][: len(lines[-1]) // 2]  # a distractor's line cut short
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    queries = [json.loads(x) for x in (scifact_dir / "queries.jsonl").read_text().splitlines()]
    kept = [q for q in queries if q["_id"] in chosen and not (cut and q["_id"] == chosen[-1])]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in kept) + "\n")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q in chosen for d in qrels[q])
    )
    return folder, chosen[-1]


def test_what_was_not_scored_is_a_warning(scifact_dir, tmp_path, embedder):
    runs = {}
    for cut in (False, True):
        ds, last = _slice(scifact_dir, tmp_path / f"slice{cut}", cut)
        settings = Settings(home=tmp_path / "home", collection=f"slice{int(cut)}")
        runs[cut] = evaluate_in(
            ds, settings=settings, embedder=embedder,
            options=EvalOptions(throughput=False), ingest=True,
        )  # fmt: skip
    assert not any(w.startswith("ingest:") or "not scored" in w for w in runs[False].warnings)
    assert len(runs[True].benchmark.ingested.failed) == 1
    found = [w for w in runs[True].warnings if w.startswith("ingest:")]
    assert len(found) == 1 and "1 documents of the corpus could not be read" in found[0]
    assert "corpus.jsonl:" in found[0] and "'slice1'" in found[0]
    skipped = [w for w in runs[True].warnings if "not scored" in w]
    assert runs[True].n_queries == runs[False].n_queries - 1
    assert skipped == [
        f"1 queries of the benchmark are not scored (the first: {last}: not in queries.jsonl); "
        f"the metrics are over the other {runs[True].n_queries}."
    ]
