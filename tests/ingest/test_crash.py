"""A run killed with SIGKILL mid-way and started again ends with exactly the right collection."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from ragsonde.config import Settings
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.store import open_store

SCRIPT = textwrap.dedent(
    """
    import sys
    from ragsonde.config import Settings
    from ragsonde.ingest import IngestOptions, ingest

    class Progress:
        def start(self, total): pass
        def advance(self, documents, chunks): print(chunks, flush=True)

    ingest(sys.argv[1], settings=Settings(home=sys.argv[2], collection="crash"),
           options=IngestOptions(batch_size=8), progress=Progress())
    print("DONE", flush=True)
    """
)


def test_kill_9_then_rerun_converges(scifact_dir, tmp_path, embedder):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join((scifact_dir / "corpus.jsonl").read_text().splitlines()[:60]))
    home = tmp_path / "home"
    with subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(corpus), str(home)],
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        seen = 0
        for line in proc.stdout:
            if line.strip() == "DONE":
                break
            seen += int(line)
            if seen >= 40:  # several batches written, more to come
                os.kill(proc.pid, signal.SIGKILL)
                break
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"

    settings = Settings(home=home, collection="crash")
    report = ingest(str(corpus), settings=settings, embedder=embedder, options=IngestOptions())
    assert report.skipped > 0, "the killed run's writes were lost"
    assert report.embedded > 0
    store = open_store(settings)
    try:
        stored = [p for batch in store.scroll("crash") for p in batch]
    finally:
        store.close()
    assert len(stored) == report.chunks == len({p.id for p in stored})
    per_doc: dict[str, list[int]] = {}
    for p in stored:
        per_doc.setdefault(p.payload["doc_id"], []).append(p.payload["chunk_index"])
    assert len(per_doc) == 60
    assert all(sorted(v) == list(range(len(v))) for v in per_doc.values())
