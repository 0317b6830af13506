"""Integrity checks on what retrieval returned: the data and the contract, not the ranking.

Each check counts its problems and keeps a few examples. Checks: stored ``text`` against its
``content_hash``; empty ``text``; missing or malformed ``url``, ``title``, ``chunk_index``; scores
outside [0, 1] or out of order; ``total_results`` that differs from the results; results that
break the query's filters.

A chunk a derived copy rewrote on purpose (ICT removed its query sentence:
:mod:`ragsonde.models.derived`) is checked against the hash of the text the edit wrote, not the
source's ``content_hash``: the intended edit is not a problem, a change made since still is.

A ``*_missing`` count is a note, not a problem: a collection another pipeline built (LangChain,
LlamaIndex) has no ``content_hash`` and often no ``url`` or ``chunk_index``. A field missing from
every result is the layout, not the data, so :meth:`IntegrityReport.warnings` says it in one line
(``absent_fields``) instead of thousands of counts drowning what matters.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from ragsonde.evaluate.report import Integrity
from ragsonde.models import Response, Result
from ragsonde.models.derived import edit_of
from ragsonde.models.payload import DEFAULT_MAPPING, PayloadMapping

__all__ = ["CHECKS", "IntegrityReport", "Seen"]

_EXAMPLES = 5


@dataclass(frozen=True)
class Seen:
    """One result as the checks see it: the result, and the ``content_hash`` its payload stores
    where the collection's mapping says (``content_hash`` at the top for ragsonde's and
    LlamaIndex's layouts, ``metadata.content_hash`` for LangChain's, ``meta.content_hash`` for
    Haystack's; ``None`` when it holds none)."""

    result: Result
    stored_hash: Any


def _hash_mismatch(seen: Seen) -> bool:
    r = seen.result
    edit = edit_of(r.metadata)
    if edit is not None:
        return not edit.holds(r.text)
    return (
        seen.stored_hash is not None
        and seen.stored_hash != hashlib.sha256(r.text.encode("utf-8")).hexdigest()
    )


def _bad_url(seen: Seen) -> bool:
    url = seen.result.url
    if url is None:
        return False
    parsed = urlparse(url)
    return not parsed.path and not parsed.netloc


#: Per-result checks: name -> predicate (True = a problem).
CHECKS: dict[str, Callable[[Seen], bool]] = {
    "content_hash_mismatch": _hash_mismatch,
    "content_hash_missing": lambda s: s.stored_hash is None,
    "text_empty": lambda s: not s.result.text.strip(),
    "url_missing": lambda s: not s.result.url,
    "url_malformed": _bad_url,
    "title_missing": lambda s: not s.result.title,
    # the mapping reads a negative or non-integer chunk_index as None: absent or invalid
    "chunk_index_missing": lambda s: s.result.chunk_index is None,
    "score_out_of_range": lambda s: not 0.0 <= s.result.similarity_score <= 1.0,
}


def _matches(value: Any, accepted: Any) -> bool:
    options = accepted if isinstance(accepted, list) else [accepted]
    values = value if isinstance(value, list) else [value]
    return any(v in options for v in values)


def _field(r: Result, key: str) -> Any:
    known = {"url": r.url, "title": r.title, "section": r.section, "chunk_index": r.chunk_index}
    if key in known:
        return known[key]
    node: Any = r.metadata
    for part in key.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


_ALL: list[str] = [*CHECKS, "total_results_mismatch", "scores_out_of_order", "filter_violated"]


@dataclass
class IntegrityReport:
    """The checks' counts over an evaluation; ``mapping`` is the one the results were read
    with (it says where a payload keeps ``content_hash``)."""

    mapping: PayloadMapping = DEFAULT_MAPPING
    checked_results: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_ALL, 0))
    examples: dict[str, list[str]] = field(default_factory=dict)

    def _flag(self, check: str, example: str) -> None:
        self.counts[check] += 1
        shown = self.examples.setdefault(check, [])
        if len(shown) < _EXAMPLES:
            shown.append(example)

    def check(self, resp: Response, filters: Mapping[str, Any] | None = None) -> dict[str, int]:
        """Check one response (its results must carry metadata); its problems, by check."""
        before = dict(self.counts)
        if resp.total_results != len(resp.results):
            self._flag("total_results_mismatch", f"query {resp.query_id}")
        scores = [r.similarity_score for r in resp.results]
        if any(a < b for a, b in itertools.pairwise(scores)):
            self._flag("scores_out_of_order", f"query {resp.query_id}")
        for r in resp.results:
            self.checked_results += 1
            where = f"chunk {r.chunk_id} (query {resp.query_id})"
            seen = Seen(r, self.mapping.value("content_hash", r.metadata))
            for name, bad in CHECKS.items():
                if bad(seen):
                    self._flag(name, where)
            for key, accepted in (filters or {}).items():
                if not _matches(_field(r, key), accepted):
                    self._flag("filter_violated", f"{where}: {key}={_field(r, key)!r}")
        return {k: v - before[k] for k, v in self.counts.items() if v > before[k]}

    @property
    def problems(self) -> int:
        """Problems that mean broken data or a broken contract (``*_missing`` ones are notes)."""
        return sum(v for k, v in self.counts.items() if not k.endswith("_missing"))

    @property
    def absent_fields(self) -> list[str]:
        """Fields that no checked result has (``*_missing`` on every result): the layout."""
        if not self.checked_results:
            return []
        return [
            k.removesuffix("_missing")
            for k, v in self.counts.items()
            if k.endswith("_missing") and v == self.checked_results
        ]

    def warnings(self) -> list[str]:
        """What a reader must know, in a line each: empty text first, then the layout's gaps."""
        out: list[str] = []
        empty = self.counts.get("text_empty", 0)
        if empty:
            out.append(
                f"{empty} of {self.checked_results} results have empty text: the text is "
                "probably at another payload path; see `ragsonde inspect` and set "
                "--field text=PATH"
            )
        absent = self.absent_fields
        if absent:
            out.append(
                f"no result has {', '.join(absent)}: the collection's layout does not store "
                "them (notes, not integrity problems)"
            )
        return out

    def summary(self) -> Integrity:
        """The report's ``integrity`` part."""
        return Integrity(
            checked_results=self.checked_results,
            problems=self.problems,
            absent_fields=self.absent_fields,
            counts=dict(self.counts),
            examples={k: list(v) for k, v in self.examples.items()},
        )
