"""The one exception tree of ragsonde.

Every error the library raises on purpose is a :class:`RagsondeError` and carries the contract's
error ``code`` (the table of codes in ``docs/CONTRACT.md``, the contract's copy in the repository)::

    RagsondeError                      (base; never raised itself)
    ├── QueryValidationError           VALIDATION_ERROR      bad input: a query, a file, a setting
    │   └── RelevanceError             VALIDATION_ERROR      a benchmark's ids are not in the
    │                                                        collection: the evaluation failed
    ├── StoreConnectionError           CONNECTION_ERROR      Qdrant unreachable, timed out, locked
    │   ├── CollectionInUseError       CONNECTION_ERROR      an embedded collection another
    │   │                                                    process holds (``holder`` says who)
    │   └── CollectionUnreadableError  CONNECTION_ERROR      an embedded collection that cannot
    │                                                        be opened: damaged files, or a
    │                                                        program outside ragsonde holds it
    ├── AuthError                      AUTH_ERROR            Qdrant or embedding API refused the key
    ├── CollectionNotFoundError        COLLECTION_NOT_FOUND  no such collection
    ├── EmbeddingError                 EMBEDDING_ERROR       the embedder failed (model, rate limit)
    ├── LlmError                       LLM_ERROR             the chat model failed (judge, generate)
    └── DimensionMismatchError         DIMENSION_MISMATCH    embedder, collection sizes differ

Exceptions of the libraries underneath (qdrant-client, qdrant-edge, httpx, torch) are translated
into this tree at three boundaries only: the store (``ragsonde.store``), the embedders
(``ragsonde.embedders``) and the chat client of the labelling tools (``ragsonde.labels.chat``).
Messages say what happened and what to do next, and never carry a secret: :func:`mask_secrets`
scrubs them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import ClassVar

__all__ = [
    "AuthError",
    "CollectionInUseError",
    "CollectionNotFoundError",
    "CollectionUnreadableError",
    "DimensionMismatchError",
    "EmbeddingError",
    "ErrorCode",
    "LlmError",
    "QueryValidationError",
    "RagsondeError",
    "RelevanceError",
    "StoreConnectionError",
    "mask_secrets",
]


class ErrorCode(StrEnum):
    """The contract's error codes."""

    VALIDATION_ERROR = "VALIDATION_ERROR"
    CONNECTION_ERROR = "CONNECTION_ERROR"
    AUTH_ERROR = "AUTH_ERROR"
    COLLECTION_NOT_FOUND = "COLLECTION_NOT_FOUND"
    EMBEDDING_ERROR = "EMBEDDING_ERROR"
    DIMENSION_MISMATCH = "DIMENSION_MISMATCH"
    LLM_ERROR = "LLM_ERROR"


class RagsondeError(Exception):
    """Base of every ragsonde error; ``code`` is the contract error code."""

    code: ClassVar[ErrorCode]

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class QueryValidationError(RagsondeError):
    """Input breaks a rule: a query field, a filter, a file, a setting.

    ``field`` names the offending field (dotted path) when there is one.
    """

    code = ErrorCode.VALIDATION_ERROR

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class RelevanceError(QueryValidationError):
    """The benchmark's relevant ids are not (enough) in the collection: no payload field holds
    them, or more than half are missing. The inputs were well-formed and the evaluation itself
    failed, so the CLI exits 1 with it, as with a failed gate (the CLI's table of exit codes,
    ``ragsonde.cli._common.EXIT_CODES``); the HTTP API answers 4xx, as for any VALIDATION_ERROR.
    """


class StoreConnectionError(RagsondeError):
    """Qdrant cannot be reached, timed out, or (embedded) is held by another process."""

    code = ErrorCode.CONNECTION_ERROR


class CollectionInUseError(StoreConnectionError):
    """An embedded collection is held by another process; ``holder`` is who, as its lock file
    says (``pid N on host H``, else ``another process``): a listing shows it as in use."""

    def __init__(self, message: str, *, holder: str) -> None:
        super().__init__(message)
        self.holder = holder


class CollectionUnreadableError(StoreConnectionError):
    """An embedded collection cannot be opened although no ragsonde process holds it: its
    ``edge_config.json`` is damaged (the message says so), or the engine cannot load its files,
    which are damaged or held by a program outside ragsonde (the engine cannot tell which, so
    the message names both). A listing shows it as unreadable and still lists the others."""

    def __init__(self, message: str, *, collection: str) -> None:
        super().__init__(message)
        self.collection = collection


class AuthError(RagsondeError):
    """Qdrant or the embedding API rejected the credentials."""

    code = ErrorCode.AUTH_ERROR


class CollectionNotFoundError(RagsondeError):
    """The collection does not exist."""

    code = ErrorCode.COLLECTION_NOT_FOUND

    def __init__(
        self,
        collection: str,
        available: Iterable[str] = (),
        *,
        store: str | None = None,
        fix: str | None = None,
    ) -> None:
        """``store``: where it was looked for, when that is not the store the settings open
        (``eval --against URL``); ``fix``: what to do instead of ``ragsonde ingest``."""
        names = sorted(available)
        listing = (
            f" Existing collections: {', '.join(names)}."
            if names
            else " There are no collections yet."
        )
        fix = fix or (
            f"Create it with `ragsonde ingest SOURCE --collection {collection}`, "
            "or pick another with --collection / RAGSONDE_COLLECTION."
        )
        at = f" at {store}" if store else ""
        super().__init__(f"Collection '{collection}' does not exist{at}.{listing} {fix}")
        self.collection = collection
        self.available = names


class EmbeddingError(RagsondeError):
    """The embedder failed: model not loadable, rate limit, bad response."""

    code = ErrorCode.EMBEDDING_ERROR


class LlmError(RagsondeError):
    """The chat model failed: the endpoint after retries, an answer without text, a local model
    that cannot start (``ragsonde generate --llm`` / ``ragsonde judge``)."""

    code = ErrorCode.LLM_ERROR


class DimensionMismatchError(RagsondeError):
    """The embedder's vector size differs from the collection's."""

    code = ErrorCode.DIMENSION_MISMATCH

    def __init__(
        self, *, collection: str, collection_dim: int, embedder: str, embedder_dim: int
    ) -> None:
        super().__init__(
            f"Embedder '{embedder}' makes {embedder_dim}-dimensional vectors, but collection "
            f"'{collection}' holds {collection_dim}-dimensional ones. Query it with the embedder "
            f"it was built with (RAGSONDE_EMBEDDER), or re-ingest it with this one."
        )
        self.collection_dim = collection_dim
        self.embedder_dim = embedder_dim


_MIN_SECRET_LEN = 4


def mask_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """Replace every occurrence of each secret in ``text`` with a masked form (``sk-1…``)."""
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET_LEN:
            text = text.replace(secret, secret[:2] + "…" + "*" * 4)
    # Bearer tokens echoed back by a server, whatever they are.
    return re.sub(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}", r"\1****", text)
