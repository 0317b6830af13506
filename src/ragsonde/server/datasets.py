"""The files ``POST /v1/eval`` may read: the dataset, and any file an option names (TREC queries,
a judging plan), only inside the server's dataset folders, after symlinks; every other path
gets one refusal, whether or not it exists, so the answer tells nothing of the disk. Uploaded
rows are read as a benchmark at the door (:func:`check_upload`)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.options import EvalOptions
from ragsonde.server.errors import ApiError
from ragsonde.server.state import ServerState

__all__ = [
    "FILE_OPTIONS",
    "UPLOAD_SHOWN_AS",
    "check_upload",
    "confined_options",
    "dataset_roots",
    "resolve_dataset",
    "shown_as",
]

#: The one answer for a dataset the server will not read, whether or not it exists.
REFUSED = (
    "Datasets are read only from the server's dataset folders (RAGSONDE_EVAL_DATASETS, default "
    "<home>/datasets and <home>/benchmarks): name a benchmark file or folder (and any "
    'queries_file or plan_file) inside one, or upload the rows as "benchmark".'
)

#: The options that name a file the server would read, beside the dataset.
FILE_OPTIONS = ("queries_file", "plan_file")
#: What an error calls uploaded rows: the server reads them from a copy in its own folders,
#: at a path the client never named (a command it suggests names them ``BENCHMARK.jsonl``).
UPLOAD_SHOWN_AS = "the uploaded benchmark"


def shown_as(dataset: str | None) -> str:
    """What an error about a request's benchmark calls it: the dataset as the request named
    it, never the path it resolved to in the server's folders; or :data:`UPLOAD_SHOWN_AS`."""
    return UPLOAD_SHOWN_AS if dataset is None else f"benchmark {dataset}"


def dataset_roots(state: ServerState) -> list[Path]:
    """The folders /v1/eval may read datasets from (resolved)."""
    home = Path(state.settings.home)
    # benchmarks/: what the page's Judge view writes, so a judged benchmark can be evaluated.
    roots = state.settings.eval_datasets or [home / "datasets", home / "benchmarks"]
    return [r.resolve() for r in roots]


def resolve_dataset(
    state: ServerState, name: str, field: str = "dataset", folders: bool = True
) -> Path:
    """``name`` (relative to a dataset folder, or absolute inside one) as a regular file (or,
    with ``folders``, a folder) inside one of :func:`dataset_roots`, after symlinks; else the
    one refusal, naming ``field``."""
    for root in dataset_roots(state):
        try:
            path = (root / name).resolve()
            inside = path.is_relative_to(root) and path != root
            if inside and (path.is_file() or (folders and path.is_dir())):
                return path
        except (OSError, ValueError):  # a NUL byte, a loop of symlinks, a name too long
            continue
    raise ApiError(QueryValidationError(REFUSED, field=field))


def confined_options(state: ServerState, options: EvalOptions) -> EvalOptions:
    """``options`` with each file an option names resolved inside the dataset folders, as the
    dataset is: any other path gets the dataset's one refusal. (``queries_file`` was read from
    anywhere: a caller could have the server read any file it can, and its lines came back in
    the report; ``plan_file`` was dropped without a word.)"""
    found = {
        name: resolve_dataset(state, str(value), field=name, folders=False)
        for name in FILE_OPTIONS
        if (value := getattr(options, name)) is not None
    }
    return options.model_copy(update=found) if found else options


def check_upload(rows: list[dict[str, Any]], options: EvalOptions) -> None:
    """Read uploaded benchmark rows as the job will (a row without a query, a query id twice,
    no row labelled): the 422 at the door, naming the row. They were read only in the job, so
    a bad upload was accepted (202, a job slot taken) and failed naming a file on the server
    the client never named ("Cannot read benchmark /home/…/eval-reports/<id>.benchmark.jsonl").
    The error calls them :data:`UPLOAD_SHOWN_AS`, as the job's would. Blocking (it writes and
    reads a file): run it in a thread."""
    from ragsonde.evaluate.datasets import load_benchmark, require_labelled

    with tempfile.TemporaryDirectory(prefix="ragsonde-upload-") as folder:
        path = Path(folder) / "upload.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        try:
            bench = load_benchmark(path, keep_unlabelled=options.estimate, shown_as=UPLOAD_SHOWN_AS)
            if options.estimate:
                require_labelled(bench, path, shown_as=UPLOAD_SHOWN_AS)
        except QueryValidationError as e:
            raise ApiError(QueryValidationError(e.message, field="benchmark")) from e
