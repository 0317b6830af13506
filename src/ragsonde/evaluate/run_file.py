"""The TREC run file of an evaluation (``eval --run-out``, :meth:`EvalReport.write_run`).

``qid Q0 docid rank score tag`` lines that trec_eval reads (ir-measures reads run files with
``read_trec_run`` but has no writer). The path is checked as every output is
(:func:`ragsonde.outputs.check_output`) before a line is written: the benchmark the report
evaluated (any file of a BEIR folder or a documents folder), another file the run read (its
queries, plan or corpus) or the run history is refused with a VALIDATION_ERROR naming ``path``,
so a run file can never replace what it was measured on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunSources", "run_sources", "write_trec_run"]


@dataclass(frozen=True)
class RunSources:
    """What an evaluation read and recorded into: the files its run file must never replace.

    ``inputs``: files or folders it read besides its benchmark; ``history``: the history file.
    """

    inputs: tuple[Path | str | None, ...] = ()
    history: Path | None = None


def run_sources(
    inputs: tuple[Path | str | None, ...], home: Path, history: Path | str | None
) -> RunSources:
    """``inputs`` and the history file an evaluation on ``home`` records into (``history``,
    else ``RAGSONDE_HISTORY``, else ``<home>/history.sqlite``), recording on or off."""
    from ragsonde.history import history_path

    return RunSources(inputs, history_path(home, history))


def write_trec_run(
    run: dict[str, dict[str, float]],
    path: Path,
    *,
    dataset: str,
    sources: RunSources,
    tag: str = "ragsonde",
) -> None:
    """Write ``run`` (query id -> {doc id: score}) to ``path``, best first, unless ``path`` is
    ``dataset``'s, one of ``sources``' files or the history (a VALIDATION_ERROR)."""
    from ragsonde.ingest.sources import input_files
    from ragsonde.outputs import check_output, open_output

    inputs = [f for given in (dataset, *sources.inputs) for f in input_files(given)]
    check_output(path, "path", inputs=inputs, history=sources.history)
    with open_output(path) as f:
        for qid, docs in run.items():
            ranked = sorted(docs.items(), key=lambda kv: -kv[1])
            for rank, (doc, score) in enumerate(ranked, start=1):
                f.write(f"{qid} Q0 {doc} {rank} {score:.6f} {tag}\n")
