"""JSON Lines of ``{"id", "text", "title"?, "url"?, …}``; every other field goes to the payload."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ragsonde.ingest.document import Document, Failure, Section
from ragsonde.inputs import read_lines
from ragsonde.models.text import loads_json

__all__ = ["JsonlSource", "wrong_types"]


class JsonlSource:
    def __init__(self, path: Path) -> None:
        self.path = path

    def notes(self) -> list[str]:
        return []

    def estimate(self) -> int | None:
        try:  # bounded lines: a file of one 200 MB line is not held whole to count it
            return sum(1 for _, line in read_lines(self.path) if line.strip())
        except ValueError:
            return None

    def __iter__(self) -> Iterator[Document | Failure]:
        try:
            for n, raw in read_lines(self.path):
                if raw.strip():
                    yield self._doc(raw, f"{self.path.name}:{n}")
        except ValueError as e:  # a line over the limit, a FIFO: the rest is not read
            yield Failure(self.path.name, f"{e}; the rest of the file was not read")

    @staticmethod
    def _doc(raw: bytes, where: str) -> Document | Failure:
        try:
            row = loads_json(raw)
        except UnicodeDecodeError as e:
            return Failure(where, f"not UTF-8 text ({e.reason})")
        except json.JSONDecodeError as e:
            return Failure(where, f"not JSON ({e})")
        except ValueError as e:  # a lone surrogate in a field (named)
            return Failure(where, str(e))
        if not isinstance(row, dict) or "id" not in row or "text" not in row:
            return Failure(where, 'each line needs "id" and "text"' + _beir_hint(row))
        wrong = wrong_types(row, "id", ("text", "title", "url"))
        if wrong is not None:
            return Failure(where, wrong)
        given = row.pop("text") or ""
        text = given.strip()
        doc_id = str(row.pop("id"))
        if not text:
            return Failure(f"{where} ({doc_id})", "empty document", doc_id)
        title = row.pop("title", None)
        url = row.pop("url", None)
        return Document(
            doc_id=doc_id,
            sections=(Section((), text, len(given) - len(given.lstrip())),),
            title=title or None,
            url=url or None,
            metadata=row,
            source=where,  # a repeated id names both lines, not the id twice
        )


def _beir_hint(row: object) -> str:
    """A BEIR row (``_id``) in a file of another name: how to have it read as one."""
    if isinstance(row, dict) and "_id" in row and "id" not in row:
        return (
            ' (this line has BEIR\'s "_id": a BEIR corpus is read as one from a file named '
            "corpus.jsonl, or from its folder, its title joined to its text)"
        )
    return ""


def wrong_types(row: dict[str, object], id_field: str, fields: tuple[str, ...]) -> str | None:
    """Why a row's fields cannot be read as they are, or None. ``str()`` made a list id
    ``"['l']"``, ``true`` the id ``"True"``, and a list of words text to embed as if prose."""
    doc_id = row[id_field]
    if isinstance(doc_id, bool) or not isinstance(doc_id, str | int) or doc_id == "":
        return (
            f'"{id_field}" must be a non-empty string (or an integer), not '
            f"{json.dumps(doc_id)[:40]}"
        )
    for name in fields:
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            return f'"{name}" must be a string, not {type(value).__name__}'
    return None
