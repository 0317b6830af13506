"""Sources: where documents come from, looked up by name; ``detect`` picks one from the location.

A source is an iterable of :class:`Document` (or :class:`Failure` for one that could not be read)
with an optional cheap ``estimate()`` of how many there are, for the progress bar.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from os import PathLike
from pathlib import Path
from typing import Protocol

from ragsonde.errors import QueryValidationError
from ragsonde.ingest.document import Document, Failure
from ragsonde.ingest.options import SourceOptions
from ragsonde.inputs import not_a_file
from ragsonde.models.text import as_location, printable

__all__ = ["SOURCES", "Source", "SourceOptions", "detect_format", "input_files", "open_source"]


class Source(Protocol):
    def __iter__(self) -> Iterator[Document | Failure]: ...

    def estimate(self) -> int | None:
        """How many documents, when that is cheap to know; else ``None``."""
        ...

    def notes(self) -> list[str]:
        """What the report should warn of once the source was read (files it does not read)."""
        ...


def _folder(location: str, opts: SourceOptions) -> Source:
    from ragsonde.ingest.sources.folder import FolderSource

    return FolderSource(Path(location), base_url=opts.base_url)


def _web(location: str, opts: SourceOptions) -> Source:
    from ragsonde.ingest.sources.web import WebSource

    return WebSource(location, opts)


def _beir(location: str, opts: SourceOptions) -> Source:
    from ragsonde.ingest.sources.beir import BeirCorpus

    return BeirCorpus(Path(location))


def _jsonl(location: str, opts: SourceOptions) -> Source:
    from ragsonde.ingest.sources.jsonl import JsonlSource

    return JsonlSource(Path(location))


#: Format name -> factory(location, options).
SOURCES: dict[str, Callable[[str, SourceOptions], Source]] = {
    "folder": _folder,
    "web": _web,
    "beir": _beir,
    "jsonl": _jsonl,
}


def detect_format(location: str) -> str:
    """Pick a source for ``location``: a URL, a BEIR corpus, a JSON Lines file, or a folder."""
    if location.startswith(("http://", "https://")):
        return "web"
    path = Path(location)
    if not path.exists():
        raise QueryValidationError(
            f"Source '{printable(location)}' does not exist. Give a folder, a corpus.jsonl, a "
            "JSON Lines file or an http(s) URL.",
            field="source",
        )
    if path.is_dir():
        return "beir" if (path / "corpus.jsonl").is_file() else "folder"
    why = not_a_file(path)  # a FIFO or a device was taken for a folder that held no document
    if why is not None:
        raise QueryValidationError(f"Source '{location}' cannot be read: {why}.", field="source")
    if path.name == "corpus.jsonl":
        return "beir"
    if path.suffix == ".jsonl":
        return "jsonl"
    return "folder"


def open_source(
    location: str | PathLike[str], fmt: str | None = None, options: SourceOptions | None = None
) -> Source:
    """The source for ``location`` (a ``str`` or a ``Path``: where ingest and the chunking
    sweep take their documents), of format ``fmt`` (detected when ``None``)."""
    location = as_location(location, "source")  # a Path was an AttributeError, bytes a TypeError
    name = fmt or detect_format(location)
    factory = SOURCES.get(name)
    if factory is None:
        raise QueryValidationError(
            f"Unknown source format '{name}'; use one of: {', '.join(SOURCES)}.", field="format"
        )
    if name != "web" and not Path(location).exists():
        raise QueryValidationError(
            f"Source '{printable(location)}' does not exist.", field="source"
        )
    return factory(location, options or SourceOptions())


def input_files(location: str | Path | None) -> list[Path]:
    """The files a source at ``location`` reads, for a command's outputs to refuse: a folder's
    documents, a BEIR dataset's corpus, queries and qrels, a file itself (a URL: none). A report
    saved over ``docs/lidar.md`` replaced a document of the folder being evaluated."""
    if location is None or str(location).startswith(("http://", "https://")):
        return []
    path = Path(location)
    if not path.is_dir():
        return [path]
    if (path / "corpus.jsonl").is_file():
        beir = [path / "corpus.jsonl", path / "queries.jsonl"]
        return [*beir, *sorted((path / "qrels").glob("*"))]
    from ragsonde.ingest.sources.folder import FolderSource

    return FolderSource(path)._files()
