"""What a run ran against, cheaply: :func:`build_fingerprint`.

Every part is read through the interfaces the evaluation already holds: the report's search
block, the store's ``collection_info`` and ``scroll``, the embedder's model folder, the loaded
benchmark. Costs (bench/bench_history.py): one ``collection_info``, one scroll of at most
:data:`CONTENT_SAMPLE` payloads, the weights' SHA-256 once per file (remembered in the history
by size and modification time), a ``git rev-parse HEAD``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ragsonde.evaluate.datasets import Benchmark
from ragsonde.evaluate.report import EvalReport
from ragsonde.history.models import (
    BenchmarkPart,
    CodePart,
    ContentPart,
    EmbedderPart,
    Fingerprint,
    IndexPart,
)

__all__ = [
    "CONTENT_SAMPLE",
    "benchmark_part",
    "build_fingerprint",
    "git_commit",
]

#: Points whose ids and payloads make the content hash (the first ones, in scroll order).
CONTENT_SAMPLE = 512
#: The payload field a collection records its chunking in (written by ingest where it does).
CHUNKING_FIELD = "chunking"
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def _sha(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def search_params(report: EvalReport) -> dict[str, Any]:
    """What the run searched with: the report's search block, with every parameter that ran
    (``search.params``) at its top level, so a diff names ``search.hnsw_ef``."""
    info = report.search
    out = info.model_dump(mode="json", exclude={"params", "collection_index"})
    if info.params is not None:
        out.update(info.params.model_dump(mode="json"))
    return out


def benchmark_part(bench: Benchmark) -> BenchmarkPart:
    """The benchmark's hashes: its queries (ids, texts, filters, top_k) and its labels."""
    queries = [(q.query_id, q.text, q.filters, q.top_k) for q in bench.queries]
    labels = sorted((q.query_id, sorted(q.relevant.items())) for q in bench.queries)
    return BenchmarkPart(
        name=bench.name,
        queries=len(bench.queries),
        queries_sha256=_sha(sorted(queries, key=lambda q: q[0])),
        labels_sha256=_sha(labels),
    )


def git_commit(cwd: Path | None = None) -> str | None:
    """HEAD of the git checkout around ``cwd`` (default: the working directory), or None."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(  # noqa: S603 - git's own path, fixed arguments
            [git, "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def _weights_file(embedder: Any) -> Path | None:
    """The weight file of a local model (its folder is ``model_dir``), None for a remote API."""
    folder = getattr(embedder, "model_dir", None)
    if folder is None:
        return None
    for name in _WEIGHT_FILES:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


def embedder_part(embedder: Any, hash_file: Callable[[Path], str]) -> EmbedderPart:
    path = _weights_file(embedder)
    return EmbedderPart(name=embedder.name, weights_sha256=hash_file(path) if path else None)


def _payload_hash(payload: dict[str, Any]) -> str:
    return _sha({k: v for k, v in payload.items() if k != "created_at"})


def content_part(points: Iterable[tuple[str, dict[str, Any]]]) -> ContentPart:
    pairs = sorted((pid, _payload_hash(payload)) for pid, payload in points)
    return ContentPart(sampled=len(pairs), sample_sha256=_sha(pairs))


def _sample(store: Any, collection: str) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
    """The first :data:`CONTENT_SAMPLE` points, and the chunking config one of them records."""
    points: list[tuple[str, dict[str, Any]]] = []
    for batch in store.scroll(collection, batch_size=CONTENT_SAMPLE):
        points += [(str(p.id), dict(p.payload)) for p in batch]
        if len(points) >= CONTENT_SAMPLE:
            break
    points = points[:CONTENT_SAMPLE]
    chunking = next(
        (p[CHUNKING_FIELD] for _, p in points if isinstance(p.get(CHUNKING_FIELD), dict)), None
    )
    return points, chunking


def index_part(info: Any) -> IndexPart:
    index = getattr(info, "index", None)
    return IndexPart(
        backend=info.backend,
        dimension=info.dimension,
        distance=str(getattr(info.distance, "value", info.distance)),
        vector_name=info.vector_name,
        sparse_vector_name=info.sparse_vector_name,
        points_count=info.points_count,
        quantization=index.quantization.model_dump(mode="json") if index is not None else None,
        hnsw=index.hnsw.model_dump(mode="json") if index is not None else None,
    )


def build_fingerprint(
    report: EvalReport,
    bench: Benchmark,
    *,
    store: Any,
    embedder: Any,
    hash_file: Callable[[Path], str],
) -> Fingerprint:
    """The fingerprint of the run ``report`` (of ``bench``, on ``store``'s collection).

    ``hash_file`` hashes the embedder's weight file (the history remembers the answers)."""
    from ragsonde import __version__

    info = store.collection_info(report.collection)
    points, chunking = _sample(store, report.collection)
    return Fingerprint(
        search=search_params(report),
        index=index_part(info),
        embedder=embedder_part(embedder, hash_file),
        chunking=chunking,
        content=content_part(points),
        benchmark=benchmark_part(bench),
        code=CodePart(ragsonde_version=__version__, git_commit=git_commit()),
    )
