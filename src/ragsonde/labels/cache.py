"""The on-disk cache of LLM answers: a re-run asks the model nothing it was asked before.

One SQLite file under ``RAGSONDE_HOME/labels/``. A judgement is keyed by (query text, chunk
content hash, model, prompt version); a generated question by (chunk content hash, model, prompt
version). Each answer is written as soon as it arrives, so a run that is stopped (by its budget,
an error or Ctrl-C) loses none of what it paid for.
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from ragsonde.sqlite_cache import STEP_S, cache_errors, patiently

__all__ = ["LlmCache", "text_hash"]


def text_hash(text: str) -> str:
    """sha256 of ``text`` (the same hash ingestion stores as ``content_hash``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LlmCache:
    """``get``/``put`` answers by (kind, key, model)."""

    def __init__(self, home: Path) -> None:
        folder = home / "labels"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "llm-cache.sqlite"
        with self._mapped():
            self._db = sqlite3.connect(self.path, timeout=STEP_S)
            try:
                patiently(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
                patiently(lambda: self._db.execute(
                    "CREATE TABLE IF NOT EXISTS answers (kind TEXT, key TEXT, model TEXT, "
                    "answer TEXT, at TEXT, PRIMARY KEY (kind, key, model))"
                ))  # fmt: skip
                patiently(self._db.commit)
            except BaseException:
                self._db.close()
                raise

    def _mapped(self) -> AbstractContextManager[None]:
        """SQLite errors (a damaged file) and rows that are not ours (a time that is no time)
        as one error naming the file: a damaged cache is never read as answers."""
        return cache_errors(
            "LLM answer cache", self.path, "answers are asked anew (and paid for again)"
        )

    @staticmethod
    def key(*parts: str) -> str:
        return text_hash("\x1f".join(parts))

    def get(self, kind: str, key: str, model: str) -> tuple[str, datetime] | None:
        with self._mapped():
            row = self._db.execute(
                "SELECT answer, at FROM answers WHERE kind = ? AND key = ? AND model = ?",
                (kind, key, model),
            ).fetchone()
            if row is None:
                return None
            if not isinstance(row[0], str) or not isinstance(row[1], str):
                raise ValueError("a row holds no text answer and time")
            return row[0], datetime.fromisoformat(row[1])

    def put(self, kind: str, key: str, model: str, answer: str) -> datetime:
        at = datetime.now(UTC)
        with self._mapped():
            patiently(lambda: self._db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                (kind, key, model, answer, at.isoformat()),
            ))  # fmt: skip
            patiently(self._db.commit)
        return at

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> LlmCache:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
