"""One failing input never fails its neighbours: embed groups together, and apart on failure.

Callers that embed several independent groups of texts in one call (the server's micro-batcher:
one group per waiting request; a batch of queries: one group per query) use
:func:`embed_groups`. It makes the one combined call; if that call fails, it embeds each group
alone, so only the group that caused the failure gets the error and the others get their vectors.
An :class:`~ragsonde.errors.AuthError` belongs to the credentials, not to an input, so it is
handed to every group without retrying them one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragsonde.embedders.base import Vectors
from ragsonde.errors import AuthError, EmbeddingError

__all__ = ["GroupOutcome", "embed_groups"]

#: The vectors of one group (one row per text), or the exception that group alone raised.
GroupOutcome = Vectors | Exception


def _checked(embed: Callable[[Sequence[str]], Vectors], texts: Sequence[str]) -> Vectors:
    vectors = embed(texts)
    if len(vectors) != len(texts):
        raise EmbeddingError(
            f"The embedder returned {len(vectors)} vectors for {len(texts)} texts."
        )
    return vectors


def embed_groups(
    embed: Callable[[Sequence[str]], Vectors], groups: Sequence[Sequence[str]]
) -> list[GroupOutcome]:
    """Each group's vectors, computed in one ``embed`` call when it succeeds.

    When the combined call raises, each group is embedded alone and gets its own outcome (so a
    group of one bad text fails alone). Exceptions are returned, never raised, except those that
    are not :class:`Exception` (KeyboardInterrupt, SystemExit), which propagate.
    """
    texts = [t for g in groups for t in g]
    try:
        vectors = _checked(embed, texts)
    except Exception as e:
        if len(groups) == 1 or isinstance(e, AuthError):
            return [e for _ in groups]
        return [_alone(embed, g) for g in groups]
    out: list[GroupOutcome] = []
    start = 0
    for g in groups:
        out.append(vectors[start : start + len(g)])
        start += len(g)
    return out


def _alone(embed: Callable[[Sequence[str]], Vectors], group: Sequence[str]) -> GroupOutcome:
    try:
        return _checked(embed, group)
    except Exception as e:
        return e
