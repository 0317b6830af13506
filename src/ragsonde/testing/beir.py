"""A small real benchmark cut from a BEIR folder, for tests, benches and users' CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["beir_slice"]


def _rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def beir_slice(
    source: Path, folder: Path, n_queries: int, n_extra: int, split: str = "test"
) -> Path:
    """Write to ``folder`` a BEIR benchmark: the first ``n_queries`` queries of ``split`` that
    have judgements, every document they judge, and the first ``n_extra`` other documents of the
    corpus as distractors. Judgements keep their grades. Returns ``folder``."""
    qrels: dict[str, dict[str, str]] = {}
    lines = (source / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        if line.strip():
            q, d, grade = line.strip().split("\t")
            qrels.setdefault(q, {})[d] = grade
    chosen = list(qrels)[:n_queries]
    judged = {d for q in chosen for d in qrels[q]}
    corpus = _rows(source / "corpus.jsonl")
    keep = [c for c in corpus if c["_id"] in judged]
    keep += [c for c in corpus if c["_id"] not in judged][:n_extra]
    wanted = set(chosen)
    queries = [q for q in _rows(source / "queries.jsonl") if q["_id"] in wanted]
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in keep), encoding="utf-8"
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8"
    )
    (folder / "qrels" / f"{split}.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q}\t{d}\t{g}\n" for q in chosen for d, g in qrels[q].items()),
        encoding="utf-8",
    )
    return folder
