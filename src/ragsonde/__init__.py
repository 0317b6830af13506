"""ragsonde: does my retrieval actually work, and how fast?"""

from __future__ import annotations

from ragsonde.errors import (
    AuthError,
    CollectionNotFoundError,
    DimensionMismatchError,
    EmbeddingError,
    ErrorCode,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
)

__version__ = "0.1.0"

__all__ = [
    "AuthError",
    "CollectionNotFoundError",
    "DimensionMismatchError",
    "EmbeddingError",
    "ErrorCode",
    "QueryValidationError",
    "RagsondeError",
    "StoreConnectionError",
    "__version__",
]
