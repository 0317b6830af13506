"""What the report shows beside each query's health: production against replay, topics of the
weak queries, the weak share per day or week, and its interval."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import cache
from typing import Protocol

from ragsonde.models.params import SearchParams
from ragsonde.traffic.records import Production
from ragsonde.traffic.report import Period, ProductionSummary, QueryHealth, Topic

__all__ = [
    "OTHER_IDS",
    "Named",
    "agreement",
    "as_replay_ids",
    "drift",
    "production_summary",
    "production_verdict",
    "query_terms",
    "term_counts",
    "topics",
    "wilson",
]

_WORD = re.compile(r"[a-z][a-z0-9-]{2,}")
#: Words that name no topic (English function words and question words).
_STOP_WORDS = """the and for are but not you all any can her was one our out has have had his how
its may new now old see two way who did does what when where which why with from that this than
then them they there these those will would could should about into over under more most some
such only other also just like been being were your their each many much very"""
_STOP = frozenset(_STOP_WORDS.split())


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n`` (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def as_replay_ids(production: Sequence[str], replay: Sequence[str]) -> list[str]:
    """``production``'s ids named as the replay names points. An id the replay served stays;
    another becomes the point id a pipeline derives from it (:attr:`~ragsonde.models.payload.
    Layout.point_id`: Haystack's retriever answers its document id, not the point's) when the
    replay served that point, and stays as it is when not (a point the replay did not serve)."""
    served = set(replay)
    derived = _point_ids()
    out: list[str] = []
    for p in production:
        if p not in served:
            p = next((d for point_id in derived if (d := point_id(p)) in served), p)
        out.append(p)
    return out


@cache
def _point_ids() -> tuple[Callable[[str], str], ...]:
    """The layouts' document-id → point-id derivations (read once: the registry is fixed)."""
    from ragsonde.models.payload import LAYOUTS

    return tuple(layout.point_id for layout in LAYOUTS.values() if layout.point_id is not None)


def agreement(production: Sequence[str], replay: Sequence[str]) -> float:
    """``|P ∩ R| / max(|P|, |R|)``: 1 when production and the replay returned the same ids
    (in any order), lower when either returned ids the other did not or a different number."""
    size = max(len(production), len(replay))
    return len(set(production) & set(replay)) / size if size else 1.0


def mismatch(
    production: Production, replay: Sequence[str], params: SearchParams, collection: str
) -> list[str]:
    """The settings in which production differs from the replay, each with both values.

    top_k: production's logged top_k, else the number of ids it returned when that is fewer
    than the replay's top_k and the replay's first that many ids are the same set (a shorter
    list of the same ranking), or more than the replay's top_k (it asked for at least that
    many). threshold: production's logged one, else the replay's when it cut the replay's list
    below production's. mode (in any case) and collection: when the traffic logged them.
    ``ids`` (:data:`OTHER_IDS`): production returned other documents than the replay's, beyond
    what a shorter or longer list explains: no logged setting explains that part."""
    out: list[str] = []
    if production.collection and production.collection != collection:
        out.append(f"collection: production {production.collection}, replay {collection}")
    n = len(production.ids)
    k: int | str | None = production.top_k
    if (
        k is None
        and production.ids
        and n < params.top_k
        and agreement(production.ids, replay[:n]) > agreement(production.ids, replay)
    ):
        k = n
    if k is None and n > params.top_k:
        k = f"at least {n} (it returned {n} ids)"
    if k is not None and k != params.top_k:
        out.append(f"top_k: production {k}, replay {params.top_k}")
    if production.threshold is not None and production.threshold != params.score_threshold:
        out.append(f"threshold: production {production.threshold}, replay {params.score_threshold}")
    elif (
        production.threshold is None
        and params.score_threshold > 0
        and len(replay) < min(n, params.top_k)
    ):
        out.append(
            f"threshold: replay {params.score_threshold} kept {len(replay)} of its top_k "
            f"{params.top_k}, production returned {n}"
        )
    if production.mode and production.mode.strip().lower() != params.mode:
        out.append(f"mode: production {production.mode}, replay {params.mode}")
    shared = len(set(production.ids) & set(replay))
    if production.ids and replay and shared < 0.5 * min(n, len(replay)):
        out.append(
            f"{OTHER_IDS}: production returned other documents ({shared} of its {n} among the "
            f"replay's {len(replay)})"
        )
    return out


#: The :func:`mismatch` entry for documents no setting explains (not a setting to replay with).
OTHER_IDS = "ids"


def production_verdict(explained: Counter[str], example: str | None, n: int, mean: float) -> str:
    """What the agreement of production and the replay says: ``explained``: setting -> queries
    in which it differs (and :data:`OTHER_IDS` -> queries whose documents differ beyond them);
    ``example``: the first mismatch of the most frequent setting."""
    settings = Counter({k: v for k, v in explained.items() if k != OTHER_IDS})
    other = explained.get(OTHER_IDS, 0)
    unexplained = (
        "another embedder, index or collection version is likely"
        if not settings
        else "another embedder, index or collection version is likely as well"
    )
    if settings and example is not None:
        setting, count = settings.most_common(1)[0]
        said = (
            f"Production runs another configuration: {example} (in {count} of "
            f"{n} queries). Replay with production's {setting} to test what users get."
        )
        if other:
            said += (
                f" In {other} of {n} queries it also returns other documents than the replay, "
                f"which that does not explain: {unexplained}."
            )
        return said
    if mean < 0.8 or other:
        return (
            "Production returns other results than the replay"
            + (f" (other documents in {other} of {n} queries)" if other else "")
            + f" and no logged setting explains it: {unexplained}."
        )
    return "Production and the replay agree: the settings tested are the ones served."


