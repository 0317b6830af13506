"""How fast does each splitter chunk? The ``sentence`` splitter (pysbd) against the others.

    .venv/bin/python -m bench.bench_splitters [--quick] [--rounds N]

Each splitter of ``ragsonde.ingest.splitters`` at 200 tokens, no overlap, over the parsed
sections of Chroma's three corpora (state_of_the_union, wikitexts, pubmed), as ``ragsonde
chunking`` splits them; ``--rounds`` rounds (default 3), the splitters interleaved in each, the
median reported, and its ratio to ``recursive`` (the baseline: what ``ingest`` uses) measured in
the same run. ``sentence`` is timed twice: cold (pysbd segments the text: the first
configuration of a sweep) and warm (the sentences cached, as for every further size of one
sweep). Embedding is not included: at 200 tokens it takes minutes per corpus on this machine
(``bench/bench_chunking.py``), against which the splitters' seconds are to be read.
``--quick``: state_of_the_union only, to ``bench/results/quick/``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bench._common import DATA, write_results

CORPORA = ("state_of_the_union", "wikitexts", "pubmed")
SPLITTERS = ("recursive", "fixed", "markdown", "sentence")
SIZE = 200


def _sections(corpus: str) -> list[str]:
    from ragsonde.ingest.document import Document
    from ragsonde.ingest.sources import open_source

    docs = [d for d in open_source(str(DATA / "chunking" / "corpora" / f"{corpus}.md"))]
    return [
        s.text for d in docs if isinstance(d, Document) for s in d.sections if s.offset is not None
    ]


def _time(name: str, sections: list[str], tokenizer: Any, cold: bool) -> tuple[float, int]:
    from ragsonde.ingest.sentences import sentence_spans
    from ragsonde.ingest.splitters import split_spans

    if cold:
        sentence_spans.cache_clear()
    t0 = time.perf_counter()
    chunks = sum(len(split_spans(name, text, SIZE, 0, tokenizer)) for text in sections)
    return time.perf_counter() - t0, chunks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from tokenizers import Tokenizer

    from ragsonde.config import Settings
    from ragsonde.embedders import get_embedder

    embedder: Any = get_embedder(Settings())
    tokenizer = Tokenizer.from_file(str(embedder.tokenizer_path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    corpora = CORPORA[:1] if args.quick else CORPORA
    runs = [*SPLITTERS, "sentence (warm)"]
    rows: list[dict[str, Any]] = []
    for corpus in corpora:
        sections = _sections(corpus)
        chars = sum(len(t) for t in sections)
        seconds: dict[str, list[float]] = {r: [] for r in runs}
        chunks: dict[str, int] = {}
        for _ in range(args.rounds):
            for run in runs:
                name = run.split()[0]
                s, n = _time(name, sections, tokenizer, cold=run == "sentence")
                seconds[run].append(s)
                chunks[run] = n
        base = statistics.median(seconds["recursive"])
        for run in runs:
            median = statistics.median(seconds[run])
            rows.append(
                {
                    "corpus": corpus,
                    "characters": chars,
                    "splitter": run,
                    "chunks": chunks[run],
                    "median_s": round(median, 4),
                    "mb_per_s": round(chars / 1e6 / median, 3),
                    "vs_recursive": round(median / base, 2),
                }
            )
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "size": SIZE,
        "rounds": args.rounds,
        "tokenizer": embedder.name,
        "load_average": [round(x, 1) for x in __import__("os").getloadavg()],
        "rows": rows,
    }
    write_results("splitters", summary, quick=args.quick)
    print(
        f"{'corpus':<20}{'splitter':<18}{'chunks':>8}{'median s':>10}{'MB/s':>8}{'x recursive':>13}"
    )
    for r in rows:
        print(
            f"{r['corpus']:<20}{r['splitter']:<18}{r['chunks']:>8}{r['median_s']:>10.3f}"
            f"{r['mb_per_s']:>8.2f}{r['vs_recursive']:>13.2f}"
        )


def splitters_section(d: dict[str, Any]) -> list[str]:
    """The RESULTS.md section for ``bench/results/splitters.json`` (called by ``report.py``)."""
    out = [
        "## Splitter speed (`bench/bench_splitters.py`)",
        "",
        f"Run {d['date']}: each splitter at {d['size']} tokens ({d['tokenizer']}'s word pieces), "
        f"no overlap, over the parsed sections of Chroma's corpora; median of {d['rounds']} "
        "interleaved rounds, and its ratio to `recursive` (ingest's splitter) in the same run. "
        "`sentence` cold: pysbd segments the text; warm: its sentences cached, as for every "
        f"further size in one sweep. Load average at the end {d['load_average']} on 2 cores.",
        "",
        "| corpus | characters | splitter | chunks | median s | MB/s | × recursive |",
        "|---|---|---|---|---|---|---|",
    ]
    out += [
        f"| {r['corpus']} | {r['characters']} | {r['splitter']} | {r['chunks']} | "
        f"{r['median_s']:.3f} | {r['mb_per_s']:.2f} | {r['vs_recursive']:.2f} |"
        for r in d["rows"]
    ]
    return [*out, ""]


if __name__ == "__main__":
    main()
