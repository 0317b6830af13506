"""Ingest speed vs the bare model, re-ingest speed-up, and peak memory at two corpus sizes.

    .venv/bin/python -m bench.bench_ingest [--quick] [--docs N]

On a SciFact slice, in the same run:
- ``ragsonde ingest`` documents/s vs the bare ``SentenceTransformer.encode`` of the very texts
  ragsonde embeds (its chunks): the pipeline's own overhead (target ≥ 0.9 ×). Also shown: the bare
  encode of whole documents, truncated at 256 word pieces, as a naive script would do (fewer
  tokens, part of each long abstract never embedded).
- re-ingesting the unchanged corpus vs the first ingest (target ≥ 20 ×).
- peak RSS of a fresh ``ragsonde ingest`` process at N and 2N documents (target: flat).
Writes ``bench/results/ingest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import SCIFACT, require_scifact, results_dir, write_results


def slice_corpus(n: int, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = (SCIFACT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    path = folder / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: How the peak is read: the child's own high-water mark. Not ``ru_maxrss``: on Linux it keeps
#: the mark of the image the child was forked from (this bench, holding torch and the model), so
#: until 2026-11-27 both sizes measured this process (1455 MiB and 1455 MiB).
PEAK_METHOD = "VmHWM of the ingest process itself (/proc/self/status)"


def peak_rss_mb(corpus: Path, home: Path) -> float:
    """Peak RSS (MiB) of ``ragsonde.ingest.ingest`` of ``corpus`` in a fresh process."""
    code = (
        "import sys\n"
        "from ragsonde.config import Settings\n"
        "from ragsonde.ingest import ingest\n"
        "ingest(sys.argv[1], settings=Settings(home=sys.argv[2], collection='m'))\n"
        "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM:')]\n"
        "print(int(hwm[0].split()[1]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(corpus), str(home)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=None, help="interleaved runs (3; quick 1)")
    ap.add_argument("--docs", type=int, default=None)
    ap.add_argument(
        "--memory-only",
        action="store_true",
        help="measure only the peak RSS at N and 2N documents again, into the existing results",
    )
    args = ap.parse_args()
    require_scifact()
    n = args.docs or (30 if args.quick else 300)
    if args.memory_only:
        memory_again(n, quick=args.quick)
        return
    args.repeats = args.repeats or (1 if args.quick else 3)

    from ragsonde.config import Settings
    from ragsonde.embedders.local import LocalEmbedder
    from ragsonde.ingest import IngestOptions, ingest_documents, open_source
    from ragsonde.ingest.chunker import Chunker, ChunkerConfig
    from ragsonde.ingest.document import Document
    from ragsonde.ingest.pipeline import chunk_document
    from ragsonde.store import open_store

    embedder = LocalEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    model = embedder._load()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = slice_corpus(n, Path(tmp) / "small")
        docs = [d for d in open_source(str(corpus), "beir") if isinstance(d, Document)]
        chunker = Chunker(ChunkerConfig.for_embedder(embedder))
        texts = [r.embed_text for d in docs for r in chunk_document(d, chunker, embedder.name)]
        whole = [d.sections[0].text for d in docs]
        model.encode(texts[:32])  # warm-up

        # Interleaved repeats (bare encode, then a fresh ingest) so both see the same load;
        # medians of each. The machine is shared: single timings are noise.
        store = open_store(Settings(home=Path(tmp) / "home"))
        bare_runs, ingest_runs, truncated_runs = [], [], []
        for i in range(args.repeats):
            t0 = time.perf_counter()
            model.encode(texts, batch_size=64, normalize_embeddings=True)
            bare_runs.append(time.perf_counter() - t0)
            first = ingest_documents(
                open_source(str(corpus), "beir"),
                store=store,
                embedder=embedder,
                collection=f"b{i}",
                options=IngestOptions(),
            )
            ingest_runs.append(first.seconds)
            t0 = time.perf_counter()
            model.encode(whole, batch_size=64, normalize_embeddings=True)
            truncated_runs.append(time.perf_counter() - t0)
        bare_chunks_s = statistics.median(bare_runs)
        bare_docs_s = statistics.median(truncated_runs)
        first_s = statistics.median(ingest_runs)
        again_runs = []
        for _ in range(args.repeats):
            again = ingest_documents(
                open_source(str(corpus), "beir"), store=store, embedder=embedder, collection="b0"
            )
            again_runs.append(again.seconds)
        again_s = statistics.median(again_runs)
        store.close()

        rss_small, rss_big = _peaks(n, Path(tmp))

    result = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count()},
        "documents": n,
        "chunks": len(texts),
        "repeats": args.repeats,
        "ingest_docs_per_s": n / first_s,
        "bare_encode_chunks_docs_per_s": n / bare_chunks_s,
        "bare_encode_truncated_docs_per_s": n / bare_docs_s,
        "ratio_vs_bare_chunks": bare_chunks_s / first_s,
        "ratio_vs_bare_truncated_docs": bare_docs_s / first_s,
        "target_ratio": 0.9,
        "first_ingest_s": first_s,
        "reingest_s": again_s,
        "reingest_speedup": first_s / again_s,
        "target_reingest_speedup": 20,
        "peak_rss_mb": {str(n): rss_small, str(2 * n): rss_big},
        "rss_growth_ratio": rss_big / rss_small,
        "peak_rss_method": PEAK_METHOD,
        "self_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    result["targets_met"] = {
        "ingest_vs_bare_encode": result["ratio_vs_bare_chunks"] >= 0.9,
        "reingest_speedup": result["reingest_speedup"] >= 20,
        "memory_flat": result["rss_growth_ratio"] <= 1.1,
    }
    write_results("ingest", result, quick=args.quick)
    print(
        f"{n} SciFact docs -> {len(texts)} chunks\n"
        f"ingest {result['ingest_docs_per_s']:.1f} docs/s; bare encode of the same chunks "
        f"{result['bare_encode_chunks_docs_per_s']:.1f} docs/s -> ratio "
        f"{result['ratio_vs_bare_chunks']:.2f} (target >= 0.9)\n"
        f"bare encode of whole docs truncated at 256 tokens: "
        f"{result['bare_encode_truncated_docs_per_s']:.1f} docs/s (ratio "
        f"{result['ratio_vs_bare_truncated_docs']:.2f})\n"
        f"re-ingest {again_s:.2f} s vs first {first_s:.1f} s (medians of {args.repeats}) -> "
        f"{result['reingest_speedup']:.0f}x (target >= 20x)\n"
        f"peak RSS {rss_small:.0f} MB at {n} docs, {rss_big:.0f} MB at {2 * n} "
        f"({result['rss_growth_ratio']:.2f}x; target flat)"
    )


def _peaks(n: int, folder: Path) -> tuple[float, float]:
    """Peak RSS of a fresh ingest of N and of 2N SciFact documents."""
    small = peak_rss_mb(slice_corpus(n, folder / "small"), folder / "m1")
    return small, peak_rss_mb(slice_corpus(2 * n, folder / "big"), folder / "m2")


def memory_again(n: int, *, quick: bool) -> None:
    """``--memory-only``: the two peaks measured again into the saved results (the rest of the
    run is kept, and the results say when the memory was measured)."""
    path = results_dir(quick) / "ingest.json"
    result = json.loads(path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        small, big = _peaks(n, Path(tmp))
    result.update(
        peak_rss_mb={str(n): small, str(2 * n): big},
        rss_growth_ratio=big / small,
        peak_rss_method=PEAK_METHOD,
        memory_measured=f"{time.strftime('%Y-%m-%d %H:%M')}, "
        f"python -m bench.bench_ingest --memory-only --docs {n}",
    )
    result["targets_met"]["memory_flat"] = result["rss_growth_ratio"] <= 1.1
    write_results("ingest", result, quick=quick)
    print(f"peak RSS {small:.0f} MiB at {n} docs, {big:.0f} MiB at {2 * n} ({big / small:.2f}x)")


if __name__ == "__main__":
    main()