def production_summary(rows: Sequence[QueryHealth]) -> ProductionSummary | None:
    """Agreement over the queries that carried production ids, and the settings that explain
    a low one."""
    with_ids = [q for q in rows if q.production_agreement is not None]
    if not with_ids:
        return None
    values = [q.production_agreement or 0.0 for q in with_ids]
    explained: Counter[str] = Counter(m.split(":", 1)[0] for q in with_ids for m in q.mismatch)
    mean = sum(values) / len(values)
    example = None
    settings = [s for s, _ in explained.most_common() if s != OTHER_IDS]
    if settings:
        example = next(m for q in with_ids for m in q.mismatch if m.startswith(settings[0] + ":"))
    return ProductionSummary(
        n_queries=len(with_ids),
        mean_agreement=round(mean, 4),
        low_agreement=sum(v < 0.5 for v in values),
        explained_by=dict(explained),
        verdict=production_verdict(explained, example, len(with_ids), mean),
    )


def _period(t: datetime, unit: str) -> str:
    day = t.date()
    return (day - timedelta(days=day.weekday())).isoformat() if unit == "week" else day.isoformat()


def drift(rows: Sequence[QueryHealth]) -> tuple[list[Period], str]:
    """The weak share per day, or per week (weeks start on Monday) when the traffic spans more
    than 60 days. Queries without a time are left out."""
    times = [(datetime.fromisoformat(q.first_seen), q.weak) for q in rows if q.first_seen]
    if not times:
        return [], "day"
    span = max(t for t, _ in times) - min(t for t, _ in times)
    unit = "week" if span > timedelta(days=60) else "day"
    groups: dict[str, list[bool]] = {}
    for t, weak in times:
        groups.setdefault(_period(t, unit), []).append(weak)
    periods = [
        Period(period=p, n_queries=len(w), weak_share=round(sum(w) / len(w), 4))
        for p, w in sorted(groups.items())
    ]
    return periods, unit


def _kmeans(vectors: Sequence[Sequence[float]], k: int, rounds: int = 20) -> list[int]:
    """Spherical k-means (cosine), started from k evenly spaced points: deterministic.

    Memory is the vectors once in float32, the model's precision, and little more (the
    reservoir of :mod:`ragsonde.traffic.tally` is 2,000 of them, 3 MB): no intermediate array
    while they are read, the norms taken :data:`_ROWS` rows at a time, and each centre the mean
    of its members read in place (``where=``) rather than copied out; each is the same floats as
    the whole-array expression (row-wise norms; a mean over axis 0 adds the rows in order either
    way)."""
    import numpy as np

    x = np.empty((len(vectors), len(vectors[0])), dtype=np.float32)
    for i, v in enumerate(vectors):
        x[i] = v
    for start in range(0, len(x), _ROWS):
        part = x[start : start + _ROWS]
        part /= np.maximum(np.linalg.norm(part, axis=1, keepdims=True), 1e-12)
    centres = x[np.linspace(0, len(x) - 1, k).astype(int)].copy()
    labels = np.zeros(len(x), dtype=int)
    for _ in range(rounds):
        new = np.argmax(x @ centres.T, axis=1)
        if _ > 0 and np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            members = labels == c
            if members.any():
                mean = x.mean(axis=0, where=members[:, None])
                centres[c] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return [int(v) for v in labels]


#: Rows whose norms :func:`_kmeans` takes at once.
_ROWS = 256


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


class Named(Protocol):
    """What a topic reads of a query (a :class:`QueryHealth` has it)."""

    @property
    def query(self) -> str: ...
    @property
    def query_id(self) -> str: ...
    @property
    def weight(self) -> int: ...


def topics(
    weak: Sequence[tuple[Named, Sequence[float]]],
    all_texts: Callable[[str], int],
    n_all: int,
) -> list[Topic]:
    """Weak queries grouped by their embeddings (k-means, k about √(n/2), at most 8), each
    group named by its three most distinctive terms: frequent in the group, rare in the
    traffic (``all_texts``: term -> distinct queries holding it, over ``n_all`` queries)."""
    if len(weak) < 2:
        return []
    k = max(1, min(8, round(math.sqrt(len(weak) / 2))))
    labels = _kmeans([v for _, v in weak], k)
    out = []
    for c in sorted(set(labels)):
        members = [q for (q, _), lab in zip(weak, labels, strict=True) if lab == c]
        counts: Counter[str] = Counter(t for q in members for t in _terms(q.query))
        scored = sorted(
            counts,
            key=lambda t: (-counts[t] * math.log(1 + n_all / (1 + all_texts(t))), t),
        )
        terms = scored[:3]
        out.append(
            Topic(
                name=" / ".join(terms) or "(no terms)",
                terms=terms,
                n_queries=len(members),
                weight=sum(q.weight for q in members),
                query_ids=[q.query_id for q in members],
            )
        )
    return sorted(out, key=lambda t: -t.weight)


def term_counts(texts: Sequence[str]) -> Counter[str]:
    """Term -> how many of ``texts`` hold it."""
    return Counter(t for text in texts for t in _terms(text))


def query_terms(text: str) -> set[str]:
    """The terms of ``text`` that name a topic (case folded, stop words left out)."""
    return _terms(text)
