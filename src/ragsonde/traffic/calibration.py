"""What a collection's own sentences score against it, measured once per collection.

A query is out of domain when its best score is below what the collection's own text scores
against itself. :func:`calibrate` samples chunks, takes one sentence of each as a query, replays
those queries and keeps each signal's values (sorted, for percentiles), and from the same sample
the BM25 document frequency of every term (for the IDF predictors).

Each of those sentences has a known answer, the chunk it was taken from, so a combination of
the signals can be fitted on them without any human label (:func:`own_fit`, when a caller asks
for it; the default ``predicted`` does not use it): a logistic model
(:mod:`~ragsonde.traffic.logistic`) of the signals' percentiles against the reciprocal rank of
the sentence's own chunk in what the search serves. Each collection and each search gets its
own weights.

The result is cached under ``<home>/traffic/calibration/`` keyed by the collection, its distance,
its size, the embedder, the search settings, whether it has BM25 vectors ragsonde can query and
where its text is read from: a collection that changes (rebuilt with another distance too), or
another search, is calibrated again. A collection with no sentence to calibrate on (its text at
no mapped path) is a VALIDATION_ERROR naming ``--field text=PATH``, never a calibration on
nothing.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ragsonde.errors import QueryValidationError
from ragsonde.models.payload import PayloadMapping
from ragsonde.models.unread import Unread
from ragsonde.traffic.logistic import Logistic, fit_logistic
from ragsonde.traffic.replay import Replay, Replayer

__all__ = ["CALIBRATION_QUERIES", "Calibration", "calibrate", "own_fit"]

#: Sentences replayed to calibrate a collection.
CALIBRATION_QUERIES = 256
#: Chunks read for the document frequencies (the first of the collection's scroll order).
DF_SAMPLE = 20_000
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_MIN_WORDS, _MAX_WORDS = 6, 40
#: Bumped when what a calibration holds changes: an older cache is measured again (6: dense
#: scores oriented higher-is-better on Euclid and Manhattan collections, where a cache of 5 holds
#: raw distances).
_VERSION = 6


class Calibration(BaseModel):
    """One collection's calibration: signal values of its own sentences, term frequencies."""

    model_config = ConfigDict(extra="forbid")

    key: str
    """collection, points and embedder it was measured for (a hash)."""
    mode: str = "dense"
    """The search mode it was measured with."""
    n_docs: int
    """Chunks the document frequencies were counted over."""
    df: dict[int, int]
    """BM25 term id -> chunks holding it (among ``n_docs``)."""
    values: dict[str, list[float]]
    """signal -> its values on the calibration sentences, sorted."""
    found: list[float]
    """Per calibration sentence, in the order of ``rows``: 1 / rank of its own chunk in the
    served top k (0 when missing): the pseudo-label :func:`own_fit` is fitted on."""
    rows: list[dict[str, float]]
    """Per calibration sentence, its signals."""

    def percentile(self, name: str, value: float) -> float | None:
        """The share of calibration sentences whose ``name`` is at most ``value``."""
        ref = self.values.get(name)
        if not ref:
            return None
        return bisect.bisect_right(ref, value) / len(ref)

    def term_df(self, term_ids: Sequence[int]) -> list[int]:
        return [self.df.get(t, 0) for t in term_ids]


def _sentence(text: str, seed: str) -> str | None:
    """One sentence of ``text`` of a query's length, chosen by ``seed``; None if it has none."""
    pieces = [s.strip() for s in _SENTENCE.split(text)]
    ok = [s for s in pieces if _MIN_WORDS <= len(s.split()) <= _MAX_WORDS]
    if not ok:
        words = text.split()
        return " ".join(words[:_MAX_WORDS]) if len(words) >= _MIN_WORDS else None
    pick = int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16) % len(ok)
    return ok[pick]


