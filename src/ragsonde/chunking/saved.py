"""``--save-config``: the recommended chunking as a small TOML file that ``ingest`` reads.

::

    [chunking]
    splitter = "recursive"
    size = 200
    overlap = 0

``ragsonde ingest DOCS --chunking chunking.toml`` chunks with it (``--chunk-size`` and
``--chunk-overlap`` still win). The sweep's ``ragsonde`` configuration is ingest's default
and saves as ``recursive`` at its size and overlap.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from ragsonde.chunking.configs import RAGSONDE, ChunkingConfig
from ragsonde.chunking.report import ChunkingReport
from ragsonde.errors import QueryValidationError

__all__ = ["load_chunking", "save_chunking"]


def save_chunking(report: ChunkingReport, path: Path, label: str | None = None) -> ChunkingConfig:
    """Write the recommended configuration (or ``label``'s) to ``path``; return it."""
    chosen = report.config(label or report.recommended).config
    lines = [
        f"# ragsonde chunking: {chosen.label} on {report.documents} against {report.benchmark}",
        f"# {report.recommendation}",
        "[chunking]",
    ]
    if chosen.splitter == RAGSONDE:
        lines.append('splitter = "recursive"')
        if chosen.size:
            lines += [f"size = {chosen.size}", f"overlap = {chosen.overlap}"]
    else:
        lines += [
            f'splitter = "{chosen.splitter}"',
            f"size = {chosen.size}",
            f"overlap = {chosen.overlap}",
        ]
    from ragsonde.outputs import write_text

    write_text(path, "\n".join(lines) + "\n")
    return chosen


#: What a chunking file holds: the [chunking] table (and what `chunking --save-config` writes
#: beside it), and in the table the splitter, its size and overlap.
_FILE_KEYS = frozenset({"chunking"})
_CHUNKING_KEYS = frozenset({"splitter", "size", "overlap"})


def load_chunking(path: Path) -> tuple[str, int | None, int | None]:
    """``(splitter, size, overlap)`` from a file :func:`save_chunking` wrote (``None``: the
    ingest default)."""
    from ragsonde.inputs import MAX_SETTINGS_BYTES, read_bytes
    from ragsonde.models.text import not_utf8

    try:
        # bounded, and never a FIFO or a device: `--chunking /dev/zero` filled 24 GB before
        data = tomllib.loads(read_bytes(path, MAX_SETTINGS_BYTES, "chunking file").decode())
    except UnicodeDecodeError as e:
        raise QueryValidationError(
            f"Cannot read chunking file {path}: {not_utf8(e)}", field="chunking"
        ) from e
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise QueryValidationError(
            f"Cannot read chunking file {path}: {e}", field="chunking"
        ) from e
    table = data.get("chunking")
    if not isinstance(table, dict):
        raise QueryValidationError(f"{path} has no [chunking] table.", field="chunking")
    from ragsonde.models.keys import check_keys

    check_keys(data, _FILE_KEYS, str(path), "chunking")
    check_keys(table, _CHUNKING_KEYS, f"{path} [chunking]", "chunking")
    splitter, size, overlap = (
        table.get("splitter", "recursive"),
        table.get("size"),
        table.get("overlap"),
    )
    if not isinstance(splitter, str) or not all(
        v is None or type(v) is int for v in (size, overlap)
    ):
        raise QueryValidationError(
            f"{path}: [chunking] wants splitter (a name), size and overlap (integers).",
            field="chunking",
        )
    return splitter, size, overlap