def _key(replayer: Replayer) -> str:
    info = replayer.info
    search = replayer.params.model_dump_json()
    text_paths = ",".join(replayer.workspace.settings.payload_mapping.paths.get("text", ()))
    raw = (
        f"v{_VERSION}|{replayer.collection}|{info.distance.value}|{info.points_count}|"
        f"{replayer.workspace.embedder_name}|{search}|bm25={replayer.has_bm25}|"
        f"text={text_paths}"
    )
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _path(replayer: Replayer, key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", replayer.collection)
    return replayer.workspace.settings.home / "traffic" / "calibration" / f"{safe}-{key}.json"


def calibrate(
    replayer: Replayer,
    signals_of: Callable[[Replay, Calibration | None], dict[str, float]],
    *,
    n: int = CALIBRATION_QUERIES,
    cache: bool = True,
) -> Calibration:
    """The collection's calibration, from the cache when it is still the same collection.

    ``signals_of``: a replay's signals (given the partial calibration: its document
    frequencies, no percentiles yet)."""
    key = _key(replayer)
    path = _path(replayer, key)
    if cache and path.is_file():
        try:
            cached = Calibration.model_validate_json(path.read_text(encoding="utf-8"))
            if cached.key == key and cached.rows:  # none: measured again, and refused
                return cached
        except (ValidationError, OSError, ValueError):
            pass  # a stale or broken cache is measured again
    store, mapping = replayer.workspace.store, replayer.workspace.settings.payload_mapping
    total = replayer.info.points_count
    step = max(1, min(total, DF_SAMPLE) // max(1, n))
    df: Counter[int] = Counter()
    sample: list[tuple[str, str]] = []  # (chunk id, sentence)
    seen = textless = 0
    unread = Unread()  # text fields holding a list or an object: no sentence, and said why
    encoder = replayer.encoder() if replayer.has_bm25 else None
    for batch in store.scroll(replayer.collection, batch_size=256):
        fields = [mapping.read(p.payload) for p in batch]
        for p, f in zip(batch, fields, strict=True):
            unread.note(f.unread, p.id)
        texts = [f.text or "" for f in fields]
        textless += sum(1 for t in texts if not t.strip())
        if encoder is not None:
            for vec in encoder.embed_documents(texts):
                df.update(set(vec.indices))
        for point, text in zip(batch, texts, strict=True):
            if seen % step == 0 and len(sample) < n:
                sentence = _sentence(text, point.id)
                if sentence:
                    sample.append((point.id, sentence))
            seen += 1
        if seen >= DF_SAMPLE:
            break
    if not sample:
        _no_sentences(replayer.collection, seen, textless, mapping, unread)
    partial = Calibration(
        key=key, mode=replayer.params.mode, n_docs=seen, df=dict(df), values={}, found=[], rows=[]
    )
    rows: list[dict[str, float]] = []
    found: list[float] = []
    for start in range(0, len(sample), 64):
        part = sample[start : start + 64]
        for (cid, _), replay in zip(part, replayer.replay([s for _, s in part]), strict=True):
            rows.append(signals_of(replay, partial))
            ids = replay.served.ids
            found.append(1.0 / (ids.index(cid) + 1) if cid in ids else 0.0)
    names = sorted({name for row in rows for name in row})
    values = {name: sorted(row[name] for row in rows if name in row) for name in names}
    result = partial.model_copy(update={"values": values, "found": found, "rows": rows})
    if cache:
        from ragsonde.errors import RagsondeError
        from ragsonde.outputs import write_text

        try:  # replaced whole: a reader never sees half a cache
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, json.dumps(result.model_dump(mode="json")))
        except (OSError, RagsondeError):
            pass  # a read-only home calibrates each run
    return result


def _no_sentences(
    collection: str, seen: int, textless: int, mapping: PayloadMapping, unread: Unread
) -> None:
    """Refuse a calibration on no sentence: every query's ``predicted`` would be None and the
    weak share a quiet 0 (a collection that keeps its text at a path no known layout reads,
    e.g. LangChain's ``content_payload_key="body"``)."""
    if seen == 0:
        why = "it holds no point"
        fix = "Ingest documents into it first."
    elif textless == seen:
        paths = ", ".join(mapping.paths.get("text", ())) or "none"
        why = f"none of the {seen} chunks read has text at the paths tried ({paths})"
        if unread:  # a list or an object where the text should be
            why += f"; {'; '.join(unread.found('chunk'))}, not text"
        fix = (
            "Say where its text is with --field text=PATH (RAGSONDE_MAPPING__TEXT); "
            f"`ragsonde inspect {collection}` lists its payload fields."
        )
    else:
        why = (
            f"of the {seen} chunks read, {textless} have no text at the mapped path and the "
            f"others no sentence of {_MIN_WORDS} words or more"
        )
        fix = "Check the text mapping with `ragsonde inspect`, or --field text=PATH."
    raise QueryValidationError(
        f"Collection '{collection}' cannot be calibrated: {why}, so no signal has a yardstick "
        f"and no query could be predicted. {fix}",
        field="mapping.text",
    )


def own_fit(calibration: Calibration, signals: Sequence[str]) -> Logistic | None:
    """A combination of ``signals`` fitted on the calibration's own sentences: their signals'
    percentiles against ``found`` (None when every sentence found its chunk at the same rank:
    nothing to learn from)."""
    return fit_logistic(
        calibration.rows,
        calibration.found,
        calibration,
        [s for s in signals if s in calibration.values],
        fitted_on=f"{len(calibration.rows)} of the collection's own sentences (target: 1 / "
        "rank of the chunk each came from)",
    )
